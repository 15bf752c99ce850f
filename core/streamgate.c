/*
 * streamgate.c - the streaming data plane's gate to CUDA's start-up and its
 * reports as it goes (stream_impl.h): auto's decision to begin the start-up from
 * the inputs' size, --device=gpu's early failure asked after every block and
 * waited for before the first engine call, the first output byte and the end,
 * the --progress lines and the hand-over's -v line.
 */
#include <stdio.h>

#include "../cuda/gpu.h"
#include "stream_impl.h"
#include "util.h"

enum {
    WARM_LINE_BYTES = 4, /* bytes a line, for the keys a size may hold: a short count
                          * errs toward starting CUDA, which costs a thread during a
                          * run long enough to hide it */
};

/* --device=gpu's early failure (gm_engine_prepare): asked without waiting after
 * every block read, waited for before the first engine call, the first output
 * byte and the end; once passed, the GPU's chunk limits are known. */
int gm_stream_device_check(struct stream *s, int wait, gm_status *st)
{
    if (s->device_known)
        return GM_OK;
    int done = 0;
    double a = gm_now();
    if (wait)
        gm_trace_push("waiting for CUDA's start-up");
    int rc = gm_engine_prepare(s->cfg, wait, &done, st);
    if (wait)
        gm_trace_pop();
    s->stats->startup_wait += gm_now() - a;
    if (rc || !done)
        return rc;
    s->device_known = 1;
    s->device_cap[0] = gm_engine_max_chunk(s->cfg, GM_I32);
    s->device_cap[1] = gm_engine_max_chunk(s->cfg, GM_I64);
    return GM_OK;
}

/* auto: CUDA's start-up begins once the inputs are open if their size makes the
 * GPU a candidate for the largest engine call (a pipe's sort asks again as it
 * reads). */
void gm_stream_warm_sized(struct stream *s)
{
    const gm_plan *p = s->plan;
    if (s->warm || p->total_bytes <= 0)
        return;
    if (s->op == GM_OP_SORT && p->regular_bytes <= p->text_limit) {
        /* the text path will take the sort or leave it: the same test, made now */
        s->warm = gm_engine_warm_text(s->cfg, p->regular_bytes, 0, s->nthreads);
        return;
    }
    int64_t bytes = p->total_bytes;
    if (s->op == GM_OP_MERGE && (int64_t)p->merge_mem < bytes)
        bytes = (int64_t)p->merge_mem; /* a round holds at most this much */
    int64_t keys = bytes / WARM_LINE_BYTES;
    if (s->op == GM_OP_SORT && keys > p->chunk_keys[0])
        keys = p->chunk_keys[0];
    s->warm = gm_engine_warm(s->cfg, s->op, keys, s->nthreads);
}

static int64_t bytes_read(const struct stream *s)
{
    int64_t b = s->done_bytes;
    for (int i = 0; i < s->nnames; i++)
        if (s->open[i])
            b += s->ins[i].bytes;
    return b;
}

/* One --progress line, at most four a second (or now, when final). */
void gm_stream_progress(struct stream *s, int final)
{
    if (!s->cfg->progress)
        return;
    double now = gm_now();
    if (!final && now - s->last_said < 0.25)
        return;
    s->last_said = now;
    double mb = (double)bytes_read(s) / 1e6, secs = now - s->started;
    int64_t total_bytes = s->plan->total_bytes;
    char total[64] = "";
    if (total_bytes > 0)
        snprintf(total, sizeof total, " of %.1f MB (%.0f%%)", (double)total_bytes / 1e6,
                 100.0 * mb * 1e6 / (double)total_bytes);
    char runs[96] = "";
    if (s->stats->runs > 0)
        snprintf(runs, sizeof runs, ", %d run%s written, %d merged", s->stats->runs,
                 s->stats->runs == 1 ? "" : "s", s->runs_merged);
    gm_say(s->cfg, GM_MSG_PROGRESS, "progress: read %.1f MB%s%s, %.0f MB/s", mb, total, runs,
           secs > 0 ? mb / secs : 0.0);
}

/* -v's line where a line of in declines the integer path. */
void gm_stream_say_records(const struct stream *s, const gm_input *in)
{
    gm_say(s->cfg, GM_MSG_VERBOSE, "path: records from %s line %lld on (%s)", in->shown,
           (long long)in->line + 1, "a line that is not a canonical integer");
}
