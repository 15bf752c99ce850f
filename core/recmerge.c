/*
 * recmerge.c - the streaming k-way merge of line sources and the order check (see
 * recmerge.h). Every source holds one block of lines and its records; a binary
 * heap of the sources' current records, ties broken by source index, gives the
 * next line (the merge of coreutils' sort.c mergefps, with a heap for its linear
 * search); a source's next block is read, split and checked in order on all
 * cores when its block is used up, so output begins at once and memory stays a
 * block per source. The last line of a block is kept, copied, to check the order
 * across blocks.
 */
#define _GNU_SOURCE
#include "recmerge.h"

#include <stdlib.h>
#include <string.h>

#include "recsort.h"
#include "util.h"

struct msrc {
    gm_lines_src *src;
    gm_lines_block *block;
    gm_recs recs;
    size_t pos;
    int64_t line_base;     /* lines before the current block */
    gm_rec prev;           /* the previous block's last line (have_prev) */
    int have_prev;
    unsigned char *prev_buf;
    size_t prev_cap;
};

/* "FILE:LINE: disorder: TEXT" for record i of m's block, the line's bytes as
 * sort writes them (as far as the status holds them, and up to a NUL byte). */
static int disorder(struct msrc *m, const gm_keyspec *ks, size_t i, gm_code code,
                    gm_status *st)
{
    const gm_rec *r = &m->recs.r[i];
    size_t len = gm_rec_len(r, ks->eol);
    int shown = len < sizeof st->msg ? (int)len : (int)sizeof st->msg;
    return gm_fail(st, code, "%s:%lld: disorder: %.*s", m->src->shown,
                   (long long)(m->line_base + (int64_t)i + 1), shown,
                   (const char *)gm_rec_line(r));
}

/* Keeps a copy of the block's last line as m->prev. */
static int keep_prev(struct msrc *m, const gm_keyspec *ks, gm_status *st)
{
    if (m->recs.n == 0)
        return GM_OK;
    const gm_rec *r = &m->recs.r[m->recs.n - 1];
    size_t len = gm_rec_len(r, ks->eol);
    if (len + 1 > m->prev_cap) {
        unsigned char *b = malloc(len + 1);
        if (!b)
            return gm_fail(st, GM_ENOMEM, "out of memory reading %s", m->src->shown);
        free(m->prev_buf);
        m->prev_buf = b;
        m->prev_cap = len + 1;
    }
    memcpy(m->prev_buf, gm_rec_line(r), len + 1);
    m->prev.prefix = r->prefix;
    m->prev.ref = gm_rec_make_ref(m->prev_buf, len, gm_rec_is_exact(r));
    m->have_prev = 1;
    return GM_OK;
}

/* Replaces m's block by the next one (none at the end: recs.n is 0), checked in
 * order when asked (strict: equal keys too). */
static int next_block(const gm_recmerge_opts *o, struct msrc *m, int eager, int strict,
                      gm_code code, gm_status *st)
{
    int rc = GM_OK;
    if (o->check_order)
        rc = keep_prev(m, o->ks, st);
    m->line_base += (int64_t)m->recs.n;
    m->recs.n = 0;
    m->pos = 0;
    gm_lines_block_unref(m->block);
    m->block = NULL;
    while (!rc && m->recs.n == 0 && !m->src->done) {
        rc = gm_lines_read(m->src, o->block, eager, o->nthreads, &m->block, st);
        if (!rc && m->block)
            rc = gm_lines_split(o->ks, m->block, &m->recs, o->nthreads, st);
    }
    if (!rc && o->check_order && m->recs.n > 0) {
        size_t bad = gm_rec_first_disorder(o->ks, m->have_prev ? &m->prev : NULL, m->recs.r,
                                           m->recs.n, strict, o->nthreads);
        if (bad < m->recs.n)
            rc = disorder(m, o->ks, bad, code, st);
    }
    return rc;
}

static void msrc_free(struct msrc *m)
{
    gm_lines_block_unref(m->block);
    m->block = NULL;
    gm_recs_free(&m->recs);
    free(m->prev_buf);
    m->prev_buf = NULL;
}

int gm_reccheck(const gm_recmerge_opts *o, gm_lines_src *src, int strict, gm_status *st)
{
    struct msrc m;
    memset(&m, 0, sizeof m);
    m.src = src;
    m.line_base = src->line0;
    int rc = GM_OK;
    do
        rc = next_block(o, &m, 0, strict, GM_DISORDER, st);
    while (!rc && m.recs.n > 0);
    msrc_free(&m);
    return rc;
}

/* ------------------------------------------------------------------ merge */

struct heap {
    const gm_keyspec *ks;
    struct msrc *m;
    int *h;   /* source indices */
    int n;
};

static int before(const struct heap *hp, int a, int b)
{
    const struct msrc *x = &hp->m[a], *y = &hp->m[b];
    int d = gm_rec_cmp(hp->ks, &x->recs.r[x->pos], &y->recs.r[y->pos]);
    return d < 0 || (d == 0 && a < b);
}

static void sift_down(struct heap *hp, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < hp->n && before(hp, hp->h[l], hp->h[m]))
            m = l;
        if (r < hp->n && before(hp, hp->h[r], hp->h[m]))
            m = r;
        if (m == i)
            return;
        int t = hp->h[i];
        hp->h[i] = hp->h[m];
        hp->h[m] = t;
        i = m;
    }
}

int gm_recmerge(const gm_recmerge_opts *o, gm_lines_src *const *srcs, int k, gm_recsink *sink,
                gm_status *st)
{
    struct msrc *m = calloc((size_t)k + 1, sizeof *m);
    int *h = calloc((size_t)k + 1, sizeof *h);
    int rc = m && h ? GM_OK : gm_fail(st, GM_ENOMEM, "out of memory merging");
    struct heap hp = { o->ks, m, h, 0 };
    for (int i = 0; i < k && !rc; i++) {
        m[i].src = srcs[i];
        m[i].line_base = srcs[i]->line0;
        rc = next_block(o, &m[i], 1, 0, GM_EINPUT, st);
        if (!rc && m[i].recs.n > 0)
            h[hp.n++] = i;
    }
    for (int i = hp.n / 2; i-- > 0 && !rc;)
        sift_down(&hp, i);
    while (!rc && hp.n > 0) {
        struct msrc *s = &m[h[0]];
        rc = gm_recsink_put(sink, &s->recs.r[s->pos], st);
        if (rc)
            break;
        if (++s->pos == s->recs.n) {
            rc = next_block(o, s, 1, 0, GM_EINPUT, st);
            if (rc)
                break;
            if (s->recs.n == 0)
                h[0] = h[--hp.n];
        }
        if (hp.n > 0)
            sift_down(&hp, 0);
    }
    for (int i = 0; m && i < k; i++)
        msrc_free(&m[i]);
    free(m);
    free(h);
    return rc;
}
