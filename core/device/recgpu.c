/*
 * recgpu.c - the records path's sort of one chunk on the GPU (recgpu.h): the
 * chunk's blocks go to the device (cuda/records.cu), which finds the lines, makes
 * their prefixes with the CPU's own code (keyprefix.h) and sorts them stably by
 * prefix (and, where one key and the last resort decide, by the lines' first
 * eight bytes too); the records come back in that order with a flag on each one
 * whose sort key equals the one before. Each run of equal sort keys is then put
 * in sort's order here by the CPU sort's own tie routine (recsort.c's
 * gm_recsort_ties: the last resort's radix sort, or a stable merge sort with
 * sort's comparison), runs spread over all threads and a run too large to be one
 * task sorted alone by the parallel stable sort, so the result is the records
 * that gm_recsort would have made.
 */
#define _GNU_SOURCE
#include "device/recgpu.h"

#include <stdlib.h>
#include <string.h>

#include "sort/recsort_impl.h"
#include "base/util.h"

/* A run of equal sort keys, sorted after the parallel pass. */
struct big_run {
    size_t at, n; /* the run is records [at, at + n) of a (ties_slice finds it) */
};

enum { BIG_PER_SLICE = 4 };

struct ties_job {
    const gm_sortctx *c;        /* the order the ties are sorted by (gm_recgpu_ties') */
    gm_rec *a;                  /* the records the GPU sorted, sorted further in place */
    const unsigned char *tied;  /* tied[i]: record i's sort key equals record i - 1's */
    size_t n, big;              /* records in a; a run longer than big waits in bigs */
    int slices;                 /* ties_slice's tasks, chosen by gm_recgpu_ties */
    struct big_run bigs[GM_RECSORT_SLICES][BIG_PER_SLICE]; /* slice s's big runs (ties_slice) */
    int nbig[GM_RECSORT_SLICES]; /* entries of bigs[s], set by ties_slice */
    int failed;                 /* a slice ran out of memory (set atomically by ties_slice) */
};

/* The runs that begin in slice s: a run begins where tied is 0 and goes on over
 * the records tied to the one before. */
static void ties_slice(void *ctx, int s)
{
    struct ties_job *j = ctx;
    size_t lo = j->n * (size_t)s / (size_t)j->slices;
    size_t hi = j->n * (size_t)(s + 1) / (size_t)j->slices;
    gm_rec *scratch = NULL;
    size_t cap = 0;
    j->nbig[s] = 0;
    size_t i = lo;
    while (i < hi && j->tied[i])
        i++; /* inside a run that began before the slice */
    while (i < hi) {
        size_t e = i + 1;
        while (e < j->n && j->tied[e])
            e++;
        size_t k = e - i;
        if (k > j->big && j->nbig[s] < BIG_PER_SLICE) {
            j->bigs[s][j->nbig[s]++] = (struct big_run){ i, k };
        } else if (k > 1) {
            if (k > cap) {
                free(scratch);
                scratch = malloc(k * sizeof *scratch);
                cap = scratch ? k : 0;
                if (!scratch) {
                    __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
                    return;
                }
            }
            gm_recsort_ties(j->c, GM_LEVEL_FULL, j->a + i, scratch, k, 0);
        }
        i = e;
    }
    free(scratch);
}

int gm_recgpu_ties(const gm_keyspec *ks, gm_rec *a, const unsigned char *tied, size_t n,
                   int nthreads, gm_status *st)
{
    gm_sortctx c = { ks, ks->eol, ks->nkeys == 1, ks->stable || ks->unique };
    struct ties_job *j = calloc(1, sizeof *j);
    if (!j)
        return gm_fail(st, GM_ENOMEM, "out of memory sorting");
    j->c = &c;
    j->a = a;
    j->tied = tied;
    j->n = n;
    j->slices = n < GM_RECSORT_PAR_MIN || nthreads < 2 ? 1
                : nthreads * 4 < GM_RECSORT_SLICES ? nthreads * 4 : GM_RECSORT_SLICES;
    /* a run larger than this is sorted alone, on all threads */
    j->big = nthreads < 2 ? SIZE_MAX : n / (size_t)(2 * nthreads) > GM_RECSORT_PAR_MIN
                                           ? n / (size_t)(2 * nthreads) : GM_RECSORT_PAR_MIN;
    gm_parallel_for(nthreads, j->slices, ties_slice, j);
    int rc = j->failed ? gm_fail(st, GM_ENOMEM, "out of memory sorting") : GM_OK;
    for (int s = 0; s < j->slices && !rc; s++)
        for (int b = 0; b < j->nbig[s] && !rc; b++) {
            struct big_run r = j->bigs[s][b];
            gm_rec *scratch = gm_buf_alloc(r.n * sizeof *scratch, "sorting", st);
            if (!scratch) {
                rc = GM_ENOMEM;
                break;
            }
            gm_recsort_par_stable(&c, a + r.at, scratch, r.n, nthreads);
            gm_buf_free(scratch);
        }
    free(j);
    return rc;
}

int gm_recgpu_sort(gm_recgpu_job *job, gm_recs *out, gm_status *st)
{
    size_t n = job->lines;
    job->device = job->ties = 0;
    memset(&job->times, 0, sizeof job->times);
    out->n = 0;
    int rc = gm_recs_reserve(out, n, st);
    if (rc)
        return rc;
    const unsigned char **text = malloc((size_t)job->nblocks * sizeof *text + 1);
    size_t *len = malloc((size_t)job->nblocks * sizeof *len + 1);
    unsigned char *tied = malloc(n ? n : 1);
    if (!text || !len || !tied) {
        free(text);
        free(len);
        free(tied);
        return gm_fail(st, GM_ENOMEM, "out of memory sorting");
    }
    for (int i = 0; i < job->nblocks; i++) {
        text[i] = job->blocks[i]->data;
        len[i] = job->blocks[i]->len;
    }
    const gm_keyspec *ks = job->ks;
    gm_gpu_rec_job g = {
        .ks = ks, .text = text, .len = len, .nblocks = job->nblocks, .lines = n,
        .refine = ks->nkeys == 1 && !ks->stable && !ks->unique,
        .copy = job->copy, .copy_ctx = job->copy_ctx,
        .recs = (uint64_t *)out->r, .tied = tied,
    };
    double a = gm_now();
    rc = gm_gpu_sort_records(&g, &job->times, st);
    double b = gm_now();
    job->device = b - a;
    if (!rc) {
        out->n = n;
        rc = gm_recgpu_ties(ks, out->r, tied, n, job->nthreads, st);
        job->ties = gm_now() - b;
    }
    free(text);
    free(len);
    free(tied);
    return rc;
}
