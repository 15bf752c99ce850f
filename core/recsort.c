/*
 * recsort.c - the stable in-memory sort of records (recsort.h): an MSD radix sort
 * on the 64-bit prefixes, as DuckDB sorts its normalised keys, that goes straight
 * to the highest byte in which a bucket's prefixes differ (one OR of differences
 * per bucket) and scatters stably between the array and its scratch; buckets of a
 * few records are finished by insertion sort, groups of equal prefixes by a
 * stable merge sort with sort's comparison (coreutils sort.c's compare). A group
 * whose only remaining comparison is the last resort (one key, exact prefixes) is
 * radix sorted again on its lines' first eight bytes. The first scatter runs on
 * all threads (each thread a slice, its own histogram: stable), then the buckets
 * are sorted as tasks of the pool, the largest first.
 */
#define _GNU_SOURCE
#include "recsort.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

enum {
    SMALL = 24,               /* insertion sort below this */
    PAR_MIN = 1 << 16,        /* a parallel scatter for more records than this */
    MAX_SLICES = 64,
};

/* What the records of a call are compared by: sort's comparison after the
 * prefixes (FULL), or only the last resort of whole lines after prefixes that are
 * the lines' first eight bytes (LAST). */
enum level { FULL, LAST };

struct ctx {
    const gm_keyspec *ks;
    char eol;
    int last_resort_only; /* one key: exact, equal prefixes leave the last resort */
    int no_last_resort;   /* -s or -u */
};

int gm_rec_cmp(const gm_keyspec *ks, const gm_rec *a, const gm_rec *b)
{
    if (a->prefix != b->prefix)
        return a->prefix < b->prefix ? -1 : 1;
    size_t al = gm_rec_len(a, ks->eol), bl = gm_rec_len(b, ks->eol);
    int from = gm_rec_is_exact(a) && gm_rec_is_exact(b) ? 1 : 0;
    return gm_line_cmp_from(ks, from, gm_rec_line(a), al, gm_rec_line(b), bl);
}

/* sort's last resort: the whole lines as bytes, shorter first, reversed by -r. */
static int last_resort(const struct ctx *c, const gm_rec *a, const gm_rec *b)
{
    size_t al = gm_rec_len(a, c->eol), bl = gm_rec_len(b, c->eol);
    int d = memcmp(gm_rec_line(a), gm_rec_line(b), al < bl ? al : bl);
    if (d == 0)
        d = al < bl ? -1 : al > bl;
    return c->ks->reverse ? -d : d;
}

static int cmp(const struct ctx *c, enum level lv, const gm_rec *a, const gm_rec *b)
{
    if (a->prefix != b->prefix)
        return a->prefix < b->prefix ? -1 : 1;
    return lv == FULL ? gm_rec_cmp(c->ks, a, b) : last_resort(c, a, b);
}

static void insertion(const struct ctx *c, enum level lv, gm_rec *a, size_t n)
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
static void merge_sort(const struct ctx *c, enum level lv, gm_rec *a, gm_rec *b, size_t n)
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

/* A line's first eight bytes, big-endian, zero-padded: their order is the last
 * resort's on the first eight bytes (a shorter line pads with the lowest byte). */
static uint64_t head8(const struct ctx *c, const gm_rec *r)
{
    size_t len = gm_rec_len(r, c->eol);
    const unsigned char *p = gm_rec_line(r);
    uint64_t k = 0;
    for (size_t i = 0; i < 8; i++)
        k = k << 8 | (i < len ? p[i] : 0);
    return c->ks->reverse ? ~k : k;
}

static void msd(const struct ctx *c, enum level lv, gm_rec *src, gm_rec *dst, size_t n,
                int to_dst);

/* A group of equal prefixes, in src; the result in dst when to_dst. */
static void tie_group(const struct ctx *c, enum level lv, gm_rec *src, gm_rec *dst, size_t n,
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
                src[i].prefix = head8(c, &src[i]);
            msd(c, LAST, src, dst, n, to_dst);
            return;
        }
    } else {
        merge_sort(c, lv, src, dst, n);
    }
    if (to_dst)
        memcpy(dst, src, n * sizeof *dst);
}

static int top_byte(uint64_t diff)
{
    return (63 - __builtin_clzll(diff)) / 8;
}

/* Sorts src[0, n) (dst: scratch of n); the result in dst when to_dst, else in
 * src. */
static void msd(const struct ctx *c, enum level lv, gm_rec *src, gm_rec *dst, size_t n,
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
        tie_group(c, lv, src, dst, n, to_dst);
        return;
    }
    int shift = top_byte(diff) * 8;
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
            msd(c, lv, dst + lo, src + lo, count[b], !to_dst);
        lo += count[b];
    }
}

/* ------------------------------------------------------------------ parallel */

struct par {
    const struct ctx *c;
    enum level lv;
    gm_rec *src, *dst;
    size_t n;
    int slices;
    int shift;
    uint64_t diff[MAX_SLICES];
    int inexact[MAX_SLICES];
    int lo_bit, bits;          /* combine: the prefixes' varying bits */
    size_t (*hist)[256];       /* per slice */
    size_t bucket_at[257];
    int order[256];            /* buckets, largest first */
    int nbig;                  /* the first nbig of order are sorted in parallel alone */
    int to_dst;
};

static void slice_range(const struct par *p, int s, size_t *lo, size_t *hi)
{
    *lo = p->n * (size_t)s / (size_t)p->slices;
    *hi = p->n * (size_t)(s + 1) / (size_t)p->slices;
}

static void par_diff(void *ctx, int s)
{
    struct par *p = ctx;
    size_t lo, hi;
    slice_range(p, s, &lo, &hi);
    uint64_t first = p->src[0].prefix, d = 0, inexact = 0;
    for (size_t i = lo; i < hi; i++) {
        d |= p->src[i].prefix ^ first;
        inexact |= p->src[i].ref;
    }
    p->diff[s] = d;
    p->inexact[s] = (inexact & GM_REC_INEXACT) != 0;
}

/* The prefix's varying bits, then as many of the line's first bytes as fit. */
static void par_combine(void *ctx, int s)
{
    struct par *p = ctx;
    size_t lo, hi;
    slice_range(p, s, &lo, &hi);
    uint64_t mask = p->bits ? (~UINT64_C(0) >> (64 - p->bits)) : 0;
    for (size_t i = lo; i < hi; i++) {
        gm_rec *r = &p->src[i];
        uint64_t key = p->bits ? ((r->prefix >> p->lo_bit) & mask) << (64 - p->bits) : 0;
        r->prefix = key | head8(p->c, r) >> p->bits;
    }
}

static void par_hist(void *ctx, int s)
{
    struct par *p = ctx;
    size_t lo, hi;
    slice_range(p, s, &lo, &hi);
    size_t *h = p->hist[s];
    memset(h, 0, 256 * sizeof *h);
    for (size_t i = lo; i < hi; i++)
        h[(p->src[i].prefix >> p->shift) & 255]++;
}

static void par_scatter(void *ctx, int s)
{
    struct par *p = ctx;
    size_t lo, hi;
    slice_range(p, s, &lo, &hi);
    size_t *at = p->hist[s]; /* turned into this slice's positions */
    for (size_t i = lo; i < hi; i++)
        p->dst[at[(p->src[i].prefix >> p->shift) & 255]++] = p->src[i];
}

static void par_bucket(void *ctx, int t)
{
    struct par *p = ctx;
    int b = p->order[p->nbig + t];
    size_t lo = p->bucket_at[b], n = p->bucket_at[b + 1] - lo;
    msd(p->c, p->lv, p->dst + lo, p->src + lo, n, !p->to_dst);
}

static int by_size_desc(const void *x, const void *y, void *arg)
{
    const size_t *at = arg;
    int a = *(const int *)x, b = *(const int *)y;
    size_t na = at[a + 1] - at[a], nb = at[b + 1] - at[b];
    return na < nb ? 1 : na > nb ? -1 : a - b;
}

/* Where the records' order is their key's, then the last resort on whole lines,
 * and every prefix is exact: the prefixes become one key of their varying bits
 * followed by the lines' first bytes, so that the radix sort also orders most
 * lines of equal keys (without visiting their bytes again), and the comparison
 * after equal prefixes is the last resort alone. Returns whether it did. */
static int combine(struct par *p, uint64_t *diff, int nthreads)
{
    int inexact = 0;
    for (int s = 0; s < p->slices; s++)
        inexact |= p->inexact[s];
    if (p->lv != FULL || inexact || !p->c->last_resort_only || p->c->no_last_resort)
        return 0;
    p->lo_bit = *diff ? __builtin_ctzll(*diff) : 0;
    p->bits = *diff ? 64 - __builtin_clzll(*diff) - p->lo_bit : 0;
    if (p->bits > 56)
        return 0; /* no room for a byte of the line */
    gm_parallel_for(nthreads, p->slices, par_combine, p);
    gm_parallel_for(nthreads, p->slices, par_diff, p);
    *diff = 0;
    for (int s = 0; s < p->slices; s++)
        *diff |= p->diff[s];
    p->lv = LAST;
    return 1;
}

/* msd on nthreads threads: the first scatter by slices, then the buckets. */
static void par_msd(const struct ctx *c, enum level lv, gm_rec *src, gm_rec *dst, size_t n,
                    int to_dst, int nthreads)
{
    struct par *p = malloc(sizeof *p);
    size_t (*hist)[256] = NULL;
    int slices = nthreads < MAX_SLICES ? nthreads : MAX_SLICES;
    if (p)
        hist = malloc((size_t)slices * sizeof *hist);
    if (nthreads < 2 || n < PAR_MIN || !p || !hist) {
        free(p);
        free(hist);
        msd(c, lv, src, dst, n, to_dst);
        return;
    }
    *p = (struct par){ .c = c, .lv = lv, .src = src, .dst = dst, .n = n, .slices = slices,
                       .hist = hist, .to_dst = to_dst };
    gm_parallel_for(nthreads, slices, par_diff, p);
    uint64_t diff = 0;
    for (int s = 0; s < slices; s++)
        diff |= p->diff[s];
    combine(p, &diff, nthreads);
    if (diff == 0) {
        tie_group(c, p->lv, src, dst, n, to_dst);
        free(hist);
        free(p);
        return;
    }
    p->shift = top_byte(diff) * 8;
    gm_parallel_for(nthreads, slices, par_hist, p);
    size_t sum = 0;
    for (int b = 0; b < 256; b++) {
        p->bucket_at[b] = sum;
        for (int s = 0; s < slices; s++) {
            size_t k = hist[s][b];
            hist[s][b] = sum;
            sum += k;
        }
    }
    p->bucket_at[256] = sum;
    gm_parallel_for(nthreads, slices, par_scatter, p);
    for (int b = 0; b < 256; b++)
        p->order[b] = b;
    qsort_r(p->order, 256, sizeof p->order[0], by_size_desc, p->bucket_at);
    /* A bucket too large to be one task among the rest is sorted alone, in
     * parallel; the others are tasks. */
    size_t big = n / (size_t)(2 * nthreads);
    int nbig = 0, nonempty = 0;
    for (int t = 0; t < 256; t++) {
        int b = p->order[t];
        size_t k = p->bucket_at[b + 1] - p->bucket_at[b];
        if (k > big && k >= PAR_MIN)
            nbig = t + 1;
        if (k)
            nonempty = t + 1;
    }
    for (int t = 0; t < nbig; t++) {
        int b = p->order[t];
        size_t lo = p->bucket_at[b];
        par_msd(c, p->lv, dst + lo, src + lo, p->bucket_at[b + 1] - lo, !to_dst, nthreads);
    }
    p->nbig = nbig;
    gm_parallel_for(nthreads, nonempty - nbig, par_bucket, p);
    free(hist);
    free(p);
}

void gm_recsort(const gm_keyspec *ks, gm_rec *a, gm_rec *scratch, size_t n, int nthreads)
{
    struct ctx c = { ks, ks->eol, ks->nkeys == 1, ks->stable || ks->unique };
    par_msd(&c, FULL, a, scratch, n, 0, nthreads);
}

/* ------------------------------------------------------------------ order */

struct disorder_job {
    const gm_keyspec *ks;
    const gm_rec *prev, *a;
    size_t n;
    int strict;
    int pieces;
    size_t first[MAX_SLICES];
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
    j.pieces = n < PAR_MIN ? 1 : nthreads * 4 < MAX_SLICES ? nthreads * 4 : MAX_SLICES;
    gm_parallel_for(nthreads, j.pieces, disorder_piece, &j);
    for (int s = 0; s < j.pieces; s++)
        if (j.first[s] < n)
            return j.first[s];
    return n;
}
