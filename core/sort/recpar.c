/*
 * recpar.c - the records sort's parallel drivers (recsort_impl.h). Both start
 * with passes over slices of the array on all threads: the OR of the prefixes'
 * differences (the highest byte that varies), and, where the order allows, the
 * combining of each prefix's varying bits with its line's first bytes. Then the
 * array is distributed by that byte into 256 buckets, and the buckets are sorted
 * as tasks of the pool, the largest first (one too large to be a task among the
 * rest is distributed again, in parallel).
 *   stable    every slice counts its own histogram and scatters into the
 *             scratch array at its own offsets (an LSD radix pass's parallel
 *             scatter), so equal records keep their order.
 *   in place  the buckets are formed by swapping records along cycles (the
 *             American flag sort of McIlroy, Bostic and McIlroy, "Engineering
 *             Radix Sort", 1993), without a scratch array of n, on one thread
 *             while the others sort each bucket as soon as it is complete, with
 *             a scratch buffer of the bucket's size taken from one per thread.
 *             Unstable, for orders in which equal records are equal lines.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "sort/recsort_impl.h"
#include "base/util.h"

/* In place: a bucket of more records is distributed again (fewer where the
 * budget leaves less room for the threads' scratch, but not below MIN_TASK). */
static size_t task_max = 1 << 20;
enum { MIN_TASK = 1 << 10 };

void gm_recsort_test_task_max(size_t n)
{
    task_max = n ? n : 1 << 20;
}


/* One level of a parallel distribution: set up by par_msd and flag_sort, filled by
 * level_buckets and the slice tasks it runs. */
struct par {
    const gm_sortctx *c;       /* the sort's context; par_msd, flag_sort */
    gm_sortlevel lv;           /* comparison level; par_msd, flag_sort, LAST once combine did */
    gm_rec *src, *dst;         /* records and scratch (dst NULL in place); par_msd, flag_sort */
    size_t n;                  /* records in src; par_msd, flag_sort */
    int slices;                /* slices of the records, one task each; par_msd, flag_sort */
    int shift;                 /* bit offset of the highest varying byte; level_buckets */
    uint64_t diff[GM_RECSORT_SLICES]; /* per slice, OR of prefix XORs; par_diff, par_combine */
    int inexact[GM_RECSORT_SLICES]; /* per slice, some prefix is inexact; par_diff */
    int lo_bit, bits;          /* combine: the prefixes' varying bits */
    uint64_t firsts[GM_RECSORT_SLICES]; /* combine: each slice's first new key */
    int hist_ready;            /* combine made the histograms of the top byte */
    size_t (*hist)[256];       /* per slice */
    size_t bucket_at[257];     /* each bucket's start, then n; level_buckets */
    int order[256];            /* buckets, largest first */
    int nbig;                  /* the first nbig of order are sorted in parallel alone */
    int to_dst;                /* the result goes to dst, not src; par_msd */
};

static void slice_range(const struct par *p, int s, size_t *lo, size_t *hi)
{
    gm_slice(p->n, s, p->slices, lo, hi);
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
    uint64_t mask = p->bits ? (~UINT64_C(0) >> (64 - p->bits)) : 0, first = 0, d = 0;
    size_t *h = p->hist[s];
    memset(h, 0, 256 * sizeof *h);
    for (size_t i = lo; i < hi; i++) {
        gm_rec *r = &p->src[i];
        uint64_t key = p->bits ? ((r->prefix >> p->lo_bit) & mask) << (64 - p->bits) : 0;
        key |= gm_recsort_head8(p->c, r) >> p->bits;
        r->prefix = key;
        if (i == lo)
            first = key;
        d |= key ^ first;
        h[key >> 56]++;
    }
    p->firsts[s] = first;
    p->diff[s] = hi > lo ? d : 0;
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
    gm_recsort_msd(p->c, p->lv, p->dst + lo, p->src + lo, n, !p->to_dst);
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
    if (p->lv != GM_LEVEL_FULL || inexact || !p->c->last_resort_only || p->c->no_last_resort)
        return 0;
    p->lo_bit = *diff ? __builtin_ctzll(*diff) : 0;
    p->bits = *diff ? 64 - __builtin_clzll(*diff) - p->lo_bit : 0;
    if (p->bits > 56)
        return 0; /* no room for a byte of the line */
    gm_parallel_for(nthreads, p->slices, par_combine, p);
    *diff = 0;
    for (int s = 0; s < p->slices; s++) {
        size_t lo, hi;
        slice_range(p, s, &lo, &hi);
        if (hi > lo)
            *diff |= p->diff[s] | (p->firsts[s] ^ p->src[0].prefix);
    }
    p->lv = GM_LEVEL_LAST;
    /* the histogram of the top byte is made; it is the one wanted when it varies */
    p->hist_ready = *diff >> 56 != 0;
    return 1;
}

/* One level's distribution of p's records, on nthreads threads: the highest
 * byte in which their prefixes differ (p->shift), the histogram of that byte and
 * each bucket's start (p->bucket_at); with slice_starts, each slice's histogram
 * becomes where its records of each bucket go. Returns 0 when every prefix is
 * the same (nothing set then). */
static int level_buckets(struct par *p, int nthreads, int slice_starts)
{
    gm_parallel_for(nthreads, p->slices, par_diff, p);
    uint64_t diff = 0;
    for (int s = 0; s < p->slices; s++)
        diff |= p->diff[s];
    combine(p, &diff, nthreads);
    if (diff == 0)
        return 0;
    p->shift = (63 - __builtin_clzll(diff)) / 8 * 8;
    if (!p->hist_ready)
        gm_parallel_for(nthreads, p->slices, par_hist, p);
    size_t sum = 0;
    for (int b = 0; b < 256; b++) {
        p->bucket_at[b] = sum;
        for (int s = 0; s < p->slices; s++) {
            size_t k = p->hist[s][b];
            if (slice_starts)
                p->hist[s][b] = sum;
            sum += k;
        }
    }
    p->bucket_at[256] = sum;
    return 1;
}

/* gm_recsort_par_stable's recursion: the result in dst when to_dst. */
static void par_msd(const gm_sortctx *c, gm_sortlevel lv, gm_rec *src, gm_rec *dst, size_t n,
                    int to_dst, int nthreads)
{
    struct par *p = malloc(sizeof *p);
    size_t (*hist)[256] = NULL;
    int slices = nthreads < GM_RECSORT_SLICES ? nthreads : GM_RECSORT_SLICES;
    if (p)
        hist = malloc((size_t)slices * sizeof *hist);
    if (nthreads < 2 || n < GM_RECSORT_PAR_MIN || !p || !hist) {
        free(p);
        free(hist);
        gm_recsort_msd(c, lv, src, dst, n, to_dst);
        return;
    }
    *p = (struct par){ .c = c, .lv = lv, .src = src, .dst = dst, .n = n, .slices = slices,
                       .hist = hist, .to_dst = to_dst };
    if (!level_buckets(p, nthreads, 1)) {
        gm_recsort_ties(c, p->lv, src, dst, n, to_dst);
        free(hist);
        free(p);
        return;
    }
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
        if (k > big && k >= GM_RECSORT_PAR_MIN)
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

void gm_recsort_par_stable(const gm_sortctx *c, gm_rec *a, gm_rec *scratch, size_t n,
                           int nthreads)
{
    par_msd(c, GM_LEVEL_FULL, a, scratch, n, 0, nthreads);
}

/* ------------------------------------------------------------------ in place */

/* Scratch buffers, one per thread: a task takes a free one and gives it back. */
struct scratch_set {
    gm_rec *buf[GM_RECSORT_SLICES]; /* the buffers, grown on demand by scratch_take */
    size_t cap[GM_RECSORT_SLICES];  /* records each buffer holds; scratch_take */
    int busy[GM_RECSORT_SLICES];    /* taken by a task (atomic); scratch_take, scratch_give */
    int n;                     /* buffers in use, one per thread; gm_recsort_par_inplace */
    int failed;                /* a buffer could not be had */
    size_t task;               /* a bucket of more records is distributed again */
    size_t room;               /* bytes of scratch the budget allows in all */
};

static int scratch_take(struct scratch_set *s, size_t need)
{
    for (;;) {
        for (int i = 0; i < s->n; i++) {
            if (__atomic_exchange_n(&s->busy[i], 1, __ATOMIC_ACQUIRE))
                continue;
            if (s->cap[i] < need) {
                free(s->buf[i]);
                s->buf[i] = malloc(need * sizeof(gm_rec));
                s->cap[i] = s->buf[i] ? need : 0;
            }
            return i;
        }
    }
}

static void scratch_give(struct scratch_set *s, int i)
{
    __atomic_store_n(&s->busy[i], 0, __ATOMIC_RELEASE);
}

/* The in-place pipeline of one level, shared by flag_pipeline's tasks; built by flag_sort. */
struct flag {
    struct par *p;             /* the level's buckets (bucket_at, shift); flag_sort */
    gm_rec *a;                 /* the records, permuted in place; flag_sort */
    struct scratch_set *ss;    /* the threads' scratch buffers; gm_recsort_par_inplace */
    int ready;                 /* buckets [0, ready) are in place (atomic) */
    int next;                  /* the next bucket to sort (atomic) */
};

/* Sorts a[0, n) with a thread's scratch buffer. */
static void flag_bucket_sort(const gm_sortctx *c, gm_sortlevel lv, gm_rec *a, size_t n,
                             struct scratch_set *ss)
{
    int i = scratch_take(ss, n);
    if (ss->buf[i])
        gm_recsort_msd(c, lv, a, ss->buf[i], n, 0);
    else
        __atomic_store_n(&ss->failed, 1, __ATOMIC_RELAXED);
    scratch_give(ss, i);
}

/* Moves every record of a into its bucket (bucket_at: the buckets' starts). The
 * records of bucket b's range not yet placed are swept in turn: each goes to the
 * head of its own bucket, and the record found there takes its place, to be
 * looked at by the next sweep (ska_sort's swap loop). A cycle's every step waits
 * for the record the step before displaced; a sweep's steps do not wait on each
 * other. Bucket b is in place once b's turn is over (later sweeps only write
 * into later buckets): *ready says how many are. */
static void flag_permute(gm_rec *a, const size_t *bucket_at, int shift, int *ready)
{
    size_t head[256];
    memcpy(head, bucket_at, sizeof head);
    for (int b = 0; b < 256; __atomic_store_n(ready, ++b, __ATOMIC_RELEASE)) {
        size_t end = bucket_at[b + 1];
        while (head[b] < end) {
            /* [head[b], i): records brought in by this sweep, not yet looked at */
            for (size_t i = head[b]; i < end; i++) {
                gm_rec x = a[i];
                size_t to = head[(x.prefix >> shift) & 255]++;
                a[i] = a[to];
                a[to] = x;
            }
        }
    }
}

/* Task 0 distributes the records; every task (task 0 once it has) sorts the
 * buckets in turn as they are in place, but those too large to be one task.
 * Tasks are handed out in increasing order, so that task 0 is always running
 * when another waits for it. */
static void flag_pipeline(void *ctx, int t)
{
    struct flag *f = ctx;
    struct par *p = f->p;
    if (t == 0)
        flag_permute(f->a, p->bucket_at, p->shift, &f->ready);
    for (;;) {
        int b = __atomic_fetch_add(&f->next, 1, __ATOMIC_RELAXED);
        if (b >= 256)
            return;
        while (__atomic_load_n(&f->ready, __ATOMIC_ACQUIRE) <= b)
            sched_yield();
        size_t lo = p->bucket_at[b], n = p->bucket_at[b + 1] - lo;
        if (n > 0 && n <= f->ss->task)
            flag_bucket_sort(p->c, p->lv, f->a + lo, n, f->ss);
    }
}

static int flag_sort(const gm_sortctx *c, gm_sortlevel lv, gm_rec *a, size_t n, int nthreads,
                     struct scratch_set *ss, gm_status *st)
{
    if (n <= ss->task) {
        flag_bucket_sort(c, lv, a, n, ss);
        return ss->failed ? gm_fail(st, GM_ENOMEM, "out of memory sorting") : GM_OK;
    }
    struct par *p = malloc(sizeof *p);
    int slices = nthreads < GM_RECSORT_SLICES ? nthreads : GM_RECSORT_SLICES;
    size_t (*hist)[256] = p ? malloc((size_t)slices * sizeof *hist) : NULL;
    if (!hist) {
        free(p);
        return gm_fail(st, GM_ENOMEM, "out of memory sorting");
    }
    *p = (struct par){ .c = c, .lv = lv, .src = a, .n = n, .slices = slices, .hist = hist };
    int rc = GM_OK;
    if (!level_buckets(p, nthreads, 0)) { /* one group of equal prefixes: sorted with a
                                              scratch of its size where the budget has
                                              room for it, else in place */
        gm_status ignored;
        gm_rec *scratch = n <= ss->room / sizeof *scratch
                              ? gm_buf_alloc(n * sizeof *scratch, "sorting", &ignored) : NULL;
        if (scratch)
            gm_recsort_ties(c, p->lv, a, scratch, n, 0);
        else
            gm_recsort_inplace(c, p->lv, a, n);
        gm_buf_free(scratch);
        free(hist);
        free(p);
        return rc;
    }
    struct flag f = { p, a, ss, 0, 0 };
    gm_parallel_for(nthreads, nthreads, flag_pipeline, &f);
    /* the buckets too large to be one task, each distributed again */
    for (int b = 0; b < 256 && !rc; b++) {
        size_t lo = p->bucket_at[b], k = p->bucket_at[b + 1] - lo;
        if (k > ss->task)
            rc = flag_sort(c, p->lv, a + lo, k, nthreads, ss, st);
    }
    if (!rc && ss->failed)
        rc = gm_fail(st, GM_ENOMEM, "out of memory sorting");
    free(hist);
    free(p);
    return rc;
}

int gm_recsort_par_inplace(const gm_sortctx *c, gm_rec *a, size_t n, int nthreads,
                           size_t room, gm_status *st)
{
    struct scratch_set ss;
    memset(&ss, 0, sizeof ss);
    ss.n = nthreads < GM_RECSORT_SLICES ? nthreads : GM_RECSORT_SLICES;
    if (ss.n < 1)
        ss.n = 1;
    /* each thread's scratch holds a task's records, within its share of room */
    ss.room = room;
    ss.task = room / sizeof(gm_rec) / (size_t)ss.n;
    ss.task = ss.task < MIN_TASK ? MIN_TASK : ss.task;
    ss.task = ss.task > task_max ? task_max : ss.task;
    int rc = flag_sort(c, GM_LEVEL_FULL, a, n, nthreads, &ss, st);
    for (int i = 0; i < ss.n; i++)
        free(ss.buf[i]);
    return rc;
}

/* ------------------------------------------------------------------ entry */

int gm_recsort(const gm_keyspec *ks, gm_rec *a, size_t n, int nthreads, size_t room,
               gm_status *st)
{
    gm_sortctx c = { ks, ks->eol, ks->nkeys == 1, ks->stable || ks->unique };
    if (n < 2)
        return GM_OK;
    /* Equal records are equal lines unless -s or -u: no need to be stable. In
     * place the distribution of each level is one thread's, beside the others
     * sorting the buckets it completes; with a scratch array every level is
     * scattered on all threads, which pays once there are four of them. */
    if (!c.no_last_resort && (nthreads < 4 || n > room / sizeof *a))
        return gm_recsort_par_inplace(&c, a, n, nthreads, room, st);
    gm_rec *scratch = gm_buf_alloc(n * sizeof *scratch, "sorting", st);
    if (!scratch)
        return GM_ENOMEM;
    gm_recsort_par_stable(&c, a, scratch, n, nthreads);
    gm_buf_free(scratch);
    return GM_OK;
}
