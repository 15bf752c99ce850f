/*
 * test_cpu.c - the CPU engine (core/sort/cpumerge.c, core/sort/cpusort.c) against the plain
 * references in helpers.c: two-way merges, k-way merges with k up to 33, and sorts, on random
 * inputs of 0 to 10^6 keys with duplicates, negatives and int64 extremes, in both
 * widths and both directions, on 1 to 4 threads.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/sort/cpu.h"
#include "helpers.h"

/* Kinds of random values. */
enum dist { DIST_WIDE, DIST_FEW, DIST_EXTREMES, DIST_NEGATIVE };

static int64_t draw(rng *r, enum dist d, gm_width w)
{
    int64_t lo = w == GM_I32 ? INT32_MIN : INT64_MIN, hi = w == GM_I32 ? INT32_MAX : INT64_MAX;
    switch (d) {
    case DIST_FEW:
        return rng_range(r, -3, 3);
    case DIST_EXTREMES: {
        int64_t pick[5] = { lo, lo + 1, 0, hi - 1, hi };
        return pick[rng_range(r, 0, 4)];
    }
    case DIST_NEGATIVE:
        return rng_range(r, lo, -1);
    default:
        return rng_range(r, lo, hi);
    }
}

/* Copies n int64 values into a new array of width w. */
static void *narrow(const int64_t *v, int64_t n, gm_width w)
{
    void *out = malloc((size_t)(n + 1) * (size_t)w);
    for (int64_t i = 0; i < n; i++) {
        if (w == GM_I32)
            ((int32_t *)out)[i] = (int32_t)v[i];
        else
            ((int64_t *)out)[i] = v[i];
    }
    return out;
}

static int64_t get(const void *p, int64_t i, gm_width w)
{
    return w == GM_I32 ? ((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}

static void assert_keys_eq(const void *got, const int64_t *want, int64_t n, gm_width w,
                           const char *what)
{
    for (int64_t i = 0; i < n; i++)
        if (get(got, i, w) != want[i])
            cr_assert_fail("%s: key %lld is %lld, want %lld", what, (long long)i,
                           (long long)get(got, i, w), (long long)want[i]);
}

static void check_merge2(rng *r, int64_t m, int64_t n, enum dist d, gm_width w, int order,
                         int threads)
{
    int64_t *a = malloc((size_t)(m + 1) * 8), *b = malloc((size_t)(n + 1) * 8);
    int64_t *want = malloc((size_t)(m + n + 1) * 8);
    for (int64_t i = 0; i < m; i++)
        a[i] = draw(r, d, w);
    for (int64_t i = 0; i < n; i++)
        b[i] = draw(r, d, w);
    ref_sort_i64(a, m, order);
    ref_sort_i64(b, n, order);
    ref_merge_i64(a, m, b, n, want, order);
    void *na = narrow(a, m, w), *nb = narrow(b, n, w);
    void *c = malloc((size_t)(m + n + 1) * (size_t)w);
    gm_cpu_merge2(w, na, m, nb, n, c, order < 0, threads);
    char what[128];
    snprintf(what, sizeof what, "merge2 m=%lld n=%lld dist=%d int%d order=%d threads=%d",
             (long long)m, (long long)n, d, w * 8, order, threads);
    assert_keys_eq(c, want, m + n, w, what);
    free(a), free(b), free(want), free(na), free(nb), free(c);
}

Test(cpu, merge2_edges)
{
    rng r;
    rng_seed(&r, 10);
    int64_t sizes[] = { 0, 1, 2, 3, 17, 1000 };
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            for (int d = 0; d < 4; d++)
                for (int w = 4; w <= 8; w += 4)
                    check_merge2(&r, sizes[i], sizes[j], (enum dist)d, (gm_width)w,
                                 (i + j + d) % 2 ? 1 : -1, 1 + (i + j) % 3);
}

Test(cpu, merge2_random_large, .timeout = 120)
{
    rng r;
    rng_seed(&r, 11);
    for (int round = 0; round < 12; round++) {
        int64_t m = rng_range(&r, 0, 1000000), n = rng_range(&r, 0, 1000000 - m);
        check_merge2(&r, m, n, (enum dist)(round % 4), round % 2 ? GM_I32 : GM_I64,
                     round % 3 ? 1 : -1, 1 + round % 4);
    }
    /* one side much longer than the other */
    check_merge2(&r, 1000000, 3, DIST_WIDE, GM_I32, 1, 4);
    check_merge2(&r, 0, 1000000, DIST_FEW, GM_I64, -1, 3);
}

static void check_merge_runs(rng *r, int k, int64_t max_run, enum dist d, gm_width w,
                             int order, int threads)
{
    int64_t *offsets = malloc((size_t)(k + 1) * sizeof *offsets);
    int64_t total = 0;
    for (int i = 0; i < k; i++) {
        offsets[i] = total;
        total += rng_range(r, 0, max_run);
    }
    offsets[k] = total;
    int64_t *all = malloc((size_t)(total + 1) * 8);
    for (int64_t i = 0; i < total; i++)
        all[i] = draw(r, d, w);
    for (int i = 0; i < k; i++)
        ref_sort_i64(all + offsets[i], offsets[i + 1] - offsets[i], order);
    gm_keys keys = { narrow(all, total, w), total, w };
    void *scratch = malloc((size_t)(total + 1) * (size_t)w);
    gm_cpu_merge_runs(&keys, &scratch, offsets, k, order < 0, threads);
    ref_sort_i64(all, total, order);
    char what[128];
    snprintf(what, sizeof what, "merge of %d runs (%lld keys) dist=%d int%d order=%d", k,
             (long long)total, d, w * 8, order);
    assert_keys_eq(keys.data, all, total, w, what);
    free(keys.data), free(scratch), free(all), free(offsets);
}

Test(cpu, merge_k_runs_up_to_33, .timeout = 120)
{
    rng r;
    rng_seed(&r, 12);
    for (int k = 1; k <= 33; k++)
        check_merge_runs(&r, k, k % 5 == 0 ? 30000 : 300, (enum dist)(k % 4),
                         k % 2 ? GM_I32 : GM_I64, k % 3 ? 1 : -1, 1 + k % 4);
}

static void check_sort(int64_t *v, int64_t n, gm_width w, int order, int threads,
                       const char *label)
{
    gm_keys keys = { narrow(v, n, w), n, w };
    void *scratch = malloc((size_t)(n + 1) * (size_t)w);
    gm_cpu_sort(&keys, &scratch, order < 0, threads);
    ref_sort_i64(v, n, order);
    char what[128];
    snprintf(what, sizeof what, "sort %s n=%lld int%d order=%d threads=%d", label,
             (long long)n, w * 8, order, threads);
    assert_keys_eq(keys.data, v, n, w, what);
    free(keys.data), free(scratch);
}

Test(cpu, sort_random, .timeout = 120)
{
    rng r;
    rng_seed(&r, 13);
    int64_t sizes[] = { 0, 1, 2, 5, 32, 33, 255, 256, 257, 65536, 65537, 1000000 };
    for (int s = 0; s < (int)(sizeof sizes / sizeof *sizes); s++) {
        for (int d = 0; d < 4; d++) {
            gm_width w = (s + d) % 2 ? GM_I32 : GM_I64;
            int64_t *v = malloc((size_t)(sizes[s] + 1) * 8);
            for (int64_t i = 0; i < sizes[s]; i++)
                v[i] = draw(&r, (enum dist)d, w);
            check_sort(v, sizes[s], w, (s + d) % 3 ? 1 : -1, 1 + (s + d) % 4, "random");
            free(v);
        }
    }
}

/* Keys whose buckets (by their most significant differing byte) are uneven:
 * one bucket with most of the keys (sorted on all threads), keys in a narrow
 * range, low bytes that never vary, buckets of a few keys (sorted by insertion)
 * and of a few thousand, on 1 to 4 threads. */
Test(cpu, sort_skewed, .timeout = 120)
{
    rng r;
    rng_seed(&r, 14);
    enum { N = 400000 };
    int64_t *v = malloc((size_t)N * 8);
    for (int c = 0; c < 24; c++) {
        gm_width w = c % 2 ? GM_I64 : GM_I32;
        int64_t n = N, lo = w == GM_I32 ? INT32_MIN : INT64_MIN;
        int64_t hi = w == GM_I32 ? INT32_MAX : INT64_MAX;
        const char *label = "";
        for (int64_t i = 0; i < n; i++) {
            switch (c / 4) {
            case 0:
                label = "90% one value";
                v[i] = rng_range(&r, 0, 9) ? 7 : rng_range(&r, lo, hi);
                break;
            case 1:
                label = "-1000..1000";
                v[i] = rng_range(&r, -1000, 1000);
                break;
            case 2:
                label = "low 16 bits zero";
                v[i] = rng_range(&r, lo >> 16, hi >> 16) * 65536;
                break;
            case 3:
                label = "5000 keys";
                n = 5000;
                v[i] = rng_range(&r, lo, hi);
                break;
            case 4:
                label = "below 2^40 or 2^20";
                v[i] = rng_range(&r, 0, w == GM_I64 ? (1LL << 40) : (1 << 20));
                break;
            default:
                label = "two clusters";
                v[i] = (rng_range(&r, 0, 1) ? hi - 100000 : lo) + rng_range(&r, 0, 99999);
                break;
            }
        }
        check_sort(v, n, w, c % 3 == 2 ? -1 : 1, 1 + c % 4, label);
    }
    free(v);
}

Test(cpu, sort_special_orders)
{
    int64_t n = 100000;
    int64_t *v = malloc((size_t)n * 8);
    for (int w = 4; w <= 8; w += 4) {
        for (int64_t i = 0; i < n; i++)
            v[i] = 42;
        check_sort(v, n, (gm_width)w, 1, 2, "all equal");
        for (int64_t i = 0; i < n; i++)
            v[i] = i - n / 2;
        check_sort(v, n, (gm_width)w, 1, 2, "already sorted");
        for (int64_t i = 0; i < n; i++)
            v[i] = n / 2 - i;
        check_sort(v, n, (gm_width)w, 1, 3, "reverse sorted");
        for (int64_t i = 0; i < n; i++)
            v[i] = i - n / 2;
        check_sort(v, n, (gm_width)w, -1, 4, "sorted, wanted descending");
    }
    free(v);
}
