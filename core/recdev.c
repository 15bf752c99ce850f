/*
 * recdev.c - the records sort with the text kept on the device (recdev.h): where
 * every input is a regular file, their bytes go by the parallel pread (pread.h)
 * straight into the GPU's pinned staging ring, an end of line added where a file
 * lacks its last one, and gm_gpu_sort_lines (cuda/gpu.h) sorts them in device
 * memory and hands back the sorted lines, which go to the output (the bytes an
 * input hands over already read, from the integer path, go first); the runs of
 * ties the device cannot order come here and are ordered by the CPU's own tie
 * routine (recgpu.c). The host then holds no copy of the text, so neither the
 * chunks' reading into fresh memory nor temporary runs are paid: the device's
 * memory, not -S, bounds the input (a larger one is sorted in chunks as before).
 * The preads leave the inputs' offsets alone, so a declined sort reads them again.
 */
#define _GNU_SOURCE
#include "recdev.h"

#include <stdlib.h>
#include <string.h>

#include "../cuda/gpu.h"
#include "pread.h"
#include "progress.h"
#include "recgpu.h"
#include "util.h"

enum { PREAD_PIECE = 1 << 20 };

struct span {
    gm_lines_src *src;
    const unsigned char *head; /* bytes read before the file's offset (a hand-over) */
    int64_t head_len;
    int64_t off, len;   /* then the file's bytes [off, off + len) */
    int add_eol;        /* the last line lacks its end of line */
};

struct feed {
    struct rec_run *r;
    struct span *spans;
    int nspans;
    int at;             /* the span read next, */
    int64_t done;       /* and its bytes already read (len: its end of line is next) */
    uint64_t left;      /* bytes still to read in all */
    gm_pread_span *ps;
};

static int check_sizes(const struct span *spans, int n, gm_status *st);

/* read (gpu.h): the next len bytes of the inputs, back to back, into dst. */
static int feed_read(void *ctx, void *dst, size_t len, gm_status *st)
{
    struct feed *f = ctx;
    char *out = dst;
    size_t put = 0;
    int n = 0;
    while (put < len && f->at < f->nspans) {
        struct span *s = &f->spans[f->at];
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
    if (!rc)
        gm_progress_read((int64_t)len);
    f->left -= len;
    if (!rc && f->left == 0) /* all read: no file changed size (pread.h's rule) */
        rc = check_sizes(f->spans, f->nspans, st);
    return rc;
}

static int ties(void *ctx, uint64_t *recs, const unsigned char *tied, size_t n, gm_status *st)
{
    const struct rec_run *r = ctx;
    return gm_recgpu_ties(r->ks, (gm_rec *)recs, tied, n, r->nthreads, st);
}

static int sink(void *ctx, const char *text, size_t len, gm_status *st)
{
    struct rec_run *r = ctx;
    return gm_recsink_put_text(r->out, text, len, st);
}

/* The inputs as spans, their bytes in *bytes (an end of line added where one is
 * missing); GM_ETEXT (declined) where one is not an open regular file. */
static int make_spans(struct rec_run *r, struct span *spans, int *nspans, uint64_t *bytes,
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
        struct span *p = &spans[(*nspans)++];
        *p = (struct span){ s, s->carry, (int64_t)s->carry_len, s->off, s->left, 0 };
        unsigned char last = (unsigned char)r->ks->eol;
        if (s->left > 0) {
            int e = gm_pread_all(s->fd, &last, 1, s->off + s->left - 1);
            if (e < 0)
                return gm_fail(st, GM_EIO, "%s: file changed while reading", s->shown);
            if (e > 0)
                return gm_fail(st, GM_EIO, "cannot read: %s: %s", s->shown, strerror(e));
        } else if (s->carry_len > 0) {
            last = s->carry[s->carry_len - 1];
        }
        p->add_eol = last != (unsigned char)r->ks->eol;
        *bytes += (uint64_t)(p->head_len + p->len) + (uint64_t)p->add_eol;
    }
    return GM_OK;
}

/* About how many lines the spans hold, from the terminators in the first
 * SAMPLE bytes of the first one that has bytes (0 where none can be read). */
static uint64_t lines_hint(const struct span *spans, int n, char eol, uint64_t bytes)
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

/* Every file read whole has its size still (pread.h's rule). */
static int check_sizes(const struct span *spans, int n, gm_status *st)
{
    int rc = GM_OK;
    for (int i = 0; i < n && !rc; i++)
        if (!spans[i].src->range)
            rc = gm_pread_check_size(spans[i].src->fd, spans[i].off + spans[i].len,
                                     spans[i].src->shown, st);
    return rc;
}

int gm_records_resident(struct rec_run *r, gm_status *st)
{
    struct span *spans = calloc((size_t)r->nnames + 1, sizeof *spans);
    gm_pread_span *ps = calloc((size_t)r->nnames + 1, sizeof *ps);
    int nspans = 0;
    uint64_t bytes = 0;
    int rc = spans && ps ? GM_OK : gm_fail(st, GM_ENOMEM, "out of memory sorting");
    if (!rc && r->out->have_last) /* -u after lines written before (a hand-over) */
        rc = gm_fail(st, GM_ETEXT, "a line kept before");
    if (!rc)
        rc = make_spans(r, spans, &nspans, &bytes, st);
    if (!rc && bytes == 0)
        rc = gm_fail(st, GM_ETEXT, "no bytes to sort");
    gm_gpu_lines_result res;
    memset(&res, 0, sizeof res);
    if (!rc) {
        struct feed f = { r, spans, nspans, 0, 0, bytes, ps };
        gm_gpu_lines_job job = {
            .ks = r->ks, .bytes = bytes,
            .lines_hint = lines_hint(spans, nspans, r->ks->eol, bytes),
            .read = feed_read, .read_ctx = &f,
            .ties_max = r->budget / 2, .ties = ties, .ties_ctx = r,
            .sink = sink, .sink_ctx = r,
        };
        /* the output's pages are reserved and faulted in while the device works
         * (not for -u, whose output may be a fraction) */
        if (!r->ks->unique && r->out->w)
            gm_writer_ahead(r->out->w, bytes, r->nthreads / 4, st);
        gm_gpu_times t;
        double a = gm_now();
        rc = gm_gpu_sort_lines(&job, &res, &t, st);
        double took = gm_now() - a;
        if (rc == GM_OK || res.bytes > 0 || rc == GM_EIO || rc == GM_EPIPE) {
            r->read += res.setup + res.read;
            r->sort += took - res.setup - res.read - res.sink;
            r->write += res.sink;
            r->gpu_device += took;
            r->gpu_h2d += t.h2d;
            r->gpu_kernel += t.kernel;
            r->gpu_d2h += t.d2h;
            r->gpu_ties += res.ties;
            r->gpu_resident = 1;
            r->out->lines += (int64_t)res.written;
        }
        if (!rc)
            gm_say(r->cfg, GM_MSG_VERBOSE,
                   "records: %llu lines (%llu bytes) sorted in device memory, %llu tied "
                   "records ordered on the CPU; %.3f s waited for CUDA and the device's "
                   "memory before the first read",
                   (unsigned long long)res.lines, (unsigned long long)bytes,
                   (unsigned long long)res.tied, res.setup);
    }
    if (rc == GM_ETEXT || (rc && res.bytes == 0 && r->cfg->device == GM_DEVICE_AUTO &&
                           (rc == GM_ENODEV || rc == GM_EDEVMEM || rc == GM_ECUDA))) {
        if (r->cfg->verbose && bytes > 0)
            gm_say(r->cfg, GM_MSG_VERBOSE, "records: not sorted in device memory (%s)", st->msg);
        if (rc != GM_ETEXT)
            r->gpu = 0; /* auto: the GPU failed; the CPU sorts */
        rc = GM_ETEXT;
    }
    if (!rc) {
        for (int i = 0; i < r->nnames; i++)
            gm_records_src_close(r, i);
        gm_progress_read_done();
    }
    free(spans);
    free(ps);
    return rc;
}
