/*
 * test_lib.c - libgpumerge as its users see it: this suite includes only the
 * installed <gpumerge.h> (the Makefile installs the library into a scratch prefix
 * and takes the flags from pkg-config there) and is linked twice, against the
 * shared library (test_lib) and the archive (test_lib_static).
 *
 * Random sorts and merges of int32 and int64 keys, ascending and descending, with
 * and without unique, on the CPU engine (all cores, one thread, three) and auto,
 * checked against a reference (qsort, then a plain pass for unique): k = 0, 1, 2
 * and many arrays, empty ones among them. Every bad argument with its code and
 * message; the GPU asked for where none is usable (a CPU-only library: "built
 * without CUDA"). The GPU engine on host and device memory where a GPU is usable,
 * else skipped with the reason (a failure under GM_TEST_REQUIRE_GPU=1); device
 * memory in the static link only, where the test can call the CUDA runtime.
 * The install's files, flags and example programs: lib_install.c; a staged install
 * under PKG_CONFIG_SYSROOT_DIR and the man3 pages: lib_stage.c.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <gpumerge.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "lib_cases.h"

#if !defined(GM_TEST_LIB_ROOT) || !defined(GM_TEST_CUDA)
#error "the Makefile passes the library's install prefix as GM_TEST_LIB_ROOT, and GM_TEST_CUDA"
#endif

/* The CUDA runtime's calls the device-pointer cases use, resolved only where the
 * test links the runtime (a static link of a CUDA build). */
int cudaMalloc(void **p, size_t bytes) __attribute__((weak));
int cudaFree(void *p) __attribute__((weak));
int cudaMemcpy(void *dst, const void *src, size_t bytes, int kind) __attribute__((weak));
enum { H2D = 1, D2H = 2 };

/* ---------------------------------------------------------------- keys */

/* n random keys of width w: spread 0 or 1 any value, 2 a few values. */
static void random_keys(rng *r, int64_t *k, size_t n, int spread, gm_width w)
{
    for (size_t i = 0; i < n; i++)
        k[i] = spread == 2    ? rng_range(r, -3, 3)
               : w == GM_I32 ? rng_range(r, INT32_MIN, INT32_MAX)
                             : (int64_t)rng_next(r);
}

/* The int64 keys k as keys of width (a malloc'd copy; at least one byte). */
static void *narrow(const int64_t *k, size_t n, gm_width w)
{
    void *out = malloc(n * (size_t)w + 1);
    for (size_t i = 0; i < n; i++)
        if (w == GM_I32)
            ((int32_t *)out)[i] = (int32_t)k[i];
        else
            ((int64_t *)out)[i] = k[i];
    return out;
}

static int64_t key_at(const void *keys, size_t i, gm_width w)
{
    return w == GM_I32 ? ((const int32_t *)keys)[i] : ((const int64_t *)keys)[i];
}

/* The reference: sorted (order +1 or -1), then with unique the first of equal keys. */
static size_t reference(int64_t *k, size_t n, int order, int unique)
{
    ref_sort_i64(k, (int64_t)n, order);
    size_t m = n > 0;
    for (size_t i = 1; unique && i < n; i++)
        if (k[i] != k[m - 1])
            k[m++] = k[i];
    return unique ? m : n;
}

static void expect_keys(const void *got, size_t ngot, const int64_t *want, size_t nwant,
                        gm_width w, const char *what)
{
    cr_assert_eq(ngot, nwant, "%s: %zu keys, want %zu", what, ngot, nwant);
    for (size_t i = 0; i < nwant; i++)
        if (key_at(got, i, w) != want[i])
            cr_assert_fail("%s: key %zu is %lld, want %lld", what, i,
                           (long long)key_at(got, i, w), (long long)want[i]);
}

/* ---------------------------------------------------------------- sort and merge */

/* One sort of n random keys with opt, against the reference. */
static void check_sort(rng *r, size_t n, gm_width w, int spread, const gm_options *opt)
{
    int64_t *ref = malloc((n + 1) * sizeof *ref);
    random_keys(r, ref, n, spread, w);
    void *keys = narrow(ref, n, w);
    size_t want = reference(ref, n, opt->descending ? -1 : 1, opt->unique), got = 12345;
    gm_status st = { 0 };
    char what[160];
    snprintf(what, sizeof what, "sort of %zu int%d keys, %s, device %s, %d threads%s", n,
             (int)w * 8, opt->descending ? "descending" : "ascending",
             gm_device_name(opt->device), opt->threads, opt->unique ? ", unique" : "");
    cr_assert_eq(gm_sort(keys, n, w, opt, &got, &st), GM_OK, "%s: %s", what, st.msg);
    expect_keys(keys, got, ref, want, w, what);
    free(keys), free(ref);
}

/* One merge of k random sorted arrays (some empty) with opt, against the reference. */
static void check_merge(rng *r, size_t k, size_t most, gm_width w, const gm_options *opt)
{
    int order = opt->descending ? -1 : 1, spread = (int)rng_range(r, 0, 2);
    size_t *lens = calloc(k + 1, sizeof *lens), n = 0;
    const void **arrays = calloc(k + 1, sizeof *arrays);
    for (size_t i = 0; i < k; i++)
        lens[i] = rng_range(r, 0, 3) == 0 ? 0 : (size_t)rng_range(r, 0, (int64_t)most), n += lens[i];
    int64_t *all = malloc((n + 1) * sizeof *all), *at = all;
    for (size_t i = 0; i < k; i++, at += lens[i - 1]) {
        random_keys(r, at, lens[i], spread, w);
        ref_sort_i64(at, (int64_t)lens[i], order);
        arrays[i] = lens[i] ? narrow(at, lens[i], w) : NULL;
    }
    size_t want = reference(all, n, order, opt->unique), got = 12345;
    void *out = malloc(n * (size_t)w + 1);
    gm_status st = { 0 };
    char what[160];
    snprintf(what, sizeof what, "merge of %zu arrays, %zu int%d keys, %s, device %s%s", k, n,
             (int)w * 8, order < 0 ? "descending" : "ascending", gm_device_name(opt->device),
             opt->unique ? ", unique" : "");
    cr_assert_eq(gm_merge(arrays, lens, k, w, out, opt, &got, &st), GM_OK, "%s: %s", what,
                 st.msg);
    expect_keys(out, got, all, want, w, what);
    for (size_t i = 0; i < k; i++)
        free((void *)arrays[i]);
    free(out), free(all), free(arrays), free(lens);
}

static const gm_width widths[] = { GM_I32, GM_I64 };

Test(lib, sort_random_on_the_cpu, .timeout = 120)
{
    rng r;
    rng_seed(&r, 11);
    static const size_t sizes[] = { 0, 1, 2, 3, 17, 1000, 65537, 300001 };
    static const struct { gm_device device; int threads; } runs[] = {
        { GM_DEVICE_CPU, 0 }, { GM_DEVICE_CPU, 1 }, { GM_DEVICE_CPU, 3 }, { GM_DEVICE_AUTO, 0 },
    };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int w = 0; w < 2; w++)
            for (int flags = 0; flags < 4; flags++)
                for (size_t d = 0; d < sizeof runs / sizeof runs[0]; d++) {
                    gm_options opt = { 0 };
                    opt.device = runs[d].device;
                    opt.threads = runs[d].threads;
                    opt.descending = flags & 1;
                    opt.unique = flags >> 1;
                    check_sort(&r, sizes[s], widths[w], (int)(s + d) % 3, &opt);
                }
}

Test(lib, merge_random_on_the_cpu, .timeout = 120)
{
    rng r;
    rng_seed(&r, 12);
    static const size_t ks[] = { 0, 1, 2, 2, 3, 5, 16, 100 };
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        for (int w = 0; w < 2; w++)
            for (int flags = 0; flags < 4; flags++)
                for (int d = 0; d < 3; d++) {
                    gm_options opt = { 0 };
                    opt.device = d == 2 ? GM_DEVICE_AUTO : GM_DEVICE_CPU;
                    opt.threads = d == 1 ? 2 : 0;
                    opt.descending = flags & 1;
                    opt.unique = flags >> 1;
                    check_merge(&r, ks[i], i % 2 ? 20000 : 300, widths[w], &opt);
                }
}

Test(lib, defaults_and_counts)
{
    /* NULL options: ascending, every key; n_out may be NULL without unique */
    int32_t k[] = { 5, -1, 5, 3 }, want[] = { -1, 3, 5, 5 };
    cr_assert_eq(gm_sort(k, 4, GM_I32, NULL, NULL, NULL), GM_OK);
    cr_expect_arr_eq(k, want, sizeof want);
    const void *arrays[] = { (int64_t[]){ 1, 4 }, NULL, (int64_t[]){ 2 } };
    size_t lens[] = { 2, 0, 1 }, n = 0;
    int64_t out[3], merged[] = { 1, 2, 4 };
    cr_assert_eq(gm_merge(arrays, lens, 3, GM_I64, out, NULL, &n, NULL), GM_OK);
    cr_expect_eq(n, 3);
    cr_expect_arr_eq(out, merged, sizeof merged);
    cr_expect_str_eq(gm_device_name(GM_DEVICE_AUTO), "auto");
    cr_expect_str_eq(gm_device_name(GM_DEVICE_CPU), "cpu");
    cr_expect_str_eq(gm_device_name(GM_DEVICE_GPU), "gpu");
}

/* ---------------------------------------------------------------- errors */

static int32_t k4[] = { 1, 2, 3, 4 }, unsorted[] = { 1, 5, 3 }, rising[] = { 1, 2, 7 };
static int32_t out16[16];

Test(lib, bad_arguments_are_refused_with_their_message)
{
    gm_options bad_device = { .device = (gm_device)7 }, bad_threads = { .threads = -1 };
    gm_options reserved = { .reserved = { NULL, k4 } }, unique = { .unique = 1 };
    gm_options down = { .descending = 1 }, cpu = { .device = GM_DEVICE_CPU };
    const void *two[] = { k4, unsorted }, *holes[] = { k4, NULL }, *rise[] = { rising, k4 };
    size_t lens[] = { 4, 3 }, n;
    static const struct {
        int which; /* the call below */
        gm_code code;
        const char *msg;
    } cases[] = {
        { 0, GM_EUSAGE, "gm_sort: width 3 is neither GM_I32 (4) nor GM_I64 (8)" },
        { 1, GM_EUSAGE, "gm_sort: device 7 is not GM_DEVICE_AUTO, GM_DEVICE_CPU or GM_DEVICE_GPU" },
        { 2, GM_EUSAGE, "gm_sort: threads -1 is negative" },
        { 3, GM_EUSAGE, "gm_sort: reserved option 1 is not zero" },
        { 4, GM_EUSAGE, "gm_sort: unique needs n_out for the count of keys kept" },
        { 5, GM_EUSAGE, "gm_sort: keys is NULL with n = 5" },
        { 6, GM_EUSAGE, "gm_merge: arrays is NULL with k = 2" },
        { 7, GM_EUSAGE, "gm_merge: lens is NULL with k = 2" },
        { 8, GM_EUSAGE, "gm_merge: arrays[1] is NULL with 3 keys" },
        { 9, GM_EUSAGE, "gm_merge: out is NULL with 7 keys to write" },
        { 10, GM_EUSAGE, "gm_merge: out overlaps arrays[0]" },
        { 11, GM_EINPUT, "gm_merge: arrays[1] is not in ascending order: key 3 at index 2 follows 5" },
        { 12, GM_EINPUT, "gm_merge: arrays[0] is not in descending order: key 2 at index 1 follows 1" },
        { 13, GM_EUSAGE, "gm_sort_device: device pointers need the GPU engine, not GM_DEVICE_CPU" },
        { 14, GM_EUSAGE, "gm_merge_device: device pointers need the GPU engine, not GM_DEVICE_CPU" },
        { 15, GM_EUSAGE, "gm_merge_device: out overlaps arrays[0]" },
        { 16, GM_EUSAGE, "gm_merge: width 0 is neither GM_I32 (4) nor GM_I64 (8)" },
        { 17, GM_EINPUT, "gm_merge: arrays[1] is not in ascending order: key 3 at index 2 follows 5" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gm_status st;
        memset(&st, 0, sizeof st);
        int rc = -1;
        switch (cases[i].which) {
        case 0: rc = gm_sort(k4, 4, (gm_width)3, NULL, NULL, &st); break;
        case 1: rc = gm_sort(k4, 4, GM_I32, &bad_device, NULL, &st); break;
        case 2: rc = gm_sort(k4, 4, GM_I32, &bad_threads, NULL, &st); break;
        case 3: rc = gm_sort(k4, 4, GM_I32, &reserved, NULL, &st); break;
        case 4: rc = gm_sort(k4, 4, GM_I32, &unique, NULL, &st); break;
        case 5: rc = gm_sort(NULL, 5, GM_I32, NULL, NULL, &st); break;
        case 6: rc = gm_merge(NULL, lens, 2, GM_I32, out16, NULL, &n, &st); break;
        case 7: rc = gm_merge(two, NULL, 2, GM_I32, out16, NULL, &n, &st); break;
        case 8: rc = gm_merge(holes, lens, 2, GM_I32, out16, NULL, &n, &st); break;
        case 9: rc = gm_merge(two, lens, 2, GM_I32, NULL, NULL, &n, &st); break;
        case 10: rc = gm_merge(two, lens, 2, GM_I32, k4 + 1, NULL, &n, &st); break;
        case 11: rc = gm_merge(two, lens, 2, GM_I32, out16, &cpu, &n, &st); break;
        case 12: rc = gm_merge(rise, lens, 2, GM_I32, out16, &down, &n, &st); break;
        case 13: rc = gm_sort_device(k4, 4, GM_I32, &cpu, NULL, &st); break;
        case 14: rc = gm_merge_device(two, lens, 2, GM_I32, out16, &cpu, &n, &st); break;
        case 15: rc = gm_merge_device(two, lens, 2, GM_I32, k4, NULL, &n, &st); break;
        case 16: rc = gm_merge(two, lens, 2, (gm_width)0, out16, NULL, &n, &st); break;
        case 17: { /* three arrays: the gather-and-check path, not the two-way one */
            const void *three[] = { k4, unsorted, rising };
            size_t l3[] = { 4, 3, 3 };
            rc = gm_merge(three, l3, 3, GM_I32, out16 + 0, NULL, &n, &st);
            break;
        }
        }
        cr_expect_eq(rc, cases[i].code, "case %zu: code %d, want %d (%s)", i, rc,
                     (int)cases[i].code, st.msg);
        cr_expect_eq(st.code, cases[i].code, "case %zu: the status's code", i);
        cr_expect_str_eq(st.msg, cases[i].msg, "case %zu", i);
    }
}

/* ---------------------------------------------------------------- the GPU */

/* The probe's answer: GM_OK where the GPU engine can run; msg the reason if not. */
static int gpu_usable(char *msg, size_t size)
{
    gm_status st = { 0 };
    int rc = gm_device_probe(&st);
    snprintf(msg, size, "%s", rc == GM_OK ? "" : st.msg);
    cr_assert(rc == GM_OK || rc == GM_ENODEV, "the probe: %d %s", rc, st.msg);
    return rc == GM_OK;
}

/* Skips a GPU case where no GPU is usable, with the reason; GM_TEST_REQUIRE_GPU=1
 * (make test-gpu) makes that a failure. */
static void need_gpu(void)
{
    char why[1024];
    if (gpu_usable(why, sizeof why))
        return;
    const char *req = getenv("GM_TEST_REQUIRE_GPU");
    if (req && *req == '1')
        cr_assert_fail("GPU required but unusable: %s", why);
    cr_skip_test("GPU case skipped: %s", why);
}

Test(lib, gpu_asked_where_none_is_usable)
{
    char why[1024];
    if (gpu_usable(why, sizeof why))
        cr_skip_test("a GPU is usable here: the GPU cases run instead");
    gm_options gpu = { .device = GM_DEVICE_GPU };
    int32_t keys[] = { 3, 1, 2 };
    const void *arrays[] = { keys, keys + 1 };
    size_t lens[] = { 1, 2 }, n;
    int32_t out[3];
    gm_status st[4];
    memset(st, 0, sizeof st);
    int rc[4] = {
        gm_sort(keys, 3, GM_I32, &gpu, &n, &st[0]),
        gm_merge(arrays, lens, 2, GM_I32, out, &gpu, &n, &st[1]),
        gm_sort_device(keys, 3, GM_I32, NULL, &n, &st[2]),
        gm_merge_device(arrays, lens, 2, GM_I32, out, NULL, &n, &st[3]),
    };
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(rc[i], GM_ENODEV, "call %d: %d (%s)", i, rc[i], st[i].msg);
        cr_expect_str_eq(st[i].msg, why, "call %d says the probe's reason", i);
    }
    int32_t untouched[] = { 3, 1, 2 };
    cr_expect_arr_eq(keys, untouched, sizeof keys, "a failed call changed the keys");
    /* a library built without nvcc says so */
    if (!GM_TEST_CUDA)
        cr_expect_str_eq(why, "no usable CUDA device: built without CUDA");
}

Test(lib, gpu_engine_on_host_memory, .timeout = 300)
{
    need_gpu();
    rng r;
    rng_seed(&r, 21);
    static const size_t sizes[] = { 0, 1, 1000, 4097, 1 << 20 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int w = 0; w < 2; w++)
            for (int flags = 0; flags < 4; flags++) {
                gm_options opt = { .device = GM_DEVICE_GPU, .descending = flags & 1,
                                   .unique = flags >> 1 };
                check_sort(&r, sizes[s], widths[w], (int)s % 3, &opt);
                check_merge(&r, s + 2, sizes[s] / 2 + 1, widths[w], &opt);
            }
}

/* A sort or merge of random keys through device pointers, against the reference. */
static void check_on_device(rng *r, size_t k, size_t most, gm_width w, const gm_options *opt)
{
    int order = opt->descending ? -1 : 1;
    size_t *lens = calloc(k, sizeof *lens), n = 0;
    void **dev = calloc(k, sizeof *dev);
    for (size_t i = 0; i < k; i++)
        lens[i] = (size_t)rng_range(r, 0, (int64_t)most), n += lens[i];
    int64_t *all = malloc((n + 1) * sizeof *all), *at = all;
    for (size_t i = 0; i < k; at += lens[i], i++) {
        random_keys(r, at, lens[i], (int)(i % 3), w);
        if (k > 1)
            ref_sort_i64(at, (int64_t)lens[i], order);
        void *h = narrow(at, lens[i], w);
        cr_assert_eq(cudaMalloc(&dev[i], lens[i] * (size_t)w + 1), 0);
        cr_assert_eq(cudaMemcpy(dev[i], h, lens[i] * (size_t)w, H2D), 0);
        free(h);
    }
    size_t want = reference(all, n, order, opt->unique), got = 0;
    void *d_out = NULL, *h_out = malloc(n * (size_t)w + 1);
    gm_status st = { 0 };
    if (k == 1) {
        cr_assert_eq(gm_sort_device(dev[0], n, w, opt, &got, &st), GM_OK, "%s", st.msg);
        cr_assert_eq(cudaMemcpy(h_out, dev[0], got * (size_t)w, D2H), 0);
    } else {
        cr_assert_eq(cudaMalloc(&d_out, n * (size_t)w + 1), 0);
        cr_assert_eq(gm_merge_device((const void *const *)dev, lens, k, w, d_out, opt, &got, &st),
                     GM_OK, "%s", st.msg);
        cr_assert_eq(cudaMemcpy(h_out, d_out, got * (size_t)w, D2H), 0);
        cudaFree(d_out);
    }
    expect_keys(h_out, got, all, want, w, k == 1 ? "sort on the device" : "merge on the device");
    for (size_t i = 0; i < k; i++)
        cudaFree(dev[i]);
    free(h_out), free(all), free(dev), free(lens);
}

Test(lib, gpu_engine_on_device_memory, .timeout = 300)
{
    need_gpu();
    if (!cudaMalloc || !cudaFree || !cudaMemcpy)
        cr_skip_test("device-pointer case skipped: the CUDA runtime is not linked into this "
                     "test (the shared library loads its own with the CUDA engine)");
    rng r;
    rng_seed(&r, 22);
    static const size_t ks[] = { 1, 1, 2, 3, 9 };
    static const size_t most[] = { 0, 5000, 1 << 18, 3000, 40000 };
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        for (int w = 0; w < 2; w++)
            for (int flags = 0; flags < 4; flags++) {
                gm_options opt = { .descending = flags & 1, .unique = flags >> 1 };
                check_on_device(&r, ks[i], most[i], widths[w], &opt);
            }
}
