/*
 * common.cuh - what every kernel file shares: checked CUDA calls, key-type overloads
 * of the one co-rank and sequential merge (core/corank.h), the description of a
 * merge pass, the tuning table, and the block-level load and store routines.
 *
 * A "merge pass" merges neighbouring runs of one array, pairwise: runs 2p and 2p+1
 * of src become run p of dst, at the same positions. A two-way merge is a pass with
 * one pair; a k-way merge is ceil(log2 k) passes (a tree of two-way merges); the
 * sort's merge passes double the run length each time. The output of every pair is
 * cut into tiles of `tile` keys; tile g belongs to one pair, so no block ever
 * straddles two merges. (The sort's four-way pass, merge_multi.cu, merges runs in
 * fours instead, described by a multi_desc.)
 */
#ifndef GM_CUDA_COMMON_CUH
#define GM_CUDA_COMMON_CUH

#include <cuda_pipeline.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "../core/corank.h"
#include "../core/types.h"

/* ------------------------------------------------------------------ errors */

/* Fills st from a CUDA error ("CUDA error: WHAT: STRING") and returns GM_ECUDA, or
 * GM_EDEVMEM for an allocation that failed for lack of memory. Defined in gpu.cu. */
int gm_cuda_fail(gm_status *st, cudaError_t err, const char *what);

/* Evaluates a CUDA call; on failure returns its status from the enclosing function. */
#define GM_CUDA(call, st)                                                       \
    do {                                                                        \
        cudaError_t gm_err_ = (call);                                           \
        if (gm_err_ != cudaSuccess)                                             \
            return gm_cuda_fail((st), gm_err_, #call);                          \
    } while (0)

/* After a launch of kernel `what`: the launch error, if any, naming the kernel. */
#define GM_LAUNCHED(what, st)                                                   \
    do {                                                                        \
        cudaError_t gm_err_ = cudaGetLastError();                               \
        if (gm_err_ != cudaSuccess)                                             \
            return gm_cuda_fail((st), gm_err_, (what));                         \
    } while (0)

/*
 * Programmatic dependent launch (sm_90 and later): a kernel launched as dependent
 * may be scheduled while the kernel before it in the stream finishes, so its blocks
 * are in place when that one ends instead of a launch later. Every kernel starts
 * with gm_after_previous(): it waits there until the previous kernel has finished
 * and its writes are visible, then lets the next kernel be scheduled (for a kernel
 * not launched as dependent, both are no-ops). Only a merge's merge kernel is
 * launched as dependent, on its partition (pass_desc.dependent): 2^24 int32 keys
 * merged in 51.8 us against 54.3 on an H200; the sort's passes launched so ran
 * slower (12.2 ms against 11.4 at 2^28 int32 keys, 1.95 against 1.54 at 2^24 int64:
 * why, not established), so they are not. Older devices never are.
 */
__device__ __forceinline__ void gm_after_previous()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaGridDependencySynchronize();
    cudaTriggerProgrammaticLaunchCompletion();
#endif
}

/* Launches kernel<<<grid, block, smem, s>>>(args...), as a dependent launch if
 * `dependent` and the device has them; returns the launch's error. */
template <typename... P, typename... A>
cudaError_t gm_launch(bool dependent, void (*kernel)(P...), dim3 grid, dim3 block, size_t smem,
                      cudaStream_t s, A &&...args);

/* GM_LAUNCH(what, st, dependent, kernel, grid, block, smem, stream, args...): the
 * launch, and on failure its status from the enclosing function, naming kernel
 * `what`. */
#define GM_LAUNCH(what, st, ...)                                                \
    do {                                                                        \
        cudaError_t gm_err_ = gm_launch(__VA_ARGS__);                           \
        if (gm_err_ == cudaSuccess)                                             \
            gm_err_ = cudaGetLastError();                                       \
        if (gm_err_ != cudaSuccess)                                             \
            return gm_cuda_fail((st), gm_err_, (what));                         \
    } while (0)

/* Sets attribute ATTR of KERNEL to value the first time a launcher asks (kernel
 * attributes last for the process): the carve-out and the shared memory beyond
 * 48 KB that the kernels' launchers need. */
template <auto KERNEL, cudaFuncAttribute ATTR> int set_attribute_once(int value, gm_status *st)
{
    static bool done;
    if (!done) {
        GM_CUDA(cudaFuncSetAttribute(KERNEL, ATTR, value), st);
        done = true;
    }
    return GM_OK;
}

/* ------------------------------------------------------------------ keys */

/* The one co-rank and sequential merge, by key type (templates call these). */
__host__ __device__ inline int64_t corank(int64_t k, const int32_t *a, int64_t m,
                                          const int32_t *b, int64_t n, int32_t mask)
{
    return gm_corank_i32(k, a, m, b, n, mask);
}
__host__ __device__ inline int64_t corank(int64_t k, const int64_t *a, int64_t m,
                                          const int64_t *b, int64_t n, int64_t mask)
{
    return gm_corank_i64(k, a, m, b, n, mask);
}
__host__ __device__ inline void merge_seq(const int32_t *a, int64_t m, const int32_t *b,
                                          int64_t n, int64_t i, int64_t j, int32_t *c,
                                          int64_t count, int32_t mask)
{
    gm_merge_seq_i32(a, m, b, n, i, j, c, count, mask);
}
__host__ __device__ inline void merge_seq(const int64_t *a, int64_t m, const int64_t *b,
                                          int64_t n, int64_t i, int64_t j, int64_t *c,
                                          int64_t count, int64_t mask)
{
    gm_merge_seq_i64(a, m, b, n, i, j, c, count, mask);
}

/* Whether probe i is past the co-rank of output k (the partition kernel's rounds). */
__host__ __device__ inline int corank_past(int64_t i, int64_t k, const int32_t *a,
                                           const int32_t *b, int32_t mask)
{
    return gm_corank_past_i32(i, k, a, b, mask);
}
__host__ __device__ inline int corank_past(int64_t i, int64_t k, const int64_t *a,
                                           const int64_t *b, int64_t mask)
{
    return gm_corank_past_i64(i, k, a, b, mask);
}

/* The same with 32-bit positions, for tiles in shared memory. */
__host__ __device__ inline int corank_tile(int k, const int32_t *a, int m, const int32_t *b,
                                           int n, int32_t mask)
{
    return gm_corank_i32_t(k, a, m, b, n, mask);
}
__host__ __device__ inline int corank_tile(int k, const int64_t *a, int m, const int64_t *b,
                                           int n, int64_t mask)
{
    return gm_corank_i64_t(k, a, m, b, n, mask);
}

/* The search's probe and narrowing by position type: 64-bit positions in global
 * memory, 32-bit ones in shared memory (the same pieces of core/corank.h). */
__host__ __device__ inline int64_t corank_probe(int64_t lo, int64_t hi, int lanes, int l)
{
    return gm_corank_probe_i64(lo, hi, lanes, l);
}
__host__ __device__ inline int corank_probe(int lo, int hi, int lanes, int l)
{
    return gm_corank_probe_i32_t(lo, hi, lanes, l);
}
__host__ __device__ inline void corank_narrow(int64_t *lo, int64_t *hi, int lanes, int f)
{
    gm_corank_narrow_i64(lo, hi, lanes, f);
}
__host__ __device__ inline void corank_narrow(int *lo, int *hi, int lanes, int f)
{
    gm_corank_narrow_i32_t(lo, hi, lanes, f);
}
__host__ __device__ inline int corank_past(int i, int k, const int32_t *a, const int32_t *b,
                                           int32_t mask)
{
    return gm_corank_past_i32_t(i, k, a, b, mask);
}
__host__ __device__ inline int corank_past(int i, int k, const int64_t *a, const int64_t *b,
                                           int64_t mask)
{
    return gm_corank_past_i64_t(i, k, a, b, mask);
}

/* The co-rank (relative to a) of output k of the merge of a and b, known to lie in
 * [lo, hi], searched by a group of LANES neighbouring lanes of one warp (lane: this
 * thread's place in the group); every lane of the group returns it. Positions are
 * of type I: int64_t for the partition kernels (merge_tiled.cu), which search
 * global memory, int for the circular kernel, which searches its rings. With step
 * s > 1, the search is over positions i s alone: lo, hi and the result count steps,
 * and the probes of every search over the pair fall on the same few keys
 * (merge_tiled.cu's coarse partition). */
template <typename K, int LANES, typename I>
__device__ inline I corank_by_group_in(const K *a, const K *b, I k, I lo, I hi, K mask, int lane,
                                       I step = 1)
{
    static_assert(LANES >= 1 && LANES <= 32 && (LANES & (LANES - 1)) == 0, "lanes: 2^i <= 32");
    const unsigned group =
        LANES == 32 ? ~0u : ((1u << LANES) - 1) << ((threadIdx.x & 31) & ~(LANES - 1));
    while (lo < hi) {
        I i = corank_probe(lo, hi, LANES, lane);
        bool past = i > hi || corank_past(i * step, k, a, b, mask);
        /* Probes rise with the lane and "past" with the probe: the lanes not past
         * are a prefix of the group. */
        int f = LANES == 1 ? !past : LANES - __popc(__ballot_sync(group, past) & group);
        corank_narrow(&lo, &hi, LANES, f);
    }
    return lo;
}

/* ------------------------------------------------------------------ tuning */

/*
 * The tuning table: block shape per key type (compile time: it sizes shared
 * memory and unrolled loops) and, per device, the grid of the circular kernel,
 * whose blocks stay resident (filled in from the device's properties by gpu.cu).
 *
 *   THREADS  threads per block of the basic and circular kernels
 *   ITEMS    keys each thread merges per tile; odd, so the staging writes of a warp
 *            (thread t writes from t * ITEMS) fall in distinct shared-memory banks
 *   TILE     keys per tile of the basic and circular kernels = THREADS * ITEMS
 *   TILED_ROUNDS, TILED_SPAN  the tiled kernel's block merges TILED_SPAN keys (the
 *            tile of its passes, with one partition entry each): TILED_ROUNDS
 *            rounds of TILED_TILE keys through one staging tile (one round: staged
 *            in place)
 *   TILED_THREADS, TILED_TILE  the tiled kernel's block: GM_*_TILED_SCALE times as
 *            many threads, ITEMS keys each
 *   SORT_TILE the block sort's tile, GM_SORT_SCALE basic tiles, a whole number of
 *            tiled tiles too, so every sort run is a whole number of merge tiles
 *   CIRC_THREADS, CIRC_ITEMS, CIRC_TILE  the circular kernel's block and tile; its
 *            shared memory is five tiles (two doubled rings and a staging tile), and
 *            must fit the 64 KB a block may have on sm_75
 *   TILED_MIN_BLOCKS  resident tiled blocks per multiprocessor the compiler must
 *            allow for (caps registers: 8 blocks of 256 threads = 32 registers)
 *   MULTI_THREADS, MULTI_ITEMS, MULTI_TILE  the sort's four-way block (GM_*_MULTI_FOLD)
 *   MULTI_MIN_BLOCKS, MULTI_PIPELINED  its register cap, and whether it loads its
 *            next chunk while it merges (GM_*_MULTI_MIN_BLOCKS, GM_*_MULTI_PIPELINED)
 *
 * Measured on an H200 with bench/tune.sh (bench/RESULTS.md has the runs). The
 * tiled kernel, 2^28 int32 keys: 256 x 15 in 617 us (82.5% of copy), 128 x 17 in
 * 665, 128 x 15 in 680, 128 x 13 in 704, 128 x 11 in 757; int64 keeps half the
 * keys per thread so its tile has about the same bytes (256 x 7: 646 us at 2^27).
 * With 32 registers either way, shared memory decides how many blocks are
 * resident (two tiles' worth per block), and larger blocks pay the per-tile
 * costs (the tile's description, the barriers) over more keys. The basic kernel
 * keeps 128 x ITEMS. The circular kernel (merge_circular.cu): see its GM_*_CIRC_*
 * below.
 *
 * ITEMS then went from 15 / 7 to 17 / 9 for the sort's sake (bench/RESULTS.md,
 * `kernels 28 sort` and `merge` on an H200): its block-sort tile grew from 7680 /
 * 3584 keys to 8704 / 4608, past 2^13 / 2^12, so a sort of 2^28 int32 or 2^27
 * int64 keys takes seven four-way passes and a two-way one where it took eight
 * four-way, and 2^24 one two-way pass fewer: 2^28 int32 sorted at 25.24 G keys/s
 * against 24.58, 2^27 int64 13.34 against 12.98, 2^24 int32 24.43 against 22.85,
 * 2^24 int64 12.23 against 10.88; merges the same within noise (2^27 int64 576 us
 * against 586). 19 / 11 was no better (25.28 / 13.12 G keys/s), nor int64's
 * four-way block unfolded (13.22).
 */
#ifndef GM_I32_THREADS /* -D overrides are for tuning experiments (bench/tune.sh) */
#define GM_I32_THREADS 128
#endif
#ifndef GM_I32_ITEMS
#define GM_I32_ITEMS 17
#endif
#ifndef GM_I64_THREADS
#define GM_I64_THREADS 128
#endif
#ifndef GM_I64_ITEMS
#define GM_I64_ITEMS 9
#endif
/* The circular kernel's block, five tiles of shared memory. From bench/tune.sh
 * variants on an H200 (2^28 int32 / 2^27 int64 keys merged): 128 x 15 / 128 x 11 in
 * 858 / 717 us, 256 x 11 / 256 x 5 in 873 / 821, 128 x 23 / 128 x 7 in 948 / 722,
 * 256 x 7 / 256 x 3 in 999 / 986. */
#ifndef GM_I32_CIRC_THREADS
#define GM_I32_CIRC_THREADS 128
#endif
#ifndef GM_I32_CIRC_ITEMS
#define GM_I32_CIRC_ITEMS 15
#endif
#ifndef GM_I64_CIRC_THREADS
#define GM_I64_CIRC_THREADS 128
#endif
#ifndef GM_I64_CIRC_ITEMS
#define GM_I64_CIRC_ITEMS 11
#endif
/* The tiled kernel's block: SCALE basic blocks of threads, merging ROUNDS tiles of
 * theirs (through one staging tile, so that a block's shared memory is ROUNDS + 1
 * tiles; one round stages in place, so one tile). From bench/tune.sh variants on an
 * H200, 2^28 int32 / 2^27 int64 keys merged: scale 2, one round (256 threads, as
 * before rounds) 589.8 / 615.1 us; scale 1, two rounds 590.9 / 596.7; scale 2, two
 * rounds 601.0 / 595.9; scale 1, four rounds 629.6 / 603.9. Two rounds of half the
 * threads hold half the staging tile, and so more blocks; spans of more keys (fewer
 * partition entries) did not pay for themselves. Later, with one round staged in
 * place (bench/RESULTS.md): int32 scale 2 575 us against 578 staged; scale 4 (512
 * threads, half the partition entries) 576; int64 scale 2, one round in place 587
 * against 585 with scale 1, two rounds. With the coarse partition (below) int64
 * keys take scale 2, one round in place too: the window needs the shared memory
 * the staging tile held. */
#ifndef GM_I32_TILED_SCALE
#define GM_I32_TILED_SCALE 2
#endif
#ifndef GM_I32_TILED_ROUNDS
#define GM_I32_TILED_ROUNDS 1
#endif
#ifndef GM_I64_TILED_SCALE
#define GM_I64_TILED_SCALE 2
#endif
#ifndef GM_I64_TILED_ROUNDS
#define GM_I64_TILED_ROUNDS 1
#endif
/* The tiled kernel's coarse partition (merge_tiled.cu): the partition finds each
 * tile's co-rank only to within one step of TILED_SPAN / STEPS keys, probing keys
 * at whole steps alone, and the block loads a window up to two steps wider than
 * its slices and finds the exact place in shared memory; 0: exact co-ranks, as the
 * other kernels' partitions. From bench/tune.sh variants on an H200 (`kernels 28
 * merge`, bench/RESULTS.md; 2^28 int32 keys, CUB 629-635 us): exact 573.5-574.4
 * us; steps of 1088 keys (STEPS 4) 542.0-546.2 with one lane a tile, 544.8-547.5
 * with two, 545.3 with four; 544 keys (8) 550.7 with one lane; 272 (16) 796 on an
 * H100 where 544 took 766-778; 1450 (3: not a whole number of steps a tile, so
 * b's probes no longer fall on the same keys for every tile) 602.8. int64 keys, a
 * one-round block of 256 threads (GM_I64_TILED_SCALE 2, ROUNDS 1), 2^27 keys:
 * exact (and two rounds of 128) 575-577 us; steps of 576 keys (4) 543.9, of 288
 * (8) 550.3-551.3. */
#ifndef GM_I32_TILED_STEPS
#define GM_I32_TILED_STEPS 4
#endif
#ifndef GM_I64_TILED_STEPS
#define GM_I64_TILED_STEPS 4
#endif
#ifndef GM_TILED_MIN_BLOCKS
#define GM_TILED_MIN_BLOCKS 8
#endif
/* Lanes of the partition kernel per tile: 32 up to this many tiles, then 8 up to
 * the next, then the bracketed partition (merge_tiled.cu). From `kernels 28 lanes`
 * on an H200 (tiled tiles of 3840 int32 keys): 2^22 keys (1093 tiles) merged in
 * 20.8 us with 32 lanes, 22.0 with 8, 25.7 with one; 2^24 (4370 tiles) in 52.0 us
 * with 8, 53.8 with 4, 57.3 with one or bracketed, 59.5 with 32; past that many
 * lanes cost bandwidth the merge needs, and from 2^26 (17477 tiles) bracketed is
 * best: 2^28 merged in 591 us against 614 with one lane (the fastest before it),
 * 2^27 int64 in 615 against 642. int64 keys measured the same. Measured again with
 * the bracketed partition's one lane a tile (same tool, later): 2^24 51.4 us with 8
 * lanes, 56.8 bracketed; 2^26 161.9 bracketed, 165.8 with one lane, 180.8 with 8. */
/* Up to this many tiles the tiled kernel's blocks find their own co-ranks (two
 * warps of 32 lanes each), with no partition kernel before them: a launch and a
 * round trip saved, against a search every block waits for. From `kernels 28
 * lanes` on an H200: 2^20 int32 keys (274 tiles) 10.0 us against 12.9 with the
 * best partition; 2^22 (1093 tiles) 19.0 against 19.2; 2^21 int64 (1171 tiles)
 * 21.3 against 20.0; 2^24 int32 (4370 tiles) 73 against 55. */
#ifndef GM_TILED_SELF_SEARCH_MAX
#define GM_TILED_SELF_SEARCH_MAX 1024
#endif
#ifndef GM_PARTITION_32_LANES_MAX
#define GM_PARTITION_32_LANES_MAX 2048
#endif
#ifndef GM_PARTITION_8_LANES_MAX
#define GM_PARTITION_8_LANES_MAX 8192
#endif
/* The block sort's tile, in basic tiles: one block of SCALE * THREADS threads sorts
 * SCALE * TILE keys (its buffer must fit the 48 KB of static shared memory a block
 * may have). Each doubling saves the sort a merge
 * pass over memory for one more round in shared memory; 8 measured slower than 4
 * (20.3 against 21.1 G keys/s at 2^28 int32): 1024-thread blocks, one per SM. */
#ifndef GM_SORT_SCALE
#define GM_SORT_SCALE 4
#endif
/* Sample gaps per block of the four-way pass (merge_multi.cu): a block walks about
 * GAPS samples' worth of output (GAPS / 4 tiles) in chunks of at most a tile. */
#ifndef GM_MULTI_GAPS
#define GM_MULTI_GAPS 32
#endif
/* The four-way pass's block: 256 threads (two basic blocks) folded into FOLD times
 * fewer threads with FOLD times the keys each (and one more, to keep ITEMS odd):
 * fewer co-rank searches per key, fewer threads to hide latency. Samples: every
 * run is sampled OVERSAMPLE times per quarter tile (finer samples fill the chunks
 * better, and cost more searches). From `kernels 28 stages` variants on an H200 (2^28 int32,
 * 2^27 int64 sorts): int32 keys 256 x 15 in 11.38 ms, 128 x 31 in 12.29;
 * int64 256 x 7 in 11.55, 128 x 15 in 10.63; OVERSAMPLE 2 slower for both (12.19,
 * 12.38 ms). */
#ifndef GM_I32_MULTI_FOLD
#define GM_I32_MULTI_FOLD 1
#endif
#ifndef GM_I64_MULTI_FOLD
#define GM_I64_MULTI_FOLD 2
#endif
#ifndef GM_MULTI_OVERSAMPLE
#define GM_MULTI_OVERSAMPLE 1
#endif
/* Resident four-way blocks a multiprocessor the compiler must allow for (a cap on
 * registers, as GM_TILED_MIN_BLOCKS for the tiled kernel): as many as their shared
 * memory lets reside on sm_90 (35 / 39 KB a block), so registers never cost a
 * block there. */
#ifndef GM_I32_MULTI_MIN_BLOCKS
#define GM_I32_MULTI_MIN_BLOCKS 6
#endif
#ifndef GM_I64_MULTI_MIN_BLOCKS
#define GM_I64_MULTI_MIN_BLOCKS 5
#endif
/* Whether a four-way block loads its next chunk while it merges the current one
 * (merge_multi.cu). It pays where few warps are resident: int64's five blocks of
 * 128 threads, 2^27 keys sorted in 9.61 ms against 9.78 unpipelined; int32's six of
 * 256 lose by it, 2^28 keys in 10.55 ms against 10.20 (H200, `kernels 28 stages`,
 * bench/RESULTS.md). */
#ifndef GM_I32_MULTI_PIPELINED
#define GM_I32_MULTI_PIPELINED 0
#endif
#ifndef GM_I64_MULTI_PIPELINED
#define GM_I64_MULTI_PIPELINED 1
#endif
constexpr int gm_pow2_at_least(int x)
{
    return x <= 1 ? 1 : 2 * gm_pow2_at_least((x + 1) / 2);
}
/* The table's shape for one key type, from its basic block (THREADS x ITEMS). */
template <int THREADS_, int ITEMS_, int MULTI_FOLD, int MULTI_MIN_BLOCKS_, bool MULTI_PIPELINED_,
          int CIRC_THREADS_, int CIRC_ITEMS_, int TILED_SCALE, int TILED_ROUNDS_,
          int TILED_STEPS>
struct tuning_shape {
    static constexpr int THREADS = THREADS_, ITEMS = ITEMS_;
    static constexpr int TILE = THREADS * ITEMS;
    static constexpr int CIRC_THREADS = CIRC_THREADS_, CIRC_ITEMS = CIRC_ITEMS_;
    static constexpr int CIRC_TILE = CIRC_THREADS * CIRC_ITEMS;
    static constexpr int TILED_THREADS = THREADS * TILED_SCALE;
    static constexpr int TILED_TILE = TILED_THREADS * ITEMS;
    static constexpr int TILED_ROUNDS = TILED_ROUNDS_;
    static constexpr int TILED_SPAN = TILED_TILE * TILED_ROUNDS;
    static constexpr int TILED_STEP = TILED_STEPS > 0 ? TILED_SPAN / TILED_STEPS : 1;
    static constexpr int TILED_MIN_BLOCKS = GM_TILED_MIN_BLOCKS;
    static constexpr int MULTI_THREADS = 2 * THREADS / MULTI_FOLD; /* 256 folded */
    static constexpr int MULTI_ITEMS = ITEMS * MULTI_FOLD + MULTI_FOLD - 1;
    static constexpr int MULTI_TILE = MULTI_THREADS * MULTI_ITEMS;
    static constexpr int MULTI_MIN_BLOCKS = MULTI_MIN_BLOCKS_;
    static constexpr bool MULTI_PIPELINED = MULTI_PIPELINED_;
    static constexpr int SORT_THREADS = THREADS * GM_SORT_SCALE;
    static constexpr int SORT_TILE = SORT_THREADS * ITEMS;
    static_assert(SORT_TILE % TILED_SPAN == 0, "sort runs are whole tiled tiles");
};
template <typename K> struct tuning;
template <>
struct tuning<int32_t> : tuning_shape<GM_I32_THREADS, GM_I32_ITEMS, GM_I32_MULTI_FOLD,
                                       GM_I32_MULTI_MIN_BLOCKS, GM_I32_MULTI_PIPELINED,
                                       GM_I32_CIRC_THREADS, GM_I32_CIRC_ITEMS,
                                       GM_I32_TILED_SCALE, GM_I32_TILED_ROUNDS,
                                       GM_I32_TILED_STEPS> {};
template <>
struct tuning<int64_t> : tuning_shape<GM_I64_THREADS, GM_I64_ITEMS, GM_I64_MULTI_FOLD,
                                       GM_I64_MULTI_MIN_BLOCKS, GM_I64_MULTI_PIPELINED,
                                       GM_I64_CIRC_THREADS, GM_I64_CIRC_ITEMS,
                                       GM_I64_TILED_SCALE, GM_I64_TILED_ROUNDS,
                                       GM_I64_TILED_STEPS> {};

/* Threads one multiprocessor holds: 1024 on sm_75 (Turing), 2048 on the others we
 * build for. __launch_bounds__ minimums are capped by it. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
#define GM_SM_THREADS 1024
#else
#define GM_SM_THREADS 2048
#endif
#define GM_MIN_BLOCKS(blocks, threads) \
    ((blocks) * (threads) <= GM_SM_THREADS ? (blocks) : GM_SM_THREADS / (threads))

/* Per-device part of the table (gpu.cu fills it in once). */
struct device_tuning {
    int sm_count;
    int circular_blocks_per_sm[2]; /* resident blocks of the circular kernel, int32 and
                                      int64 keys */
    int circular_blocks;           /* > 0: the circular kernel's grid, forced (tests) */
    int partition_lanes;        /* 0: by the number of tiles (partition_lanes_for); else
                                   1, 4, 8 or 32 lanes a tile, 2: bracketed, or -1: no
                                   partition kernel, each tiled block searches for
                                   itself (the benchmark and GM_PARTITION_LANES set it
                                   to compare) */
    int dependent_launch;       /* dependent launches (gm_launch) possible: compute
                                   capability 9.0 and later, and GM_NO_DEPENDENT_LAUNCH
                                   unset */
    int sort_ways;              /* 0: the sort's tiled passes by sort_pass_ways; 2 or 4:
                                   two-way only, or four-way whenever three runs or
                                   more are left (the benchmark sets it to compare) */
};
extern device_tuning gm_device_tuning;

/* Sets the forced choices of gm_device_tuning (sort_ways, partition_lanes,
 * circular_blocks) from GM_SORT_WAYS, GM_PARTITION_LANES and GM_CIRCULAR_BLOCKS,
 * ignoring values outside the ones each accepts (gpu.cu). */
void gm_tuning_from_environment();

template <typename... P, typename... A>
cudaError_t gm_launch(bool dependent, void (*kernel)(P...), dim3 grid, dim3 block, size_t smem,
                      cudaStream_t s, A &&...args)
{
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = s;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = dependent && gm_device_tuning.dependent_launch ? 1 : 0;
    return cudaLaunchKernelEx(&cfg, kernel, static_cast<A &&>(args)...);
}

/* ------------------------------------------------------------------ passes */

struct pass_desc {
    int64_t n;             /* keys in the array */
    int64_t run_len;       /* > 0: run r is [r * run_len, min((r + 1) * run_len, n)) */
    const int64_t *bounds; /* run_len == 0: run r is [bounds[r], bounds[r + 1]) (device;
                              2 * npairs + 1 entries: an odd last run gets an empty b) */
    const int64_t *tile0;  /* run_len == 0: first tile of pair p, tile0[npairs] = ntiles */
    int64_t pair[3];       /* run_len == 0 and bounds null: the one pair, [pair[0],
                              pair[1]) and [pair[1], pair[2]) (no copy to the device) */
    bool coarse;           /* the partition's co-ranks are coarse (merge_tiled.cu):
                              entry g is the first position of the step of
                              tuning<K>::TILED_STEP keys holding tile g's co-rank;
                              else exact */
    bool dependent;        /* the merge kernel launched as dependent on the partition
                              (see gm_after_previous) */
    int64_t npairs;
    int64_t tile;          /* output keys per tile */
    int64_t tiles_per_pair;/* run_len > 0: tiles of every full pair */
    int64_t ntiles;
};

/* A four-way pass of the sort (merge_multi.cu): runs of run_len keys (the last may
 * be short), merged in groups of four; every run is sampled each `stride` keys. */
struct multi_desc {
    int64_t n, run_len;
    int64_t groups;            /* ceil(runs / 4) */
    int64_t stride;            /* sample stride: a quarter chunk (merge_multi.cu) */
    int64_t samples_per_run;   /* of a full run */
    int64_t entries_per_group; /* splits listed per group: 4 samples_per_run + 1 */
    int64_t blocks_per_group;
    int gaps;                  /* sample gaps a block walks (GM_MULTI_GAPS) */
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
    bool last_of_pair;
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

/* ------------------------------------------------------------------ block I/O */

/* Loads cnt keys of a into s. Coalesced (thread t loads t, t + THREADS, ...), and
 * every load is issued before the first store to shared memory, so a thread has
 * ITEMS loads in flight rather than one. */
template <typename K, int THREADS, int ITEMS>
__device__ inline void load_tile(K *s, const K *a, int64_t cnt)
{
    K v[ITEMS];
#pragma unroll
    for (int u = 0; u < ITEMS; u++) {
        int64_t x = threadIdx.x + u * THREADS;
        v[u] = x < cnt ? a[x] : K(0);
    }
#pragma unroll
    for (int u = 0; u < ITEMS; u++) {
        int64_t x = threadIdx.x + u * THREADS;
        if (x < cnt)
            s[x] = v[u];
    }
}

/*
 * N slices of global memory copied into one shared-memory buffer as the 16-byte
 * chunks that cover them (cp.async on sm_80 and later): chunk copies are 16-byte
 * aligned at both ends, VEC keys per copy instruction, and a slice then starts
 * some keys into its first chunk; each slice's chunks follow the one before's.
 * The chunks cover at most VEC - 1 keys before a slice and VEC - 1 after, so the
 * buffer needs the slices' keys plus 2 N (VEC - 1); reading them stays inside the
 * array, whose allocation has 16 bytes to spare at its end. The tiled kernel loads
 * a tile's two slices so, the four-way kernel a chunk's four.
 */
template <typename K, int N> struct chunked_slices {
    static constexpr int VEC = 16 / sizeof(K);
    const K *from[N];  /* first chunk of each slice, in global memory */
    int chunks[N + 1]; /* 16-byte chunks before each slice; chunks[N]: all */
    int at[N];         /* where each slice starts in the buffer */

    chunked_slices() = default;
    /* Slice q: len[q] keys from p[q]. */
    __device__ chunked_slices(const K *const (&p)[N], const int (&len)[N])
    {
#pragma unroll
        for (int q = 0; q < N; q++)
            add(q, p[q], len[q]);
    }

    /* Lays out slice q, len keys from p, after slices 0 .. q - 1. */
    __device__ void add(int q, const K *p, int len)
    {
        if (q == 0)
            chunks[0] = 0;
        int off = len > 0 ? (int)(((uintptr_t)p / sizeof(K)) & (VEC - 1)) : 0;
        from[q] = p - off;
        at[q] = chunks[q] * VEC + off;
        chunks[q + 1] = chunks[q] + (len > 0 ? (off + len + VEC - 1) / VEC : 0);
    }

    /* Starts the asynchronous copies into s, THREADS threads sharing them; the caller
     * commits the group and waits for it before reading s. */
    template <int THREADS> __device__ void fetch(K *s) const
    {
#pragma unroll 1
        for (int x = threadIdx.x; x < chunks[N]; x += THREADS) {
            const K *f = from[0];
            int first = 0; /* the slice's first chunk */
#pragma unroll
            for (int q = 1; q < N; q++)
                if (x >= chunks[q]) {
                    f = from[q];
                    first = chunks[q];
                }
            __pipeline_memcpy_async(s + x * VEC, f + (x - first) * VEC, 16);
        }
    }
};

/* Stores s[shift, shift + cnt) to out[0, cnt), coalesced. s is 16-byte aligned,
 * and out - shift lies in out's array; where out - shift is 16-byte aligned too,
 * the keys go 16 bytes per thread and store, with the partial vectors at either
 * end key by key; else all of them key by key. (A caller whose output may start
 * anywhere stages its keys from shift = its misalignment, in keys, so that the
 * stores can be vectors: merge_multi.cu.) The loops are kept rolled: unrolled,
 * their 16-byte values in flight cost the tiled kernel twice its registers (and
 * so half its resident blocks). */
template <typename K, int THREADS>
__device__ inline void store_tile(K *out, const K *s, int cnt, int shift = 0)
{
    constexpr int PER_VEC = 16 / sizeof(K);
    K *base = out - shift;
    int end = shift + cnt, v0 = end, v1 = end; /* keys [v0, v1) go as vectors */
    if (((uintptr_t)base & 15) == 0) {
        v0 = (shift + PER_VEC - 1) / PER_VEC * PER_VEC;
        v0 = v0 < end ? v0 : end;
        v1 = end / PER_VEC * PER_VEC;
        v1 = v1 > v0 ? v1 : v0;
#pragma unroll 1
        for (int v = v0 / PER_VEC + threadIdx.x; v < v1 / PER_VEC; v += THREADS)
            ((int4 *)base)[v] = ((const int4 *)s)[v];
    }
#pragma unroll 1
    for (int x = shift + threadIdx.x; x < v0; x += THREADS)
        base[x] = s[x];
#pragma unroll 1
    for (int x = v1 + threadIdx.x; x < end; x += THREADS)
        base[x] = s[x];
}

/*
 * The sequential merge of PMPP 12.2 as every tiled kernel runs it, one thread's
 * ITEMS outputs at a time: writes outputs to out[0, ITEMS) of the stable merge of
 * s[pa, a_end) and s[pb, b_end) (one shared-memory array holds both inputs). The
 * next key of each input waits in a register, so an output costs one shared-memory
 * load (the key that replaces the one taken) where the general merge_seq pays two,
 * and the loop is unrolled with no exit test: once both inputs are exhausted it
 * writes garbage that callers never store. Meanwhile it reads s[pb] for pb <= b_end
 * and s[pa] for pa < a_end + ITEMS: the caller keeps those inside an array that no
 * thread writes during the merge (racecheck counts reads whose values go unused).
 */
template <typename K, int ITEMS, bool DESC>
__device__ __forceinline__ void merge_items(const K *s, int pa, int a_end, int pb, int b_end,
                                            K *out)
{
    K ak = s[pa], bk = s[pb];
#pragma unroll
    for (int u = 0; u < ITEMS; u++) {
        bool take_b = pb < b_end && (pa >= a_end || (DESC ? ak < bk : bk < ak));
        out[u] = take_b ? bk : ak;
        pa += !take_b;
        pb += take_b;
        if (u + 1 < ITEMS) {
            K next = s[take_b ? pb : pa];
            ak = take_b ? ak : next;
            bk = take_b ? next : bk;
        }
    }
}

/* One thread's share of a merge in shared memory: outputs [k, k + ITEMS) of the
 * stable merge of a (la keys at s + a_at) with b (lb keys at s + b_at), its place
 * found by co-rank, written to out[0, ITEMS) (s readable past the slices as
 * merge_items needs). Every merge in shared memory is made of these: the tiled,
 * circular and four-way kernels' and the block sort's. */
template <typename K, int ITEMS, bool DESC>
__device__ __forceinline__ void merge_share(const K *s, int a_at, int la, int b_at, int lb,
                                            int k, K *out)
{
    int i = corank_tile(k, s + a_at, la, s + b_at, lb, DESC ? K(-1) : K(0));
    merge_items<K, ITEMS, DESC>(s, a_at + i, a_at + la, b_at + k - i, b_at + lb, out);
}

/* The heart of every tiled kernel: in s, a holds la keys from a_at and b holds lb
 * keys from b_at; thread t finds the co-rank of output k0 + t * ITEMS and merges the
 * next ITEMS outputs into stage (TILE keys from output k0 on). The caller
 * synchronizes before and after, and leaves s readable up to b_at + lb and a_at + la
 * + ITEMS (see merge_items). */
template <typename K, int ITEMS, bool DESC>
__device__ __forceinline__ void merge_tile(const K *s, int a_at, int la, int b_at, int lb,
                                           K *stage, int k0 = 0)
{
    int k = k0 + threadIdx.x * ITEMS;
    if (k < la + lb)
        merge_share<K, ITEMS, DESC>(s, a_at, la, b_at, lb, k, stage + (k - k0));
}

/* One thread's share of a merge in place: outputs [k, k + ITEMS) of the merge of a
 * (la keys at s + a_at) with b (lb keys at s + b_at), merged into registers and,
 * once every thread of the block has read its inputs, written to s[to, to + ITEMS).
 * A thread with has false merges nothing but still meets the barrier, so every
 * thread of the block calls it; the caller synchronizes before the merged keys are
 * read. */
template <typename K, int ITEMS, bool DESC>
__device__ __forceinline__ void merge_share_in_place(K *s, bool has, int a_at, int la, int b_at,
                                                     int lb, int k, int to)
{
    K r[ITEMS];
    if (has)
        merge_share<K, ITEMS, DESC>(s, a_at, la, b_at, lb, k, r);
    __syncthreads();
    if (has) {
#pragma unroll
        for (int u = 0; u < ITEMS; u++)
            s[to + u] = r[u];
    }
}

/* ------------------------------------------------------------------ launchers */

/* Host launchers of the partition kernel and of the three merge kernels
 * (merge_tiled.cu, merge_basic.cu, merge_circular.cu). Each runs over one pass
 * described by d (d.tile already set to the kernel's tile) on stream s. The
 * partition writes the co-rank of every tile's first output into coranks (room
 * for d.ntiles entries); the tiled and circular kernels read them, so merge_pass
 * launches the partition first. Return GM_OK or a CUDA error status. */
template <typename K>
int launch_partition(const K *src, const pass_desc &d, K mask, int64_t *coranks,
                     cudaStream_t s, gm_status *st);
template <typename K>
int launch_merge_basic(const K *src, K *dst, const pass_desc &d, K mask, cudaStream_t s,
                       gm_status *st);
template <typename K>
int launch_merge_tiled(const K *src, K *dst, const pass_desc &d, K mask,
                       const int64_t *coranks, cudaStream_t s, gm_status *st);
/* Whether a tiled pass of ntiles tiles skips the partition: launch_merge_tiled with
 * coranks null, and every block searches for itself. */
bool tiled_searches_itself(int64_t ntiles);
/* Whether a tiled pass of ntiles tiles has a coarse partition (pass_desc.coarse). */
template <typename K> bool tiled_partition_coarse(int64_t ntiles);
template <typename K>
int launch_merge_circular(const K *src, K *dst, const pass_desc &d, K mask,
                          const int64_t *coranks, cudaStream_t s, gm_status *st);

/* The circular kernel's "tile" is a block's whole segment: n keys spread over the
 * blocks that fit on the device at once, in whole tiles. */
template <typename K> int64_t circular_segment(int64_t n);
/* Resident blocks per multiprocessor of the circular kernel. */
template <typename K> int circular_occupancy();

/* Arrays passed to the launchers below need 16 bytes of slack after their last key:
 * the tiled kernel copies whole 16-byte chunks. */

/* Runs one merge pass with the given kernel (never AUTO): fills in d's tiling for
 * that kernel (for irregular runs, host_bounds holds the run boundaries on the
 * host and d.bounds/d.tile0 point at device scratch it is copied to), then
 * launches. Defined in gpu.cu. */
template <typename K>
int merge_pass(gm_kernel kernel, const K *src, K *dst, pass_desc d, const int64_t *host_bounds,
               int64_t *dev_scratch, K mask, int64_t *coranks, cudaStream_t s, gm_status *st);

/* The sort's four-way pass (merge_multi.cu): runs 4q .. 4q+3 of run_len keys of src
 * (the last ones may be short or missing) become run q of dst. splits is device
 * scratch of multi_scratch_entries(n, run_len) entries. */
template <typename K>
int launch_merge_multi(const K *src, K *dst, int64_t n, int64_t run_len, K mask,
                       int64_t *splits, cudaStream_t s, gm_status *st);
template <typename K> int64_t multi_scratch_entries(int64_t n, int64_t run_len);

/* The sort's four-way passes pay off on large sorts only: below this many bytes of
 * keys the two-way passes partly run in the L2 cache (50 MB on an H100 or H200),
 * while the four-way merge, two merges in shared memory per pass, is bound by the
 * multiprocessors' instructions wherever its data lies. From `kernels 28 sort` on
 * an H200 (bench/RESULTS.md): 2^24 int32 keys (64 MB) 880 us four-way against 748
 * two-way, 2^24 int64 (128 MB) 1562 against 1527, 2^26 int32 (256 MB) 2792 against
 * 2915, 2^28 int32 11112 against 12085. */
#ifndef GM_MULTI_MIN_BYTES
#define GM_MULTI_MIN_BYTES ((int64_t)1 << 28)
#endif

/* Ways of the sort's next merge pass over runs of run_len (of n keys) with kernel:
 * 4 or 2. */
template <typename K> inline int sort_pass_ways(gm_kernel kernel, int64_t n, int64_t run_len)
{
    if (kernel != GM_KERNEL_TILED || n - run_len <= run_len) /* two runs: two-way */
        return 2;
    if (gm_device_tuning.sort_ways)
        return gm_device_tuning.sort_ways;
    return n * (int64_t)sizeof(K) >= GM_MULTI_MIN_BYTES ? 4 : 2;
}

/* Entries of int64 scratch sort_on_device needs for n keys. */
template <typename K> int64_t sort_scratch_entries(int64_t n);

/* What sort_on_device did, stage by stage, for the benchmark: events recorded
 * before the block sort and after it and every pass (created by the caller), and
 * each pass's ways and input run length. */
struct sort_trace {
    static constexpr int MAX_PASSES = 64; /* two-way passes of 2^64 keys */
    cudaEvent_t marks[MAX_PASSES + 2];
    int ways[MAX_PASSES];
    int64_t run[MAX_PASSES];
};

/* The whole device sort (gpu.cu): block sort of d_keys into d_tmp, then merge
 * passes with kernel (four-way passes with the tiled kernel); *out gets the buffer
 * holding the result, *passes the number of merge passes. d_cor needs room for
 * sort_scratch_entries(n) entries. trace, if not null, is filled in as it goes. */
template <typename K>
int sort_on_device(K *d_keys, K *d_tmp, int64_t n, K mask, gm_kernel kernel, int64_t *d_cor,
                   K **out, int *passes, cudaStream_t s, gm_status *st,
                   sort_trace *trace = nullptr);

/* Block sort (mergesort.cu): sorts every TILE keys of src into dst. */
template <typename K>
int launch_block_sort(const K *src, K *dst, int64_t n, K mask, cudaStream_t s, gm_status *st);

#endif
