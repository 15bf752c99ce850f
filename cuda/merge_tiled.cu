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

/* corank_by_group_in (common.cuh) over the whole of the pair at lo, mid, hi. */
template <typename K, int LANES>
__device__ inline int64_t corank_by_group(const K *src, int64_t lo_, int64_t mid, int64_t hi_,
                                          int64_t k, K mask, int lane)
{
    int64_t lo, hi;
    gm_corank_bounds_i64(k, mid - lo_, hi_ - mid, &lo, &hi);
    return corank_by_group_in<K, LANES>(src + lo_, src + mid, k, lo, hi, mask, lane);
}

/*
 * The co-rank (relative to the pair's a) of every tile's first output, a group of
 * LANES neighbouring threads per tile. Each round of core/corank.h's search costs a
 * load from global memory that the next round waits for; a group probes LANES
 * points per round side by side and agrees on the new interval with one ballot, so
 * a search over 2^23 keys takes 6 rounds with 32 lanes against 23 with one. More
 * lanes mean more loads in all, so the launcher gives small passes (few tiles,
 * where the chain's latency is the cost) many lanes and large ones (where the
 * pass's bandwidth is) the bracketed partition below: few lanes, over short
 * intervals.
 */
template <typename K, int LANES>
__global__ void partition_kernel(const K *__restrict__ src, pass_desc d, K mask,
                                 int64_t *__restrict__ coranks)
{
    gm_after_previous();
    int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t g = tid / LANES; /* the group's lanes are one warp's, and share g */
    int lane = (int)(tid % LANES);
    if (g >= d.ntiles)
        return;
    tile_place t = place_tile(d, g);
    int64_t i = corank_by_group<K, LANES>(src, t.lo, t.mid, t.hi, t.k0, mask, lane);
    if (lane == 0)
        coranks[g] = i;
}

/*
 * The partition of large passes, bracketed: a block of BRACKET_TILES threads finds
 * the co-ranks of as many neighbouring tiles. Its first threads, BRACKET_END_LANES
 * for each, find those of its first tile and of the next block's first tile; within
 * one pair co-ranks rise with the output, so every tile of the block between them
 * has its co-rank between theirs. Each tile then searches, one lane, over that
 * bracket (about BRACKET_TILES tiles wide) instead of the whole pair.
 *
 * At these sizes the partition is bound by memory, not by its rounds' latency: its
 * loads are scattered 32-byte sectors (`ncu`, 2^28 int32 keys: 135 MB read from
 * DRAM in 59 us, 47% of the DRAM's throughput, a quarter of it hits in L2), so the
 * fewest loads win over the fewest rounds: a lane a tile (two loads a round, where
 * two lanes make four for log 3 instead of log 2 of the interval), few lanes for
 * the bracket's ends, and brackets short enough that the ends' searches are few.
 */
#ifndef GM_BRACKET_TILES /* -D overrides are for tuning experiments (bench/tune.sh) */
#define GM_BRACKET_TILES 32
#endif
#ifndef GM_BRACKET_LANES
#define GM_BRACKET_LANES 1
#endif
#ifndef GM_BRACKET_END_LANES
#define GM_BRACKET_END_LANES 4
#endif
/* bench/tune.sh variants on an H200, 2^28 int32 / 2^27 int64 keys merged (two runs
 * each, tiles x lanes, lanes for the ends): 32 x 1, 4 in 578.0-579.3 / 585.5 us; 32
 * x 1, 2 in 581.0 / 586.6; 32 x 1, 1 in 583.0 / 588.0; 64 x 1, 8 in 580.1 / 586.8;
 * 64 x 1, 32 in 581.8 / 588.5; 128 x 1, 8 in 583.1 / 591.2; 16 x 1, 4 in 586.8 /
 * 591.4; 64 x 2, 32 (the best before, as measured then: 128 x 2 591, 256 x 2 594,
 * 32 x 4 605, 64 x 4 602, 128 x 4 605) in 590.4 / 597.0. */
constexpr int BRACKET_TILES = GM_BRACKET_TILES, BRACKET_LANES = GM_BRACKET_LANES;
constexpr int BRACKET_END_LANES = GM_BRACKET_END_LANES;
static_assert(BRACKET_TILES * BRACKET_LANES >= 2 * BRACKET_END_LANES &&
                  BRACKET_TILES * BRACKET_LANES <= 1024,
              "the block's first threads find the bracket");

template <typename K>
__global__ void __launch_bounds__(BRACKET_TILES *BRACKET_LANES)
partition_bracketed_kernel(const K *__restrict__ src, pass_desc d, K mask,
                           int64_t *__restrict__ coranks)
{
    /* The bracket's ends: co-rank, output (relative to the pair), and the pair's lo. */
    __shared__ int64_t bracket[2], bracket_k[2], bracket_pair[2];
    gm_after_previous();
    int64_t g0 = (int64_t)blockIdx.x * BRACKET_TILES;
    int64_t g1 = g0 + BRACKET_TILES < d.ntiles ? g0 + BRACKET_TILES : d.ntiles;
    int w = threadIdx.x / BRACKET_END_LANES, lane = threadIdx.x % BRACKET_END_LANES;
    if (w < 2) {
        int64_t g = w == 0 ? g0 : g1, i = 0, k = 0, pair = -1;
        if (g < d.ntiles) {
            tile_place t = place_tile(d, g);
            i = corank_by_group<K, BRACKET_END_LANES>(src, t.lo, t.mid, t.hi, t.k0, mask, lane);
            k = t.k0;
            pair = t.lo;
        }
        if (lane == 0) {
            bracket[w] = i;
            bracket_k[w] = k;
            bracket_pair[w] = pair;
        }
    }
    __syncthreads();
    int64_t g = g0 + threadIdx.x / BRACKET_LANES;
    if (g >= g1)
        return; /* a tile's lanes leave together */
    tile_place t = place_tile(d, g);
    int64_t lo, hi;
    gm_corank_bounds_i64(t.k0, t.mid - t.lo, t.hi - t.mid, &lo, &hi);
    /* Along the output both co-ranks rise, a's and b's (k - i): past the bracket's
     * first end a has taken at least its keys there and b too, so i is at least
     * that end's and at most it plus the outputs between; before the other end,
     * the same the other way round. */
    if (t.lo == bracket_pair[0]) {
        lo = lo > bracket[0] ? lo : bracket[0];
        int64_t most = bracket[0] + (t.k0 - bracket_k[0]);
        hi = hi < most ? hi : most;
    }
    if (t.lo == bracket_pair[1]) {
        hi = hi < bracket[1] ? hi : bracket[1];
        int64_t least = bracket[1] - (bracket_k[1] - t.k0);
        lo = lo > least ? lo : least;
    }
    int64_t i = corank_by_group_in<K, BRACKET_LANES>(src + t.lo, src + t.mid, t.k0, lo, hi, mask,
                                                     threadIdx.x % BRACKET_LANES);
    if (threadIdx.x % BRACKET_LANES == 0)
        coranks[g] = i;
}

/* Whether the tiled kernel's blocks search their co-ranks themselves (no partition
 * kernel) for a pass of ntiles tiles. */
bool tiled_searches_itself(int64_t ntiles)
{
    if (gm_device_tuning.partition_lanes != 0)
        return gm_device_tuning.partition_lanes < 0;
    return ntiles <= GM_TILED_SELF_SEARCH_MAX;
}

/* Lanes per tile for a pass of ntiles tiles (see partition_kernel); 2 stands for
 * the bracketed partition. */
static int partition_lanes_for(int64_t ntiles)
{
    if (gm_device_tuning.partition_lanes > 0)
        return gm_device_tuning.partition_lanes;
    return ntiles <= GM_PARTITION_32_LANES_MAX ? 32 : ntiles <= GM_PARTITION_8_LANES_MAX ? 8 : 2;
}

template <typename K, int LANES>
static int launch_partition_lanes(const K *src, const pass_desc &d, K mask, int64_t *coranks,
                                  cudaStream_t s, gm_status *st)
{
    const int threads = 128;
    unsigned blocks = (unsigned)((d.ntiles * LANES + threads - 1) / threads);
    GM_LAUNCH("partition_kernel", st, false, partition_kernel<K, LANES>, blocks, threads, 0, s,
              src, d, mask, coranks);
    return GM_OK;
}

template <typename K>
int launch_partition(const K *src, const pass_desc &d, K mask, int64_t *coranks,
                     cudaStream_t s, gm_status *st)
{
    if (d.ntiles == 0)
        return GM_OK;
    switch (partition_lanes_for(d.ntiles)) {
    case 32:
        return launch_partition_lanes<K, 32>(src, d, mask, coranks, s, st);
    case 8:
        return launch_partition_lanes<K, 8>(src, d, mask, coranks, s, st);
    case 4:
        return launch_partition_lanes<K, 4>(src, d, mask, coranks, s, st);
    case 2: {
        unsigned blocks = (unsigned)((d.ntiles + BRACKET_TILES - 1) / BRACKET_TILES);
        GM_LAUNCH("partition_bracketed_kernel", st, false, partition_bracketed_kernel<K>,
                  blocks, BRACKET_TILES * BRACKET_LANES, 0, s, src, d, mask, coranks);
        return GM_OK;
    }
    default:
        return launch_partition_lanes<K, 1>(src, d, mask, coranks, s, st);
    }
}

/* What a block needs to load and merge tile g: its place and the slices of a and
 * b it consumes, read from the partition (or searched: see the kernel). */
struct tile_job {
    tile_place t;
    int64_t a0, la; /* a's slice: [a0, a0 + la) of the pair's a */
    int64_t b0;     /* b's slice starts at b0; it has cnt - la keys */
    int64_t cnt;
};

__device__ inline tile_job tile_job_of(const pass_desc &d, const int64_t *coranks,
                                       const int64_t *searched, int64_t g)
{
    tile_job j;
    j.t = place_tile(d, g);
    j.a0 = coranks ? coranks[g] : searched[0];
    int64_t a1 = j.t.last_of_pair ? j.t.mid - j.t.lo : coranks ? coranks[g + 1] : searched[1];
    j.la = a1 - j.a0;
    j.b0 = j.t.k0 - j.a0;
    j.cnt = j.t.k1 - j.t.k0;
    return j;
}

/*
 * One tile of the pass (a span: TILED_ROUNDS tiles of TILE keys) per block: its
 * slices loaded at once, then merged TILE outputs at a time through the staging
 * tile (or, for one round, staged in place). Several blocks are resident on each
 * multiprocessor (32 registers a thread; shared memory for the span, and for a
 * staging tile when ROUNDS > 1), so while some wait for their slices others merge:
 * the occupancy hides the memory latency. (A persistent version that
 * fetched its next tile while merging the current one was slower, 61% of copy
 * bandwidth at 2^28 keys against 69% then: its extra state cost occupancy.) On an
 * H200 a merge of 2^28 int32 keys (partition and this kernel) runs at 88.9% of a
 * device-to-device copy; what took it there from 60%: a merge that keeps each
 * input's next key in a register (merge_items), a store loop kept rolled, which
 * halved the registers the compiler wanted and ended the spills at the 32-register
 * cap, then one round staged in place and the bracketed partition
 * (bench/RESULTS.md).
 */
template <typename K>
__global__ void __launch_bounds__(tuning<K>::TILED_THREADS,
                                  GM_MIN_BLOCKS(tuning<K>::TILED_MIN_BLOCKS,
                                                tuning<K>::TILED_THREADS))
merge_tiled_kernel(const K *__restrict__ src, K *__restrict__ dst, pass_desc d,
                   const int64_t *__restrict__ coranks, K mask)
{
    constexpr int THREADS = tuning<K>::TILED_THREADS, ITEMS = tuning<K>::ITEMS;
    constexpr int TILE = tuning<K>::TILED_TILE, VEC = chunked_slices<K, 2>::VEC;
    constexpr int ROUNDS = tuning<K>::TILED_ROUNDS, SPAN = tuning<K>::TILED_SPAN;
    /* The slices' chunks (SPAN + 4 VEC keys at most), then room for merge_items to
     * read up to ITEMS keys past the end of a slice. */
    constexpr int BUF = (SPAN + 4 * VEC + ITEMS + VEC) / VEC * VEC;
    /* A span of one round stages its merged keys where its slices were (see
     * merge_tile_in_place): no second tile of shared memory, so more blocks fit
     * (8 of 256 threads against 7 for int32 keys: 2^28 keys merged in 575 us
     * against 578, the merge kernel alone in 519 against 525, on an H200). A
     * span of several rounds stages each through a tile of its own, since the
     * slices' keys the later rounds need are still in place. */
    constexpr bool IN_PLACE = ROUNDS == 1;
    __shared__ __align__(16) K in[BUF];
    __shared__ __align__(16) K stage[IN_PLACE ? 1 : TILE]; /* a round's merged keys */
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
    /* Only what the merge and the store need stays live past this block: keeping
     * the tile's description around costs registers, and registers cost occupancy. */
    int la, lb, a_at, b_at;
    K *out;
    {
        tile_job job = tile_job_of(d, coranks, searched, blockIdx.x);
        la = (int)job.la;
        lb = (int)(job.cnt - job.la);
        const K *slice[2] = { src + job.t.lo + job.a0, src + job.t.mid + job.b0 };
        chunked_slices<K, 2> l(slice, { la, lb });
        l.template fetch<THREADS>(in);
        a_at = l.at[0];
        b_at = l.at[1];
        out = dst + job.t.lo + job.t.k0;
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();

    if constexpr (IN_PLACE) {
        if (mask == 0)
            merge_tile_in_place<K, ITEMS, false>(in, a_at, la, b_at, lb);
        else
            merge_tile_in_place<K, ITEMS, true>(in, a_at, la, b_at, lb);
        __syncthreads();
        store_tile<K, THREADS>(out, in, la + lb);
    } else {
        /* The span's outputs TILE at a time through the staging tile. */
#pragma unroll 1
        for (int r = 0, k0 = 0; r < ROUNDS && k0 < la + lb; r++, k0 += TILE) {
            if (r > 0)
                __syncthreads(); /* the last round's keys are stored */
            if (mask == 0)
                merge_tile<K, ITEMS, false>(in, a_at, la, b_at, lb, stage, k0);
            else
                merge_tile<K, ITEMS, true>(in, a_at, la, b_at, lb, stage, k0);
            __syncthreads();
            store_tile<K, THREADS>(out + k0, stage, la + lb - k0 < TILE ? la + lb - k0 : TILE);
        }
    }
}

template <typename K>
int launch_merge_tiled(const K *src, K *dst, const pass_desc &d, K mask, const int64_t *coranks,
                       cudaStream_t s, gm_status *st)
{
    if (d.ntiles == 0)
        return GM_OK;
    /* All of the multiprocessor's L1 as shared memory: the resident blocks are
     * counted in shared memory (int64 keys on sm_90: 8 at 28 KB each) or threads
     * (int32: 8 of 256 at 18 KB), never in L1's use. */
    int rc = set_attribute_once<merge_tiled_kernel<K>,
                                cudaFuncAttributePreferredSharedMemoryCarveout>(
        (int)cudaSharedmemCarveoutMaxShared, st);
    if (rc)
        return rc;
    GM_LAUNCH("merge_tiled_kernel", st, d.dependent, merge_tiled_kernel<K>,
              (unsigned)d.ntiles, tuning<K>::TILED_THREADS, 0, s, src, dst, d, coranks, mask);
    return GM_OK;
}

#define GM_INSTANTIATE(K)                                                                  \
    template int launch_partition<K>(const K *, const pass_desc &, K, int64_t *,           \
                                     cudaStream_t, gm_status *);                           \
    template int launch_merge_tiled<K>(const K *, K *, const pass_desc &, K,               \
                                       const int64_t *, cudaStream_t, gm_status *);
GM_INSTANTIATE(int32_t)
GM_INSTANTIATE(int64_t)
