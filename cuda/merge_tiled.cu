/*
 * merge_tiled.cu - the tiled merge kernel of PMPP section 12.6, and the partition
 * kernel it (and the circular kernel) start from.
 *
 * Partition, then merge (as CUB's DeviceMerge and moderngpu's merge_path_partitions
 * do): a small kernel writes one co-rank per tile boundary into global memory; block
 * g then reads entries g and g + 1, which bound exactly the slices of A and B its
 * tile consumes. The book's tiled kernel instead loads tile_size keys of A and of B
 * on every iteration and consumes tile_size of them, throwing half of each load
 * away, and its in-tile co-rank reads past the valid part of a partial tile; here a
 * block loads exactly its la + lb = TILE keys, coalesced, and every in-tile co-rank
 * uses those real lengths.
 *
 * Layers: tile routine (load, per-thread co-rank and sequential merge into a staging
 * tile, coalesced store) -> __global__ -> host launcher.
 */
#include "common.cuh"

/* One thread per tile: the co-rank (relative to the pair's a) of its first output. */
template <typename K>
__global__ void partition_kernel(const K *__restrict__ src, pass_desc d, K mask,
                                 int64_t *__restrict__ coranks)
{
    int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= d.ntiles)
        return;
    tile_place t = place_tile(d, g);
    coranks[g] = corank(t.k0, src + t.lo, t.mid - t.lo, src + t.mid, t.hi - t.mid, mask);
}

template <typename K>
int launch_partition(const K *src, const pass_desc &d, K mask, int64_t *coranks,
                     cudaStream_t s, gm_status *st)
{
    if (d.ntiles == 0)
        return GM_OK;
    const int threads = 128;
    unsigned blocks = (unsigned)((d.ntiles + threads - 1) / threads);
    partition_kernel<K><<<blocks, threads, 0, s>>>(src, d, mask, coranks);
    GM_LAUNCHED("partition_kernel", st);
    return GM_OK;
}

/* What a block needs to load and merge tile g: its place and the slices of a and
 * b it consumes, read from the partition. */
struct tile_job {
    tile_place t;
    int64_t a0, la; /* a's slice: [a0, a0 + la) of the pair's a */
    int64_t b0;     /* b's slice starts at b0; it has cnt - la keys */
    int64_t cnt;
};

__device__ inline tile_job tile_job_of(const pass_desc &d, const int64_t *coranks, int64_t g)
{
    tile_job j;
    j.t = place_tile(d, g);
    j.a0 = coranks[g];
    int64_t a1 = j.t.last_of_pair ? j.t.mid - j.t.lo : coranks[g + 1];
    j.la = a1 - j.a0;
    j.b0 = j.t.k0 - j.a0;
    j.cnt = j.t.k1 - j.t.k0;
    return j;
}

/*
 * Where a tile's slices land in its shared-memory buffer. Slices start anywhere in
 * global memory, so each is copied as the 16-byte chunks that cover it: chunk
 * copies are 16-byte aligned at both ends, four int32 keys (two int64) per copy
 * instruction, and the slice then starts `off` keys into its first chunk. b's
 * chunks follow a's. Each slice's chunks cover at most 2 * VEC - 2 keys beyond it
 * (VEC - 1 before, VEC - 1 after), hence buffers of TILE + 4 * VEC keys; reading
 * them stays inside the array, whose allocation has 16 bytes to spare at its end.
 */
template <typename K> struct tile_layout {
    static constexpr int VEC = 16 / sizeof(K);
    const K *ga, *gb; /* first chunk of each slice, in global memory */
    int na, nb;       /* chunks of each slice */
    int a_off, b_at;  /* slice a starts at a_off; b's chunks start at b_at (b_off later) */
    int b_off;

    __device__ tile_layout(const K *src, const tile_job &j)
    {
        const K *a = src + j.t.lo + j.a0, *b = src + j.t.mid + j.b0;
        a_off = (int)(((uintptr_t)a / sizeof(K)) & (VEC - 1));
        b_off = (int)(((uintptr_t)b / sizeof(K)) & (VEC - 1));
        ga = a - a_off;
        gb = b - b_off;
        int lb = (int)(j.cnt - j.la);
        na = j.la > 0 ? (a_off + (int)j.la + VEC - 1) / VEC : 0;
        nb = lb > 0 ? (b_off + lb + VEC - 1) / VEC : 0;
        b_at = na * VEC;
    }
};

/* Starts the asynchronous copy of the chunks that l describes into s. */
template <typename K>
__device__ inline void fetch_tile(K *s, const tile_layout<K> &l)
{
    constexpr int VEC = tile_layout<K>::VEC;
    for (int c = threadIdx.x; c < l.na + l.nb; c += tuning<K>::THREADS) {
        const K *from = c < l.na ? l.ga + c * VEC : l.gb + (c - l.na) * VEC;
        __pipeline_memcpy_async(s + c * VEC, from, 16);
    }
}

/*
 * One tile per block. Many small blocks are resident on each multiprocessor (the
 * table keeps them at 32 registers), so while some wait for their slices others
 * merge: the occupancy hides the memory latency. (A persistent version that
 * fetched its next tile while merging the current one measured 61% of copy
 * bandwidth at 2^28 keys against this one's 69%: its extra state cost occupancy.)
 */
template <typename K>
__global__ void __launch_bounds__(tuning<K>::THREADS,
                                  GM_MIN_BLOCKS(tuning<K>::TILED_MIN_BLOCKS, tuning<K>::THREADS))
merge_tiled_kernel(const K *__restrict__ src, K *__restrict__ dst, pass_desc d,
                   const int64_t *__restrict__ coranks, K mask)
{
    constexpr int THREADS = tuning<K>::THREADS, ITEMS = tuning<K>::ITEMS;
    constexpr int TILE = tuning<K>::TILE, BUF = TILE + 4 * tile_layout<K>::VEC;
    __shared__ __align__(16) K in[BUF];     /* the slices' chunks */
    __shared__ __align__(16) K stage[TILE]; /* the merged tile */

    /* Only what the merge and the store need stays live past this block: keeping
     * the tile's description around costs registers, and registers cost occupancy. */
    int la, lb, a_at, b_at;
    K *out;
    {
        tile_job job = tile_job_of(d, coranks, blockIdx.x);
        tile_layout<K> l(src, job);
        fetch_tile(in, l);
        la = (int)job.la;
        lb = (int)(job.cnt - job.la);
        a_at = l.a_off;
        b_at = l.b_at + l.b_off;
        out = dst + job.t.lo + job.t.k0;
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();

    if (mask == 0) /* two call sites: the compiler folds each direction's mask away */
        merge_tile<K, ITEMS>(in + a_at, la, in + b_at, lb, stage, K(0));
    else
        merge_tile<K, ITEMS>(in + a_at, la, in + b_at, lb, stage, K(-1));
    __syncthreads();
    store_tile<K, THREADS, ITEMS>(out, stage, la + lb);
}

template <typename K>
int launch_merge_tiled(const K *src, K *dst, const pass_desc &d, K mask, const int64_t *coranks,
                       cudaStream_t s, gm_status *st)
{
    if (d.ntiles == 0)
        return GM_OK;
    merge_tiled_kernel<K><<<(unsigned)d.ntiles, tuning<K>::THREADS, 0, s>>>(src, dst, d,
                                                                            coranks, mask);
    GM_LAUNCHED("merge_tiled_kernel", st);
    return GM_OK;
}

#define GM_INSTANTIATE(K)                                                                  \
    template int launch_partition<K>(const K *, const pass_desc &, K, int64_t *,           \
                                     cudaStream_t, gm_status *);                           \
    template int launch_merge_tiled<K>(const K *, K *, const pass_desc &, K,               \
                                       const int64_t *, cudaStream_t, gm_status *);
GM_INSTANTIATE(int32_t)
GM_INSTANTIATE(int64_t)
