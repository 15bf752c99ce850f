/*
 * pass.cuh - the description of a merge pass and of the tiles it is cut into.
 *
 * A "merge pass" merges neighbouring runs of one array, pairwise: runs 2p and 2p+1
 * of src become run p of dst, at the same positions. A two-way merge is a pass with
 * one pair; a k-way merge is ceil(log2 k) passes (a tree of two-way merges); the
 * sort's two-way passes double the run length each time. The output of every pair
 * is cut into tiles of `tile` keys; tile g belongs to one pair, so no block ever
 * straddles two merges. (The sort's four-way pass, merge_multi.cu, has a
 * description of its own.)
 */
#ifndef GM_CUDA_PASS_CUH
#define GM_CUDA_PASS_CUH

#include <stdint.h>

struct pass_desc {
    int64_t n;             /* keys in the array */
    int64_t run_len;       /* > 0: run r is [r * run_len, min((r + 1) * run_len, n)) */
    const int64_t *bounds; /* run_len == 0: run r is [bounds[r], bounds[r + 1]) (device;
                              2 * npairs + 1 entries: an odd last run gets an empty b) */
    const int64_t *tile0;  /* run_len == 0: first tile of pair p, tile0[npairs] = ntiles */
    int64_t pair[3];       /* run_len == 0 and bounds null: the one pair, [pair[0],
                              pair[1]) and [pair[1], pair[2]) (no copy to the device) */
    bool coarse;           /* the partition's co-ranks are coarse (partition.cu):
                              entry g is the first position of the step of
                              tiles<K>::TILED_STEP keys holding tile g's co-rank;
                              else exact */
    bool dependent;        /* the merge kernel launched as dependent on the partition
                              (see gm_after_previous in check.cuh) */
    int64_t npairs;        /* pairs of runs merged (merge_pass, or its caller when run_len == 0) */
    int64_t tile;          /* output keys per tile */
    int64_t tiles_per_pair;/* run_len > 0: tiles of every full pair */
    int64_t ntiles;        /* tiles of the whole pass, one block each (merge_pass) */
};

/* Where pair p lies: a = [lo, mid), b = [mid, hi). */
__device__ inline void pass_pair(const pass_desc &d, int64_t p, int64_t &lo, int64_t &mid,
                                 int64_t &hi)
{
    if (d.run_len > 0) {
        lo = 2 * p * d.run_len;
        mid = lo + d.run_len < d.n ? lo + d.run_len : d.n;
        hi = mid + d.run_len < d.n ? mid + d.run_len : d.n;
    } else if (d.bounds == nullptr) {
        lo = d.pair[0];
        mid = d.pair[1];
        hi = d.pair[2];
    } else {
        lo = d.bounds[2 * p];
        mid = d.bounds[2 * p + 1];
        hi = d.bounds[2 * p + 2];
    }
}

/* Which pair tile g belongs to, and that pair's first tile. */
__device__ inline int64_t pass_tile_pair(const pass_desc &d, int64_t g, int64_t &first)
{
    if (d.run_len > 0) { /* tile indices are grid indices: 32 bits suffice */
        uint32_t p = (uint32_t)g / (uint32_t)d.tiles_per_pair;
        first = (int64_t)p * d.tiles_per_pair;
        return p;
    }
    if (d.tile0 == nullptr) { /* the one pair */
        first = 0;
        return 0;
    }
    int64_t lo = 0, hi = d.npairs - 1; /* last p with tile0[p] <= g */
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        if (d.tile0[mid] <= g)
            lo = mid;
        else
            hi = mid - 1;
    }
    first = d.tile0[lo];
    return lo;
}

/* Everything a block needs about its tile: the pair's position, and the output
 * range [k0, k1) relative to the pair. */
struct tile_place {
    int64_t lo, mid, hi; /* the pair */
    int64_t k0, k1;      /* this tile's outputs, relative to lo */
    int64_t g;           /* tile index */
    bool last_of_pair;   /* the tile ends its pair's output (place_tile) */
};

__device__ inline tile_place place_tile(const pass_desc &d, int64_t g)
{
    tile_place t;
    int64_t first;
    int64_t p = pass_tile_pair(d, g, first);
    pass_pair(d, p, t.lo, t.mid, t.hi);
    int64_t len = t.hi - t.lo;
    t.g = g;
    t.k0 = (g - first) * d.tile;
    t.k1 = t.k0 + d.tile < len ? t.k0 + d.tile : len;
    t.last_of_pair = t.k1 == len;
    return t;
}

#endif
