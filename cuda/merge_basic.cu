/*
 * merge_basic.cu - the basic merge kernel of PMPP section 12.5: every thread finds
 * its own co-rank in global memory and merges its slice of the output straight
 * from global memory.
 *
 * Two fixes over the book's listing: the slice bounds use 64-bit arithmetic and a
 * real ceiling (the book's ceil((m+n)/p) divides integers first), and the output is
 * not written with a stride of ITEMS between neighbouring threads: each thread
 * merges into a shared-memory staging tile, and the block then stores the tile with
 * consecutive threads writing consecutive keys. Each thread searches only for its
 * start (the book searches for both ends); the count of keys it merges bounds the
 * end. Reads stay uncoalesced: that is this kernel's lesson.
 */
#include "block.cuh"
#include "kernels.cuh"

/* One tile: THREADS threads merge ITEMS keys each into stage, then store. */
template <typename K>
__global__ void __launch_bounds__(shape<K>::BASIC_THREADS)
merge_basic_kernel(const K *__restrict__ src, K *__restrict__ dst, pass_desc d, K mask)
{
    constexpr int THREADS = shape<K>::BASIC_THREADS, ITEMS = shape<K>::BASIC_ITEMS;
    __shared__ __align__(16) K stage[tiles<K>::BASIC_TILE];
    gm_after_previous();
    tile_place t = place_tile(d, blockIdx.x);
    const K *a = src + t.lo, *b = src + t.mid;
    int64_t m = t.mid - t.lo, n = t.hi - t.mid;

    int64_t k = t.k0 + (int64_t)threadIdx.x * ITEMS; /* this thread's first output */
    if (k < t.k1) {
        int64_t i = corank(k, a, m, b, n, mask);
        int64_t count = t.k1 - k < ITEMS ? t.k1 - k : ITEMS;
        merge_seq(a, m, b, n, i, k - i, stage + threadIdx.x * ITEMS, count, mask);
    }
    __syncthreads();
    store_tile<K, THREADS>(dst + t.lo + t.k0, stage, t.k1 - t.k0);
}

template <typename K>
int launch_merge_basic(const K *src, K *dst, const pass_desc &d, K mask, cudaStream_t s,
                       gm_status *st)
{
    if (d.ntiles == 0)
        return GM_OK;
    GM_LAUNCH("merge_basic_kernel", st, false, merge_basic_kernel<K>, (unsigned)d.ntiles,
              shape<K>::BASIC_THREADS, 0, s, src, dst, d, mask);
    return GM_OK;
}

template int launch_merge_basic<int32_t>(const int32_t *, int32_t *, const pass_desc &,
                                         int32_t, cudaStream_t, gm_status *);
template int launch_merge_basic<int64_t>(const int64_t *, int64_t *, const pass_desc &,
                                         int64_t, cudaStream_t, gm_status *);
