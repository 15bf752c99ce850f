/*
 * merge_multi.cuh - the geometry of the sort's four-way merge pass
 * (merge_multi.cu): runs of run_len keys merged four at a time, each sampled
 * every `stride` keys, and where each run, its samples and its group's list of
 * splits lie.
 */
#ifndef GM_MERGE_MULTI_CUH
#define GM_MERGE_MULTI_CUH

#include <cstdint>

constexpr int WAYS = 4;

/* A four-way pass of the sort: runs of run_len keys (the last may
 * be short), merged in groups of four; every run is sampled each `stride` keys. */
struct multi_desc {
    int64_t n, run_len;        /* keys in the array, and in each run (multi_pass_desc) */
    int64_t groups;            /* ceil(runs / 4) */
    int64_t stride;            /* sample stride: a quarter chunk */
    int64_t samples_per_run;   /* of a full run */
    int64_t entries_per_group; /* splits listed per group: 4 samples_per_run + 1 */
    int64_t blocks_per_group;  /* blocks launched per group, gaps each (multi_pass_desc) */
    int gaps;                  /* sample gaps a block walks (choice::MULTI_GAPS) */
};

/* Where run j of group g starts (j = WAYS: where the group ends). */
__device__ inline int64_t run_start(const multi_desc &d, int64_t g, int j)
{
    int64_t x = (g * WAYS + j) * d.run_len;
    return x < d.n ? x : d.n;
}

__device__ inline int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* Keys in run j of group g. */
__device__ inline int64_t run_length(const multi_desc &d, int64_t g, int j)
{
    return run_start(d, g, j + 1) - run_start(d, g, j);
}

/* Samples of run j of group g: its keys 0, stride, 2 stride, ... */
__device__ inline int64_t run_samples(const multi_desc &d, int64_t g, int j)
{
    return ceil_div(run_length(d, g, j), d.stride);
}

/* Entries in group g's list before its last (the lengths): its samples. */
__device__ inline int64_t group_samples(const multi_desc &d, int64_t g)
{
    int64_t count = 0;
#pragma unroll
    for (int q = 0; q < WAYS; q++)
        count += run_samples(d, g, q);
    return count;
}

/* Where run j of group g's samples start in the index: samples_per_run a run. */
__device__ inline int64_t index_at(const multi_desc &d, int64_t g, int j)
{
    return (g * WAYS + j) * d.samples_per_run;
}

#endif
