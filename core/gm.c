/*
 * gm.c - the three operations of gm.h over the streaming data plane (stream.h):
 *
 *   install the temporary-file clean-up and give closed standard descriptors
 *   /dev/null -> the plan (plan.h: threads, budget and its shares, fan-in), once
 *   -> stream: begin CUDA's start-up when a GPU may be used, open every
 *   input, read blocks, parse them on all cores (--device=gpu fails here, before
 *   any output, when the start-up found no GPU), merge or sort chunk by chunk
 *   (spilling sorted runs to temporary files past the memory budget), format and
 *   write in order, rename -o's temporary file into place -> on the process's last
 *   run, end CUDA's part -> --progress's last line -> the -v report (report.h:
 *   what the run found, the time of each stage and the total since main's first
 *   line). --progress counts from here to the end (progress.h).
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "device/gpu.h"
#include "base/cleanup.h"
#include "base/compress.h"
#include "device/engine.h"
#include "gm.h"
#include "plan/plan.h"
#include "base/progress.h"
#include "records/records.h"
#include "plan/report.h"
#include "stream/stream.h"
#include "base/util.h"

/* Under a memory limit every malloc arena a thread creates reserves 64 MB of
 * address space; one arena keeps ulimit -v for the data. */
static void tune_malloc(void)
{
    struct rlimit rl;
    if ((getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) ||
        (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY))
        mallopt(M_ARENA_MAX, 1);
}

/* The order of lines when the caller names none: whole lines by -n, with the
 * configuration's -r, -u and -z. */
static void default_keyspec(gm_keyspec *ks, const gm_config *cfg)
{
    gm_keyspec_init(ks);
    ks->reverse = cfg->reverse;
    ks->unique = cfg->unique;
    ks->eol = cfg->zero_terminated ? '\0' : '\n';
    gm_keyspec_finish(ks);
}

/* Why a run goes straight to the records path, or NULL when the integer path
 * may serve it (--strict, or whole lines by -n: it hands the run over at the
 * first line that is not a canonical integer). A stable merge is the records
 * path's from the start: the integer merge writes equal keys of several inputs
 * in one round, before a later line of an earlier input could come between. */
static const char *records_reason(gm_op op, const gm_config *cfg)
{
    const gm_keyspec *ks = cfg->keyspec;
    if (cfg->strict)
        return NULL;
    if (!ks->whole_line_numeric)
        return "keys in fields, or an order other than -n";
    if (op == GM_OP_MERGE && ks->stable)
        return "a stable merge";
    return NULL;
}

int gm_run(gm_op c, const gm_config *given, char *const *names, int nnames, gm_status *st)
{
    gm_config config = *given, *cfg = &config;
    gm_keyspec dflt;
    if (!cfg->keyspec) {
        default_keyspec(&dflt, cfg);
        cfg->keyspec = &dflt;
    }
    double started = cfg->started > 0 ? cfg->started : gm_now();
    static char *const stdin_name[] = { "-" };
    if (nnames == 0) {
        names = stdin_name;
        nnames = 1;
    }
    int rc = gm_cleanup_install(st); /* temporary files never outlive a signal */
    if (rc)
        return rc;
    if (cfg->compress_program)
        gm_compress_signals(1); /* PROG's children waited for, its EPIPE reported */
    tune_malloc();
    gm_fill_std_fds();
    gm_engine_choose(cfg);
    gm_stream_stats stats;
    memset(&stats, 0, sizeof stats);
    double streaming = gm_now();
    gm_progress_begin(cfg, c);
    const char *why = records_reason(c, cfg);
    int gpu_records = why && gm_records_gpu_takes(c, cfg->keyspec);
    if (why) { /* --device=gpu without a usable GPU fails here too: at once where the
                  records path never sorts on the GPU, else at the first chunk's sort,
                  CUDA's start-up overlapping the reading meanwhile */
        int done = 0;
        rc = cfg->device == GM_DEVICE_GPU ? gm_engine_prepare(cfg, !gpu_records, &done, st)
                                          : GM_OK;
    }
    /* The run's numbers, once, before any work (after CUDA's start-up where the
     * records path waits for it: the descriptors free are those it leaves). */
    gm_plan plan;
    gm_plan_make(&plan, c, cfg, nnames);
    char path[160];
    if (why) {
        snprintf(path, sizeof path, "lines with their keys (%s)", why);
        if (cfg->device == GM_DEVICE_GPU && gpu_records)
            snprintf(plan.engine, sizeof plan.engine, "gpu (--device=gpu: regular files "
                     "sorted in device memory, whole or by ranges of keys, else each chunk's "
                     "sort; merges of runs on the CPU)");
        else if (cfg->device == GM_DEVICE_AUTO && gpu_records && gm_gpu_driver_loaded())
            snprintf(plan.engine, sizeof plan.engine, "auto (where a driver is loaded, regular "
                     "files of %.0f MB or more sorted in device memory, or a chunk of %.0f MB "
                     "or more on the GPU, on %d threads; else the CPU)",
                     (double)gm_engine_records_least(plan.records.threads, 1) / 1e6,
                     (double)gm_engine_records_least(plan.records.threads, 0) / 1e6,
                     plan.records.threads);
        else
            snprintf(plan.engine, sizeof plan.engine, "cpu (%s)", cfg->device == GM_DEVICE_GPU
                     ? "the GPU sorts lines by a first key it encodes: not by -g or -R, nor "
                       "numbers, months or versions folded or with bytes skipped"
                     : "lines with their keys are sorted on the CPU");
    } else {
        snprintf(path, sizeof path, "whole lines as integers (%s)", cfg->strict ? "--strict"
                 : "every line a canonical integer, by the whole line's -n");
    }
    plan.path = path;
    if (!rc && !why)
        rc = gm_stream_run(c, cfg, &plan, names, nnames, &stats, st);
    gm_records_said said = { 0, 0, 0, 0 };
    if (!rc && why)
        rc = gm_records_run(c, cfg, &plan, names, nnames, &said, st);
    double took = 0, teardown = cfg->last ? gm_engine_release(&took) : 0;
    teardown += gm_close_later_join(); /* a replaced -o file's release */
    gm_progress_end(rc == GM_OK);
    if (cfg->compress_program)
        gm_compress_signals(0);
    if ((!rc || rc == GM_DISORDER) && !why && !stats.handed_over) /* a check reports too */
        gm_report_stream(cfg, c, &stats, streaming - started, teardown, took,
                         gm_now() - started);
    if ((!rc || rc == GM_DISORDER) && why)
        gm_report_end(cfg, said.touched, said.teardown_begun, said.cleanup, teardown, took,
                      said.stages, gm_now() - started);
    return rc;
}
