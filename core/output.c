/*
 * output.c - parallel formatter and writer, atomic -o (see output.h).
 *
 * The keys are cut into blocks; threads take blocks in order, format each into a
 * buffer of its own (two digits per step from a 200-byte table, written backwards
 * from the digit count), and whichever thread finds the next block due writes it and
 * every finished block after it: formatting and writing overlap, output stays in
 * order, and formatting runs at most a few blocks ahead of the writer, reusing the
 * written blocks' buffers, so memory stays small whatever the output's size.
 * A signal that stops the run removes the temporary file of -o.
 */
#define _GNU_SOURCE
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Writes all of buf, retrying short writes. Returns 0 or an errno value. */
static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t put = write(fd, buf, len);
        if (put < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        buf += put;
        len -= (size_t)put;
    }
    return 0;
}

enum { BLOCK_KEYS = 1 << 16 };

struct write_job {
    const gm_keys *keys;
    int unique;
    const int64_t *before; /* the key written just before this chunk, or NULL */
    int fd;
    int nblocks;
    size_t block_bytes;
    int window;         /* blocks formatted ahead of the writer, at most */
    int next_block;     /* next block to format (atomic) */
    pthread_mutex_t lock;
    pthread_cond_t advanced; /* next_write moved or err was set */
    /* under lock: */
    char **buf;         /* formatted blocks waiting to be written */
    size_t *len;
    unsigned char *ready;
    char **spare;       /* written buffers, for reuse */
    int nspare;
    int next_write;     /* first block not yet written */
    int writing;        /* a thread is writing */
    int err;            /* first write errno, or ENOMEM */
    double format_cpu, write_time;
    int64_t bytes;      /* written */
};

static size_t format_block(const gm_keys *keys, int unique, const int64_t *before,
                           int64_t lo, int64_t hi, char *out)
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
            *p++ = '\n';
        }
    } else {
        const int64_t *k = keys->data;
        for (int64_t i = lo; i < hi; i++) {
            if (unique && i > 0 && k[i] == k[i - 1])
                continue;
            p = gm_format_i64(p, k[i]);
            *p++ = '\n';
        }
    }
    return (size_t)(p - out);
}

/* Called with the lock held by the thread that took the writing role: writes every
 * formatted block that is due, releasing the lock around each write. */
static void write_due_blocks(struct write_job *job)
{
    while (job->next_write < job->nblocks && job->ready[job->next_write] && !job->err) {
        int w = job->next_write;
        pthread_mutex_unlock(&job->lock);
        double w0 = gm_now();
        int e = write_all(job->fd, job->buf[w], job->len[w]);
        double w1 = gm_now();
        pthread_mutex_lock(&job->lock);
        job->write_time += w1 - w0;
        job->bytes += (int64_t)job->len[w];
        job->spare[job->nspare++] = job->buf[w];
        job->buf[w] = NULL;
        if (e)
            job->err = e;
        job->next_write++;
        pthread_cond_broadcast(&job->advanced);
    }
}

static void write_worker(void *ctx, int task)
{
    (void)task;
    struct write_job *job = ctx;
    for (;;) {
        int b = __atomic_fetch_add(&job->next_block, 1, __ATOMIC_RELAXED);
        if (b >= job->nblocks)
            return;
        pthread_mutex_lock(&job->lock);
        while (b >= job->next_write + job->window && !job->err)
            pthread_cond_wait(&job->advanced, &job->lock);
        char *buf = job->nspare ? job->spare[--job->nspare] : NULL;
        int failed = job->err;
        pthread_mutex_unlock(&job->lock);
        if (failed) {
            free(buf);
            return;
        }

        int64_t lo = (int64_t)b * BLOCK_KEYS;
        int64_t hi = lo + BLOCK_KEYS < job->keys->n ? lo + BLOCK_KEYS : job->keys->n;
        double t0 = gm_now();
        if (!buf)
            buf = malloc(job->block_bytes);
        size_t len = buf ? format_block(job->keys, job->unique, job->before, lo, hi, buf) : 0;
        double t1 = gm_now();

        pthread_mutex_lock(&job->lock);
        job->format_cpu += t1 - t0;
        job->buf[b] = buf;
        job->len[b] = len;
        job->ready[b] = 1;
        if (!buf) {
            job->err = ENOMEM;
            pthread_cond_broadcast(&job->advanced);
        }
        if (!job->writing) {
            job->writing = 1;
            write_due_blocks(job);
            job->writing = 0;
        }
        pthread_mutex_unlock(&job->lock);
    }
}

void gm_writer_init(gm_writer *w, const gm_output *out, int unique, int nthreads)
{
    memset(w, 0, sizeof *w);
    w->fd = out->fd;
    w->shown = out->shown;
    w->unique = unique;
    w->nthreads = nthreads;
}

int gm_output_write(gm_output *out, const gm_keys *keys, int unique, int nthreads,
                    gm_output_stats *stats, gm_status *st)
{
    gm_writer w;
    gm_writer_init(&w, out, unique, nthreads);
    int rc = gm_writer_put(&w, keys, st);
    *stats = w.stats;
    return rc;
}

int gm_writer_put(gm_writer *w, const gm_keys *keys, gm_status *st)
{
    if (keys->n == 0)
        return GM_OK;
    int nthreads = w->nthreads;
    struct write_job job;
    memset(&job, 0, sizeof job);
    job.keys = keys;
    job.unique = w->unique;
    job.before = w->have_last ? &w->last : NULL;
    job.fd = w->fd;
    job.nblocks = (int)((keys->n + BLOCK_KEYS - 1) / BLOCK_KEYS);
    job.block_bytes = (size_t)BLOCK_KEYS * (keys->width == GM_I32 ? 12 : 21);
    job.window = 2 * nthreads + 2;
    job.buf = calloc((size_t)job.nblocks, sizeof *job.buf);
    job.len = calloc((size_t)job.nblocks, sizeof *job.len);
    job.ready = calloc((size_t)job.nblocks, 1);
    job.spare = calloc((size_t)job.nblocks, sizeof *job.spare);
    if (job.buf && job.len && job.ready && job.spare) {
        pthread_mutex_init(&job.lock, NULL);
        pthread_cond_init(&job.advanced, NULL);
        /* One task per thread: each loops over blocks itself. */
        gm_parallel_for(nthreads, nthreads, write_worker, &job);
        pthread_cond_destroy(&job.advanced);
        pthread_mutex_destroy(&job.lock);
    } else {
        job.err = ENOMEM;
    }
    for (int b = 0; job.buf && b < job.nblocks; b++)
        free(job.buf[b]);
    for (int s = 0; s < job.nspare; s++)
        free(job.spare[s]);
    free(job.buf);
    free(job.len);
    free(job.ready);
    free(job.spare);
    w->stats.format_cpu += job.format_cpu;
    w->stats.write += job.write_time;
    if (job.err == EPIPE)
        return gm_fail(st, GM_EPIPE, "write failed: %s: %s", w->shown, strerror(EPIPE));
    if (job.err == ENOMEM)
        return gm_fail(st, GM_ENOMEM, "out of memory formatting the output");
    if (job.err)
        return gm_fail(st, GM_EIO, "write failed: %s: %s", w->shown, strerror(job.err));
    w->bytes += job.bytes;
    w->keys += keys->n;
    w->last = keys->width == GM_I32 ? ((const int32_t *)keys->data)[keys->n - 1]
                                    : ((const int64_t *)keys->data)[keys->n - 1];
    w->have_last = 1;
    return GM_OK;
}

/* ------------------------------------------------------------------ -o */

/* The temporary file a fatal signal must not leave behind. */
static char *volatile pending_tmp;

static void on_fatal_signal(int sig)
{
    char *tmp = pending_tmp;
    if (tmp)
        unlink(tmp);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void guard_tmp(char *tmp)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
    pending_tmp = tmp;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = tmp ? on_fatal_signal : SIG_DFL;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue; /* leave ignored signals ignored */
        sigaction(sigs[i], &sa, NULL);
    }
}

int gm_output_open(gm_output *out, const char *path, gm_status *st)
{
    memset(out, 0, sizeof *out);
    if (!path) {
        out->fd = STDOUT_FILENO;
        snprintf(out->shown, sizeof out->shown, "standard output");
        return GM_OK;
    }
    gm_quote(path, out->shown, sizeof out->shown);
    struct stat sb;
    int exists = stat(path, &sb) == 0;
    if (exists && !S_ISREG(sb.st_mode)) {
        out->fd = open(path, O_WRONLY | O_CLOEXEC);
        if (out->fd < 0)
            return gm_fail(st, GM_EIO, "cannot create: %s: %s", out->shown, strerror(errno));
        return GM_OK;
    }
    /* Write beside the real file, so a symbolic link keeps pointing at it. */
    char *final = exists ? realpath(path, NULL) : strdup(path);
    char *dircopy = final ? strdup(final) : NULL;
    char *basecopy = final ? strdup(final) : NULL;
    char *tmp = NULL;
    if (dircopy && basecopy) {
        const char *dir = dirname(dircopy), *base = basename(basecopy);
        size_t size = strlen(dir) + strlen(base) + 32;
        tmp = malloc(size);
        if (tmp)
            snprintf(tmp, size, "%s/.%s.gpumerge-XXXXXX", dir, base);
    }
    free(dircopy);
    free(basecopy);
    if (!tmp) {
        free(final);
        free(tmp);
        return gm_fail(st, GM_ENOMEM, "out of memory opening %s", out->shown);
    }
    out->fd = mkostemp(tmp, O_CLOEXEC);
    if (out->fd < 0) {
        int err = errno;
        free(final);
        free(tmp);
        return gm_fail(st, GM_EIO, "cannot create: %s: %s", out->shown, strerror(err));
    }
    mode_t mode;
    if (exists) {
        mode = sb.st_mode & 07777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    fchmod(out->fd, mode);
    out->final = final;
    out->tmp = tmp;
    guard_tmp(tmp);
    return GM_OK;
}

int gm_output_commit(gm_output *out, gm_status *st)
{
    if (out->fd > STDOUT_FILENO) {
        int rc = close(out->fd);
        out->fd = -1;
        if (rc != 0) {
            int err = errno;
            gm_output_abort(out);
            return gm_fail(st, GM_EIO, "write failed: %s: %s", out->shown, strerror(err));
        }
    }
    if (out->tmp) {
        if (rename(out->tmp, out->final) != 0) {
            int err = errno;
            gm_output_abort(out);
            return gm_fail(st, GM_EIO, "cannot create: %s: %s", out->shown, strerror(err));
        }
        guard_tmp(NULL);
        free(out->tmp);
        out->tmp = NULL;
    }
    free(out->final);
    out->final = NULL;
    return GM_OK;
}

void gm_output_abort(gm_output *out)
{
    if (out->fd > STDOUT_FILENO)
        close(out->fd);
    out->fd = -1;
    if (out->tmp) {
        unlink(out->tmp);
        guard_tmp(NULL);
        free(out->tmp);
        out->tmp = NULL;
    }
    free(out->final);
    out->final = NULL;
}
