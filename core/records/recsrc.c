/*
 * recsrc.c - the inputs of a records run (records_impl.h): each opened before any
 * output (a missing one stops the run first), closed until its turn where the
 * descriptors run short and opened again by name then (pipes and devices stay
 * open: they would lose what they hold), an input that is also an output written
 * in place copied aside first, as sort does; and how a merge reads its sources.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "write/output.h"
#include "plan/plan.h"
#include "records/records_impl.h"
#include "base/util.h"
#include "read/numwarn.h"

/* A merged or checked source's block, at most, per two threads
 * (gm_plan_thread_scale): a round reads, splits, checks, merges and gathers in
 * fork-joins on all the threads, so on many cores larger blocks keep those joins
 * few beside the work, and on few cores 4 MB blocks stay in the cache
 * (bench/RESULTS.md, "Keyed merge and check"). */
enum { MERGE_BLOCK = 4 << 20 };

size_t gm_records_clamp(size_t v, size_t lo, size_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}


int gm_records_src_open(struct rec_run *r, int i, gm_status *st)
{
    if (r->open[i])
        return GM_OK;
    int rc = gm_lines_open(&r->srcs[i], r->names[i], r->ks->eol, r->drained[i], st);
    if (!rc && r->ranges && r->ranges[2 * i + 1] >= 0 && !r->drained[i])
        rc = gm_lines_range(&r->srcs[i], r->ranges[2 * i], r->ranges[2 * i + 1], st);
    if (rc)
        gm_lines_close(&r->srcs[i]);
    else
        r->open[i] = 1;
    r->srcs[i].line_max = r->budget; /* a line must fit in the memory budget */
    gm_numwarn_watch(&r->srcs[i], r->cfg);
    return rc;
}

void gm_records_src_close(struct rec_run *r, int i)
{
    if (r->open[i])
        gm_lines_close(&r->srcs[i]);
    r->open[i] = 0;
    r->drained[i] = 1; /* read: a later open reads nothing */
}

/* ------------------------------------------------------------------ merge */

gm_recmerge_opts gm_records_merge_opts(const struct rec_run *r, int k, int check)
{
    size_t most = MERGE_BLOCK * gm_plan_thread_scale(r->nthreads);
    size_t block = gm_records_clamp(r->budget / (4 * (size_t)(k + 1)), GM_RECORDS_MIN_BLOCK, most);
    return (gm_recmerge_opts){ r->ks, block, check, r->nthreads };
}

/* Merges inputs [from, from + k) into sink. */
/* An output written in place that is also an input of a merge would be
 * overwritten before it is read: such an input is copied to a temporary file
 * first, as sort does. A sort reads every input before its first byte. */
int gm_records_spool_aliases(struct rec_run *r, const gm_output *out, gm_status *st)
{
    if (out->file.kind != GM_OUTFILE_IN_PLACE)
        return GM_OK;
    for (int i = 0; i < r->nnames; i++) {
        gm_lines_src *s = &r->srcs[i];
        if (!r->open[i] || s->done || !gm_output_is_input(out, s->fd))
            continue;
        int fd;
        int rc = gm_temp_create(r->cfg->tmpdir, "gpumerge-in.", &fd, &r->spooled[i], st);
        if (rc)
            return rc;
        char buf[1 << 16];
        ssize_t got;
        while ((got = read(s->fd, buf, sizeof buf)) != 0) {
            if (got < 0 && errno == EINTR)
                continue;
            if (got < 0 || gm_write_all(fd, buf, (size_t)got) != 0) {
                int err = errno;
                close(fd);
                return gm_fail(st, GM_EIO, "cannot read: %s: %s", s->shown, strerror(err));
            }
        }
        lseek(fd, 0, SEEK_SET);
        char shown[sizeof s->shown];
        memcpy(shown, s->shown, sizeof shown);
        gm_lines_close(s);
        gm_lines_open_fd(s, fd, 1, shown, r->ks->eol);
        gm_numwarn_watch(s, r->cfg);
    }
    return GM_OK;
}

/* Closes input i until its turn, when it is opened again by name. */
static void close_for_now(struct rec_run *r, int i)
{
    gm_lines_close(&r->srcs[i]);
    r->open[i] = 0;
}

/* A stream held past the first pass takes the descriptor of the last regular
 * input of that pass still open, closed now until its batch comes, so that
 * opening the inputs after it finds one free. */
static void give_way(struct rec_run *r, int keep)
{
    for (int i = keep - 1; i >= 0; i--) {
        if (r->open[i] && r->srcs[i].fd > STDIN_FILENO && r->srcs[i].regular) {
            close_for_now(r, i);
            return;
        }
    }
}

/* Opens every input (a missing one ends the run before any output). *bytes: the
 * regular inputs' sizes, which bound the output. */
int gm_records_open_inputs(struct rec_run *r, uint64_t *bytes, gm_status *st)
{
    /* Those of a merge's first pass stay open (all of them when they are one
     * pass, as an input that is the output needs), and as many of a sort's or a
     * check's as descriptors allow; the rest are closed and opened again by name
     * when their turn comes, but for pipes and devices (streams), which would lose
     * what they hold: they stay open, and take their descriptors from every pass. */
    int keep = r->op == GM_OP_MERGE ? r->fan_in : r->fds, have_stdin = 0, streams = 0;
    *bytes = 0;
    for (int i = 0; i < r->nnames; i++) {
        if (strcmp(r->names[i], "-") == 0) {
            r->drained[i] = (unsigned char)have_stdin; /* a second "-" reads nothing */
            have_stdin = 1;
        }
        int rc = gm_records_src_open(r, i, st);
        if (rc)
            return rc;
        if (r->srcs[i].regular && !r->drained[i])
            *bytes += (uint64_t)r->srcs[i].left + 1;
        if (i >= keep && r->srcs[i].fd > STDIN_FILENO) {
            if (!r->srcs[i].regular) {
                streams++;
                give_way(r, keep < r->nnames ? keep : r->nnames);
            } else
                close_for_now(r, i);
        }
    }
    if (streams > 0) {
        r->fan_in = r->fan_in - streams > 2 ? r->fan_in - streams : 2;
        int held = r->op == GM_OP_MERGE ? r->fan_in : r->fds - streams;
        for (int i = held > 0 ? held : 0; i < keep && i < r->nnames; i++)
            if (r->open[i] && r->srcs[i].fd > STDIN_FILENO && r->srcs[i].regular)
                close_for_now(r, i);
    }
    return GM_OK;
}

