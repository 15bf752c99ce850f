/*
 * localsort.c - a rank's own sort (see gmpi.h): its byte range of the inputs
 * sorted into its sorted spool, by one of two ways that give the same bytes.
 *
 *   records  blocks of lines read and split into records (core/read/lines.h) until
 *            they fill the budget; a full chunk sorted (core/sort/recsort.h) and
 *            written as a temporary run; at the end the chunk alone gathered
 *            into the spool, or the runs merged into it (core/runs/recrun.h): the
 *            records path of one process, on the range
 *   gm_run   where the integer path may serve the order (whole lines by -n:
 *            canonical integers are parsed into keys, far faster than records)
 *            or the rank has a GPU to use (--device=gpu, or auto on a node with
 *            NVIDIA devices), and --strict: the range's part of each input
 *            sorted where it lies by the one-process program (gm_run with
 *            gm_config's ranges: the integer path and the GPU's text path, or
 *            the records path) into a temporary file, which becomes the
 *            spool; a message names the input and its line there
 *
 * Both keep -u's first line of equal keys and -s's input order, so the
 * spool's order is the input order of equal lines within the rank.
 */
#define _GNU_SOURCE
#include "gmpi.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/base/cleanup.h"
#include "../core/runs/recrun.h"
#include "../core/sort/recsort.h"
#include "../core/base/util.h"

enum { MIN_BLOCK = 64 << 10, OUT_BUFFER = 4 << 20, DEFAULT_FAN_IN = 16 };

/* The rank's lines while they are read and sorted. */
struct sorter {
    gm_mpi *m;                /* the job; gm_mpi_local_sort */
    gm_lines_block **blocks;  /* the chunk's blocks, referenced; chunk_add, chunk_drop */
    int nblocks, cap;         /* blocks held, and room for; chunk_add */
    size_t bytes;             /* the blocks' bytes, against the budget; chunk_add */
    gm_recs recs;             /* a record per line of the blocks; chunk_add (gm_lines_split) */
    gm_recrun *runs;          /* the runs spilled so far; spill */
    int nruns, runs_cap;      /* runs written, and room for; spill */
};

static void chunk_drop(struct sorter *so)
{
    for (int i = 0; i < so->nblocks; i++)
        gm_lines_block_unref(so->blocks[i]);
    so->nblocks = 0;
    so->bytes = 0;
    so->recs.n = 0;
}

static void sorter_free(struct sorter *so)
{
    chunk_drop(so);
    free(so->blocks);
    gm_recs_free(&so->recs);
    for (int i = 0; i < so->nruns; i++)
        gm_tmpfile_remove(&so->runs[i]);
    free(so->runs);
}

static int chunk_add(struct sorter *so, gm_lines_block *b, gm_status *st)
{
    if (so->nblocks == so->cap) {
        int cap = so->cap ? 2 * so->cap : 16;
        gm_lines_block **bl = realloc(so->blocks, (size_t)cap * sizeof *bl);
        if (!bl) {
            gm_lines_block_unref(b);
            return gm_fail(st, GM_ENOMEM, "out of memory sorting");
        }
        so->blocks = bl;
        so->cap = cap;
    }
    so->blocks[so->nblocks++] = b;
    so->bytes += b->len;
    return gm_lines_split(so->m->ks, b, &so->recs, so->m->nthreads, st);
}

static int chunk_sort(struct sorter *so, gm_status *st)
{
    gm_recs *v = &so->recs;
    if (v->n < 2)
        return GM_OK;
    /* stable under -s and -u, where the order of equal keys is the output's; the
     * budget counts a scratch array as large as the records */
    return gm_recsort(so->m->ks, v->r, v->n, so->m->nthreads, SIZE_MAX, st);
}

/* The chunk sorted into a new run. */
static int spill(struct sorter *so, gm_status *st)
{
    gm_mpi *m = so->m;
    if (so->nruns == so->runs_cap) {
        int n = so->runs_cap ? 2 * so->runs_cap : 16;
        gm_recrun *more = realloc(so->runs, (size_t)n * sizeof *more);
        if (!more)
            return gm_fail(st, GM_ENOMEM, "out of memory sorting");
        so->runs = more;
        so->runs_cap = n;
    }
    int rc = chunk_sort(so, st);
    if (!rc) {
        gm_tmpspec temps = { m->cfg->tmpdir, m->cfg->compress_program };
        rc = gm_recrun_write(m->ks, so->recs.r, so->recs.n, m->ks->unique, &temps,
                             m->nthreads, 0, &so->runs[so->nruns], st);
        so->nruns++; /* removed later, also when writing failed */
        m->runs++;
    }
    chunk_drop(so);
    return rc;
}

/* Reads the rank's byte range [lo, hi) of the concatenation, spilling runs
 * past the budget. */
static int read_range(struct sorter *so, gm_mpi_input *ins, int nins, int64_t lo, int64_t hi,
                      gm_status *st)
{
    gm_mpi *m = so->m;
    size_t want = m->budget / 8 > MIN_BLOCK ? m->budget / 8 : MIN_BLOCK;
    int rc = GM_OK;
    for (int i = 0; i < nins && !rc; i++) {
        int64_t a = lo > ins[i].base ? lo : ins[i].base;
        int64_t b = hi < ins[i].base + ins[i].size ? hi : ins[i].base + ins[i].size;
        if (a >= b)
            continue;
        gm_lines_src s;
        rc = gm_mpi_src_range(&s, &ins[i], m->ks->eol, a - ins[i].base, b - a, st);
        while (!rc && !s.done) {
            gm_lines_block *blk;
            rc = gm_lines_read(&s, want, 0, m->nthreads, &blk, st);
            if (!rc && blk)
                rc = chunk_add(so, blk, st);
            if (!rc && so->bytes + 2 * so->recs.n * sizeof(gm_rec) > m->budget)
                rc = spill(so, st);
        }
        gm_lines_close(&s);
        m->bytes_read += (double)(b - a);
    }
    return rc;
}

/* The rank's lines, sorted (-u applied), into the spool out. */
static int sort_into(struct sorter *so, gm_mpi_spool *out, gm_status *st)
{
    gm_mpi *m = so->m;
    gm_recsink sink;
    gm_recsink_init(&sink, m->ks, NULL, out->fd, "a temporary file", m->ks->unique,
                    m->nthreads, OUT_BUFFER);
    int rc = GM_OK;
    if (so->nruns == 0) {
        rc = chunk_sort(so, st);
        if (!rc)
            rc = gm_recsink_put_all(&sink, so->recs.r, so->recs.n, st);
    } else {
        if (so->recs.n > 0)
            rc = spill(so, st);
        int fan_in = m->cfg->batch_size >= 2 ? m->cfg->batch_size : DEFAULT_FAN_IN, passes = 0;
        size_t block = m->budget / (4 * (size_t)(fan_in + 1));
        gm_recmerge_opts o = { m->ks, block < MIN_BLOCK ? MIN_BLOCK : block, 0, m->nthreads };
        gm_tmpspec temps = { m->cfg->tmpdir, m->cfg->compress_program };
        if (!rc)
            rc = gm_recrun_merge(&o, so->runs, so->nruns, fan_in, &temps, m->ks->unique,
                                 &sink, &passes, st);
        so->nruns = 0; /* gm_recrun_merge removed them */
    }
    if (!rc)
        rc = gm_recsink_flush(&sink, st);
    out->bytes = sink.bytes;
    gm_recsink_free(&sink);
    chunk_drop(so);
    gm_recs_free(&so->recs);
    return rc;
}

/* ------------------------------------------------------------------ gm_run */

/* Rank 0's messages of its own sort, said as such. */
static void local_say(void *ctx, gm_message kind, const char *text)
{
    const gm_config *cfg = ctx;
    char buf[1200];
    snprintf(buf, sizeof buf, "rank 0, its own sort: %s", text);
    cfg->message(cfg->message_ctx, kind, buf);
}

int gm_mpi_by_gm_run(gm_mpi *m, gm_op op, const int *fds, const int64_t *ranges, int n,
                     gm_mpi_spool *out, gm_status *st)
{
    char *path = NULL, (*names)[32] = calloc((size_t)n + 1, sizeof *names);
    char **ptr = calloc((size_t)n + 1, sizeof *ptr);
    int fd = -1;
    int rc = names && ptr ? gm_temp_create(m->cfg->tmpdir, "gpumerge-mpi.", &fd, &path, st)
                          : gm_fail(st, GM_ENOMEM, "out of memory");
    if (fd >= 0)
        close(fd);
    if (!rc) {
        for (int i = 0; i < n; i++) {
            snprintf(names[i], sizeof names[i], "/proc/self/fd/%d", fds[i]);
            ptr[i] = names[i];
        }
        gm_config c = *m->cfg;
        c.output = path;
        c.threads = m->nthreads;
        c.buffer_size = m->budget / 2; /* beside the exchange's spools */
        c.message = m->rank == 0 && c.message ? local_say : NULL;
        c.message_ctx = (void *)m->cfg;
        c.ranges = ranges;
        c.last = op == GM_OP_MERGE; /* the sort's CUDA context serves the merge */
        rc = n ? gm_run(op, &c, ptr, n, st) : GM_OK;
    }
    free(names);
    free(ptr);
    if (!rc && (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        rc = gm_fail(st, GM_EIO, "cannot read: a temporary file: %s", strerror(errno));
    if (rc) {
        if (path)
            gm_temp_remove(path);
        free(path);
        return rc;
    }
    memset(out, 0, sizeof *out);
    out->fd = fd;
    out->path = path;
    out->bytes = (int64_t)lseek(fd, 0, SEEK_END);
    return GM_OK;
}

int gm_mpi_run_ranges(gm_mpi *m, gm_op op, const gm_mpi_input *ins, int nins,
                      const int64_t *lo, const int64_t *hi, gm_mpi_spool *out, gm_status *st)
{
    int *fds = calloc((size_t)nins + 1, sizeof *fds), *which = calloc((size_t)nins + 1, sizeof *which);
    int64_t *ranges = calloc(2 * (size_t)nins + 1, sizeof *ranges);
    if (!fds || !which || !ranges) {
        free(fds);
        free(which);
        free(ranges);
        return gm_fail(st, GM_ENOMEM, "out of memory");
    }
    int k = 0;
    for (int i = 0; i < nins; i++) {
        if (lo[i] >= hi[i])
            continue;
        fds[k] = ins[i].fd;
        ranges[2 * k] = lo[i];
        ranges[2 * k + 1] = hi[i];
        which[k++] = i;
        m->bytes_read += (double)(hi[i] - lo[i]);
    }
    int rc = gm_mpi_by_gm_run(m, op, fds, ranges, k, out, st);
    for (int j = 0; rc && j < k; j++) { /* a message about a range is one about its input */
        char name[64];
        snprintf(name, sizeof name, "/proc/self/fd/%d", fds[j]);
        gm_mpi_rename(st, name, &ins[which[j]], m->ks->eol, lo[which[j]]);
    }
    free(fds);
    free(which);
    free(ranges);
    return rc;
}

/* The rank's range of the concatenation by gm_run, each input's part of it read
 * where it lies. */
static int sort_by_gm_run(gm_mpi *m, gm_mpi_input *ins, int nins, int64_t lo, int64_t hi,
                          gm_mpi_spool *sorted, gm_status *st)
{
    int64_t *a = calloc(2 * (size_t)nins + 1, sizeof *a), *b = a ? a + nins : NULL;
    if (!a)
        return gm_fail(st, GM_ENOMEM, "out of memory");
    for (int i = 0; i < nins; i++) {
        int64_t end = ins[i].base + ins[i].size;
        a[i] = (lo > ins[i].base ? lo : ins[i].base) - ins[i].base;
        b[i] = (hi < end ? hi : end) - ins[i].base;
    }
    int rc = gm_mpi_run_ranges(m, GM_OP_SORT, ins, nins, a, b, sorted, st);
    free(a);
    return rc;
}

/* Whether the one-process program sorts the range: when its integer path may
 * serve the order (whole lines by -n, --strict), or the rank has a GPU it may
 * use. */
int gm_mpi_use_gm_run(const gm_mpi *m)
{
    return m->cfg->strict || m->ks->whole_line_numeric || m->cfg->device == GM_DEVICE_GPU ||
           (m->cfg->device == GM_DEVICE_AUTO && access("/dev/nvidiactl", F_OK) == 0);
}

int gm_mpi_local_sort(gm_mpi *m, gm_mpi_input *ins, int nins, int64_t lo, int64_t hi,
                      gm_mpi_spool *sorted, gm_status *st)
{
    if (gm_mpi_use_gm_run(m))
        return sort_by_gm_run(m, ins, nins, lo, hi, sorted, st);
    struct sorter so;
    memset(&so, 0, sizeof so);
    so.m = m;
    double t0 = gm_now();
    int rc = read_range(&so, ins, nins, lo, hi, st);
    m->t_read += gm_now() - t0;
    if (!rc)
        rc = gm_mpi_spool_open(m, sorted, hi - lo, st);
    if (!rc)
        rc = sort_into(&so, sorted, st);
    sorter_free(&so);
    return rc;
}
