/*
 * streampass.c - the streaming merge's passes (stream.h): inputs up to the
 * fan-in merged in one pass into the output; more merged in batches of the
 * fan-in into temporary runs first, as sort -m does (coreutils' sort.c merges
 * NMERGE at a time), and runs beyond the fan-in merged in passes of groups, the
 * last pass into the output. Only the pass being merged holds descriptors. A line
 * that declines the integer merge hands it to the records path here.
 */
#include <stdlib.h>
#include <string.h>

#include "stream/handover.h"
#include "base/progress.h"
#include "plan/report.h"
#include "stream/stream_impl.h"
#include "base/util.h"

/* Merges runs[0..k) (removing them) into the new run *next, rewound to be read. */
static int merge_group(struct stream *s, gm_runfile *runs, int k, gm_runfile *next,
                       gm_status *st)
{
    memset(next, 0, sizeof *next);
    next->f.fd = -1;
    int rc = gm_run_create(next, &s->temps, st);
    struct source *src = rc ? NULL : calloc((size_t)k, sizeof *src);
    if (!rc && !src)
        rc = gm_fail(st, GM_ENOMEM, "out of memory merging");
    for (int i = 0; i < k && src; i++)
        src[i].run = &runs[i];
    gm_progress_runs_merged(k);
    if (!rc)
        rc = gm_stream_merge_sources(s, src, k, gm_stream_to_run, next, st);
    if (src)
        gm_stream_free_sources(src, k);
    for (int i = 0; i < k; i++)
        gm_run_remove(&runs[i]);
    gm_progress_run_written();
    if (!rc)
        rc = gm_run_rewind(next, st);
    return rc;
}

/* Merges the runs (removing them) into the writer; more than the fan-in are
 * merged in passes, each merging groups of fan_in runs into one new run. */
int gm_stream_merge_runs(struct stream *s, gm_runfile *runs, int nruns, gm_status *st)
{
    int rc = GM_OK, fan_in = s->plan->fan_in;
    while (!rc && nruns > fan_in) {
        int out = 0;
        for (int g = 0; g < nruns; g += fan_in) {
            int k = nruns - g < fan_in ? nruns - g : fan_in;
            gm_runfile next;
            if (!rc) {
                rc = merge_group(s, &runs[g], k, &next, st);
            } else { /* after an error the rest are only removed */
                for (int i = 0; i < k; i++)
                    gm_run_remove(&runs[g + i]);
                memset(&next, 0, sizeof next);
                next.f.fd = -1;
            }
            runs[out++] = next; /* slot out <= g is free: its run is removed */
        }
        s->stats->passes++;
        nruns = out;
    }
    if (!rc) {
        struct source *src = calloc((size_t)nruns, sizeof *src);
        if (!src)
            rc = gm_fail(st, GM_ENOMEM, "out of memory merging");
        for (int i = 0; i < nruns && src; i++)
            src[i].run = &runs[i];
        gm_progress_runs_merged(nruns);
        if (!rc)
            rc = gm_stream_merge_sources(s, src, nruns, gm_stream_to_writer, NULL, st);
        if (src)
            gm_stream_free_sources(src, nruns);
        s->stats->passes++;
    }
    for (int i = 0; i < nruns; i++)
        gm_run_remove(&runs[i]);
    return rc;
}

/* The records merge goes on where a line declined the integer merge. */
static int merge_handover(struct stream *s, struct source *src, int n, gm_status *st)
{
    gm_input **ins = calloc((size_t)n, sizeof *ins);
    gm_keybuf **kbs = calloc((size_t)n, sizeof *kbs);
    int rc = ins && kbs ? GM_OK : gm_fail(st, GM_ENOMEM, "out of memory merging");
    int at = 0;
    for (int i = 0; i < n && !rc; i++) {
        ins[i] = src[i].in;
        kbs[i] = &src[i].kb;
        at = ins[i] == s->declined ? i : at;
    }
    if (!rc) {
        gm_stream_say_records(s, s->declined);
        rc = gm_stream_device_check(s, 1, st);
    }
    s->stats->handed_over = 1;
    if (!rc)
        rc = gm_handover_merge(s->cfg, ins, kbs, n, at, &s->declined_block, s->w, st);
    free(ins);
    free(kbs);
    return rc;
}

/* Merges inputs [g, g + k) into the run *run. */
static int merge_batch(struct stream *s, int g, int k, gm_runfile *run, gm_status *st)
{
    struct source *src = calloc((size_t)k, sizeof *src);
    if (!src)
        return gm_fail(st, GM_ENOMEM, "out of memory merging");
    int rc = GM_OK;
    for (int i = 0; i < k && !rc; i++) {
        src[i].in = &s->ins[g + i];
        rc = gm_stream_input_open(s, g + i, s->plan->merge_block, st);
    }
    if (!rc)
        rc = gm_stream_merge_sources(s, src, k, gm_stream_to_run, run, st);
    for (int i = 0; i < k; i++)
        gm_stream_input_close(s, g + i);
    gm_stream_free_sources(src, k);
    if (!rc)
        rc = gm_run_rewind(run, st);
    return rc;
}

/* --strict: batches of fan_in inputs into runs, then the runs. */
static int merge_batches(struct stream *s, gm_status *st)
{
    int n = s->nnames, fan_in = s->plan->fan_in, rc = GM_OK;
    int nruns = (n + fan_in - 1) / fan_in;
    gm_runfile *runs = calloc((size_t)nruns, sizeof *runs);
    if (!runs)
        return gm_fail(st, GM_ENOMEM, "out of memory merging");
    int made = 0;
    for (int g = 0; g < n && !rc; g += fan_in) {
        rc = gm_run_create(&runs[made], &s->temps, st);
        if (rc)
            break;
        made++;
        s->stats->runs++;
        gm_progress_run_written();
        rc = merge_batch(s, g, n - g < fan_in ? n - g : fan_in, &runs[made - 1], st);
    }
    s->stats->passes++;
    if (rc) {
        for (int i = 0; i < made; i++)
            gm_run_remove(&runs[i]);
    } else {
        rc = gm_stream_merge_runs(s, runs, made, st);
    }
    free(runs);
    return rc;
}

int gm_stream_merge(struct stream *s, gm_status *st)
{
    int n = s->nnames, rc = GM_OK;
    if (n <= s->plan->fan_in) {
        struct source *src = calloc((size_t)n, sizeof *src);
        if (!src)
            return gm_fail(st, GM_ENOMEM, "out of memory merging");
        for (int i = 0; i < n && !rc; i++) {
            src[i].in = &s->ins[i];
            rc = gm_stream_input_open(s, i, s->plan->merge_block, st);
        }
        if (!rc)
            rc = gm_stream_merge_sources(s, src, n, gm_stream_to_writer, NULL, st);
        if (rc == GM_ERECORDS)
            rc = merge_handover(s, src, n, st);
        gm_stream_free_sources(src, n);
        return rc;
    }
    if (!s->cfg->strict) { /* batches of lines are the records path's, from the start */
        gm_report_fact(s->cfg, "path", "records (a merge of more inputs than the fan-in, in "
                       "batches)");
        s->stats->handed_over = 1;
        return gm_handover_start(s->cfg, GM_OP_MERGE, s->ins, s->open, s->names, s->nnames,
                                 s->w, st);
    }
    return merge_batches(s, st);
}
