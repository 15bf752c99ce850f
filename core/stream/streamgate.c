/*
 * streamgate.c - the streaming data plane's gate to CUDA's start-up and its
 * reports as it goes (stream_impl.h): auto's decision to begin the start-up from
 * the inputs' size, --device=gpu's early failure asked after every block and
 * waited for before the first engine call, the first output byte and the end,
 * and the hand-over's -v line.
 */
#include <stdio.h>

#include "device/gpu.h"
#include "plan/report.h"
#include "stream/stream_impl.h"
#include "base/util.h"

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

/* -v's plan, with the engine and why as the run stands once the inputs are
 * open: auto's engine calls go to the device estimated faster, and the GPU is a
 * candidate only when CUDA's start-up was begun for them. */
void gm_stream_say_plan(struct stream *s)
{
    gm_plan *p = s->plan;
    const gm_config *cfg = s->cfg;
    p->gpu = s->warm;
    gm_gpu_info info;
    gm_status st;
    if (cfg->device == GM_DEVICE_AUTO && s->warm && gm_gpu_probe_done() &&
        gm_gpu_probe(&info, &st) != GM_OK) {
        p->gpu = 0; /* the start-up is over already, and found no GPU */
        snprintf(p->engine, sizeof p->engine, "cpu (auto: %.120s)", st.msg);
    } else if (cfg->device == GM_DEVICE_CPU)
        snprintf(p->engine, sizeof p->engine, "cpu (--device=cpu)");
    else if (cfg->device == GM_DEVICE_GPU)
        snprintf(p->engine, sizeof p->engine, "gpu (--device=gpu)");
    else if (s->op == GM_OP_CHECK)
        snprintf(p->engine, sizeof p->engine, "cpu (a check compares keys as it parses them)");
    else if (s->warm)
        snprintf(p->engine, sizeof p->engine, "auto (CUDA's start-up begun beside the reading; "
                 "each call goes to the device estimated faster)");
    else
        snprintf(p->engine, sizeof p->engine, "cpu (auto: the work is too small to pay for a "
                 "GPU's start-up)");
    gm_plan_say(p, cfg, 0);
}

/* -v's line where a line of in declines the integer path. */
void gm_stream_say_records(const struct stream *s, const gm_input *in)
{
    gm_report_fact(s->cfg, "path", "lines with their keys from %s line %lld on (%s)", in->shown,
                   (long long)in->line + 1, "a line that is not a canonical integer");
}
