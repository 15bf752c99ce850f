/*
 * merge_tiled.cu - the tiled merge kernel of PMPP section 12.6: each block merges
 * one tile of a two-way pass in shared memory.
 *
 * Partition, then merge: the partition kernel (partition.cu) writes the co-rank of
 * every tile boundary; block g reads entries g and g + 1, which bound the slices of
 * A and B its tile consumes. The book's tiled kernel instead loads tile_size keys of
 * A and of B on every iteration and consumes tile_size of them, throwing half of
 * each load away, and its in-tile co-rank reads past the valid part of a partial
 * tile; here a block loads only what its tile needs, as 16-byte asynchronous copies,
 * and every in-tile co-rank uses the real lengths. With the coarse partition the
 * block loads a window up to two steps wider than its slices and its threads'
 * co-rank searches in shared memory find the exact places. On small passes (few
 * tiles) there is no partition kernel: two warps of each block search the tile's
 * co-ranks in global memory themselves, saving a launch.
 *
 * With values (value.cuh) each value is copied beside its key's place, into the
 * buffer's shadow, merged with it and stored after the keys.
 *
 * Layers: tile job (where the tile's windows are) -> load (block.cuh) -> per-thread
 * co-rank and sequential merge, in place -> coalesced store -> host launcher.
 */
#include "block.cuh"
#include "device.cuh"
#include "kernels.cuh"

/* Where a co-rank of output k lies, given the partition's entry lo for it: at lo
 * itself, or for a coarse partition anywhere in lo's step, as far as the pair
 * allows (at most k, and m, a's keys). */
template <typename K>
__device__ inline int64_t corank_step_end(int64_t lo, bool coarse, int64_t k, int64_t m)
{
    if (!coarse)
        return lo;
    constexpr int64_t STEP = tiles<K>::TILED_STEP;
    int64_t hi = lo / STEP * STEP + STEP - 1, most = k < m ? k : m;
    return hi < most ? hi : most;
}

/* What a block needs to load and merge tile g: its place and the windows of a and b
 * it loads, from the partition's entries (or the co-ranks it searched: see the
 * kernel). With exact co-ranks the windows are the slices the tile consumes; with a
 * coarse partition they reach from the start of the first output's step to the end
 * of the next tile's, and the tile's outputs are outputs skip .. skip + cnt - 1 of
 * the windows' merge. */
struct tile_job {
    tile_place t;
    int64_t a0, la; /* a's window: [a0, a0 + la) of the pair's a */
    int64_t b0, lb; /* b's window */
    int64_t skip;   /* keys of the windows merged before the tile's first output */
    int64_t cnt;    /* the tile's outputs */
};

template <typename K>
__device__ inline tile_job tile_job_of(const pass_desc &d, const int64_t *coranks,
                                       const int64_t *searched, int64_t g)
{
    tile_job j;
    j.t = place_tile(d, g);
    int64_t m = j.t.mid - j.t.lo;
    bool coarse = coranks && d.coarse;
    /* The co-ranks of the tile's first output, in [s_lo, s_hi], and of the next
     * tile's, in [e_lo, e_hi]. */
    int64_t s_lo = coranks ? coranks[g] : searched[0];
    int64_t s_hi = corank_step_end<K>(s_lo, coarse, j.t.k0, m);
    int64_t e_lo = j.t.last_of_pair ? m : coranks ? coranks[g + 1] : searched[1];
    int64_t e_hi = j.t.last_of_pair ? m : corank_step_end<K>(e_lo, coarse, j.t.k1, m);
    /* Both inputs' positions rise along the output: a's window runs from a's least
     * start to its greatest end, b's (at k - i) from k0 - s_hi to k1 - e_lo. */
    j.a0 = s_lo;
    j.la = e_hi - s_lo;
    j.b0 = j.t.k0 - s_hi;
    j.lb = j.t.k1 - e_lo - j.b0;
    j.skip = s_hi - s_lo;
    j.cnt = j.t.k1 - j.t.k0;
    return j;
}

/* Keys of the kernel's shared buffer: the windows' chunks (TILE keys, 2 (STEP - 1)
 * more for a coarse partition's windows, and 4 VEC at most for the chunks' ends),
 * then room for merge_items to read up to ITEMS keys past the end of a slice. */
template <typename K> constexpr int tiled_buffer_keys()
{
    constexpr int VEC = chunked_slices<K, 2>::VEC, ITEMS = shape<K>::TILED_ITEMS;
    return (tiles<K>::TILED_TILE + 2 * (tiles<K>::TILED_STEP - 1) + 4 * VEC + ITEMS + VEC) /
           VEC * VEC;
}

/* Shared memory a block uses: the buffer and a few scalars, then the buffer's
 * shadow of values (the dynamic shared memory; none keys-only). */
template <typename K, typename V> constexpr int tiled_value_bytes()
{
    return value_bytes<V>(tiled_buffer_keys<K>());
}
template <typename K, typename V> constexpr int tiled_smem_bytes()
{
    return tiled_buffer_keys<K>() * (int)sizeof(K) + 64 + tiled_value_bytes<K, V>();
}

/*
 * One tile per block: its windows loaded at once, then merged in place (each
 * thread merges its ITEMS outputs into registers, and writes them where they go once
 * every thread has read its inputs), then stored. Several blocks are resident on
 * each multiprocessor (shared memory for one tile each; registers capped so that
 * they never cost a block, policy.cuh), so while some wait for their slices others
 * merge: the occupancy hides the memory latency.
 */
template <typename K, typename V>
__global__ void __launch_bounds__(shape<K>::TILED_THREADS,
                                  resident_blocks<GM_ARCH>(shape<K>::TILED_THREADS,
                                                           tiled_smem_bytes<K, V>()))
merge_tiled_kernel(const K *__restrict__ src, K *__restrict__ dst, pass_desc d,
                   const int64_t *__restrict__ coranks, K mask, const V *__restrict__ vsrc,
                   V *__restrict__ vdst)
{
    constexpr int THREADS = shape<K>::TILED_THREADS, ITEMS = shape<K>::TILED_ITEMS;
    __shared__ __align__(16) K in[tiled_buffer_keys<K>()];
    V *vin = value_shadow<V>(); /* in's shadow */
    gm_after_previous();

    /* Without a partition (coranks null), warps 0 and 1 find the co-ranks of the
     * tile's first output and of the next tile's, 32 lanes each. */
    __shared__ int64_t searched[2];
    if (coranks == nullptr) {
        int w = threadIdx.x / 32;
        if (w < 2) {
            tile_place t = place_tile(d, blockIdx.x);
            int64_t i = w == 1 && t.last_of_pair
                            ? t.mid - t.lo
                            : corank_by_group<K, 32>(src, t.lo, t.mid, t.hi, w ? t.k1 : t.k0,
                                                     mask, threadIdx.x & 31);
            if ((threadIdx.x & 31) == 0)
                searched[w] = i;
        }
        __syncthreads();
    }
    /* Only what the merge needs stays in registers past this block: keeping the
     * tile's description around costs registers, and registers cost occupancy (at
     * the cap, the store's destination and count would spill). Thread 0 leaves
     * those two in shared memory for after the merge. */
    __shared__ K *out_at;
    __shared__ V *vout_at;
    __shared__ int out_cnt;
    int la, lb, a_at, b_at, skip;
    {
        tile_job job = tile_job_of<K>(d, coranks, searched, blockIdx.x);
        la = (int)job.la;
        lb = (int)job.lb;
        skip = (int)job.skip;
        const K *slice[2] = { src + job.t.lo + job.a0, src + job.t.mid + job.b0 };
        chunked_slices<K, 2> l(slice, { la, lb });
        l.template fetch<THREADS>(in);
        a_at = l.at[0];
        b_at = l.at[1];
        value_slices<V, 2> vl;
        vl.add(0, value_at(vsrc, job.t.lo + job.a0), la, a_at);
        vl.add(1, value_at(vsrc, job.t.mid + job.b0), lb, b_at);
        vl.template fetch<THREADS>(vin);
        if (threadIdx.x == 0) {
            out_at = dst + job.t.lo + job.t.k0;
            if constexpr (has_value<V>)
                vout_at = vdst + job.t.lo + job.t.k0;
            out_cnt = (int)job.cnt;
        }
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();

    /* Thread t merges outputs t ITEMS .. of the tile: those from skip + t ITEMS on
     * of the windows' merge, staged where the windows were. */
    int k = threadIdx.x * ITEMS;
    if (mask == 0)
        merge_share_in_place<K, ITEMS, false, V>(in, k < out_cnt, a_at, la, b_at, lb, skip + k,
                                                 k, vin, k);
    else
        merge_share_in_place<K, ITEMS, true, V>(in, k < out_cnt, a_at, la, b_at, lb, skip + k, k,
                                                vin, k);
    __syncthreads();
    store_tile<K, THREADS>(out_at, in, out_cnt);
    if constexpr (has_value<V>)
        store_tile<V, THREADS>(vout_at, vin, out_cnt);
}

template <typename K, typename V>
int launch_merge_tiled(const K *src, K *dst, const pass_desc &d, K mask, const int64_t *coranks,
                       cudaStream_t s, gm_status *st, const V *vsrc, V *vdst)
{
    if (d.ntiles == 0)
        return GM_OK;
    constexpr int vbytes = tiled_value_bytes<K, V>();
    int rc = prefer_shared_memory<merge_tiled_kernel<K, V>>(st);
    if (!rc && vbytes > 0) /* the shadow takes the block past 48 KB */
        rc = set_attribute_once<merge_tiled_kernel<K, V>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize>(vbytes, st);
    if (rc)
        return rc;
    GM_LAUNCH("merge_tiled_kernel", st, d.dependent, merge_tiled_kernel<K, V>,
              (unsigned)d.ntiles, shape<K>::TILED_THREADS, vbytes, s, src, dst, d, coranks, mask,
              vsrc, vdst);
    return GM_OK;
}

#define GM_INSTANTIATE(K, V)                                                               \
    template int launch_merge_tiled<K, V>(const K *, K *, const pass_desc &, K,             \
                                          const int64_t *, cudaStream_t, gm_status *,       \
                                          const V *, V *);
GM_FOR_KEYS_AND_PAIRS(GM_INSTANTIATE)
