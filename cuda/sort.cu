/*
 * sort.cu - gm_gpu_sort, the whole GPU merge sort in one place (after the CUDA
 * samples' mergeSort: sort small tiles in shared memory, then merge runs of growing
 * length): the block sort (block_sort.cu) makes runs of SORT_TILE keys, then each
 * merge pass merges two runs at a time (merge_pass, with the kernel --kernel
 * names) or, with the tiled kernel on large sorts, four (merge_multi.cu); -u then
 * collapses equal neighbours on the device (unique.cu).
 * sort_pairs_on_device runs the same plan over key-value pairs, stably.
 * gm_gpu_sort_device is the keys' sort on the caller's device pointer, for the
 * library's gm_sort_device.
 *
 * How a sort chooses its passes (plan_sort): a pass that leaves two runs or fewer
 * is two-way; otherwise four-way when the keys take choice::MULTI_MIN_BYTES or
 * more. Below that size two-way passes partly run in the L2 cache, while the
 * four-way merge, two merges in shared memory a pass, is bound by the
 * multiprocessors' instructions wherever its data lies.
 */
#include <string.h>

#include <utility>

#include "device.cuh"
#include "kernels.cuh"

/* Ways of the sort's pass over runs of run_len (of n keys) with kernel: 4 or 2. */
template <typename K> static int pass_ways(gm_kernel kernel, int64_t n, int64_t run_len)
{
    if (kernel != GM_KERNEL_TILED || n - run_len <= run_len) /* two runs: two-way */
        return 2;
    if (gm_forced.sort_ways == 2 || gm_forced.sort_ways == 4)
        return gm_forced.sort_ways;
    return n * (int64_t)sizeof(K) >= choice::MULTI_MIN_BYTES ? 4 : 2;
}

template <typename K> sort_plan plan_sort(gm_kernel kernel, int64_t n)
{
    sort_plan p;
    p.passes = 0;
    for (int64_t run = tiles<K>::SORT_TILE; run < n && p.passes < sort_plan::MAX_PASSES;
         p.passes++) {
        int ways = pass_ways<K>(kernel, n, run);
        p.ways[p.passes] = ways;
        p.run[p.passes] = run;
        run = n / ways < run ? n : ways * run;
    }
    return p;
}

template <typename K, typename V>
int sort_pass(const sort_plan &p, int i, gm_kernel kernel, const K *src, K *dst, int64_t n,
              K mask, int64_t *d_cor, cudaStream_t s, gm_status *st, const V *vsrc, V *vdst)
{
    if (p.ways[i] == 4)
        return launch_merge_multi<K, V>(src, dst, n, p.run[i], mask, d_cor, s, st, vsrc, vdst);
    pass_desc d{};
    d.n = n;
    d.run_len = p.run[i];
    return merge_pass<K, V>(kernel, src, dst, d, nullptr, nullptr, mask, d_cor, s, st, vsrc,
                            vdst);
}

template <typename K>
int sort_on_device(K *d_keys, K *d_tmp, int64_t n, K mask, gm_kernel kernel, int64_t *d_cor,
                   K **out, int *passes, cudaStream_t s, gm_status *st)
{
    int rc = launch_block_sort<K>(d_keys, d_tmp, n, mask, s, st);
    if (rc)
        return rc;
    sort_plan p = plan_sort<K>(kernel, n);
    K *src = d_tmp, *dst = d_keys;
    for (int i = 0; i < p.passes; i++) {
        if ((rc = sort_pass<K>(p, i, kernel, src, dst, n, mask, d_cor, s, st)))
            return rc;
        std::swap(src, dst);
    }
    *out = src;
    *passes = p.passes;
    return GM_OK;
}

template <typename K, typename V>
int sort_pairs_on_device(K *d_keys, V *d_vals, K *d_ktmp, V *d_vtmp, int64_t n, K mask,
                         gm_kernel kernel, int64_t *d_cor, K **kout, V **vout, cudaStream_t s,
                         gm_status *st)
{
    gm_kernel used = kernel == GM_KERNEL_AUTO ? GM_KERNEL_TILED : kernel;
    int rc = launch_block_sort<K, V>(d_keys, d_ktmp, n, mask, s, st, d_vals, d_vtmp);
    if (rc)
        return rc;
    sort_plan p = plan_sort<K>(used, n);
    K *src = d_ktmp, *dst = d_keys;
    V *vsrc = d_vtmp, *vdst = d_vals;
    for (int i = 0; i < p.passes; i++) {
        if ((rc = sort_pass<K, V>(p, i, used, src, dst, n, mask, d_cor, s, st, vsrc, vdst)))
            return rc;
        std::swap(src, dst);
        std::swap(vsrc, vdst);
    }
    *kout = src;
    *vout = vsrc;
    return GM_OK;
}

/* The largest of the passes' scratch: co-ranks of the two-way passes' tiles, or any
 * four-way pass's sample lists (about the same every pass: the same samples, and a
 * short last group's unused entries). */
template <typename K> int64_t sort_scratch_entries(int64_t n)
{
    int64_t two = coranks_needed<K>(n, n / tiles<K>::MIN_TILE + 1);
    int64_t four = 0;
    for (int64_t run = tiles<K>::SORT_TILE; n - run > run; run *= 4) {
        int64_t e = multi_scratch_entries<K>(n, run);
        four = e > four ? e : four;
    }
    return two > four ? two : four;
}

/* A sort whose passes use kernel `used` (never AUTO). */
template <typename K>
static int sort_on_gpu(gm_keys *keys, int reverse, int unique, gm_kernel used,
                       gm_gpu_times *times, gm_status *st)
{
    int64_t n = keys->n;
    K mask = reverse ? (K)-1 : (K)0;
    device_job<K> job;
    int rc = job.start(keys, sort_scratch_entries<K>(n), 64u << 20, st);
    if (rc)
        return rc;
    K *sorted;
    int passes;
    {
        trace_range range("gpu: sort kernels (launches)");
        rc = sort_on_device<K>(job.keys, job.other, n, mask, used, job.coranks, &sorted,
                               &passes, job.s, st);
    }
    if (rc)
        return rc;
    times->passes = passes;
    int64_t n_out = n;
    if (unique) {
        trace_range range("gpu: unique");
        K *to = sorted == job.keys ? job.other : job.keys;
        /* the co-ranks are no longer needed: one holds the count */
        if ((rc = unique_on_device<K>(sorted, to, n, job.coranks, job.mem, &n_out, job.s, st)))
            return rc;
        sorted = to;
    }
    return job.finish(keys, sorted, n_out, times, st);
}

extern "C" int gm_gpu_sort(gm_keys *keys, int reverse, int unique, gm_kernel kernel,
                           gm_gpu_times *times, gm_status *st)
{
    int rc = gm_gpu_probe(nullptr, st);
    if (rc)
        return rc;
    on_probed_device here;
    memset(times, 0, sizeof *times);
    /* The sort's passes merge many pairs at once: the tiled kernel is fastest at
     * every size (bench/RESULTS.md), so that is what auto means here. */
    gm_kernel used = kernel == GM_KERNEL_AUTO ? GM_KERNEL_TILED : kernel;
    times->kernel_used = used;
    if (keys->n == 0)
        return GM_OK;
    return keys->width == GM_I32 ? sort_on_gpu<int32_t>(keys, reverse, unique, used, times, st)
                                 : sort_on_gpu<int64_t>(keys, reverse, unique, used, times, st);
}

/* gm_gpu_sort_device: the caller's keys copied into a buffer of the engine's own
 * (the kernels need 16 bytes of slack after the keys), sorted as gm_gpu_sort
 * sorts, deduplicated with unique, copied back. */
template <typename K>
static int sort_device_keys(K *keys, int64_t n, int reverse, int unique, int64_t *n_out,
                            cudaStream_t s, gm_status *st)
{
    *n_out = n;
    if (n == 0)
        return GM_OK;
    device_buffers mem;
    K *a = nullptr, *b = nullptr, *sorted = nullptr;
    int64_t *coranks = nullptr, ncor = sort_scratch_entries<K>(n);
    int rc = check_fits(2 * (size_t)n * sizeof(K) + (size_t)ncor * 8 + (64u << 20), st);
    if (rc || (rc = mem.alloc(&a, (size_t)n, st)) || (rc = mem.alloc(&b, (size_t)n, st)) ||
        (rc = mem.alloc(&coranks, (size_t)ncor, st)))
        return rc;
    GM_CUDA(cudaMemcpyAsync(a, keys, (size_t)n * sizeof(K), cudaMemcpyDeviceToDevice, s), st);
    int passes;
    if ((rc = sort_on_device<K>(a, b, n, reverse ? (K)-1 : (K)0, GM_KERNEL_TILED, coranks,
                                &sorted, &passes, s, st)))
        return rc;
    if (unique) {
        K *to = sorted == a ? b : a;
        if ((rc = unique_on_device<K>(sorted, to, n, coranks, mem, n_out, s, st)))
            return rc;
        sorted = to;
    }
    GM_CUDA(cudaMemcpyAsync(keys, sorted, (size_t)*n_out * sizeof(K), cudaMemcpyDeviceToDevice,
                            s),
            st);
    GM_CUDA(cudaStreamSynchronize(s), st);
    return GM_OK;
}

extern "C" int gm_gpu_sort_device(void *keys, int64_t n, gm_width width, int reverse,
                                  int unique, int64_t *n_out, void *stream, gm_status *st)
{
    int rc = gm_gpu_probe(nullptr, st);
    if (rc)
        return rc;
    on_probed_device here;
    cudaStream_t s = (cudaStream_t)stream;
    return width == GM_I32
               ? sort_device_keys<int32_t>((int32_t *)keys, n, reverse, unique, n_out, s, st)
               : sort_device_keys<int64_t>((int64_t *)keys, n, reverse, unique, n_out, s, st);
}

#define GM_INSTANTIATE(K)                                                                  \
    template int sort_on_device<K>(K *, K *, int64_t, K, gm_kernel, int64_t *, K **, int *, \
                                   cudaStream_t, gm_status *);
GM_INSTANTIATE(int32_t)
GM_INSTANTIATE(int64_t)
#define GM_INSTANTIATE_KEYS(K)                                                             \
    template sort_plan plan_sort<K>(gm_kernel, int64_t);                                   \
    template int64_t sort_scratch_entries<K>(int64_t);                                     \
    template int sort_pairs_on_device<K, uint32_t>(K *, uint32_t *, K *, uint32_t *, int64_t, \
                                                   K, gm_kernel, int64_t *, K **,             \
                                                   uint32_t **, cudaStream_t, gm_status *);
GM_FOR_KEYS(GM_INSTANTIATE_KEYS)
#define GM_INSTANTIATE_PASS(K, V)                                                          \
    template int sort_pass<K, V>(const sort_plan &, int, gm_kernel, const K *, K *, int64_t, \
                                 K, int64_t *, cudaStream_t, gm_status *, const V *, V *);
GM_FOR_KEYS_AND_PAIRS(GM_INSTANTIATE_PASS)
