/*
 * recsort_impl.h - what the records sort's sequential core (recsort.c) shares
 * with its parallel drivers (recpar.c): the context of one sort, the two levels
 * of comparison, and the sequential MSD radix sort that sorts each bucket.
 */
#ifndef GM_RECSORT_IMPL_H
#define GM_RECSORT_IMPL_H

#include "sort/recsort.h"

enum {
    GM_RECSORT_PAR_MIN = 1 << 16, /* a parallel pass for more records than this */
    GM_RECSORT_SLICES = 64,       /* slices of a parallel pass, at most */
};

/* What the records of a call are compared by: sort's comparison after the
 * prefixes (FULL), or only the last resort of whole lines after prefixes that
 * begin with the lines' first bytes (LAST). */
typedef enum gm_sortlevel { GM_LEVEL_FULL, GM_LEVEL_LAST } gm_sortlevel;

/* Set once per sort by gm_recsort (recpar.c) and recgpu.c from the keyspec. */
typedef struct gm_sortctx {
    const gm_keyspec *ks;    /* the keys and options compared by */
    char eol;                /* the line terminator, for the lines' lengths */
    int last_resort_only; /* one key: exact, equal prefixes leave the last resort */
    int no_last_resort;   /* -s or -u: equal keys keep their input order */
} gm_sortctx;

/* A line's first eight bytes, big-endian, zero-padded (inverted by -r): their
 * order is the last resort's on those bytes. */
uint64_t gm_recsort_head8(const gm_sortctx *c, const gm_rec *r);

/* Sorts src[0, n) stably (dst: scratch of n); the result in dst when to_dst,
 * else in src. */
void gm_recsort_msd(const gm_sortctx *c, gm_sortlevel lv, gm_rec *src, gm_rec *dst, size_t n,
                    int to_dst);

/* A group of equal prefixes, in src (dst: scratch of n); the result in dst when
 * to_dst. */
void gm_recsort_ties(const gm_sortctx *c, gm_sortlevel lv, gm_rec *src, gm_rec *dst, size_t n,
                     int to_dst);

/* Sorts a[0, n) in place, without a scratch array (introsort): for orders where
 * equal records are equal lines, when no scratch of n can be had. */
void gm_recsort_inplace(const gm_sortctx *c, gm_sortlevel lv, gm_rec *a, size_t n);

/* The parallel drivers (recpar.c). stable: with a scratch array of n, equal
 * records keep their order. in place: no scratch of n (each bucket is sorted in
 * a scratch of its own size, the threads' together within room bytes where
 * they can be), for orders where equal records are equal lines.
 * Return GM_OK or GM_ENOMEM. */
void gm_recsort_par_stable(const gm_sortctx *c, gm_rec *a, gm_rec *scratch, size_t n,
                           int nthreads);
int gm_recsort_par_inplace(const gm_sortctx *c, gm_rec *a, size_t n, int nthreads,
                           size_t room, gm_status *st);

#endif
