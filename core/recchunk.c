/*
 * recchunk.c - the records path's sort (gm_records_sort, records_impl.h): blocks
 * of lines are read and split into records until the chunk (its text, its
 * records and what their sort takes) fills the budget (-S); a full chunk is
 * sorted (recsort.c) and written as a run (recrun.c); at the end a chunk alone
 * is sorted in memory and gathered into the output, or the runs are merged with
 * the fan-in in passes, the last into the output, as coreutils' sort.c sorts
 * its buffer and merges its temporary files.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "records_impl.h"
#include "recrun.h"
#include "recsort.h"
#include "util.h"

enum { STREAM_BLOCK = 64 << 20 }; /* a pipe's block, at most */

struct chunk {
    gm_lines_block **blocks;
    int nblocks, cap;
    size_t bytes;
    gm_recs recs;
};

static void chunk_drop(struct chunk *c)
{
    for (int i = 0; i < c->nblocks; i++)
        gm_lines_block_unref(c->blocks[i]);
    c->nblocks = 0;
    c->bytes = 0;
    c->recs.n = 0;
}

/* What the chunk holds and what its sort will take: a scratch array as large as
 * its records (-s, -u), or a bucket's (an unstable sort in place). */
static size_t chunk_memory(const struct chunk *c, const gm_keyspec *ks)
{
    int stable = ks->stable || ks->unique;
    return c->bytes + (stable ? 2 : 1) * c->recs.n * sizeof(gm_rec);
}

static int chunk_add(struct chunk *c, gm_lines_block *b, struct rec_run *r,
                     gm_status *st)
{
    if (c->nblocks == c->cap) {
        int cap = c->cap ? 2 * c->cap : 16;
        gm_lines_block **bl = realloc(c->blocks, (size_t)cap * sizeof *bl);
        if (!bl) {
            gm_lines_block_unref(b);
            return gm_fail(st, GM_ENOMEM, "out of memory sorting");
        }
        c->blocks = bl;
        c->cap = cap;
    }
    c->blocks[c->nblocks++] = b;
    c->bytes += b->len;
    return gm_lines_split(r->ks, b, &c->recs, r->nthreads, st);
}

static int chunk_sort(struct chunk *c, struct rec_run *r, gm_status *st)
{
    double a = gm_now();
    size_t with_scratch = c->bytes + 2 * c->recs.n * sizeof(gm_rec);
    int rc = gm_recsort(r->ks, c->recs.r, c->recs.n, r->nthreads, with_scratch <= r->budget, st);
    r->sort += gm_now() - a;
    return rc;
}

static int spill(struct chunk *c, struct rec_run *r, gm_recrun **runs, int *nruns, int *cap,
                 gm_status *st)
{
    if (*nruns == *cap) {
        int n = *cap ? 2 * *cap : 16;
        gm_recrun *more = realloc(*runs, (size_t)n * sizeof *more);
        if (!more)
            return gm_fail(st, GM_ENOMEM, "out of memory sorting");
        *runs = more;
        *cap = n;
    }
    int rc = chunk_sort(c, r, st);
    if (!rc) {
        rc = gm_recrun_write(r->ks, c->recs.r, c->recs.n, r->ks->unique, r->cfg->tmpdir,
                             r->nthreads, &(*runs)[*nruns], st);
        (*nruns)++; /* removed later, also when writing failed */
    }
    chunk_drop(c);
    r->runs++;
    return rc;
}

int gm_records_sort(struct rec_run *r, gm_status *st)
{
    struct chunk c;
    memset(&c, 0, sizeof c);
    gm_recrun *runs = NULL;
    int nruns = 0, cap = 0, rc = GM_OK;
    size_t want = gm_records_clamp(r->budget / 8, GM_RECORDS_MIN_BLOCK, SIZE_MAX / 4);
    for (int i = 0; i < r->nnames && !rc; i++) {
        rc = gm_records_src_open(r, i, st);
        while (!rc && !r->srcs[i].done) {
            gm_lines_block *b;
            size_t w = r->srcs[i].regular ? want : gm_records_clamp(want, GM_RECORDS_MIN_BLOCK, STREAM_BLOCK);
            double a = gm_now();
            rc = gm_lines_read(&r->srcs[i], w, 0, r->nthreads, &b, st);
            double m = gm_now();
            r->read += m - a;
            if (!rc && b)
                rc = chunk_add(&c, b, r, st);
            r->split += gm_now() - m;
            if (!rc && chunk_memory(&c, r->ks) > r->budget)
                rc = spill(&c, r, &runs, &nruns, &cap, st);
        }
        gm_records_src_close(r, i);
    }
    if (!rc && nruns == 0) {
        /* Everything fits: sorted in memory, no temporary file. The output's
         * space is reserved while it sorts (where it writes with write(2)). */
        gm_recsink_reserve(r->out, c.bytes);
        rc = chunk_sort(&c, r, st);
        double a = gm_now();
        if (!rc)
            rc = gm_recsink_put_all(r->out, c.recs.r, c.recs.n, st);
        r->write += gm_now() - a;
    } else if (!rc) {
        if (c.recs.n > 0)
            rc = spill(&c, r, &runs, &nruns, &cap, st);
        chunk_drop(&c);
        gm_recs_free(&c.recs);
        gm_recmerge_opts o = gm_records_merge_opts(r, r->fan_in, 0);
        if (!rc)
            rc = gm_recrun_merge(&o, runs, nruns, r->fan_in, r->cfg->tmpdir, r->ks->unique,
                                 r->out, &r->passes, st);
        nruns = 0;
    }
    for (int i = 0; i < nruns; i++)
        gm_tmpfile_remove(&runs[i]);
    free(runs);
    chunk_drop(&c);
    gm_recs_free(&c.recs);
    free(c.blocks);
    return rc;
}

