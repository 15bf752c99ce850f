/*
 * recwalk.h - the passes of the records sort by ranges of keys (recwalk.c):
 * whole lines of the spans a window at a time, split into records, and the
 * buckets of their prefixes, sampled and counted.
 */
#ifndef GM_RECWALK_H
#define GM_RECWALK_H

#include "records/recspan.h"

enum { GM_MAX_BUCKETS = 4096 };

/* A pass over the spans a window of whole lines at a time, each window's lines
 * split into records (prefix and reference) on the run's threads. */
typedef struct gm_walk {
    struct rec_run *r;       /* the run walked for (gm_walk_start) */
    gm_span_feed feed;       /* the spans' bytes in order (gm_walk_start, read by gm_walk_next) */
    unsigned char *buf;      /* the window, malloc'd by the walk's owner (gm_records_ranges) */
    size_t cap, have, lines; /* buf's size, the bytes in it, those of whole lines */
    gm_recs recs;            /* the window's records */
} gm_walk;

/* A pass over the spans' bytes (bytes in all) from the start, its window buf of
 * cap bytes (the caller's, grown for a line longer); progress: count the bytes
 * for --progress. */
void gm_walk_start(struct gm_walk *w, struct rec_run *r, const gm_span *spans, int nspans,
                   uint64_t bytes, gm_pread_span *ps, int progress);
void gm_walk_free(struct gm_walk *w);

/* The next window: *got 1 with its records in w->recs, 0 once the pass is over. */
int gm_walk_next(struct gm_walk *w, int *got, gm_status *st);

/* Up to GM_MAX_BUCKETS - 1 increasing bounds (*nb) from the prefixes of lines
 * sampled over the spans' files: bucket b holds the prefixes p with b bounds at
 * or below p. */
int gm_buckets_sample(struct rec_run *r, const gm_span *spans, int nspans, uint64_t *bounds,
                      int *nb, gm_status *st);

/* One pass of w (started): each bucket's bytes and lines in bytes[0, nb] and
 * lines[0, nb] (both tasks x (nb + 1) entries, zeroed: the tasks' rows, summed into
 * the first), and *inexact where a prefix is. */
int gm_buckets_count(struct gm_walk *w, const uint64_t *bounds, int nb, int tasks,
                     uint64_t *bytes, uint64_t *lines, int *inexact, gm_status *st);

#endif
