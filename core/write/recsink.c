/*
 * recsink.c - the gathering of lines into output (see recsink.h). A sorted array
 * is written in windows of records: each window's bytes are summed per piece on
 * all threads, then every piece copies its lines to its own place in the buffer,
 * which is written in one call, as cuDF gathers rows once by the sorted indices.
 * -u keeps the first line of every run of equal keys (sort's rule), marked in
 * parallel and carried across windows and calls by the last line kept. The sink
 * has two buffers: one is written by its writer thread (one for the sink's life)
 * while the other fills.
 */
#define _GNU_SOURCE
#include "write/recsink.h"

#include <stdlib.h>
#include <string.h>

#include "base/progress.h"
#include "write/bgwrite.h"
#include "sort/recsort.h"
#include "base/util.h"

enum {
    WINDOW = 1 << 18,  /* records gathered at a time, at most */
    MIN_WINDOW = 4096, /* and at least, where lines are left */
    PIECES = 64,       /* at most, per window */
    MIN_CAP = 64 << 10,
    PREFETCH = 64,     /* lines ahead whose bytes are asked for early */
};

void gm_recsink_init(gm_recsink *k, const gm_keyspec *ks, gm_writer *w, int fd,
                     const char *shown, int unique, int nthreads, size_t cap)
{
    memset(k, 0, sizeof *k);
    k->ks = ks;
    k->w = w;
    k->fd = fd;
    k->shown = shown;
    k->unique = unique;
    k->nthreads = nthreads;
    k->cap = cap < MIN_CAP ? MIN_CAP : cap;
}

void gm_recsink_free(gm_recsink *k)
{
    gm_bgwrite_free(k->writer);
    gm_buf_free(k->buf);
    gm_buf_free(k->spare);
    free(k->last);
    k->writer = NULL;
    k->buf = k->spare = k->last = NULL;
}

static int grow(gm_recsink *k, size_t need, gm_status *st)
{
    if (k->buf && need <= k->cap)
        return GM_OK;
    size_t cap = k->cap;
    while (cap < need)
        cap *= 2;
    const unsigned char *last = gm_rec_line(&k->last_rec);
    int moves = k->have_last && k->buf && last >= k->buf && last < k->buf + k->len;
    size_t off = moves ? (size_t)(last - k->buf) : 0;
    size_t len = moves ? gm_rec_len(&k->last_rec, k->ks->eol) : 0;
    unsigned char *b = k->buf ? gm_buf_resize(k->buf, cap, "output", st)
                              : gm_buf_alloc(cap, "output", st);
    if (!b)
        return GM_ENOMEM;
    if (moves) /* the last line moved with the buffer */
        k->last_rec.ref = gm_rec_make_ref(b + off, len, gm_rec_is_exact(&k->last_rec));
    k->buf = b;
    k->cap = cap;
    return GM_OK;
}

/* Keeps a copy of the last line kept, whose bytes (in buf or a window) are about
 * to go. */
static int save_last(gm_recsink *k, gm_status *st)
{
    const unsigned char *p = gm_rec_line(&k->last_rec);
    if (!k->have_last || p == k->last)
        return GM_OK;
    size_t len = gm_rec_len(&k->last_rec, k->ks->eol);
    if (len + 1 > k->last_cap) {
        unsigned char *c = malloc(len + 1);
        if (!c)
            return gm_fail(st, GM_ENOMEM, "out of memory writing");
        free(k->last);
        k->last = c;
        k->last_cap = len + 1;
    }
    memcpy(k->last, p, len + 1);
    k->last_rec.ref = gm_rec_make_ref(k->last, len, gm_rec_is_exact(&k->last_rec));
    return GM_OK;
}

/* The writer thread's job: one full buffer into the output or the run. */
static int write_out(void *ctx, const unsigned char *buf, size_t len, gm_status *st)
{
    gm_recsink *k = ctx;
    if (len == 0)
        return GM_OK;
    if (k->w)
        return gm_writer_put_text(k->w, (const char *)buf, len, st);
    int err = gm_write_all(k->fd, buf, len);
    if (!err) /* a temporary run's file (an output goes through a writer) */
        gm_progress_run_bytes((int64_t)len);
    return err ? gm_fail(st, GM_EIO, "write failed: %s: %s", k->shown, strerror(err)) : GM_OK;
}

/* Hands the buffered lines to the writer thread (after the buffer it writes is
 * done) and goes on in the other buffer. */
static int hand_off(gm_recsink *k, gm_status *st)
{
    if (k->len == 0)
        return GM_OK;
    int rc = save_last(k, st);
    if (!rc && !k->writer) {
        k->writer = gm_bgwrite_new(write_out, k);
        if (!k->writer)
            rc = gm_fail(st, GM_ENOMEM, "out of memory writing");
    }
    if (!rc)
        rc = gm_bgwrite_wait(k->writer, st);
    if (!rc && k->spare_cap < k->cap) {
        gm_buf_free(k->spare);
        k->spare = gm_buf_alloc(k->cap, "output", st);
        k->spare_cap = k->spare ? k->cap : 0;
        if (!k->spare)
            rc = GM_ENOMEM;
    }
    if (rc)
        return rc;
    unsigned char *full = k->buf;
    size_t full_cap = k->cap, len = k->len;
    k->buf = k->spare;
    k->cap = k->spare_cap;
    k->spare = full;
    k->spare_cap = full_cap;
    k->len = 0;
    k->bytes += (int64_t)len;
    return gm_bgwrite_start(k->writer, full, len, st);
}

void gm_recsink_reserve(gm_recsink *k, uint64_t bytes)
{
    if (k->w)
        gm_writer_reserve_ahead(k->w, bytes);
}

int gm_recsink_flush(gm_recsink *k, gm_status *st)
{
    int rc = hand_off(k, st);
    int wrc = k->writer ? gm_bgwrite_wait(k->writer, rc ? NULL : st) : GM_OK;
    return rc ? rc : wrc;
}

int gm_recsink_put_text(gm_recsink *k, const char *text, size_t len, gm_status *st)
{
    int rc = k->len > 0 ? gm_recsink_flush(k, st) : GM_OK;
    if (!rc)
        rc = write_out(k, (const unsigned char *)text, len, st);
    if (!rc)
        k->bytes += (int64_t)len;
    return rc;
}

int gm_recsink_put(gm_recsink *k, const gm_rec *r, gm_status *st)
{
    if (k->unique && k->have_last && gm_rec_cmp(k->ks, &k->last_rec, r) == 0)
        return GM_OK;
    size_t len = gm_rec_len(r, k->ks->eol);
    int rc = GM_OK;
    if (k->buf && k->len + len + 1 > k->cap)
        rc = hand_off(k, st);
    if (!rc)
        rc = grow(k, len + 1, st);
    if (rc)
        return rc;
    unsigned char *at = k->buf + k->len;
    memcpy(at, gm_rec_line(r), len + 1); /* the line and its terminator */
    k->len += len + 1;
    k->lines++;
    k->last_rec.prefix = r->prefix;
    k->last_rec.ref = gm_rec_make_ref(at, len, gm_rec_is_exact(r));
    k->have_last = 1;
    return GM_OK;
}

/* ------------------------------------------------------------------ gather */

struct gather {
    gm_recsink *k;           /* the sink gathered for: ks, nthreads (window_sizes) */
    const gm_rec *r;         /* the window's first record (window_sizes) */
    size_t n;                /* records in this window */
    int pieces;              /* the window's pieces, each gathered by one task (window_sizes) */
    unsigned char *keep;     /* -u: which records stay (NULL: all) */
    const gm_rec *before;    /* -u: the line kept before the window */
    unsigned char *out;      /* where the window's lines go */
    size_t bytes[PIECES + 1]; /* each piece's bytes, then its offset; [pieces]: the total */
    size_t kept[PIECES];     /* each piece's lines written, fewer with -u (gather_size) */
};

static void piece_range(const struct gather *g, int p, size_t *lo, size_t *hi)
{
    *lo = g->n * (size_t)p / (size_t)g->pieces;
    *hi = g->n * (size_t)(p + 1) / (size_t)g->pieces;
}

static void gather_size(void *ctx, int p)
{
    struct gather *g = ctx;
    size_t lo, hi, sum = 0, kept = 0;
    piece_range(g, p, &lo, &hi);
    char eol = g->k->ks->eol;
    for (size_t i = lo; i < hi; i++) {
        if (g->keep) {
            const gm_rec *prev = i > 0 ? &g->r[i - 1] : g->before;
            g->keep[i] = !prev || gm_rec_cmp(g->k->ks, prev, &g->r[i]) != 0;
            if (!g->keep[i])
                continue;
        }
        sum += gm_rec_len(&g->r[i], eol) + 1;
        kept++;
    }
    g->bytes[p] = sum;
    g->kept[p] = kept;
}

/* Piece p's lines, one after the other, from out on. */
static void gather_piece(const struct gather *g, int p, unsigned char *out)
{
    size_t lo, hi;
    piece_range(g, p, &lo, &hi);
    char eol = g->k->ks->eol;
    for (size_t i = lo; i < hi; i++) {
        if (i + PREFETCH < hi) { /* both ends: a line may cross a cache line */
            const gm_rec *f = &g->r[i + PREFETCH];
            __builtin_prefetch(gm_rec_line(f));
            __builtin_prefetch(gm_rec_line(f) + ((f->ref >> 48) & GM_REC_LONG));
        }
        if (g->keep && !g->keep[i])
            continue;
        size_t len = gm_rec_len(&g->r[i], eol) + 1;
        memcpy(out, gm_rec_line(&g->r[i]), len);
        out += len;
    }
}

static void gather_copy(void *ctx, int p)
{
    struct gather *g = ctx;
    gather_piece(g, p, g->out + g->bytes[p]);
}

/* Piece p gathered straight into the output's pages (gm_writer_put_pieces). */
static void gather_into(void *ctx, int p, char *dst)
{
    gather_piece(ctx, p, (unsigned char *)dst);
}

/* The window's pieces sized (g->bytes[p] becomes piece p's offset); returns the
 * window's bytes, *kept its lines. */
static size_t gather_sizes(struct gather *g, size_t *kept)
{
    gm_parallel_for(g->k->nthreads, g->pieces, gather_size, g);
    size_t total = 0;
    *kept = 0;
    for (int p = 0; p < g->pieces; p++) {
        size_t b = g->bytes[p];
        g->bytes[p] = total;
        total += b;
        *kept += g->kept[p];
    }
    g->bytes[g->pieces] = total;
    return total;
}

/* The window of the next records, at most most of the n at r, in pieces and
 * sized (see gather_sizes). */
static size_t window_sizes(struct gather *g, gm_recsink *k, const gm_rec *r, size_t n,
                           size_t most, unsigned char *keep, size_t *kept)
{
    *g = (struct gather){ .k = k, .r = r, .n = n < most ? n : most, .keep = keep };
    g->before = k->have_last ? &k->last_rec : NULL;
    g->pieces = g->n < 4096 ? 1 : k->nthreads * 4 < PIECES ? k->nthreads * 4 : PIECES;
    return gather_sizes(g, kept);
}

/* The window's last line kept, for -u across windows: a copy, since its bytes
 * are gone once written. */
static int keep_last(gm_recsink *k, const struct gather *g, gm_status *st)
{
    for (size_t i = g->n; i-- > 0;)
        if (g->keep[i]) {
            k->last_rec = g->r[i];
            k->have_last = 1;
            return save_last(k, st);
        }
    return GM_OK;
}

/* put_all where the output goes through the writer's mapping: each window is
 * gathered on all threads straight into the output's pages, with no buffer and
 * no copy between. */
static int put_all_mapped(gm_recsink *k, struct gather *g, unsigned char *keep,
                          const gm_rec *r, size_t n, gm_status *st)
{
    int rc = gm_recsink_flush(k, st); /* lines buffered before go first */
    for (size_t at = 0; at < n && !rc; at += g->n) {
        size_t kept, total = window_sizes(g, k, r + at, n - at, WINDOW, keep, &kept);
        rc = gm_writer_put_pieces(k->w, total, g->pieces, g->bytes, gather_into, g, st);
        if (!rc && k->unique)
            rc = keep_last(k, g, st);
        k->bytes += (int64_t)total;
        k->lines += (int64_t)kept;
    }
    return rc;
}

int gm_recsink_put_all(gm_recsink *k, const gm_rec *r, size_t n, gm_status *st)
{
    struct gather *g = malloc(sizeof *g);
    unsigned char *keep = k->unique ? malloc(WINDOW) : NULL;
    int rc = g && (keep || !k->unique) ? GM_OK : gm_fail(st, GM_ENOMEM, "out of memory writing");
    if (!rc && k->w && n > 0)
        rc = gm_writer_ready(k->w, st);
    if (!rc && k->w && gm_writer_mapped(k->w)) {
        rc = put_all_mapped(k, g, keep, r, n, st);
        free(g);
        free(keep);
        return rc;
    }
    /* windows of as many records as fill the buffer, at the bytes a record of
     * the window before (the first: MIN_WINDOW), so that the buffer keeps the
     * size the sink was given (a share of -S) */
    size_t most = MIN_WINDOW;
    for (size_t at = 0; at < n && !rc; at += g->n) {
        size_t kept, total = window_sizes(g, k, r + at, n - at, most, keep, &kept);
        size_t fit = k->cap / (total / g->n + 1);
        most = fit < MIN_WINDOW ? MIN_WINDOW : fit > WINDOW ? WINDOW : fit;
        /* a full buffer goes to the writer thread; the window is gathered into
         * the other one */
        if (k->len > 0 && k->len + total > k->cap)
            rc = hand_off(k, st);
        if (!rc)
            rc = grow(k, k->len + total, st);
        if (rc)
            break;
        g->out = k->buf + k->len;
        gm_parallel_for(k->nthreads, g->pieces, gather_copy, g);
        /* the last line kept, for -u across windows: the window's last kept one */
        for (size_t i = g->n; k->unique && i-- > 0;) {
            if (keep[i]) {
                size_t len = gm_rec_len(&g->r[i], k->ks->eol);
                k->last_rec.prefix = g->r[i].prefix;
                k->last_rec.ref = gm_rec_make_ref(g->out + total - len - 1, len,
                                                  gm_rec_is_exact(&g->r[i]));
                k->have_last = 1;
                break;
            }
        }
        k->len += total;
        k->lines += (int64_t)kept;
    }
    free(g);
    free(keep);
    return rc;
}
