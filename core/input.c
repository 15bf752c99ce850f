/*
 * input.c - the block reader and the parallel parser (see input.h for the
 * contract and the two stages).
 *
 * Reader: two block buffers per input (gm_buf_alloc, so they can become pinned
 * memory). For a pipe or a device a thread fills them in turn; the consumer takes
 * a full one, the reader refills the other. The thread is cancelled only inside
 * read(2), so closing an input whose writer never ends (yes | gpumerge merge - |
 * head) does not hang. A regular file needs no thread: the consumer fills the
 * other buffer with parallel preads when it asks for a block, which on many cores
 * read several times faster than one thread can. Where the consumer has other
 * work between blocks (a merge on four threads or more: on two, a reader thread
 * competes with the parser for the cores) a reader thread reads ahead with plain
 * preads instead, so the next block is read while the current one is parsed,
 * merged and written.
 *
 * Parser: newlines are found first, so each line's length is known before it is
 * parsed. The fast path takes "[-]digits" lines of up to 16 digits: on x86-64
 * processors with SSE4.1 the 16 bytes ending at the newline are converted with
 * multiply-adds (and up to three digits before them by hand, for int64's 19);
 * elsewhere eight digits at a time with SWAR arithmetic (the digit
 * test and conversion described by D. Lemire, "Parsing series of integers with
 * SIMD", 2018). Anything unusual (blanks, a carriage return, more digits, the
 * first bytes of a block) goes through a plain byte loop that is the reference for
 * what is accepted. Keys land line-indexed in an int32 staging area (a chunk that
 * meets a wider value moves to an int64 buffer of its own) and are then gathered,
 * without the gaps of blank lines, onto the end of the caller's key buffer.
 */
#define _GNU_SOURCE
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

enum problem { PROB_NONE, PROB_NOT_INT, PROB_RANGE, PROB_DISORDER, PROB_DECLINE };

struct gm_chunk {
    const char *begin, *end; /* text of whole lines */
    int64_t lines;           /* number of lines in the chunk */
    int64_t line0;           /* lines in the block's chunks before this one */
    int64_t n;               /* number of keys */
    int64_t key0;            /* keys in the block's chunks before this one */
    int64_t *wide;           /* the keys, when one does not fit int32 (wide_used) */
    int64_t wide_cap;
    int wide_used;
    int64_t first, last;
    int64_t first_line;      /* chunk-local line number of the first key */
    const char *first_text;  /* and its text */
    enum problem prob;       /* the first problem in the chunk, if any */
    int64_t prob_line;
    const char *prob_text;
    int alloc_failed;
};

static int force_scalar;
static size_t forced_block;
static int forced_read_ahead;

void gm_input_test_scalar(int on) { force_scalar = on; }
void gm_input_test_block_size(size_t bytes) { forced_block = bytes; }
void gm_input_test_read_ahead(int on) { forced_read_ahead = on; }

enum { DEFAULT_BLOCK = 8 << 20, PREAD_PIECE = 256 << 10 };

/* ------------------------------------------------------------------ keys */

int gm_keybuf_reserve(gm_keybuf *kb, int64_t extra, gm_width w, gm_status *st)
{
    if (kb->width != GM_I32 && kb->width != GM_I64)
        kb->width = GM_I32;
    gm_width nw = w > kb->width ? w : kb->width;
    int64_t need = kb->n + extra;
    if (need <= kb->cap && nw == kb->width)
        return GM_OK;
    int64_t cap = kb->cap;
    if (need > cap) {
        cap = cap * 2 > 4096 ? cap * 2 : 4096;
        if (kb->limit > 0 && cap > kb->limit)
            cap = kb->limit;
        if (cap < need)
            cap = need;
    }
    if (nw == kb->width) {
        void *p = gm_buf_resize(kb->data, (size_t)cap * nw, "keys", st);
        if (!p)
            return GM_ENOMEM;
        kb->data = p;
        kb->cap = cap;
        return GM_OK;
    }
    /* Widen: a new int64 array. */
    int64_t *p = gm_buf_alloc((size_t)cap * sizeof *p, "keys", st);
    if (!p)
        return GM_ENOMEM;
    const int32_t *old = kb->data;
    for (int64_t i = 0; i < kb->n; i++)
        p[i] = old[i];
    gm_buf_free(kb->data);
    kb->data = p;
    kb->cap = cap;
    kb->width = GM_I64;
    return GM_OK;
}

int gm_keybuf_append(gm_keybuf *kb, const void *src, int64_t n, gm_width w, gm_status *st)
{
    int rc = gm_keybuf_reserve(kb, n, w, st);
    if (rc)
        return rc;
    if (w == kb->width) {
        memcpy((char *)kb->data + (size_t)kb->n * w, src, (size_t)n * w);
    } else { /* int32 into int64 */
        const int32_t *s = src;
        int64_t *d = (int64_t *)kb->data + kb->n;
        for (int64_t i = 0; i < n; i++)
            d[i] = s[i];
    }
    kb->n += n;
    return GM_OK;
}

void gm_keybuf_consume(gm_keybuf *kb, int64_t n)
{
    if (n <= 0)
        return;
    size_t w = (size_t)kb->width;
    if (n < kb->n)
        memmove(kb->data, (char *)kb->data + (size_t)n * w, (size_t)(kb->n - n) * w);
    kb->n -= n < kb->n ? n : kb->n;
}

void gm_keybuf_free(gm_keybuf *kb)
{
    gm_buf_free(kb->data);
    kb->data = NULL;
    kb->n = kb->cap = 0;
}

/* ------------------------------------------------------------------ reading */

struct slot {
    char *buf;
    size_t cap;
    size_t len;    /* bytes of whole lines */
    size_t carry;  /* bytes of a partial line after them */
    int eof;
    int full;      /* handed to the consumer, not yet released */
    int err;       /* the reader failed here (status in rd->st) */
};

/* A slot's error for a line longer than gm_input.line_max: its message is written
 * when the block is handed out, once the lines before it are counted. */
enum { LINE_TOO_LONG = -1 };

struct gm_reader {
    gm_input *in;
    pthread_t tid;
    int started;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    struct slot s[2];
    int cur;       /* slot held by the consumer, or -1 */
    int next;      /* slot the consumer takes next */
    int stop;
    int ended;     /* the last block has been handed out */
    int regular;   /* a regular file: read in the caller by parallel preads */
    int64_t start, size;
    int64_t total; /* bytes read so far */
    gm_status st;
};

int gm_input_open(gm_input *in, const char *name, gm_status *st)
{
    memset(in, 0, sizeof *in);
    in->fd = -1;
    in->size = -1;
    in->name = name;
    gm_quote(name, in->shown, sizeof in->shown);
    if (strcmp(name, "-") == 0) {
        in->fd = STDIN_FILENO;
    } else {
        in->fd = open(name, O_RDONLY | O_CLOEXEC);
        if (in->fd < 0)
            return gm_fail(st, GM_EIO, "cannot read: %s: %s", in->shown, strerror(errno));
    }
    struct stat sb;
    if (fstat(in->fd, &sb) != 0)
        return gm_fail(st, GM_EIO, "cannot read: %s: %s", in->shown, strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return gm_fail(st, GM_EIO, "cannot read: %s: %s", in->shown, strerror(EISDIR));
    return GM_OK;
}

/* read(2) that the closing thread may cancel; the only cancellation point. */
static ssize_t cancellable_read(int fd, void *buf, size_t len)
{
    int old;
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
    ssize_t got = read(fd, buf, len);
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    return got;
}

/* Reads len bytes at off into buf with preads on the pool's threads, a piece
 * each. */
struct pread_job {
    int fd;
    char *buf;
    int64_t off;
    size_t len;
    int pieces;
    int err;      /* an errno, or -1 for a file that ended early */
};

static void pread_piece(void *ctx, int i)
{
    struct pread_job *job = ctx;
    size_t lo = job->len * (size_t)i / (size_t)job->pieces;
    size_t hi = job->len * (size_t)(i + 1) / (size_t)job->pieces;
    int err = gm_pread_all(job->fd, job->buf + lo, hi - lo, job->off + (int64_t)lo);
    if (err)
        job->err = err;
}

static int pread_parallel(struct gm_reader *rd, char *buf, size_t len)
{
    struct pread_job job = { rd->in->fd, buf, rd->start + rd->total, len, 1, 0 };
    job.pieces = (int)(len / PREAD_PIECE) + 1;
    if (job.pieces > gm_cpu_count())
        job.pieces = gm_cpu_count();
    if (rd->started) /* on the reader thread: the pool is the consumer's */
        job.pieces = 1;
    gm_parallel_for(job.pieces, job.pieces, pread_piece, &job);
    if (job.err > 0)
        return gm_fail(&rd->st, GM_EIO, "cannot read: %s: %s", rd->in->shown, strerror(job.err));
    if (job.err < 0)
        return gm_fail(&rd->st, GM_EIO, "%s: file changed while reading", rd->in->shown);
    return 0;
}

/* -z: lines end with NUL. Swapping NUL and newline as the bytes arrive lets every
 * later stage look for newlines; a newline inside a NUL-ended line becomes a NUL,
 * which no integer holds, so such a line is still reported as not an integer (its
 * message swaps the bytes back). */
static void swap_terminators(char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = p[i] == '\0' ? '\n' : p[i] == '\n' ? '\0' : p[i];
}

static void release_prefix(gm_input *in);

/* Room for a partial line that grows to want bytes: no more than one byte past
 * in->line_max, which is enough to tell that the line is too long. */
static size_t line_room(const gm_input *in, size_t want)
{
    return in->line_max && want > in->line_max + 1 ? in->line_max + 1 : want;
}

/* Fills slot s (taking prev's partial line first) with whole lines. Returns 0, or
 * an error code with rd->st set. */
static int fill(struct gm_reader *rd, struct slot *s, const struct slot *prev)
{
    gm_input *in = rd->in;
    size_t have = 0;
    if (prev && prev->carry) {
        if (in->line_max && prev->carry > in->line_max)
            return LINE_TOO_LONG;
        if (prev->carry > s->cap) {
            size_t cap = line_room(in, prev->carry * 2);
            char *p = gm_buf_resize(s->buf, cap, "reading", &rd->st);
            if (!p)
                return GM_ENOMEM;
            s->buf = p;
            s->cap = cap;
        }
        memcpy(s->buf, prev->buf + prev->len, prev->carry);
        have = prev->carry;
    }
    size_t scanned = have; /* no newline in [0, scanned) */
    int eof = 0;
    for (;;) {
        while (have < s->cap && !eof && rd->regular) {
            size_t want = s->cap - have;
            if ((int64_t)want > rd->size - rd->start - rd->total)
                want = (size_t)(rd->size - rd->start - rd->total);
            if (want == 0) {
                eof = 1;
                break;
            }
            int err = pread_parallel(rd, s->buf + have, want);
            if (err)
                return err;
            if (in->zero)
                swap_terminators(s->buf + have, want);
            have += want;
            rd->total += (int64_t)want;
        }
        while (have < s->cap && !eof && !rd->regular) {
            if (in->prefix) {
                size_t n = in->prefix_end - in->prefix_at;
                n = n < s->cap - have ? n : s->cap - have;
                memcpy(s->buf + have, in->prefix + in->prefix_at, n);
                if (in->zero)
                    swap_terminators(s->buf + have, n);
                in->prefix_at += n;
                have += n;
                release_prefix(in);
                continue;
            }
            ssize_t got = cancellable_read(in->fd, s->buf + have, s->cap - have);
            if (got < 0) {
                if (errno == EINTR)
                    continue;
                return gm_fail(&rd->st, GM_EIO, "cannot read: %s: %s", in->shown,
                               strerror(errno));
            }
            if (got == 0)
                eof = 1;
            if (in->zero)
                swap_terminators(s->buf + have, (size_t)got);
            have += (size_t)got;
        }
        if (eof) {
            s->len = have;
            s->carry = 0;
            s->eof = 1;
            break;
        }
        const char *nl = have > scanned ? memrchr(s->buf + scanned, '\n', have - scanned) : NULL;
        if (nl) {
            s->len = (size_t)(nl - s->buf) + 1;
            s->carry = have - s->len;
            s->eof = 0;
            break;
        }
        /* One line longer than the block: make room and read on, up to one byte
         * past the longest line allowed. */
        if (in->line_max && have > in->line_max)
            return LINE_TOO_LONG;
        scanned = have;
        size_t cap = line_room(in, s->cap * 2);
        char *p = gm_buf_resize(s->buf, cap, "reading", &rd->st);
        if (!p)
            return GM_ENOMEM;
        s->buf = p;
        s->cap = cap;
    }
    if (s->eof && rd->regular) {
        struct stat sb;
        if (fstat(in->fd, &sb) != 0 || (int64_t)sb.st_size != rd->size)
            return gm_fail(&rd->st, GM_EIO, "%s: file changed while reading", in->shown);
        /* Leave the offset where read(2) would have (a shared standard input). */
        lseek(in->fd, rd->start + rd->total, SEEK_SET);
    }
    return 0;
}

static void *reader_main(void *arg)
{
    struct gm_reader *rd = arg;
    int old;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    const struct slot *prev = NULL;
    for (int j = 0;; j ^= 1) {
        struct slot *s = &rd->s[j];
        pthread_mutex_lock(&rd->lock);
        while (s->full && !rd->stop)
            pthread_cond_wait(&rd->cv, &rd->lock);
        int stop = rd->stop;
        pthread_mutex_unlock(&rd->lock);
        if (stop)
            return NULL;
        int err = fill(rd, s, prev);
        pthread_mutex_lock(&rd->lock);
        s->err = err;
        s->full = 1;
        pthread_cond_broadcast(&rd->cv);
        pthread_mutex_unlock(&rd->lock);
        if (err || s->eof)
            return NULL;
        prev = s;
    }
}

int gm_input_start(gm_input *in, size_t block_bytes, gm_status *st)
{
    if (in->rd)
        return GM_OK;
    if (forced_block)
        block_bytes = forced_block;
    if (block_bytes < 16)
        block_bytes = 16;
    struct gm_reader *rd = calloc(1, sizeof *rd);
    if (!rd)
        return gm_fail(st, GM_ENOMEM, "out of memory reading %s", in->shown);
    rd->in = in;
    rd->cur = -1;
    pthread_mutex_init(&rd->lock, NULL);
    pthread_cond_init(&rd->cv, NULL);
    in->rd = rd;
    for (int i = 0; i < 2; i++) {
        rd->s[i].buf = gm_buf_alloc(block_bytes, "reading", st);
        if (!rd->s[i].buf)
            return GM_ENOMEM;
        rd->s[i].cap = block_bytes;
    }
    if (in->drained) {
        rd->s[0].full = 1;
        rd->s[0].eof = 1;
        return GM_OK;
    }
    struct stat sb;
    int known = fstat(in->fd, &sb) == 0;
    if (known && S_ISREG(sb.st_mode)) {
        off_t at = lseek(in->fd, 0, SEEK_CUR);
        if (at >= 0) {
            rd->regular = 1;
            rd->start = at;
            rd->size = (int64_t)sb.st_size > at ? (int64_t)sb.st_size : at;
            in->size = rd->size - at;
            if (!in->ahead && !forced_read_ahead)
                return GM_OK; /* read in gm_input_next, no thread */
        }
    } else if (known) {
        gm_pipe_enlarge(in->fd, &sb);
    }
    rd->started = 1; /* before the thread, which reads it */
    if (gm_thread_start(&rd->tid, reader_main, rd) != 0) {
        rd->started = 0;
        return gm_fail(st, GM_ENOMEM, "cannot start a reader for %s", in->shown);
    }
    return GM_OK;
}

/* Hands the filled slot s (the reader's next) out as block b, or its error err. */
static int hand_out(gm_input *in, struct slot *s, int err, gm_block *b, gm_status *st)
{
    struct gm_reader *rd = in->rd;
    if (err == LINE_TOO_LONG) /* the block's first line: those before are counted */
        return gm_fail(st, GM_EINPUT, "%s:%lld: line longer than the memory budget (-S)",
                       in->shown, (long long)in->line + 1);
    if (err) {
        *st = rd->st;
        return err;
    }
    rd->cur = rd->next;
    rd->next ^= 1;
    b->text = s->buf;
    b->len = s->len;
    b->eof = s->eof;
    rd->ended = s->eof;
    in->bytes += (int64_t)s->len;
    return GM_OK;
}

int gm_input_next(gm_input *in, gm_block *b, gm_status *st)
{
    if (!in->rd) {
        int rc = gm_input_start(in, DEFAULT_BLOCK, st);
        if (rc)
            return rc;
    }
    struct gm_reader *rd = in->rd;
    if (rd->ended) { /* after the last block: empty ones */
        b->text = rd->s[0].buf;
        b->len = 0;
        b->eof = 1;
        return GM_OK;
    }
    double t0 = gm_now();
    if (rd->regular && !rd->started) { /* fill the other slot here; the current one holds the carry */
        struct slot *s = &rd->s[rd->next];
        int err = fill(rd, s, rd->cur >= 0 ? &rd->s[rd->cur] : NULL);
        in->wait += gm_now() - t0;
        return hand_out(in, s, err, b, st);
    }
    pthread_mutex_lock(&rd->lock);
    if (rd->cur >= 0) {
        rd->s[rd->cur].full = 0;
        rd->cur = -1;
        pthread_cond_broadcast(&rd->cv);
    }
    struct slot *s = &rd->s[rd->next];
    while (!s->full)
        pthread_cond_wait(&rd->cv, &rd->lock);
    pthread_mutex_unlock(&rd->lock);
    in->wait += gm_now() - t0;
    return hand_out(in, s, s->err, b, st);
}

static void stop_reader(gm_input *in)
{
    struct gm_reader *rd = in->rd;
    if (!rd)
        return;
    if (rd->started) {
        pthread_mutex_lock(&rd->lock);
        rd->stop = 1;
        pthread_cond_broadcast(&rd->cv);
        pthread_mutex_unlock(&rd->lock);
        pthread_cancel(rd->tid); /* acts only inside read(2) */
        pthread_join(rd->tid, NULL);
    }
    for (int i = 0; i < 2; i++)
        gm_buf_free(rd->s[i].buf);
    pthread_cond_destroy(&rd->cv);
    pthread_mutex_destroy(&rd->lock);
    free(rd);
    in->rd = NULL;
}

/* The prefix's bytes handed out so far give their memory back, a few megabytes at a
 * time, and the whole buffer goes once the last of them is out: the sort that now
 * parses them keeps to its budget. */
static void release_prefix(gm_input *in)
{
    enum { RELEASE_STEP = 8 << 20 };
    if (in->prefix_at == in->prefix_end) {
        gm_buf_free(in->prefix);
        in->prefix = NULL;
    } else if (in->prefix_at - in->prefix_freed >= RELEASE_STEP) {
        gm_buf_release(in->prefix, in->prefix_freed, in->prefix_at);
        in->prefix_freed = in->prefix_at;
    }
}

void gm_input_set_prefix(gm_input *in, char *buf, size_t from, size_t to)
{
    gm_buf_free(in->prefix);
    in->prefix = buf;
    in->prefix_at = in->prefix_freed = from;
    in->prefix_end = to;
    if (from == to)
        release_prefix(in);
}

/* The reader stops after the fill it is in (none is cut short, so no byte read
 * from the descriptor is lost) and is joined. */
static void drain_reader(struct gm_reader *rd)
{
    if (!rd->started)
        return;
    pthread_mutex_lock(&rd->lock);
    rd->stop = 1;
    pthread_cond_broadcast(&rd->cv);
    pthread_mutex_unlock(&rd->lock);
    pthread_join(rd->tid, NULL);
    rd->started = 0;
}

/* Appends n bytes at p to *buf (length *len, room *cap). Returns 0 or -1. */
static int append_bytes(char **buf, size_t *len, size_t *cap, const char *p, size_t n)
{
    if (n == 0)
        return 0;
    if (*len + n > *cap) {
        size_t want = (*len + n) * 2 + 64;
        char *q = realloc(*buf, want);
        if (!q)
            return -1;
        *buf = q;
        *cap = want;
    }
    memcpy(*buf + *len, p, n);
    *len += n;
    return 0;
}

int gm_input_take_rest(gm_input *in, const gm_block *b, char **buf, size_t *len,
                       gm_status *st)
{
    struct gm_reader *rd = in->rd;
    size_t cap = 0;
    *buf = NULL;
    *len = 0;
    int fail = 0;
    if (rd) {
        drain_reader(rd);
        const struct slot *cur = rd->cur >= 0 ? &rd->s[rd->cur] : NULL, *prev = NULL;
        if (b && b->len)
            fail |= append_bytes(buf, len, &cap, b->text, b->len);
        if (cur) {
            fail |= append_bytes(buf, len, &cap, cur->buf + cur->len, cur->carry);
            prev = cur;
        }
        /* the slots filled ahead and not handed out, in order: each begins with
         * the carry of the one before it */
        for (int k = 0; k < 2 && !rd->ended && !(prev && prev->eof); k++) {
            const struct slot *s = &rd->s[rd->next ^ k];
            if (s == cur || !s->full)
                break;
            if (s->err) {
                *st = rd->st;
                free(*buf);
                *buf = NULL;
                return s->err;
            }
            size_t skip = prev ? prev->carry : 0, n = s->len + s->carry;
            if (n > skip)
                fail |= append_bytes(buf, len, &cap, s->buf + skip, n - skip);
            prev = s;
        }
        if (rd->regular)
            lseek(in->fd, rd->start + rd->total, SEEK_SET);
    }
    if (in->zero && !fail) /* the slots' bytes as they were read */
        swap_terminators(*buf, *len);
    if (in->prefix && in->prefix_at < in->prefix_end) { /* not swapped yet */
        fail |= append_bytes(buf, len, &cap, in->prefix + in->prefix_at,
                             in->prefix_end - in->prefix_at);
        in->prefix_at = in->prefix_end;
    }
    if (fail) {
        free(*buf);
        *buf = NULL;
        return gm_fail(st, GM_ENOMEM, "out of memory reading %s", in->shown);
    }
    return GM_OK;
}

void gm_input_close(gm_input *in)
{
    stop_reader(in);
    gm_buf_free(in->prefix);
    in->prefix = NULL;
    if (in->chunks) {
        for (int c = 0; c < in->chunk_cap; c++)
            free(in->chunks[c].wide);
        free(in->chunks);
        in->chunks = NULL;
    }
    gm_buf_free(in->stage);
    in->stage = NULL;
    in->stage_cap = 0;
    if (in->fd > STDIN_FILENO)
        close(in->fd);
    in->fd = -1;
}

/* ------------------------------------------------------------------ parsing */

static const uint64_t pow10[20] = {
    1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
    100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL,
    1000000000000ULL, 10000000000000ULL, 100000000000000ULL,
    1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
    1000000000000000000ULL, 10000000000000000000ULL,
};

static inline int is_blank(char c) { return c == ' ' || c == '\t'; }
static inline int is_digit(char c) { return (unsigned char)(c - '0') < 10; }

/* Number of leading ASCII digits in the 8 bytes w (first byte lowest). A byte is a
 * digit iff its high nibble is 3 and adding 6 keeps it 3. Carries only move from a
 * non-digit byte to later ones, so the first non-digit is found exactly. */
static inline int swar_digit_count(uint64_t w)
{
    const uint64_t hi = 0xF0F0F0F0F0F0F0F0ULL, thirty = 0x3030303030303030ULL;
    uint64_t bad = ((w & hi) ^ thirty) | (((w + 0x0606060606060606ULL) & hi) ^ thirty);
    uint64_t flag = ((bad + 0x7F7F7F7F7F7F7F7FULL) | bad) & 0x8080808080808080ULL;
    return flag ? __builtin_ctzll(flag) >> 3 : 8;
}

/* Value of the first d (1..8) digits held in w, first byte most significant. */
static inline uint64_t swar_digits_value(uint64_t w, int d)
{
    w -= 0x3030303030303030ULL;
    w <<= 8 * (8 - d); /* drop bytes after the digits; zero bytes lead */
    w = (w * 10) + (w >> 8);
    w = (((w & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
         (((w >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >> 32;
    return w;
}

enum line_kind { LINE_KEY, LINE_BLANK, LINE_NOT_INT, LINE_RANGE };

/* The reference parser for one line starting at p, ending before eol (the newline
 * or the end of the text). */
static enum line_kind parse_line_slow(const char *p, const char *eol, int64_t *out)
{
    while (p < eol && is_blank(*p))
        p++;
    const char *tail = eol;
    if (tail > p && tail[-1] == '\r')
        tail--;
    while (tail > p && is_blank(tail[-1]))
        tail--;
    if (p == tail)
        return LINE_BLANK;
    int neg = 0;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (p == tail)
        return LINE_NOT_INT;
    for (const char *q = p; q < tail; q++)
        if (!is_digit(*q))
            return LINE_NOT_INT;
    while (p < tail - 1 && *p == '0')
        p++;
    if (tail - p > 19)
        return LINE_RANGE;
    uint64_t v = 0;
    for (; p < tail; p++)
        v = v * 10 + (uint64_t)(*p - '0');
    if (v > (neg ? (1ULL << 63) : (1ULL << 63) - 1))
        return LINE_RANGE;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return LINE_KEY;
}

/* Whether [s, e) is the canonical decimal form of an integer: what the integer
 * path writes back for it, byte for byte. */
static int canonical_text(const char *s, const char *e)
{
    const char *d = s + (s < e && *s == '-');
    if (d == e || (*d == '0' && (e - d > 1 || d != s)))
        return 0;
    for (; d < e; d++)
        if (!is_digit(*d))
            return 0;
    return 1;
}

struct parse_job {
    gm_input *in;
    const gm_parse_opts *o;
    const char *text, *text_end; /* the block */
    int32_t *dest32;             /* line-indexed int32 keys, or NULL: keep none */
};

/* Stores key number n of chunk ch: into the shared int32 array while every key
 * fits, else into the chunk's own int64 buffer (created on the first wide key,
 * with the keys so far widened into it). Returns 0, or -1 when out of memory. */
static inline int store_key(struct gm_chunk *ch, int32_t *d32, int64_t n, int64_t v)
{
    if (!ch->wide_used) {
        if (v >= INT32_MIN && v <= INT32_MAX) {
            d32[n] = (int32_t)v;
            return 0;
        }
        if (ch->wide_cap < ch->lines) {
            free(ch->wide);
            ch->wide = malloc((size_t)ch->lines * sizeof *ch->wide);
            ch->wide_cap = ch->wide ? ch->lines : 0;
            if (!ch->wide)
                return -1;
        }
        ch->wide_used = 1;
        for (int64_t t = 0; t < n; t++)
            ch->wide[t] = d32[t];
    }
    ch->wide[n] = v;
    return 0;
}

/* Bytes of w equal to '\n', as 0x80 in that byte (the exact zero-byte test). */
static inline uint64_t newline_bits(uint64_t w)
{
    const uint64_t low7 = 0x7F7F7F7F7F7F7F7FULL;
    uint64_t x = w ^ 0x0A0A0A0A0A0A0A0AULL;
    return ~(((x & low7) + low7) | x) & ~low7;
}

/* Parses the line [s, e) (no newline in it) on the fast path: [-]digits, at most 16
 * digits, with 16 readable bytes after the sign. Returns 1 and sets *out, or 0 when
 * the line needs parse_line_slow. */
static inline int parse_line_fast(const char *s, const char *e, const char *safe,
                                  int64_t *out)
{
    int neg = *s == '-';
    const char *q = s + neg;
    int64_t nd = e - q;
    if (nd < 1 || nd > 16 || q > safe)
        return 0;
    uint64_t w1, w2;
    memcpy(&w1, q, 8);
    memcpy(&w2, q + 8, 8);
    uint64_t mag;
    if (nd <= 8) {
        if (swar_digit_count(w1) != nd)
            return 0;
        mag = swar_digits_value(w1, (int)nd);
    } else {
        if (swar_digit_count(w1) != 8 || swar_digit_count(w2) != nd - 8)
            return 0;
        mag = swar_digits_value(w1, 8) * pow10[nd - 8] + swar_digits_value(w2, (int)nd - 8);
    }
    *out = neg ? -(int64_t)mag : (int64_t)mag; /* below 10^16: no overflow */
    return 1;
}

#if defined(__x86_64__) && defined(__GNUC__)
#define GM_X86_SIMD 1

/* Bytes 16 - n .. 15 of a 16-byte load from tail_mask + n are 0xFF, the rest 0. */
static const uint8_t tail_mask[32] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
};

/* parse_line_fast with SSE4.1 (every x86-64 processor since 2008 has it; we ask the
 * processor before using it): the 16 bytes that end at the newline hold the digits
 * in their last nd bytes, so the number is right-aligned for free; after zeroing
 * the bytes before it, three multiply-adds and a pack turn it into two 8-digit
 * halves. Up to three digits before those 16 (int64's 17 to 19) are added by hand.
 * Same contract as parse_line_fast, but for up to 19 digits; begin is the start of
 * the text. */
__attribute__((target("sse4.1"))) static inline int
parse_line_sse41(const char *s, const char *e, const char *begin, int64_t *out)
{
    int neg = *s == '-';
    const char *q = s + neg;
    int64_t nd = e - q;
    if (nd < 1 || nd > 19 || e - 16 < begin)
        return 0;
    /* 17 to 19 digits: the leading ones by hand, then the last 16 as below. */
    uint64_t lead = 0;
    for (; nd > 16; nd--, q++) {
        if (!is_digit(*q))
            return 0;
        lead = lead * 10 + (uint64_t)(*q - '0');
    }
    __m128i v = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)(e - 16)),
                             _mm_set1_epi8('0'));
    __m128i keep = _mm_loadu_si128((const __m128i *)(const void *)(tail_mask + nd));
    __m128i digit = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(9)), v); /* 0..9 */
    if (!_mm_testc_si128(digit, keep)) /* a kept byte that is not a digit */
        return 0;
    v = _mm_and_si128(v, keep);
    v = _mm_maddubs_epi16(v, _mm_setr_epi8(10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1));
    v = _mm_madd_epi16(v, _mm_setr_epi16(100, 1, 100, 1, 100, 1, 100, 1));
    v = _mm_packus_epi32(v, v);
    v = _mm_madd_epi16(v, _mm_setr_epi16(10000, 1, 10000, 1, 10000, 1, 10000, 1));
    uint64_t mag = (uint64_t)(uint32_t)_mm_cvtsi128_si32(v) * 100000000ULL +
                   (uint32_t)_mm_extract_epi32(v, 1);
    if (lead) { /* lead < 1000: the sum stays below 10^19 < 2^64 */
        mag += lead * 10000000000000000ULL;
        if (mag > (1ULL << 63) - 1 + (uint64_t)neg)
            return 0; /* out of range: the slow path says so */
        *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
        return 1;
    }
    *out = neg ? -(int64_t)mag : (int64_t)mag;
    return 1;
}
#endif

#ifdef GM_X86_SIMD
/* The newlines among the 64 bytes at p that are before end, as bits (bit i for
 * p[i]): four 16-byte compares where the block has 64 bytes left, else a byte loop. */
__attribute__((target("sse4.1"))) static inline uint64_t
window_newlines(const char *p, const char *end, const char *text_end)
{
    uint64_t bits = 0;
    if (text_end - p >= 64) {
        const __m128i nl = _mm_set1_epi8('\n');
        for (int i = 0; i < 4; i++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));
            bits |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)) << (16 * i);
        }
    } else {
        for (int i = 0; i < text_end - p; i++)
            bits |= (uint64_t)(p[i] == '\n') << i;
    }
    return end - p >= 64 ? bits : bits & ((1ULL << (end - p)) - 1);
}
#endif

/* Parses the lines of one chunk. Newlines are found eight bytes at a time (with
 * SSE, as a bit mask of 64 bytes at a time, each line's the lowest bit left) and
 * the lines between them parsed independently, so consecutive lines overlap in
 * the processor instead of waiting for each other's digit counts. use_sse is a
 * constant in each of the two callers below, and so is ordered in the SSE one's
 * two calls (the order check out of the loop that parses for a sort frees
 * registers there). */
static inline __attribute__((always_inline)) void parse_lines(void *ctx, int index,
                                                              const int use_sse,
                                                              const int ordered)
{
    struct parse_job *job = ctx;
    struct gm_chunk *ch = &job->in->chunks[index];
    const gm_parse_opts *o = job->o;
    const char *end = ch->end, *safe = job->text_end - 16;
    int32_t *d32 = job->dest32 ? job->dest32 + ch->line0 : NULL;
    int64_t n = 0, line = 0, prev = 0;
    const int64_t mask = o->mask;
    const int canonical = o->canonical;
    const char *s = ch->begin; /* start of the current line */
    const char *w = ch->begin; /* next word to scan for newlines */
    int64_t window = -64;      /* SSE: the 64 bytes at ch->begin + window, */
    uint64_t newlines = 0;     /* whose newlines not yet passed are these bits */

    while (s < end) {
        const char *e; /* end of the current line: its newline, or the chunk's end */
        if (use_sse) {
#ifdef GM_X86_SIMD
            while (newlines == 0 && (window += 64) < end - ch->begin)
                newlines = window_newlines(ch->begin + window, end, job->text_end);
#endif
            e = newlines ? ch->begin + window + __builtin_ctzll(newlines) : end;
            newlines &= newlines - 1;
        } else {
            uint64_t bits = 0;
            /* Find the next newline at or after w (w <= end here). */
            while (w + 8 <= end) {
                uint64_t word;
                memcpy(&word, w, 8); /* unaligned: memcpy, which compiles to one load */
                if ((bits = newline_bits(word)) != 0)
                    break;
                w += 8;
            }
            if (bits) {
                e = w + (__builtin_ctzll(bits) >> 3);
            } else {
                e = memchr(w, '\n', (size_t)(end - w));
                if (!e)
                    e = end;
            }
            w = e + 1;
        }
        line++;

        int64_t v;
        int fast;
#ifdef GM_X86_SIMD
        if (use_sse)
            fast = parse_line_sse41(s, e, job->text, &v);
        else
#endif
            fast = parse_line_fast(s, e, safe, &v);
        if (canonical) { /* the fast parsers take leading zeros and "-0" */
            const char *d = s + (*s == '-');
            if (fast ? *d == '0' && (e - d > 1 || d != s)
                     : parse_line_slow(s, e, &v) != LINE_KEY || !canonical_text(s, e)) {
                ch->prob = PROB_DECLINE;
                ch->prob_line = line;
                ch->prob_text = s;
                break;
            }
        } else if (!fast) {
            enum line_kind kind = parse_line_slow(s, e, &v);
            if (kind == LINE_BLANK) {
                s = e + 1;
                continue;
            }
            if (kind != LINE_KEY) {
                ch->prob = kind == LINE_RANGE ? PROB_RANGE : PROB_NOT_INT;
                ch->prob_line = line;
                ch->prob_text = s;
                break;
            }
        }
        if (n == 0) {
            ch->first = v;
            ch->first_line = line;
            ch->first_text = s;
        } else if (ordered) {
            int64_t a = prev ^ mask, b = v ^ mask;
            if (b < a || (o->strict && b == a)) {
                ch->prob = PROB_DISORDER;
                ch->prob_line = line;
                ch->prob_text = s;
                break;
            }
        }
        if (d32 && store_key(ch, d32, n, v) != 0) {
            ch->alloc_failed = 1;
            break;
        }
        n++;
        prev = v;
        s = e + 1;
    }
    ch->n = n;
    ch->last = prev;
}

static void parse_chunk(void *ctx, int index)
{
    parse_lines(ctx, index, 0, ((struct parse_job *)ctx)->o->ordered);
}

#ifdef GM_X86_SIMD
__attribute__((target("sse4.1"))) static void parse_chunk_sse41(void *ctx, int index)
{
    if (((struct parse_job *)ctx)->o->ordered)
        parse_lines(ctx, index, 1, 1);
    else
        parse_lines(ctx, index, 1, 0);
}
#endif

/* Reports a problem at line `line` whose text starts at text (in block b). */
static int report(gm_input *in, const gm_block *b, enum problem prob, int64_t line,
                  const char *text, gm_status *st)
{
    const char *end = b->text + b->len;
    const char *eol = memchr(text, '\n', (size_t)(end - text));
    size_t len = (size_t)((eol ? eol : end) - text);
    if (len > 0 && text[len - 1] == '\r')
        len--;
    char shown[256], original[GM_SHOW_BYTES];
    if (in->zero) { /* the bytes as they were read, terminators swapped back */
        size_t n = len < sizeof original ? len : sizeof original;
        memcpy(original, text, n);
        swap_terminators(original, n);
        text = original;
    }
    gm_show_text(text, len, shown, sizeof shown);
    switch (prob) {
    case PROB_NOT_INT:
        return gm_fail(st, GM_EINPUT, "%s:%lld: not an integer: '%s'", in->shown,
                       (long long)line, shown);
    case PROB_RANGE:
        return gm_fail(st, GM_EINPUT, "%s:%lld: out of range: '%s'", in->shown,
                       (long long)line, shown);
    case PROB_DECLINE:
        return gm_fail(st, GM_ERECORDS, "%s:%lld: not a canonical integer: '%s'", in->shown,
                       (long long)line, shown);
    default:
        return gm_fail(st, GM_DISORDER, "%s:%lld: disorder: %s", in->shown,
                       (long long)line, shown);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
/* Number of newlines in [p, end), sixteen bytes at a time with SSE2 (part of every
 * x86-64): each compare gives -1 per newline byte, subtracted into byte counters
 * that are summed (psadbw) before they can overflow. */
static int64_t count_newlines(const char *p, const char *end)
{
    const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
    int64_t n = 0;
    while (end - p >= 16) {
        __m128i counts = zero;
        for (int round = 0; round < 255 && end - p >= 16; round++, p += 16)
            counts = _mm_sub_epi8(counts, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), nl));
        __m128i sums = _mm_sad_epu8(counts, zero);
        n += _mm_cvtsi128_si64(sums) + _mm_extract_epi16(sums, 4);
    }
    for (; p < end; p++)
        n += *p == '\n';
    return n;
}
#else
/* Number of newlines in [p, end), eight bytes at a time: a byte of w ^ "\n\n..." is
 * zero exactly where w holds a newline; the exact zero-byte test sets its high
 * bit, and the bits are summed per byte lane (at most 255 rounds) before the lanes
 * are added up. */
static int64_t count_newlines(const char *p, const char *end)
{
    const uint64_t nl = 0x0A0A0A0A0A0A0A0AULL, low7 = 0x7F7F7F7F7F7F7F7FULL;
    int64_t n = 0;
    while (end - p >= 8) {
        uint64_t lanes = 0;
        for (int round = 0; round < 255 && end - p >= 8; round++, p += 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            uint64_t x = w ^ nl;
            uint64_t zero = ~(((x & low7) + low7) | x) & ~low7; /* 0x80 per zero byte */
            lanes += zero >> 7;
        }
        /* Pairs of byte lanes into 16-bit lanes (at most 510 each), then their sum. */
        uint64_t pairs = (lanes & 0x00FF00FF00FF00FFULL) + ((lanes >> 8) & 0x00FF00FF00FF00FFULL);
        n += (int64_t)((pairs * 0x0001000100010001ULL) >> 48);
    }
    for (; p < end; p++)
        n += *p == '\n';
    return n;
}
#endif

static void count_lines(void *ctx, int index)
{
    struct gm_chunk *ch = &((gm_input *)ctx)->chunks[index];
    ch->lines = count_newlines(ch->begin, ch->end) + (ch->end[-1] != '\n');
}

/* Cuts the block into chunks of whole lines and counts their lines. Returns the
 * block's line count, or -1 when out of memory. */
static int64_t split_block(gm_input *in, const gm_block *b, int nthreads)
{
    in->nchunks = 0;
    if (b->len == 0)
        return 0;
    /* About 1 MiB a chunk, at least 4 per thread when the block is large enough. */
    size_t target = b->len / ((size_t)nthreads * 4) + 1;
    if (target > (1u << 20))
        target = 1u << 20;
    if (target < (1u << 16))
        target = 1u << 16;
    size_t max_chunks = b->len / target + 1;
    if ((int)max_chunks > in->chunk_cap) {
        struct gm_chunk *c = realloc(in->chunks, max_chunks * sizeof *c);
        if (!c)
            return -1;
        memset(c + in->chunk_cap, 0, (max_chunks - (size_t)in->chunk_cap) * sizeof *c);
        in->chunks = c;
        in->chunk_cap = (int)max_chunks;
    }
    const char *p = b->text, *end = b->text + b->len;
    int c = 0;
    while (p < end) {
        const char *cut = (size_t)(end - p) > target ? p + target : end;
        if (cut < end) {
            const char *nl = memchr(cut, '\n', (size_t)(end - cut));
            cut = nl ? nl + 1 : end;
        }
        struct gm_chunk *ch = &in->chunks[c];
        int64_t *wide = ch->wide, wide_cap = ch->wide_cap;
        memset(ch, 0, sizeof *ch);
        ch->wide = wide; /* kept for reuse; "in use" is told by wide_used below */
        ch->wide_cap = wide_cap;
        ch->begin = p;
        ch->end = cut;
        c++;
        p = cut;
    }
    in->nchunks = c;
    gm_parallel_for(nthreads, in->nchunks, count_lines, in);
    int64_t lines = 0;
    for (c = 0; c < in->nchunks; c++) {
        in->chunks[c].line0 = lines;
        lines += in->chunks[c].lines;
    }
    return lines;
}

int gm_input_parse_block(gm_input *in, const gm_block *b, const gm_parse_opts *o,
                         gm_keybuf *kb, gm_status *st)
{
    in->eof = b->eof;
    int64_t lines = split_block(in, b, o->nthreads);
    if (lines < 0)
        return gm_fail(st, GM_ENOMEM, "out of memory parsing %s", in->shown);
    if (lines == 0)
        return GM_OK;
    /* An int32 key buffer takes the keys straight into its free tail (line-indexed,
     * closed up below); an int64 one through the staging area. */
    int32_t *dest = NULL;
    int direct = kb && (kb->width != GM_I64);
    if (direct) {
        int rc = gm_keybuf_reserve(kb, lines, GM_I32, st);
        if (rc)
            return rc;
        dest = (int32_t *)kb->data + kb->n;
    } else if (kb) {
        if (lines > in->stage_cap) {
            int32_t *p = gm_buf_resize(in->stage, (size_t)lines * sizeof *p, "parsing", st);
            if (!p)
                return GM_ENOMEM;
            in->stage = p;
            in->stage_cap = lines;
        }
        dest = in->stage;
    }
    struct parse_job job = { in, o, b->text, b->text + b->len, dest };
    gm_task_fn parse = parse_chunk;
#ifdef GM_X86_SIMD
    if (!force_scalar && __builtin_cpu_supports("sse4.1"))
        parse = parse_chunk_sse41;
#endif
    gm_parallel_for(o->nthreads, in->nchunks, parse, &job);

    int64_t nkeys = 0;
    int wide = 0;
    for (int c = 0; c < in->nchunks; c++) {
        struct gm_chunk *ch = &in->chunks[c];
        if (ch->alloc_failed)
            return gm_fail(st, GM_ENOMEM, "out of memory parsing %s", in->shown);
        if (o->ordered && in->have_prev && ch->n > 0) {
            int64_t x = in->prev ^ o->mask, y = ch->first ^ o->mask;
            if (y < x || (o->strict && y == x))
                return report(in, b, PROB_DISORDER, in->line + ch->line0 + ch->first_line,
                              ch->first_text, st);
        }
        if (ch->prob != PROB_NONE)
            return report(in, b, ch->prob, in->line + ch->line0 + ch->prob_line,
                          ch->prob_text, st);
        if (ch->n > 0) {
            in->prev = ch->last;
            in->have_prev = 1;
        }
        wide |= ch->wide_used;
        ch->key0 = nkeys;
        nkeys += ch->n;
    }
    in->line += lines;
    if (!kb)
        return GM_OK;

    /* Gather: the keys without the gaps of blank lines, onto the end of kb. */
    if (direct && !wide) { /* close the gaps, moving left chunk by chunk */
        for (int c = 0; c < in->nchunks; c++) {
            const struct gm_chunk *ch = &in->chunks[c];
            if (ch->key0 != ch->line0 && ch->n > 0)
                memmove(dest + ch->key0, dest + ch->line0, (size_t)ch->n * sizeof *dest);
        }
        kb->n += nkeys;
        return GM_OK;
    }
    if (direct) { /* a wide key: the int32 keys go to the staging area first */
        if (lines > in->stage_cap) {
            int32_t *p = gm_buf_resize(in->stage, (size_t)lines * sizeof *p, "parsing", st);
            if (!p)
                return GM_ENOMEM;
            in->stage = p;
            in->stage_cap = lines;
        }
        memcpy(in->stage, dest, (size_t)lines * sizeof *dest);
    }
    int rc = gm_keybuf_reserve(kb, nkeys, wide ? GM_I64 : GM_I32, st);
    if (rc)
        return rc;
    for (int c = 0; c < in->nchunks; c++) {
        const struct gm_chunk *ch = &in->chunks[c];
        const int32_t *s = in->stage + ch->line0;
        if (kb->width == GM_I32) {
            memcpy((int32_t *)kb->data + kb->n + ch->key0, s, (size_t)ch->n * sizeof *s);
        } else {
            int64_t *d = (int64_t *)kb->data + kb->n + ch->key0;
            if (ch->wide_used)
                memcpy(d, ch->wide, (size_t)ch->n * sizeof *d);
            else
                for (int64_t t = 0; t < ch->n; t++)
                    d[t] = s[t];
        }
    }
    kb->n += nkeys;
    return GM_OK;
}

int gm_input_read_keys(gm_input *in, const gm_parse_opts *o, gm_keybuf *kb, gm_status *st)
{
    gm_block b;
    int rc = gm_input_next(in, &b, st);
    return rc ? rc : gm_input_parse_block(in, &b, o, kb, st);
}

int64_t gm_input_chunk_first_line(const gm_input *in, int c)
{
    if (c < 0 || c >= in->nchunks)
        return -1;
    int64_t before = 0;
    for (int i = 0; i < in->nchunks; i++)
        before += in->chunks[i].lines;
    return in->line - before + in->chunks[c].line0 + 1;
}
