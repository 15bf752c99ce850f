/*
 * lines.c - blocks of whole lines and the records that point into them (see
 * lines.h). A regular file is read by the parallel pread (pread.h), a pipe by
 * read(2)s; the partial line at a block's end is carried to the front of the
 * next block, and a line longer than a block grows it, as coreutils' sort's
 * fillbuf does. Splitting a block into records counts each piece's lines first so
 * that every piece knows where its records go, then makes the prefixes of all the
 * pieces in parallel (linesplit.c). Terminators are counted 64 bytes at a time
 * (eolscan.h).
 */
#define _GNU_SOURCE
#include "read/lines.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read/eolscan.h"
#include "read/input.h"
#include "read/pread.h"
#include "base/progress.h"
#include "base/util.h"


enum {
    UNIT = GM_LINES_UNIT, /* a regular file is read and its lines counted a
                           * megabyte a task, while the megabyte is in cache */
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
    if (v->most && cap > v->most)
        cap = v->most > v->n + extra ? v->most : v->n + extra;
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

void gm_lines_limit(gm_lines_src *s, int64_t end)
{
    if (!s->regular)
        return;
    s->left = end > s->off ? end - s->off : 0;
    s->range = 1;
}

int gm_lines_range(gm_lines_src *s, int64_t lo, int64_t hi, gm_status *st)
{
    if (!s->regular || lseek(s->fd, (off_t)lo, SEEK_SET) != (off_t)lo)
        return gm_fail(st, GM_EIO, "cannot read: %s: %s", s->shown,
                       s->regular ? strerror(errno) : "not a regular file");
    s->off = lo;
    gm_lines_limit(s, hi);
    return GM_OK;
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
typedef void progress_fn(int64_t bytes); /* a --progress counter (progress.h) */

struct count_job {
    const unsigned char *block; /* the block being read, from its start (fill) */
    unsigned char eol;     /* the line terminator counted (fill, from s->eol) */
    uint32_t *counts;      /* per UNIT of the block from its start, or NULL */
    progress_fn *progress; /* each unit's bytes go to --progress as they arrive
                            * (NULL: not counted), */
    size_t at;             /* those from here: the carry before it was counted */
};

/* What --progress counts s's bytes as: an input's, a run's, or nothing. */
static progress_fn *progress_of(const gm_lines_src *s)
{
    return s->input ? gm_progress_read : s->run ? gm_progress_run_read : NULL;
}

/* Unit unit, block[lo, hi), just read: its terminators into counts[unit], while
 * its bytes are in cache, and its bytes to --progress. */
static void count_unit(void *ctx, int span, int unit, size_t lo, size_t hi)
{
    const struct count_job *j = ctx;
    (void)span;
    if (j->counts)
        j->counts[unit] = (uint32_t)count_eol(j->block + lo, j->block + hi, j->eol);
    size_t from = lo > j->at ? lo : j->at;
    if (j->progress && hi > from)
        j->progress((int64_t)(hi - from));
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
            struct count_job j = { block, (unsigned char)s->eol, counts, progress_of(s), at };
            int rc = gm_pread_parallel(&span, 1, UNIT, nthreads,
                                       counts || j.progress ? count_unit : NULL, &j, st);
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

/* The terminators of the units that block[at, at + n) covers, counted as a
 * regular file's first read filled them (a carried line before at has none). */
static size_t sum_counts(const uint32_t *counts, size_t at, size_t n)
{
    size_t sum = 0;
    for (size_t u = at / UNIT; u * UNIT < at + n; u++)
        sum += counts[u];
    return sum;
}

/* Doubles a block *buf of *cap bytes that holds filled bytes of one line, up to
 * s->line_max + 2 bytes: a line that fills that many is refused. */
static int grow(gm_lines_src *s, unsigned char **buf, size_t *cap, size_t filled,
                gm_status *st)
{
    if (s->line_max && filled > s->line_max)
        return gm_fail(st, GM_EINPUT, "%s:%lld: line longer than the memory budget (-S)",
                       s->shown, (long long)(s->line0 + s->eols + 1));
    size_t want = *cap * 2;
    if (s->line_max && want > s->line_max + 2)
        want = s->line_max + 2; /* room for line_max + 1 bytes, and the end */
    unsigned char *b = gm_buf_resize(*buf, want, "input", st);
    if (!b)
        return GM_ENOMEM;
    *buf = b;
    *cap = want;
    return GM_OK;
}

/* Where the block of filled bytes ends (*len): at the end of the input, with a
 * terminator added to a last line without one (counted in *lines and counts);
 * else after its last terminator, the bytes after it kept as the next block's
 * carry, or an error where they are a line longer than the budget. */
static int block_end(gm_lines_src *s, unsigned char *buf, size_t filled, uint32_t *counts,
                     int64_t *lines, size_t *len, gm_status *st)
{
    const unsigned char eol = (unsigned char)s->eol;
    *len = filled;
    if (s->eof) {
        s->done = 1;
        if (filled > 0 && buf[filled - 1] != eol) {
            buf[(*len)++] = eol; /* sort ends the last line */
            (*lines)++;
            if (counts)
                counts[filled / UNIT]++;
        }
        return GM_OK;
    }
    const unsigned char *last = memrchr(buf, eol, filled);
    *len = (size_t)(last - buf) + 1;
    if (s->line_max && filled - *len > s->line_max)
        return gm_fail(st, GM_EINPUT, "%s:%lld: line longer than the memory budget (-S)",
                       s->shown, (long long)(s->line0 + s->eols + 1));
    return keep_carry(s, buf + *len, filled - *len, st);
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
    const unsigned char eol = (unsigned char)s->eol;
    /* the block's lines: those in the bytes carried (a hand-over's head holds
     * some), those read now, and an end added to the last */
    int64_t lines = -s->eols;
    if (s->carry_len)
        lines += (int64_t)count_eol(s->carry, s->carry + s->carry_len, eol);
    if (s->carry_len)
        memcpy(buf, s->carry, s->carry_len);
    s->carry_len = 0;
    size_t searched = 0; /* no terminator in buf[0, searched) */
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
            rc = grow(s, &buf, &cap, filled, st);
            if (rc)
                break;
        }
        size_t got;
        rc = fill(s, buf, filled, cap - 1 - filled, fills ? NULL : counts, nthreads, &got, st);
        if (rc)
            break;
        if (got == 0) {
            s->eof = 1;
            break;
        }
        s->eols += (int64_t)(fills == 0 && counts ? sum_counts(counts, filled, got)
                             : count_eol(buf + filled, buf + filled + got, eol));
        progress_fn *count = progress_of(s);
        if (count && !s->regular) /* a pipe's bytes as read (a file's: count_unit),
                                     never a carry or head again */
            count((int64_t)got);
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
    size_t len;
    rc = block_end(s, buf, filled, counts, &lines, &len, st);
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
    s->block_line = s->line0 + s->lines_out;
    s->lines_out += lines + s->eols;
    *out = b;
    return GM_OK;
}

