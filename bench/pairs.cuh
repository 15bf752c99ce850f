/*
 * bench/pairs.cuh - the kernel benchmark's key-value part (`kernels 28 pairs`;
 * kernels.cu includes it after its helpers): merges and sorts of pairs with
 * uint64 keys (the records path's key prefixes) or uint32 keys, and uint32 values
 * (line indices), at 2^24 and 2^28 pairs. Our merge of two sorted runs
 * (merge_pairs_on_device, each kernel) against cub::DeviceMerge::MergePairs and a
 * copy of the same bytes; our sort (sort_pairs_on_device: passes as by size, then
 * two-way and four-way forced) against cub::DeviceMergeSort::SortPairs and
 * cub::DeviceRadixSort::SortPairs.
 *
 * Values are the pairs' input positions, so the radix sort's result (stable) is the
 * one right answer for both, and every result is compared with it on the device.
 * Merge bandwidth counts keys and values read and written.
 */
#include <thrust/equal.h>

/* Values 0, 1, 2, ... */
__global__ void iota_u32(uint32_t *v, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] = (uint32_t)i;
}

/* n pairs: src (kept), two work buffers a and b, and the right answer want; the
 * co-rank scratch and one CUB scratch for everything. Freed with it. */
template <typename K> struct pairs_input {
    int64_t n;
    K *k_src, *k_a, *k_b, *k_want;
    uint32_t *v_src, *v_a, *v_b, *v_want;
    int64_t *d_cor;
    void *temp = nullptr;
    size_t temp_bytes = 0;

    /* Random keys from seed (each half sorted if halves: a merge's input). */
    pairs_input(int64_t n_, uint64_t seed, bool halves) : n(n_)
    {
        K **ks[4] = { &k_src, &k_a, &k_b, &k_want };
        uint32_t **vs[4] = { &v_src, &v_a, &v_b, &v_want };
        for (int i = 0; i < 4; i++) {
            *ks[i] = device_keys<K>(n);
            CHECK(cudaMalloc(vs[i], n * sizeof(uint32_t) + 16));
        }
        int64_t ncor = sort_scratch_entries<K>(n), mcor = coranks_needed<K>(n, 1);
        CHECK(cudaMalloc(&d_cor, (ncor > mcor ? ncor : mcor) * sizeof(int64_t)));
        if (halves)
            sorted_halves<K>(k_src, k_a, n, seed);
        else
            fill<K>(k_src, n, seed);
        iota_u32<<<(unsigned)((n + 255) / 256), 256>>>(v_src, n);
        CHECK(cudaGetLastError());
        /* CUB's scratch: the most any of its calls here asks */
        size_t b[3] = { 0, 0, 0 };
        CHECK(cub::DeviceRadixSort::SortPairs(nullptr, b[0], k_src, k_want, v_src, v_want, n));
        CHECK(cub::DeviceMergeSort::SortPairs(nullptr, b[1], k_a, v_a, n, less_op()));
        CHECK(cub::DeviceMerge::MergePairs(nullptr, b[2], k_src, v_src, n / 2, k_src + n / 2,
                                           v_src + n / 2, n - n / 2, k_a, v_a, less_op()));
        temp_bytes = std::max(b[0], std::max(b[1], b[2]));
        CHECK(cudaMalloc(&temp, temp_bytes));
        size_t tb = temp_bytes;
        CHECK(cub::DeviceRadixSort::SortPairs(temp, tb, k_src, k_want, v_src, v_want, n));
        CHECK(cudaDeviceSynchronize());
    }
    ~pairs_input()
    {
        for (void *p : { (void *)k_src, (void *)k_a, (void *)k_b, (void *)k_want, (void *)v_src,
                         (void *)v_a, (void *)v_b, (void *)v_want, (void *)d_cor, temp })
            CHECK(cudaFree(p));
    }
    /* The work buffers a from src. */
    void refresh()
    {
        CHECK(cudaMemcpyAsync(k_a, k_src, n * sizeof(K), cudaMemcpyDeviceToDevice));
        CHECK(cudaMemcpyAsync(v_a, v_src, n * sizeof(uint32_t), cudaMemcpyDeviceToDevice));
    }
    /* Whether (k, v) is the right answer. */
    bool right(const K *k, const uint32_t *v) const
    {
        return thrust::equal(thrust::device, k, k + n, k_want) &&
               thrust::equal(thrust::device, v, v + n, v_want);
    }
};

static const char *pairs_label(int key_bytes)
{
    return key_bytes == 8 ? "u64+u32" : "u32+u32";
}

static void pairs_row(const char *op, const char *what, int lg, int key_bytes, double s,
                      double bytes, double copy_s, bool ok)
{
    double n = (double)((int64_t)1 << lg);
    if (copy_s > 0)
        printf("%-6s %-28s 2^%-2d %s %9.1f us %8.1f GB/s %6.1f%% of copy  %s\n", op, what, lg,
               pairs_label(key_bytes), s * 1e6, bytes / s * 1e-9, 100.0 * copy_s / s,
               ok ? "ok" : "WRONG");
    else
        printf("%-6s %-28s 2^%-2d %s %9.1f us %8.2f Gpairs/s               %s\n", op, what, lg,
               pairs_label(key_bytes), s * 1e6, n / s * 1e-9, ok ? "ok" : "WRONG");
    if (tsv)
        fprintf(tsv, "%s\t%s\t%d\t%s\t%.3f\t%.2f\t%.4f\t%s\n", op, what, lg,
                pairs_label(key_bytes), s * 1e6, copy_s > 0 ? bytes / s * 1e-9 : n / s * 1e-9,
                copy_s > 0 ? copy_s / s : 0.0, ok ? "ok" : "WRONG");
    fflush(stdout);
}

template <typename K> static void bench_pairs_merge(int lg)
{
    int64_t n = (int64_t)1 << lg, m = n / 2;
    pairs_input<K> in(n, 2024 + lg, true);
    double bytes = 2.0 * n * (sizeof(K) + sizeof(uint32_t));
    double copy_s = time_median([&] { in.refresh(); });
    pairs_row("pmerge", "cudaMemcpy D2D", lg, sizeof(K), copy_s, bytes, copy_s, true);

    double best = 0;
    const gm_kernel kernels[3] = { GM_KERNEL_BASIC, GM_KERNEL_TILED, GM_KERNEL_CIRCULAR };
    for (gm_kernel k : kernels) {
        gm_status st;
        auto run = [&] {
            if (merge_pairs_on_device<K, uint32_t>(in.k_src, in.v_src, m, n - m, in.k_a, in.v_a,
                                                   (K)0, k, in.d_cor, 0, &st)) {
                fprintf(stderr, "%s\n", st.msg);
                exit(1);
            }
        };
        CHECK(cudaMemset(in.k_a, 0xA5, n * sizeof(K)));
        run();
        bool ok = in.right(in.k_a, in.v_a);
        double t = time_median(run);
        char name[64];
        snprintf(name, sizeof name, "gpumerge %s", gm_kernel_name(k));
        pairs_row("pmerge", name, lg, sizeof(K), t, bytes, copy_s, ok);
        best = best == 0 || t < best ? t : best;
    }

    auto cub_run = [&] {
        size_t tb = in.temp_bytes;
        CHECK(cub::DeviceMerge::MergePairs(in.temp, tb, in.k_src, in.v_src, m, in.k_src + m,
                                           in.v_src + m, n - m, in.k_a, in.v_a, less_op()));
    };
    CHECK(cudaMemset(in.k_a, 0xA5, n * sizeof(K)));
    cub_run();
    bool ok = in.right(in.k_a, in.v_a);
    double t = time_median(cub_run);
    pairs_row("pmerge", "cub::DeviceMerge::MergePairs", lg, sizeof(K), t, bytes, copy_s, ok);
    printf("pmerge 2^%d %s: our best merge is %.2fx MergePairs (target 1.1x)\n", lg,
           pairs_label(sizeof(K)), t / best);
}

template <typename K> static void bench_pairs_sort(int lg)
{
    int64_t n = (int64_t)1 << lg;
    pairs_input<K> in(n, 4048 + lg, false);
    /* Every run sorts a fresh copy: the copy is timed apart and subtracted. */
    double copy_s = time_median([&] { in.refresh(); });

    double ours = 0;
    for (int ways : { 0, 2, 4 }) {
        gm_status st;
        K *ko = nullptr;
        uint32_t *vo = nullptr;
        gm_gpu_choices forced = {};
        forced.sort_ways = ways;
        gm_gpu_force(&forced);
        auto run = [&] {
            in.refresh();
            if (sort_pairs_on_device<K, uint32_t>(in.k_a, in.v_a, in.k_b, in.v_b, n, (K)0,
                                                  GM_KERNEL_TILED, in.d_cor, &ko, &vo, 0, &st)) {
                fprintf(stderr, "%s\n", st.msg);
                exit(1);
            }
        };
        run();
        bool ok = in.right(ko, vo);
        double t = time_median(run) - copy_s;
        gm_gpu_force(nullptr);
        char name[64];
        snprintf(name, sizeof name, ways ? "gpumerge sort/tiled%d" : "gpumerge sort/tiled", ways);
        pairs_row("psort", name, lg, sizeof(K), t, 0, 0, ok);
        if (ways == 0)
            ours = t;
    }

    auto ms_run = [&] {
        in.refresh();
        size_t tb = in.temp_bytes;
        CHECK(cub::DeviceMergeSort::SortPairs(in.temp, tb, in.k_a, in.v_a, n, less_op()));
    };
    ms_run();
    bool ok = in.right(in.k_a, in.v_a);
    double ms = time_median(ms_run) - copy_s;
    pairs_row("psort", "cub::DeviceMergeSort::SortPairs", lg, sizeof(K), ms, 0, 0, ok);

    auto rs_run = [&] {
        in.refresh();
        size_t tb = in.temp_bytes;
        CHECK(cub::DeviceRadixSort::SortPairs(in.temp, tb, in.k_a, in.k_b, in.v_a, in.v_b, n));
    };
    rs_run();
    ok = in.right(in.k_b, in.v_b);
    double rs = time_median(rs_run) - copy_s;
    pairs_row("psort", "cub::DeviceRadixSort::SortPairs", lg, sizeof(K), rs, 0, 0, ok);
    printf("psort 2^%d %s: our sort is %.2fx DeviceMergeSort (target 1.3x), %.2fx DeviceRadixSort\n",
           lg, pairs_label(sizeof(K)), ms / ours, rs / ours);
}

/* The pairs' part of the benchmark, up to 2^max_lg pairs: merges, sorts or both. */
static void bench_pairs(int max_lg, bool merges = true, bool sorts = true)
{
    for (int lg : { 24, 28 })
        if (lg <= max_lg) {
            if (merges) {
                bench_pairs_merge<uint64_t>(lg);
                bench_pairs_merge<uint32_t>(lg);
            }
            if (sorts) {
                bench_pairs_sort<uint64_t>(lg);
                bench_pairs_sort<uint32_t>(lg);
            }
        }
}
