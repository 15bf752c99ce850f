/*
 * recspan.c - the records sort's inputs as spans of regular files, read back to
 * back by parallel preads (recspan.h), and checked for numbers as they are read
 * where gpumerge's default -n asks (numwarn.h): whole lines on all threads, a line
 * that crosses two reads read again from its start once it ends.
 */
#define _GNU_SOURCE
#include "records/recspan.h"

#include <stdlib.h>
#include <string.h>

#include "base/progress.h"
#include "base/util.h"
#include "read/numwarn.h"

enum { PREAD_PIECE = 1 << 20 };

/* Every file read whole has its size still (pread.h's rule). */
static int check_sizes(const gm_span *spans, int n, gm_status *st)
{
    int rc = GM_OK;
    for (int i = 0; i < n && !rc; i++)
        if (!spans[i].src->range)
            rc = gm_pread_check_size(spans[i].src->fd, spans[i].off + spans[i].len,
                                     spans[i].src->shown, st);
    return rc;
}

void gm_span_feed_start(gm_span_feed *f, struct rec_run *r, const gm_span *spans, int nspans,
                        uint64_t bytes, gm_pread_span *ps, int progress)
{
    *f = (gm_span_feed){ r, spans, nspans, 0, 0, bytes, progress, ps, -1, 0, -1 };
    if (progress && nspans > 0) {
        f->check = gm_numwarn_key(r->cfg);
        f->lines = spans[0].src->line0;
    }
}

/* Whether the line [from, to) of span s (read before, and ended now) holds a
 * number: its bytes read again, from the head and the file. A line that cannot
 * be read again is taken as holding one (the sort's own read reports errors). */
static int line_holds(const gm_span_feed *f, const gm_span *s, int64_t from, int64_t to)
{
    size_t len = (size_t)(to - from);
    unsigned char *buf = malloc(len ? len : 1);
    if (!buf)
        return 1;
    int64_t mid = from < s->head_len ? (to < s->head_len ? to : s->head_len) : from;
    if (mid > from)
        memcpy(buf, s->head + from, (size_t)(mid - from));
    int holds = 1;
    if (to == mid || gm_pread_all(s->src->fd, buf + (mid - from), (size_t)(to - mid),
                                  s->off + (mid - s->head_len)) == 0)
        holds = gm_numwarn_holds(f->r->ks, f->check, buf, len);
    free(buf);
    return holds;
}

/* Says the warning for line `line` of span s: the checks are over. */
static void say(gm_span_feed *f, const gm_span *s, int64_t line)
{
    gm_numwarn_say(f->r->cfg, f->check, s->src->shown, line);
    f->check = -1;
}

/* Checks n bytes p of span s from its byte `from` for numbers. */
static void check_piece(gm_span_feed *f, const gm_span *s, int64_t from, const unsigned char *p,
                        size_t n)
{
    const unsigned char eol = (unsigned char)f->r->ks->eol;
    if (f->part >= 0) { /* the end of a line begun before */
        const unsigned char *e = memchr(p, eol, n);
        if (!e)
            return;
        size_t k = (size_t)(e - p) + 1;
        f->lines++;
        if (!line_holds(f, s, f->part, from + (int64_t)k - 1))
            return say(f, s, f->lines);
        f->part = -1;
        p += k, n -= k, from += (int64_t)k;
    }
    const unsigned char *last = n ? memrchr(p, eol, n) : NULL;
    size_t whole = last ? (size_t)(last - p) + 1 : 0, lines;
    size_t bad = gm_numwarn_scan(f->r->ks, f->check, p, whole, f->r->nthreads, &lines);
    if (bad != SIZE_MAX)
        return say(f, s, f->lines + (int64_t)bad + 1);
    f->lines += (int64_t)lines;
    if (whole < n)
        f->part = from + (int64_t)whole;
}

/* Checks the put bytes at out that a read from span at's byte done handed out,
 * walking the spans as gm_span_read did. */
static void check_read(gm_span_feed *f, int at, int64_t done, const unsigned char *out,
                       size_t put)
{
    for (size_t pos = 0; pos < put && f->check >= 0 && !gm_numwarn_said() && at < f->nspans;) {
        const gm_span *s = &f->spans[at];
        int64_t all = s->head_len + s->len;
        if (done < all) {
            size_t take = (size_t)(all - done) < put - pos ? (size_t)(all - done) : put - pos;
            check_piece(f, s, done, out + pos, take);
            done += (int64_t)take;
            pos += take;
            continue;
        }
        if (s->add_eol)
            check_piece(f, s, done, out + pos++, 1);
        if (++at < f->nspans)
            f->lines = f->spans[at].src->line0;
        done = 0;
        f->part = -1;
    }
}

int gm_span_read(void *ctx, void *dst, size_t len, gm_status *st)
{
    gm_span_feed *f = ctx;
    char *out = dst;
    size_t put = 0;
    int n = 0, at = f->at;
    int64_t done = f->done;
    while (put < len && f->at < f->nspans) {
        const gm_span *s = &f->spans[f->at];
        int64_t all = s->head_len + s->len;
        if (f->done < all) {
            size_t take = (size_t)(all - f->done) < len - put ? (size_t)(all - f->done)
                                                               : len - put;
            if (f->done < s->head_len) { /* from the head */
                take = take < (size_t)(s->head_len - f->done) ? take
                                                              : (size_t)(s->head_len - f->done);
                memcpy(out + put, s->head + f->done, take);
            } else {
                f->ps[n++] = (gm_pread_span){ s->src->fd, s->src->shown, out + put, 0, take,
                                              s->off + (f->done - s->head_len) };
            }
            f->done += (int64_t)take;
            put += take;
        } else {
            if (s->add_eol)
                out[put++] = s->src->eol;
            f->at++;
            f->done = 0;
        }
    }
    int rc = n ? gm_pread_parallel(f->ps, n, PREAD_PIECE, f->r->nthreads, NULL, NULL, st) : GM_OK;
    if (!rc && f->check >= 0)
        check_read(f, at, done, (const unsigned char *)out, put);
    if (!rc && f->progress)
        gm_progress_read((int64_t)put);
    f->left -= put;
    if (!rc && f->left == 0) /* all read: no file changed size */
        rc = check_sizes(f->spans, f->nspans, st);
    return rc;
}

int gm_spans_make(struct rec_run *r, gm_span *spans, int *nspans, uint64_t *bytes,
                  gm_status *st)
{
    *nspans = 0;
    *bytes = 0;
    for (int i = 0; i < r->nnames; i++) {
        if (r->drained[i])
            continue;
        gm_lines_src *s = &r->srcs[i];
        if (!r->open[i] || !s->regular || s->fd < 0 || s->bytes > 0)
            return gm_fail(st, GM_ETEXT, "%s is not a regular file", s->shown);
        gm_span *p = &spans[(*nspans)++];
        *p = (gm_span){ s, s->carry, (int64_t)s->carry_len, s->off, s->left, 0 };
        unsigned char last = (unsigned char)r->ks->eol;
        if (s->left > 0) {
            int e = gm_pread_all(s->fd, &last, 1, s->off + s->left - 1);
            if (e)
                return gm_pread_error(e, s->shown, st);
        } else if (s->carry_len > 0) {
            last = s->carry[s->carry_len - 1];
        }
        p->add_eol = last != (unsigned char)r->ks->eol;
        *bytes += (uint64_t)(p->head_len + p->len) + (uint64_t)p->add_eol;
    }
    return GM_OK;
}

uint64_t gm_spans_lines_hint(const gm_span *spans, int n, char eol, uint64_t bytes)
{
    enum { SAMPLE = 1 << 20 };
    for (int i = 0; i < n; i++) {
        if (spans[i].len == 0)
            continue;
        size_t len = spans[i].len < SAMPLE ? (size_t)spans[i].len : SAMPLE;
        char *buf = malloc(len);
        uint64_t count = 0;
        if (buf && gm_pread_all(spans[i].src->fd, buf, len, spans[i].off) == 0)
            for (size_t k = 0; k < len; k++)
                count += buf[k] == eol;
        free(buf);
        return count ? bytes * count / len : bytes / len;
    }
    return 0;
}
