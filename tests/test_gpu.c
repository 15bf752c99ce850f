/*
 * test_gpu.c - the GPU engine (cuda/) against the CPU engine, its reference: every
 * merge kernel x key width x direction on sizes 0, 1, tile-1, tile, tile+1 and up to
 * 2^26, all keys equal, one side empty, disjoint ranges both ways, heavy duplicates,
 * int64 extremes and k-way merges; and the GPU merge sort on sizes around every tile
 * boundary, sorted, reverse sorted and few-valued inputs, with -r, -u and both. A
 * merge and a sort of more than 2^31 keys run where the memory allows.
 *
 * Without a usable device every case is skipped with the reason (Criterion lists
 * them as skipped); GM_TEST_REQUIRE_GPU=1 turns that into a failure (make test-gpu).
 * GM_TEST_SMALL=1 keeps sizes small, for compute-sanitizer (make sanitize).
 *
 * The text path (cuda/text.cu): its parser against core/input.c's on random texts
 * of every accepted and declined line form (blanks, signs, leading zeros, CRLF,
 * blank lines, int64 values first met late, a last line without its end, -z), its
 * formatter against gm_format_i64, and gm_gpu_sort_text against the CPU's parse,
 * sort and format, with -r, -u, -z and copies forced into small pieces.
 *
 * Key-value pairs (cuda/kernels.cuh: sort_pairs_on_device, merge_pairs_on_device,
 * through cuda/testing.h) against a stable sort of (key, index) on the host
 * (tests/pairs.c): every key type (uint64, the records' key prefix, first), each
 * kernel and forced path, both directions, sizes around every tile, 0 and 1, many
 * equal keys.
 *
 * The probe with fewer descriptors free than CUDA's start-up opens, and a merge
 * of many inputs beside it, through the binary under ulimit -n.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h> /* sysconf */

#include "../core/cpu.h"
#include "../core/input.h"
#include "../core/output.h"
#include "../cuda/gpu.h"
#include "../cuda/testing.h"
#include "helpers.h"
#include "pairs.h"

static void need_gpu(void)
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

static int small_only(void)
{
    const char *s = getenv("GM_TEST_SMALL");
    return s && *s == '1';
}

static const gm_kernel kernels[] = { GM_KERNEL_BASIC, GM_KERNEL_TILED, GM_KERNEL_CIRCULAR };

/* DIST_ENDS: mostly the largest and the smallest key (7 in 16 each): in every run
 * long stretches of keys equal to the one that sorts last, in either direction
 * (the block sort pads a short tile with it, and a merge must never take it for
 * a guard). */
enum dist { DIST_WIDE, DIST_FEW, DIST_EQUAL, DIST_EXTREMES, DIST_CLUSTERED, DIST_ENDS };

static int64_t draw(rng *r, enum dist d, gm_width w)
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

static void put(void *p, int64_t i, int64_t v, gm_width w)
{
    if (w == GM_I32)
        ((int32_t *)p)[i] = (int32_t)v;
    else
        ((int64_t *)p)[i] = v;
}

static int64_t get(const void *p, int64_t i, gm_width w)
{
    return w == GM_I32 ? ((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}

/* Fails with the first position where got and want (n keys of width w) differ. */
static void assert_same_keys(const void *got, const void *want, int64_t n, gm_width w,
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
static gm_keys make_runs(rng *r, const int64_t *offsets, int nruns, enum dist d, gm_width w,
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
static void check_gpu_runs(gm_keys k, const int64_t *offsets, int nruns, int reverse, int unique,
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

/* Merges the runs on the GPU with kernel and on the CPU, and compares. */
static void check_merge(const int64_t *offsets, int nruns, gm_keys k, gm_kernel kernel,
                        int reverse, const char *what)
{
    size_t bytes = (size_t)(k.n + 1) * (size_t)k.width;
    void *scratch = malloc(bytes);
    gm_keys want = { malloc(bytes), k.n, k.width };
    memcpy(want.data, k.data, (size_t)k.n * (size_t)k.width);
    gm_cpu_merge_runs(&want, &scratch, offsets, nruns, reverse, 8);
    check_gpu_runs(k, offsets, nruns, reverse, 0, kernel, want, k.n, what);
    free(want.data);
    free(scratch);
    free(k.data);
}

static void merge_two(rng *r, int64_t m, int64_t n, enum dist d, gm_width w, gm_kernel kernel,
                      int reverse, const char *label)
{
    int64_t offsets[3] = { 0, m, m + n };
    gm_keys k = make_runs(r, offsets, 2, d, w, reverse);
    char what[160];
    snprintf(what, sizeof what, "%s: %s m=%lld n=%lld int%d %s", label, gm_kernel_name(kernel),
             (long long)m, (long long)n, w * 8, reverse ? "descending" : "ascending");
    check_merge(offsets, 2, k, kernel, reverse, what);
}

Test(gpu, merge_sizes_around_tiles, .timeout = 600)
{
    need_gpu();
    rng r;
    rng_seed(&r, 30);
    for (int ki = 0; ki < 3; ki++)
        for (int w = 4; w <= 8; w += 4)
            for (int rev = 0; rev <= 1; rev++) {
                int64_t tile = gm_gpu_merge_tile(kernels[ki], (gm_width)w);
                int64_t sizes[] = { 0, 1, 2, tile - 1, tile, tile + 1, 3 * tile + 5 };
                for (int s = 0; s < 7; s++)
                    for (int split = 0; split < 3; split++) {
                        int64_t total = sizes[s];
                        int64_t m = split == 0 ? total / 2 : split == 1 ? total / 7 : total;
                        merge_two(&r, m, total - m, DIST_WIDE, (gm_width)w, kernels[ki], rev,
                                  "tile sizes");
                    }
            }
}

Test(gpu, merge_special_inputs, .timeout = 600)
{
    need_gpu();
    rng r;
    rng_seed(&r, 31);
    int64_t n = small_only() ? 5000 : 300000;
    for (int ki = 0; ki < 3; ki++)
        for (int w = 4; w <= 8; w += 4)
            for (int rev = 0; rev <= 1; rev++) {
                gm_kernel k = kernels[ki];
                gm_width wd = (gm_width)w;
                merge_two(&r, n, n / 3, DIST_EQUAL, wd, k, rev, "all keys equal");
                merge_two(&r, n, 0, DIST_WIDE, wd, k, rev, "b empty");
                merge_two(&r, 0, n, DIST_WIDE, wd, k, rev, "a empty");
                merge_two(&r, n, n, DIST_FEW, wd, k, rev, "heavy duplicates");
                merge_two(&r, n / 2, n, DIST_EXTREMES, wd, k, rev, "extremes");
                merge_two(&r, n, n / 2 + 1, DIST_ENDS, wd, k, rev, "mostly the ends");
                /* disjoint: every a below every b, then every a above every b */
                for (int above = 0; above <= 1; above++) {
                    int64_t offsets[3] = { 0, n, n + n / 2 };
                    gm_keys keys = { malloc((size_t)offsets[2] * (size_t)w), offsets[2], wd };
                    for (int64_t i = 0; i < offsets[2]; i++) {
                        int64_t v = i < n ? i : i - n + (above ? -n : n);
                        put(keys.data, i, rev ? -v : v, wd);
                    }
                    char what[128];
                    snprintf(what, sizeof what, "disjoint (a %s b) %s int%d rev=%d",
                             above ? "above" : "below", gm_kernel_name(k), w * 8, rev);
                    check_merge(offsets, 2, keys, k, rev, what);
                }
            }
}

Test(gpu, merge_large, .timeout = 900)
{
    need_gpu();
    if (small_only())
        cr_skip_test("GM_TEST_SMALL: large sizes skipped");
    rng r;
    rng_seed(&r, 32);
    for (int ki = 0; ki < 3; ki++) {
        merge_two(&r, 1 << 22, (1 << 22) + 12345, DIST_WIDE, GM_I32, kernels[ki], 0, "2^23");
        merge_two(&r, 1 << 21, 1 << 20, DIST_WIDE, GM_I64, kernels[ki], 1, "2^21+2^20");
    }
    merge_two(&r, 1 << 25, 1 << 25, DIST_WIDE, GM_I32, GM_KERNEL_AUTO, 0, "2^26");
    merge_two(&r, 1 << 25, (1 << 25) - 1, DIST_FEW, GM_I64, GM_KERNEL_AUTO, 1, "2^26-1");
}

/* Past 2^31 keys: positions and tile indices must be 64-bit wherever they can
 * pass 32 bits. Needs about 18 GB of device memory and 43 GB of host memory (the
 * keys, the CPU's answer, the GPU's copy and scratch): skipped, saying so, where
 * either is short. */
static int64_t past_2_31(void)
{
    return ((int64_t)1 << 31) + 12421;
}

static void need_room_past_2_31(void)
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

Test(gpu, merge_past_2_31_keys, .timeout = 1800)
{
    need_room_past_2_31();
    rng r;
    rng_seed(&r, 231);
    int64_t n = past_2_31(), m = n / 2 + 999;
    /* auto: the tiled kernel, once (with GM_KERNEL_TILED check_merge runs each of
     * its partitions: minutes at this size) */
    const gm_kernel each[] = { GM_KERNEL_BASIC, GM_KERNEL_AUTO, GM_KERNEL_CIRCULAR };
    for (int ki = 0; ki < 3; ki++)
        merge_two(&r, m, n - m, DIST_WIDE, GM_I32, each[ki], ki == 1, "past 2^31");
}

Test(gpu, merge_k_way, .timeout = 600)
{
    need_gpu();
    rng r;
    rng_seed(&r, 33);
    int counts[] = { 1, 3, 4, 5, 8, 33 };
    for (int c = 0; c < 6; c++)
        for (int ki = 0; ki < 3; ki++)
            for (int w = 4; w <= 8; w += 4) {
                int k = counts[c];
                int64_t offsets[34];
                offsets[0] = 0;
                for (int i = 0; i < k; i++)
                    offsets[i + 1] = offsets[i] + (i % 4 == 1 ? 0 : rng_range(&r, 1, small_only() ? 3000 : 200000));
                int rev = (c + ki) % 2;
                gm_keys keys = make_runs(&r, offsets, k, (enum dist)(c % 4), (gm_width)w, rev);
                char what[128];
                snprintf(what, sizeof what, "%d-way %s int%d rev=%d", k,
                         gm_kernel_name(kernels[ki]), w * 8, rev);
                check_merge(offsets, k, keys, kernels[ki], rev, what);
            }
}

/* ---------------------------------------------------------------- sort */

/* Sorts k on the GPU with kernel and on the CPU, and compares. With the tiled
 * kernel (auto's choice for a sort) the GPU sorts twice (sort_forced): with the
 * passes it picks by size (two-way below 256 MB of keys, every size here) and with
 * four-way passes forced. */
static void check_sort(gm_keys k, int reverse, int unique, gm_kernel kernel, const char *what)
{
    size_t bytes = (size_t)(k.n + 1) * (size_t)k.width;
    void *scratch = malloc(bytes);
    gm_keys want = { malloc(bytes), k.n, k.width };
    memcpy(want.data, k.data, (size_t)k.n * (size_t)k.width);
    gm_cpu_sort(&want, &scratch, reverse, 8);
    int64_t n = want.n;
    if (unique) { /* the CPU leaves -u to the formatter: collapse here */
        int64_t o = 0;
        for (int64_t i = 0; i < want.n; i++)
            if (i == 0 || get(want.data, i, k.width) != get(want.data, o - 1, k.width))
                put(want.data, o++, get(want.data, i, k.width), k.width);
        n = o;
    }
    check_gpu_runs(k, NULL, 0, reverse, unique, kernel, want, n, what);
    free(want.data);
    free(scratch);
    free(k.data);
}

static void sort_case(rng *r, int64_t n, enum dist d, gm_width w, int presorted, int reverse,
                      int unique, gm_kernel kernel, const char *label)
{
    int64_t offsets[2] = { 0, n };
    gm_keys k;
    if (presorted) {
        k = make_runs(r, offsets, 1, d, w, presorted < 0);
    } else {
        k = (gm_keys){ malloc((size_t)(n + 1) * (size_t)w), n, w };
        for (int64_t i = 0; i < n; i++)
            put(k.data, i, draw(r, d, w), w);
    }
    char what[160];
    snprintf(what, sizeof what, "sort %s n=%lld int%d rev=%d unique=%d kernel=%s", label,
             (long long)n, w * 8, reverse, unique, gm_kernel_name(kernel));
    check_sort(k, reverse, unique, kernel, what);
}

Test(gpu, sort_sizes_around_tiles, .timeout = 600)
{
    need_gpu();
    rng r;
    rng_seed(&r, 40);
    for (int w = 4; w <= 8; w += 4) {
        /* the block sort's tile, and the merge tiles of the passes after it; runs
         * of tiles in twos (two-way passes), threes and fours (four-way passes, some
         * groups short) */
        int64_t tile = gm_gpu_sort_tile((gm_width)w);
        int64_t mt = gm_gpu_merge_tile(GM_KERNEL_TILED, (gm_width)w);
        int64_t bt = gm_gpu_merge_tile(GM_KERNEL_BASIC, (gm_width)w);
        int64_t sizes[] = { 0,        1,        2,         3,         100,
                            bt - 1,   bt,       bt + 1,    mt - 1,    mt,
                            mt + 1,   tile - 1, tile,      tile + 1,  2 * tile - 1,
                            2 * tile + 1, 3 * tile, 4 * tile - 1, 4 * tile + 1,
                            5 * tile + 77, 9 * tile + 3, 16 * tile + 1, 67 * tile - 5 };
        for (int s = 0; s < (int)(sizeof sizes / sizeof *sizes); s++)
            for (int ru = 0; ru < 4; ru++)
                sort_case(&r, sizes[s], DIST_WIDE, (gm_width)w, 0, ru & 1, ru >> 1,
                          kernels[(s + ru) % 3], "tile sizes");
    }
}

Test(gpu, sort_special_inputs, .timeout = 600)
{
    need_gpu();
    rng r;
    rng_seed(&r, 41);
    int64_t n = small_only() ? 20000 : 1000003;
    for (int w = 4; w <= 8; w += 4)
        for (int ru = 0; ru < 4; ru++) {
            gm_width wd = (gm_width)w;
            int rev = ru & 1, uni = ru >> 1;
            sort_case(&r, n, DIST_EQUAL, wd, 0, rev, uni, GM_KERNEL_AUTO, "all equal");
            sort_case(&r, n, DIST_WIDE, wd, 1, rev, uni, GM_KERNEL_TILED, "already ascending");
            sort_case(&r, n, DIST_WIDE, wd, -1, rev, uni, GM_KERNEL_CIRCULAR, "descending");
            sort_case(&r, n, DIST_FEW, wd, 0, rev, uni, GM_KERNEL_BASIC, "few values");
            sort_case(&r, n, DIST_EXTREMES, wd, 0, rev, uni, GM_KERNEL_AUTO, "extremes");
            sort_case(&r, n, DIST_ENDS, wd, 0, rev, uni, GM_KERNEL_TILED, "mostly the ends");
        }
}

Test(gpu, sort_large, .timeout = 900)
{
    need_gpu();
    if (small_only())
        cr_skip_test("GM_TEST_SMALL: large sizes skipped");
    rng r;
    rng_seed(&r, 42);
    sort_case(&r, (1 << 26) - 3, DIST_WIDE, GM_I32, 0, 0, 0, GM_KERNEL_AUTO, "2^26-3");
    sort_case(&r, 1 << 26, DIST_WIDE, GM_I64, 0, 1, 1, GM_KERNEL_AUTO, "2^26");
    sort_case(&r, 12345678, DIST_FEW, GM_I32, 0, 0, 1, GM_KERNEL_CIRCULAR, "12345678 few");
    sort_case(&r, 9999999, DIST_WIDE, GM_I32, 0, 1, 0, GM_KERNEL_BASIC, "9999999");
}

Test(gpu, sort_past_2_31_keys, .timeout = 1800)
{
    need_room_past_2_31();
    rng r;
    rng_seed(&r, 232);
    sort_case(&r, past_2_31(), DIST_WIDE, GM_I32, 0, 0, 0, GM_KERNEL_AUTO, "past 2^31");
}

Test(gpu, sort_size_sweep, .timeout = 600)
{
    need_gpu();
    rng r;
    rng_seed(&r, 43);
    for (int w = 4; w <= 8; w += 4)
        for (int64_t n = 1; n <= 6200; n += small_only() ? 1499 : 211)
            for (int ki = 0; ki < 3; ki++)
                for (int rev = 0; rev <= 1; rev++)
                    sort_case(&r, n, DIST_CLUSTERED, (gm_width)w, 0, rev, 0, kernels[ki],
                              "sweep");
}

/* ---------------------------------------------------------------- pairs */

static const gm_pair_key pair_types[] = { GM_PAIR_U64, GM_PAIR_I32, GM_PAIR_I64, GM_PAIR_U32 };

/* Runs case c every way a sort (or merge) runs in, failing with the first
 * disagreement. */
static void check_pairs_every_way(const pair_case *c, const char *what)
{
    int count;
    const pair_way *ways = pair_ways(c->m < 0, &count);
    for (int w = 0; w < count; w++) {
        char msg[300];
        if (pair_case_check(c, &ways[w], msg, sizeof msg))
            cr_assert_fail("%s %s n=%lld m=%lld %s rev=%d: %s", what, ways[w].label,
                           (long long)c->n, (long long)c->m, pair_key_name(c->type),
                           c->reverse, msg);
    }
}

static void pairs_case(rng *r, gm_pair_key type, int64_t n, int64_t m, enum pair_dist d,
                       int reverse, const char *what)
{
    pair_case c;
    pair_case_make(&c, r, type, n, m, d, reverse);
    check_pairs_every_way(&c, what);
    pair_case_free(&c);
}

Test(gpu, pairs_sort_sizes_around_tiles, .timeout = 900)
{
    need_gpu();
    rng r;
    rng_seed(&r, 50);
    for (int t = 0; t < 4; t++) {
        gm_width w = (gm_width)pair_key_width(pair_types[t]);
        int64_t tile = gm_gpu_sort_tile(w), mt = gm_gpu_merge_tile(GM_KERNEL_TILED, w);
        int64_t bt = gm_gpu_merge_tile(GM_KERNEL_BASIC, w);
        int64_t sizes[] = { 0,        1,        2,        3,           bt - 1,       bt + 1,
                            mt - 1,   mt,       mt + 1,   tile - 1,    tile,         tile + 1,
                            2 * tile + 1, 3 * tile, 4 * tile + 1, 5 * tile + 77, 9 * tile + 3 };
        for (int s = 0; s < (int)(sizeof sizes / sizeof *sizes); s++)
            pairs_case(&r, pair_types[t], sizes[s], -1, s % 2 ? PAIR_FEW : PAIR_WIDE, s % 3 == 1,
                       "sort tile sizes");
    }
}

Test(gpu, pairs_sort_special_inputs, .timeout = 900)
{
    need_gpu();
    rng r;
    rng_seed(&r, 51);
    int64_t n = small_only() ? 20000 : 300001;
    for (int t = 0; t < 4; t++)
        for (int rev = 0; rev <= 1; rev++) {
            pairs_case(&r, pair_types[t], n, -1, PAIR_EQUAL, rev, "sort all equal");
            pairs_case(&r, pair_types[t], n, -1, PAIR_FEW, rev, "sort few values");
            pairs_case(&r, pair_types[t], n, -1, PAIR_ENDS, rev, "sort mostly the ends");
            pairs_case(&r, pair_types[t], n + 17, -1, PAIR_WIDE, rev, "sort wide");
        }
}

Test(gpu, pairs_merge_sizes_around_tiles, .timeout = 900)
{
    need_gpu();
    rng r;
    rng_seed(&r, 52);
    for (int t = 0; t < 4; t++) {
        gm_width w = (gm_width)pair_key_width(pair_types[t]);
        int64_t tiles[3] = { gm_gpu_merge_tile(GM_KERNEL_BASIC, w),
                             gm_gpu_merge_tile(GM_KERNEL_TILED, w),
                             gm_gpu_merge_tile(GM_KERNEL_CIRCULAR, w) };
        for (int k = 0; k < 3; k++) {
            int64_t tile = tiles[k];
            int64_t sizes[] = { 0, 1, 2, tile - 1, tile, tile + 1, 3 * tile + 5 };
            for (int s = 0; s < 7; s++)
                for (int split = 0; split < 4; split++) {
                    int64_t n = sizes[s];
                    int64_t m = split == 0 ? n / 2 : split == 1 ? n / 7 : split == 2 ? n : 0;
                    pairs_case(&r, pair_types[t], n, m, (s + split) % 2 ? PAIR_FEW : PAIR_WIDE,
                               (s + k) % 2, "merge tile sizes");
                }
        }
    }
}

Test(gpu, pairs_merge_special_inputs, .timeout = 900)
{
    need_gpu();
    rng r;
    rng_seed(&r, 53);
    int64_t n = small_only() ? 5000 : 300000;
    for (int t = 0; t < 4; t++)
        for (int rev = 0; rev <= 1; rev++) {
            pairs_case(&r, pair_types[t], n + n / 3, n, PAIR_EQUAL, rev, "merge all equal");
            pairs_case(&r, pair_types[t], 2 * n, n, PAIR_FEW, rev, "merge heavy duplicates");
            pairs_case(&r, pair_types[t], n + n / 2 + 1, n, PAIR_ENDS, rev,
                       "merge mostly the ends");
            pairs_case(&r, pair_types[t], n + 12345, n / 3, PAIR_WIDE, rev, "merge wide");
        }
}

Test(gpu, pairs_large, .timeout = 900)
{
    need_gpu();
    if (small_only())
        cr_skip_test("GM_TEST_SMALL: large sizes skipped");
    rng r;
    rng_seed(&r, 54);
    pairs_case(&r, GM_PAIR_U64, (1 << 22) + 3, -1, PAIR_WIDE, 0, "sort 2^22+3");
    pairs_case(&r, GM_PAIR_U64, (1 << 22) - 5, -1, PAIR_FEW, 1, "sort 2^22-5 few");
    pairs_case(&r, GM_PAIR_U32, 1 << 22, -1, PAIR_WIDE, 0, "sort 2^22");
    pairs_case(&r, GM_PAIR_U64, (1 << 22) + 99, 1 << 21, PAIR_WIDE, 0, "merge 2^22+99");
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

/* ---------------------------------------------------------------- text path */

/* Line forms the host parser accepts, declines as not an integer, and declines as
 * out of range. */
static const char *const accepted[] = {
    "0", "-0", "+0", "+17", "-17", "2147483647", "-2147483648", "2147483648", "-2147483649",
    "9223372036854775807", "-9223372036854775808", "+9223372036854775807",
    "0000000000000000000000000000042", "-00000000000000000000009223372036854775808",
    "9999999999999999", "10000000000000000", "99999999999999999", "-4294967296",
    " 12", "\t-5\t", "  +7  \t ", "12\r", " 3 \r", "00", "1000000000000000000",
};
static const char *const blank_lines[] = { "", " ", "\t", "\r", " \t \r", "   " };
static const char *const rejected[] = {
    "+", "-", "12a", "a12", "1 2", "--1", "+-1", "- 1", "1\r\r", "12\r ", "x", "0x10",
    "1.5", "1e5", "\xd9\xa1", "\v1", "1\f",
};
static const char *const too_big[] = {
    "9223372036854775808", "-9223372036854775809", "99999999999999999999",
    "+18446744073709551616", "-100000000000000000000000",
};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

struct text {
    char *p;
    size_t len, cap;
};

static void add(struct text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->p = realloc(t->p, t->cap);
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = 0;
}

static void adds(struct text *t, const char *s) { add(t, s, strlen(s)); }

static int fits_i32(const char *a)
{
    char *end;
    long long v = strtoll(a, &end, 10);
    return v >= INT32_MIN && v <= INT32_MAX && strlen(a) < 12;
}

/* A random text of lines lines: keys, the fixed forms above, blank lines (unless
 * c % 5 == 2), long lines that leave a tile and its halo, CRLF. narrow keeps every
 * key within int32 (c % 3 == 0); c % 7 == 3 puts a single int64 key near the end;
 * bad (c % 4 == 1) plants declined lines. The last line ends or not at random. */
static struct text random_text(rng *r, int64_t lines, int c)
{
    struct text t = { NULL, 0, 0 };
    adds(&t, "");
    const int narrow = c % 3 == 0 || c % 7 == 3, bad = c % 4 == 1, blank = c % 5 != 2;
    char buf[64];
    for (int64_t i = 0; i < lines; i++) {
        int64_t x = rng_range(r, 0, 99);
        int64_t v = narrow ? rng_range(r, INT32_MIN, INT32_MAX)
                           : (int64_t)rng_next(r) >> rng_range(r, 0, 63);
        if (x < 70) {
            snprintf(buf, sizeof buf, "%lld", (long long)v);
            adds(&t, buf);
        } else if (x < 82) {
            const char *a = accepted[rng_range(r, 0, COUNT(accepted) - 1)];
            adds(&t, narrow && !fits_i32(a) ? "1" : a);
        } else if (x < 90 && blank) {
            adds(&t, blank_lines[rng_range(r, 0, COUNT(blank_lines) - 1)]);
        } else if (x < 91) {
            int64_t pad = rng_range(r, 0, 5000);
            for (int64_t k = 0; k < pad; k++)
                adds(&t, x & 1 ? " " : "\t");
            snprintf(buf, sizeof buf, "%lld", (long long)v);
            adds(&t, buf);
        } else if (x < 93 && bad) {
            adds(&t, rejected[rng_range(r, 0, COUNT(rejected) - 1)]);
        } else if (x < 94 && bad) {
            adds(&t, too_big[rng_range(r, 0, COUNT(too_big) - 1)]);
        } else {
            snprintf(buf, sizeof buf, "%lld%s", (long long)v, x & 1 ? "\r" : " ");
            adds(&t, buf);
        }
        if (c % 7 == 3 && i == lines - 2)
            adds(&t, "\n-9000000000"); /* one int64 key, late */
        if (i + 1 < lines || rng_range(r, 0, 1))
            adds(&t, "\n");
    }
    return t;
}

/* The host parser (core/input.c) on text in memory: its keys as int64, its width,
 * and the line (0: none) and kind of its first problem. */
struct parsed {
    int64_t *keys;
    int64_t n;
    gm_width width;
    int64_t bad_line;
    int bad_range;
};

static struct parsed host_parse(const char *text, size_t len)
{
    struct parsed p = { NULL, 0, GM_I32, 0, 0 };
    gm_input in;
    memset(&in, 0, sizeof in);
    in.name = "t";
    strcpy(in.shown, "t");
    in.fd = -1;
    in.size = (int64_t)len;
    gm_block blk = { text, len, 1 };
    gm_keybuf kb = { NULL, 0, 0, 0, GM_I32 };
    gm_parse_opts o = { 3, 0, 0, 0, 0 };
    gm_status st;
    int rc = gm_input_parse_block(&in, &blk, &o, &kb, &st);
    if (rc == GM_OK) {
        p.width = kb.width;
        p.n = kb.n;
        p.keys = malloc((size_t)(kb.n + 1) * sizeof *p.keys);
        for (int64_t i = 0; i < kb.n; i++)
            p.keys[i] = gm_keybuf_get(&kb, i);
    } else {
        cr_assert_eq(rc, GM_EINPUT, "host parse: %s", st.msg);
        long long line = 0;
        cr_assert_eq(sscanf(st.msg, "t:%lld:", &line), 1, "%s", st.msg);
        p.bad_line = line;
        p.bad_range = strstr(st.msg, "out of range") != NULL;
    }
    gm_keybuf_free(&kb);
    gm_input_close(&in);
    return p;
}

/* -z's form of a text: NUL and newline swapped, as the reader swaps them back. */
static void swap_ends(char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = p[i] == '\0' ? '\n' : p[i] == '\n' ? '\0' : p[i];
}

static void check_text_parse(const struct text *t, int zero, const char *what)
{
    struct parsed want = host_parse(t->p, t->len);
    char *z = malloc(t->len + 1);
    memcpy(z, t->p, t->len);
    if (zero)
        swap_ends(z, t->len);
    int64_t cap = (int64_t)t->len + 1, n = 0, bad = 0;
    int64_t *keys = malloc((size_t)cap * sizeof *keys);
    gm_width w;
    int range = 0;
    gm_status st;
    int rc = gm_gpu_test_parse(z, t->len, zero ? '\0' : '\n', keys, cap, &n, &w, &bad, &range, &st);
    if (want.bad_line) {
        cr_assert_eq(rc, GM_ETEXT, "%s: the host declines line %lld, the device: %s", what,
                     (long long)want.bad_line, rc ? st.msg : "nothing");
        cr_assert_eq(bad, want.bad_line, "%s: first declined line %lld on the device, %lld on the host",
                     what, (long long)bad, (long long)want.bad_line);
        cr_assert_eq(range, want.bad_range, "%s: line %lld: kind", what, (long long)bad);
    } else {
        cr_assert_eq(rc, GM_OK, "%s: %s", what, st.msg);
        cr_assert_eq(n, want.n, "%s: %lld keys on the device, %lld on the host", what,
                     (long long)n, (long long)want.n);
        cr_assert_eq(w, want.width, "%s: int%d on the device, int%d on the host", what, w * 8,
                     want.width * 8);
        assert_same_keys(keys, want.keys, n, GM_I64, what);
    }
    free(keys);
    free(z);
    free(want.keys);
}

static const char *const fixed_texts[] = {
    "\n", "\n\n\n", "5", "5\n", " ", "-", "\r\n", "\r", "-9223372036854775808",
    "1\n\n2\n", "1\n2\n3", "9223372036854775808\nx\n", "x\n9223372036854775808\n",
    "1\r\n-2\r\n+3\r\n", "7\n\n\n\n2147483648",
};

Test(gpu, text_parse_against_the_host, .timeout = 600)
{
    need_gpu();
    rng r;
    rng_seed(&r, 70);
    char what[96];
    for (int zero = 0; zero <= 1; zero++)
        for (int i = 0; i < COUNT(fixed_texts); i++) {
            struct text t = { NULL, 0, 0 };
            adds(&t, fixed_texts[i]);
            snprintf(what, sizeof what, "fixed text %d%s", i, zero ? " (-z)" : "");
            check_text_parse(&t, zero, what);
            free(t.p);
        }
    /* a line at every place about a tile (4096 bytes) and its halo (256 after it) */
    for (int pad = 4080; pad <= 4400; pad += 37) {
        struct text t = { NULL, 0, 0 };
        for (int k = 0; k < pad; k++)
            adds(&t, k % 3 ? " " : "\t");
        adds(&t, "7\n8\n");
        for (int k = 0; k < 4096; k++)
            adds(&t, "\n");
        adds(&t, "-3");
        snprintf(what, sizeof what, "tile edge %d", pad);
        check_text_parse(&t, 0, what);
        free(t.p);
    }
    int cases = small_only() ? 40 : 300;
    for (int c = 0; c < cases; c++) {
        int64_t lines = c % 10 == 9 ? rng_range(&r, 20000, 50000) : rng_range(&r, 1, 3000);
        struct text t = random_text(&r, lines, c);
        snprintf(what, sizeof what, "random text %d (%lld lines)%s", c, (long long)lines,
                 c % 2 ? " (-z)" : "");
        check_text_parse(&t, c % 2, what);
        free(t.p);
    }
}

Test(gpu, text_format_against_the_host, .timeout = 300)
{
    need_gpu();
    rng r;
    rng_seed(&r, 71);
    int64_t sizes[] = { 1, 2, 2047, 2048, 2049, 100000 };
    for (int s = 0; s < COUNT(sizes); s++)
        for (int w = 4; w <= 8; w += 4)
            for (int zero = 0; zero <= 1; zero++) {
                int64_t n = sizes[s];
                gm_keys k = { malloc((size_t)n * (size_t)w), n, (gm_width)w };
                for (int64_t i = 0; i < n; i++)
                    put(k.data, i, draw(&r, i % 5 ? DIST_WIDE : DIST_EXTREMES, (gm_width)w), (gm_width)w);
                put(k.data, 0, 0, (gm_width)w);
                size_t cap = (size_t)n * 21 + 1, len = 0, wl = 0;
                char *got = malloc(cap), *want = malloc(cap);
                for (int64_t i = 0; i < n; i++) {
                    char *e = gm_format_i64(want + wl, get(k.data, i, (gm_width)w));
                    *e++ = zero ? '\0' : '\n';
                    wl = (size_t)(e - want);
                }
                gm_gpu_choices c = { .text_chunk = s % 2 ? 4096 : 0 };
                gm_gpu_force(&c);
                gm_status st;
                int rc = gm_gpu_test_format(&k, zero ? '\0' : '\n', got, cap, &len, &st);
                gm_gpu_force(NULL);
                cr_assert_eq(rc, GM_OK, "%s", st.msg);
                cr_assert_eq(len, wl, "%lld int%d keys: %zu bytes, want %zu", (long long)n, w * 8,
                             len, wl);
                cr_assert(memcmp(got, want, wl) == 0, "%lld int%d keys: text differs",
                          (long long)n, w * 8);
                free(got), free(want), free(k.data);
            }
}

struct sink_buf {
    char *p;
    size_t len, cap;
    int calls;
};

static int to_buf(void *ctx, const char *text, size_t len, gm_status *st)
{
    struct sink_buf *b = ctx;
    if (b->len + len > b->cap)
        return gm_fail(st, GM_EIO, "sink full");
    memcpy(b->p + b->len, text, len);
    b->len += len;
    b->calls++;
    return GM_OK;
}

/* The CPU's answer: parse, sort, and format (with -u, the first of each run). */
static char *cpu_sorted_text(const struct text *t, int reverse, int unique, char eol, size_t *len)
{
    struct parsed p = host_parse(t->p, t->len);
    cr_assert_eq(p.bad_line, 0);
    ref_sort_i64(p.keys, p.n, reverse ? -1 : 1);
    char *out = malloc((size_t)p.n * 21 + 1), *e = out;
    for (int64_t i = 0; i < p.n; i++) {
        if (unique && i > 0 && p.keys[i] == p.keys[i - 1])
            continue;
        e = gm_format_i64(e, p.keys[i]);
        *e++ = eol;
    }
    *len = (size_t)(e - out);
    free(p.keys);
    return out;
}

Test(gpu, text_sort_against_the_cpu, .timeout = 600)
{
    need_gpu();
    rng r;
    rng_seed(&r, 72);
    int cases = small_only() ? 12 : 60;
    for (int c = 0; c < cases; c++) {
        int64_t lines = c % 6 == 5 ? rng_range(&r, 100000, 300000) : rng_range(&r, 1, 5000);
        int cc = c % 4 == 1 ? c + 1 : c; /* no declined lines here */
        struct text t = random_text(&r, lines, cc);
        int reverse = c & 1, unique = (c >> 1) & 1, zero = c % 3 == 2;
        char eol = zero ? '\0' : '\n';
        size_t wl;
        char *want = cpu_sorted_text(&t, reverse, unique, eol, &wl);
        if (zero)
            swap_ends(t.p, t.len);
        struct sink_buf b = { malloc(t.len + 2), 0, t.len + 1, 0 };
        gm_text_job job = { t.p, t.len, eol, reverse, unique, GM_KERNEL_AUTO, 0, NULL, NULL,
                            to_buf, &b };
        gm_text_result res;
        gm_gpu_times tm;
        gm_status st;
        gm_gpu_choices f = { .text_chunk = c % 5 == 0 ? 16 : c % 5 == 1 ? 65536 : 0 };
        gm_gpu_force(&f);
        int rc = gm_gpu_sort_text(&job, &res, &tm, &st);
        gm_gpu_force(NULL);
        cr_assert_eq(rc, GM_OK, "case %d: %s", c, st.msg);
        cr_assert_eq(b.len, wl, "case %d (%lld lines, -r %d, -u %d, -z %d): %zu bytes, want %zu",
                     c, (long long)lines, reverse, unique, zero, b.len, wl);
        cr_assert(memcmp(b.p, want, wl) == 0, "case %d: text differs", c);
        cr_assert_eq(res.bytes, (uint64_t)wl);
        free(b.p), free(want), free(t.p);
    }
}

Test(gpu, text_sort_declines_a_bad_line)
{
    need_gpu();
    const char *texts[] = { "1\n2\nx\n", "5\n99999999999999999999\n", "3\n-\n" };
    for (int i = 0; i < COUNT(texts); i++) {
        struct sink_buf b = { malloc(64), 0, 64, 0 };
        gm_text_job job = { texts[i], strlen(texts[i]), '\n', 0, 0, GM_KERNEL_AUTO, 0, NULL,
                            NULL, to_buf, &b };
        gm_text_result res;
        gm_gpu_times tm;
        gm_status st;
        cr_assert_eq(gm_gpu_sort_text(&job, &res, &tm, &st), GM_ETEXT, "text %d", i);
        cr_assert_eq(b.calls, 0, "nothing handed out before declining");
        free(b.p);
    }
}

/* Outside --strict the device takes canonical integers only: every other form the
 * full grammar accepts (signs, zeros, blanks, CR, blank lines) is declined, so
 * that the records path writes those lines back as they are; canonical lines of
 * both widths are sorted. */
Test(gpu, text_sort_canonical_only)
{
    need_gpu();
    const char *declined[] = { "1\n007\n", "1\n-0\n", "+5\n", " 12\n", "3\r\n", "1\n\n2\n",
                               "12 \n", "00\n", "-01\n" };
    for (int i = 0; i < COUNT(declined); i++) {
        struct sink_buf b = { malloc(64), 0, 64, 0 };
        gm_text_job job = { declined[i], strlen(declined[i]), '\n', 0, 0, GM_KERNEL_AUTO, 1,
                            NULL, NULL, to_buf, &b };
        gm_text_result res;
        gm_gpu_times tm;
        gm_status st;
        cr_assert_eq(gm_gpu_sort_text(&job, &res, &tm, &st), GM_ETEXT, "text %d", i);
        cr_assert_eq(b.calls, 0, "nothing handed out before declining");
        free(b.p);
    }
    const char *text = "5\n-9223372036854775808\n0\n-3\n9223372036854775807\n10";
    const char *want = "-9223372036854775808\n-3\n0\n5\n10\n9223372036854775807\n";
    struct sink_buf b = { malloc(128), 0, 128, 0 };
    gm_text_job job = { text, strlen(text), '\n', 0, 0, GM_KERNEL_AUTO, 1, NULL, NULL, to_buf,
                        &b };
    gm_text_result res;
    gm_gpu_times tm;
    gm_status st;
    cr_assert_eq(gm_gpu_sort_text(&job, &res, &tm, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(b.len, strlen(want));
    cr_assert(memcmp(b.p, want, b.len) == 0);
    free(b.p);
}
