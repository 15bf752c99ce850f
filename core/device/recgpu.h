/*
 * recgpu.h - the records path's sort of one chunk on the GPU (recgpu.c): the
 * chunk's blocks of lines to the device, the records back in sort's order.
 */
#ifndef GM_RECGPU_H
#define GM_RECGPU_H

#include "device/gpu.h"
#include "read/lines.h"

typedef struct gm_recgpu_job {
    const gm_keyspec *ks;          /* its first key not ordered by -g */
    gm_lines_block *const *blocks; /* the chunk, held by the caller */
    int nblocks;
    size_t lines;                  /* the blocks' lines (gm_lines_count) */
    int nthreads;
    gm_copy_fn copy;               /* the copy into the staging ring; NULL: memcpy */
    void *copy_ctx;
    /* out */
    gm_gpu_times times;            /* the device's copies and kernels */
    double device, ties;           /* seconds in the device's call, in the ties here */
} gm_recgpu_job;

/* Sorts the job's lines into out (emptied first; room made for every line): the
 * records gm_recsort makes of them, in the same order. Returns GM_OK; GM_ETEXT
 * when the device declines the chunk (too large for its memory), before anything
 * else, so that the caller sorts it on the CPU; GM_ENOMEM; or the device's error
 * (GM_ENODEV, GM_EDEVMEM, GM_ECUDA). */
int gm_recgpu_sort(gm_recgpu_job *job, gm_recs *out, gm_status *st);

/* The host's half, for the tests too: puts every run of tied records of a[0, n)
 * (a run begins where tied is 0 and goes on over the records tied to the one
 * before; tied[0] is 0) in sort's order on nthreads threads. The records must
 * be ordered by their sort keys (gm_gpu_rec_job's) and, under -s or -u, within
 * a run by their lines' order in the input. Returns GM_OK or GM_ENOMEM. */
int gm_recgpu_ties(const gm_keyspec *ks, gm_rec *a, const unsigned char *tied, size_t n,
                   int nthreads, gm_status *st);

#endif
