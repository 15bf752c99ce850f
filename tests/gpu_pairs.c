/*
 * gpu_pairs.c - key-value pairs on the GPU (cuda/kernels.cuh: sort_pairs_on_device,
 * merge_pairs_on_device, through cuda/testing.h) against a stable sort of
 * (key, index) on the host (tests/pairs.c): every key type (uint64, the records'
 * key prefix, first), each kernel and forced path, both directions, sizes around
 * every tile, 0 and 1, many equal keys.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../cuda/gpu.h"
#include "../cuda/testing.h"
#include "gpu_cases.h"
#include "helpers.h"
#include "pairs.h"

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
