/*
 * gpu_sort.c - the GPU merge sort against the CPU's sort: sizes around every tile
 * boundary (the block sort's tile and the merge tiles of the passes after it),
 * sorted, reverse sorted, all-equal, few-valued and extreme inputs, with -r, -u
 * and both, on every kernel; sizes up to 2^26, more than 2^31 keys where the
 * memory allows, and a sweep of small sizes.
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
