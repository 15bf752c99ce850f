/*
 * recspan.h - the inputs of a records sort as spans of regular files, read back to
 * back by offsets (recspan.c): what the sort in device memory feeds the device
 * (recdev.c), once, or once a range of keys and once to count them (recrange.c).
 * A span is the bytes an input handed over already read (the integer path's),
 * then its file's bytes from its offset; an end of line is added where the last
 * line lacks one. The preads leave the inputs' offsets alone, so every pass reads
 * the same bytes, and a declined sort reads them again another way. The pass that
 * --progress counts reads every byte once: where gpumerge's default -n checks
 * the lines for a number (numwarn.h), it checks them there, on the host, before
 * they go to the device.
 */
#ifndef GM_RECSPAN_H
#define GM_RECSPAN_H

#include "read/pread.h"
#include "records/records_impl.h"

typedef struct gm_span {
    gm_lines_src *src;  /* the input the span is of (gm_spans_make) */
    const unsigned char *head; /* bytes read before the file's offset (a hand-over) */
    int64_t head_len;   /* head's bytes (gm_spans_make) */
    int64_t off, len;   /* then the file's bytes [off, off + len) */
    int add_eol;        /* the last line lacks its end of line */
} gm_span;

/* One pass over the spans: gm_span_read hands out their bytes in order. */
typedef struct gm_span_feed {
    struct rec_run *r;  /* the run read for (gm_span_feed_start, as all here) */
    const gm_span *spans; /* the spans read back to back (gm_spans_make's) */
    int nspans;         /* how many */
    int at;             /* the span read next, */
    int64_t done;       /* and its bytes already read (len: its end of line is next) */
    uint64_t left;      /* bytes still to read in all */
    int progress;       /* count the bytes for --progress */
    gm_pread_span *ps;  /* nspans + 1 entries */
    int check;          /* the key checked for a number (numwarn.h), or -1 */
    int64_t lines;      /* the lines of span `at` before its byte `done`, its line0 too */
    int64_t part;       /* where in that span a line begun in an earlier read starts,
                           or -1 */
} gm_span_feed;

/* The inputs of r as spans (spans: r->nnames + 1 entries), their bytes in *bytes
 * (an end of line added where one is missing); GM_ETEXT (declined) where one is
 * not an open regular file; GM_EIO where its last byte cannot be read. */
int gm_spans_make(struct rec_run *r, gm_span *spans, int *nspans, uint64_t *bytes,
                  gm_status *st);

/* About how many lines the spans hold, from the terminators in the first MiB of
 * the first one that has bytes (0 where none can be read). */
uint64_t gm_spans_lines_hint(const gm_span *spans, int n, char eol, uint64_t bytes);

/* A pass over the spans' bytes (bytes in all) from the start; ps: nspans + 1
 * entries of scratch. */
void gm_span_feed_start(gm_span_feed *f, struct rec_run *r, const gm_span *spans, int nspans,
                        uint64_t bytes, gm_pread_span *ps, int progress);

/* The next len bytes of the pass into dst (gpu.h's gm_read_fn): read by parallel
 * preads on the run's threads; once the last is read, every file whole must still
 * have its size (pread.h's rule). */
int gm_span_read(void *ctx, void *dst, size_t len, gm_status *st);

#endif
