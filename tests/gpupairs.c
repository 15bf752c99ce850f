/*
 * gpupairs.c - the GPU's sort and merge of key-value pairs on small cases, one
 * process, for compute-sanitizer (tests/sanitize.sh; Criterion's forked test
 * processes are not followed by it): each key type, each way of running (every
 * kernel and forced path, tests/pairs.c), both directions, sizes that straddle the
 * tiles and reach the sort's two-way and four-way passes. Each result is checked
 * against the host's stable sort. Exits 0 when all agree, 1 at the first that
 * does not (saying which), 77 without a usable GPU.
 *
 * Usage: gpupairs [SEED]
 */
#include <stdio.h>
#include <stdlib.h>

#include "../cuda/gpu.h"
#include "pairs.h"

/* Runs one case every way; returns the ways run, or -1 at a disagreement. */
static int run_case(rng *r, gm_pair_key type, int64_t n, int64_t m, enum pair_dist d,
                    int reverse)
{
    pair_case c;
    pair_case_make(&c, r, type, n, m, d, reverse);
    int count;
    const pair_way *ways = pair_ways(m < 0, &count);
    for (int w = 0; w < count; w++) {
        char msg[300];
        if (pair_case_check(&c, &ways[w], msg, sizeof msg)) {
            printf("FAIL: %s %s n=%lld m=%lld %s rev=%d: %s\n", m < 0 ? "sort" : "merge",
                   ways[w].label, (long long)n, (long long)m, pair_key_name(type), reverse,
                   msg);
            pair_case_free(&c);
            return -1;
        }
    }
    pair_case_free(&c);
    return count;
}

int main(int argc, char **argv)
{
    gm_gpu_info info;
    gm_status st;
    if (gm_gpu_probe(&info, &st) != GM_OK) {
        printf("gpupairs skipped: %s\n", st.msg);
        return 77;
    }
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
    rng r;
    rng_seed(&r, seed);
    const gm_pair_key types[] = { GM_PAIR_U64, GM_PAIR_I32, GM_PAIR_I64, GM_PAIR_U32 };
    int runs = 0;
    for (int t = 0; t < 4; t++) {
        gm_width w = (gm_width)pair_key_width(types[t]);
        int64_t sort_tile = gm_gpu_sort_tile(w), tile = gm_gpu_merge_tile(GM_KERNEL_TILED, w);
        /* sorts: one pair, a partial tile, and 5 tiles (two- and four-way passes);
         * merges: several tiles, uneven runs, one run empty; the direction turns
         * from case to case (and from type to type) */
        int64_t sorts[] = { 1, sort_tile - 3, 5 * sort_tile + 77 };
        for (int s = 0; s < 3; s++) {
            int k = run_case(&r, types[t], sorts[s], -1, s == 2 ? PAIR_ENDS : PAIR_FEW,
                             (s + t) % 2);
            if (k < 0)
                return 1;
            runs += k;
        }
        int64_t n = 3 * tile + 5, splits[] = { n / 2, n / 7, 0 };
        for (int s = 0; s < 3; s++) {
            int k = run_case(&r, types[t], n, splits[s], s ? PAIR_WIDE : PAIR_FEW, (s + t) % 2);
            if (k < 0)
                return 1;
            runs += k;
        }
    }
    printf("gpupairs: %d runs agree with the host (seed %llu)\n", runs,
           (unsigned long long)seed);
    return 0;
}
