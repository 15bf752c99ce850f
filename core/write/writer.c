/*
 * writer.c - the output stage's front (see output.h): gm_writer takes sorted keys
 * or formatted text chunk by chunk and writes them in order, and gm_output opens,
 * commits or abandons the output (-o's file through outfile.c).
 *
 * A chunk of keys is cut into blocks (format.c); on a regular -o file with enough
 * threads the blocks are formatted straight into the file's mapped pages
 * (mapwrite.c), elsewhere threads format them into the write queue's buffers and
 * the queue writes them in order with write(2) (wq.c). -u's last key is kept
 * across chunks, so a merge writes its output as it goes and memory stays bounded
 * by a chunk.
 */
#define _GNU_SOURCE
#include "write/output.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "write/format.h"
#include "write/mapwrite.h"
#include "base/util.h"
#include "write/wq.h"

/* With this many threads or more, the write queue has a writer thread of its own. */
enum { WRITER_THREAD_CORES = 4 };

void gm_output_test_map(int mode) { gm_mapwrite_test(mode); }

void gm_writer_init(gm_writer *w, gm_output *out, int unique, int nthreads)
{
    memset(w, 0, sizeof *w);
    w->file = &out->file;
    w->fd = out->fd;
    w->shown = out->file.written; /* an error names the spool where it is written */
    w->unique = unique;
    w->nthreads = nthreads;
    w->eol = '\n';
}

static int writer_error(gm_writer *w, int err, gm_status *st)
{
    if (err == EPIPE)
        return gm_fail(st, GM_EPIPE, "write failed: %s: %s", w->shown, strerror(EPIPE));
    if (err == ENOMEM)
        return gm_fail(st, GM_ENOMEM, "out of memory formatting the output");
    return gm_fail(st, GM_EIO, "write failed: %s: %s", w->shown, strerror(err));
}

/* How many blocks are formatted ahead of the writer (returned), and how many
 * buffers they take (*nbufs): twice the threads and two more, within w->mem but
 * one at least. The buffers are that many and two more; with a writer thread,
 * twice the window and two more, so that the next chunk's formatting starts while
 * the thread still writes this one's last blocks. No block waits for a buffer
 * that only a later block holds: a window's blocks hold at most a window's
 * buffers. */
static int writer_window(const gm_writer *w, int threaded, int *nbufs)
{
    int window = 2 * w->nthreads + 2;
    if (w->mem) {
        size_t most = w->mem / GM_FORMAT_BLOCK_BYTES;
        size_t room = most > 4 ? (threaded ? (most - 2) / 2 : most - 2) : 1;
        if ((size_t)window > room)
            window = (int)room;
    }
    *nbufs = threaded ? 2 * window + 2 : window + 2;
    return window;
}

/* A chunk of keys is out: -u remembers its last key. */
static int chunk_done(gm_writer *w, const gm_keys *keys)
{
    w->keys += keys->n;
    w->last = keys->width == GM_I32 ? ((const int32_t *)keys->data)[keys->n - 1]
                                    : ((const int64_t *)keys->data)[keys->n - 1];
    w->have_last = 1;
    return GM_OK;
}

/* One chunk being formatted into the write queue. */
struct format_job {
    struct gm_wq *q;       /* the writer's queue the blocks go to (queue_put, w->q) */
    const gm_keys *keys;   /* the chunk's keys (queue_put) */
    char eol;              /* what ends a line: '\n', or '\0' with -z */
    int unique;            /* -u: drop a key equal to the one before (queue_put, w->unique) */
    const int64_t *before; /* the key written just before this chunk, or NULL */
    int nblocks;           /* the chunk's blocks of gm_format_block_keys keys (queue_put) */
    int next_block;        /* next block to format (atomic) */
    int64_t format_ns;     /* formatting, summed over threads (atomic) */
};

/* A formatting thread: takes the next block, a buffer for it, formats it and puts
 * it in the queue, until no block is left or the queue fails. */
static void format_worker(void *ctx, int task)
{
    (void)task;
    struct format_job *job = ctx;
    int64_t per = gm_format_block_keys(job->keys->width);
    for (;;) {
        int b = __atomic_fetch_add(&job->next_block, 1, __ATOMIC_RELAXED);
        if (b >= job->nblocks)
            return;
        char *buf = gm_wq_get(job->q, b);
        if (!buf)
            return;
        int64_t lo = (int64_t)b * per;
        int64_t hi = lo + per < job->keys->n ? lo + per : job->keys->n;
        double t0 = gm_now();
        size_t len = gm_format_block(job->keys, job->unique, job->before, lo, hi, job->eol,
                                     buf, buf + GM_FORMAT_BLOCK_BYTES);
        int64_t ns = (int64_t)((gm_now() - t0) * 1e9);
        __atomic_fetch_add(&job->format_ns, ns, __ATOMIC_RELAXED);
        gm_wq_put(job->q, b, buf, len);
    }
}

/* Formats one chunk on the writer's threads into the write queue (made on first
 * need). Returns 0 or an errno value. */
static int queue_put(gm_writer *w, const gm_keys *keys)
{
    int threaded = w->nthreads >= WRITER_THREAD_CORES, nbufs;
    int window = writer_window(w, threaded, &nbufs);
    if (!w->q) {
        w->q = gm_wq_create(w->fd, nbufs, GM_FORMAT_BLOCK_BYTES, threaded);
        if (!w->q)
            return ENOMEM;
    }
    struct format_job job;
    memset(&job, 0, sizeof job);
    job.q = w->q;
    job.keys = keys;
    job.unique = w->unique;
    job.eol = w->eol;
    job.before = w->have_last ? &w->last : NULL;
    int64_t per = gm_format_block_keys(keys->width);
    job.nblocks = (int)((keys->n + per - 1) / per);
    /* as many threads as blocks may be formatted at once, each looping over blocks */
    int nthreads = w->nthreads < window ? w->nthreads : window;
    if (nthreads > job.nblocks)
        nthreads = job.nblocks;
    int err = gm_wq_begin(w->q, job.nblocks, window);
    if (!err)
        gm_parallel_for(nthreads, nthreads, format_worker, &job);
    int qerr = gm_wq_end(w->q);
    w->stats.format_cpu += (double)job.format_ns * 1e-9;
    return err ? err : qerr;
}

int gm_writer_ready(gm_writer *w, gm_status *st)
{
    if (!w->file->pending)
        return GM_OK;
    int rc = gm_outfile_ready(w->file, st);
    w->fd = w->file->fd;
    return rc;
}

int gm_writer_put(gm_writer *w, const gm_keys *keys, gm_status *st)
{
    if (keys->n == 0)
        return GM_OK;
    int rc = gm_writer_ready(w, st);
    if (rc)
        return rc;
    gm_mapwrite_begin(w);
    if (w->map) {
        int e = gm_mapwrite_put(w, keys);
        if (e == GM_MAP_UNSUPPORTED)
            e = gm_mapwrite_abandon(w); /* and on through write(2) below */
        else if (!e)
            return chunk_done(w, keys);
        if (e)
            return writer_error(w, e, st);
    }
    int err = queue_put(w, keys);
    if (err)
        return writer_error(w, err, st);
    return chunk_done(w, keys);
}

int gm_writer_put_text(gm_writer *w, const char *text, size_t len, gm_status *st)
{
    if (len == 0)
        return GM_OK;
    int err = gm_writer_ready(w, st);
    if (err)
        return err;
    gm_mapwrite_begin(w);
    if (w->map) {
        err = gm_mapwrite_put_text(w, text, len);
        if (err == GM_MAP_UNSUPPORTED)
            err = gm_mapwrite_abandon(w);
        else if (!err)
            return GM_OK;
        if (err)
            return writer_error(w, err, st);
    }
    if (w->q) /* keys handed in before: their blocks go out first */
        err = gm_wq_drain(w->q);
    if (!err) {
        double a = gm_now();
        err = gm_write_all(w->fd, text, len);
        w->stats.write += gm_now() - a;
        if (!err)
            w->bytes += (int64_t)len;
        if (!err)
            gm_writer_progress(w, (int64_t)len);
    }
    return err ? writer_error(w, err, st) : GM_OK;
}

int gm_writer_mapped(gm_writer *w)
{
    if (w->file->pending)
        return 0;
    gm_mapwrite_begin(w);
    return w->map;
}

/* The pieces filled into a buffer of their own, on the writer's threads. */
struct fill_buf {
    char *buf;        /* the len bytes the pieces are filled into (gm_writer_put_pieces) */
    const size_t *at; /* piece p fills [at[p], at[p + 1]) of buf (the caller's) */
    gm_fill_fn fill;  /* writes one piece in place (the caller's) */
    void *ctx;        /* fill's argument (the caller's) */
};

static void fill_buf_task(void *ctx, int p)
{
    struct fill_buf *f = ctx;
    if (f->at[p + 1] > f->at[p])
        f->fill(f->ctx, p, f->buf + f->at[p]);
}

int gm_writer_put_pieces(gm_writer *w, size_t len, int npieces, const size_t *at,
                         gm_fill_fn fill, void *ctx, gm_status *st)
{
    if (len == 0)
        return GM_OK;
    int rc = gm_writer_ready(w, st);
    if (rc)
        return rc;
    if (gm_writer_mapped(w)) {
        int err = gm_mapwrite_put_pieces(w, len, npieces, at, fill, ctx);
        if (!err)
            return GM_OK;
        if (err != GM_MAP_UNSUPPORTED)
            return writer_error(w, err, st);
        if ((err = gm_mapwrite_abandon(w)) != 0)
            return writer_error(w, err, st);
    }
    struct fill_buf f = { gm_buf_alloc(len, "output", st), at, fill, ctx };
    if (!f.buf)
        return GM_ENOMEM;
    gm_parallel_for(w->nthreads, npieces, fill_buf_task, &f);
    rc = gm_writer_put_text(w, f.buf, len, st);
    gm_buf_free(f.buf);
    return rc;
}

int gm_writer_finish(gm_writer *w, gm_status *st)
{
    int err = 0;
    gm_writer_ahead_end(w);
    if (w->q) {
        err = gm_wq_close(w->q, &w->stats.write, &w->bytes);
        w->q = NULL;
    }
    /* The file ends where the output does, whatever the mapping reserved. */
    if (!err && w->extended && ftruncate(w->fd, (off_t)w->bytes) != 0)
        err = errno;
    w->extended = 0;
    return err ? writer_error(w, err, st) : GM_OK;
}

int gm_output_write(gm_output *out, const gm_keys *keys, int unique, int nthreads,
                    gm_output_stats *stats, gm_status *st)
{
    gm_writer w;
    gm_writer_init(&w, out, unique, nthreads);
    int rc = gm_writer_put(&w, keys, st);
    gm_status ignored;
    int frc = gm_writer_finish(&w, rc ? &ignored : st);
    *stats = w.stats;
    return rc ? rc : frc;
}

/* ------------------------------------------------------------------ -o */

int gm_output_open_sized(gm_output *out, const char *path, uint64_t expect_bytes,
                         const char *tmpdir, int late, gm_status *st)
{
    memset(out, 0, sizeof *out);
    int rc = gm_outfile_plan(&out->file, path, st);
    if (!rc && late)
        gm_outfile_open_late(&out->file, expect_bytes, tmpdir);
    else if (!rc)
        rc = gm_outfile_open(&out->file, expect_bytes, tmpdir, st);
    if (rc) {
        gm_outfile_abort(&out->file);
        out->fd = -1;
        return rc;
    }
    memcpy(out->shown, out->file.shown, sizeof out->shown);
    out->fd = out->file.fd;
    struct stat sb;
    if (out->fd >= 0 && fstat(out->fd, &sb) == 0)
        gm_pipe_enlarge(out->fd, &sb); /* an output pipe */
    return GM_OK;
}

int gm_output_open(gm_output *out, const char *path, gm_status *st)
{
    return gm_output_open_sized(out, path, 0, NULL, 0, st);
}

int gm_output_is_input(const gm_output *out, int input_fd)
{
    return gm_outfile_is_input(&out->file, input_fd);
}

int gm_output_commit(gm_output *out, gm_status *st)
{
    out->fd = -1;
    return gm_outfile_commit(&out->file, st);
}

void gm_output_abort(gm_output *out)
{
    out->fd = -1;
    gm_outfile_abort(&out->file);
}
