/*
 * records.c - gm_records_run (records.h): merge, sort and check of any lines by a
 * gm_keyspec. The inputs are all opened before anything is written (a missing
 * one stops the run first), the output is opened next (core/output: safe -o).
 *
 *   sort   recchunk.c: chunks of lines sorted in memory or spilled as runs.
 *   merge  the inputs are merged as they are read (recmerge.c), each checked in
 *          order; more inputs than the fan-in are merged in batches into runs
 *          first, as sort -m does.
 *   check  each input is read and checked in order; the first disorder ends it.
 */
#define _GNU_SOURCE
#include "records/records.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "device/engine.h"
#include "write/output.h"
#include "records/records_impl.h"
#include "runs/recrun.h"
#include "plan/plan.h"
#include "base/progress.h"
#include "plan/report.h"
#include "base/util.h"
#include "read/numwarn.h"

static int merge_inputs(struct rec_run *r, int from, int k, gm_recsink *sink, gm_status *st)
{
    gm_lines_src **ptr = calloc((size_t)k, sizeof *ptr);
    int rc = ptr ? GM_OK : gm_fail(st, GM_ENOMEM, "out of memory merging");
    for (int i = 0; i < k && !rc; i++) {
        rc = gm_records_src_open(r, from + i, st);
        ptr[i] = &r->srcs[from + i];
    }
    gm_recmerge_opts o = gm_records_merge_opts(r, k, 1);
    if (!rc)
        rc = gm_recmerge(&o, ptr, k, sink, st);
    for (int i = 0; i < k; i++)
        gm_records_src_close(r, from + i);
    free(ptr);
    return rc;
}

static int merge_op(struct rec_run *r, gm_status *st)
{
    if (r->nnames <= r->fan_in)
        return merge_inputs(r, 0, r->nnames, r->out, st);
    int nruns = (r->nnames + r->fan_in - 1) / r->fan_in, made = 0, rc = GM_OK;
    gm_recrun *runs = calloc((size_t)nruns, sizeof *runs);
    if (!runs)
        return gm_fail(st, GM_ENOMEM, "out of memory merging");
    for (int g = 0; g < r->nnames && !rc; g += r->fan_in) {
        int k = r->nnames - g < r->fan_in ? r->nnames - g : r->fan_in;
        rc = gm_tmpfile_create(&runs[made], &r->temps, st);
        if (rc)
            break;
        gm_recrun *run = &runs[made++];
        gm_recsink sink;
        gm_recsink_init(&sink, r->ks, NULL, run->fd, run->shown, r->ks->unique, r->nthreads,
                        gm_records_out_buffer(r->budget));
        rc = merge_inputs(r, g, k, &sink, st);
        if (!rc)
            rc = gm_recsink_flush(&sink, st);
        gm_recsink_free(&sink);
        rc = gm_tmpfile_end(run, sink.bytes, rc, st);
        gm_progress_run_written();
    }
    r->runs += made;
    r->passes++;
    if (rc) {
        for (int i = 0; i < made; i++)
            gm_tmpfile_remove(&runs[i]);
    } else {
        gm_recmerge_opts o = gm_records_merge_opts(r, r->fan_in, 0);
        rc = gm_recrun_merge(&o, runs, made, r->fan_in, &r->temps, r->ks->unique, r->out,
                             &r->passes, st);
    }
    free(runs);
    return rc;
}

/* ------------------------------------------------------------------ check */

static int check_op(struct rec_run *r, gm_status *st)
{
    /* each input is read as the one source of a merge, its order checked */
    gm_recmerge_opts o = gm_records_merge_opts(r, 1, 1);
    int rc = GM_OK;
    for (int i = 0; i < r->nnames && !rc; i++) {
        rc = gm_records_src_open(r, i, st);
        if (!rc)
            rc = gm_reccheck(&o, &r->srcs[i], r->ks->unique, st);
        gm_records_src_close(r, i);
    }
    return rc;
}

/* ------------------------------------------------------------------ entry */

/* The inputs' bytes for --progress, or -1 when a pipe is among them. */
static int64_t inputs_total(const struct rec_run *r)
{
    int64_t total = 0;
    for (int i = 0; i < r->nnames; i++) {
        if (r->drained[i])
            continue;
        if (!r->srcs[i].regular)
            return -1;
        total += r->srcs[i].left;
    }
    return total;
}

/* Opens the inputs, says the plan (the caller's, else one made now) and runs. */
static int run_op(struct rec_run *r, const gm_plan *plan, gm_status *st)
{
    uint64_t bytes;
    double opening = gm_now();
    int rc = gm_records_open_inputs(r, &bytes, st);
    r->open_s += gm_now() - opening;
    if (!rc)
        gm_progress_total(inputs_total(r));
    r->in_bytes = rc ? 0 : bytes;
    if (!rc && r->cfg->verbose) {
        gm_plan p;
        if (plan)
            p = *plan;
        else
            gm_plan_make(&p, r->op, r->cfg, r->nnames);
        p.total_bytes = (int64_t)bytes;
        p.records.fan_in = r->fan_in;
        gm_plan_say(&p, r->cfg, 1);
    }
    if (rc || r->op == GM_OP_CHECK)
        return rc ? rc : check_op(r, st);
    gm_output out;
    gm_writer w;
    gm_recsink sink;
    opening = gm_now();
    rc = gm_output_open_sized(&out, r->cfg->output, bytes, r->cfg->tmpdir, r->output_late,
                              st);
    r->open_s += gm_now() - opening;
    if (rc)
        return rc;
    gm_writer_init(&w, &out, 0, r->nthreads);
    w.eol = r->ks->eol;
    gm_recsink_init(&sink, r->ks, &w, -1, out.shown, r->ks->unique, r->nthreads,
                    gm_records_out_buffer(r->budget));
    r->out = &sink;
    if (r->op == GM_OP_MERGE)
        rc = gm_records_spool_aliases(r, &out, st);
    /* The output is no longer than the regular inputs: its space is reserved on a
     * thread of its own while they are read and sorted, as the integer path does. */
    if (!rc && bytes > 0)
        rc = gm_writer_ahead(&w, bytes, 0, st);
    if (!rc)
        rc = r->op == GM_OP_MERGE ? merge_op(r, st) : gm_records_sort(r, st);
    if (!rc)
        rc = gm_recsink_flush(&sink, st);
    gm_recsink_free(&sink);
    r->out = NULL; /* the sink lives in this call only */
    gm_status ignored;
    int frc = gm_writer_finish(&w, rc ? &ignored : st);
    if (!rc)
        rc = frc;
    if (!rc)
        rc = gm_output_commit(&out, st);
    if (rc)
        gm_output_abort(&out);
    return rc;
}

/* A run's numbers from the plan (made here from the configuration when plan is
 * NULL: a run handed over part-way plans with the descriptors free then); its
 * arrays for nnames inputs. Returns GM_OK or GM_ENOMEM. */
static int rec_init(struct rec_run *r, gm_op op, const gm_config *cfg, const gm_plan *plan,
                    char *const *names, int nnames, gm_status *st)
{
    memset(r, 0, sizeof *r);
    gm_plan made;
    if (!plan) {
        gm_plan_make(&made, op, cfg, nnames);
        plan = &made;
    }
    r->cfg = cfg;
    r->temps = (gm_tmpspec){ cfg->tmpdir, cfg->compress_program };
    r->ks = cfg->keyspec;
    r->op = op;
    r->nthreads = plan->records.threads;
    r->budget = plan->budget;
    /* A merge pass holds its fan-in of inputs or runs open beside the spare;
     * every other input and run is closed until its pass. */
    r->fan_in = plan->records.fan_in;
    r->fds = plan->records.fds;
    r->output_late = plan->output_late;
    r->names = names;
    r->nnames = nnames;
    r->ranges = cfg->ranges;
    r->srcs = calloc((size_t)nnames, sizeof *r->srcs);
    r->open = calloc((size_t)nnames, 1);
    r->drained = calloc((size_t)nnames, 1);
    r->spooled = calloc((size_t)nnames, sizeof *r->spooled);
    if (!r->srcs || !r->open || !r->drained || !r->spooled)
        return gm_fail(st, GM_ENOMEM, "out of memory");
    return GM_OK;
}

static void rec_free(struct rec_run *r)
{
    for (int i = 0; r->open && i < r->nnames; i++)
        gm_records_src_close(r, i);
    for (int i = 0; r->spooled && i < r->nnames; i++) {
        if (r->spooled[i])
            gm_temp_remove(r->spooled[i]);
        free(r->spooled[i]);
    }
    free(r->srcs);
    free(r->open);
    free(r->drained);
    free(r->spooled);
}

/* -v's report of a records run (report.h): its runs, its stages from the
 * start-up (main's first line to the run, where the front end says when that
 * was; handed: the integer path ran before it) and, where said is NULL, the
 * clean-up and the total; else said gets what the caller needs to say those. */
static void say_run(const struct rec_run *r, double started, double cleanup, int handed,
                    gm_records_said *said)
{
    const gm_config *cfg = r->cfg;
    int background;
    int touched = r->gpu_chunks || r->gpu_resident || gm_engine_startup(&background) > 0;
    if (said)
        *said = (gm_records_said){ 0, cleanup, touched, gm_records_releases_device(r) };
    if (!cfg->verbose)
        return;
    double now = gm_now(), took = now - started;
    if (r->op != GM_OP_CHECK)
        gm_report_runs(cfg, r->runs, r->passes);
    double startup = cfg->started > 0 && started > cfg->started ? started - cfg->started : 0;
    gm_report_row(cfg, "start-up", startup, "%s to the run%s",
                  cfg->started > 0 ? "main's first line" : "the call",
                  handed ? " here, the integer path's part before it among them" : "");
    double rows = startup + r->open_s;
    gm_report_row(cfg, "open", r->open_s, "%s",
                  r->op == GM_OP_CHECK ? "the inputs" : "the inputs and the output");
    if (r->op == GM_OP_SORT) {
        gm_report_row(cfg, "read", r->read, "files read, pipes waited for");
        gm_report_row(cfg, "parse", r->split, "lines split, keys found");
        if (r->gpu_resident)
            gm_report_row(cfg, "sort", r->sort, "the lines sorted on the GPU in its memory "
                          "(device %.3f s: host to device %.3f, kernels %.3f, device to host "
                          "%.3f; ties on the CPU %.3f s)", r->gpu_device, r->gpu_h2d,
                          r->gpu_kernel, r->gpu_d2h, r->gpu_ties);
        else if (r->gpu_chunks)
            gm_report_row(cfg, "sort", r->sort, "%d chunk%s sorted on the GPU (device %.3f s: "
                          "host to device %.3f, kernels %.3f, device to host %.3f; ties on the "
                          "CPU %.3f s)", r->gpu_chunks, r->gpu_chunks == 1 ? "" : "s",
                          r->gpu_device, r->gpu_h2d, r->gpu_kernel, r->gpu_d2h, r->gpu_ties);
        else
            gm_report_row(cfg, "sort", r->sort, "chunks sorted on %d thread%s", r->nthreads,
                          r->nthreads == 1 ? "" : "s");
        rows += r->read + r->split + r->sort;
        if (r->runs > 0) {
            gm_report_row(cfg, "spill", r->spill, "temporary runs written");
            gm_report_row(cfg, "merge", r->merge, "the runs merged into the output");
            rows += r->spill + r->merge;
        } else {
            gm_report_row(cfg, "write", r->write, r->gpu_resident
                          ? "the sorted lines from the device into the output"
                          : "the lines gathered into the output");
            rows += r->write;
        }
    } else {
        /* reading, splitting, comparing and writing run at once on every thread */
        double all = took - r->open_s > 0 ? took - r->open_s : 0;
        gm_report_row(cfg, r->op == GM_OP_MERGE ? "merge" : "check", all,
                      "read, split, %s on %d thread%s", r->op == GM_OP_MERGE
                      ? "checked, merged and written" : "checked", r->nthreads,
                      r->nthreads == 1 ? "" : "s");
        rows += all;
    }
    if (said) {
        said->stages = rows;
        return;
    }
    double total = cfg->started > 0 ? now - cfg->started : took;
    gm_report_end(cfg, touched, 0, cleanup, 0, 0, rows, total);
}

/* The run's end: its buffers freed (timed, for -v's clean-up), --progress's last
 * line, then the report. */
static void finish_run(struct rec_run *r, int rc, double started, int handed,
                       gm_records_said *said)
{
    double freeing = gm_now();
    rec_free(r);
    double cleanup = gm_now() - freeing;
    gm_progress_end(rc == GM_OK);
    say_run(r, started, cleanup, handed, said);
}

int gm_records_run(gm_op op, const gm_config *cfg, const gm_plan *plan, char *const *names,
                   int nnames, gm_records_said *said, gm_status *st)
{
    static char *const stdin_name[] = { "-" };
    if (nnames == 0) {
        names = stdin_name;
        nnames = 1;
    }
    double started = gm_now();
    struct rec_run r;
    int rc = rec_init(&r, op, cfg, plan, names, nnames, st);
    if (!rc)
        rc = run_op(&r, plan, st);
    finish_run(&r, rc, started, 0, said);
    return rc;
}

/* The sink's -u memory: the line last written (a copy, with its terminator). */
static int seed_last(gm_recsink *k, const gm_keyspec *ks, const char *last, size_t len,
                     gm_status *st)
{
    k->last = malloc(len + 1);
    if (!k->last)
        return gm_fail(st, GM_ENOMEM, "out of memory merging");
    memcpy(k->last, last, len);
    k->last[len] = (unsigned char)ks->eol;
    k->last_cap = len + 1;
    int exact = 0;
    k->last_rec.prefix = gm_line_prefix(ks, k->last, len, &exact);
    k->last_rec.ref = gm_rec_make_ref(k->last, len, exact);
    k->have_last = 1;
    return GM_OK;
}

int gm_records_continue(gm_op op, const gm_config *cfg, gm_rec_source *src, int n,
                        gm_writer *w, const char *last, size_t last_len, gm_status *st)
{
    double started = gm_now();
    char **names = calloc((size_t)n + 1, sizeof *names);
    int64_t *ranges = cfg->ranges ? calloc(2 * (size_t)n + 1, sizeof *ranges) : NULL;
    if (cfg->ranges && !ranges) {
        free(names);
        names = NULL;
    }
    struct rec_run r;
    int rc = names ? rec_init(&r, op, cfg, NULL, names, n, st)
                   : gm_fail(st, GM_ENOMEM, "out of memory");
    if (!rc)
        r.ranges = ranges; /* the sources' own, not the inputs' */
    for (int i = 0; ranges && i < n; i++) {
        ranges[2 * i] = src[i].start;
        ranges[2 * i + 1] = src[i].end;
    }
    for (int i = 0; i < n; i++) {
        if (names)
            names[i] = (char *)src[i].name;
        if (!rc && src[i].fd >= 0) {
            char shown[512];
            gm_quote(src[i].name, shown, sizeof shown);
            gm_lines_open_fd(&r.srcs[i], src[i].fd, src[i].own_fd, shown, cfg->keyspec->eol);
            if (src[i].end >= 0)
                gm_lines_limit(&r.srcs[i], src[i].end);
            r.srcs[i].input = 1;
            r.srcs[i].line_max = r.budget;
            gm_numwarn_watch(&r.srcs[i], cfg);
            r.open[i] = 1;
        } else if (src[i].own_fd) {
            close(src[i].fd);
        }
        if (!rc && src[i].fd < 0 && src[i].head) /* the head needs its source open */
            rc = gm_records_src_open(&r, i, st);
        if (!rc) {
            r.srcs[i].line0 = src[i].line0;
            r.srcs[i].carry = (unsigned char *)src[i].head; /* read before the descriptor */
            r.srcs[i].carry_len = r.srcs[i].carry_cap = src[i].head_len;
        } else {
            free(src[i].head);
        }
        src[i].head = NULL;
    }
    for (int i = 0; !rc && i < n; i++) /* what auto weighs (recchunk.c) */
        if (r.srcs[i].regular)
            r.in_bytes += (uint64_t)r.srcs[i].left + r.srcs[i].carry_len;
    gm_recsink sink;
    if (!rc && op == GM_OP_CHECK) {
        rc = check_op(&r, st);
    } else if (!rc) {
        gm_recsink_init(&sink, r.ks, w, -1, w->shown, r.ks->unique, r.nthreads,
                        gm_records_out_buffer(r.budget));
        if (last && r.ks->unique)
            rc = seed_last(&sink, r.ks, last, last_len, st);
        r.out = &sink;
        if (!rc)
            rc = op == GM_OP_MERGE ? merge_op(&r, st) : gm_records_sort(&r, st);
        if (!rc)
            rc = gm_recsink_flush(&sink, st);
        gm_recsink_free(&sink);
    }
    if (names)
        finish_run(&r, rc, started, 1, NULL);
    free(names);
    free(ranges);
    return rc;
}
