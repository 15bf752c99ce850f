/*
 * merge_circular.cu - the circular-buffer merge kernel of PMPP section 12.7.
 *
 * Each block owns a long segment of one pair's output (a few per multiprocessor,
 * from the partition kernel at segment granularity) and walks it one tile at a
 * time. The keys of A and B that are loaded but not yet consumed stay in shared
 * memory, in a ring per input, so every key is loaded from global memory once: after
 * a tile, only as many keys as it consumed are loaded to refill each ring. As the
 * book's translator notes, how far each input has been *loaded* must be tracked
 * apart from how far it has been *consumed*; here a_loaded and a_cur (and b_...).
 *
 * The ring is stored twice over (key g at g mod R and at g mod R + R), so the
 * unconsumed window, at most R keys starting anywhere, is always one contiguous
 * array: the one co-rank and sequential merge of core/corank.h run on it unchanged,
 * where the book needs circular variants of both.
 */
#include "common.cuh"

/* Loads keys [from, to) of x into the doubled ring, ITEMS loads in flight per
 * thread before any is stored. */
template <typename K>
__device__ inline void fill_ring(K *ring, const K *__restrict__ x, int64_t from, int64_t to)
{
    constexpr int THREADS = tuning<K>::THREADS, ITEMS = tuning<K>::ITEMS;
    constexpr int R = tuning<K>::RING;
    for (int64_t base = from; base < to; base += THREADS * ITEMS) {
        K v[ITEMS];
#pragma unroll
        for (int u = 0; u < ITEMS; u++) {
            int64_t g = base + threadIdx.x + u * THREADS;
            v[u] = g < to ? x[g] : K(0);
        }
#pragma unroll
        for (int u = 0; u < ITEMS; u++) {
            int64_t g = base + threadIdx.x + u * THREADS;
            if (g < to) {
                int r = (int)(g & (R - 1));
                ring[r] = v[u];
                ring[r + R] = v[u];
            }
        }
    }
}

template <typename K> constexpr size_t circular_smem_bytes()
{
    return (4 * (size_t)tuning<K>::RING + tuning<K>::TILE) * sizeof(K);
}

template <typename K>
__global__ void __launch_bounds__(tuning<K>::THREADS)
merge_circular_kernel(const K *__restrict__ src, K *__restrict__ dst, pass_desc d,
                      const int64_t *__restrict__ coranks, K mask)
{
    constexpr int THREADS = tuning<K>::THREADS, ITEMS = tuning<K>::ITEMS;
    constexpr int TILE = tuning<K>::TILE, R = tuning<K>::RING;
    static_assert((R & (R - 1)) == 0 && R >= TILE, "the ring is a power of two >= TILE");
    extern __shared__ __align__(16) unsigned char smem[];
    K *ring_a = (K *)smem, *ring_b = ring_a + 2 * R, *stage = ring_b + 2 * R;
    gm_after_previous();

    tile_place t = place_tile(d, blockIdx.x); /* t.k0..t.k1: this block's segment */
    const K *a = src + t.lo, *b = src + t.mid;
    int64_t a_cur = coranks[t.g];
    int64_t a_end = t.last_of_pair ? t.mid - t.lo : coranks[t.g + 1];
    int64_t b_cur = t.k0 - a_cur, b_end = t.k1 - a_end;
    int64_t a_loaded = a_cur, b_loaded = b_cur;

    for (int64_t c = t.k0; c < t.k1; c += TILE) {
        int64_t cnt = t.k1 - c < TILE ? t.k1 - c : TILE;
        /* Refill each ring up to R unconsumed keys (or the end of the slice). */
        int64_t a_fill = a_cur + R < a_end ? a_cur + R : a_end;
        int64_t b_fill = b_cur + R < b_end ? b_cur + R : b_end;
        fill_ring(ring_a, a, a_loaded, a_fill);
        fill_ring(ring_b, b, b_loaded, b_fill);
        a_loaded = a_fill;
        b_loaded = b_fill;
        __syncthreads();

        /* The windows: contiguous thanks to the doubled ring. */
        const K *wa = ring_a + (a_cur & (R - 1)), *wb = ring_b + (b_cur & (R - 1));
        int la = (int)(a_loaded - a_cur), lb = (int)(b_loaded - b_cur);
        /* This tile is the merge of the first ta keys of a's window and the first
         * cnt - ta of b's (every thread finds ta: the same reads, broadcast). */
        int ta = corank_tile((int)cnt, wa, la, wb, lb, mask);
        /* Both windows as offsets into smem, where ring_b follows ring_a: reads past
         * a's window land in ring_b, and past b's (at most R - 1 + R + 1 keys from
         * ring_b) stay inside it, none of it written during the merge. */
        int a_at = (int)(wa - ring_a), b_at = (int)(wb - ring_a);
        if (mask == 0)
            merge_tile<K, ITEMS, false>(ring_a, a_at, ta, b_at, (int)cnt - ta, stage);
        else
            merge_tile<K, ITEMS, true>(ring_a, a_at, ta, b_at, (int)cnt - ta, stage);
        __syncthreads();

        store_tile<K, THREADS>(dst + t.lo + c, stage, cnt);
        a_cur += ta;
        b_cur += cnt - ta;
        /* stage is next written after the next iteration's first barrier, by which
         * time every thread has stored its part. */
    }
}

template <typename K> int64_t circular_segment(int64_t n)
{
    const device_tuning &dt = gm_device_tuning;
    int64_t blocks = (int64_t)dt.sm_count * (dt.circular_blocks_per_sm > 0 ? dt.circular_blocks_per_sm : 1);
    int64_t tile = tuning<K>::TILE;
    int64_t seg = (n + blocks - 1) / blocks;
    seg = (seg + tile - 1) / tile * tile;
    return seg > tile ? seg : tile;
}

template <typename K>
int launch_merge_circular(const K *src, K *dst, const pass_desc &d, K mask,
                          const int64_t *coranks, cudaStream_t s, gm_status *st)
{
    if (d.ntiles == 0)
        return GM_OK;
    size_t smem = circular_smem_bytes<K>();
    int rc = set_attribute_once<merge_circular_kernel<K>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize>((int)smem, st);
    if (rc)
        return rc;
    GM_LAUNCH("merge_circular_kernel", st, d.dependent, merge_circular_kernel<K>,
              (unsigned)d.ntiles, tuning<K>::THREADS, smem, s, src, dst, d, coranks, mask);
    return GM_OK;
}

/* Resident blocks per multiprocessor of the circular kernel, for the tuning table. */
template <typename K> int circular_occupancy()
{
    int blocks = 0;
    size_t smem = circular_smem_bytes<K>();
    if (cudaFuncSetAttribute(merge_circular_kernel<K>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, merge_circular_kernel<K>,
                                                      tuning<K>::THREADS, smem) != cudaSuccess)
        return 1;
    return blocks > 0 ? blocks : 1;
}

#define GM_INSTANTIATE(K)                                                                  \
    template int64_t circular_segment<K>(int64_t);                                         \
    template int circular_occupancy<K>();                                                  \
    template int launch_merge_circular<K>(const K *, K *, const pass_desc &, K,            \
                                          const int64_t *, cudaStream_t, gm_status *);
GM_INSTANTIATE(int32_t)
GM_INSTANTIATE(int64_t)
