/*
 * lines.c - blocks of whole lines and the records that point into them (see
 * lines.h). A regular file is read by the parallel pread (pread.h), a pipe by
 * read(2)s; the partial line at a block's end is carried to the front of the
 * next block, and a line longer than a block grows it, as coreutils' sort's
 * fillbuf does. Splitting a block into records counts each piece's lines first so
 * that every piece knows where its records go, then makes the prefixes of all the
 * pieces in parallel. Terminators are found 64 bytes at a time, as a bit mask
 * from SSE2 compares (the way simdjson finds its structural characters), where
 * a memchr per line would cost a call and a start-up per 50-byte line.
 */
#define _GNU_SOURCE
#include "lines.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input.h"
#include "pread.h"
#include "progress.h"
#include "util.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <emmintrin.h>
#define GM_LINES_SSE2 1
#endif

enum {
    UNIT = 1 << 20,          /* a regular file is read and its lines counted a
                              * megabyte a task, while the megabyte is in cache */
    SPLIT_PIECE = 256 << 10, /* a block not counted is split this much a task */
    MIN_WANT = 4 << 10,
};

void gm_lines_block_ref(gm_lines_block *b)
{
    __atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
}

void gm_lines_block_unref(gm_lines_block *b)
{
    if (!b || __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    gm_buf_free(b->data);
    free(b->counts);
    free(b);
}

size_t gm_rec_long_len(const unsigned char *line, char eol)
{
    return (size_t)((const unsigned char *)rawmemchr(line, (unsigned char)eol) - line);
}

int gm_recs_reserve(gm_recs *v, size_t extra, gm_status *st)
{
    if (v->n + extra <= v->cap)
        return GM_OK;
    size_t cap = v->cap ? v->cap : 1024;
    while (cap < v->n + extra)
        cap *= 2;
    gm_rec *r = v->r ? gm_buf_resize(v->r, cap * sizeof *r, "records", st)
                     : gm_buf_alloc(cap * sizeof *r, "records", st);
    if (!r)
        return GM_ENOMEM;
    v->r = r;
    v->cap = cap;
    return GM_OK;
}

void gm_recs_free(gm_recs *v)
{
    gm_buf_free(v->r);
    v->r = NULL;
    v->n = v->cap = 0;
}

/* ------------------------------------------------------------------ scanning */

/* The terminators among the 64 bytes at p, as bits (bit i for p[i]): four
 * 16-byte compares (SSE2 is part of x86-64), else a byte loop. */
static inline uint64_t eol_bits(const unsigned char *p, unsigned char eol)
{
    uint64_t bits = 0;
#ifdef GM_LINES_SSE2
    const __m128i k = _mm_set1_epi8((char)eol);
    for (int i = 0; i < 4; i++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));
        bits |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, k)) << (16 * i);
    }
#else
    for (int i = 0; i < 64; i++)
        bits |= (uint64_t)(p[i] == eol) << i;
#endif
    return bits;
}

/* The terminators in [p, e): 64 bytes a compare, the tail by memchr. */
static size_t count_eol(const unsigned char *p, const unsigned char *e, unsigned char eol)
{
    size_t n = 0;
    for (; e - p >= 64; p += 64)
        for (uint64_t bits = eol_bits(p, eol); bits; bits &= bits - 1)
            n++;
    while (p < e && (p = memchr(p, eol, (size_t)(e - p))) != NULL) {
        n++;
        p++;
    }
    return n;
}

/* ------------------------------------------------------------------ reading */

int gm_lines_size(int fd, int64_t *size)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        return 0;
    off_t at = lseek(fd, 0, SEEK_CUR);
    if (at < 0)
        return 0;
    *size = sb.st_size > at ? (int64_t)(sb.st_size - at) : 0;
    return 1;
}

static void src_init(gm_lines_src *s, int fd, char eol)
{
    s->fd = fd;
    s->eol = eol;
    int64_t size;
    if (fd >= 0 && gm_lines_size(fd, &size)) {
        s->regular = 1;
        s->off = (int64_t)lseek(fd, 0, SEEK_CUR);
        s->left = size;
    }
}

int gm_lines_open(gm_lines_src *s, const char *name, char eol, int drained, gm_status *st)
{
    memset(s, 0, sizeof *s);
    gm_input in; /* its opening and its messages */
    int rc = gm_input_open(&in, name, st);
    snprintf(s->shown, sizeof s->shown, "%s", in.shown);
    if (rc) {
        if (in.fd > STDIN_FILENO)
            close(in.fd);
        s->fd = -1;
        return rc;
    }
    s->own_fd = in.fd != STDIN_FILENO;
    src_init(s, in.fd, eol);
    s->done = s->eof = drained;
    s->input = 1;
    return GM_OK;
}

void gm_lines_open_fd(gm_lines_src *s, int fd, int own, const char *shown, char eol)
{
    memset(s, 0, sizeof *s);
    snprintf(s->shown, sizeof s->shown, "%s", shown);
    s->own_fd = own;
    src_init(s, fd, eol);
}

void gm_lines_recycle(gm_lines_src *s, gm_lines_block *b)
{
    if (!b)
        return;
    if (__atomic_load_n(&b->refs, __ATOMIC_ACQUIRE) != 1) {
        gm_lines_block_unref(b);
        return;
    }
    gm_buf_free(s->spare);
    s->spare = b->data;
    s->spare_cap = b->cap;
    free(b->counts);
    free(b);
}

void gm_lines_close(gm_lines_src *s)
{
    gm_buf_free(s->spare);
    s->spare = NULL;
    s->spare_cap = 0;
    free(s->carry);
    s->carry = NULL;
    s->carry_len = s->carry_cap = 0;
    if (s->own_fd && s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    s->own_fd = 0;
}

/* The block's terminators counted a UNIT at a time as the parallel pread reads it. */
struct count_job {
    const unsigned char *block;
    unsigned char eol;
    uint32_t *counts;      /* per UNIT of the block from its start */
};

/* Unit unit, block[lo, hi), just read: its terminators into counts[unit], while
 * its bytes are in cache. */
static void count_unit(void *ctx, int span, int unit, size_t lo, size_t hi)
{
    const struct count_job *j = ctx;
    (void)span;
    j->counts[unit] = (uint32_t)count_eol(j->block + lo, j->block + hi, j->eol);
}

/* Reads up to room bytes at block + at: *got bytes, 0 at the end. A regular
 * file's units are counted into counts when it is not NULL. */
static int fill(gm_lines_src *s, unsigned char *block, size_t at, size_t room, uint32_t *counts,
                int nthreads, size_t *got, gm_status *st)
{
    *got = 0;
    if (s->regular) {
        size_t n = (int64_t)room < s->left ? room : (size_t)s->left;
        if (n > 0) {
            /* units of the block from its start, each read then counted */
            gm_pread_span span = { s->fd, s->shown, (char *)block, at, at + n, s->off };
            struct count_job j = { block, (unsigned char)s->eol, counts };
            int rc = gm_pread_parallel(&span, 1, UNIT, nthreads, counts ? count_unit : NULL, &j,
                                       st);
            if (rc)
                return rc;
            s->off += (int64_t)n;
            s->left -= (int64_t)n;
        }
        if (s->left == 0) {
            /* a file that grew or shrank underneath is an error, as for the
             * integer path; the offset is left where read(2) would leave it */
            if (!s->range) { /* a share of a file ends before the file does */
                int rc = gm_pread_check_size(s->fd, s->off, s->shown, st);
                if (rc)
                    return rc;
            }
            lseek(s->fd, (off_t)s->off, SEEK_SET);
        }
        *got = n;
        return GM_OK;
    }
    for (;;) {
        ssize_t r = read(s->fd, block + at, room);
        if (r >= 0) {
            *got = (size_t)r;
            return GM_OK;
        }
        if (errno != EINTR)
            return gm_fail(st, GM_EIO, "read failed: %s: %s", s->shown, strerror(errno));
    }
}

/* Keeps buf[from, to) as the carried partial line. */
static int keep_carry(gm_lines_src *s, const unsigned char *from, size_t n, gm_status *st)
{
    if (n > s->carry_cap) {
        unsigned char *c = realloc(s->carry, n);
        if (!c)
            return gm_fail(st, GM_ENOMEM, "out of memory reading %s", s->shown);
        s->carry = c;
        s->carry_cap = n;
    }
    if (n)
        memcpy(s->carry, from, n);
    s->carry_len = n;
    return GM_OK;
}

int gm_lines_read(gm_lines_src *s, size_t want, int eager, int nthreads,
                  gm_lines_block **out, gm_status *st)
{
    *out = NULL;
    if (s->done)
        return GM_OK;
    if (want < MIN_WANT)
        want = MIN_WANT;
    if (s->regular && (int64_t)want > s->left + 1)
        want = (size_t)s->left + 1; /* the whole rest fits: no larger buffer */
    size_t cap = s->carry_len + want + 1; /* + the last line's missing terminator */
    unsigned char *buf;
    if (s->spare && s->spare_cap >= cap) { /* the last block's buffer, already faulted in */
        buf = s->spare;
        cap = s->spare_cap;
        s->spare = NULL;
    } else {
        buf = gm_buf_alloc(cap, "input", st);
        if (!buf)
            return GM_ENOMEM;
    }
    size_t filled = s->carry_len;
    if (s->carry_len)
        memcpy(buf, s->carry, s->carry_len);
    s->carry_len = 0;
    size_t searched = 0; /* no terminator in buf[0, searched) */
    const unsigned char eol = (unsigned char)s->eol;
    /* a regular file's lines are counted as it is read, while one read fills
     * the block (the usual case) */
    size_t ncounts = (cap + UNIT - 1) / UNIT;
    uint32_t *counts = s->regular ? calloc(ncounts, sizeof *counts) : NULL;
    int fills = 0, rc = GM_OK;
    while (!s->eof) {
        if (filled == cap - 1) {
            if (memrchr(buf + searched, eol, filled - searched))
                break;
            searched = filled;
            unsigned char *b = gm_buf_resize(buf, cap * 2, "input", st);
            if (!b) {
                rc = GM_ENOMEM;
                break;
            }
            buf = b;
            cap *= 2;
        }
        size_t got;
        rc = fill(s, buf, filled, cap - 1 - filled, fills ? NULL : counts, nthreads, &got, st);
        if (rc)
            break;
        if (got == 0) {
            s->eof = 1;
            break;
        }
        filled += got;
        fills++;
        if (eager && memchr(buf + filled - got, eol, got))
            break;
    }
    if (fills != 1) { /* counted in part, or not at all */
        free(counts);
        counts = NULL;
    }
    if (rc) {
        gm_buf_free(buf);
        free(counts);
        return rc;
    }
    size_t len = filled;
    if (s->eof) {
        s->done = 1;
        if (filled > 0 && buf[filled - 1] != eol) {
            buf[len++] = eol; /* sort ends the last line */
            if (counts)
                counts[filled / UNIT]++;
        }
    } else {
        const unsigned char *last = memrchr(buf, eol, filled);
        len = (size_t)(last - buf) + 1;
        rc = keep_carry(s, buf + len, filled - len, st);
    }
    gm_lines_block *b = rc || len == 0 ? NULL : malloc(sizeof *b);
    if (!rc && len > 0 && !b)
        rc = gm_fail(st, GM_ENOMEM, "out of memory reading %s", s->shown);
    if (!b) {
        gm_buf_free(buf);
        free(counts);
        return rc;
    }
    b->refs = 1;
    b->len = len;
    b->cap = cap;
    b->data = buf;
    b->counts = counts;
    b->ncounts = (len + UNIT - 1) / UNIT;
    s->bytes += (int64_t)len;
    if (s->input)
        gm_progress_read((int64_t)len);
    *out = b;
    return GM_OK;
}

/* ------------------------------------------------------------------ records */

struct split_job {
    const gm_keyspec *ks;
    const unsigned char *data;
    size_t len;
    unsigned char eol;
    int pieces;
    size_t *bound;  /* pieces + 1 line starts */
    size_t *count;  /* lines per piece, then the first record's index */
    gm_rec *out;
};

static void split_count(void *ctx, int i)
{
    struct split_job *j = ctx;
    j->count[i] = count_eol(j->data + j->bound[i], j->data + j->bound[i + 1], j->eol);
}

/* The record of the line [p, e) (e: its terminator). */
static inline void split_line(const struct split_job *j, gm_rec *r, const unsigned char *p,
                              const unsigned char *e)
{
    size_t len = (size_t)(e - p);
    int exact = 0;
    r->prefix = gm_line_prefix(j->ks, p, len, &exact);
    r->ref = gm_rec_make_ref(p, len, exact);
}

/* Piece i's records: its terminators found 64 bytes a compare, the tail by memchr. */
static void split_fill(void *ctx, int i)
{
    struct split_job *j = ctx;
    const unsigned char *p = j->data + j->bound[i], *end = j->data + j->bound[i + 1];
    gm_rec *r = j->out + j->count[i];
    for (const unsigned char *w = p; end - w >= 64; w += 64) {
        for (uint64_t bits = eol_bits(w, j->eol); bits; bits &= bits - 1) {
            const unsigned char *e = w + __builtin_ctzll(bits);
            split_line(j, r++, p, e);
            p = e + 1;
        }
    }
    while (p < end) {
        const unsigned char *e = memchr(p, j->eol, (size_t)(end - p));
        split_line(j, r++, p, e);
        p = e + 1;
    }
}

int gm_lines_split(const gm_keyspec *ks, const gm_lines_block *b, gm_recs *v, int nthreads,
                   gm_status *st)
{
    int pieces = (int)(b->len / SPLIT_PIECE) + 1;
    if (pieces > nthreads * 16)
        pieces = nthreads * 16;
    if (b->counts)
        pieces = (int)b->ncounts; /* a piece per unit counted */
    size_t *mem = malloc(sizeof(size_t) * (2 * (size_t)pieces + 1));
    if (!mem)
        return gm_fail(st, GM_ENOMEM, "out of memory splitting lines");
    struct split_job j = { ks, b->data, b->len, (unsigned char)ks->eol, pieces, mem,
                           mem + pieces + 1, NULL };
    j.bound[0] = 0;
    j.bound[pieces] = b->len;
    if (b->counts) {
        /* piece i: the lines that end in unit i, from the end of the last line
         * before it */
        for (int i = 1; i < pieces; i++) {
            const unsigned char *e = memrchr(b->data, j.eol, (size_t)i * UNIT);
            j.bound[i] = e ? (size_t)(e - b->data) + 1 : 0;
            j.count[i - 1] = b->counts[i - 1];
        }
        j.count[pieces - 1] = b->counts[pieces - 1];
    } else {
        /* each boundary is moved to the start of the line it falls in */
        for (int i = 1; i < pieces; i++) {
            size_t raw = b->len * (size_t)i / (size_t)pieces;
            size_t at = j.bound[i - 1] > raw ? j.bound[i - 1] : raw;
            const unsigned char *e = at > 0 ? memchr(b->data + at - 1, j.eol, b->len - at + 1)
                                            : NULL;
            j.bound[i] = at == 0 ? 0 : (size_t)(e - b->data) + 1;
        }
        gm_parallel_for(nthreads, pieces, split_count, &j);
    }
    size_t total = 0;
    for (int i = 0; i < pieces; i++) {
        size_t c = j.count[i];
        j.count[i] = total;
        total += c;
    }
    int rc = gm_recs_reserve(v, total, st);
    if (!rc) {
        j.out = v->r + v->n;
        gm_parallel_for(nthreads, pieces, split_fill, &j);
        v->n += total;
    }
    free(mem);
    return rc;
}

struct count_all {
    const unsigned char *data;
    size_t len;
    unsigned char eol;
    int pieces;
    size_t count[GM_LINES_COUNT_PIECES];
};

static void count_piece(void *ctx, int i)
{
    struct count_all *j = ctx;
    const unsigned char *p = j->data + j->len * (size_t)i / (size_t)j->pieces;
    const unsigned char *end = j->data + j->len * (size_t)(i + 1) / (size_t)j->pieces;
    size_t n = 0;
    while (p < end && (p = memchr(p, j->eol, (size_t)(end - p))) != NULL) {
        n++;
        p++;
    }
    j->count[i] = n;
}

size_t gm_lines_count(const gm_lines_block *b, char eol, int nthreads)
{
    size_t n = 0;
    if (b->counts) {
        for (size_t i = 0; i < b->ncounts; i++)
            n += b->counts[i];
        return n;
    }
    struct count_all j = { b->data, b->len, (unsigned char)eol, 1, { 0 } };
    size_t want = b->len / SPLIT_PIECE + 1;
    j.pieces = want < (size_t)nthreads * 4 ? (int)want : nthreads * 4;
    if (j.pieces > GM_LINES_COUNT_PIECES)
        j.pieces = GM_LINES_COUNT_PIECES;
    if (j.pieces < 1)
        j.pieces = 1;
    gm_parallel_for(nthreads, j.pieces, count_piece, &j);
    for (int i = 0; i < j.pieces; i++)
        n += j.count[i];
    return n;
}
