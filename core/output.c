/*
 * output.c - parallel formatter and writer (see output.h); the -o file itself is
 * core/outfile.c's.
 *
 * The keys of each chunk are cut into blocks; threads take blocks in order and
 * format each into a buffer from a small pool kept from chunk to chunk (eight
 * digits at a time by multiplications in the lanes of a 64-bit word, stored as
 * one word, where the buffer has room for a word; else two digits per step from a
 * 200-byte table, written backwards from the digit count), and
 * whichever thread finds the next block due writes it and every finished block
 * after it: formatting and writing overlap, output stays in order, and formatting
 * runs at most a few blocks ahead of the writer, so memory stays small whatever
 * the output's size. With four threads or more, a writer thread of its own takes
 * the formatted blocks in order instead, so the writes of one chunk go on while
 * the caller reads, parses and merges the next (on two cores it measured slower:
 * it competes with the formatting threads and reads the blocks from another
 * core's cache). A regular -o file on four threads or more is written through a
 * shared mapping instead (see "mapping" below): formatting is the writing.
 */
#define _GNU_SOURCE
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
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

/* The eight decimal digits of v (< 10^8), zero-filled, as byte values 0..9 of a
 * little-endian word whose lowest byte is the most significant digit: v is cut
 * into two halves of four digits, each half into two pairs, each pair into two
 * digits, every cut in all the word's lanes at once with a multiplication by a
 * reciprocal (x * 10486 >> 20 is x / 100 for x < 10^4, x * 103 >> 10 is x / 10
 * for x < 100), so that no division waits for another. */
static inline uint64_t eight_digits(uint32_t v)
{
    uint64_t x = (v / 10000) | (uint64_t)(v % 10000) << 32;      /* 2 x 32-bit lanes */
    uint64_t hundreds = ((x * 10486) >> 20) & 0x0000007F0000007FULL;
    x = (x - hundreds * 100) << 16 | hundreds;                      /* 4 x 16-bit lanes */
    uint64_t tens = ((x * 103) >> 10) & 0x000F000F000F000FULL;
    return tens | (x - tens * 10) << 8;                             /* 8 bytes */
}

static const uint64_t ASCII_ZEROS = 0x3030303030303030ULL; /* eight '0' bytes */

/* Writes exactly eight digits of v (< 10^8), zero-filled, ending before end. */
static inline void put_8_digits(char *end, uint32_t v)
{
    uint64_t w = eight_digits(v) + ASCII_ZEROS;
    memcpy(end - 8, &w, 8);
}

static inline int digits_u32(uint32_t v)
{
    return v >= 100000 ? (v >= 10000000 ? (v >= 1000000000 ? 10 : v >= 100000000 ? 9 : 8)
                                        : (v >= 1000000 ? 7 : 6))
                       : (v >= 1000 ? (v >= 10000 ? 5 : 4) : (v >= 100 ? 3 : v >= 10 ? 2 : 1));
}

/* The length of v's canonical decimal, as format_u64 writes it. */
static inline int digits_u64(uint64_t v)
{
    if (v <= UINT32_MAX)
        return digits_u32((uint32_t)v);
    v /= 100000000;
    if (v <= UINT32_MAX)
        return digits_u32((uint32_t)v) + 8;
    return digits_u32((uint32_t)(v / 100000000)) + 16;
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

/* format_i32 for a p with at least WIDE_ROOM bytes of room: the digits go out
 * in whole 8-byte words, and up to 7 bytes after the number's end may be
 * overwritten. A number below 10^8 is its eight-digit word shifted past its
 * leading zeros. */
enum { WIDE_ROOM = 1 + 2 + 8 };

static inline char *format_i32_wide(char *p, int32_t key)
{
    *p = '-';
    p += key < 0;
    uint32_t v = key < 0 ? 0u - (uint32_t)key : (uint32_t)key;
    if (v >= 100000000) {
        uint32_t top = v / 100000000;
        v -= top * 100000000;
        if (top >= 10) {
            memcpy(p, digit_pairs + 2 * top, 2);
            p += 2;
        } else {
            *p++ = (char)('0' + top);
        }
        uint64_t w = eight_digits(v) + ASCII_ZEROS;
        memcpy(p, &w, 8);
        return p + 8;
    }
    uint64_t d = eight_digits(v);
    int zeros = d ? __builtin_ctzll(d) >> 3 : 7; /* leading zeros; "0" keeps one */
    uint64_t w = (d + ASCII_ZEROS) >> (8 * zeros);
    memcpy(p, &w, 8);
    return p + 8 - zeros;
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
 * writes came to. Buffers are made as blocks first need them, up to nbufs, so a
 * short output holds few. */
struct gm_wq {
    pthread_mutex_t lock;
    pthread_cond_t changed;  /* a block was written, a buffer freed, or err set */
    int fd;
    int nbufs;
    int made;                /* buffers made so far */
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

/* Where a block's keys start: with -u, the chunk's first key is dropped when the
 * last chunk ended with it. */
static int64_t first_kept(const gm_keys *keys, int unique, const int64_t *before, int64_t lo,
                          int64_t hi)
{
    if (unique && lo == 0 && before && hi > 0) {
        int64_t first = keys->width == GM_I32 ? ((const int32_t *)keys->data)[0]
                                              : ((const int64_t *)keys->data)[0];
        if (first == *before)
            return 1;
    }
    return lo;
}

/* The bytes format_block writes for the same keys. */
static size_t block_length(const gm_keys *keys, int unique, const int64_t *before,
                           int64_t lo, int64_t hi)
{
    size_t len = 0;
    lo = first_kept(keys, unique, before, lo, hi);
    if (keys->width == GM_I32) {
        const int32_t *k = keys->data;
        for (int64_t i = lo; i < hi; i++) {
            if (unique && i > 0 && k[i] == k[i - 1])
                continue;
            uint32_t u = k[i] < 0 ? 0u - (uint32_t)k[i] : (uint32_t)k[i];
            len += (size_t)(k[i] < 0) + (size_t)digits_u32(u) + 1;
        }
    } else {
        const int64_t *k = keys->data;
        for (int64_t i = lo; i < hi; i++) {
            if (unique && i > 0 && k[i] == k[i - 1])
                continue;
            uint64_t u = k[i] < 0 ? 0 - (uint64_t)k[i] : (uint64_t)k[i];
            len += (size_t)(k[i] < 0) + (size_t)digits_u64(u) + 1;
        }
    }
    return len;
}

/* Formats keys [lo, hi) at out, writing nothing at or after end (the block's room:
 * its buffer, or its exact share of the mapping). Returns the length. */
static size_t format_block(const gm_keys *keys, int unique, const int64_t *before,
                           int64_t lo, int64_t hi, char eol, char *out, const char *end)
{
    char *p = out;
    lo = first_kept(keys, unique, before, lo, hi);
    if (keys->width == GM_I32) {
        const int32_t *k = keys->data;
        /* A line takes at most 12 bytes, so the first keys surely have a word's room
         * and need no check: key lo + j starts at most 12 j bytes in. */
        int64_t room = end - out, sure = room >= WIDE_ROOM ? (room - WIDE_ROOM) / 12 + 1 : 0;
        int64_t i = lo, mid = hi - lo > sure ? lo + sure : hi;
        if (!unique) {
            for (; i < mid; i++) {
                p = format_i32_wide(p, k[i]);
                *p++ = eol;
            }
        }
        for (; i < hi; i++) {
            if (unique && i > 0 && k[i] == k[i - 1])
                continue;
            p = end - p >= WIDE_ROOM ? format_i32_wide(p, k[i]) : format_i32(p, k[i]);
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
        while ((b >= job->next_write + job->window || (q->nfree == 0 && q->made == q->nbufs)) &&
               !q->err)
            pthread_cond_wait(&q->changed, &q->lock);
        if (!q->err && q->nfree == 0) { /* a buffer more: made outside the lock */
            q->made++;
            pthread_mutex_unlock(&q->lock);
            char *made = gm_buf_alloc(BLOCK_BYTES, "formatting", NULL);
            pthread_mutex_lock(&q->lock);
            if (made)
                q->pool[q->nfree++] = made;
            else if (!q->err)
                q->err = ENOMEM;
        }
        if (q->err) {
            pthread_cond_broadcast(&q->changed);
            pthread_mutex_unlock(&q->lock);
            return;
        }
        char *buf = q->pool[--q->nfree];
        pthread_mutex_unlock(&q->lock);

        int64_t per = block_keys(job->keys->width);
        int64_t lo = (int64_t)b * per;
        int64_t hi = lo + per < job->keys->n ? lo + per : job->keys->n;
        double t0 = gm_now();
        size_t len = format_block(job->keys, job->unique, job->before, lo, hi, job->eol, buf,
                                  buf + BLOCK_BYTES);
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

/* ------------------------------------------------------------------ mapping */

/* A regular -o file (the temporary file or the in-place target, open for reading
 * and writing) is written through a shared mapping when MAP_THREADS threads or
 * more format: each chunk's text length is counted first (block by block, on all
 * threads), the file is extended by exactly that much with fallocate, so that
 * every page the mapping touches is reserved (a full file system is ENOSPC from
 * fallocate, never a SIGBUS from a page fault; space reserved ahead, below, counts),
 * the new region is mapped (or found in the mapping reserved ahead), and the
 * threads format their blocks straight into it: no copy through write(2) and no
 * single writer. Where fallocate is not supported, or the mapping fails, the
 * output goes on through write(2) from where it is. On two cores the page faults
 * cost more than one write(2) stream (see bench/iofloor.sh), so few threads keep
 * write(2). */
enum { MAP_THREADS = 4, RESERVE_PIECE = 4 << 20, COPY_PIECE = 1 << 20, MAP_UNSUPPORTED = -1 };

static int forced_map;

void gm_output_test_map(int mode) { forced_map = mode; }

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

/* Reserves len bytes of fd's space at at (fallocate, retried when interrupted):
 * 0 or its errno; EOPNOTSUPP when the tests force the file system to refuse. */
static int reserve_space(int fd, off_t at, off_t len)
{
    if (forced_map == 2)
        return EOPNOTSUPP;
    while (fallocate(fd, 0, at, len) != 0)
        if (errno != EINTR)
            return errno;
    return 0;
}

/* A reservation: len bytes of the file from at on, reserved with fallocate piece
 * by piece by one thread while other threads fill the pieces already reserved.
 * fallocate holds the file's lock and runs on one thread, so it overlaps the
 * filling instead of preceding it. A reservation belongs to one region (task 0 of
 * the job that fills it reserves), or runs ahead of the output on a thread of its
 * own (gm_writer_ahead). A thread touches bytes only once they are reserved. */
struct reservation {
    int fd;
    off_t at;
    size_t len;       /* the bytes to reserve: grows until final (under lock) */
    int final;        /* len grows no more (under lock) */
    pthread_mutex_t lock;
    pthread_cond_t grew;
    size_t reserved;  /* bytes reserved from at on (atomic; changed under lock) */
    int err;          /* fallocate's errno: the reserving stopped (under lock) */
    int over;         /* the reserving has ended, whatever it reached (under lock) */
    int stop;         /* asked to end early (atomic; set under lock) */
    int waiting;      /* threads waiting for a piece (under lock) */
    double time;      /* inside fallocate */
};

static void reservation_init(struct reservation *v, int fd, off_t at, size_t len, size_t reserved)
{
    memset(v, 0, sizeof *v);
    v->fd = fd;
    v->at = at;
    v->len = len;
    v->final = 1;
    v->reserved = reserved;
    pthread_mutex_init(&v->lock, NULL);
    pthread_cond_init(&v->grew, NULL);
}

static void reservation_destroy(struct reservation *v)
{
    pthread_cond_destroy(&v->grew);
    pthread_mutex_destroy(&v->lock);
}

/* Reserves up to len (waiting for it to grow until it is final), an error, or a
 * stop. A piece refused for want of space is tried again in halves down to a
 * page, so that a full file system ends the reservation within a page of the
 * space there was. */
static void reservation_run(struct reservation *v)
{
    double t0 = gm_now(), waited = 0;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), piece = RESERVE_PIECE;
    for (size_t done = v->reserved;;) {
        pthread_mutex_lock(&v->lock);
        if (done >= v->len && !v->final && !__atomic_load_n(&v->stop, __ATOMIC_RELAXED)) {
            double w0 = gm_now();
            while (done >= v->len && !v->final && !__atomic_load_n(&v->stop, __ATOMIC_RELAXED))
                pthread_cond_wait(&v->grew, &v->lock);
            waited += gm_now() - w0;
        }
        size_t len = v->len;
        int stop = __atomic_load_n(&v->stop, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&v->lock);
        if (stop || done >= len)
            break;
        size_t n = len - done < piece ? len - done : piece;
        int e = reserve_space(v->fd, v->at + (off_t)done, (off_t)n);
        if (e == ENOSPC && n > page) {
            piece = (n / 2 + page - 1) / page * page;
            continue;
        }
        pthread_mutex_lock(&v->lock);
        if (e)
            v->err = e;
        else
            __atomic_store_n(&v->reserved, done += n, __ATOMIC_RELEASE);
        if (v->waiting)
            pthread_cond_broadcast(&v->grew);
        pthread_mutex_unlock(&v->lock);
        if (e)
            break;
    }
    pthread_mutex_lock(&v->lock);
    v->over = 1;
    pthread_cond_broadcast(&v->grew);
    pthread_mutex_unlock(&v->lock);
    v->time = gm_now() - t0 - waited;
}

/* Lets the reservation reach bytes (no further than cap), and with final no
 * further at all. */
static void reservation_grow(struct reservation *v, size_t bytes, size_t cap, int final)
{
    pthread_mutex_lock(&v->lock);
    bytes = bytes < cap ? bytes : cap;
    if (bytes > v->len && !v->final)
        v->len = bytes;
    if (final)
        v->final = 1;
    pthread_cond_broadcast(&v->grew);
    pthread_mutex_unlock(&v->lock);
}

/* Asks the reserving to end early, waking it where it waits for len to grow. */
static void reservation_stop(struct reservation *v)
{
    pthread_mutex_lock(&v->lock);
    __atomic_store_n(&v->stop, 1, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&v->grew);
    pthread_mutex_unlock(&v->lock);
}

/* Waits until the first end bytes are reserved: 1, or 0 when the reserving ended
 * short of them. */
static int reservation_wait(struct reservation *v, size_t end)
{
    if (__atomic_load_n(&v->reserved, __ATOMIC_ACQUIRE) >= end)
        return 1;
    pthread_mutex_lock(&v->lock);
    v->waiting++;
    while (v->reserved < end && !v->err && !v->over)
        pthread_cond_wait(&v->grew, &v->lock);
    v->waiting--;
    int ok = v->reserved >= end;
    pthread_mutex_unlock(&v->lock);
    return ok;
}

/* Reserving ahead. A run knows how long its output can be before it has a byte of
 * it (no longer than the regular inputs, or than the text a pipe has given so far),
 * so the output's space is reserved from the start on a thread of its own and, on
 * the GPU's text path, a few threads fault its pages into one mapping behind the
 * reservation: the allocation and zeroing of the file's pages, most of the cost of
 * writing a tmpfs file, then overlap the read, the parse and the sort (or CUDA's
 * start-up and the device's work) instead of following them. The output's chunks
 * land in that mapping. Touching is done piece by piece: a piece is taken either by
 * a toucher (gm_touch_pages) or by the writing, never by both at once. */
enum { TOUCH_PIECE = 1 << 20, PIECE_FREE = 0, PIECE_TOUCHING = 1, PIECE_TAKEN = 2, MAX_TOUCHERS = 8 };

struct gm_ahead {
    struct reservation v;
    char *base;       /* the mapping, from the page holding v.at */
    size_t size;
    char *dst;        /* v.at's byte in it */
    size_t cap;       /* the most the reservation may reach: the mapping's bytes from dst */
    pthread_t reserver;
    pthread_t touchers[MAX_TOUCHERS];
    int ntouchers;
    int npieces;
    int next;         /* the next piece a toucher takes (atomic) */
    int *piece;       /* PIECE_FREE, PIECE_TOUCHING or PIECE_TAKEN (atomic) */
};

static void *ahead_reserve(void *arg)
{
    reservation_run(&((struct gm_ahead *)arg)->v);
    return NULL;
}

static void *ahead_touch(void *arg)
{
    struct gm_ahead *a = arg;
    for (;;) {
        int k = __atomic_fetch_add(&a->next, 1, __ATOMIC_RELAXED);
        if (k >= a->npieces || __atomic_load_n(&a->v.stop, __ATOMIC_RELAXED))
            break;
        size_t lo = (size_t)k * TOUCH_PIECE, hi = lo + TOUCH_PIECE < a->cap ? lo + TOUCH_PIECE : a->cap;
        if (!reservation_wait(&a->v, hi)) { /* the reserving ended short of it */
            size_t got = __atomic_load_n(&a->v.reserved, __ATOMIC_ACQUIRE);
            if (got <= lo)
                break;
            hi = got;
        }
        int free_piece = PIECE_FREE;
        if (!__atomic_compare_exchange_n(&a->piece[k], &free_piece, PIECE_TOUCHING, 0,
                                         __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            continue; /* the copy got there first */
        gm_touch_pages(a->dst + lo, a->dst + hi);
        __atomic_store_n(&a->piece[k], PIECE_TAKEN, __ATOMIC_RELEASE);
    }
    return NULL;
}

/* Takes the pieces that hold bytes [lo, hi) of the ahead mapping from the
 * touchers: after it, only the caller writes there. */
static void ahead_take(struct gm_ahead *a, size_t lo, size_t hi)
{
    for (int k = (int)(lo / TOUCH_PIECE); k < a->npieces && (size_t)k * TOUCH_PIECE < hi; k++) {
        int seen = PIECE_FREE;
        if (__atomic_compare_exchange_n(&a->piece[k], &seen, PIECE_TAKEN, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_ACQUIRE))
            continue;
        while (seen == PIECE_TOUCHING) { /* a millisecond at most */
            sched_yield();
            seen = __atomic_load_n(&a->piece[k], __ATOMIC_ACQUIRE);
        }
    }
}

/* Ends reserving ahead: the threads stopped and joined, the mapping gone; what
 * was reserved stays reserved (reserved_end), for the writing that follows. */
static void ahead_end(gm_writer *w)
{
    struct gm_ahead *a = w->ahead;
    if (!a)
        return;
    reservation_stop(&a->v);
    pthread_join(a->reserver, NULL);
    for (int i = 0; i < a->ntouchers; i++)
        pthread_join(a->touchers[i], NULL);
    double t0 = gm_now();
    munmap(a->base, a->size);
    w->stats.write += gm_now() - t0;
    w->stats.ahead += a->v.time;
    w->stats.touchers = a->ntouchers > w->stats.touchers ? a->ntouchers : w->stats.touchers;
    if (a->v.reserved > 0) {
        w->extended = 1;
        w->reserved_end = (int64_t)a->v.at + (int64_t)a->v.reserved;
    }
    reservation_destroy(&a->v);
    free(a->piece);
    free(a);
    w->ahead = NULL;
}

/* A region of len bytes at the output's end, mapped whole at once (a mapping may
 * reach past the end of the file), or a part of the ahead mapping, with the
 * reservation that covers it. */
struct region {
    struct reservation own;
    struct reservation *v; /* &own, or the ahead's */
    struct gm_ahead *ahead;/* the ahead whose mapping this is, or NULL */
    size_t off;       /* the region's first byte in v */
    size_t len;
    char *base;       /* its own mapping, from the page holding the first byte */
    size_t size;
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
    struct gm_ahead *a = w->ahead;
    int fits = 0;
    if (a) {
        pthread_mutex_lock(&a->v.lock);
        fits = !a->v.err && at >= a->v.at && (size_t)(at - a->v.at) + len <= a->v.len;
        pthread_mutex_unlock(&a->v.lock);
    }
    if (fits) {
        r->v = &a->v;
        r->ahead = a;
        r->off = (size_t)(at - a->v.at);
        r->dst = a->dst + r->off;
        return 0;
    }
    ahead_end(w); /* the output outgrew it, or its reserving failed */
    size_t reserved = 0;
    if (w->reserved_end > at) /* reserved ahead */
        reserved = (size_t)(w->reserved_end - at) < len ? (size_t)(w->reserved_end - at) : len;
    double t0 = gm_now();
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t skip = (size_t)at % page;
    r->size = skip + len;
    r->base = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, at - (off_t)skip);
    r->map_time = gm_now() - t0;
    if (r->base == MAP_FAILED)
        return MAP_UNSUPPORTED;
    r->dst = r->base + skip;
    reservation_init(&r->own, fd, at, len, reserved);
    r->v = &r->own;
    return 0;
}

/* Task 0 of a region's job: reserves its space, unless it lies in the ahead's. */
static void region_reserve(struct region *r)
{
    if (r->v == &r->own)
        reservation_run(&r->own);
}

/* Waits until bytes [lo, hi) of the region are reserved and takes them from the
 * touchers: 1, or 0 when they never will be (the task must not touch them). */
static int region_take(struct region *r, size_t lo, size_t hi)
{
    if (!reservation_wait(r->v, r->off + hi)) {
        __atomic_store_n(&r->failed, 1, __ATOMIC_RELAXED);
        return 0;
    }
    if (r->ahead)
        ahead_take(r->ahead, r->off + lo, r->off + hi);
    return 1;
}

/* Unmaps the filled region and accounts for it: 0 (the output is len bytes
 * longer), MAP_UNSUPPORTED (nothing counts: the caller writes the chunk again with
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
        reservation_destroy(&r->own);
    }
    if (err == EOPNOTSUPP || err == ENOSYS)
        return MAP_UNSUPPORTED;
    if (err)
        return err;
    if (r->failed) /* the reserving ended early: the output stopped being wanted */
        return EIO;
    w->bytes += (int64_t)r->len;
    return 0;
}

/* Gives up the mapping for good: the output goes on with write(2) at its end. */
static int map_abandon(gm_writer *w)
{
    ahead_end(w);
    w->map = 0;
    return lseek(w->fd, (off_t)w->bytes, SEEK_SET) == (off_t)w->bytes ? 0 : errno;
}

/* One chunk of keys formatted into the mapping: task 0 reserves, task b + 1
 * formats block b. */
struct map_job {
    const gm_keys *keys;
    int unique;
    const int64_t *before;
    char eol;
    int64_t per;       /* keys per block */
    int64_t nkeys;
    size_t *pos;       /* block b's text starts at pos[b]; pos[nblocks] is the length */
    struct region r;
    int64_t format_ns; /* formatting, summed over threads (atomic) */
};

static void map_length_task(void *ctx, int b)
{
    struct map_job *j = ctx;
    int64_t lo = (int64_t)b * j->per, hi = lo + j->per < j->nkeys ? lo + j->per : j->nkeys;
    j->pos[b + 1] = block_length(j->keys, j->unique, j->before, lo, hi);
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
    format_block(j->keys, j->unique, j->before, lo, hi, j->eol, j->r.dst + j->pos[b],
                 j->r.dst + j->pos[b + 1]);
    int64_t ns = (int64_t)((gm_now() - t0) * 1e9);
    __atomic_fetch_add(&j->format_ns, ns, __ATOMIC_RELAXED);
}

/* Formats one chunk into the mapping. Returns 0, MAP_UNSUPPORTED or an errno value. */
static int map_put(gm_writer *w, const gm_keys *keys)
{
    struct map_job j;
    memset(&j, 0, sizeof j);
    j.keys = keys;
    j.unique = w->unique;
    j.before = w->have_last ? &w->last : NULL;
    j.eol = w->eol;
    j.per = block_keys(keys->width);
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
    const char *src;
    struct region r;
};

static void copy_task(void *ctx, int task)
{
    struct copy_job *c = ctx;
    if (task == 0) {
        region_reserve(&c->r);
        return;
    }
    size_t lo = (size_t)(task - 1) * COPY_PIECE;
    size_t n = c->r.len - lo < COPY_PIECE ? c->r.len - lo : COPY_PIECE;
    if (region_take(&c->r, lo, lo + n))
        memcpy(c->r.dst + lo, c->src + lo, n);
}

/* Copies text into the mapping. Returns 0, MAP_UNSUPPORTED or an errno value. */
static int map_put_text(gm_writer *w, const char *text, size_t len)
{
    double t0 = gm_now(), inside = w->stats.write;
    struct copy_job c;
    c.src = text;
    int e = region_open(&c.r, w, len);
    if (!e) {
        gm_parallel_for(w->nthreads, (int)((len + COPY_PIECE - 1) / COPY_PIECE) + 1, copy_task, &c);
        e = region_close(w, &c.r);
    }
    w->stats.write = inside + (gm_now() - t0); /* fallocate, mmap and munmap inside it */
    return e;
}

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

/* The first byte is due: the way of writing is chosen. */
static void writer_begin(gm_writer *w)
{
    if (w->begun)
        return;
    w->begun = 1;
    w->map = map_wanted(w);
}

/* Starts touchers until there are n (at most MAX_TOUCHERS). */
static void ahead_touchers(struct gm_ahead *a, int n)
{
    while (a->ntouchers < n && a->ntouchers < MAX_TOUCHERS &&
           gm_thread_start(&a->touchers[a->ntouchers], ahead_touch, a) == 0)
        a->ntouchers++;
}

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
        ahead_touchers(w->ahead, touchers);
    if (!w->file->tmp || most == 0 || w->ahead || /* a replacement or a spool only */
        address_space_limited())
        return GM_OK;
    writer_begin(w);
    if (!w->map)
        return GM_OK;
    struct gm_ahead *a = calloc(1, sizeof *a);
    int npieces = (int)((most + TOUCH_PIECE - 1) / TOUCH_PIECE);
    int *piece = calloc((size_t)npieces, sizeof *piece);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t skip = (size_t)w->bytes % page;
    char *base = a && piece ? mmap(NULL, skip + most, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd,
                                   (off_t)w->bytes - (off_t)skip)
                            : MAP_FAILED;
    if (base == MAP_FAILED) { /* the writing reserves and maps as it goes */
        free(piece);
        free(a);
        return GM_OK;
    }
    a->base = base;
    a->size = skip + most;
    a->dst = base + skip;
    a->cap = (size_t)most;
    a->piece = piece;
    a->npieces = npieces;
    reservation_init(&a->v, w->fd, (off_t)w->bytes, 0, 0);
    a->v.final = 0;
    if (gm_thread_start(&a->reserver, ahead_reserve, a) != 0) {
        reservation_destroy(&a->v);
        munmap(base, a->size);
        free(piece);
        free(a);
        return GM_OK;
    }
    w->ahead = a;
    ahead_touchers(a, touchers);
    return GM_OK;
}

void gm_writer_ahead_grow(gm_writer *w, uint64_t bytes, int final)
{
    if (w->ahead)
        reservation_grow(&w->ahead->v, (size_t)bytes, w->ahead->cap, final);
}

int gm_writer_ahead(gm_writer *w, uint64_t bytes, int touchers, gm_status *st)
{
    int began = w->ahead != NULL;
    int rc = gm_writer_ahead_open(w, bytes, touchers, st);
    if (!began) /* one that runs already keeps its length */
        gm_writer_ahead_grow(w, bytes, 1);
    return rc;
}

void gm_writer_ahead_end(gm_writer *w)
{
    ahead_end(w);
}

/* How many blocks are formatted ahead of the writer (returned), and how many
 * buffers they take (*nbufs): twice the threads and two more, within w->mem but
 * one at least. The
 * buffers are that many and two more; with a writer thread, twice the window and
 * two more, so that the next chunk's formatting starts while the thread still
 * writes this one's last blocks. No block waits for a buffer that only a later
 * block holds: a window's blocks hold at most a window's buffers. */
static int writer_window(const gm_writer *w, int threaded, int *nbufs)
{
    int window = 2 * w->nthreads + 2;
    if (w->mem) {
        size_t most = w->mem / BLOCK_BYTES;
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
    writer_begin(w);
    if (w->map) {
        int e = map_put(w, keys);
        if (e == MAP_UNSUPPORTED)
            e = map_abandon(w); /* and on through write(2) below */
        else if (!e)
            return chunk_done(w, keys);
        if (e)
            return writer_error(w, e, st);
    }
    int threaded = w->nthreads >= WRITER_THREAD_CORES, nbufs;
    int window = writer_window(w, threaded, &nbufs);
    if (!w->q) {
        w->q = wq_start(w->fd, nbufs, threaded);
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
    /* as many threads as blocks may be formatted at once, each looping over blocks */
    int nthreads = w->nthreads < window ? w->nthreads : window;
    if (nthreads > job.nblocks)
        nthreads = job.nblocks;
    int err = 0;
    if (job.buf && job.len && job.ready)
        gm_parallel_for(nthreads, nthreads, format_worker, &job);
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
    return chunk_done(w, keys);
}

int gm_writer_put_text(gm_writer *w, const char *text, size_t len, gm_status *st)
{
    if (len == 0)
        return GM_OK;
    writer_begin(w);
    int err = 0;
    if (w->map) {
        err = map_put_text(w, text, len);
        if (err == MAP_UNSUPPORTED)
            err = map_abandon(w);
        else if (!err)
            return GM_OK;
        if (err)
            return writer_error(w, err, st);
    }
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
    int err = 0;
    ahead_end(w);
    if (q) {
        wq_join(q);
        err = q->err;
        w->stats.write += q->write_time;
        w->bytes += q->bytes;
        wq_free(q);
        w->q = NULL;
    }
    /* The file ends where the output does, whatever the mapping reserved. */
    if (!err && w->extended && ftruncate(w->fd, (off_t)w->bytes) != 0)
        err = errno;
    w->extended = 0;
    return err ? writer_error(w, err, st) : GM_OK;
}

/* ------------------------------------------------------------------ -o */

int gm_output_open_sized(gm_output *out, const char *path, uint64_t expect_bytes,
                         const char *tmpdir, gm_status *st)
{
    memset(out, 0, sizeof *out);
    int rc = gm_outfile_plan(&out->file, path, st);
    if (!rc)
        rc = gm_outfile_open(&out->file, expect_bytes, tmpdir, st);
    if (rc) {
        gm_outfile_abort(&out->file);
        out->fd = -1;
        return rc;
    }
    memcpy(out->shown, out->file.shown, sizeof out->shown);
    out->fd = out->file.fd;
    struct stat sb;
    if (fstat(out->fd, &sb) == 0)
        gm_pipe_enlarge(out->fd, &sb); /* an output pipe */
    return GM_OK;
}

int gm_output_open(gm_output *out, const char *path, gm_status *st)
{
    return gm_output_open_sized(out, path, 0, NULL, st);
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
