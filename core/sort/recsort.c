/*
 * recsort.c - the in-memory sort of records (recsort.h), its sequential core: an
 * MSD radix sort on the 64-bit prefixes, as DuckDB sorts its normalised keys,
 * that goes straight to the highest byte in which a bucket's prefixes differ (one
 * OR of differences per bucket) and scatters stably between the array and its
 * scratch; buckets of a few records are finished by insertion sort, groups of
 * equal prefixes by a stable merge sort with sort's comparison (coreutils
 * sort.c's compare). A group whose only remaining comparison is the last resort
 * (one key, exact prefixes) is radix sorted again on its lines' first eight
 * bytes. recpar.c runs the first distribution on all threads and hands the
 * buckets to the pool; gm_recsort chooses its stable or its in-place way.
 */
#define _GNU_SOURCE
#include "sort/recsort_impl.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

enum { SMALL = 24 }; /* insertion sort below this */

typedef gm_sortctx ctx_t;
#define FULL GM_LEVEL_FULL
#define LAST GM_LEVEL_LAST

/* gm_recsort_par_stable and gm_recsort_par_inplace are in recpar.c. */

int gm_rec_cmp(const gm_keyspec *ks, const gm_rec *a, const gm_rec *b)
{
    if (a->prefix != b->prefix)
        return a->prefix < b->prefix ? -1 : 1;
    size_t al = gm_rec_len(a, ks->eol), bl = gm_rec_len(b, ks->eol);
    int from = gm_rec_is_exact(a) && gm_rec_is_exact(b) ? 1 : 0;
    return gm_line_cmp_from(ks, from, gm_rec_line(a), al, gm_rec_line(b), bl);
}

/* sort's last resort: the whole lines as bytes, shorter first, reversed by -r. */
static int last_resort(const ctx_t *c, const gm_rec *a, const gm_rec *b)
{
    size_t al = gm_rec_len(a, c->eol), bl = gm_rec_len(b, c->eol);
    int d = memcmp(gm_rec_line(a), gm_rec_line(b), al < bl ? al : bl);
    if (d == 0)
        d = al < bl ? -1 : al > bl;
    return c->ks->reverse ? -d : d;
}

static int cmp(const ctx_t *c, gm_sortlevel lv, const gm_rec *a, const gm_rec *b)
{
    if (a->prefix != b->prefix)
        return a->prefix < b->prefix ? -1 : 1;
    return lv == FULL ? gm_rec_cmp(c->ks, a, b) : last_resort(c, a, b);
}

static void insertion(const ctx_t *c, gm_sortlevel lv, gm_rec *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        gm_rec x = a[i];
        size_t j = i;
        while (j > 0 && cmp(c, lv, &a[j - 1], &x) > 0) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

/* Stable merge sort of a[0, n) (b: scratch of n); the result in a. */
static void merge_sort(const ctx_t *c, gm_sortlevel lv, gm_rec *a, gm_rec *b, size_t n)
{
    const size_t run = 16;
    for (size_t i = 0; i < n; i += run)
        insertion(c, lv, a + i, n - i < run ? n - i : run);
    gm_rec *src = a, *dst = b;
    for (size_t w = run; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = cmp(c, lv, &src[j], &src[i]) < 0 ? src[j++] : src[i++];
            memcpy(dst + k, src + i, (mid - i) * sizeof *dst);
            k += mid - i;
            memcpy(dst + k, src + j, (hi - j) * sizeof *dst);
        }
        gm_rec *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
}

static void swap_rec(gm_rec *a, gm_rec *b)
{
    gm_rec t = *a;
    *a = *b;
    *b = t;
}

/* Sifts a[i] down the max-heap a[0, n). */
static void sift(const ctx_t *c, gm_sortlevel lv, gm_rec *a, size_t i, size_t n)
{
    for (size_t k; (k = 2 * i + 1) < n; i = k) {
        if (k + 1 < n && cmp(c, lv, &a[k], &a[k + 1]) < 0)
            k++;
        if (cmp(c, lv, &a[i], &a[k]) >= 0)
            return;
        swap_rec(&a[i], &a[k]);
    }
}

void gm_recsort_inplace(const ctx_t *c, gm_sortlevel lv, gm_rec *a, size_t n)
{
    /* introsort: three-way quicksort (a run of equal lines is one partition),
     * the smaller side first, heapsort past a depth of 2 log2 n */
    int depth = 2 * (64 - __builtin_clzll((unsigned long long)n | 1));
    while (n > SMALL) {
        if (depth-- == 0) {
            for (size_t i = n / 2; i-- > 0;)
                sift(c, lv, a, i, n);
            for (size_t m = n; m-- > 1;) {
                swap_rec(&a[0], &a[m]);
                sift(c, lv, a, 0, m);
            }
            return;
        }
        size_t mid = n / 2; /* the median of the first, middle and last */
        if (cmp(c, lv, &a[mid], &a[0]) < 0)
            swap_rec(&a[mid], &a[0]);
        if (cmp(c, lv, &a[n - 1], &a[mid]) < 0) {
            swap_rec(&a[n - 1], &a[mid]);
            if (cmp(c, lv, &a[mid], &a[0]) < 0)
                swap_rec(&a[mid], &a[0]);
        }
        gm_rec pivot = a[mid];
        size_t lt = 0, i = 0, gt = n; /* [0, lt) <, [lt, i) =, [gt, n) > */
        while (i < gt) {
            int d = cmp(c, lv, &a[i], &pivot);
            if (d < 0)
                swap_rec(&a[lt++], &a[i++]);
            else if (d > 0)
                swap_rec(&a[i], &a[--gt]);
            else
                i++;
        }
        if (lt < n - gt) {
            gm_recsort_inplace(c, lv, a, lt);
            a += gt;
            n -= gt;
        } else {
            gm_recsort_inplace(c, lv, a + gt, n - gt);
            n = lt;
        }
    }
    insertion(c, lv, a, n);
}

uint64_t gm_recsort_head8(const ctx_t *c, const gm_rec *r)
{
    return gm_kp_head8(gm_rec_line(r), gm_rec_len(r, c->eol), c->ks->reverse);
}

void gm_recsort_ties(const ctx_t *c, gm_sortlevel lv, gm_rec *src, gm_rec *dst, size_t n,
                      int to_dst)
{
    int exact = 1;
    for (size_t i = 0; i < n && exact; i++)
        exact = gm_rec_is_exact(&src[i]);
    if (lv == FULL && exact && c->last_resort_only) {
        if (c->no_last_resort) {
            /* equal keys keep their order */
        } else {
            for (size_t i = 0; i < n; i++)
                src[i].prefix = gm_recsort_head8(c, &src[i]);
            gm_recsort_msd(c, LAST, src, dst, n, to_dst);
            return;
        }
    } else {
        merge_sort(c, lv, src, dst, n);
    }
    if (to_dst)
        memcpy(dst, src, n * sizeof *dst);
}

void gm_recsort_msd(const ctx_t *c, gm_sortlevel lv, gm_rec *src, gm_rec *dst, size_t n,
                int to_dst)
{
    if (n < SMALL) {
        insertion(c, lv, src, n);
        if (to_dst)
            memcpy(dst, src, n * sizeof *dst);
        return;
    }
    uint64_t first = src[0].prefix, diff = 0;
    for (size_t i = 1; i < n; i++)
        diff |= src[i].prefix ^ first;
    if (diff == 0) {
        gm_recsort_ties(c, lv, src, dst, n, to_dst);
        return;
    }
    int shift = (63 - __builtin_clzll(diff)) / 8 * 8;
    size_t count[256] = { 0 };
    for (size_t i = 0; i < n; i++)
        count[(src[i].prefix >> shift) & 255]++;
    size_t at[256], sum = 0;
    for (int b = 0; b < 256; b++) {
        at[b] = sum;
        sum += count[b];
    }
    for (size_t i = 0; i < n; i++)
        dst[at[(src[i].prefix >> shift) & 255]++] = src[i];
    size_t lo = 0;
    for (int b = 0; b < 256; b++) {
        if (count[b])
            gm_recsort_msd(c, lv, dst + lo, src + lo, count[b], !to_dst);
        lo += count[b];
    }
}

/* ------------------------------------------------------------------ order */

/* The search for the first record out of order, cut into pieces; built by
 * gm_rec_first_disorder, read by disorder_piece. */
struct disorder_job {
    const gm_keyspec *ks;      /* the order to check against */
    const gm_rec *prev, *a;    /* the record before a (NULL if none), and the records */
    size_t n;                  /* records in a */
    int strict;                /* equal neighbours count as disorder too (-u) */
    int pieces;                /* pieces searched in parallel, at most GM_RECSORT_SLICES */
    size_t first[GM_RECSORT_SLICES]; /* per piece, its first disorder or n; disorder_piece */
};

static void disorder_piece(void *ctx, int s)
{
    struct disorder_job *j = ctx;
    size_t lo = j->n * (size_t)s / (size_t)j->pieces, hi = j->n * (size_t)(s + 1) / (size_t)j->pieces;
    j->first[s] = j->n;
    for (size_t i = lo; i < hi; i++) {
        const gm_rec *before = i > 0 ? &j->a[i - 1] : j->prev;
        if (!before)
            continue;
        int d = gm_rec_cmp(j->ks, before, &j->a[i]);
        if (d > 0 || (j->strict && d == 0)) {
            j->first[s] = i;
            return;
        }
    }
}

size_t gm_rec_first_disorder(const gm_keyspec *ks, const gm_rec *prev, const gm_rec *a,
                             size_t n, int strict, int nthreads)
{
    struct disorder_job j = { ks, prev, a, n, strict, 1, { 0 } };
    j.pieces = n < GM_RECSORT_PAR_MIN ? 1 : nthreads * 4 < GM_RECSORT_SLICES ? nthreads * 4 : GM_RECSORT_SLICES;
    gm_parallel_for(nthreads, j.pieces, disorder_piece, &j);
    for (int s = 0; s < j.pieces; s++)
        if (j.first[s] < n)
            return j.first[s];
    return n;
}
