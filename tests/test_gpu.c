/*
 * test_gpu.c - the GPU engine (cuda/) against the CPU engine, its reference, and
 * the helpers the suite's files share (gpu_cases.h): keys drawn from a few
 * distributions, runs sorted by the CPU, and the GPU's merge or sort under each
 * of a kernel's forced settings. Here: data too large for the device's memory
 * (a limit forced) refused with the keys untouched; the probe, whose failure
 * says why, after a warm start and with a process that ends while it runs; and
 * the probe with fewer descriptors free than CUDA's start-up opens, and a merge
 * of many inputs beside it, through the binary under ulimit -n.
 *
 * The other files: gpu_merge.c (every merge kernel x key width x direction on
 * sizes 0, 1, tile-1, tile, tile+1 and up to 2^26, special inputs, k-way merges,
 * past 2^31 keys), gpu_sort.c (the GPU merge sort around every tile boundary and
 * on special inputs, with -r, -u and both), gpu_pairs.c (key-value pairs against
 * a stable sort on the host) and gpu_text.c (the text path: parser, formatter and
 * gm_gpu_sort_text against the host's).
 *
 * Without a usable device every case is skipped with the reason (Criterion lists
 * them as skipped); GM_TEST_REQUIRE_GPU=1 turns that into a failure (make test-gpu).
 * GM_TEST_SMALL=1 keeps sizes small, for compute-sanitizer (make sanitize).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h> /* sysconf */

#include "../core/sort/cpu.h"
#include "../cuda/gpu.h"
#include "../cuda/testing.h"
#include "gpu_cases.h"
#include "helpers.h"

void need_gpu(void)
{
    gm_gpu_info info;
    gm_status st;
    if (gm_gpu_probe(&info, &st) == GM_OK)
        return;
    const char *req = getenv("GM_TEST_REQUIRE_GPU");
    if (req && *req == '1')
        cr_assert_fail("GPU required but unusable: %s", st.msg);
    cr_skip_test("GPU case skipped: %s", st.msg);
}

int small_only(void)
{
    const char *s = getenv("GM_TEST_SMALL");
    return s && *s == '1';
}

const gm_kernel kernels[] = { GM_KERNEL_BASIC, GM_KERNEL_TILED, GM_KERNEL_CIRCULAR };

int64_t draw(rng *r, enum dist d, gm_width w)
{
    int64_t lo = w == GM_I32 ? INT32_MIN : INT64_MIN, hi = w == GM_I32 ? INT32_MAX : INT64_MAX;
    switch (d) {
    case DIST_FEW:
        return rng_range(r, -4, 4);
    case DIST_EQUAL:
        return 7;
    case DIST_EXTREMES: {
        int64_t pick[4] = { lo, lo + 1, hi - 1, hi };
        return pick[rng_range(r, 0, 3)];
    }
    case DIST_ENDS: {
        int64_t x = rng_range(r, 0, 15);
        return x < 7 ? lo : x < 14 ? hi : rng_range(r, lo, hi);
    }
    case DIST_CLUSTERED: /* int64: few distinct high halves, as in tests/sanitize.sh */
        return w == GM_I32 ? rng_range(r, -100000, 100000)
                           : rng_range(r, -100000, 100000) * 4294967296LL + rng_range(r, 0, 999);
    default:
        return rng_range(r, lo, hi);
    }
}

void put(void *p, int64_t i, int64_t v, gm_width w)
{
    if (w == GM_I32)
        ((int32_t *)p)[i] = (int32_t)v;
    else
        ((int64_t *)p)[i] = v;
}

int64_t get(const void *p, int64_t i, gm_width w)
{
    return w == GM_I32 ? ((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}

/* Fails with the first position where got and want (n keys of width w) differ. */
void assert_same_keys(const void *got, const void *want, int64_t n, gm_width w,
                      const char *what)
{
    if (memcmp(got, want, (size_t)n * (size_t)w) == 0)
        return;
    for (int64_t i = 0; i < n; i++)
        if (get(got, i, w) != get(want, i, w))
            cr_assert_fail("%s: key %lld is %lld, want %lld", what, (long long)i,
                           (long long)get(got, i, w), (long long)get(want, i, w));
}

/* Fills runs [offsets[r], offsets[r+1]) with draws, each run sorted by the CPU. */
gm_keys make_runs(rng *r, const int64_t *offsets, int nruns, enum dist d, gm_width w,
                  int reverse)
{
    int64_t n = offsets[nruns];
    gm_keys k = { malloc((size_t)(n + 1) * (size_t)w), n, w };
    void *scratch = malloc((size_t)(n + 1) * (size_t)w);
    for (int64_t i = 0; i < n; i++)
        put(k.data, i, draw(r, d, w), w);
    for (int run = 0; run < nruns; run++) {
        gm_keys part = { (char *)k.data + (size_t)offsets[run] * (size_t)w,
                         offsets[run + 1] - offsets[run], w };
        void *ps = (char *)scratch + (size_t)offsets[run] * (size_t)w;
        void *orig = part.data;
        gm_cpu_sort(&part, &ps, reverse, 8);
        if (part.data != orig)
            memcpy(orig, part.data, (size_t)part.n * (size_t)w);
    }
    free(scratch);
    return k;
}

/* The GPU side runs some kernels once per forced choice (cuda/testing.h), since the
 * sizes here would reach only some of their paths: a merge with the tiled kernel
 * per way of finding its tiles' co-ranks (as the size picks; each block by itself;
 * a coarse partition with one lane a tile and with 8, whose blocks then load
 * windows: see cuda/partition.cu), with the circular kernel with its usual grid and
 * with three blocks, whose segments then span many tiles and so many turns of the
 * rings; a sort with the tiled passes as the size picks them and with four-way
 * passes wherever three runs or more are left (by size they start at 256 MB of
 * keys). */
struct forced {
    const char *label;
    gm_gpu_choices c;
};
static const struct forced tiled_forced[] = {
    { "as by size", { 0 } },
    { "each block searches", { .partition = GM_PARTITION_NONE } },
    { "partition 1 lane", { .partition = GM_PARTITION_LANES_1 } },
    { "partition 8 lanes", { .partition = GM_PARTITION_LANES_8 } },
};
static const struct forced circular_forced[] = { { "as by size", { 0 } },
                                                 { "3 blocks", { .circular_blocks = 3 } } };
static const struct forced sort_forced[] = { { "as by size", { 0 } },
                                             { "four-way passes", { .sort_ways = 4 } } };
static const struct forced no_forced[] = { { "as by size", { 0 } } };

/* The choices a merge (sort = 0) or sort with kernel runs under: *tries of them. */
static const struct forced *forced_for(gm_kernel kernel, int sort, int *tries)
{
    const struct forced *f;
    if (sort && (kernel == GM_KERNEL_TILED || kernel == GM_KERNEL_AUTO))
        f = sort_forced, *tries = (int)(sizeof sort_forced / sizeof sort_forced[0]);
    else if (!sort && kernel == GM_KERNEL_TILED)
        f = tiled_forced, *tries = (int)(sizeof tiled_forced / sizeof tiled_forced[0]);
    else if (!sort && kernel == GM_KERNEL_CIRCULAR)
        f = circular_forced, *tries = (int)(sizeof circular_forced / sizeof circular_forced[0]);
    else
        f = no_forced, *tries = 1;
    return f;
}

/* Merges the runs of k (offsets, nruns) on the GPU with kernel, or sorts k (offsets
 * null), under each of the kernel's forced settings, and compares each result with
 * want's first n keys. */
void check_gpu_runs(gm_keys k, const int64_t *offsets, int nruns, int reverse, int unique,
                    gm_kernel kernel, gm_keys want, int64_t n, const char *what)
{
    int tries;
    const struct forced *forced = forced_for(kernel, offsets == NULL, &tries);
    for (int i = 0; i < tries; i++) {
        gm_keys gpu = { malloc((size_t)(k.n + 1) * (size_t)k.width), k.n, k.width };
        memcpy(gpu.data, k.data, (size_t)k.n * (size_t)k.width);
        gm_gpu_times t;
        gm_status st;
        char msg[200];
        gm_gpu_force(&forced[i].c);
        int rc = offsets ? gm_gpu_merge(&gpu, offsets, nruns, reverse, kernel, &t, &st)
                         : gm_gpu_sort(&gpu, reverse, unique, kernel, &t, &st);
        gm_gpu_force(NULL);
        snprintf(msg, sizeof msg, "%s (%s)", what, forced[i].label);
        cr_assert_eq(rc, GM_OK, "%s: %s", msg, st.msg);
        cr_assert_eq(gpu.n, n, "%s: %lld keys, want %lld", msg, (long long)gpu.n, (long long)n);
        assert_same_keys(gpu.data, want.data, n, k.width, msg);
        free(gpu.data);
    }
}

/* Past 2^31 keys: positions and tile indices must be 64-bit wherever they can
 * pass 32 bits. Needs about 18 GB of device memory and 43 GB of host memory (the
 * keys, the CPU's answer, the GPU's copy and scratch): skipped, saying so, where
 * either is short. */
int64_t past_2_31(void)
{
    return ((int64_t)1 << 31) + 12421;
}

void need_room_past_2_31(void)
{
    need_gpu();
    if (small_only())
        cr_skip_test("GM_TEST_SMALL: large sizes skipped");
    gm_gpu_info info;
    gm_status st;
    gm_gpu_probe(&info, &st);
    size_t keys = (size_t)past_2_31() * 4;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t host = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
    if (info.free_bytes < 2 * keys + ((size_t)1 << 30) || host < 5 * keys)
        cr_skip_test("2^31 keys skipped: %zu MB free on the device, %zu MB of host memory; "
                     "%zu MB and %zu MB needed",
                     info.free_bytes >> 20, host >> 20, (2 * keys >> 20) + 1024, 5 * keys >> 20);
}

/* ---------------------------------------------------------------- errors */

Test(gpu, data_too_large_for_the_device)
{
    need_gpu();
    int32_t data[4] = { 3, 1, 2, 0 }, orig[4] = { 3, 1, 2, 0 };
    int64_t offsets[3] = { 0, 2, 3 };
    gm_gpu_choices c = { .memory_limit = 64 }; /* the device looks full */
    for (int op = 0; op < 2; op++) {
        gm_keys k = { data, 3, GM_I32 };
        gm_gpu_times t;
        gm_status st;
        gm_gpu_force(&c);
        int rc = op ? gm_gpu_merge(&k, offsets, 2, 0, GM_KERNEL_AUTO, &t, &st)
                    : gm_gpu_sort(&k, 0, 0, GM_KERNEL_AUTO, &t, &st);
        gm_gpu_force(NULL);
        cr_assert_eq(rc, GM_EDEVMEM, "%s: %s", op ? "merge" : "sort", st.msg);
        cr_assert(strncmp(st.msg, "data does not fit in GPU memory: ", 33) == 0, "%s", st.msg);
        cr_assert_eq(k.n, 3);
        cr_assert(memcmp(data, orig, sizeof data) == 0, "keys untouched after the failure");
    }
}

/* ---------------------------------------------------------------- probe */

/* Without a usable device the message says why in words, and the CUDA error
 * behind it stays available (for -v); a build without CUDA has no CUDA error to
 * keep, and its words are the whole reason. */
Test(gpu, probe_failure_says_why)
{
    gm_gpu_info info;
    gm_status st;
    if (gm_gpu_probe(&info, &st) == GM_OK)
        cr_skip_test("a device is usable here");
    cr_assert_eq(st.code, GM_ENODEV);
    cr_assert(strncmp(st.msg, "no usable CUDA device: ", 23) == 0, "%s", st.msg);
    if (gm_gpu_built())
        cr_assert(info.detail[0] != 0, "the CUDA error is kept");
    else
        cr_assert(info.detail[0] == 0 && strcmp(st.msg, "no usable CUDA device: built without "
                                                         "CUDA") == 0, "%s / %s", st.msg,
                  info.detail);
    cr_assert(info.name[0] == 0 && info.sm_count == 0);
}

Test(gpu, warm_start_then_probe)
{
    gm_gpu_warm_start();
    gm_gpu_warm_start(); /* harmless twice */
    need_gpu();          /* waits for the thread's probe */
    gm_gpu_info info;
    gm_status st;
    cr_assert_eq(gm_gpu_probe(&info, &st), GM_OK, "%s", st.msg);
    cr_assert(info.name[0] != 0 && info.sm_count > 0 && info.detail[0] == 0);
}

/* The process may end while the thread still creates the context: it must end
 * cleanly (Criterion reports a crash otherwise). */
Test(gpu, warm_start_then_exit)
{
    gm_gpu_warm_start();
}

/* With fewer descriptors free than CUDA's start-up opens, CUDA is not started (it
 * fails vaguely or crashes): --device=gpu says so; and a merge of more inputs
 * than its fan-in leaves CUDA its descriptors. The binary under ulimit -n, since
 * the probe runs once a process. */
Test(gpu, descriptors_for_cuda, .timeout = 300)
{
    /* The binary finds the GPU, not this process: CUDA's own descriptors would be
     * inherited by the commands below. */
    char *dir = scratch_dir();
    rng r;
    rng_seed(&r, 34);
    char *args = malloc(300 * 8), *p = args;
    for (int i = 0; i < 300; i++) {
        char name[16];
        snprintf(name, sizeof name, "in%03d", i);
        random_file(&r, dir, name, 1000, 0, 1);
        p += sprintf(p, " %s", name);
    }
    char *cmd;
    if (asprintf(&cmd, "'%s' --device=gpu -n in000", gpumerge_path()) < 0)
        abort();
    cmd_result g = run_sh(dir, cmd);
    free(cmd);
    if (g.status != 0) {
        const char *req = getenv("GM_TEST_REQUIRE_GPU");
        if (req && *req == '1')
            cr_assert_fail("GPU required but unusable: %s", g.err);
        cr_skip_test("GPU case skipped: %s", g.err);
    }
    cmd_free(&g);
    if (asprintf(&cmd, "ulimit -n 20 && '%s' --device=gpu -n in000", gpumerge_path()) < 0)
        abort();
    g = run_sh(dir, cmd);
    free(cmd);
    cr_assert_eq(g.status, 2, "%s", g.err);
    cr_assert(strncmp(g.err, "gpumerge: no usable CUDA device: ", 33) == 0 &&
                  strstr(g.err, " file descriptors free, CUDA's start-up needs 34 (ulimit -n)\n"),
              "%s", g.err);
    cmd_free(&g);
    if (asprintf(&cmd, "ulimit -n 64 && TMPDIR=. '%s' --device=gpu merge%s", gpumerge_path(),
                 args) < 0)
        abort();
    g = run_sh(dir, cmd);
    free(cmd);
    if (asprintf(&cmd, "LC_ALL=C sort -m -n%s", args) < 0)
        abort();
    cmd_result want = run_sh(dir, cmd);
    free(cmd);
    cr_assert_eq(g.status, 0, "%s", g.err);
    cr_assert(g.out_len == want.out_len && memcmp(g.out, want.out, g.out_len) == 0,
              "the merge differs from sort's");
    cmd_free(&g);
    cmd_free(&want);
    free(args);
    free(dir);
}
