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

/* corank_by_group_in (common.cuh) over the whole of the pair at lo, mid, hi. With
 * step > 1 the coarse co-rank: the first position of the step's worth of positions
 * that holds the co-rank, the step counted from the pair's start (see the coarse
 * partition below). */
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
    int64_t i = corank_by_group<K, LANES>(src, t.lo, t.mid, t.hi, t.k0, mask, lane,
                                          d.coarse ? tuning<K>::TILED_STEP : 1);
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

/*
 * The coarse partition (pass_desc.coarse; s = TILED_STEP; every pass of the tiled
 * kernel that has a partition kernel, unless GM_PARTITION_LANES=2 forces the
 * bracketed one): partition_kernel finds each tile's co-rank only to within a step
 * of s positions, by a search that probes whole steps alone (a[j s - 1] against
 * b[k - j s]; a tile starts at a whole number of steps, so k - j s is one too).
 * All the searches of a pass then read the same 2 (m + n) / s keys, which the
 * first searches bring into L2, where the exact partition's scattered loads go to
 * DRAM at about 20 a tile. The merge block loads a window from the start of its
 * first output's step to the end of its next tile's, at most 2 (s - 1) keys more
 * than its slices (about half a tile more, from L2: its neighbours load the same
 * keys), and its threads' co-rank searches in shared memory, offset by the keys of
 * the window that come before the tile, do the rest. On an H200 the 2^28 int32
 * merge went from 573 us (88.5% of a copy) to 542-546 (93.6-94.1%).
 */
/* Lanes a tile of the coarse partition past GM_PARTITION_8_LANES_MAX tiles (`kernels
 * 28 merge` on an H200, steps of 1088 keys: 1, 2 and 4 lanes within 2 us). */
#ifndef GM_COARSE_LANES
#define GM_COARSE_LANES 1
#endif

/* Whether the tiled kernel's blocks search their co-ranks themselves (no partition
 * kernel) for a pass of ntiles tiles. */
bool tiled_searches_itself(int64_t ntiles)
{
    if (gm_device_tuning.partition_lanes != 0)
        return gm_device_tuning.partition_lanes < 0;
    return ntiles <= GM_TILED_SELF_SEARCH_MAX;
}

/* Lanes per tile for a pass of ntiles tiles (see partition_kernel), for an exact
 * partition or a coarse one, or BRACKETED (exact only; GM_PARTITION_LANES=2). */
constexpr int BRACKETED = 0;
static int partition_lanes_for(int64_t ntiles, bool coarse)
{
    int forced = gm_device_tuning.partition_lanes;
    if (forced > 0)
        return forced == 2 ? BRACKETED : forced;
    return ntiles <= GM_PARTITION_32_LANES_MAX ? 32
           : ntiles <= GM_PARTITION_8_LANES_MAX ? 8
           : coarse                             ? GM_COARSE_LANES
                                                : BRACKETED;
}

template <typename K> bool tiled_partition_coarse(int64_t ntiles)
{
    return tuning<K>::TILED_STEP > 1 && partition_lanes_for(ntiles, true) != BRACKETED;
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
    switch (partition_lanes_for(d.ntiles, d.coarse)) {
    case 32:
        return launch_partition_lanes<K, 32>(src, d, mask, coranks, s, st);
    case 8:
        return launch_partition_lanes<K, 8>(src, d, mask, coranks, s, st);
    case 4:
        return launch_partition_lanes<K, 4>(src, d, mask, coranks, s, st);
    case 2:
        return launch_partition_lanes<K, 2>(src, d, mask, coranks, s, st);
    case BRACKETED: {
        unsigned blocks = (unsigned)((d.ntiles + BRACKET_TILES - 1) / BRACKET_TILES);
        GM_LAUNCH("partition_bracketed_kernel", st, false, partition_bracketed_kernel<K>,
                  blocks, BRACKET_TILES * BRACKET_LANES, 0, s, src, d, mask, coranks);
        return GM_OK;
    }
    default:
        return launch_partition_lanes<K, 1>(src, d, mask, coranks, s, st);
    }
}

/* Where a co-rank of output k lies, given the partition's entry lo for it: at lo
 * itself, or for a coarse partition anywhere in lo's step, as far as the pair
 * allows (at most k, and m, a's keys). */
template <typename K>
__device__ inline int64_t corank_step_end(int64_t lo, bool coarse, int64_t k, int64_t m)
{
    if (!coarse)
        return lo;
    constexpr int64_t STEP = tuning<K>::TILED_STEP;
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

/*
 * One tile of the pass (a span: TILED_ROUNDS tiles of TILE keys) per block: its
 * windows (its slices, and with a coarse partition up to two steps more) loaded at
 * once, then merged TILE outputs at a time through the staging tile (or, for one
 * round, staged in place). Several blocks are resident on each
 * multiprocessor (32 registers a thread; shared memory for the span, and for a
 * staging tile when ROUNDS > 1), so while some wait for their slices others merge:
 * the occupancy hides the memory latency. (A persistent version that
 * fetched its next tile while merging the current one was slower, 61% of copy
 * bandwidth at 2^28 keys against 69% then: its extra state cost occupancy.) On an
 * H200 a merge of 2^28 int32 keys (partition and this kernel) runs at 93-95% of a
 * device-to-device copy; what took it there from 60%: a merge that keeps each
 * input's next key in a register (merge_items), a store loop kept rolled, which
 * halved the registers the compiler wanted and ended the spills at the 32-register
 * cap, then one round staged in place, the bracketed partition (88.9%), and the
 * coarse partition with its windows (bench/RESULTS.md).
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
    constexpr int STEP = tuning<K>::TILED_STEP;
    /* The windows' chunks (SPAN keys, 2 (STEP - 1) more for a coarse partition's
     * windows, and 4 VEC at most for the chunks' ends), then room for merge_items to
     * read up to ITEMS keys past the end of a slice. */
    constexpr int BUF = (SPAN + 2 * (STEP - 1) + 4 * VEC + ITEMS + VEC) / VEC * VEC;
    /* A span of one round stages its merged keys where its slices were (see
     * merge_share_in_place): no second tile of shared memory, so more blocks fit
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
    /* Only what the merge needs stays in registers past this block: keeping the
     * tile's description around costs registers, and registers cost occupancy (at
     * 32 a thread, the store's destination and count would spill). Thread 0 leaves
     * those two in shared memory for after the merge. */
    __shared__ K *out_at;
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
        if (threadIdx.x == 0) {
            out_at = dst + job.t.lo + job.t.k0;
            out_cnt = (int)job.cnt;
        }
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    int cnt = out_cnt;

    /* Thread t merges outputs t ITEMS .. of the tile (of each round's TILE): those
     * from skip + t ITEMS on of the windows' merge. */
    if constexpr (IN_PLACE) {
        int k = threadIdx.x * ITEMS;
        if (mask == 0)
            merge_share_in_place<K, ITEMS, false>(in, k < cnt, a_at, la, b_at, lb, skip + k, k);
        else
            merge_share_in_place<K, ITEMS, true>(in, k < cnt, a_at, la, b_at, lb, skip + k, k);
        __syncthreads();
        store_tile<K, THREADS>(out_at, in, out_cnt);
    } else {
        K *out = out_at;
        /* The span's outputs TILE at a time through the staging tile. */
#pragma unroll 1
        for (int r = 0, k0 = 0; r < ROUNDS && k0 < cnt; r++, k0 += TILE) {
            if (r > 0)
                __syncthreads(); /* the last round's keys are stored */
            int k = k0 + threadIdx.x * ITEMS;
            if (k < cnt) {
                K *to = stage + threadIdx.x * ITEMS;
                if (mask == 0)
                    merge_share<K, ITEMS, false>(in, a_at, la, b_at, lb, skip + k, to);
                else
                    merge_share<K, ITEMS, true>(in, a_at, la, b_at, lb, skip + k, to);
            }
            __syncthreads();
            store_tile<K, THREADS>(out + k0, stage, cnt - k0 < TILE ? cnt - k0 : TILE);
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
     * counted in threads and shared memory (on sm_90, 8 of 256 threads at 26 KB
     * each for int32 keys, 28 KB for int64), never in L1's use. */
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
                                       const int64_t *, cudaStream_t, gm_status *);       \
    template bool tiled_partition_coarse<K>(int64_t);
GM_INSTANTIATE(int32_t)
GM_INSTANTIATE(int64_t)
