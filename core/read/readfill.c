/*
 * readfill.c - filling one of the reader's slots with whole lines (reader_impl.h):
 * the partial line carried from the slot before, then the prefix handed back by
 * the sort's text path, then the parallel pread (a regular file) or read(2)s (a
 * pipe or a device); a line longer than the slot grows it, up to one byte past the
 * longest line allowed, as coreutils' sort's fillbuf does. A regular file read to
 * its end must keep its size (pread.h's rule), and its offset is left where
 * read(2) would leave it.
 */
#define _GNU_SOURCE
#include "read/reader_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read/pread.h"
#include "base/util.h"

enum { PREAD_PIECE = 256 << 10 };

/* read(2) that the closing thread may cancel; the only cancellation point. */
static ssize_t cancellable_read(int fd, void *buf, size_t len)
{
    int old;
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
    ssize_t got = read(fd, buf, len);
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    return got;
}

/* Reads len bytes of the regular file at the reader's offset into buf: a piece of
 * PREAD_PIECE or more on each of up to the input's threads, or one piece on the
 * reader thread (the pool is the consumer's). */
static int pread_block(struct gm_reader *rd, char *buf, size_t len)
{
    gm_input *in = rd->in;
    int pieces = (int)(len / PREAD_PIECE) + 1, threads = in->threads > 1 ? in->threads : 1;
    if (pieces > threads)
        pieces = threads;
    if (rd->started)
        pieces = 1;
    gm_pread_span span = { in->fd, in->shown, buf, 0, len, rd->start + rd->total };
    return gm_pread_parallel(&span, 1, (len + (size_t)pieces - 1) / (size_t)pieces, pieces,
                             NULL, NULL, &rd->st);
}

/* Swapping NUL and newline as the bytes arrive: a newline inside a NUL-ended line
 * becomes a NUL, which no integer holds, so such a line is still reported as not
 * an integer (its message swaps the bytes back). */
void gm_input_swap_terminators(char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = p[i] == '\0' ? '\n' : p[i] == '\n' ? '\0' : p[i];
}

/* Room for a partial line that grows to want bytes: no more than one byte past
 * in->line_max, which is enough to tell that the line is too long. */
static size_t line_room(const gm_input *in, size_t want)
{
    return in->line_max && want > in->line_max + 1 ? in->line_max + 1 : want;
}

/* Makes slot s cap bytes, keeping its bytes. Returns 0 or GM_ENOMEM (rd->st). */
static int grow_slot(struct gm_reader *rd, struct slot *s, size_t cap)
{
    char *p = gm_buf_resize(s->buf, cap, "reading", &rd->st);
    if (!p)
        return GM_ENOMEM;
    s->buf = p;
    s->cap = cap;
    return 0;
}

/* Moves prev's partial line (if any) to the front of s; *have is its length.
 * Returns 0, GM_LINE_TOO_LONG or GM_ENOMEM. */
static int take_carry(struct gm_reader *rd, struct slot *s, const struct slot *prev,
                      size_t *have)
{
    gm_input *in = rd->in;
    *have = 0;
    if (!prev || !prev->carry)
        return 0;
    if (in->line_max && prev->carry > in->line_max)
        return GM_LINE_TOO_LONG;
    if (prev->carry > s->cap) {
        int err = grow_slot(rd, s, line_room(in, prev->carry * 2));
        if (err)
            return err;
    }
    memcpy(s->buf, prev->buf + prev->len, prev->carry);
    *have = prev->carry;
    return 0;
}

/* Fills s->buf[*have, s->cap) from a regular file, setting *eof at its end.
 * Returns 0 or an error code with rd->st set. */
static int read_regular(struct gm_reader *rd, struct slot *s, size_t *have, int *eof)
{
    gm_input *in = rd->in;
    while (*have < s->cap && !*eof) {
        size_t want = s->cap - *have;
        if ((int64_t)want > rd->size - rd->start - rd->total)
            want = (size_t)(rd->size - rd->start - rd->total);
        if (want == 0) {
            *eof = 1;
            break;
        }
        int err = pread_block(rd, s->buf + *have, want);
        if (err)
            return err;
        if (in->zero)
            gm_input_swap_terminators(s->buf + *have, want);
        *have += want;
        rd->total += (int64_t)want;
    }
    return 0;
}

/* The prefix's bytes handed out so far give their memory back, a few megabytes at a
 * time, and the whole buffer goes once the last of them is out: the sort that now
 * parses them keeps to its budget. */
static void release_prefix(gm_input *in)
{
    enum { RELEASE_STEP = 8 << 20 };
    if (in->prefix.at == in->prefix.end) {
        gm_buf_free(in->prefix.buf);
        in->prefix.buf = NULL;
    } else if (in->prefix.at - in->prefix.freed >= RELEASE_STEP) {
        gm_buf_release(in->prefix.buf, in->prefix.freed, in->prefix.at);
        in->prefix.freed = in->prefix.at;
    }
}

void gm_input_set_prefix(gm_input *in, char *buf, size_t from, size_t to)
{
    gm_buf_free(in->prefix.buf);
    in->prefix.buf = buf;
    in->prefix.at = in->prefix.freed = from;
    in->prefix.end = to;
    if (from == to)
        release_prefix(in);
}

/* Fills s->buf[*have, s->cap) from the prefix, then from a pipe or a device,
 * setting *eof at its end. Returns 0 or GM_EIO with rd->st set. */
static int read_stream(struct gm_reader *rd, struct slot *s, size_t *have, int *eof)
{
    gm_input *in = rd->in;
    while (*have < s->cap && !*eof) {
        if (in->prefix.buf) {
            size_t n = in->prefix.end - in->prefix.at;
            n = n < s->cap - *have ? n : s->cap - *have;
            memcpy(s->buf + *have, in->prefix.buf + in->prefix.at, n);
            if (in->zero)
                gm_input_swap_terminators(s->buf + *have, n);
            in->prefix.at += n;
            *have += n;
            release_prefix(in);
            continue;
        }
        ssize_t got = cancellable_read(in->fd, s->buf + *have, s->cap - *have);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return gm_fail(&rd->st, GM_EIO, "read failed: %s: %s", in->shown,
                           strerror(errno));
        }
        if (got == 0)
            *eof = 1;
        if (in->zero)
            gm_input_swap_terminators(s->buf + *have, (size_t)got);
        *have += (size_t)got;
    }
    return 0;
}

/* Fills slot s (taking prev's partial line first) with whole lines. Returns 0, or
 * an error code with rd->st set. */
int gm_reader_fill(struct gm_reader *rd, struct slot *s, const struct slot *prev)
{
    gm_input *in = rd->in;
    size_t have;
    int err = take_carry(rd, s, prev, &have);
    if (err)
        return err;
    size_t scanned = have; /* no newline in [0, scanned) */
    int eof = 0;
    for (;;) {
        err = rd->regular ? read_regular(rd, s, &have, &eof) : read_stream(rd, s, &have, &eof);
        if (err)
            return err;
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
            return GM_LINE_TOO_LONG;
        scanned = have;
        err = grow_slot(rd, s, line_room(in, s->cap * 2));
        if (err)
            return err;
    }
    if (s->eof && rd->regular) {
        /* a range ends before the file's end: its size is not checked there */
        err = in->end >= 0 ? 0 : gm_pread_check_size(in->fd, rd->size, in->shown, &rd->st);
        if (err)
            return err;
        /* Leave the offset where read(2) would have (a shared standard input). */
        lseek(in->fd, rd->start + rd->total, SEEK_SET);
    }
    return 0;
}
