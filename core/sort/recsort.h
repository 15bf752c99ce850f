/*
 * recsort.h - the in-memory sort of records (lines.h) by a gm_keyspec, stable,
 * on all cores, and the comparison of two records that every records stage uses.
 */
#ifndef GM_RECSORT_H
#define GM_RECSORT_H

#include "read/lines.h"

/* The order of two records: prefixes first, then gm_line_cmp (from the second
 * key when both prefixes are exact). Returns <0, 0 or >0. */
int gm_rec_cmp(const gm_keyspec *ks, const gm_rec *a, const gm_rec *b);

/* Sorts the n records of a by ks on nthreads threads. Under -s and -u stably,
 * with a scratch array of n records; otherwise equal records are equal lines and
 * their order is free: with the scratch array too on four threads or more where
 * room (the bytes of scratch the budget allows; SIZE_MAX: any) holds it, else in
 * place, with a scratch of a bucket's size per thread. The records' prefixes are
 * not kept (the sort reuses them), except under -s and -u. Returns GM_OK or
 * GM_ENOMEM. */
int gm_recsort(const gm_keyspec *ks, gm_rec *a, size_t n, int nthreads, size_t room,
               gm_status *st);

/* For the tests only: the most records an in-place sort hands to one task (0:
 * the default), so that small inputs take its parallel distribution. */
void gm_recsort_test_task_max(size_t n);

/* Index of the first record of a[0, n) that is out of order after the one before
 * it (prev before a[0] when not NULL); strict: an equal key is out of order too
 * (-u). n when none is. Compared on nthreads threads. */
size_t gm_rec_first_disorder(const gm_keyspec *ks, const gm_rec *prev, const gm_rec *a,
                             size_t n, int strict, int nthreads);

#endif
