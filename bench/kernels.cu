/*
 * bench/kernels.cu - the kernel benchmark (make bench, on a GPU machine).
 *
 * Merge: for 2^20, 2^24, 2^26, 2^28 int32 keys and 2^24, 2^27 int64 keys (random,
 * split into two sorted halves), each of our kernels, cub::DeviceMerge::MergeKeys and
 * thrust::merge, against a device-to-device cudaMemcpy of the same bytes. Sort: for
 * 2^24, 2^26, 2^28 int32 and 2^24, 2^27 int64 random keys, our merge sort (with each
 * merge kernel in its passes), cub::DeviceMergeSort::SortKeys,
 * cub::DeviceRadixSort::SortKeys and thrust::sort.
 *
 * Pairs (bench/pairs.cuh): key-value merges and sorts, u64 and u32 keys with u32
 * values at 2^24 and 2^28 pairs, against CUB's MergePairs, merge sort and radix sort.
 *
 * Every result is checked against the CPU engine (the pairs' against CUB's radix
 * sort, stable). Times are CUDA-event medians of
 * REPEAT runs after WARMUP runs, all in the same process. Merge bandwidth counts
 * bytes read plus written (2 n sizeof(key)), as the copy's does.
 * Usage: kernels [max_log2_int32 (default 28)]
 *                [merge|sort|pairs|pmerge|psort|crossover|lanes|stages|all]
 *                [ways, for stages: 2 or 4]
 *        env: REPEAT (default 9), BENCH_TSV (also write the results to this file)
 * "crossover" times the three kernels from 2^12 keys up: --kernel=auto's table;
 * "lanes" the tiled merge with each way of finding its co-ranks (cuda/partition.cu);
 * "stages" the block sort and each merge pass of one sort, timed apart; "pmerge" and
 * "psort" the pairs' merges or sorts alone.
 * Paths the size would not pick are forced through cuda/testing.h.
 */
#include <cub/device/device_merge.cuh>
#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <thrust/execution_policy.h>
#include <thrust/merge.h>
#include <thrust/sort.h>

#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "../core/sort/cpu.h"
#include "../cuda/device.cuh"
#include "../cuda/gpu.h"
#include "../cuda/kernels.cuh"
#include "../cuda/testing.h"

#include "bench_check.cuh"

static int REPEAT = 9;
static const int WARMUP = 2;
static FILE *tsv;

struct less_op {
    template <typename K> __host__ __device__ bool operator()(const K &a, const K &b) const
    {
        return a < b;
    }
};

/* Median of REPEAT timed runs of fn (after WARMUP), in seconds. */
template <typename F> static double time_median(F fn)
{
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    for (int i = 0; i < WARMUP; i++)
        fn();
    std::vector<float> ms;
    for (int i = 0; i < REPEAT; i++) {
        CHECK(cudaEventRecord(a));
        fn();
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float t;
        CHECK(cudaEventElapsedTime(&t, a, b));
        ms.push_back(t);
    }
    CHECK(cudaGetLastError());
    std::sort(ms.begin(), ms.end());
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms[ms.size() / 2] * 1e-3;
}

/* Random keys straight on the device: a hash of the index and a seed. */
template <typename K> __global__ void fill_random(K *x, int64_t n, uint64_t seed)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint64_t z = (uint64_t)i * 0x9E3779B97F4A7C15ULL + seed;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    x[i] = (K)z;
}

template <typename K> static void fill(K *d, int64_t n, uint64_t seed)
{
    fill_random<K><<<(unsigned)((n + 255) / 256), 256>>>(d, n, seed);
    CHECK(cudaGetLastError());
}

/* Device room for n keys, with the 16 bytes of slack the kernels' chunked loads
 * may read past the end. */
template <typename K> static K *device_keys(int64_t n)
{
    K *d;
    CHECK(cudaMalloc(&d, n * sizeof(K) + 16));
    return d;
}

template <typename K> static void radix_sort_device(K *d, K *tmp, int64_t n)
{
    size_t bytes = 0;
    CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, d, tmp, n));
    void *t;
    CHECK(cudaMalloc(&t, bytes));
    CHECK(cub::DeviceRadixSort::SortKeys(t, bytes, d, tmp, n));
    CHECK(cudaMemcpy(d, tmp, n * sizeof(K), cudaMemcpyDeviceToDevice));
    CHECK(cudaFree(t));
}

/* n random keys (from seed) in d_in, each half sorted: a merge's input. */
template <typename K> static void sorted_halves(K *d_in, K *d_tmp, int64_t n, uint64_t seed)
{
    fill<K>(d_in, n, seed);
    radix_sort_device<K>(d_in, d_tmp, n / 2);
    radix_sort_device<K>(d_in + n / 2, d_tmp, n - n / 2);
}

template <typename K> static bool same(const K *d_out, const std::vector<K> &want)
{
    std::vector<K> got(want.size());
    CHECK(cudaMemcpy(got.data(), d_out, want.size() * sizeof(K), cudaMemcpyDeviceToHost));
    return got == want;
}

static void row(const char *op, const char *what, int lg, int bits, double s, double bytes,
                double copy_s, double keys, bool ok)
{
    double gbs = bytes / s * 1e-9;
    if (copy_s > 0)
        printf("%-6s %-26s 2^%-2d int%-2d %9.1f us %8.1f GB/s %6.1f%% of copy  %s\n", op, what,
               lg, bits, s * 1e6, gbs, 100.0 * copy_s / s, ok ? "ok" : "WRONG");
    else
        printf("%-6s %-26s 2^%-2d int%-2d %9.1f us %8.2f Gkeys/s                %s\n", op, what,
               lg, bits, s * 1e6, keys / s * 1e-9, ok ? "ok" : "WRONG");
    if (tsv)
        fprintf(tsv, "%s\t%s\t%d\t%d\t%.3f\t%.2f\t%.4f\t%s\n", op, what, lg, bits, s * 1e6,
                copy_s > 0 ? gbs : keys / s * 1e-9, copy_s > 0 ? copy_s / s : 0.0,
                ok ? "ok" : "WRONG");
    fflush(stdout);
}

/* A two-way merge on the device: n random keys (from seed) in d_in, each half
 * sorted; room for the output and for a pass's co-ranks and run bounds; and, when
 * asked for, the CPU engine's merge of the halves to check against. Freed with it. */
template <typename K> struct merge_input {
    int64_t n;
    K *d_in, *d_out;
    int64_t *d_cor, *d_meta;
    std::vector<K> want;

    merge_input(int64_t n_, uint64_t seed, bool check) : n(n_)
    {
        d_in = device_keys<K>(n);
        d_out = device_keys<K>(n);
        sorted_halves<K>(d_in, d_out, n, seed); /* d_out as the sort's scratch */
        CHECK(cudaMalloc(&d_cor, coranks_needed<K>(n, 1) * sizeof(int64_t)));
        CHECK(cudaMalloc(&d_meta, 64 * sizeof(int64_t)));
        if (check) {
            std::vector<K> host(n);
            want.resize(n);
            CHECK(cudaMemcpy(host.data(), d_in, n * sizeof(K), cudaMemcpyDeviceToHost));
            gm_cpu_merge2(sizeof(K) == 4 ? GM_I32 : GM_I64, host.data(), n / 2,
                          host.data() + n / 2, n - n / 2, want.data(), 0, 16);
        }
    }
    ~merge_input()
    {
        CHECK(cudaFree(d_in));
        CHECK(cudaFree(d_out));
        CHECK(cudaFree(d_cor));
        CHECK(cudaFree(d_meta));
    }

    /* One merge pass with kernel k, timed; with a check, the first run's output is
     * compared with want into *ok. */
    double time_pass(gm_kernel k, bool *ok)
    {
        int64_t bounds[3] = { 0, n / 2, n };
        gm_status st;
        pass_desc d{};
        d.n = n;
        d.npairs = 1;
        d.dependent = true; /* as cuda/merge.cu's merges */
        auto run = [&] {
            if (merge_pass<K>(k, d_in, d_out, d, bounds, d_meta, (K)0, d_cor, 0, &st)) {
                fprintf(stderr, "%s\n", st.msg);
                exit(1);
            }
        };
        if (!want.empty()) {
            CHECK(cudaMemset(d_out, 0xA5, n * sizeof(K)));
            run();
            *ok = same(d_out, want);
        }
        return time_median(run);
    }
};

template <typename K> static void bench_merge(int lg)
{
    int64_t n = (int64_t)1 << lg, m = n / 2;
    int bits = (int)sizeof(K) * 8;
    merge_input<K> in(n, 12345 + lg, true);
    K *d_in = in.d_in, *d_out = in.d_out;
    const std::vector<K> &want = in.want;
    double bytes = 2.0 * n * sizeof(K);

    double copy_s = time_median([&] {
        CHECK(cudaMemcpyAsync(d_out, d_in, n * sizeof(K), cudaMemcpyDeviceToDevice));
    });
    row("merge", "cudaMemcpy D2D", lg, bits, copy_s, bytes, copy_s, n, true);

    const gm_kernel kernels[3] = { GM_KERNEL_BASIC, GM_KERNEL_TILED, GM_KERNEL_CIRCULAR };
    for (gm_kernel k : kernels) {
        bool ok = false;
        double t = in.time_pass(k, &ok);
        char name[64];
        snprintf(name, sizeof name, "gpumerge %s", gm_kernel_name(k));
        row("merge", name, lg, bits, t, bytes, copy_s, n, ok);
        if (k == GM_KERNEL_TILED && gm_facts.dependent_launch) {
            /* the same with each kernel launched after the previous one ends */
            gm_gpu_choices serial = {};
            serial.serial_launches = 1;
            gm_gpu_force(&serial);
            t = in.time_pass(k, &ok);
            gm_gpu_force(nullptr);
            row("merge", "gpumerge tiled serial", lg, bits, t, bytes, copy_s, n, ok);
        }
    }

    size_t temp_bytes = 0;
    CHECK(cub::DeviceMerge::MergeKeys(nullptr, temp_bytes, d_in, m, d_in + m, n - m, d_out,
                                      less_op()));
    void *temp;
    CHECK(cudaMalloc(&temp, temp_bytes));
    auto cub_run = [&] {
        CHECK(cub::DeviceMerge::MergeKeys(temp, temp_bytes, d_in, m, d_in + m, n - m, d_out,
                                          less_op()));
    };
    CHECK(cudaMemset(d_out, 0xA5, n * sizeof(K)));
    cub_run();
    bool ok = same(d_out, want);
    row("merge", "cub::DeviceMerge", lg, bits, time_median(cub_run), bytes, copy_s, n, ok);
    CHECK(cudaFree(temp));

    auto thrust_run = [&] {
        thrust::merge(thrust::device, d_in, d_in + m, d_in + m, d_in + n, d_out);
    };
    CHECK(cudaMemset(d_out, 0xA5, n * sizeof(K)));
    thrust_run();
    ok = same(d_out, want);
    row("merge", "thrust::merge", lg, bits, time_median(thrust_run), bytes, copy_s, n, ok);
}

/* A sort on the device: n random keys (from seed) in d_src, kept; the two buffers
 * sort_on_device works in (d_a, filled from d_src by refresh) and its scratch.
 * Freed with it. */
template <typename K> struct sort_input {
    int64_t n;
    K *d_src, *d_a, *d_b;
    int64_t *d_cor;

    sort_input(int64_t n_, uint64_t seed) : n(n_)
    {
        d_src = device_keys<K>(n);
        d_a = device_keys<K>(n);
        d_b = device_keys<K>(n);
        fill<K>(d_src, n, seed);
        CHECK(cudaMalloc(&d_cor, sort_scratch_entries<K>(n) * sizeof(int64_t)));
    }
    ~sort_input()
    {
        CHECK(cudaFree(d_src));
        CHECK(cudaFree(d_a));
        CHECK(cudaFree(d_b));
        CHECK(cudaFree(d_cor));
    }
    void refresh()
    {
        CHECK(cudaMemcpyAsync(d_a, d_src, n * sizeof(K), cudaMemcpyDeviceToDevice));
    }
};

template <typename K> static void bench_sort(int lg)
{
    int64_t n = (int64_t)1 << lg;
    int bits = (int)sizeof(K) * 8;
    sort_input<K> in(n, 777 + lg);
    K *d_src = in.d_src, *d_a = in.d_a, *d_b = in.d_b;
    std::vector<K> want(n), scratch(n);
    CHECK(cudaMemcpy(want.data(), d_src, n * sizeof(K), cudaMemcpyDeviceToHost));
    gm_keys hk = { want.data(), n, sizeof(K) == 4 ? GM_I32 : GM_I64 };
    void *sp = scratch.data();
    gm_cpu_sort(&hk, &sp, 0, 16);
    if (hk.data != want.data())
        memcpy(want.data(), hk.data, n * sizeof(K));

    /* Every run sorts a fresh copy: the copy is timed apart and subtracted. */
    auto refresh = [&] { in.refresh(); };
    double copy_s = time_median(refresh);

    const gm_kernel kernels[3] = { GM_KERNEL_BASIC, GM_KERNEL_TILED, GM_KERNEL_CIRCULAR };
    for (gm_kernel k : kernels) {
        gm_status st;
        K *out = nullptr;
        int passes = 0;
        auto run = [&] {
            refresh();
            if (sort_on_device<K>(d_a, d_b, n, (K)0, k, in.d_cor, &out, &passes, 0, &st)) {
                fprintf(stderr, "%s\n", st.msg);
                exit(1);
            }
        };
        run();
        bool ok = same(out, want);
        double t = time_median(run) - copy_s;
        char name[64];
        snprintf(name, sizeof name, "gpumerge sort/%s", gm_kernel_name(k));
        row("sort", name, lg, bits, t, 0, 0, n, ok);
        if (k == GM_KERNEL_TILED) /* the same with two-way, then four-way passes only */
            for (int ways : { 2, 4 }) {
                gm_gpu_choices forced = {};
                forced.sort_ways = ways;
                gm_gpu_force(&forced);
                run();
                ok = same(out, want);
                t = time_median(run) - copy_s;
                gm_gpu_force(nullptr);
                snprintf(name, sizeof name, "gpumerge sort/tiled%d", ways);
                row("sort", name, lg, bits, t, 0, 0, n, ok);
            }
    }

    size_t temp_bytes = 0;
    CHECK(cub::DeviceMergeSort::SortKeys(nullptr, temp_bytes, d_a, n, less_op()));
    void *temp;
    CHECK(cudaMalloc(&temp, temp_bytes));
    auto ms_run = [&] {
        refresh();
        CHECK(cub::DeviceMergeSort::SortKeys(temp, temp_bytes, d_a, n, less_op()));
    };
    ms_run();
    bool ok = same(d_a, want);
    row("sort", "cub::DeviceMergeSort", lg, bits, time_median(ms_run) - copy_s, 0, 0, n, ok);
    CHECK(cudaFree(temp));

    temp_bytes = 0;
    CHECK(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, d_a, d_b, n));
    CHECK(cudaMalloc(&temp, temp_bytes));
    auto rs_run = [&] {
        refresh();
        CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, d_a, d_b, n));
    };
    rs_run();
    ok = same(d_b, want);
    row("sort", "cub::DeviceRadixSort", lg, bits, time_median(rs_run) - copy_s, 0, 0, n, ok);
    CHECK(cudaFree(temp));

    auto th_run = [&] {
        refresh();
        thrust::sort(thrust::device, d_a, d_a + n);
    };
    th_run();
    ok = same(d_a, want);
    row("sort", "thrust::sort", lg, bits, time_median(th_run) - copy_s, 0, 0, n, ok);
}

#include "pairs.cuh"

/* Where a sort's time goes: the block sort and each merge pass of one real sort
 * (sort.cu's plan, its stages with events between them), medians over REPEAT
 * sorts; ways 2 or 4 forces the passes' ways. Also the run to profile with ncu (it
 * launches nothing else). */
template <typename K> static void bench_stages(int lg, int ways)
{
    int64_t n = (int64_t)1 << lg;
    int bits = (int)sizeof(K) * 8;
    sort_input<K> in(n, 31337 + lg);
    gm_gpu_choices forced = {};
    forced.sort_ways = ways;
    gm_gpu_force(&forced);
    sort_plan plan = plan_sort<K>(GM_KERNEL_TILED, n);
    std::vector<cudaEvent_t> marks(plan.passes + 2);
    for (cudaEvent_t &e : marks)
        CHECK(cudaEventCreate(&e));
    std::vector<std::vector<float>> ms(plan.passes + 1);
    gm_status st;
    K *out = nullptr;
    for (int rep = 0; rep < WARMUP + REPEAT; rep++) {
        in.refresh();
        CHECK(cudaEventRecord(marks[0]));
        int rc = launch_block_sort<K>(in.d_a, in.d_b, n, (K)0, 0, &st);
        CHECK(cudaEventRecord(marks[1]));
        K *src = in.d_b, *dst = in.d_a;
        for (int i = 0; !rc && i < plan.passes; i++) {
            rc = sort_pass<K>(plan, i, GM_KERNEL_TILED, src, dst, n, (K)0, in.d_cor, 0, &st);
            CHECK(cudaEventRecord(marks[i + 2]));
            std::swap(src, dst);
        }
        if (rc) {
            fprintf(stderr, "%s\n", st.msg);
            exit(1);
        }
        out = src;
        CHECK(cudaEventSynchronize(marks[plan.passes + 1]));
        for (int i = 0; rep >= WARMUP && i <= plan.passes; i++) {
            float t;
            CHECK(cudaEventElapsedTime(&t, marks[i], marks[i + 1]));
            ms[i].push_back(t);
        }
    }
    gm_gpu_force(nullptr);
    std::vector<K> got(n);
    CHECK(cudaMemcpy(got.data(), out, n * sizeof(K), cudaMemcpyDeviceToHost));
    bool ok = std::is_sorted(got.begin(), got.end());
    double total = 0;
    printf("stages 2^%d int%d (sorted: %s)\n", lg, bits, ok ? "ok" : "WRONG");
    for (int i = 0; i <= plan.passes; i++) {
        std::sort(ms[i].begin(), ms[i].end());
        double t = ms[i][ms[i].size() / 2] * 1e-3;
        total += t;
        if (i == 0)
            printf("  block sort (tile %d)       %9.1f us\n", tiles<K>::SORT_TILE, t * 1e6);
        else
            printf("  pass %2d, %d-way (runs of %10lld) %9.1f us  %6.1f GB/s\n", i,
                   plan.ways[i - 1], (long long)plan.run[i - 1], t * 1e6,
                   2.0 * n * sizeof(K) / t * 1e-9);
        if (tsv)
            fprintf(tsv, "stage\t%d\t%d\t%d\t%.3f\n", i, lg, bits, t * 1e6);
    }
    printf("  total %9.1f us, %.2f G keys/s\n", total * 1e6, n / total * 1e-9);
    for (cudaEvent_t e : marks)
        CHECK(cudaEventDestroy(e));
}

/* --kernel=auto's table: the three kernels over a range of sizes. */
template <typename K> static void bench_crossover(int lg)
{
    merge_input<K> in((int64_t)1 << lg, 99 + lg, false);
    printf("crossover 2^%-2d int%d:", lg, (int)sizeof(K) * 8);
    const gm_kernel kernels[3] = { GM_KERNEL_BASIC, GM_KERNEL_TILED, GM_KERNEL_CIRCULAR };
    for (gm_kernel k : kernels) {
        double t = in.time_pass(k, nullptr);
        printf("  %s %8.1f us", gm_kernel_name(k), t * 1e6);
        if (tsv)
            fprintf(tsv, "crossover\t%s\t%d\t%d\t%.3f\n", gm_kernel_name(k), lg,
                    (int)sizeof(K) * 8, t * 1e6);
    }
    printf("\n");
}

/* The ways of finding the tiled kernel's co-ranks (cuda/partition.cu): the tiled
 * merge with each, over a range of sizes; choice's thresholds in cuda/policy.cuh
 * come from this. */
template <typename K> static void bench_lanes(int lg)
{
    int64_t n = (int64_t)1 << lg;
    merge_input<K> in(n, 4242 + lg, true);
    printf("lanes 2^%-2d int%d (%lld tiles):", lg, (int)sizeof(K) * 8,
           (long long)((n + tiles<K>::TILED_TILE - 1) / tiles<K>::TILED_TILE));
    const struct {
        gm_partition p;
        const char *name;
    } ways[] = { { GM_PARTITION_NONE, "self" },
                 { GM_PARTITION_LANES_1, "1" },
                 { GM_PARTITION_LANES_8, "8" },
                 { GM_PARTITION_LANES_32, "32" } };
    for (const auto &w : ways) {
        gm_gpu_choices forced = {};
        forced.partition = w.p;
        gm_gpu_force(&forced);
        bool ok = false;
        double t = in.time_pass(GM_KERNEL_TILED, &ok);
        gm_gpu_force(nullptr);
        printf("  %4s: %8.1f us %s", w.name, t * 1e6, ok ? "ok" : "WRONG");
        if (tsv)
            fprintf(tsv, "lanes\t%s\t%d\t%d\t%.3f\t%s\n", w.name, lg, (int)sizeof(K) * 8,
                    t * 1e6, ok ? "ok" : "WRONG");
    }
    printf("\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int max_lg = argc > 1 ? atoi(argv[1]) : 28;
    const char *what = argc > 2 ? argv[2] : "all";
    if (getenv("REPEAT"))
        REPEAT = atoi(getenv("REPEAT"));
    if (getenv("BENCH_TSV"))
        tsv = fopen(getenv("BENCH_TSV"), "w");
    gm_gpu_info info;
    gm_status st;
    if (gm_gpu_probe(&info, &st)) {
        fprintf(stderr, "%s\n", st.msg);
        return 1;
    }
    printf("device: %s, %d SMs, compute %d.%d; median of %d after %d warm-up runs\n",
           info.name, info.sm_count, info.cc_major, info.cc_minor, REPEAT, WARMUP);
    if (strcmp(what, "crossover") == 0) {
        for (int lg = 12; lg <= max_lg; lg += 2) {
            bench_crossover<int32_t>(lg);
            bench_crossover<int64_t>(lg);
        }
        return 0;
    }
    if (strcmp(what, "stages") == 0) {
        int ways = argc > 3 ? atoi(argv[3]) : 0;
        bench_stages<int32_t>(max_lg, ways);
        bench_stages<int64_t>(max_lg - 1, ways);
        return 0;
    }
    if (strcmp(what, "lanes") == 0) {
        for (int lg = 18; lg <= max_lg; lg += 2)
            bench_lanes<int32_t>(lg);
        for (int lg = 17; lg <= max_lg - 1; lg += 2)
            bench_lanes<int64_t>(lg);
        return 0;
    }
    if (strcmp(what, "pairs") == 0 || strcmp(what, "pmerge") == 0 ||
        strcmp(what, "psort") == 0) {
        bench_pairs(max_lg, strcmp(what, "psort") != 0, strcmp(what, "pmerge") != 0);
        return 0;
    }
    bool merges = strcmp(what, "sort") != 0, sorts = strcmp(what, "merge") != 0;
    for (int lg : { 20, 24, 26, 28 })
        if (merges && lg <= max_lg)
            bench_merge<int32_t>(lg);
    for (int lg : { 24, 27 })
        if (merges && lg <= max_lg - 1)
            bench_merge<int64_t>(lg);
    for (int lg : { 24, 26, 28 })
        if (sorts && lg <= max_lg)
            bench_sort<int32_t>(lg);
    for (int lg : { 24, 27 })
        if (sorts && lg <= max_lg - 1)
            bench_sort<int64_t>(lg);
    if (strcmp(what, "all") == 0)
        bench_pairs(max_lg);
    if (tsv)
        fclose(tsv);
    return 0;
}
