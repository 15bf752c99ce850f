/*
 * recrun.c - runs of sorted lines in temporary files and their merge in passes
 * (see recrun.h), as coreutils' sort.c merges NMERGE temporary files at a time
 * into a new one until one pass into the output remains (its mergefiles and
 * merge). A run holds plain lines, so it is read back by the same line reader
 * as an input. It is written by the output's writer (output.h), so that on four
 * threads or more its lines are gathered on all of them straight into the file's
 * pages (mapwrite.c), where one thread's write(2) would bound the spill.
 */
#define _GNU_SOURCE
#include "runs/recrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "write/output.h"
#include "base/progress.h"
#include "base/util.h"

enum { RUN_BUFFER = 4 << 20 };

/* A gm_output over the run's file, so that a writer can take it: a file of its
 * own written from its start, as a replacement is. */
static void run_output(gm_output *out, const gm_recrun *run)
{
    memset(out, 0, sizeof *out);
    out->fd = out->file.fd = run->fd;
    out->file.target_fd = -1;
    out->file.kind = GM_OUTFILE_REPLACE;
    snprintf(out->file.shown, sizeof out->file.shown, "%s", run->shown);
    snprintf(out->file.written, sizeof out->file.written, "%s", run->shown);
}

int gm_recrun_write(const gm_keyspec *ks, const gm_rec *r, size_t n, int unique,
                    const gm_tmpspec *temps, int nthreads, size_t buffer, gm_recrun *run,
                    gm_status *st)
{
    int rc = gm_tmpfile_create(run, temps, st);
    if (rc)
        return rc;
    gm_output out;
    run_output(&out, run);
    gm_writer w;
    gm_writer_init(&w, &out, 0, nthreads);
    w.scratch = 1;
    gm_recsink k;
    gm_recsink_init(&k, ks, &w, -1, run->shown, unique, nthreads, buffer ? buffer : RUN_BUFFER);
    rc = gm_recsink_put_all(&k, r, n, st);
    if (!rc)
        rc = gm_recsink_flush(&k, st);
    gm_recsink_free(&k);
    gm_status ignored;
    int frc = gm_writer_finish(&w, rc ? &ignored : st);
    if (!rc)
        rc = frc;
    return gm_tmpfile_end(run, k.bytes, rc, st);
}

/* Merges runs[0, k) into sink. */
static int merge_group(const gm_recmerge_opts *o, gm_recrun *runs, int k, gm_recsink *sink,
                       gm_status *st)
{
    gm_lines_src *src = calloc((size_t)k, sizeof *src);
    gm_lines_src **ptr = calloc((size_t)k, sizeof *ptr);
    int rc = src && ptr ? GM_OK : gm_fail(st, GM_ENOMEM, "out of memory merging");
    for (int i = 0; i < k && !rc; i++) {
        rc = gm_tmpfile_reopen(&runs[i], st);
        if (rc)
            break;
        gm_lines_open_fd(&src[i], runs[i].fd, 1, runs[i].shown, o->ks->eol);
        src[i].run = 1;
        runs[i].fd = -1; /* the source's now */
        ptr[i] = &src[i];
    }
    gm_recmerge_opts ro = *o;
    ro.check_order = 0; /* runs are sorted */
    gm_progress_runs_merged(k);
    if (!rc)
        rc = gm_recmerge(&ro, ptr, k, sink, st);
    gm_status ignored;
    for (int i = 0; src && i < k; i++) { /* each read to its end: PROG -d's status */
        gm_lines_close(&src[i]);
        int crc = gm_tmpfile_close(&runs[i], rc ? &ignored : st);
        if (!rc)
            rc = crc;
    }
    free(src);
    free(ptr);
    return rc;
}

int gm_recrun_merge(const gm_recmerge_opts *o, gm_recrun *runs, int nruns, int fan_in,
                    const gm_tmpspec *temps, int unique, gm_recsink *out, int *passes,
                    gm_status *st)
{
    int rc = GM_OK;
    if (fan_in < 2)
        fan_in = 2;
    while (!rc && nruns > fan_in) {
        int made = 0;
        for (int g = 0; g < nruns; g += fan_in) {
            int k = nruns - g < fan_in ? nruns - g : fan_in;
            gm_recrun next;
            memset(&next, 0, sizeof next);
            next.fd = -1;
            if (!rc)
                rc = gm_tmpfile_create(&next, temps, st);
            if (!rc) {
                gm_recsink sink;
                gm_recsink_init(&sink, o->ks, NULL, next.fd, next.shown, unique, o->nthreads,
                                RUN_BUFFER);
                rc = merge_group(o, &runs[g], k, &sink, st);
                if (!rc)
                    rc = gm_recsink_flush(&sink, st);
                gm_recsink_free(&sink);
                rc = gm_tmpfile_end(&next, sink.bytes, rc, st);
                gm_progress_run_written();
            }
            for (int i = 0; i < k; i++)
                gm_tmpfile_remove(&runs[g + i]);
            runs[made++] = next; /* slot made <= g is free: its run is removed */
        }
        nruns = made;
        (*passes)++;
    }
    if (!rc) {
        rc = merge_group(o, runs, nruns, out, st);
        (*passes)++;
    }
    for (int i = 0; i < nruns; i++)
        gm_tmpfile_remove(&runs[i]);
    return rc;
}
