/*
 * kernels.cuh - the host side of every kernel, as the drivers (merge.cu, sort.cu)
 * and the benchmark call it: one launcher per kernel file, each over a pass on
 * stream s, returning GM_OK or a CUDA error status (check.cuh). Arrays passed to
 * them need 16 bytes of slack after their last key (device_buffers has it): the
 * tiled and four-way kernels copy whole 16-byte chunks.
 *
 *   partition.cu       launch_partition: a co-rank per tile, for the tiled and
 *                      circular kernels
 *   merge_basic.cu     PMPP 12.5: every thread searches global memory
 *   merge_tiled.cu     PMPP 12.6: a tile per block in shared memory (the fast one)
 *   merge_circular.cu  PMPP 12.7: resident blocks walking segments through rings
 *   merge_multi.cu     the sort's four-way pass
 *   block_sort.cu      the sort's first stage
 *   merge.cu           merge_pass (one two-way pass with a given kernel) and merges
 *   sort.cu            the sort: block sort, then its passes
 */
#ifndef GM_CUDA_KERNELS_CUH
#define GM_CUDA_KERNELS_CUH

#include <stdint.h>

#include "check.cuh"
#include "pass.cuh"
#include "policy.cuh"

/* ------------------------------------------------------------------ partition.cu */

/* Writes the co-rank of every tile's first output of pass d into coranks (d.ntiles
 * entries; coarse ones where d.coarse). */
template <typename K>
int launch_partition(const K *src, const pass_desc &d, K mask, int64_t *coranks,
                     cudaStream_t s, gm_status *st);
/* Whether a tiled pass of ntiles tiles skips the partition: its blocks search for
 * themselves (launch_merge_tiled with coranks null). */
bool tiled_searches_itself(int64_t ntiles);

/* ------------------------------------------------------------------ merge kernels */

template <typename K>
int launch_merge_basic(const K *src, K *dst, const pass_desc &d, K mask, cudaStream_t s,
                       gm_status *st);
template <typename K>
int launch_merge_tiled(const K *src, K *dst, const pass_desc &d, K mask,
                       const int64_t *coranks, cudaStream_t s, gm_status *st);
template <typename K>
int launch_merge_circular(const K *src, K *dst, const pass_desc &d, K mask,
                          const int64_t *coranks, cudaStream_t s, gm_status *st);
/* The circular kernel's "tile" is a block's whole segment: n keys spread over the
 * blocks that fit on the device at once, in whole tiles. */
template <typename K> int64_t circular_segment(int64_t n);
/* Resident blocks per multiprocessor of the circular kernel (for the probe). */
template <typename K> int circular_occupancy();

/* ------------------------------------------------------------------ sort stages */

/* Sorts every tiles<K>::SORT_TILE keys of src into dst. */
template <typename K>
int launch_block_sort(const K *src, K *dst, int64_t n, K mask, cudaStream_t s, gm_status *st);
/* Runs 4q .. 4q+3 of run_len keys of src (the last ones may be short or missing)
 * become run q of dst. splits is device scratch of multi_scratch_entries(n,
 * run_len) entries. */
template <typename K>
int launch_merge_multi(const K *src, K *dst, int64_t n, int64_t run_len, K mask,
                       int64_t *splits, cudaStream_t s, gm_status *st);
template <typename K> int64_t multi_scratch_entries(int64_t n, int64_t run_len);

/* ------------------------------------------------------------------ merge.cu */

/* Runs one two-way merge pass with the given kernel (never AUTO): fills in d's
 * tiling for that kernel (for irregular runs, host_bounds holds the run boundaries
 * on the host and d.bounds/d.tile0 point at device scratch it is copied to), then
 * the partition if the kernel needs one, then the merge kernel. */
template <typename K>
int merge_pass(gm_kernel kernel, const K *src, K *dst, pass_desc d, const int64_t *host_bounds,
               int64_t *dev_scratch, K mask, int64_t *coranks, cudaStream_t s, gm_status *st);
/* Entries of co-rank scratch any two-way pass over n keys in at most npairs_max
 * pairs may need. */
template <typename K> int64_t coranks_needed(int64_t n, int64_t npairs_max);

/* ------------------------------------------------------------------ sort.cu */

/* How a sort of n keys with kernel proceeds after the block sort: pass i merges
 * runs of run[i] keys, ways[i] (2 or 4) at a time. */
struct sort_plan {
    static constexpr int MAX_PASSES = 64; /* two-way passes of 2^64 keys */
    int passes;
    int ways[MAX_PASSES];
    int64_t run[MAX_PASSES];
};
template <typename K> sort_plan plan_sort(gm_kernel kernel, int64_t n);

/* Pass i of plan p over n keys, src to dst. */
template <typename K>
int sort_pass(const sort_plan &p, int i, gm_kernel kernel, const K *src, K *dst, int64_t n,
              K mask, int64_t *d_cor, cudaStream_t s, gm_status *st);

/* Entries of int64 scratch sort_on_device needs for n keys. */
template <typename K> int64_t sort_scratch_entries(int64_t n);

/* The whole device sort: block sort of d_keys into d_tmp, then the plan's passes;
 * *out gets the buffer holding the result, *passes the number of merge passes.
 * d_cor needs room for sort_scratch_entries(n) entries. */
template <typename K>
int sort_on_device(K *d_keys, K *d_tmp, int64_t n, K mask, gm_kernel kernel, int64_t *d_cor,
                   K **out, int *passes, cudaStream_t s, gm_status *st);

/* -u: the first of each run of equal keys of the n sorted keys, into to; *n_out
 * their number (d_count: one int64 of device scratch; cub's scratch from mem). */
struct device_buffers;
template <typename K>
int unique_on_device(const K *sorted, K *to, int64_t n, int64_t *d_count, device_buffers &mem,
                     int64_t *n_out, cudaStream_t s, gm_status *st);

#endif
