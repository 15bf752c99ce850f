/*
 * kernels.cuh - the host side of every kernel, as the drivers (merge.cu, sort.cu)
 * and the benchmark call it: one launcher per kernel file, each over a pass on
 * stream s, returning GM_OK or a CUDA error status (check.cuh). Arrays passed to
 * them need 16 bytes of slack after their last key (device_buffers has it): the
 * tiled and four-way kernels copy whole 16-byte chunks.
 *
 * Key-value pairs (value.cuh): every launcher takes the values last, vsrc and vdst
 * (one value per key, the same positions, arrays of their own and with no slack),
 * with V = no_value and null pointers for keys only (the default). Merges of pairs
 * are stable (ties take a's first), and so is the sort of pairs. Keys-only kernels
 * exist for int32 and int64 keys, pairs for int32, int64, uint32 and uint64 keys
 * with uint32 values (GM_FOR_KEYS_AND_PAIRS); the partition and the host helpers
 * for all four key types (GM_FOR_KEYS).
 *
 *   partition.cu       launch_partition: a co-rank per tile, for the tiled and
 *                      circular kernels
 *   merge_basic.cu     PMPP 12.5: every thread searches global memory
 *   merge_tiled.cu     PMPP 12.6: a tile per block in shared memory (the fast one)
 *   merge_circular.cu  PMPP 12.7: resident blocks walking segments through rings
 *   merge_multi.cu     the sort's four-way pass
 *   block_sort.cu      the sort's first stage
 *   merge.cu           merge_pass (one two-way pass with a given kernel) and merges,
 *                      merge_pairs_on_device (two runs of key-value pairs)
 *   sort.cu            the sort: block sort, then its passes; sort_pairs_on_device
 */
#ifndef GM_CUDA_KERNELS_CUH
#define GM_CUDA_KERNELS_CUH

#include <stdint.h>

#include "check.cuh"
#include "pass.cuh"
#include "policy.cuh"
#include "value.cuh"

/* The instantiations: X(K) for every key type, X(K, V) for every keys-only and
 * key-value kernel. */
#define GM_FOR_KEYS(X) X(int32_t) X(int64_t) X(uint32_t) X(uint64_t)
#define GM_FOR_KEYS_AND_PAIRS(X)                                                           \
    X(int32_t, no_value) X(int64_t, no_value) X(int32_t, uint32_t) X(int64_t, uint32_t)    \
    X(uint32_t, uint32_t) X(uint64_t, uint32_t)

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

template <typename K, typename V = no_value>
int launch_merge_basic(const K *src, K *dst, const pass_desc &d, K mask, cudaStream_t s,
                       gm_status *st, const V *vsrc = nullptr, V *vdst = nullptr);
template <typename K, typename V = no_value>
int launch_merge_tiled(const K *src, K *dst, const pass_desc &d, K mask,
                       const int64_t *coranks, cudaStream_t s, gm_status *st,
                       const V *vsrc = nullptr, V *vdst = nullptr);
template <typename K, typename V = no_value>
int launch_merge_circular(const K *src, K *dst, const pass_desc &d, K mask,
                          const int64_t *coranks, cudaStream_t s, gm_status *st,
                          const V *vsrc = nullptr, V *vdst = nullptr);
/* The circular kernel's "tile" is a block's whole segment: n keys spread over the
 * blocks that fit on the device at once, in whole tiles. */
template <typename K> int64_t circular_segment(int64_t n);

/* ------------------------------------------------------------------ sort stages */

/* Sorts every tiles<K>::SORT_TILE keys of src into dst (stably, with values). */
template <typename K, typename V = no_value>
int launch_block_sort(const K *src, K *dst, int64_t n, K mask, cudaStream_t s, gm_status *st,
                      const V *vsrc = nullptr, V *vdst = nullptr);
/* Runs 4q .. 4q+3 of run_len keys of src (the last ones may be short or missing)
 * become run q of dst. splits is device scratch of multi_scratch_entries(n,
 * run_len) entries. */
template <typename K, typename V = no_value>
int launch_merge_multi(const K *src, K *dst, int64_t n, int64_t run_len, K mask,
                       int64_t *splits, cudaStream_t s, gm_status *st, const V *vsrc = nullptr,
                       V *vdst = nullptr);
template <typename K> int64_t multi_scratch_entries(int64_t n, int64_t run_len);

/* ------------------------------------------------------------------ merge.cu */

/* Runs one two-way merge pass with the given kernel (never AUTO): fills in d's
 * tiling for that kernel (for irregular runs, host_bounds holds the run boundaries
 * on the host and d.bounds/d.tile0 point at device scratch it is copied to), then
 * the partition if the kernel needs one, then the merge kernel. */
template <typename K, typename V = no_value>
int merge_pass(gm_kernel kernel, const K *src, K *dst, pass_desc d, const int64_t *host_bounds,
               int64_t *dev_scratch, K mask, int64_t *coranks, cudaStream_t s, gm_status *st,
               const V *vsrc = nullptr, V *vdst = nullptr);
/* Entries of co-rank scratch any two-way pass over n keys in at most npairs_max
 * pairs may need. */
template <typename K> int64_t coranks_needed(int64_t n, int64_t npairs_max);

/* The merge of two sorted runs of pairs: keys[0, m) with keys[m, m + n) (and their
 * values vals[0, m), vals[m, m + n)) into kout and vout, stable (ties: the first
 * run's first), ascending for mask 0 and descending for all ones; kernel AUTO
 * picks as gm_gpu_merge does. d_cor: device scratch of coranks_needed<K>(m + n, 1)
 * entries. keys and kout need the 16 bytes of slack; nothing is read or written
 * past the pairs. Enqueued on s (not waited for); returns GM_OK or a CUDA status. */
template <typename K, typename V>
int merge_pairs_on_device(const K *keys, const V *vals, int64_t m, int64_t n, K *kout, V *vout,
                          K mask, gm_kernel kernel, int64_t *d_cor, cudaStream_t s,
                          gm_status *st);

/* ------------------------------------------------------------------ sort.cu */

/* How a sort of n keys with kernel proceeds after the block sort: pass i merges
 * runs of run[i] keys, ways[i] (2 or 4) at a time. */
struct sort_plan {
    static constexpr int MAX_PASSES = 64; /* two-way passes of 2^64 keys */
    int passes;              /* merge passes after the block sort (plan_sort, sort.cu) */
    int ways[MAX_PASSES];    /* pass i's runs merged at a time: 2 or 4 (plan_sort) */
    int64_t run[MAX_PASSES]; /* pass i's run length, in keys (plan_sort) */
};
template <typename K> sort_plan plan_sort(gm_kernel kernel, int64_t n);

/* Pass i of plan p over n keys, src to dst. */
template <typename K, typename V = no_value>
int sort_pass(const sort_plan &p, int i, gm_kernel kernel, const K *src, K *dst, int64_t n,
              K mask, int64_t *d_cor, cudaStream_t s, gm_status *st, const V *vsrc = nullptr,
              V *vdst = nullptr);

/* Entries of int64 scratch sort_on_device needs for n keys. */
template <typename K> int64_t sort_scratch_entries(int64_t n);

/* The whole device sort: block sort of d_keys into d_tmp, then the plan's passes;
 * *out gets the buffer holding the result, *passes the number of merge passes.
 * d_cor needs room for sort_scratch_entries(n) entries. */
template <typename K>
int sort_on_device(K *d_keys, K *d_tmp, int64_t n, K mask, gm_kernel kernel, int64_t *d_cor,
                   K **out, int *passes, cudaStream_t s, gm_status *st);

/*
 * The device sort of pairs: n keys d_keys[0, n) with their values d_vals[0, n),
 * sorted by key, stably (equal keys keep their input order, and their values with
 * them), ascending for mask 0 and descending for all ones (K)-1. The work swaps
 * between (d_keys, d_vals) and (d_ktmp, d_vtmp): *kout and *vout get the pair of
 * buffers holding the result (both of d_keys/d_vals or both of d_ktmp/d_vtmp), the
 * others are left as scratch. kernel: the two-way passes' kernel (AUTO: tiled, as
 * gm_gpu_sort); d_cor: device scratch of sort_scratch_entries<K>(n) int64 entries.
 * d_keys and d_ktmp need the 16 bytes of slack past their last key (device_buffers
 * has it); the value arrays need none. Enqueued on s, not waited for; returns GM_OK
 * or a CUDA status (an error says which kernel). K: int32, int64, uint32 or uint64
 * (compared as such); V: uint32_t.
 */
template <typename K, typename V>
int sort_pairs_on_device(K *d_keys, V *d_vals, K *d_ktmp, V *d_vtmp, int64_t n, K mask,
                         gm_kernel kernel, int64_t *d_cor, K **kout, V **vout, cudaStream_t s,
                         gm_status *st);

/* -u: the first of each run of equal keys of the n sorted keys, into to; *n_out
 * their number (d_count: one int64 of device scratch; cub's scratch from mem). */
struct device_buffers;
template <typename K>
int unique_on_device(const K *sorted, K *to, int64_t n, int64_t *d_count, device_buffers &mem,
                     int64_t *n_out, cudaStream_t s, gm_status *st);

#endif
