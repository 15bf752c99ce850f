/*
 * mapwrite.c - the mapping writer (see mapwrite.h).
 *
 * A regular -o file (the temporary file or the in-place target, open for reading
 * and writing) is written through a shared mapping when MAP_THREADS threads or
 * more format: each chunk's text length is counted first (block by block, on all
 * threads), the file's space for exactly that much is reserved with fallocate
 * (reserve.c), so that every page the mapping touches is backed (a full file
 * system is ENOSPC from fallocate, never a SIGBUS from a page fault; space
 * reserved ahead counts), the new region is mapped (or found in the mapping
 * reserved ahead), and the threads format their blocks straight into it: no copy
 * through write(2) and no single writer. Where fallocate is not supported, or the
 * mapping fails, the output goes on through write(2) from where it is. With few
 * threads the page faults cost more than one write(2) stream, so they keep
 * write(2).
 */
#define _GNU_SOURCE
#include "write/mapwrite.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "write/format.h"
#include "base/pages.h"
#include "write/reserve.h"
#include "base/util.h"

enum { MAP_THREADS = 4 };

static int forced_map;

void gm_mapwrite_test(int mode)
{
    forced_map = mode;
    gm_reserve_test_refuse(mode == 2);
}

/* Whether this writer's output can go through a mapping. */
static int map_wanted(const gm_writer *w)
{
    if (forced_map < 0 || (forced_map == 0 && w->nthreads < MAP_THREADS))
        return 0;
    if (w->file->kind != GM_OUTFILE_REPLACE && w->file->kind != GM_OUTFILE_IN_PLACE)
        return 0;
    int fl = fcntl(w->fd, F_GETFL);
    struct stat sb;
    return fl >= 0 && (fl & O_ACCMODE) == O_RDWR && !(fl & O_APPEND) &&
           fstat(w->fd, &sb) == 0 && S_ISREG(sb.st_mode);
}

void gm_mapwrite_begin(gm_writer *w)
{
    if (w->begun)
        return;
    w->begun = 1;
    w->map = map_wanted(w);
}

/* ------------------------------------------------------------------ ahead */

/* Whether the address space is limited (ulimit -v): the ahead mapping, as large as
 * the output, would take room the budget counts on for the data. */
static int address_space_limited(void)
{
    struct rlimit rl;
    return getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
}

int gm_writer_ahead_open(gm_writer *w, uint64_t most, int touchers, gm_status *st)
{
    (void)st;
    if (w->ahead)
        gm_ahead_touchers(w->ahead, touchers);
    if (!w->file->tmp || most == 0 || w->ahead || /* a replacement or a spool only */
        address_space_limited())
        return GM_OK;
    gm_mapwrite_begin(w);
    if (w->map)
        w->ahead = gm_ahead_start(w->fd, (off_t)w->bytes, most, touchers);
    return GM_OK;
}

void gm_writer_reserve_ahead(gm_writer *w, uint64_t bytes)
{
    /* a replacement or a spool only, and a thread beside the caller's only
     * where it was given more than one */
    if (!w->file->tmp || bytes == 0 || w->ahead || w->nthreads < 2)
        return;
    gm_mapwrite_begin(w);
    if (w->map)
        return;
    w->ahead = gm_ahead_start_unmapped(w->fd, (off_t)w->bytes, bytes);
    if (w->ahead)
        gm_ahead_grow(w->ahead, bytes, 1);
}

void gm_writer_ahead_grow(gm_writer *w, uint64_t bytes, int final)
{
    if (w->ahead)
        gm_ahead_grow(w->ahead, bytes, final);
}

int gm_writer_ahead(gm_writer *w, uint64_t bytes, int touchers, gm_status *st)
{
    int began = w->ahead != NULL;
    int rc = gm_writer_ahead_open(w, bytes, touchers, st);
    if (!began) /* one that runs already keeps its length */
        gm_writer_ahead_grow(w, bytes, 1);
    return rc;
}

/* What was reserved stays reserved (reserved_end), for the writing that follows. */
void gm_writer_ahead_end(gm_writer *w)
{
    if (!w->ahead)
        return;
    gm_ahead_report r;
    gm_ahead_end(w->ahead, &r);
    w->ahead = NULL;
    w->stats.write += r.unmap;
    w->stats.ahead += r.reserve;
    w->stats.touchers = r.touchers > w->stats.touchers ? r.touchers : w->stats.touchers;
    if (r.reserved_end > 0) {
        w->extended = 1;
        w->reserved_end = r.reserved_end;
    }
}

/* ------------------------------------------------------------------ region */

/* A region of len bytes at the output's end, mapped whole at once (a mapping may
 * reach past the end of the file), or a part of the ahead mapping, with the
 * reservation that covers it. */
struct region {
    gm_reservation own; /* the region's own reservation, outside the ahead's (region_open) */
    gm_reservation *v; /* &own, or the ahead's */
    struct gm_ahead *ahead;/* the ahead whose mapping this is, or NULL */
    size_t off;       /* the region's first byte in v */
    size_t len;       /* the region's bytes, the output's growth once closed (region_open) */
    char *base;       /* its own mapping, from the page holding the first byte */
    size_t size;      /* base's mapped bytes, for munmap (region_open, gm_pages_map) */
    char *dst;        /* the region's first byte */
    int failed;       /* a task found its bytes unreserved (atomic) */
    double map_time;  /* mmap and munmap */
};

static int region_open(struct region *r, gm_writer *w, size_t len)
{
    int fd = w->fd;
    off_t at = (off_t)w->bytes;
    memset(r, 0, sizeof *r);
    r->len = len;
    if (w->ahead) {
        r->dst = gm_ahead_find(w->ahead, at, len, &r->v);
        if (r->dst) {
            r->ahead = w->ahead;
            r->off = (size_t)(at - r->v->at);
            return 0;
        }
    }
    gm_writer_ahead_end(w); /* the output outgrew it, or its reserving failed */
    size_t reserved = 0;
    if (w->reserved_end > at) /* reserved ahead */
        reserved = (size_t)(w->reserved_end - at) < len ? (size_t)(w->reserved_end - at) : len;
    double t0 = gm_now();
    r->dst = gm_pages_map(fd, at, len, &r->base, &r->size);
    r->map_time = gm_now() - t0;
    if (!r->dst)
        return GM_MAP_UNSUPPORTED;
    gm_reservation_init(&r->own, fd, at, len, reserved);
    r->v = &r->own;
    return 0;
}

/* Task 0 of a region's job: reserves its space, unless it lies in the ahead's. */
static void region_reserve(struct region *r)
{
    if (r->v == &r->own)
        gm_reservation_run(&r->own);
}

/* Waits until bytes [lo, hi) of the region are reserved and takes them from the
 * touchers: 1, or 0 when they never will be (the task must not touch them). */
static int region_take(struct region *r, size_t lo, size_t hi)
{
    if (!gm_reservation_wait(r->v, r->off + hi)) {
        __atomic_store_n(&r->failed, 1, __ATOMIC_RELAXED);
        return 0;
    }
    if (r->ahead)
        gm_ahead_take(r->ahead, r->off + lo, r->off + hi);
    return 1;
}

/* Unmaps the filled region and accounts for it: 0 (the output is len bytes
 * longer), GM_MAP_UNSUPPORTED (nothing counts: the caller writes the chunk again with
 * write(2)) or fallocate's errno. The write time is the time in fallocate, mmap
 * and munmap (the page faults count as formatting). */
static int region_close(gm_writer *w, struct region *r)
{
    int err = r->failed ? r->v->err : 0;
    if (r->v == &r->own) {
        double t0 = gm_now();
        munmap(r->base, r->size);
        r->map_time += gm_now() - t0;
        w->stats.write += r->own.time + r->map_time;
        if (r->own.reserved > 0)
            w->extended = 1;
        gm_reservation_destroy(&r->own);
    }
    if (err == EOPNOTSUPP || err == ENOSYS)
        return GM_MAP_UNSUPPORTED;
    if (err)
        return err;
    if (r->failed) /* the reserving ended early: the output stopped being wanted */
        return EIO;
    w->bytes += (int64_t)r->len;
    gm_writer_progress(w, (int64_t)r->len);
    return 0;
}

int gm_mapwrite_abandon(gm_writer *w)
{
    gm_writer_ahead_end(w);
    w->map = 0;
    return lseek(w->fd, (off_t)w->bytes, SEEK_SET) == (off_t)w->bytes ? 0 : errno;
}


/* ------------------------------------------------------------------ chunks */

/* One chunk of keys formatted into the mapping: task 0 reserves, task b + 1
 * formats block b. */
struct map_job {
    const gm_keys *keys; /* the chunk's keys, as handed in (gm_mapwrite_put) */
    int unique;        /* -u: drop a key equal to the one before (gm_mapwrite_put, w->unique) */
    const int64_t *before; /* -u: the key written before the chunk, or NULL (gm_mapwrite_put) */
    char eol;          /* what ends a line: '\n', or '\0' for -z (gm_mapwrite_put, w->eol) */
    int64_t per;       /* keys per block */
    int64_t nkeys;     /* the chunk's keys: the last block ends here (gm_mapwrite_put) */
    size_t *pos;       /* block b's text starts at pos[b]; pos[nblocks] is the length */
    struct region r;   /* where the text goes: opened, reserved and closed by region_* */
    int64_t format_ns; /* formatting, summed over threads (atomic) */
};

static void map_length_task(void *ctx, int b)
{
    struct map_job *j = ctx;
    int64_t lo = (int64_t)b * j->per, hi = lo + j->per < j->nkeys ? lo + j->per : j->nkeys;
    j->pos[b + 1] = gm_format_length(j->keys, j->unique, j->before, lo, hi);
}

static void map_format_task(void *ctx, int task)
{
    struct map_job *j = ctx;
    if (task == 0) {
        region_reserve(&j->r);
        return;
    }
    int b = task - 1;
    if (!region_take(&j->r, j->pos[b], j->pos[b + 1]))
        return;
    int64_t lo = (int64_t)b * j->per, hi = lo + j->per < j->nkeys ? lo + j->per : j->nkeys;
    double t0 = gm_now();
    gm_format_block(j->keys, j->unique, j->before, lo, hi, j->eol,
                    j->r.dst + j->pos[b], j->r.dst + j->pos[b + 1]);
    int64_t ns = (int64_t)((gm_now() - t0) * 1e9);
    __atomic_fetch_add(&j->format_ns, ns, __ATOMIC_RELAXED);
}

int gm_mapwrite_put(gm_writer *w, const gm_keys *keys)
{
    struct map_job j;
    memset(&j, 0, sizeof j);
    j.keys = keys;
    j.unique = w->unique;
    j.before = w->have_last ? &w->last : NULL;
    j.eol = w->eol;
    j.per = gm_format_block_keys(keys->width);
    j.nkeys = keys->n;
    int nblocks = (int)((keys->n + j.per - 1) / j.per);
    j.pos = calloc((size_t)nblocks + 1, sizeof *j.pos);
    if (!j.pos)
        return ENOMEM;
    gm_parallel_for(w->nthreads, nblocks, map_length_task, &j);
    for (int b = 0; b < nblocks; b++)
        j.pos[b + 1] += j.pos[b];
    int e = 0;
    if (j.pos[nblocks] > 0) {
        e = region_open(&j.r, w, j.pos[nblocks]);
        if (!e) {
            gm_parallel_for(w->nthreads, nblocks + 1, map_format_task, &j);
            w->stats.format_cpu += (double)j.format_ns * 1e-9;
            e = region_close(w, &j.r);
        }
    }
    free(j.pos);
    return e;
}

/* Text copied into the mapping: task 0 reserves, task p + 1 copies piece p. */
struct copy_job {
    gm_pages_copy_job c; /* the text's pieces and where each goes (gm_pages_copy_plan) */
    struct region r;     /* where the text goes (region_open in gm_mapwrite_put_text) */
};

static void copy_task(void *ctx, int task)
{
    struct copy_job *c = ctx;
    if (task == 0) {
        region_reserve(&c->r);
        return;
    }
    size_t lo, hi;
    gm_pages_copy_range(&c->c, task - 1, &lo, &hi);
    if (region_take(&c->r, lo, hi))
        gm_pages_copy_piece(&c->c, task - 1);
}

int gm_mapwrite_put_text(gm_writer *w, const char *text, size_t len)
{
    double t0 = gm_now(), inside = w->stats.write;
    struct copy_job c;
    int e = region_open(&c.r, w, len);
    if (!e) {
        gm_pages_copy_plan(&c.c, c.r.dst, text, len, 0);
        gm_parallel_for(w->nthreads, c.c.pieces + 1, copy_task, &c);
        e = region_close(w, &c.r);
    }
    w->stats.write = inside + (gm_now() - t0); /* fallocate, mmap and munmap inside it */
    return e;
}

/* ------------------------------------------------------------------ pieces */

/* Pieces filled in place: task 0 reserves, task p + 1 fills piece p. */
struct fill_job {
    struct region r;  /* where the pieces go (region_open in gm_mapwrite_put_pieces) */
    const size_t *at; /* piece p fills [at[p], at[p + 1]) of the region (the caller's) */
    gm_fill_fn fill;  /* writes one piece in place (the caller's, via gm_mapwrite_put_pieces) */
    void *ctx;        /* fill's argument (the caller's) */
};

static void fill_task(void *ctx, int task)
{
    struct fill_job *j = ctx;
    if (task == 0) {
        region_reserve(&j->r);
        return;
    }
    size_t lo = j->at[task - 1], hi = j->at[task];
    if (hi > lo && region_take(&j->r, lo, hi))
        j->fill(j->ctx, task - 1, j->r.dst + lo);
}

int gm_mapwrite_put_pieces(gm_writer *w, size_t len, int npieces, const size_t *at,
                           gm_fill_fn fill, void *ctx)
{
    double t0 = gm_now(), inside = w->stats.write;
    struct fill_job j = { .at = at, .fill = fill, .ctx = ctx };
    int e = region_open(&j.r, w, len);
    if (!e) {
        gm_parallel_for(w->nthreads, npieces + 1, fill_task, &j);
        e = region_close(w, &j.r);
    }
    w->stats.write = inside + (gm_now() - t0); /* fallocate, mmap and munmap inside it */
    return e;
}
