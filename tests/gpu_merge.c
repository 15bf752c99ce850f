/*
 * gpu_merge.c - the GPU's merge against the CPU's: every merge kernel x key width
 * x direction on sizes 0, 1, 2, tile-1, tile, tile+1 and 3 tiles and more, split
 * three ways; all keys equal, one side empty, heavy duplicates, int64 extremes,
 * mostly the ends, disjoint ranges both ways; sizes up to 2^26, a merge of more
 * than 2^31 keys where the memory allows, and k-way merges of 1 to 33 runs.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/sort/cpu.h"
#include "../cuda/gpu.h"
#include "../cuda/testing.h"
#include "gpu_cases.h"
#include "helpers.h"

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
