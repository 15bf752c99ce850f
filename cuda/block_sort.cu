/*
 * block_sort.cu - the block-sort stage of the GPU merge sort (after the CUDA
 * samples' mergeSort: sort small tiles in shared memory, then merge runs
 * of doubling length), built from the same co-rank and sequential merge as the
 * merge kernels.
 *
 * Each block sorts one tile of SORT_TILE keys (a few merge tiles: the larger the
 * block's tile, the fewer passes over memory follow): every thread sorts its ITEMS
 * keys in registers (Batcher's odd-even merge sort network, fully unrolled), then
 * log2(SORT_THREADS) rounds merge neighbouring runs in shared memory, in place;
 * in each round a thread finds its place with co-rank and merges ITEMS keys into
 * registers, written back once every thread has read its inputs. The passes that
 * follow (sort.cu) merge runs of SORT_TILE, 2 SORT_TILE, ... with the kernel chosen
 * by --kernel. A partial last tile is padded with the key that sorts last, and the
 * padding is never stored.
 *
 * With values (value.cuh) the sort must be stable, and the network is not: a
 * thread then sorts its pairs by odd-even transposition (ITEMS rounds of
 * neighbours exchanged only when strictly out of order, which keeps equal keys in
 * order), and the rounds' merges, stable, move each value with its key through
 * the tile's shadow. The padding follows every real key, so never precedes an
 * equal one.
 */
#include <limits>

#include "block.cuh"
#include "kernels.cuh"

constexpr int gm_pow2_at_least(int x)
{
    return x <= 1 ? 1 : 2 * gm_pow2_at_least((x + 1) / 2);
}

/*
 * Batcher's odd-even merge sort as a comparator network for N keys (Knuth, TAOCP
 * 5.3.4): the network for the next power of two, less the comparators that touch
 * a key past N (as if those were keys that sort last: the comparators would not
 * move them). For 17 keys (int32), 85 comparators where odd-even transposition
 * takes 136; a table fixed at compile time, so the unrolled loop over it names
 * registers.
 */
template <int N> struct sort_network {
    struct comparator {
        int a, b; /* a < b: after it, key a sorts no later than key b */
    };
    template <typename F> static constexpr void each(F f)
    {
        const int n = gm_pow2_at_least(N);
        for (int p = 1; p < n; p *= 2)
            for (int k = p; k >= 1; k /= 2)
                for (int j = k % p; j + k < n; j += 2 * k)
                    for (int i = 0; i < k && i + j + k < n; i++)
                        if ((i + j) / (2 * p) == (i + j + k) / (2 * p) && i + j + k < N)
                            f(i + j, i + j + k);
    }
    static constexpr int count()
    {
        int c = 0;
        each([&c](int, int) { c++; });
        return c;
    }
    static constexpr int COUNT = count();
    struct table {
        comparator c[COUNT > 0 ? COUNT : 1];
    };
    static constexpr table make()
    {
        table t{};
        int c = 0;
        each([&t, &c](int a, int b) { t.c[c++] = comparator{ a, b }; });
        return t;
    }
};

/* One thread's ITEMS pairs sorted in registers, stably: odd-even transposition. */
template <typename K, typename V, int ITEMS>
__device__ __forceinline__ void sort_pairs_in_registers(K (&r)[ITEMS], V (&rv)[ITEMS], K mask)
{
#pragma unroll
    for (int round = 0; round < ITEMS; round++) {
#pragma unroll
        for (int i = round & 1; i + 1 < ITEMS; i += 2) {
            K x = r[i], y = r[i + 1];
            V vx = rv[i], vy = rv[i + 1];
            bool swap = (K)(y ^ mask) < (K)(x ^ mask);
            r[i] = swap ? y : x;
            r[i + 1] = swap ? x : y;
            rv[i] = swap ? vy : vx;
            rv[i + 1] = swap ? vx : vy;
        }
    }
}

/* The block sort itself, for one direction, in buf (the kernel's) and its shadow
 * vbuf. */
template <typename K, typename V, bool DESC>
__device__ __forceinline__ void block_sort(const K *__restrict__ src, K *__restrict__ dst,
                                           int64_t n, K *buf, const V *__restrict__ vsrc,
                                           V *__restrict__ vdst, V *vbuf)
{
    constexpr int THREADS = shape<K>::SORT_THREADS, ITEMS = tiles<K>::SORT_ITEMS;
    constexpr int TILE = tiles<K>::SORT_TILE;
    const K mask = DESC ? K(-1) : K(0);
    int64_t base = (int64_t)blockIdx.x * TILE;
    int64_t cnt = n - base < TILE ? n - base : TILE;
    const K pad = std::numeric_limits<K>::max() ^ mask; /* sorts last */

    load_tile<K, THREADS, ITEMS>(buf, src + base, cnt);
    for (int x = (int)cnt + threadIdx.x; x < TILE; x += THREADS)
        buf[x] = pad;
    if constexpr (has_value<V>) {
        load_tile<V, THREADS, ITEMS>(vbuf, vsrc + base, cnt);
        for (int x = (int)cnt + threadIdx.x; x < TILE; x += THREADS)
            vbuf[x] = V(0);
    }
    __syncthreads();

    /* Each thread sorts its ITEMS consecutive keys in registers. */
    const int k = threadIdx.x * ITEMS;
    K r[ITEMS];
#pragma unroll
    for (int u = 0; u < ITEMS; u++)
        r[u] = buf[k + u];
    if constexpr (has_value<V>) {
        V rv[ITEMS];
#pragma unroll
        for (int u = 0; u < ITEMS; u++)
            rv[u] = vbuf[k + u];
        sort_pairs_in_registers<K, V, ITEMS>(r, rv, mask);
#pragma unroll
        for (int u = 0; u < ITEMS; u++)
            vbuf[k + u] = rv[u];
    } else {
        constexpr typename sort_network<ITEMS>::table net = sort_network<ITEMS>::make();
#pragma unroll
        for (int c = 0; c < sort_network<ITEMS>::COUNT; c++) {
            K x = r[net.c[c].a], y = r[net.c[c].b];
            bool swap = (K)(y ^ mask) < (K)(x ^ mask);
            r[net.c[c].a] = swap ? y : x;
            r[net.c[c].b] = swap ? x : y;
        }
    }
#pragma unroll
    for (int u = 0; u < ITEMS; u++)
        buf[k + u] = r[u];
    __syncthreads();

    /* Merge runs of w keys pairwise until one run fills the tile: each thread's
     * ITEMS outputs of its pair, merged in place where they go. */
    for (int w = ITEMS; w < TILE; w *= 2) {
        int pair = k / (2 * w) * (2 * w);
        merge_share_in_place<K, ITEMS, DESC, V>(buf, true, pair, w, pair + w, w, k - pair, k,
                                                vbuf, k);
        __syncthreads();
    }
    store_tile<K, THREADS>(dst + base, buf, cnt);
    if constexpr (has_value<V>)
        store_tile<V, THREADS>(vdst + base, vbuf, cnt);
}

/* Keys of the kernel's buffer: the tile, and keys to spare, since merge_items may
 * read one key past a run that ends the tile. Its shadow of values has as many. */
template <typename K> constexpr int block_sort_keys()
{
    return tiles<K>::SORT_TILE + 16 / sizeof(K);
}

template <typename K, typename V>
__global__ void __launch_bounds__(shape<K>::SORT_THREADS)
block_sort_kernel(const K *__restrict__ src, K *__restrict__ dst, int64_t n, K mask,
                  const V *__restrict__ vsrc, V *__restrict__ vdst)
{
    /* One buffer, merged in place. (Two buffers, ping-ponged, would not fit the 64
     * KB a block may have on sm_75 at these tiles.) */
    __shared__ __align__(16) K buf[block_sort_keys<K>()];
    V *vbuf = value_shadow<V>();
    gm_after_previous();
    if (mask == 0)
        block_sort<K, V, false>(src, dst, n, buf, vsrc, vdst, vbuf);
    else
        block_sort<K, V, true>(src, dst, n, buf, vsrc, vdst, vbuf);
}

template <typename K, typename V>
int launch_block_sort(const K *src, K *dst, int64_t n, K mask, cudaStream_t s, gm_status *st,
                      const V *vsrc, V *vdst)
{
    if (n == 0)
        return GM_OK;
    constexpr int vbytes = value_bytes<V>(block_sort_keys<K>());
    if (vbytes > 0) { /* the shadow takes the block past 48 KB */
        int rc = set_attribute_once<block_sort_kernel<K, V>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize>(vbytes, st);
        if (rc)
            return rc;
    }
    unsigned blocks = (unsigned)((n + tiles<K>::SORT_TILE - 1) / tiles<K>::SORT_TILE);
    GM_LAUNCH("block_sort_kernel", st, false, block_sort_kernel<K, V>, blocks,
              shape<K>::SORT_THREADS, vbytes, s, src, dst, n, mask, vsrc, vdst);
    return GM_OK;
}

#define GM_INSTANTIATE(K, V)                                                               \
    template int launch_block_sort<K, V>(const K *, K *, int64_t, K, cudaStream_t,          \
                                         gm_status *, const V *, V *);
GM_FOR_KEYS_AND_PAIRS(GM_INSTANTIATE)
