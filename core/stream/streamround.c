/*
 * streamround.c - the streaming merge's rounds (stream.h): k sources (inputs or
 * runs) each keep a buffer of parsed keys; each round's bound is the smallest
 * (largest with -r) last buffered key among the sources not at their end, every
 * source's prefix up to the bound is merged by the engine (the co-rank
 * partitioned merge) and handed to a sink (the writer or a run), and the emptied
 * buffers are refilled. The bound is sort -m's idea over blocks of keys instead
 * of single lines, so that each round's merge can be cut by co-rank and run on
 * all cores. Here too: the engine's calls, timed, and the two sinks.
 */
#include <stdlib.h>

#include "device/gpu.h"
#include "stream/stream_impl.h"
#include "base/util.h"

/* The keys of one round: each source's count up to the bound, their sum and width,
 * the merge's two buffers (grown as rounds need). */
struct round {
    int64_t *cnt, *offsets;  /* per source: keys up to the bound (round_counts), and the
                              * gathered runs' starts (round_merge) */
    int64_t total;           /* the sum of cnt; round_counts */
    int nonempty, only;      /* sources with keys this round, and the last of them;
                              * round_counts */
    gm_width width;          /* I64 if any contributing source is, else I32; round_counts */
    void *mbuf, *sbuf;       /* the merge's output and scratch; round_buffers, round_merge */
    size_t mcap;             /* bytes each buffer holds; round_buffers */
};

int gm_stream_to_writer(struct stream *s, void *ctx, const gm_keys *keys, gm_status *st)
{
    (void)ctx;
    int rc = gm_stream_device_check(s, 1, st); /* before the first byte */
    if (rc)
        return rc;
    double a = gm_now();
    gm_trace_push("format and write");
    rc = gm_writer_put(s->w, keys, st);
    gm_trace_pop();
    s->stats->write += gm_now() - a;
    return rc;
}

int gm_stream_to_run(struct stream *s, void *ctx, const gm_keys *keys, gm_status *st)
{
    double a = gm_now();
    gm_trace_push("spill");
    int rc = gm_run_put(ctx, keys, st);
    gm_trace_pop();
    s->stats->spill += gm_now() - a;
    return rc;
}

int gm_stream_engine(struct stream *s, gm_op op, gm_keys *keys, void **scratch,
                     const int64_t *offsets, int nruns, gm_status *st)
{
    int rc = gm_stream_device_check(s, 1, st);
    if (rc)
        return rc;
    gm_engine_report rep;
    int64_t n = keys->n;
    double a = gm_now();
    gm_trace_push(op == GM_OP_MERGE ? "merge" : "sort");
    rc = gm_engine_run(s->cfg, op, keys, scratch, offsets, nruns, s->nthreads, &rep, st);
    gm_trace_pop();
    /* the wait for CUDA's start-up inside the call is its own stage */
    s->stats->engine += gm_now() - a - rep.startup_wait;
    gm_stream_tally(s->stats, op, n, keys->width, &rep);
    return rc;
}

void gm_stream_free_sources(struct source *src, int k)
{
    for (int i = 0; i < k; i++)
        gm_keybuf_free(&src[i].kb);
    free(src);
}

/* Number of leading keys of kb that are at or before bound in the order. */
static int64_t upper_bound(const gm_keybuf *kb, int64_t bound, int64_t mask)
{
    int64_t lo = 0, hi = kb->n, b = bound ^ mask;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if ((gm_keybuf_get(kb, mid) ^ mask) <= b)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Reads into src until it holds a key or is at its end. */
static int refill(struct stream *s, struct source *src, gm_status *st)
{
    gm_parse_opts o = { s->nthreads, 1, s->mask, 0, !s->cfg->strict };
    while (src->kb.n == 0 && !src->eof) {
        int rc;
        if (src->in) {
            rc = gm_stream_read_keys(s, src->in, &o, &src->kb, st);
            if (rc == GM_DISORDER) /* an unsorted merge input is an error, not a finding */
                rc = st->code = GM_EINPUT;
            src->eof = src->in->eof;
        } else {
            double a = gm_now();
            rc = gm_run_read(src->run, &src->kb, s->plan->run_read_keys, st);
            s->stats->spill += gm_now() - a;
            src->eof = src->run->eof;
        }
        if (rc)
            return rc;
    }
    return GM_OK;
}

/* The round's counts: each source's keys up to the bound (all of them when every
 * source is at its end), their sum, the sources that have some, the width. */
static void round_counts(const struct stream *s, const struct source *src, int k,
                         struct round *r)
{
    int have_bound = 0;
    int64_t bound = 0;
    for (int i = 0; i < k; i++) {
        if (src[i].eof)
            continue;
        int64_t last = gm_keybuf_get(&src[i].kb, src[i].kb.n - 1);
        if (!have_bound || (last ^ s->mask) < (bound ^ s->mask))
            bound = last;
        have_bound = 1;
    }
    r->total = 0;
    r->nonempty = 0;
    r->only = -1;
    r->width = GM_I32;
    for (int i = 0; i < k; i++) {
        r->cnt[i] = have_bound ? upper_bound(&src[i].kb, bound, s->mask) : src[i].kb.n;
        r->total += r->cnt[i];
        if (r->cnt[i] > 0) {
            r->nonempty++;
            r->only = i;
            if (src[i].kb.width == GM_I64)
                r->width = GM_I64;
        }
    }
}

/* The merge's buffers, room for the round's keys (half as much again). */
static int round_buffers(struct round *r, gm_status *st)
{
    size_t bytes = (size_t)r->total * r->width;
    if (bytes <= r->mcap)
        return GM_OK;
    size_t want = bytes + bytes / 2;
    gm_buf_free(r->mbuf);
    gm_buf_free(r->sbuf);
    r->sbuf = NULL;
    r->mbuf = gm_buf_alloc(want, "merging", st);
    r->sbuf = r->mbuf ? gm_buf_alloc(want, "merging", st) : NULL;
    r->mcap = r->sbuf ? want : 0;
    return r->sbuf ? GM_OK : GM_ENOMEM;
}

/* Merges the round's keys of two or more sources into *keys (in r's buffers). */
static int round_merge(struct stream *s, struct source *src, int k, struct round *r,
                       gm_keys *keys, gm_status *st)
{
    int rc = round_buffers(r, st);
    if (rc)
        return rc;
    gm_width w = r->width;
    int a = -1, b = -1;
    for (int i = 0; i < k; i++) {
        if (r->cnt[i] > 0 && a < 0)
            a = i;
        else if (r->cnt[i] > 0)
            b = i;
    }
    *keys = (gm_keys){ r->mbuf, r->total, w };
    if (r->nonempty == 2 && s->cfg->device != GM_DEVICE_GPU && src[a].kb.width == w &&
        src[b].kb.width == w) {
        /* Two runs on the CPU (what the engine picks for a round of this size):
         * merged straight from the buffers, without a gather. */
        gm_engine_report rep;
        double t0 = gm_now();
        gm_trace_push("merge");
        gm_engine_merge2(s->cfg, w, src[a].kb.data, r->cnt[a], src[b].kb.data, r->cnt[b],
                         r->mbuf, s->nthreads, &rep);
        gm_trace_pop();
        s->stats->engine += gm_now() - t0;
        gm_stream_tally(s->stats, GM_OP_MERGE, r->total, w, &rep);
        return GM_OK;
    }
    gm_keybuf m = { r->mbuf, 0, (int64_t)(r->mcap / w), 0, w };
    int nr = 0;
    for (int i = 0; i < k && !rc; i++) {
        if (r->cnt[i] == 0)
            continue;
        r->offsets[nr++] = m.n;
        rc = gm_keybuf_append(&m, src[i].kb.data, r->cnt[i], src[i].kb.width, st);
    }
    r->offsets[nr] = m.n;
    if (!rc)
        rc = gm_stream_engine(s, GM_OP_MERGE, keys, &r->sbuf, r->offsets, nr, st);
    if (!rc)
        r->mbuf = keys->data;
    return rc;
}

/* Merges the k sources into sink, round by round (see stream.h). */
int gm_stream_merge_sources(struct stream *s, struct source *src, int k, gm_stream_sink sink,
                            void *sink_ctx, gm_status *st)
{
    struct round r = { calloc((size_t)k, sizeof(int64_t)), calloc((size_t)k + 1, sizeof(int64_t)),
                       0, 0, -1, GM_I32, NULL, NULL, 0 };
    int rc = r.cnt && r.offsets ? GM_OK : gm_fail(st, GM_ENOMEM, "out of memory merging");
    while (!rc) {
        double round = gm_now(), before = gm_stream_staged(s->stats);
        for (int i = 0; i < k && !rc; i++)
            rc = refill(s, &src[i], st);
        if (rc)
            break;
        round_counts(s, src, k, &r);
        if (r.total == 0)
            break; /* every source is at its end */
        gm_keys keys;
        if (r.nonempty == 1)
            keys = (gm_keys){ src[r.only].kb.data, r.cnt[r.only], src[r.only].kb.width };
        else if ((rc = round_merge(s, src, k, &r, &keys, st)) != GM_OK)
            break;
        rc = sink(s, sink_ctx, &keys, st);
        for (int i = 0; i < k; i++)
            gm_keybuf_consume(&src[i].kb, r.cnt[i]);
        /* the round's bounds, gathers and moves are the merge's time too */
        s->stats->engine += gm_now() - round - (gm_stream_staged(s->stats) - before);
    }
    double a = gm_now();
    gm_buf_free(r.mbuf);
    gm_buf_free(r.sbuf);
    free(r.cnt);
    free(r.offsets);
    s->stats->cleanup += gm_now() - a;
    return rc;
}
