/*
 * output.c - parallel formatter and writer (see output.h); the -o file itself is
 * core/outfile.c's.
 *
 * The keys of each chunk are cut into blocks; threads take blocks in order and
 * format each into a buffer from a small pool kept from chunk to chunk (two digits
 * per step from a 200-byte table, written backwards from the digit count), and
 * whichever thread finds the next block due writes it and every finished block
 * after it: formatting and writing overlap, output stays in order, and formatting
 * runs at most a few blocks ahead of the writer, so memory stays small whatever
 * the output's size. With four threads or more, a writer thread of its own takes
 * the formatted blocks in order instead, so the writes of one chunk go on while
 * the caller reads, parses and merges the next (on two cores it measured slower:
 * it competes with the formatting threads and reads the blocks from another
 * core's cache).
 */
#define _GNU_SOURCE
#include "output.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* ------------------------------------------------------------------ format */

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Writes the decimal digits of v so that they end just before end, two at a time. */
static inline void put_digits(char *end, uint32_t v)
{
    while (v >= 100) {
        end -= 2;
        memcpy(end, digit_pairs + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10)
        memcpy(end - 2, digit_pairs + 2 * v, 2);
    else
        end[-1] = (char)('0' + v);
}

/* Writes exactly eight digits of v (< 10^8), zero-filled, ending before end. */
static inline void put_8_digits(char *end, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        end -= 2;
        memcpy(end, digit_pairs + 2 * (v % 100), 2);
        v /= 100;
    }
}

static inline int digits_u32(uint32_t v)
{
    return v >= 100000 ? (v >= 10000000 ? (v >= 1000000000 ? 10 : v >= 100000000 ? 9 : 8)
                                        : (v >= 1000000 ? 7 : 6))
                       : (v >= 1000 ? (v >= 10000 ? 5 : 4) : (v >= 100 ? 3 : v >= 10 ? 2 : 1));
}

static inline char *format_u32(char *p, uint32_t v)
{
    int n = digits_u32(v);
    put_digits(p + n, v);
    return p + n;
}

/* 64-bit values: eight digits at a time come off the bottom with one 64-bit
 * division, and the rest with 32-bit arithmetic. */
static inline char *format_u64(char *p, uint64_t v)
{
    if (v <= UINT32_MAX)
        return format_u32(p, (uint32_t)v);
    uint32_t low = (uint32_t)(v % 100000000);
    v /= 100000000;
    if (v <= UINT32_MAX) {
        p = format_u32(p, (uint32_t)v);
    } else {
        uint32_t mid = (uint32_t)(v % 100000000);
        p = format_u32(p, (uint32_t)(v / 100000000)); /* at most 4 digits */
        put_8_digits(p + 8, mid);
        p += 8;
    }
    put_8_digits(p + 8, low);
    return p + 8;
}

char *gm_format_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return format_u64(p, 0 - (uint64_t)v);
    }
    return format_u64(p, (uint64_t)v);
}

static inline char *format_i32(char *p, int32_t v)
{
    if (v < 0) {
        *p++ = '-';
        return format_u32(p, 0u - (uint32_t)v);
    }
    return format_u32(p, (uint32_t)v);
}

/* ------------------------------------------------------------------ write */

/* A block is at most BLOCK_BYTES of text: 65536 int32 keys, or 37449 int64 keys
 * (at most 12 and 21 bytes a line). */
enum { BLOCK_BYTES = 12 << 16, WRITER_THREAD_CORES = 4 };

static int64_t block_keys(gm_width w)
{
    return w == GM_I32 ? BLOCK_BYTES / 12 : BLOCK_BYTES / 21;
}

/* The writer's pool of block buffers, kept from chunk to chunk, and what the
 * writes came to. */
struct gm_wq {
    pthread_mutex_t lock;
    pthread_cond_t changed;  /* a block was written, a buffer freed, or err set */
    int fd;
    int nbufs;
    char **pool;             /* free buffers */
    int nfree;
    int err;                 /* first write errno */
    double write_time;
    int64_t bytes;
    /* the writer thread, when there is one, and the blocks due, in order */
    pthread_t tid;
    int threaded;
    int stop;
    char **due;
    size_t *due_len;
    int due_head, due_count;
};

static void *writer_main(void *arg)
{
    struct gm_wq *q = arg;
    pthread_mutex_lock(&q->lock);
    for (;;) {
        while (q->due_count == 0 && !q->stop)
            pthread_cond_wait(&q->changed, &q->lock);
        if (q->due_count == 0)
            break; /* stopped, and nothing left to write */
        char *buf = q->due[q->due_head];
        size_t len = q->due_len[q->due_head];
        int err = q->err;
        pthread_mutex_unlock(&q->lock);
        double w0 = gm_now();
        int e = err ? 0 : gm_write_all(q->fd, buf, len);
        double w1 = gm_now();
        pthread_mutex_lock(&q->lock);
        q->write_time += w1 - w0;
        if (e && !q->err)
            q->err = e;
        q->bytes += err ? 0 : (int64_t)len;
        q->due_head = (q->due_head + 1) % q->nbufs;
        q->due_count--;
        q->pool[q->nfree++] = buf;
        pthread_cond_broadcast(&q->changed);
    }
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

/* Lets the writer thread, if any, write what is due and end. */
static void wq_join(struct gm_wq *q)
{
    if (!q->threaded)
        return;
    pthread_mutex_lock(&q->lock);
    q->stop = 1;
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->lock);
    pthread_join(q->tid, NULL);
    q->threaded = 0;
}

static void wq_free(struct gm_wq *q)
{
    wq_join(q);
    free(q->due);
    free(q->due_len);
    for (int i = 0; i < q->nfree; i++)
        gm_buf_free(q->pool[i]);
    free(q->pool);
    pthread_cond_destroy(&q->changed);
    pthread_mutex_destroy(&q->lock);
    free(q);
}

static struct gm_wq *wq_start(int fd, int nbufs, int threaded)
{
    struct gm_wq *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->changed, NULL);
    q->fd = fd;
    q->nbufs = nbufs;
    q->pool = calloc((size_t)nbufs, sizeof *q->pool);
    int ok = q->pool != NULL;
    for (int i = 0; ok && i < nbufs; i++) {
        q->pool[i] = gm_buf_alloc(BLOCK_BYTES, "formatting", NULL);
        ok = q->pool[i] != NULL;
        q->nfree += ok;
    }
    if (ok && threaded) {
        q->due = calloc((size_t)nbufs, sizeof *q->due);
        q->due_len = calloc((size_t)nbufs, sizeof *q->due_len);
        ok = q->due && q->due_len && gm_thread_start(&q->tid, writer_main, q) == 0;
        q->threaded = ok;
    }
    if (!ok) {
        wq_free(q);
        return NULL;
    }
    return q;
}

/* One chunk being formatted. */
struct format_job {
    struct gm_wq *q;
    const gm_keys *keys;
    char eol;              /* what ends a line: '\n', or '\0' with -z */
    int unique;
    const int64_t *before; /* the key written just before this chunk, or NULL */
    int nblocks;
    int window;            /* blocks formatted ahead of the writer, at most */
    int next_block;        /* next block to format (atomic) */
    /* under q->lock: */
    char **buf;
    size_t *len;
    unsigned char *ready;
    int next_write;        /* first block not yet written */
    int writing;           /* a thread has the writing role */
    double format_cpu;
};

static size_t format_block(const gm_keys *keys, int unique, const int64_t *before,
                           int64_t lo, int64_t hi, char eol, char *out)
{
    char *p = out;
    if (unique && lo == 0 && before && hi > 0) {
        int64_t first = keys->width == GM_I32 ? ((const int32_t *)keys->data)[0]
                                              : ((const int64_t *)keys->data)[0];
        if (first == *before)
            lo = 1; /* the last chunk ended with this key */
    }
    if (keys->width == GM_I32) {
        const int32_t *k = keys->data;
        for (int64_t i = lo; i < hi; i++) {
            if (unique && i > 0 && k[i] == k[i - 1])
                continue;
            p = format_i32(p, k[i]);
            *p++ = eol;
        }
    } else {
        const int64_t *k = keys->data;
        for (int64_t i = lo; i < hi; i++) {
            if (unique && i > 0 && k[i] == k[i - 1])
                continue;
            p = gm_format_i64(p, k[i]);
            *p++ = eol;
        }
    }
    return (size_t)(p - out);
}

static void format_worker(void *ctx, int task)
{
    (void)task;
    struct format_job *job = ctx;
    struct gm_wq *q = job->q;
    for (;;) {
        int b = __atomic_fetch_add(&job->next_block, 1, __ATOMIC_RELAXED);
        if (b >= job->nblocks)
            return;
        pthread_mutex_lock(&q->lock);
        while ((b >= job->next_write + job->window || q->nfree == 0) && !q->err)
            pthread_cond_wait(&q->changed, &q->lock);
        if (q->err) {
            pthread_mutex_unlock(&q->lock);
            return;
        }
        char *buf = q->pool[--q->nfree];
        pthread_mutex_unlock(&q->lock);

        int64_t per = block_keys(job->keys->width);
        int64_t lo = (int64_t)b * per;
        int64_t hi = lo + per < job->keys->n ? lo + per : job->keys->n;
        double t0 = gm_now();
        size_t len = format_block(job->keys, job->unique, job->before, lo, hi, job->eol, buf);
        double t1 = gm_now();

        pthread_mutex_lock(&q->lock);
        job->format_cpu += t1 - t0;
        job->buf[b] = buf;
        job->len[b] = len;
        job->ready[b] = 1;
        if (q->threaded) { /* hand the blocks now in order to the writer thread */
            while (job->next_write < job->nblocks && job->ready[job->next_write]) {
                int w = job->next_write++;
                int at = (q->due_head + q->due_count) % q->nbufs;
                q->due[at] = job->buf[w];
                q->due_len[at] = job->len[w];
                q->due_count++;
            }
        } else if (!job->writing) {
            job->writing = 1;
            while (job->next_write < job->nblocks && job->ready[job->next_write] && !q->err) {
                int w = job->next_write;
                pthread_mutex_unlock(&q->lock);
                double w0 = gm_now();
                int e = gm_write_all(q->fd, job->buf[w], job->len[w]);
                double w1 = gm_now();
                pthread_mutex_lock(&q->lock);
                q->write_time += w1 - w0;
                if (e && !q->err)
                    q->err = e;
                q->bytes += (int64_t)job->len[w];
                q->pool[q->nfree++] = job->buf[w];
                job->next_write++;
                pthread_cond_broadcast(&q->changed);
            }
            job->writing = 0;
        }
        pthread_cond_broadcast(&q->changed);
        pthread_mutex_unlock(&q->lock);
    }
}

void gm_writer_init(gm_writer *w, gm_output *out, int unique, int nthreads)
{
    memset(w, 0, sizeof *w);
    w->file = &out->file;
    w->fd = out->fd;
    w->shown = out->shown;
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

int gm_writer_put(gm_writer *w, const gm_keys *keys, gm_status *st)
{
    if (keys->n == 0)
        return GM_OK;
    int nthreads = w->nthreads;
    int window = 2 * nthreads + 2;
    if (!w->q) {
        /* The first byte is due: an in-place target is truncated now, not sooner. */
        int rc = gm_outfile_begin(w->file, st);
        if (rc)
            return rc;
        /* With a writer thread, twice the window: the next chunk's formatting
         * starts while the thread still writes this one's last blocks. */
        int threaded = nthreads >= WRITER_THREAD_CORES;
        w->q = wq_start(w->fd, threaded ? 2 * window + 2 : window + 2, threaded);
        if (!w->q)
            return writer_error(w, ENOMEM, st);
    }
    struct gm_wq *q = w->q;
    struct format_job job;
    memset(&job, 0, sizeof job);
    job.q = q;
    job.keys = keys;
    job.unique = w->unique;
    job.eol = w->eol;
    job.before = w->have_last ? &w->last : NULL;
    job.nblocks = (int)((keys->n + block_keys(keys->width) - 1) / block_keys(keys->width));
    job.window = window;
    job.buf = calloc((size_t)job.nblocks, sizeof *job.buf);
    job.len = calloc((size_t)job.nblocks, sizeof *job.len);
    job.ready = calloc((size_t)job.nblocks, 1);
    int err = 0;
    if (job.buf && job.len && job.ready)
        gm_parallel_for(nthreads, nthreads, format_worker, &job); /* each loops over blocks */
    else
        err = ENOMEM;
    free(job.buf);
    free(job.len);
    free(job.ready);
    w->stats.format_cpu += job.format_cpu;
    pthread_mutex_lock(&q->lock);
    if (!err)
        err = q->err;
    pthread_mutex_unlock(&q->lock);
    if (err)
        return writer_error(w, err, st);
    w->keys += keys->n;
    w->last = keys->width == GM_I32 ? ((const int32_t *)keys->data)[keys->n - 1]
                                    : ((const int64_t *)keys->data)[keys->n - 1];
    w->have_last = 1;
    return GM_OK;
}

int gm_writer_put_text(gm_writer *w, const char *text, size_t len, gm_status *st)
{
    if (len == 0)
        return GM_OK;
    int rc = GM_OK;
    if (!w->q && (rc = gm_outfile_begin(w->file, st)))
        return rc;
    int err = 0;
    if (w->q) {
        /* Keys handed in before: their blocks go out first. */
        struct gm_wq *q = w->q;
        pthread_mutex_lock(&q->lock);
        while (q->threaded && q->due_count > 0)
            pthread_cond_wait(&q->changed, &q->lock);
        err = q->err;
        pthread_mutex_unlock(&q->lock);
    }
    if (!err) {
        double a = gm_now();
        err = gm_write_all(w->fd, text, len);
        w->stats.write += gm_now() - a;
        if (!err)
            w->bytes += (int64_t)len;
    }
    return err ? writer_error(w, err, st) : GM_OK;
}

int gm_writer_finish(gm_writer *w, gm_status *st)
{
    struct gm_wq *q = w->q;
    if (!q)
        return GM_OK;
    wq_join(q);
    int err = q->err;
    w->stats.write += q->write_time;
    w->bytes += q->bytes;
    wq_free(q);
    w->q = NULL;
    return err ? writer_error(w, err, st) : GM_OK;
}

/* ------------------------------------------------------------------ -o */

int gm_output_open_sized(gm_output *out, const char *path, uint64_t expect_bytes,
                         gm_status *st)
{
    memset(out, 0, sizeof *out);
    int rc = gm_outfile_plan(&out->file, path, st);
    if (!rc)
        rc = gm_outfile_open(&out->file, expect_bytes, st);
    if (rc) {
        gm_outfile_abort(&out->file);
        out->fd = -1;
        return rc;
    }
    memcpy(out->shown, out->file.shown, sizeof out->shown);
    out->fd = out->file.fd;
    return GM_OK;
}

int gm_output_open(gm_output *out, const char *path, gm_status *st)
{
    return gm_output_open_sized(out, path, 0, st);
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
