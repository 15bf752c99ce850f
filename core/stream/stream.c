/*
 * stream.c - the streaming data plane's entry (stream.h): the run's context from
 * its plan, every input opened, the plan said, the output opened with its space
 * reserved ahead, the merge, sort or check run, and the output finished and
 * committed (or abandoned). The rooms of the stages are listed in stream_impl.h.
 */
#define _GNU_SOURCE
#include "stream/stream.h"

#include <stdlib.h>
#include <string.h>

#include "device/gpu.h"
#include "base/progress.h"
#include "plan/report.h"
#include "stream/stream_impl.h"
#include "base/util.h"

enum {
    AHEAD_TOUCHERS = 0, /* threads faulting the output's pages in ahead: the CPU's
                         * threads are busy parsing and sorting then */
};

/* The context of a run of op under plan over nnames inputs. */
static int stream_init(struct stream *s, gm_op op, const gm_config *cfg, gm_plan *plan,
                       char *const *names, int nnames, gm_stream_stats *stats, gm_status *st)
{
    memset(s, 0, sizeof *s);
    memset(stats, 0, sizeof *stats);
    stats->width = GM_I32;
    s->cfg = cfg;
    s->plan = plan;
    s->temps = (gm_tmpspec){ cfg->tmpdir, cfg->compress_program };
    s->op = op;
    s->nthreads = plan->threads;
    s->mask = cfg->reverse ? -1 : 0;
    s->names = names;
    s->nnames = nnames;
    s->stats = stats;
    stats->budget = plan->budget;
    stats->threads = plan->threads;
    s->ins = calloc((size_t)nnames, sizeof *s->ins);
    s->open = calloc((size_t)nnames, 1);
    s->drained = calloc((size_t)nnames, 1);
    if (!s->ins || !s->open || !s->drained)
        return gm_fail(st, GM_ENOMEM, "out of memory");
    return GM_OK;
}

/* Opens the output into w. An output written in place goes to a spool in -T's
 * folder first: an input that is the output is read whole before any of its
 * bytes changes. The output is no longer than the regular inputs: its space is
 * reserved on a thread of its own while they are read, parsed and sorted. */
static int open_output(struct stream *s, gm_output *out, gm_writer *w, int *have_out,
                       gm_status *st)
{
    uint64_t bytes = s->plan->regular_bytes;
    int rc = gm_output_open_sized(out, s->cfg->output, bytes, s->cfg->tmpdir,
                                  s->plan->output_late, st);
    *have_out = !rc;
    gm_writer_init(w, out, s->cfg->unique, s->nthreads);
    w->mem = s->plan->writer_mem;
    w->eol = s->cfg->zero_terminated ? '\0' : '\n';
    s->w = w;
    if (!rc && bytes > 0)
        rc = gm_writer_ahead(w, bytes, AHEAD_TOUCHERS, st);
    return rc;
}

/* The writer's last blocks, the output committed (or abandoned on error rc). */
static int finish_output(struct stream *s, gm_output *out, gm_writer *w, int rc, gm_status *st)
{
    gm_stream_stats *stats = s->stats;
    double a = gm_now();
    gm_trace_push("finish the output");
    gm_status ignored;
    int frc = gm_writer_finish(w, rc ? &ignored : st);
    if (!rc)
        rc = frc;
    if (!rc)
        rc = gm_output_commit(out, st);
    gm_trace_pop();
    stats->finish += gm_now() - a;
    if (rc)
        gm_output_abort(out);
    else if (out->file.kind == GM_OUTFILE_IN_PLACE)
        gm_report_fact(s->cfg, "output", "%s written in place: %s", out->shown, out->file.why);
    if (!rc && w->map)
        gm_report_fact(s->cfg, "output", "%s written through a shared mapping", out->shown);
    stats->format = w->stats.format_cpu / s->nthreads;
    stats->write_syscalls = w->stats.write;
    stats->ahead = w->stats.ahead;
    stats->touchers = w->stats.touchers;
    stats->mapped = w->map;
    return rc;
}

int gm_stream_run(gm_op op, const gm_config *cfg, gm_plan *plan, char *const *names,
                  int nnames, gm_stream_stats *stats, gm_status *st)
{
    double opening = gm_now();
    struct stream s;
    int rc = stream_init(&s, op, cfg, plan, names, nnames, stats, st);
    /* --device=gpu: CUDA's start-up begins now, beside everything that follows */
    s.warm = gm_engine_warm(cfg, op, -1, s.nthreads);
    gm_trace_push("open");
    if (!rc)
        rc = gm_stream_open_inputs(&s, st);
    if (!rc) {
        gm_stream_warm_sized(&s);
        gm_stream_say_plan(&s);
        gm_progress_total(plan->total_bytes);
    }
    gm_output out;
    gm_writer w;
    int have_out = 0;
    if (!rc && op != GM_OP_CHECK)
        rc = open_output(&s, &out, &w, &have_out, st);
    gm_trace_pop();
    stats->open += gm_now() - opening;
    if (!rc)
        rc = op == GM_OP_MERGE ? gm_stream_merge(&s, st)
           : op == GM_OP_SORT  ? gm_stream_sort(&s, st)
                               : gm_stream_check(&s, st);
    if (!rc) /* --device=gpu without a GPU fails even where no engine ran */
        rc = gm_stream_device_check(&s, 1, st);
    /* The device's work is over: the last run's CUDA context goes away while the
     * output is finished (closing, renaming, freeing a replaced file's pages). */
    if (!rc && cfg->last) {
        gm_engine_release_begin();
        stats->teardown_begun = 1;
    }
    for (int i = 0; s.open && i < nnames; i++)
        gm_stream_input_close(&s, i);
    if (have_out)
        rc = finish_output(&s, &out, &w, rc, st);
    double a = gm_now();
    free(s.ins);
    free(s.open);
    free(s.drained);
    stats->cleanup += gm_now() - a;
    return rc;
}
