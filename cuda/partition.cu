/*
 * partition.cu - the partition kernel: the co-rank of every tile's first output of
 * a two-way pass, written to global memory for the tiled and circular kernels
 * (partition, then merge, as CUB's DeviceMerge and moderngpu's
 * merge_path_partitions do; the co-rank is PMPP 12.3's, core/keys/corank.h).
 *
 * A group of LANES neighbouring threads searches each tile's co-rank. Each round of
 * the search costs a load from global memory that the next round waits for; a
 * group probes LANES points per round side by side and agrees on the new interval
 * with one ballot, so a search over 2^23 keys takes 6 rounds with 32 lanes against
 * 23 with one. More lanes mean more loads in all, so small passes (few tiles, where
 * the chain's latency is the cost) get many lanes and large ones (where the pass's
 * bandwidth is) one (policy.cuh, choice).
 *
 * The coarse partition (pass_desc.coarse, the tiled kernel's): each tile's co-rank
 * is found only to within a step of s = TILED_STEP positions, by a search that
 * probes whole steps alone (a[j s - 1] against b[k - j s]; a tile starts at a whole
 * number of steps, so k - j s is one too). All the searches of a pass then read the
 * same 2 (m + n) / s keys, which the first searches bring into L2, where exact
 * searches' scattered loads go to DRAM at about 20 a tile. The tiled kernel loads a
 * window that much wider and finds the exact co-rank in shared memory.
 */
#include "corank.cuh"
#include "device.cuh"
#include "kernels.cuh"

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
                                          d.coarse ? tiles<K>::TILED_STEP : 1);
    if (lane == 0)
        coranks[g] = i;
}

bool tiled_searches_itself(int64_t ntiles)
{
    if (gm_forced.partition != GM_PARTITION_AUTO)
        return gm_forced.partition == GM_PARTITION_NONE;
    return ntiles <= choice::SELF_SEARCH_MAX_TILES;
}

/* Lanes a tile for a pass of ntiles tiles. */
static int partition_lanes(int64_t ntiles)
{
    switch (gm_forced.partition) {
    case GM_PARTITION_LANES_1:
        return 1;
    case GM_PARTITION_LANES_8:
        return 8;
    case GM_PARTITION_LANES_32:
        return 32;
    default:
        return ntiles <= choice::PARTITION_32_MAX_TILES  ? 32
               : ntiles <= choice::PARTITION_8_MAX_TILES ? 8
                                                         : 1;
    }
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
    switch (partition_lanes(d.ntiles)) {
    case 32:
        return launch_partition_lanes<K, 32>(src, d, mask, coranks, s, st);
    case 8:
        return launch_partition_lanes<K, 8>(src, d, mask, coranks, s, st);
    default:
        return launch_partition_lanes<K, 1>(src, d, mask, coranks, s, st);
    }
}

#define GM_INSTANTIATE(K)                                                                  \
    template int launch_partition<K>(const K *, const pass_desc &, K, int64_t *, cudaStream_t, \
                                     gm_status *);
GM_FOR_KEYS(GM_INSTANTIATE)
