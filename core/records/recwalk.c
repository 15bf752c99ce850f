/*
 * recwalk.c - the passes of the sort by ranges of keys (recwalk.h): the inputs
 * read window by window of whole lines and split into records on all threads
 * (linesplit.c's gm_lines_split, the chunk sort's own), and the buckets of their
 * prefixes: bounds from lines sampled at places spread over the inputs (as a
 * sample sort picks its splitters), then each bucket's bytes and lines counted
 * exactly in one pass.
 */
#define _GNU_SOURCE
#include "records/recwalk.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

enum {
    SAMPLES = 64,             /* places of the inputs sampled */
    SAMPLE_BYTES = 256 << 10, /* read at each */
};

/* ------------------------------------------------------------------ walk */

void gm_walk_start(struct gm_walk *w, struct rec_run *r, const gm_span *spans, int nspans,
                   uint64_t bytes, gm_pread_span *ps, int progress)
{
    w->r = r;
    gm_span_feed_start(&w->feed, r, spans, nspans, bytes, ps, progress);
    w->have = w->lines = 0;
    w->recs.n = 0;
}

void gm_walk_free(struct gm_walk *w)
{
    free(w->buf);
    gm_recs_free(&w->recs);
}

/* The next window: *got 1 with its records in w->recs, 0 once the pass is over. */
int gm_walk_next(struct gm_walk *w, int *got, gm_status *st)
{
    const unsigned char eol = (unsigned char)w->r->ks->eol;
    memmove(w->buf, w->buf + w->lines, w->have - w->lines);
    w->have -= w->lines;
    w->lines = 0;
    w->recs.n = 0;
    *got = 0;
    for (;;) {
        size_t want = w->cap - w->have;
        want = want < w->feed.left ? want : (size_t)w->feed.left;
        int rc = want ? gm_span_read(&w->feed, w->buf + w->have, want, st) : GM_OK;
        if (rc)
            return rc;
        w->have += want;
        const unsigned char *e = w->have ? memrchr(w->buf, eol, w->have) : NULL;
        if (e) {
            w->lines = (size_t)(e - w->buf) + 1;
            break;
        }
        if (w->have == 0)
            return GM_OK; /* the pass is over */
        if (w->feed.left == 0) /* every span ends with its terminator */
            return gm_fail(st, GM_EIO, "lines: the inputs changed while reading");
        unsigned char *b = realloc(w->buf, 2 * w->cap); /* a line longer than the window */
        if (!b)
            return gm_fail(st, GM_ENOMEM, "out of memory for a line of %zu bytes", w->have);
        w->buf = b;
        w->cap *= 2;
    }
    gm_lines_block b = { 1, w->lines, w->cap, w->buf, NULL, 0 };
    *got = 1;
    return gm_lines_split(w->r->ks, &b, &w->recs, w->r->nthreads, st);
}

/* ------------------------------------------------------------------ buckets */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The complete lines of SAMPLE_BYTES read at SAMPLES places spread over the
 * spans' files, appended to buf (*have bytes). */
static int sample_lines(struct rec_run *r, const gm_span *spans, int nspans, unsigned char *buf,
                        size_t *have, gm_status *st)
{
    const unsigned char eol = (unsigned char)r->ks->eol;
    uint64_t total = 0;
    for (int i = 0; i < nspans; i++)
        total += (uint64_t)spans[i].len;
    *have = 0;
    for (int k = 0; k < SAMPLES && total > 0; k++) {
        uint64_t at = total * (uint64_t)(2 * k + 1) / (2 * SAMPLES);
        int i = 0;
        while (at >= (uint64_t)spans[i].len)
            at -= (uint64_t)spans[i++].len;
        const gm_span *s = &spans[i];
        size_t len = (uint64_t)s->len - at < SAMPLE_BYTES ? (size_t)((uint64_t)s->len - at)
                                                          : SAMPLE_BYTES;
        unsigned char *p = buf + *have, *end = p + len;
        int e = gm_pread_all(s->src->fd, p, len, s->off + (int64_t)at);
        if (e)
            return gm_pread_error(e, s->src->shown, st);
        if (at > 0 || s->head_len > 0) { /* from the first line that begins here */
            p = memchr(p, eol, len);
            if (!p)
                continue;
            p++;
        }
        const unsigned char *last = p < end ? memrchr(p, eol, (size_t)(end - p)) : NULL;
        if (!last)
            continue;
        size_t n = (size_t)(last + 1 - p);
        memmove(buf + *have, p, n);
        *have += n;
    }
    return GM_OK;
}

/* Up to GM_MAX_BUCKETS - 1 increasing bounds (*nb) from the prefixes of sampled
 * lines: bucket b holds the prefixes p with b bounds at or below p. */
int gm_buckets_sample(struct rec_run *r, const gm_span *spans, int nspans, uint64_t *bounds,
                      int *nb, gm_status *st)
{
    unsigned char *buf = malloc((size_t)SAMPLES * SAMPLE_BYTES);
    gm_recs v = { NULL, 0, 0, 0 };
    uint64_t *pre = NULL;
    size_t have = 0;
    int rc = buf ? GM_OK : gm_fail(st, GM_ENOMEM, "out of memory sampling keys");
    if (!rc)
        rc = sample_lines(r, spans, nspans, buf, &have, st);
    gm_lines_block b = { 1, have, have, buf, NULL, 0 };
    if (!rc && have > 0)
        rc = gm_lines_split(r->ks, &b, &v, r->nthreads, st);
    if (!rc && v.n > 0 && !(pre = malloc(v.n * sizeof *pre)))
        rc = gm_fail(st, GM_ENOMEM, "out of memory sampling keys");
    *nb = 0;
    if (!rc && v.n > 0) {
        for (size_t i = 0; i < v.n; i++)
            pre[i] = v.r[i].prefix;
        qsort(pre, v.n, sizeof *pre, cmp_u64);
        size_t nbk = v.n / 4 + 1 < GM_MAX_BUCKETS ? v.n / 4 + 1 : GM_MAX_BUCKETS;
        for (size_t k = 1; k < nbk; k++) {
            uint64_t x = pre[k * v.n / nbk];
            if (x > (*nb ? bounds[*nb - 1] : pre[0]))
                bounds[(*nb)++] = x;
        }
    }
    free(pre);
    gm_recs_free(&v);
    free(buf);
    return rc;
}

/* The bounds at or below p, by a binary search without branches: the loads
 * stay in the cache and no prefix costs a misprediction. */
static inline int bucket_of(const uint64_t *bounds, int nb, uint64_t p)
{
    if (nb == 0)
        return 0;
    const uint64_t *b = bounds;
    for (int n = nb; n > 1; n -= n / 2)
        b = b[n / 2] <= p ? b + n / 2 : b;
    return (int)(b - bounds) + (*b <= p);
}

/* The count: each bucket's bytes and lines, per task, and whether a prefix is
 * inexact. */
struct count {
    const struct gm_walk *w; /* the pass whose window is counted (gm_buckets_count) */
    const uint64_t *bounds;  /* nb increasing prefix bounds (gm_buckets_sample's) */
    int nb, tasks;           /* bounds (buckets: nb + 1), and the threads counting */
    uint64_t *bytes, *lines; /* tasks x (nb + 1) */
    int *inexact;            /* tasks */
};

static void count_task(void *ctx, int t)
{
    struct count *c = ctx;
    const gm_recs *v = &c->w->recs;
    const char eol = c->w->r->ks->eol;
    uint64_t *bytes = c->bytes + (size_t)t * (size_t)(c->nb + 1);
    uint64_t *lines = c->lines + (size_t)t * (size_t)(c->nb + 1);
    size_t lo, hi;
    int inexact = 0; /* kept here: the tasks' flags share a cache line */
    gm_slice(v->n, t, c->tasks, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        int b = bucket_of(c->bounds, c->nb, v->r[i].prefix);
        bytes[b] += gm_rec_len(&v->r[i], eol) + 1;
        lines[b]++;
        inexact |= !gm_rec_is_exact(&v->r[i]);
    }
    c->inexact[t] |= inexact;
}

/* One pass over the inputs: every bucket's bytes and lines, summed over the tasks
 * into the first task's rows; *inexact where a prefix is. */
static int count_pass(struct gm_walk *w, struct count *c, int *inexact, gm_status *st)
{
    int got = 1, rc = GM_OK;
    while (!rc && got) {
        rc = gm_walk_next(w, &got, st);
        if (!rc && got)
            gm_parallel_for(c->tasks, c->tasks, count_task, c);
    }
    *inexact = 0;
    for (int t = 0; t < c->tasks; t++) {
        *inexact |= c->inexact[t];
        for (int b = 0; t > 0 && b <= c->nb; b++) {
            c->bytes[b] += c->bytes[(size_t)t * (size_t)(c->nb + 1) + (size_t)b];
            c->lines[b] += c->lines[(size_t)t * (size_t)(c->nb + 1) + (size_t)b];
        }
    }
    return rc;
}

int gm_buckets_count(struct gm_walk *w, const uint64_t *bounds, int nb, int tasks,
                     uint64_t *bytes, uint64_t *lines, int *inexact, gm_status *st)
{
    int *inx = calloc((size_t)tasks, sizeof *inx);
    if (!inx)
        return gm_fail(st, GM_ENOMEM, "out of memory counting keys");
    struct count c = { w, bounds, nb, tasks, bytes, lines, inx };
    int rc = count_pass(w, &c, inexact, st);
    free(inx);
    return rc;
}
