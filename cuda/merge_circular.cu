/*
 * merge_circular.cu - the circular-buffer merge kernel of PMPP section 12.7.
 *
 * Each block owns a long segment of one pair's output (a few per multiprocessor,
 * from the partition kernel at segment granularity) and walks it one tile at a
 * time. The keys of A and B that are loaded but not yet consumed stay in shared
 * memory, in a ring per input, so every key is loaded from global memory once: after
 * a tile, only as many keys as it consumed are loaded to refill each ring. As the
 * book's translator notes, how far each input has been *loaded* must be tracked
 * apart from how far it has been *consumed*; here a_next (the next key to load)
 * and the window of la keys from slot ra (and b_...).
 *
 * What it saves: the partition searches global memory once per segment, not once
 * per tile; the price is that a block's walk through its segment must keep memory
 * busy by itself, with few blocks resident (bench/RESULTS.md compares it with the
 * tiled kernel, which is faster). Where the book's loop loads, then merges, this
 * one starts the loads that refill the rings for the next tile as soon as the
 * tile's co-rank is known, holds them in registers while it merges, and writes them
 * into the slots the tile consumed after the merge: each ring holds exactly the
 * next TILE keys of its input (a window: the most a tile can take from it), and the
 * refill is exactly the tile's size, one load per thread per key of the tile.
 *
 * The ring is stored twice over (key g at slot g mod R and at that plus R), so the
 * window, R keys starting anywhere, is always one contiguous array: the one co-rank
 * and the sequential merge of core/keys/corank.h run on it unchanged, where the book
 * needs circular variants of both.
 *
 * With values (value.cuh), rings and staging tile have shadows after them, filled,
 * merged and stored beside the keys.
 */
#include "block.cuh"
#include "device.cuh"
#include "kernels.cuh"

/* A refill of the rings: the keys j = threadIdx.x + u * THREADS (u < ITEMS) of
 * a[0, na) followed by b[0, nb) (na + nb <= THREADS * ITEMS), loaded into registers
 * by load() and written into the rings by store(), the loads' latency in between.
 * Each thread's keys sit at fixed offsets from two pointers (or slots), so an item
 * costs two predicated loads (or stores) and no address arithmetic of its own. */
template <typename K, int THREADS, int ITEMS, int R> struct ring_refill {
    K v[ITEMS];

    __device__ void load(const K *__restrict__ a, int na, const K *__restrict__ b, int nb)
    {
        const int t = threadIdx.x;
        const K *pa = a + t, *pb = b + (t - na);
#pragma unroll
        for (int u = 0; u < ITEMS; u++) {
            int j = t + u * THREADS;
            K x = K(0);
            if (j < na)
                x = pa[u * THREADS];
            else if (j < na + nb)
                x = pb[u * THREADS];
            v[u] = x;
        }
    }

    /* a's keys go to the slots from ra on of the rings at s (ring_a: s[0, 2R)), b's
     * from rb on (ring_b: s[2R, 4R)); ra, rb < R; each key into its slot and the
     * slot's double. */
    __device__ void store(K *s, int ra, int rb, int na, int nb) const
    {
        const int t = threadIdx.x;
        const int sa = ra + t, sb = rb + (t - na);
#pragma unroll
        for (int u = 0; u < ITEMS; u++) {
            int j = t + u * THREADS;
            if (j < na + nb) {
                bool in_a = j < na;
                int r = (in_a ? sa : sb) + u * THREADS; /* < 2R */
                r = (r >= R ? r - R : r) + (in_a ? 0 : 2 * R);
                s[r] = v[u];
                s[r + R] = v[u];
            }
        }
    }
};

/* The kernel's shared memory: two doubled rings and a staging tile, five tiles;
 * then their shadow of values (none keys-only). */
template <typename K> constexpr int circular_key_bytes()
{
    return 5 * tiles<K>::CIRC_TILE * (int)sizeof(K);
}
template <typename K, typename V> constexpr int circular_smem_bytes()
{
    return circular_key_bytes<K>() + value_bytes<V>(5 * tiles<K>::CIRC_TILE);
}

/* The rings' first windows: the la keys of a that end at a_next into ring_a's
 * slots from 0, the lb of b that end at b_next into ring_b's, and their values
 * into the shadow rings. The caller's barrier follows. */
template <typename K, typename V, int THREADS, int ITEMS, int R>
__device__ __forceinline__ void ring_first_fill(K *ring_a, V *vring_a, const K *a_next,
                                                const K *b_next, const V *va_next,
                                                const V *vb_next, int la, int lb)
{
    ring_refill<K, THREADS, ITEMS, R> f;
    f.load(a_next - la, la, b_next, 0);
    f.store(ring_a, 0, 0, la, 0);
    f.load(a_next, 0, b_next - lb, lb);
    f.store(ring_a, 0, 0, 0, lb);
    if constexpr (has_value<V>) {
        ring_refill<V, THREADS, ITEMS, R> fv;
        fv.load(va_next - la, la, vb_next, 0);
        fv.store(vring_a, 0, 0, la, 0);
        fv.load(va_next, 0, vb_next - lb, lb);
        fv.store(vring_a, 0, 0, 0, lb);
    }
}

template <typename K, typename V>
__global__ void __launch_bounds__(shape<K>::CIRC_THREADS,
                                  resident_blocks<GM_ARCH>(shape<K>::CIRC_THREADS,
                                                           circular_smem_bytes<K, V>()))
merge_circular_kernel(const K *__restrict__ src, K *__restrict__ dst, pass_desc d,
                      const int64_t *__restrict__ coranks, K mask, const V *__restrict__ vsrc,
                      V *__restrict__ vdst)
{
    constexpr int THREADS = shape<K>::CIRC_THREADS, ITEMS = shape<K>::CIRC_ITEMS;
    constexpr int TILE = tiles<K>::CIRC_TILE, R = TILE;
    extern __shared__ __align__(16) unsigned char smem[];
    K *ring_a = (K *)smem, *ring_b = ring_a + 2 * R, *stage = ring_b + 2 * R;
    /* the shadows: the same layout, in values */
    V *vring_a = value_shadow<V>(circular_key_bytes<K>()), *vstage = value_at(vring_a, 4 * R);
    gm_after_previous();

    tile_place t = place_tile(d, blockIdx.x); /* t.k0..t.k1: this block's segment */
    int64_t a_cur = coranks[t.g];
    int64_t a_end = t.last_of_pair ? t.mid - t.lo : coranks[t.g + 1];
    int64_t b_cur = t.k0 - a_cur, b_end = t.k1 - a_end;
    /* The windows: la keys of a from slot ra of ring_a, lb of b from slot rb of
     * ring_b; TILE each, or fewer once the rest of the segment's slice is in. Then
     * where the next refill of each comes from, and how many keys it has left. */
    int la = (int)(a_end - a_cur < TILE ? a_end - a_cur : TILE);
    int lb = (int)(b_end - b_cur < TILE ? b_end - b_cur : TILE);
    int ra = 0, rb = 0;
    const K *a_next = src + t.lo + a_cur + la, *b_next = src + t.mid + b_cur + lb;
    const V *va_next = value_at(vsrc, t.lo + a_cur + la);
    const V *vb_next = value_at(vsrc, t.mid + b_cur + lb);
    int64_t a_left = a_end - a_cur - la, b_left = b_end - b_cur - lb;
    ring_first_fill<K, V, THREADS, ITEMS, R>(ring_a, vring_a, a_next, b_next, va_next, vb_next,
                                             la, lb);
    __syncthreads();

    const int lane = threadIdx.x & 31;
    K *out = dst + t.lo + t.k0;
    V *vout = value_at(vdst, t.lo + t.k0);
    for (int64_t left = t.k1 - t.k0; left > 0;
         left -= TILE, out += TILE, vout = value_at(vout, TILE)) {
        int cnt = (int)(left < TILE ? left : TILE);
        /* This tile is the merge of the first ta keys of a's window and the first
         * cnt - ta of b's; each warp finds ta, 32 lanes probing side by side. */
        int lo, hi;
        gm_corank_bounds_i32_t(cnt, la, lb, &lo, &hi);
        int ta = corank_by_group_in<K, 32>(ring_a + ra, ring_b + rb, cnt, lo, hi, mask, lane);
        int tb = cnt - ta;
        /* The refill: as many keys as the tile takes from each input (a window cut
         * short by the end of its slice has nothing left to load). */
        int na = (int)(a_left < ta ? a_left : ta), nb = (int)(b_left < tb ? b_left : tb);
        ring_refill<K, THREADS, ITEMS, R> f;
        f.load(a_next, na, b_next, nb);
        ring_refill<V, THREADS, ITEMS, R> fv;
        if constexpr (has_value<V>)
            fv.load(va_next, na, vb_next, nb);

        /* Both windows as offsets into smem, where ring_b follows ring_a: merge_items's
         * reads past a's slice land in ring_b, and past b's (slot rb + tb <= 2R - 1 of
         * ring_b) stay inside it, none of it written during the merge. */
        if (mask == 0)
            merge_tile<K, ITEMS, false, V>(ring_a, ra, ta, 2 * R + rb, tb, stage, 0, vring_a,
                                           vstage);
        else
            merge_tile<K, ITEMS, true, V>(ring_a, ra, ta, 2 * R + rb, tb, stage, 0, vring_a,
                                          vstage);
        __syncthreads();

        store_tile<K, THREADS>(out, stage, cnt);
        if constexpr (has_value<V>)
            store_tile<V, THREADS>(vout, vstage, cnt);
        /* The refill lands in the slots the tile consumed: a full window of R keys
         * ends where it starts (and one cut short gets no refill). */
        int wa = ra + la, wb = rb + lb;
        f.store(ring_a, wa >= R ? wa - R : wa, wb >= R ? wb - R : wb, na, nb);
        if constexpr (has_value<V>)
            fv.store(vring_a, wa >= R ? wa - R : wa, wb >= R ? wb - R : wb, na, nb);
        __syncthreads();

        ra += ta;
        ra -= ra >= R ? R : 0;
        rb += tb;
        rb -= rb >= R ? R : 0;
        la += na - ta;
        lb += nb - tb;
        a_next += na;
        b_next += nb;
        va_next = value_at(va_next, na);
        vb_next = value_at(vb_next, nb);
        a_left -= na;
        b_left -= nb;
    }
}

/* Resident blocks per multiprocessor of the circular kernel, asked once a process
 * for each key width, at the first segment it cuts (after the probe, on the probed
 * device). It sets the kernel's shared-memory attribute once for the process (the
 * launcher's set_attribute_once then has nothing to do). If a call fails, one block
 * is taken and the error is cleared, so no later launch is blamed for it; the
 * launcher meets the same failure and reports it. */
template <typename K> static int circular_occupancy()
{
    gm_status ignored;
    int blocks = 0;
    size_t smem = circular_smem_bytes<K, no_value>();
    if (set_attribute_once<merge_circular_kernel<K, no_value>,
                           cudaFuncAttributeMaxDynamicSharedMemorySize>((int)smem, &ignored) ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, merge_circular_kernel<K, no_value>,
                                                      shape<K>::CIRC_THREADS, smem) != cudaSuccess) {
        cudaGetLastError();
        return 1;
    }
    return blocks > 0 ? blocks : 1;
}

template <typename K> static int circular_blocks_per_sm()
{
    static const int blocks = circular_occupancy<K>(); /* once: C++11's static */
    return blocks;
}

template <typename K> int64_t circular_segment(int64_t n)
{
    int per_sm = circular_blocks_per_sm<K>();
    int64_t blocks = gm_forced.circular_blocks > 0
                         ? gm_forced.circular_blocks
                         : (int64_t)gm_facts.sm_count * (per_sm > 0 ? per_sm : 1);
    int64_t tile = tiles<K>::CIRC_TILE;
    int64_t seg = (n + blocks - 1) / blocks;
    seg = (seg + tile - 1) / tile * tile;
    return seg > tile ? seg : tile;
}

template <typename K, typename V>
int launch_merge_circular(const K *src, K *dst, const pass_desc &d, K mask,
                          const int64_t *coranks, cudaStream_t s, gm_status *st, const V *vsrc,
                          V *vdst)
{
    if (d.ntiles == 0)
        return GM_OK;
    size_t smem = circular_smem_bytes<K, V>();
    int rc = set_attribute_once<merge_circular_kernel<K, V>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize>((int)smem, st);
    if (!rc)
        rc = prefer_shared_memory<merge_circular_kernel<K, V>>(st);
    if (rc)
        return rc;
    GM_LAUNCH("merge_circular_kernel", st, d.dependent, merge_circular_kernel<K, V>,
              (unsigned)d.ntiles, shape<K>::CIRC_THREADS, smem, s, src, dst, d, coranks, mask,
              vsrc, vdst);
    return GM_OK;
}

#define GM_INSTANTIATE_KEYS(K)                                                             \
    template int64_t circular_segment<K>(int64_t);
GM_FOR_KEYS(GM_INSTANTIATE_KEYS)
#define GM_INSTANTIATE(K, V)                                                               \
    template int launch_merge_circular<K, V>(const K *, K *, const pass_desc &, K,          \
                                             const int64_t *, cudaStream_t, gm_status *,    \
                                             const V *, V *);
GM_FOR_KEYS_AND_PAIRS(GM_INSTANTIATE)
