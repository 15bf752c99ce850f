/*
 * recsteps.cuh - the steps of the records sort on the device that records.cu
 * defines and both of its entries chain: the chunk sort whose records go back to
 * the host (records.cu's gm_gpu_sort_records) and the sort that keeps the text
 * on the device and sends back sorted lines (resident.cu's gm_gpu_sort_lines).
 */
#ifndef GM_CUDA_RECSTEPS_CUH
#define GM_CUDA_RECSTEPS_CUH

#include "gpu.h"
#include "text.cuh"

constexpr int REC_THREADS = 256;

/* The device buffers of one sort: the terminators' offsets, the pairs' two key
 * and two value halves, the prefixes by line (head8), each line's exactness, the
 * sorted records and their tie flags; the key specification, the map from text
 * offsets to host addresses (bstart, hbase) and the inexact flag. */
struct rec_buffers {
    gm_keyspec *ks = nullptr; /* the key specification, on the device (rec_alloc, rec_tables) */
    /* the terminators' offsets, the sort's keys in two buffers (cub's ping-pong), the
     * prefixes by line (head8), the sorted records (rec_alloc; the kernels fill them) */
    u64 *ends = nullptr, *k0 = nullptr, *k1 = nullptr, *pfx = nullptr, *recs = nullptr;
    u64 *bstart = nullptr, *hbase = nullptr; /* text offset to host address (rec_tables) */
    uint32_t *v0 = nullptr, *v1 = nullptr;  /* the sort's values, line indices (rec_alloc) */
    unsigned char *exact = nullptr, *tied = nullptr; /* exactness by line, records' ties */
    int *inexact = nullptr;                 /* 1: some prefix is not exact (rec_prefix_kernel) */
};

/* Blocks of REC_THREADS for a grid-stride loop over n items. */
unsigned rec_grid(u64 n);

/* The largest scratch of cub's calls for n lines in text_len bytes. */
int rec_cub_bytes(int64_t n, u64 text_len, size_t *bytes, gm_status *st);

/* The terminators in the job's text into *n (counted on the device). */
int rec_count_lines(text_job &j, char eol, u64 *n, gm_status *st);

/* The bytes rec_alloc takes for n lines in nblocks blocks. */
size_t rec_bytes(u64 n, int head8, int nblocks);

/* Allocates b for job->lines lines and job->nblocks blocks. */
int rec_alloc(text_job &j, const gm_gpu_rec_job *job, int head8, rec_buffers *b,
              gm_status *st);

/* The tables beside the text, on the job's stream: the key specification, the
 * map of text offsets to host addresses (block i holds offsets [bstart[i],
 * bstart[i + 1]) and lies at hbase[i]; both kept alive by the caller until the
 * stream has taken them) and the inexact flag, cleared. */
int rec_tables(text_job &j, rec_buffers *b, const gm_keyspec *ks, const u64 *bstart,
               const u64 *hbase, int nblocks, gm_status *st);

/* The number of set flags in tied[0, n) into *ties (d_count: one device word). */
int rec_count_ties(text_job &j, const unsigned char *tied, u64 n, u64 *d_count, u64 *ties,
                   gm_status *st);

/* On the job's stream, with the text in j.text and b's tables set: the lines
 * found, their prefixes made, the pairs sorted (twice with head8), the records
 * and tie flags built and, with head8, the refinement rounds run (*rounds). The
 * sorted line indices are then in the current half of b's values: v0, or v1
 * where *in_v1 says so. */
int rec_kernels(text_job &j, const gm_gpu_rec_job *job, int head8, rec_buffers *b,
                int *rounds, int *in_v1, gm_status *st);

#endif
