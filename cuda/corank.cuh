/*
 * corank.cuh - the one co-rank and sequential merge of core/keys/corank.h, as overloads
 * by key type and position type for the kernels' templates, and the co-rank search
 * shared by a group of lanes of one warp (the partition kernel's, the tiled kernel's
 * blocks that search for themselves, the circular kernel's in its rings).
 */
#ifndef GM_CUDA_CORANK_CUH
#define GM_CUDA_CORANK_CUH

#include <stdint.h>

#include "../core/keys/corank.h"

/* The one co-rank and sequential merge of core/keys/corank.h, by key type K (suffix S:
 * 64-bit positions, S##_t: 32-bit ones), as overloads the templates call. */
#define GM_CORANK_OVERLOADS(K, S)                                                          \
    __host__ __device__ inline int64_t corank(int64_t k, const K *a, int64_t m, const K *b, \
                                              int64_t n, K mask)                           \
    {                                                                                      \
        return gm_corank##S(k, a, m, b, n, mask);                                          \
    }                                                                                      \
    __host__ __device__ inline void merge_seq(const K *a, int64_t m, const K *b, int64_t n, \
                                              int64_t i, int64_t j, K *c, int64_t count,   \
                                              K mask)                                      \
    {                                                                                      \
        gm_merge_seq##S(a, m, b, n, i, j, c, count, mask);                                 \
    }                                                                                      \
    /* whether probe i is past the co-rank of output k (the partition's rounds) */        \
    __host__ __device__ inline int corank_past(int64_t i, int64_t k, const K *a, const K *b, \
                                               K mask)                                     \
    {                                                                                      \
        return gm_corank_past##S(i, k, a, b, mask);                                        \
    }                                                                                      \
    /* the same with 32-bit positions, for tiles in shared memory */                      \
    __host__ __device__ inline int corank_tile(int k, const K *a, int m, const K *b, int n, \
                                               K mask)                                     \
    {                                                                                      \
        return gm_corank##S##_t(k, a, m, b, n, mask);                                      \
    }                                                                                      \
    __host__ __device__ inline int corank_past(int i, int k, const K *a, const K *b, K mask) \
    {                                                                                      \
        return gm_corank_past##S##_t(i, k, a, b, mask);                                    \
    }
GM_CORANK_OVERLOADS(int32_t, _i32)
GM_CORANK_OVERLOADS(int64_t, _i64)
GM_CORANK_OVERLOADS(uint32_t, _u32)
GM_CORANK_OVERLOADS(uint64_t, _u64)
#undef GM_CORANK_OVERLOADS

/* The search's probe and narrowing by position type: 64-bit positions in global
 * memory, 32-bit ones in shared memory (the same pieces of core/keys/corank.h). */
__host__ __device__ inline int64_t corank_probe(int64_t lo, int64_t hi, int lanes, int l)
{
    return gm_corank_probe_i64(lo, hi, lanes, l);
}
__host__ __device__ inline int corank_probe(int lo, int hi, int lanes, int l)
{
    return gm_corank_probe_i32_t(lo, hi, lanes, l);
}
__host__ __device__ inline void corank_narrow(int64_t *lo, int64_t *hi, int lanes, int f)
{
    gm_corank_narrow_i64(lo, hi, lanes, f);
}
__host__ __device__ inline void corank_narrow(int *lo, int *hi, int lanes, int f)
{
    gm_corank_narrow_i32_t(lo, hi, lanes, f);
}

/* The co-rank (relative to a) of output k of the merge of a and b, known to lie in
 * [lo, hi], searched by a group of LANES neighbouring lanes of one warp (lane: this
 * thread's place in the group); every lane of the group returns it. Positions are
 * of type I: int64_t for the partition kernel (partition.cu), which searches
 * global memory, int for the circular kernel, which searches its rings. With step
 * s > 1, the search is over positions i s alone: lo, hi and the result count steps,
 * and the probes of every search over the pair fall on the same few keys
 * (the coarse partition: partition.cu). */
template <typename K, int LANES, typename I>
__device__ inline I corank_by_group_in(const K *a, const K *b, I k, I lo, I hi, K mask, int lane,
                                       I step = 1)
{
    static_assert(LANES >= 1 && LANES <= 32 && (LANES & (LANES - 1)) == 0, "lanes: 2^i <= 32");
    const unsigned group =
        LANES == 32 ? ~0u : ((1u << LANES) - 1) << ((threadIdx.x & 31) & ~(LANES - 1));
    while (lo < hi) {
        I i = corank_probe(lo, hi, LANES, lane);
        bool past = i > hi || corank_past(i * step, k, a, b, mask);
        /* Probes rise with the lane and "past" with the probe: the lanes not past
         * are a prefix of the group. */
        int f = LANES == 1 ? !past : LANES - __popc(__ballot_sync(group, past) & group);
        corank_narrow(&lo, &hi, LANES, f);
    }
    return lo;
}

/* corank_by_group_in over the whole of the pair at lo, mid, hi of src. With
 * step > 1 the coarse co-rank: the first position of the step's worth of positions
 * that holds the co-rank, the step counted from the pair's start (see the coarse
 * partition in partition.cu). */
template <typename K, int LANES>
__device__ inline int64_t corank_by_group(const K *src, int64_t lo_, int64_t mid, int64_t hi_,
                                          int64_t k, K mask, int lane, int64_t step = 1)
{
    int64_t lo, hi;
    gm_corank_bounds_i64(k, mid - lo_, hi_ - mid, &lo, &hi);
    if (step == 1)
        return corank_by_group_in<K, LANES>(src + lo_, src + mid, k, lo, hi, mask, lane);
    /* The last whole step j s not past the co-rank; lo / step itself is never probed
     * (probes lie in (lo, hi]), so it stands for lo when lo is not a whole step. */
    int64_t j = corank_by_group_in<K, LANES>(src + lo_, src + mid, k, lo / step, hi / step, mask,
                                             lane, step);
    return j * step > lo ? j * step : lo;
}

#endif
