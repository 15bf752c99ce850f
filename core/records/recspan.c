/*
 * recspan.c - the records sort's inputs as spans of regular files, read back to
 * back by parallel preads (recspan.h).
 */
#define _GNU_SOURCE
#include "records/recspan.h"

#include <stdlib.h>
#include <string.h>

#include "base/progress.h"
#include "base/util.h"

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
    *f = (gm_span_feed){ r, spans, nspans, 0, 0, bytes, progress, ps };
}

int gm_span_read(void *ctx, void *dst, size_t len, gm_status *st)
{
    gm_span_feed *f = ctx;
    char *out = dst;
    size_t put = 0;
    int n = 0;
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
