/*
 * recsink.h - where the records path's lines go: the output (a gm_writer, through
 * gm_writer_put_text) or a temporary run (a descriptor). Lines are gathered into
 * a buffer with their terminators, on all cores for a sorted array, one by one
 * for a merge, and -u drops every line whose keys equal the last line's kept. A
 * full buffer is written on a thread of its own while the next one fills.
 */
#ifndef GM_RECSINK_H
#define GM_RECSINK_H

#include "read/lines.h"
#include "write/output.h"

typedef struct gm_recsink {
    const gm_keyspec *ks;  /* the keys -u compares and the line terminator (gm_recsink_init) */
    gm_writer *w;          /* the output, or NULL: */
    int fd;                /* a run's descriptor */
    const char *shown;     /* its name in messages */
    int unique;            /* -u */
    int nthreads;          /* threads gathering a sorted array's lines (gm_recsink_init) */
    unsigned char *buf;    /* filling */
    size_t len, cap;       /* buf's bytes filled and allocated (gm_recsink_put, grow, hand_off) */
    unsigned char *spare;  /* being written, or free */
    size_t spare_cap;      /* spare's bytes allocated (hand_off swaps it with cap) */
    struct gm_bgwrite *writer; /* the thread writing spare (hand_off) */
    /* -u: the last line kept, in buf or (after a flush) in last */
    int have_last;
    gm_rec last_rec;
    unsigned char *last;
    size_t last_cap;
    int64_t lines, bytes;  /* put so far */
} gm_recsink;

/* A sink of about cap bytes of buffer into the writer w, or into fd when w is
 * NULL. Can't fail (the buffer comes with the first line). */
void gm_recsink_init(gm_recsink *k, const gm_keyspec *ks, gm_writer *w, int fd,
                     const char *shown, int unique, int nthreads, size_t cap);

/* Puts one line. Returns GM_OK, or an error of the writer (GM_EPIPE, GM_EIO),
 * GM_EIO ("write failed: FILE: REASON") or GM_ENOMEM. */
int gm_recsink_put(gm_recsink *k, const gm_rec *r, gm_status *st);

/* Puts n records in order, gathered on all cores. Returns as gm_recsink_put. */
int gm_recsink_put_all(gm_recsink *k, const gm_rec *r, size_t n, gm_status *st);

/* Puts len bytes of whole lines, already in order and -u's choice made (the
 * caller adds them to lines). Returns as gm_recsink_put. */
int gm_recsink_put_text(gm_recsink *k, const char *text, size_t len, gm_status *st);

/* About bytes will be put into the output next: their space is reserved ahead
 * (gm_writer_reserve_ahead). Nothing for a run. */
void gm_recsink_reserve(gm_recsink *k, uint64_t bytes);

/* Writes what is buffered and waits until everything put is written. Returns
 * as gm_recsink_put. */
int gm_recsink_flush(gm_recsink *k, gm_status *st);

void gm_recsink_free(gm_recsink *k);

#endif
