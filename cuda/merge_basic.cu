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
 * end. Reads stay uncoalesced: that is this kernel's lesson. With values
 * (value.cuh), each output's value goes beside its key into a staging shadow.
 */
#include "block.cuh"
#include "kernels.cuh"

/* The sequential merge of PMPP 12.2 with values: outputs [i + j, i + j + count) of
 * the stable merge of a and b (m and n keys, values va and vb), from a[i] and b[j],
 * to c and vc; the keys-only merge is core/keys/corank.h's merge_seq, which this follows
 * step for step. */
template <typename K, typename V>
__device__ inline void merge_seq_values(const K *a, const V *va, int64_t m, const K *b,
                                        const V *vb, int64_t n, int64_t i, int64_t j, K *c,
                                        V *vc, int64_t count, K mask)
{
    for (int64_t t = 0; t < count; t++) {
        bool take_b = i >= m || (j < n && (K)(b[j] ^ mask) < (K)(a[i] ^ mask));
        c[t] = take_b ? b[j] : a[i];
        vc[t] = take_b ? vb[j] : va[i];
        j += take_b;
        i += !take_b;
    }
}

/* One tile: THREADS threads merge ITEMS keys each into stage (their values into the
 * shadow), then store. */
template <typename K, typename V>
__global__ void __launch_bounds__(shape<K>::BASIC_THREADS)
merge_basic_kernel(const K *__restrict__ src, K *__restrict__ dst, pass_desc d, K mask,
                   const V *__restrict__ vsrc, V *__restrict__ vdst)
{
    constexpr int THREADS = shape<K>::BASIC_THREADS, ITEMS = shape<K>::BASIC_ITEMS;
    __shared__ __align__(16) K stage[tiles<K>::BASIC_TILE];
    V *vstage = value_shadow<V>();
    gm_after_previous();
    tile_place t = place_tile(d, blockIdx.x);
    const K *a = src + t.lo, *b = src + t.mid;
    int64_t m = t.mid - t.lo, n = t.hi - t.mid;

    int64_t k = t.k0 + (int64_t)threadIdx.x * ITEMS; /* this thread's first output */
    if (k < t.k1) {
        int64_t i = corank(k, a, m, b, n, mask);
        int64_t count = t.k1 - k < ITEMS ? t.k1 - k : ITEMS;
        if constexpr (has_value<V>)
            merge_seq_values(a, vsrc + t.lo, m, b, vsrc + t.mid, n, i, k - i,
                             stage + threadIdx.x * ITEMS, vstage + threadIdx.x * ITEMS, count,
                             mask);
        else
            merge_seq(a, m, b, n, i, k - i, stage + threadIdx.x * ITEMS, count, mask);
    }
    __syncthreads();
    store_tile<K, THREADS>(dst + t.lo + t.k0, stage, t.k1 - t.k0);
    if constexpr (has_value<V>)
        store_tile<V, THREADS>(vdst + t.lo + t.k0, vstage, t.k1 - t.k0);
}

template <typename K, typename V>
int launch_merge_basic(const K *src, K *dst, const pass_desc &d, K mask, cudaStream_t s,
                       gm_status *st, const V *vsrc, V *vdst)
{
    if (d.ntiles == 0)
        return GM_OK;
    GM_LAUNCH("merge_basic_kernel", st, false, merge_basic_kernel<K, V>, (unsigned)d.ntiles,
              shape<K>::BASIC_THREADS, value_bytes<V>(tiles<K>::BASIC_TILE), s, src, dst, d,
              mask, vsrc, vdst);
    return GM_OK;
}

#define GM_INSTANTIATE(K, V)                                                               \
    template int launch_merge_basic<K, V>(const K *, K *, const pass_desc &, K, cudaStream_t, \
                                          gm_status *, const V *, V *);
GM_FOR_KEYS_AND_PAIRS(GM_INSTANTIATE)
