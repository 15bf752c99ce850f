/*
 * recchunk.c - the records path's sort (gm_records_sort, records_impl.h): blocks
 * of lines are read and split into records until the chunk (its text, its
 * records and what their sort takes) fills the budget (-S); a full chunk is
 * sorted (recsort.c) and written as a run (recrun.c); at the end a chunk alone
 * is sorted in memory and gathered into the output, or the runs are merged with
 * the fan-in in passes, the last into the output, as coreutils' sort.c sorts
 * its buffer and merges its temporary files.
 *
 * Where the GPU sorts (--device=gpu, or auto with a driver loaded on inputs from
 * the size where the cost model's estimates meet, gm_engine_records_least) and
 * every input is a regular file, the text goes to device memory whole and comes
 * back sorted (recdev.c), whatever the budget; where the device declines that,
 * or an input is a pipe, a chunk's blocks are only counted as they come, and
 * the device makes and sorts their records (recgpu.c); a chunk the device
 * declines (too large for its memory) is split and sorted on the CPU, and under
 * auto so is every chunk after a GPU failure.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/gpu.h"
#include "device/engine.h"
#include "keys/keyprefix.h"
#include "keys/keytext.h"
#include "base/pages.h"
#include "base/progress.h"
#include "records/recdev.h"
#include "device/recgpu.h"
#include "records/records.h"
#include "records/records_impl.h"
#include "runs/recrun.h"
#include "sort/recsort.h"
#include "base/util.h"
#include "plan/report.h"
#include "read/numwarn.h"

enum { STREAM_BLOCK = 64 << 20 }; /* a pipe's block, at most */

/* For the tests only: the size of the blocks a sort reads (0: from the budget). */
static size_t test_block;

void gm_records_test_block(size_t bytes)
{
    test_block = bytes;
}

struct chunk {
    gm_lines_block **blocks; /* the blocks read into the chunk, a reference each (chunk_add) */
    int nblocks, cap;        /* blocks held and room (chunk_add; chunk_drop empties it) */
    size_t bytes;            /* the blocks' bytes of lines (chunk_add), against the budget */
    gm_recs recs;   /* the records, made as blocks come, or by the chunk's sort: */
    size_t lines;   /* lines kept as text for the GPU */
};

static void chunk_drop(struct chunk *c)
{
    for (int i = 0; i < c->nblocks; i++)
        gm_lines_block_unref(c->blocks[i]);
    c->nblocks = 0;
    c->bytes = 0;
    c->recs.n = 0;
    c->lines = 0;
}

/* What the chunk holds and what its sort will take: a scratch array as large as
 * its records (-s, -u), or a bucket's (an unstable sort in place). */
static size_t chunk_memory(const struct chunk *c, const gm_keyspec *ks)
{
    return (size_t)gm_records_chunk_memory(ks, c->bytes, c->recs.n + c->lines);
}

/* Whether the chunk spills before the next block of `block` bytes is read: -S
 * bounds what the sort holds at once, so the chunk leaves room in the budget
 * for that block, its records (as many a byte as the chunk's) and the run
 * writer's two buffers; at least half the budget stays the chunk's. */
static int chunk_full(const struct chunk *c, const struct rec_run *r, size_t block)
{
    uint64_t lines = c->recs.n + c->lines;
    uint64_t next = (uint64_t)block + (c->bytes ? (uint64_t)((double)block * (double)lines /
                                                             (double)c->bytes) : 0) *
                                          sizeof(gm_rec);
    uint64_t reserve = next + 2 * (uint64_t)gm_records_out_buffer(r->budget);
    if (reserve > r->budget / 2)
        reserve = r->budget / 2;
    return chunk_memory(c, r->ks) + reserve > r->budget;
}

/* Adds b, the block src handed out last, to the chunk: split into records, or
 * for the GPU counted (and checked for numbers, numwarn.h: no split sees it). */
static int chunk_add(struct chunk *c, gm_lines_block *b, const gm_lines_src *src,
                     struct rec_run *r, gm_status *st)
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
    /* the records' room grows within what the budget leaves beside the text */
    c->recs.most = c->bytes < r->budget ? (r->budget - c->bytes) / sizeof(gm_rec) : 1;
    if (r->gpu) {
        c->lines += gm_lines_count(b, r->ks->eol, r->nthreads);
        gm_numwarn_block(src, b, r->nthreads);
        return GM_OK;
    }
    return gm_lines_split_checked(src, r->ks, b, &c->recs, r->nthreads, st);
}

int gm_records_gpu_takes(gm_op op, const gm_keyspec *ks)
{
    /* the device makes the prefixes keyprefix.h makes */
    return op == GM_OP_SORT && !(ks->nkeys > 0 && !gm_kp_takes(&ks->keys[0]));
}

int gm_records_gpu_auto(const gm_keyspec *ks)
{
    /* -V's prefixes tie where names share their first number: the device's
     * rounds order those ties by the version stream where -V is the one key;
     * behind another key they would wait for the CPU's last resort */
    return ks->nkeys == 1 || ks->keys[0].order != GM_ORDER_VERSION;
}

/* Whether the sort keeps its chunks as text for the GPU (or the text in device
 * memory, recdev.c); auto begins CUDA's start-up then, to overlap the read. Auto
 * takes the GPU where the cost model's estimates give it the inputs' bytes:
 * sorted in device memory where every input is a regular file, else by chunks. */
static int gpu_wanted(const struct rec_run *r)
{
    const gm_config *cfg = r->cfg;
    if (cfg->device == GM_DEVICE_CPU || !gm_records_gpu_takes(r->op, r->ks))
        return 0;
    int regular = 1;
    for (int i = 0; i < r->nnames; i++)
        regular &= r->drained[i] || r->srcs[i].regular;
    uint64_t least = gm_engine_records_least(r->nthreads, regular);
    if (cfg->device == GM_DEVICE_AUTO &&
        (r->in_bytes < least || !gm_records_gpu_auto(r->ks) || !gm_gpu_driver_loaded()))
        return 0;
    gm_gpu_warm_start();
    return 1;
}

/* The staging ring's copy, on the run's threads. */
static void pool_copy(void *ctx, void *dst, const void *src, size_t len)
{
    const struct rec_run *r = ctx;
    gm_pages_copy(dst, src, len, r->nthreads);
}

/* The chunk's records, sorted on the GPU. Returns GM_OK; GM_ETEXT where the CPU
 * must sort it (-v says why once): a chunk too small to pay under auto, one the
 * device declines, and under auto any GPU failure (the CPU then takes every later
 * chunk too); else the failure (--device=gpu: no usable GPU, its memory, CUDA's
 * errors; host memory). */
static int gpu_sort(struct chunk *c, struct rec_run *r, gm_status *st)
{
    const gm_config *cfg = r->cfg;
    int rc = GM_ETEXT;
    char why[sizeof st->msg] = "fewer than two lines";
    if (c->lines >= 2 && cfg->device == GM_DEVICE_AUTO &&
        c->bytes < gm_engine_records_least(r->nthreads, 0)) {
        snprintf(why, sizeof why, "auto: a chunk of %zu bytes", c->bytes);
    } else if (c->lines >= 2) {
        rc = gm_gpu_probe(NULL, st);
        if (!rc) {
            gm_recgpu_job j = { .ks = r->ks, .blocks = c->blocks, .nblocks = c->nblocks,
                                .lines = c->lines, .nthreads = r->nthreads,
                                .copy = pool_copy, .copy_ctx = r };
            rc = gm_recgpu_sort(&j, &c->recs, st);
            r->gpu_device += j.device;
            r->gpu_h2d += j.times.h2d;
            r->gpu_kernel += j.times.kernel;
            r->gpu_d2h += j.times.d2h;
            r->gpu_ties += j.ties;
        }
        if (!rc) {
            r->gpu_chunks++;
            return GM_OK;
        }
        if (rc == GM_ENOMEM || (rc != GM_ETEXT && cfg->device == GM_DEVICE_GPU))
            return rc;
        snprintf(why, sizeof why, "%s", st->msg);
        if (rc != GM_ETEXT)
            r->gpu = 0; /* auto: the GPU failed; the CPU sorts from here on */
        rc = GM_ETEXT;
    }
    if (!r->gpu_said && c->lines >= 2)
        gm_report_fact(cfg, "device", "a chunk sorted on the CPU (%s)", why);
    r->gpu_said |= c->lines >= 2;
    return rc;
}

static int chunk_sort(struct chunk *c, struct rec_run *r, gm_status *st)
{
    double a = gm_now();
    int rc = c->lines > 0 ? gpu_sort(c, r, st) : GM_ETEXT;
    if (rc == GM_ETEXT) {
        /* on the CPU: the records of a chunk kept as text first */
        rc = GM_OK;
        if (c->lines > 0)
            c->recs.n = 0;
        for (int i = 0; i < c->nblocks && c->lines > 0 && !rc; i++)
            rc = gm_lines_split(r->ks, c->blocks[i], &c->recs, r->nthreads, st);
        size_t held = c->bytes + c->recs.n * sizeof(gm_rec);
        if (!rc)
            rc = gm_recsort(r->ks, c->recs.r, c->recs.n, r->nthreads,
                            held < r->budget ? r->budget - held : 0, st);
    }
    c->lines = 0;
    r->sort += gm_now() - a;
    if (!rc)
        gm_progress_sorted((int64_t)c->bytes);
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
    double a = gm_now();
    if (!rc) {
        rc = gm_recrun_write(r->ks, c->recs.r, c->recs.n, r->ks->unique, &r->temps,
                             r->nthreads, gm_records_out_buffer(r->budget), &(*runs)[*nruns],
                             st);
        (*nruns)++; /* removed later, also when writing failed */
    }
    chunk_drop(c);
    r->spill += gm_now() - a;
    r->runs++;
    gm_progress_run_written();
    return rc;
}

/* The device's work is over once the last chunk is sorted: the run's last CUDA
 * context goes in the background while the lines are gathered or merged (as
 * the integer path lets it go while its output is finished). */
static void release_device(struct rec_run *r)
{
    if (gm_records_releases_device(r))
        gm_engine_release_begin();
}

int gm_records_sort(struct rec_run *r, gm_status *st)
{
    struct chunk c;
    memset(&c, 0, sizeof c);
    gm_recrun *runs = NULL;
    int nruns = 0, cap = 0, rc = GM_OK;
    size_t want = test_block ? test_block
                             : gm_records_clamp(r->budget / 8, GM_RECORDS_MIN_BLOCK, SIZE_MAX / 4);
    r->gpu = gpu_wanted(r);
    if (r->gpu && !test_block) {
        rc = gm_records_resident(r, st);
        if (rc != GM_ETEXT) {
            release_device(r);
            return rc;
        }
        rc = GM_OK;
    }
    for (int i = 0; i < r->nnames && !rc; i++) {
        rc = gm_records_src_open(r, i, st);
        while (!rc && !r->srcs[i].done) {
            gm_lines_block *b;
            size_t w = r->srcs[i].regular || test_block
                           ? want : gm_records_clamp(want, GM_RECORDS_MIN_BLOCK, STREAM_BLOCK);
            double a = gm_now();
            rc = gm_lines_read(&r->srcs[i], w, 0, r->nthreads, &b, st);
            double m = gm_now();
            r->read += m - a;
            if (!rc && b)
                rc = chunk_add(&c, b, &r->srcs[i], r, st);
            r->split += gm_now() - m;
            if (!rc && chunk_full(&c, r, w))
                rc = spill(&c, r, &runs, &nruns, &cap, st);
        }
        gm_records_src_close(r, i);
    }
    gm_progress_read_done();
    if (!rc && nruns == 0) {
        /* Everything fits: sorted in memory, no temporary file. The output's
         * space is reserved while it sorts (where it writes with write(2)),
         * unless -u may leave most of it unwritten. */
        if (!r->ks->unique)
            gm_recsink_reserve(r->out, c.bytes);
        rc = chunk_sort(&c, r, st);
        release_device(r);
        double a = gm_now();
        if (!rc)
            rc = gm_recsink_put_all(r->out, c.recs.r, c.recs.n, st);
        r->write += gm_now() - a;
    } else if (!rc) {
        if (c.recs.n + c.lines > 0)
            rc = spill(&c, r, &runs, &nruns, &cap, st);
        release_device(r);
        chunk_drop(&c);
        gm_recs_free(&c.recs);
        gm_recmerge_opts o = gm_records_merge_opts(r, r->fan_in, 0);
        double a = gm_now();
        if (!rc)
            rc = gm_recrun_merge(&o, runs, nruns, r->fan_in, &r->temps, r->ks->unique,
                                 r->out, &r->passes, st);
        r->merge += gm_now() - a;
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

