/*
 * test_corank.c - the co-rank function and the sequential merge of core/keys/corank.h,
 * the one copy the CPU engine and the kernels share: the definition checked for
 * every k of many small arrays, the edge cases of the design (empty sides, all keys
 * equal, disjoint ranges), both directions, both widths, and int64 extremes.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "../core/keys/corank.h"
#include "helpers.h"

/* Checks that i is the co-rank of k per the definition (ties take a first). */
static void check_corank_i64(int64_t k, const int64_t *a, int64_t m, const int64_t *b,
                             int64_t n, int64_t mask, int64_t i)
{
    int64_t j = k - i;
    cr_assert(i >= 0 && i <= m && j >= 0 && j <= n, "k=%lld: i=%lld out of bounds",
              (long long)k, (long long)i);
    if (i > 0 && j < n)
        cr_assert((a[i - 1] ^ mask) <= (b[j] ^ mask), "k=%lld i=%lld: a[i-1] after b[j]",
                  (long long)k, (long long)i);
    if (j > 0 && i < m)
        cr_assert((b[j - 1] ^ mask) < (a[i] ^ mask), "k=%lld i=%lld: b[j-1] not before a[i]",
                  (long long)k, (long long)i);
}

/* Fills a[0..m) and b[0..n) with keys from [-spread, spread], each sorted in order
 * (1 ascending, -1 descending). */
static void sorted_pair(rng *r, int64_t *a, int64_t m, int64_t *b, int64_t n, int64_t spread,
                        int order)
{
    for (int64_t t = 0; t < m; t++)
        a[t] = rng_range(r, -spread, spread);
    for (int64_t t = 0; t < n; t++)
        b[t] = rng_range(r, -spread, spread);
    ref_sort_i64(a, m, order);
    ref_sort_i64(b, n, order);
}

Test(corank, every_k_of_small_arrays)
{
    rng r;
    rng_seed(&r, 1);
    for (int round = 0; round < 4000; round++) {
        int64_t m = rng_range(&r, 0, 9), n = rng_range(&r, 0, 9);
        int64_t a[9], b[9], c[18], ref[18];
        int64_t spread = rng_range(&r, 1, 6); /* few values: many ties */
        int order = rng_range(&r, 0, 1) ? 1 : -1;
        int64_t mask = order > 0 ? 0 : -1;
        sorted_pair(&r, a, m, b, n, spread, order);
        ref_merge_i64(a, m, b, n, ref, order);
        for (int64_t k = 0; k <= m + n; k++) {
            int64_t i = gm_corank_i64(k, a, m, b, n, mask);
            check_corank_i64(k, a, m, b, n, mask, i);
            /* Merging from (i, k - i) continues the reference merge exactly. */
            gm_merge_seq_i64(a, m, b, n, i, k - i, c, m + n - k, mask);
            for (int64_t t = 0; t < m + n - k; t++)
                cr_assert_eq(c[t], ref[k + t], "round %d k=%lld t=%lld", round, (long long)k,
                             (long long)t);
        }
    }
}

Test(corank, empty_sides)
{
    int32_t a[4] = { 1, 2, 3, 4 };
    for (int64_t k = 0; k <= 4; k++) {
        cr_assert_eq(gm_corank_i32(k, a, 4, NULL, 0, 0), k, "b empty");
        cr_assert_eq(gm_corank_i32(k, NULL, 0, a, 4, 0), 0, "a empty");
    }
    cr_assert_eq(gm_corank_i32(0, NULL, 0, NULL, 0, 0), 0);
    int32_t c[4] = { -1, -1, -1, -1 };
    gm_merge_seq_i32(NULL, 0, a, 4, 0, 0, c, 4, 0);
    cr_assert_arr_eq(c, a, sizeof a);
}

Test(corank, all_keys_equal_take_a_first)
{
    int32_t a[5] = { 7, 7, 7, 7, 7 }, b[3] = { 7, 7, 7 };
    for (int64_t k = 0; k <= 8; k++) {
        int64_t want = k < 5 ? k : 5;
        cr_assert_eq(gm_corank_i32(k, a, 5, b, 3, 0), want, "k=%lld", (long long)k);
        cr_assert_eq(gm_corank_i32(k, a, 5, b, 3, -1), want, "descending, k=%lld",
                     (long long)k);
    }
}

Test(corank, disjoint_ranges)
{
    int64_t lo[4] = { 1, 2, 3, 4 }, hi[6] = { 10, 11, 12, 13, 14, 15 };
    for (int64_t k = 0; k <= 10; k++) {
        /* a entirely below b: a is used up first */
        cr_assert_eq(gm_corank_i64(k, lo, 4, hi, 6, 0), k < 4 ? k : 4);
        /* a entirely above b: b is used up first */
        cr_assert_eq(gm_corank_i64(k, hi, 6, lo, 4, 0), k > 4 ? k - 4 : 0);
    }
}

Test(corank, int64_extremes)
{
    int64_t a[3] = { INT64_MIN, 0, INT64_MAX }, b[3] = { INT64_MIN, INT64_MIN + 1, INT64_MAX };
    int64_t want[6] = { INT64_MIN, INT64_MIN, INT64_MIN + 1, 0, INT64_MAX, INT64_MAX };
    int64_t c[6];
    for (int64_t k = 0; k <= 6; k++)
        check_corank_i64(k, a, 3, b, 3, 0, gm_corank_i64(k, a, 3, b, 3, 0));
    gm_merge_seq_i64(a, 3, b, 3, 0, 0, c, 6, 0);
    cr_assert_arr_eq(c, want, sizeof want);
    /* descending: ~x reverses the order without overflow at the extremes */
    int64_t da[3] = { INT64_MAX, 0, INT64_MIN }, db[2] = { INT64_MAX, INT64_MIN };
    int64_t dwant[5] = { INT64_MAX, INT64_MAX, 0, INT64_MIN, INT64_MIN };
    int64_t dc[5];
    gm_merge_seq_i64(da, 3, db, 2, 0, 0, dc, 5, -1);
    cr_assert_arr_eq(dc, dwant, sizeof dwant);
}

Test(corank, int32_matches_int64)
{
    rng r;
    rng_seed(&r, 2);
    int32_t a32[200], b32[300];
    int64_t a64[200], b64[300];
    for (int t = 0; t < 200; t++)
        a64[t] = rng_range(&r, INT32_MIN, INT32_MAX);
    for (int t = 0; t < 300; t++)
        b64[t] = rng_range(&r, INT32_MIN, INT32_MAX);
    ref_sort_i64(a64, 200, 1);
    ref_sort_i64(b64, 300, 1);
    for (int t = 0; t < 200; t++)
        a32[t] = (int32_t)a64[t];
    for (int t = 0; t < 300; t++)
        b32[t] = (int32_t)b64[t];
    for (int64_t k = 0; k <= 500; k++)
        cr_assert_eq(gm_corank_i32(k, a32, 200, b32, 300, 0),
                     gm_corank_i64(k, a64, 200, b64, 300, 0), "k=%lld", (long long)k);
}

/* The 32-bit-position variants (for GPU tiles) are the same function. */
Test(corank, tile_variants_match)
{
    rng r;
    rng_seed(&r, 3);
    for (int round = 0; round < 200; round++) {
        int32_t m = (int32_t)rng_range(&r, 0, 300), n = (int32_t)rng_range(&r, 0, 300);
        int64_t a64[300], b64[300], c64[600], d64[600];
        int32_t a32[300], b32[300], c32[600], d32[600];
        int order = round % 2 ? 1 : -1;
        sorted_pair(&r, a64, m, b64, n, 50, order);
        for (int t = 0; t < m; t++)
            a32[t] = (int32_t)a64[t];
        for (int t = 0; t < n; t++)
            b32[t] = (int32_t)b64[t];
        for (int32_t k = 0; k <= m + n; k += 7) {
            int32_t i = gm_corank_i32_t(k, a32, m, b32, n, order > 0 ? 0 : -1);
            cr_assert_eq(i, gm_corank_i32(k, a32, m, b32, n, order > 0 ? 0 : -1));
            cr_assert_eq(gm_corank_i64_t(k, a64, m, b64, n, order > 0 ? 0 : -1), i);
            gm_merge_seq_i32_t(a32, m, b32, n, i, k - i, c32, m + n - k, order > 0 ? 0 : -1);
            gm_merge_seq_i32(a32, m, b32, n, i, k - i, d32, m + n - k, order > 0 ? 0 : -1);
            cr_assert_arr_eq(c32, d32, (size_t)(m + n - k) * sizeof *c32);
            gm_merge_seq_i64_t(a64, m, b64, n, i, k - i, c64, m + n - k, order > 0 ? 0 : -1);
            gm_merge_seq_i64(a64, m, b64, n, i, k - i, d64, m + n - k, order > 0 ? 0 : -1);
            cr_assert_arr_eq(c64, d64, (size_t)(m + n - k) * sizeof *c64);
        }
    }
}

/* The co-rank search with a group of lanes probing side by side, as the GPU's
 * partition kernel runs it (the ballot is the loop over lanes here): the same
 * answer as the one-lane search for every k and group size, in about
 * log base lanes + 1 rounds. */
static int64_t corank_lanes(int64_t k, const int64_t *a, int64_t m, const int64_t *b,
                            int64_t n, int64_t mask, int lanes, int *rounds)
{
    int64_t lo, hi;
    gm_corank_bounds_i64(k, m, n, &lo, &hi);
    *rounds = 0;
    while (lo < hi) {
        int f = 0; /* probes not past: a prefix, as past is monotone in the probe */
        int seen_past = 0;
        for (int l = 0; l < lanes; l++) {
            int64_t i = gm_corank_probe_i64(lo, hi, lanes, l);
            int past = i > hi || gm_corank_past_i64(i, k, a, b, mask);
            cr_assert(!(seen_past && !past), "probes not monotone: lanes=%d l=%d", lanes, l);
            seen_past |= past;
            f += !past;
        }
        int64_t span = hi - lo;
        gm_corank_narrow_i64(&lo, &hi, lanes, f);
        cr_assert(lo <= hi && hi - lo < span, "interval did not shrink");
        ++*rounds;
    }
    return lo;
}

Test(corank, lanes_probing_side_by_side)
{
    rng r;
    rng_seed(&r, 4);
    const int lanes_list[] = { 1, 2, 3, 4, 8, 31, 32 };
    for (int round = 0; round < 60; round++) {
        int64_t m = rng_range(&r, 0, 700), n = rng_range(&r, 0, 700);
        int64_t a[700], b[700];
        int order = round % 2 ? 1 : -1;
        int64_t spread = round % 3 == 0 ? 3 : 1000000;
        sorted_pair(&r, a, m, b, n, spread, order);
        int64_t mask = order > 0 ? 0 : -1;
        for (int64_t k = 0; k <= m + n; k++) {
            int64_t want = gm_corank_i64(k, a, m, b, n, mask);
            for (size_t x = 0; x < sizeof lanes_list / sizeof *lanes_list; x++) {
                int lanes = lanes_list[x], rounds;
                cr_assert_eq(corank_lanes(k, a, m, b, n, mask, lanes, &rounds), want,
                             "k=%lld lanes=%d", (long long)k, lanes);
                /* each round keeps one of lanes + 1 steps of the interval */
                int64_t span = (k < m ? k : m) - (k > n ? k - n : 0), bound = 0;
                for (int64_t s = span; s > 0; bound++) {
                    int64_t step = (s + lanes) / (lanes + 1);
                    s = step - 1 > s - lanes * step ? step - 1 : s - lanes * step;
                }
                cr_assert(rounds <= bound, "k=%lld lanes=%d: %d rounds > %lld", (long long)k,
                          lanes, rounds, (long long)bound);
            }
        }
    }
}
