/*
 * recrange.c - the records sort in device memory for a text the device cannot
 * hold whole (recrange.h): a distribution by key prefix, as a sample sort splits
 * its keys among buckets. The prefixes of lines sampled across the inputs bound up
 * to 4096 buckets; one pass over the inputs counts each bucket's bytes and lines
 * exactly; consecutive buckets are grouped into the fewest ranges the device can
 * sort whole (gm_gpu_lines_fit); then each range is one gm_gpu_sort_lines whose
 * reads pass over the inputs again and hand it the lines whose prefixes lie in
 * the range, in input order. A prefix orders a line before anything else compares
 * it (keys.h: prefix(a) < prefix(b) means a sorts first), so the ranges' outputs
 * one after another are the whole sorted, and lines of equal prefixes (-u's
 * duplicates, -s's runs, the last resort's ties) share a range. No temporary file
 * is written: each range reads the inputs once more, which from the page cache
 * costs far less than writing and merging the chunk sort's runs. A pass checks
 * that it met exactly the bytes the count found, so an input changed between
 * passes is an error, never lines lost or doubled.
 */
#define _GNU_SOURCE
#include "records/recrange.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/gpu.h"
#include "base/pages.h"
#include "plan/plan.h"
#include "records/recdevsort.h"
#include "records/recwalk.h"
#include "base/util.h"
#include "plan/report.h"

enum {
    /* Each range reads the inputs again. From the page cache a pass over 1 G
     * lines takes about 7 s on 16 cores, where the CPU's sort through runs
     * takes 80-120 s in all (bench/RESULTS.md): four ranges (five passes) keep
     * well ahead of it. */
    MAX_RANGES = 4,
    /* Inputs over half the host's memory are read from their disks each pass:
     * two ranges read them three times, as many passes as the chunk sort's
     * read, runs written and runs read back, and more would read more. */
    MAX_RANGES_UNCACHED = 2,
    WINDOW_MIN = 16 << 20,
    WINDOW_MAX = 256 << 20,
};

static size_t test_window;
static uint64_t test_memory;

void gm_records_test_window(size_t bytes)
{
    test_window = bytes;
}

void gm_records_test_memory(uint64_t bytes)
{
    test_memory = bytes;
}

/* The most ranges worth the passes over inputs of bytes. */
static int most_ranges(uint64_t bytes)
{
    uint64_t mem = test_memory ? test_memory : gm_physical_memory();
    return mem == 0 || bytes <= mem / 2 ? MAX_RANGES : MAX_RANGES_UNCACHED;
}

/* ------------------------------------------------------------------ ranges */

/* Prefixes [lo, hi) (top: no upper bound), and their bytes and lines. */
struct range {
    uint64_t lo, hi;          /* the first prefix in, and the first above (group) */
    int top;                  /* hi is no bound: the range runs to the last prefix (group) */
    uint64_t bytes, lines;    /* what the range holds, from the buckets' counts (group) */
};

/* Whether buckets [s, e) fit the device whole: GM_OK, GM_ETEXT, or the device's
 * error. cum: nb + 2 running sums of bytes, then of lines. */
static int fits(const struct rec_run *r, const uint64_t *cum, int nb, int s, int e,
                gm_status *st)
{
    const uint64_t *cl = cum + nb + 2;
    uint64_t lines = cl[e] - cl[s];
    return lines == 0 ? GM_OK : gm_gpu_lines_fit(r->ks, cum[e] - cum[s], lines, st);
}

/* The fewest ranges of consecutive buckets that fit, each as large as fits; more
 * than most of them (out has room for MAX_RANGES) decline the sort. */
static int group(const struct rec_run *r, const uint64_t *bounds, int nb, const uint64_t *cum,
                 int most, struct range *out, int *n, gm_status *st)
{
    const uint64_t *cl = cum + nb + 2;
    *n = 0;
    for (int s = 0; s <= nb;) {
        int lo = s + 1, hi = nb + 1, best = s;
        while (lo <= hi) { /* the needs grow with the buckets taken */
            int mid = (lo + hi) / 2, rc = fits(r, cum, nb, s, mid, st);
            if (rc && rc != GM_ETEXT)
                return rc;
            if (rc == GM_OK)
                best = mid, lo = mid + 1;
            else
                hi = mid - 1;
        }
        if (best == s) { /* st says why buckets [s, s + 1) do not fit */
            char why[sizeof st->msg];
            snprintf(why, sizeof why, "%s", st->msg);
            return gm_fail(st, GM_ETEXT, "%s, for %llu bytes of lines whose keys the sample "
                           "cannot split", why, (unsigned long long)(cum[s + 1] - cum[s]));
        }
        if (*n == most)
            return gm_fail(st, GM_ETEXT, "more than %d ranges of keys%s", most,
                           most < MAX_RANGES ? " for inputs over half the host's memory" : "");
        out[(*n)++] = (struct range){ s ? bounds[s - 1] : 0, best <= nb ? bounds[best - 1] : 0,
                                      best > nb, cum[best] - cum[s], cl[best] - cl[s] };
        s = best;
    }
    return GM_OK;
}

/* ------------------------------------------------------------------ selecting */

/* One range's pass: the lines of the range, window by window, compacted into out
 * in input order and handed to the device as it reads. */
struct sel {
    struct gm_walk *w;        /* the pass's walk over the inputs (gm_records_ranges) */
    struct range rg;          /* the range this pass selects (gm_records_ranges) */
    unsigned char *out;       /* the window's lines of the range, compacted (sel_fill) */
    size_t out_cap, out_len, out_at; /* out's room, bytes (sel_fill), those sent (sel_read) */
    size_t at[65]; /* each task's first byte in out, then the end */
    int tasks;     /* the threads that count and select (and count the buckets) */
    const char *shown; /* the input a change is blamed on */
};

static inline int in_range(const struct range *g, uint64_t p)
{
    return p >= g->lo && (g->top || p < g->hi);
}

static void sel_count(void *ctx, int t)
{
    struct sel *s = ctx;
    const gm_recs *v = &s->w->recs;
    const char eol = s->w->r->ks->eol;
    size_t n = 0, lo, hi;
    gm_slice(v->n, t, s->tasks, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        if (in_range(&s->rg, v->r[i].prefix))
            n += gm_rec_len(&v->r[i], eol) + 1;
    s->at[t + 1] = n;
}

static void sel_copy(void *ctx, int t)
{
    struct sel *s = ctx;
    const gm_recs *v = &s->w->recs;
    const char eol = s->w->r->ks->eol;
    unsigned char *to = s->out + s->at[t];
    size_t lo, hi;
    gm_slice(v->n, t, s->tasks, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        if (in_range(&s->rg, v->r[i].prefix)) {
            size_t len = gm_rec_len(&v->r[i], eol) + 1;
            memcpy(to, gm_rec_line(&v->r[i]), len);
            to += len;
        }
}

/* The next window's lines of the range into out: *got 0 once the pass is over. */
static int sel_fill(struct sel *s, int *got, gm_status *st)
{
    int rc = gm_walk_next(s->w, got, st);
    if (rc || !*got)
        return rc;
    if (s->out_cap < s->w->lines) {
        free(s->out);
        s->out_cap = s->w->cap;
        if (!(s->out = malloc(s->out_cap)))
            return gm_fail(st, GM_ENOMEM, "out of memory selecting lines");
    }
    s->at[0] = 0;
    gm_parallel_for(s->tasks, s->tasks, sel_count, s);
    for (int t = 0; t < s->tasks; t++)
        s->at[t + 1] += s->at[t];
    gm_parallel_for(s->tasks, s->tasks, sel_copy, s);
    s->out_len = s->at[s->tasks];
    s->out_at = 0;
    return GM_OK;
}

/* read (gpu.h): the range's next len bytes. */
static int sel_read(void *ctx, void *dst, size_t len, gm_status *st)
{
    struct sel *s = ctx;
    size_t put = 0;
    while (put < len) {
        if (s->out_at == s->out_len) {
            int got = 0, rc = sel_fill(s, &got, st);
            if (rc)
                return rc;
            if (!got) /* fewer bytes in the range than counted */
                return gm_fail(st, GM_EIO, "%s: file changed while reading", s->shown);
            continue;
        }
        size_t n = len - put < s->out_len - s->out_at ? len - put : s->out_len - s->out_at;
        if (n >= (1u << 20))
            gm_pages_copy((char *)dst + put, s->out + s->out_at, n, s->w->r->nthreads);
        else
            memcpy((char *)dst + put, s->out + s->out_at, n);
        put += n;
        s->out_at += n;
    }
    return GM_OK;
}

/* After the range is sorted: the rest of the pass holds none of its lines (more
 * than counted means an input changed), and the pass ends with the size check. */
static int sel_drain(struct sel *s, gm_status *st)
{
    int got = 1, rc = GM_OK;
    while (!rc && s->out_at == s->out_len && got)
        rc = sel_fill(s, &got, st);
    if (!rc && s->out_at < s->out_len)
        rc = gm_fail(st, GM_EIO, "%s: file changed while reading", s->shown);
    return rc;
}

/* ------------------------------------------------------------------ entry */

/* The ranges of the spans: sampled, counted (the first pass, through s's walk on
 * its tasks), grouped. GM_ETEXT where the sort declines. */
static int plan_ranges(struct rec_run *r, struct sel *s, const gm_span *spans, int nspans,
                       uint64_t bytes, gm_pread_span *ps, struct range *rg, int *n, gm_status *st)
{
    int tasks = s->tasks, nb = 0, inexact = 0;
    uint64_t *bounds = malloc(GM_MAX_BUCKETS * sizeof *bounds);
    uint64_t *mem = calloc((size_t)tasks * 2 * (GM_MAX_BUCKETS + 1) + 2 * (GM_MAX_BUCKETS + 2),
                           sizeof *mem);
    int rc = bounds && mem ? GM_OK : gm_fail(st, GM_ENOMEM, "out of memory counting keys");
    if (!rc)
        rc = gm_buckets_sample(r, spans, nspans, bounds, &nb, st);
    uint64_t *cb = mem, *cl = mem + (size_t)tasks * (size_t)(nb + 1); /* bytes, lines */
    if (!rc) {
        gm_walk_start(s->w, r, spans, nspans, bytes, ps, 1); /* --progress counts this pass */
        rc = gm_buckets_count(s->w, bounds, nb, tasks, cb, cl, &inexact, st);
    }
    if (!rc && r->ks->unique && (r->ks->nkeys != 1 || inexact))
        rc = gm_fail(st, GM_ETEXT, "lines: -u with keys the device cannot compare whole");
    if (!rc) {
        uint64_t *cum = mem + (size_t)tasks * 2 * (GM_MAX_BUCKETS + 1); /* bytes, then lines */
        cum[0] = cum[nb + 2] = 0;
        for (int b = 0; b <= nb; b++) {
            cum[b + 1] = cum[b] + cb[b];
            cum[nb + 2 + b + 1] = cum[nb + 2 + b] + cl[b];
        }
        rc = cum[nb + 1] != bytes ? gm_fail(st, GM_EIO, "%s: file changed while reading",
                                            s->shown)
                                  : group(r, bounds, nb, cum, most_ranges(bytes), rg, n, st);
    }
    free(mem);
    free(bounds);
    return rc;
}

/* Range i sorted on the device into the output; its pass then read to the end. */
static int sort_range(struct rec_run *r, struct sel *s, const gm_span *spans, int nspans,
                      uint64_t bytes, gm_pread_span *ps, uint64_t *written, gm_status *st)
{
    gm_walk_start(s->w, r, spans, nspans, bytes, ps, 0);
    s->out_len = s->out_at = 0;
    gm_gpu_lines_result res;
    int rc = gm_recdev_sort(r, s->rg.bytes, s->rg.lines, sel_read, s, &res, written, st);
    if (!rc)
        rc = sel_drain(s, st);
    return rc;
}

int gm_records_ranges(struct rec_run *r, const gm_span *spans, int nspans, uint64_t bytes,
                      gm_pread_span *ps, uint64_t *written, gm_status *st)
{
    struct gm_walk w = { 0 };
    struct range rg[MAX_RANGES];
    int n = 0;
    *written = 0;
    size_t win = test_window ? test_window : gm_records_clamp(r->budget / 16, WINDOW_MIN, WINDOW_MAX);
    w.cap = win;
    w.buf = malloc(win);
    struct sel s = { &w, { 0, 0, 0, 0, 0 }, NULL, 0, 0, 0, { 0 },
                     r->nthreads < 64 ? r->nthreads : 64,
                     nspans == 1 ? spans[0].src->shown : "an input" };
    double a = gm_now();
    int rc = w.buf ? GM_OK : gm_fail(st, GM_ENOMEM, "out of memory reading lines");
    if (!rc)
        rc = plan_ranges(r, &s, spans, nspans, bytes, ps, rg, &n, st);
    r->read += gm_now() - a;
    /* the output's pages are reserved and faulted in meanwhile (not for -u) */
    if (!rc && !r->ks->unique && r->out->w)
        gm_writer_ahead(r->out->w, bytes, r->nthreads / 4, st);
    uint64_t lines = 0;
    for (int i = 0; i < n && !rc; i++) {
        if (rg[i].lines == 0)
            continue;
        s.rg = rg[i];
        rc = sort_range(r, &s, spans, nspans, bytes, ps, written, st);
        if (rc == GM_ETEXT && *written > 0) { /* output began: no other way now */
            char why[sizeof st->msg];
            snprintf(why, sizeof why, "%s", st->msg);
            rc = gm_fail(st, GM_ENOMEM, "sorting in device memory, range %d of %d: %s", i + 1, n,
                         why);
        }
        lines += rg[i].lines;
    }
    if (!rc)
        gm_report_fact(r->cfg, "device",
               "%llu lines (%llu bytes) sorted in device memory in %d range%s of their "
               "first key's prefix, the inputs read %d times",
               (unsigned long long)lines, (unsigned long long)bytes, n, n == 1 ? "" : "s", n + 1);
    free(s.out);
    gm_walk_free(&w);
    return rc;
}
