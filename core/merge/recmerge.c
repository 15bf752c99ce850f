/*
 * recmerge.c - the streaming k-way merge of line sources and the order check (see
 * recmerge.h). Every source holds one block of lines and its records. The merge
 * goes in rounds, as the integer path's does (stream.c): the bound is the least
 * of the last records of the sources that go on; every source's records up to
 * it are merged, the round cut into parts at records of its largest source and
 * the others' cuts found by binary search (the co-rank idea of Programming
 * Massively Parallel Processors, chapter 12, over k sources), each part merged
 * by a binary heap on a thread of its own, ties broken by source index so that
 * the merge is stable; then the sink gathers the lines. A used-up block is
 * replaced by the source's next one, read, split and checked in order on all
 * cores, so output begins at once and memory stays a block per source. The last
 * line of a block is kept, copied, to check the order across blocks.
 */
#define _GNU_SOURCE
#include "merge/recmerge.h"

#include <stdlib.h>
#include <string.h>

#include "sort/recsort.h"
#include "base/util.h"

enum { PART_MIN = 1 << 14 }; /* a merge round is cut into parts from this size */

struct msrc {
    gm_lines_src *src;     /* the source, opened by the caller (gm_recmerge, gm_reccheck) */
    gm_lines_block *block; /* the text block being merged, NULL past the end (next_block) */
    gm_recs recs;          /* block's records, split by next_block */
    size_t pos;            /* records of recs already merged (merge_round) */
    int64_t line_base;     /* lines before the current block */
    gm_rec prev;           /* the previous block's last line (have_prev) */
    int have_prev;         /* prev holds a line: keep_prev kept one */
    unsigned char *prev_buf; /* prev's bytes, copied by keep_prev (the block is recycled) */
    size_t prev_cap;       /* prev_buf's size, grown by keep_prev */
};

/* "FILE:LINE: disorder: TEXT" for record i of m's block, the line's bytes as
 * sort writes them (as far as the status holds them, and up to a NUL byte). */
static int disorder(struct msrc *m, const gm_keyspec *ks, size_t i, gm_code code,
                    gm_status *st)
{
    const gm_rec *r = &m->recs.r[i];
    size_t len = gm_rec_len(r, ks->eol);
    gm_fail(st, code, "%s:%lld: disorder: ", m->src->shown,
            (long long)(m->line_base + (int64_t)i + 1));
    size_t at = strlen(st->msg), room = sizeof st->msg - 1 - at;
    if (len > room)
        len = room;
    memcpy(st->msg + at, gm_rec_line(r), len);
    st->msg[at + len] = '\0';
    st->len = at + len;
    return code;
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
    gm_lines_recycle(m->src, m->block);
    m->block = NULL;
    while (!rc && m->recs.n == 0 && !m->src->done) {
        rc = gm_lines_read(m->src, o->block, eager, o->nthreads, &m->block, st);
        if (!rc && m->block)
            rc = gm_lines_split_checked(m->src, o->ks, m->block, &m->recs, o->nthreads, st);
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

/* A merge round's view of one source: its records up to the round's bound. */
struct seg {
    const gm_rec *r;     /* the source's first record not yet merged (merge_round) */
    size_t n;            /* its records up to the round's bound (merge_round) */
};

struct round {
    const gm_keyspec *ks; /* the order (gm_recmerge's o->ks) */
    int k;               /* sources merged (gm_recmerge's k) */
    struct seg *seg;     /* k */
    size_t *cut;         /* (parts + 1) x k: where part j begins in source i */
    int parts;           /* parts merged in parallel, chosen by merge_round */
    gm_rec *out;         /* the round's merged records, merge_round's buffer */
};

/* Whether record a of source i comes before record b of source j: the order,
 * then the source (so that a merge is stable). */
static int rec_before(const gm_keyspec *ks, const gm_rec *a, int i, const gm_rec *b, int j)
{
    int d = gm_rec_cmp(ks, a, b);
    return d < 0 || (d == 0 && i < j);
}

/* Records of a[0, n), of source i, that come before record b of source j (or
 * are b itself, when at_or is set). */
static size_t count_before(const gm_keyspec *ks, const gm_rec *a, size_t n, int i,
                           const gm_rec *b, int j, int at_or)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int d = gm_rec_cmp(ks, &a[mid], b);
        if (d < 0 || (d == 0 && (i < j || (at_or && i == j))))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A binary heap of the sources with records left in a part, the first on top. */
struct part_heap {
    const struct round *rd; /* the round whose part is merged (round_part) */
    const size_t *pos;   /* each source's next record in the part (round_part's pos) */
    int *h;              /* the heap: sources by their next record, the first at h[0] */
    int n;               /* sources in h, fewer as round_part empties them */
};

static int heap_before(const struct part_heap *hp, int a, int b)
{
    const struct seg *s = hp->rd->seg;
    return rec_before(hp->rd->ks, &s[a].r[hp->pos[a]], a, &s[b].r[hp->pos[b]], b);
}

static void heap_down(struct part_heap *hp, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < hp->n && heap_before(hp, hp->h[l], hp->h[m]))
            m = l;
        if (r < hp->n && heap_before(hp, hp->h[r], hp->h[m]))
            m = r;
        if (m == i)
            return;
        int t = hp->h[i];
        hp->h[i] = hp->h[m];
        hp->h[m] = t;
        i = m;
    }
}

/* Part t of a round: its slices of every source merged into out, from the
 * position that the parts before it fill. */
static void round_part(void *ctx, int t)
{
    struct round *rd = ctx;
    const size_t *lo = rd->cut + (size_t)t * rd->k, *hi = lo + rd->k;
    size_t at = 0, pos[GM_MERGE_MAX];
    int h[GM_MERGE_MAX];
    struct part_heap hp = { rd, pos, h, 0 };
    for (int i = 0; i < rd->k; i++) {
        at += lo[i];
        pos[i] = lo[i];
        if (lo[i] < hi[i])
            h[hp.n++] = i;
    }
    for (int i = hp.n / 2; i-- > 0;)
        heap_down(&hp, i);
    gm_rec *out = rd->out + at;
    while (hp.n > 1) {
        int i = h[0];
        *out++ = rd->seg[i].r[pos[i]++];
        if (pos[i] == hi[i])
            h[0] = h[--hp.n];
        heap_down(&hp, 0);
    }
    if (hp.n == 1) { /* the last source's rest */
        int i = h[0];
        memcpy(out, rd->seg[i].r + pos[i], (hi[i] - pos[i]) * sizeof *out);
    }
}

/* Cuts the round into parts of about equal size at records of its largest
 * segment, each other segment by binary search. */
static void round_cut(struct round *rd)
{
    int big = 0;
    for (int i = 1; i < rd->k; i++)
        if (rd->seg[i].n > rd->seg[big].n)
            big = i;
    for (int t = 0; t <= rd->parts; t++) {
        size_t *c = rd->cut + (size_t)t * rd->k;
        size_t at = rd->seg[big].n * (size_t)t / (size_t)rd->parts;
        for (int i = 0; i < rd->k; i++) {
            if (t == 0 || t == rd->parts || i == big)
                c[i] = t == 0 ? 0 : t == rd->parts ? rd->seg[i].n : at;
            else
                c[i] = count_before(rd->ks, rd->seg[i].r, rd->seg[i].n, i,
                                    &rd->seg[big].r[at], big, 0);
        }
    }
}

/* One round: every source's records up to the bound (the least of the last
 * records of the sources that go on) merged in parallel into sink. Returns the
 * records merged. */
static int merge_round(const gm_recmerge_opts *o, struct msrc *m, int k, struct round *rd,
                       gm_recs *out, gm_recsink *sink, size_t *merged, gm_status *st)
{
    int bsrc = -1;
    for (int i = 0; i < k; i++) {
        if (m[i].recs.n == 0 || m[i].src->done)
            continue;
        const gm_rec *last = &m[i].recs.r[m[i].recs.n - 1];
        if (bsrc < 0 || rec_before(o->ks, last, i, &m[bsrc].recs.r[m[bsrc].recs.n - 1], bsrc))
            bsrc = i;
    }
    size_t total = 0;
    for (int i = 0; i < k; i++) {
        const gm_rec *r = m[i].recs.r + m[i].pos;
        size_t n = m[i].recs.n - m[i].pos;
        if (bsrc >= 0 && n > 0)
            n = count_before(o->ks, r, n, i, &m[bsrc].recs.r[m[bsrc].recs.n - 1], bsrc, 1);
        rd->seg[i] = (struct seg){ r, n };
        total += n;
    }
    *merged = total;
    if (total == 0)
        return GM_OK;
    out->n = 0;
    int rc = gm_recs_reserve(out, total, st);
    if (rc)
        return rc;
    rd->out = out->r;
    rd->parts = total < PART_MIN ? 1 : o->nthreads * 2;
    round_cut(rd);
    gm_parallel_for(o->nthreads, rd->parts, round_part, rd);
    rc = gm_recsink_put_all(sink, out->r, total, st);
    for (int i = 0; i < k; i++)
        m[i].pos += rd->seg[i].n;
    return rc;
}

int gm_recmerge(const gm_recmerge_opts *o, gm_lines_src *const *srcs, int k, gm_recsink *sink,
                gm_status *st)
{
    if (k > GM_MERGE_MAX)
        return gm_fail(st, GM_EUSAGE, "cannot merge more than %d inputs at once", GM_MERGE_MAX);
    struct msrc *m = calloc((size_t)k + 1, sizeof *m);
    struct seg *seg = calloc((size_t)k + 1, sizeof *seg);
    int parts = o->nthreads * 2;
    size_t *cut = calloc((size_t)(parts + 1) * (size_t)(k + 1), sizeof *cut);
    gm_recs out = { NULL, 0, 0, 0 };
    int rc = m && seg && cut ? GM_OK : gm_fail(st, GM_ENOMEM, "out of memory merging");
    struct round rd = { o->ks, k, seg, cut, parts, NULL };
    for (int i = 0; i < k && !rc; i++) {
        m[i].src = srcs[i];
        m[i].line_base = srcs[i]->line0;
        rc = next_block(o, &m[i], 1, 0, GM_EINPUT, st);
    }
    size_t merged = 1;
    while (!rc && merged > 0) {
        rc = merge_round(o, m, k, &rd, &out, sink, &merged, st);
        for (int i = 0; i < k && !rc; i++)
            if (m[i].pos == m[i].recs.n && m[i].recs.n > 0)
                rc = next_block(o, &m[i], 1, 0, GM_EINPUT, st);
        if (!rc && merged == 0) /* a source may have had an empty block */
            for (int i = 0; i < k && !merged; i++)
                merged = m[i].recs.n > m[i].pos;
    }
    for (int i = 0; m && i < k; i++)
        msrc_free(&m[i]);
    gm_recs_free(&out);
    free(m);
    free(seg);
    free(cut);
    return rc;
}
