/*
 * gpu.cu - the GPU engine behind gpu.h: finding the device, filling in the
 * per-device tuning, device memory, copies, error mapping, and the drivers that run
 * merges and sorts as sequences of merge passes (see common.cuh).
 *
 * Merge of k runs: ceil(log2 k) passes, each merging neighbouring runs pairwise, so
 * ties keep input order. Sort: the block sort, then passes over runs of SORT_TILE
 * keys and up, merging two runs per pass (with the tiled kernel on 256 MB of keys
 * and more, four: merge_multi.cu); -u then collapses equal neighbours on the
 * device (cub::DeviceSelect::Unique). Every CUDA call and launch is checked; an
 * error comes back as a status ("CUDA error: ..."), and device buffers are
 * released on every path.
 */
#include <cub/device/device_select.cuh>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "common.cuh"
#include "gpu.h"

device_tuning gm_device_tuning;

int gm_cuda_fail(gm_status *st, cudaError_t err, const char *what)
{
    char call[64];
    size_t n = strcspn(what, "(");
    snprintf(call, sizeof call, "%.*s", (int)(n < 63 ? n : 63), what);
    cudaGetLastError(); /* clear a non-sticky error so later calls are not blamed */
    if (err == cudaErrorMemoryAllocation)
        return gm_fail(st, GM_EDEVMEM, "data does not fit in GPU memory (%s: %s)", call,
                       cudaGetErrorString(err));
    return gm_fail(st, GM_ECUDA, "CUDA error: %s (%s)", cudaGetErrorString(err), call);
}

/* ------------------------------------------------------------------ probe */

static int probe_rc = -1;
static gm_gpu_info probe_info;
static char probe_msg[512];

/* Launched never: asking for its attributes tells whether the fat binary holds code
 * this device can run. */
__global__ void probe_kernel() {}

extern "C" int gm_gpu_probe(gm_gpu_info *info, gm_status *st)
{
    if (probe_rc < 0) {
        int count = 0;
        cudaDeviceProp prop;
        cudaFuncAttributes attr;
        cudaError_t err = cudaGetDeviceCount(&count);
        if (err == cudaSuccess && count == 0)
            err = cudaErrorNoDevice;
        if (err == cudaSuccess)
            err = cudaSetDevice(0);
        if (err == cudaSuccess)
            err = cudaFree(0); /* creates the context */
        if (err == cudaSuccess)
            err = cudaGetDeviceProperties(&prop, 0);
        if (err == cudaSuccess)
            err = cudaFuncGetAttributes(&attr, probe_kernel);
        if (err != cudaSuccess) {
            snprintf(probe_msg, sizeof probe_msg, "no usable CUDA device: %s",
                     cudaGetErrorString(err));
            cudaGetLastError();
            probe_rc = GM_ENODEV;
        } else {
            memset(&probe_info, 0, sizeof probe_info);
            snprintf(probe_info.name, sizeof probe_info.name, "%s", prop.name);
            probe_info.sm_count = prop.multiProcessorCount;
            probe_info.cc_major = prop.major;
            probe_info.cc_minor = prop.minor;
            cudaMemGetInfo(&probe_info.free_bytes, &probe_info.total_bytes);
            gm_device_tuning.sm_count = prop.multiProcessorCount;
            gm_device_tuning.circular_blocks_per_sm[0] = circular_occupancy<int32_t>();
            gm_device_tuning.circular_blocks_per_sm[1] = circular_occupancy<int64_t>();
            gm_device_tuning.dependent_launch =
                prop.major >= 9 && !getenv("GM_NO_DEPENDENT_LAUNCH");
            probe_rc = GM_OK;
        }
    }
    if (probe_rc != GM_OK)
        return gm_fail(st, GM_ENODEV, "%s", probe_msg);
    if (info)
        *info = probe_info;
    return GM_OK;
}

/* ------------------------------------------------------------------ buffers */

/* Device allocations released when the scope ends, whatever the path. */
struct device_buffers {
    std::vector<void *> ptrs;
    ~device_buffers()
    {
        for (void *p : ptrs)
            cudaFree(p);
    }
    template <typename T> int alloc(T **p, size_t count, gm_status *st)
    {
        void *raw = nullptr;
        GM_CUDA(cudaMalloc(&raw, count * sizeof(T) + 16), st);
        ptrs.push_back(raw);
        *p = (T *)raw;
        return GM_OK;
    }
};

/* Fails with GM_EDEVMEM unless need bytes fit in the device's free memory. The
 * environment variable GM_GPU_MEMORY_LIMIT (bytes) lowers what counts as free, so
 * the tests can reach this path without gigabytes of input. */
static int check_fits(size_t need, gm_status *st)
{
    size_t free_b = 0, total = 0;
    GM_CUDA(cudaMemGetInfo(&free_b, &total), st);
    const char *limit = getenv("GM_GPU_MEMORY_LIMIT");
    if (limit && *limit && strtoull(limit, nullptr, 10) < free_b)
        free_b = strtoull(limit, nullptr, 10);
    if (need > free_b / 100 * 95)
        return gm_fail(st, GM_EDEVMEM,
                       "data does not fit in GPU memory: %.1f MiB needed, %.1f MiB free",
                       (double)need / 1048576.0, (double)free_b / 1048576.0);
    return GM_OK;
}

/* Elapsed seconds between two recorded events. */
static double seconds(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    return ms * 1e-3;
}

struct event_set {
    cudaEvent_t e[4] = { nullptr, nullptr, nullptr, nullptr };
    ~event_set()
    {
        for (cudaEvent_t x : e)
            if (x)
                cudaEventDestroy(x);
    }
    int create(gm_status *st)
    {
        for (cudaEvent_t &x : e)
            GM_CUDA(cudaEventCreate(&x), st);
        return GM_OK;
    }
};

/* The frame every GPU merge or sort shares: two key buffers (the keys and their
 * partner for ping-pong passes), co-rank scratch, and the timed copies in and out.
 * Everything is released when it goes out of scope. */
template <typename K> struct device_job {
    device_buffers mem;
    event_set ev;
    K *keys = nullptr, *other = nullptr;
    int64_t *coranks = nullptr;
    cudaStream_t s = 0;

    /* Checks that 2 n keys, ncor co-ranks and extra bytes fit, allocates the first
     * three, and copies the host's keys in. */
    int start(const gm_keys *host, int64_t ncor, size_t extra, gm_status *st)
    {
        size_t n = (size_t)host->n;
        int rc = check_fits(2 * n * sizeof(K) + (size_t)ncor * sizeof(int64_t) + extra, st);
        if (rc || (rc = mem.alloc(&keys, n, st)) || (rc = mem.alloc(&other, n, st)) ||
            (rc = mem.alloc(&coranks, (size_t)ncor, st)) || (rc = ev.create(st)))
            return rc;
        GM_CUDA(cudaEventRecord(ev.e[0], s), st);
        GM_CUDA(cudaMemcpyAsync(keys, host->data, n * sizeof(K), cudaMemcpyHostToDevice, s), st);
        GM_CUDA(cudaEventRecord(ev.e[1], s), st);
        return GM_OK;
    }

    /* Copies count keys from result back to the host, waits, and fills times. */
    int finish(gm_keys *host, const K *result, int64_t count, gm_gpu_times *times,
               gm_status *st)
    {
        GM_CUDA(cudaEventRecord(ev.e[2], s), st);
        GM_CUDA(cudaMemcpyAsync(host->data, result, (size_t)count * sizeof(K),
                                cudaMemcpyDeviceToHost, s),
                st);
        GM_CUDA(cudaEventRecord(ev.e[3], s), st);
        GM_CUDA(cudaEventSynchronize(ev.e[3]), st);
        host->n = count;
        times->h2d = seconds(ev.e[0], ev.e[1]);
        times->kernel = seconds(ev.e[1], ev.e[2]);
        times->d2h = seconds(ev.e[2], ev.e[3]);
        return GM_OK;
    }
};

/* ------------------------------------------------------------------ passes */

static gm_kernel resolve(gm_kernel k, int64_t n, gm_width w)
{
    return k == GM_KERNEL_AUTO ? gm_gpu_auto_kernel(n, w) : k;
}

template <typename K> static int64_t kernel_tile(gm_kernel kernel, int64_t n)
{
    return kernel == GM_KERNEL_CIRCULAR ? circular_segment<K>(n)
           : kernel == GM_KERNEL_TILED  ? (int64_t)tuning<K>::TILED_SPAN
                                        : (int64_t)tuning<K>::TILE;
}

template <typename K>
int merge_pass(gm_kernel kernel, const K *src, K *dst, pass_desc d, const int64_t *host_bounds,
               int64_t *dev_scratch, K mask, int64_t *coranks, cudaStream_t s, gm_status *st)
{
    d.tile = kernel_tile<K>(kernel, d.n);
    if (d.run_len > 0) {
        int64_t nruns = (d.n + d.run_len - 1) / d.run_len;
        d.npairs = (nruns + 1) / 2;
        d.tiles_per_pair = (2 * d.run_len + d.tile - 1) / d.tile;
        int64_t last_len = d.n - 2 * (d.npairs - 1) * d.run_len;
        d.ntiles = d.npairs == 0 ? 0
                                 : (d.npairs - 1) * d.tiles_per_pair + (last_len + d.tile - 1) / d.tile;
    } else if (d.npairs == 1) { /* one pair: its bounds travel in d */
        for (int i = 0; i < 3; i++)
            d.pair[i] = host_bounds[i];
        d.ntiles = (d.pair[2] - d.pair[0] + d.tile - 1) / d.tile;
        d.bounds = d.tile0 = nullptr;
    } else {
        /* host_bounds: 2 npairs + 1 entries. Tiles of each pair, then both arrays up. */
        std::vector<int64_t> up;
        for (int64_t r = 0; r <= 2 * d.npairs; r++)
            up.push_back(host_bounds[r]);
        int64_t tiles = 0;
        for (int64_t p = 0; p < d.npairs; p++) {
            up.push_back(tiles);
            int64_t len = host_bounds[2 * p + 2] - host_bounds[2 * p];
            tiles += (len + d.tile - 1) / d.tile;
        }
        up.push_back(tiles);
        d.ntiles = tiles;
        GM_CUDA(cudaMemcpyAsync(dev_scratch, up.data(), up.size() * sizeof(int64_t),
                                cudaMemcpyHostToDevice, s),
                st);
        d.bounds = dev_scratch;
        d.tile0 = dev_scratch + 2 * d.npairs + 1;
    }
    d.coarse = false;
    if (kernel == GM_KERNEL_BASIC) /* each thread searches for itself */
        return launch_merge_basic<K>(src, dst, d, mask, s, st);
    /* Partition, then merge; or the tiled kernel's blocks search for themselves. */
    if (kernel == GM_KERNEL_TILED && tiled_searches_itself(d.ntiles))
        return launch_merge_tiled<K>(src, dst, d, mask, nullptr, s, st);
    if (kernel == GM_KERNEL_TILED)
        d.coarse = tiled_partition_coarse<K>(d.ntiles);
    int rc = launch_partition<K>(src, d, mask, coranks, s, st);
    if (rc)
        return rc;
    return kernel == GM_KERNEL_CIRCULAR
               ? launch_merge_circular<K>(src, dst, d, mask, coranks, s, st)
               : launch_merge_tiled<K>(src, dst, d, mask, coranks, s, st);
}

/* Entries of co-rank scratch any pass over n keys may need. */
template <typename K> static int64_t coranks_needed(int64_t n, int64_t npairs_max)
{
    return n / tuning<K>::TILE + npairs_max + 2;
}

/* ------------------------------------------------------------------ merge */

/* Choices the size would make, forced, so that the tests and the sanitizers reach
 * every path on small inputs: GM_SORT_WAYS=2 or 4 (sort_pass_ways),
 * GM_PARTITION_LANES=-1, 1, 2, 4, 8 or 32 (the tiled kernel's partition:
 * merge_tiled.cu; -1 none, 2 bracketed), and GM_CIRCULAR_BLOCKS=N (the circular
 * kernel's blocks in all, so that each walks a segment of many tiles). */
void gm_tuning_from_environment()
{
    const char *ways = getenv("GM_SORT_WAYS");
    int w = ways ? atoi(ways) : 0;
    gm_device_tuning.sort_ways = w == 2 || w == 4 ? w : 0;
    const char *lanes = getenv("GM_PARTITION_LANES");
    int l = lanes ? atoi(lanes) : 0;
    gm_device_tuning.partition_lanes =
        l == -1 || l == 1 || l == 2 || l == 4 || l == 8 || l == 32 ? l : 0;
    const char *blocks = getenv("GM_CIRCULAR_BLOCKS");
    int b = blocks ? atoi(blocks) : 0;
    gm_device_tuning.circular_blocks = b > 0 ? b : 0;
}

/* A merge of nruns runs with kernel `used` (never AUTO). */
template <typename K>
static int merge_on_gpu(gm_keys *keys, const int64_t *offsets, int nruns, int reverse,
                        gm_kernel used, gm_gpu_times *times, gm_status *st)
{
    gm_tuning_from_environment();
    int64_t n = keys->n;
    K mask = reverse ? (K)-1 : (K)0;
    device_job<K> job;
    int64_t *d_meta = nullptr; /* each pass's run boundaries and first tiles */
    int rc = job.start(keys, coranks_needed<K>(n, nruns), (size_t)(4 * nruns + 8) * 8, st);
    if (rc || (rc = job.mem.alloc(&d_meta, (size_t)(4 * nruns + 8), st)))
        return rc;

    std::vector<int64_t> bounds(offsets, offsets + nruns + 1);
    int passes = 0;
    while (bounds.size() > 2) {
        int64_t runs = (int64_t)bounds.size() - 1;
        pass_desc d{};
        d.n = n;
        d.npairs = (runs + 1) / 2;
        d.dependent = true; /* see gm_after_previous */
        if (runs % 2)
            bounds.push_back(bounds.back()); /* the odd run gets an empty partner */
        rc = merge_pass<K>(used, job.keys, job.other, d, bounds.data(), d_meta, mask,
                           job.coranks, job.s, st);
        if (rc)
            return rc;
        std::vector<int64_t> next;
        for (size_t r = 0; r < bounds.size(); r += 2)
            next.push_back(bounds[r]);
        bounds.swap(next);
        std::swap(job.keys, job.other);
        passes++;
    }
    times->passes = passes;
    return job.finish(keys, job.keys, n, times, st);
}

extern "C" int gm_gpu_merge(gm_keys *keys, const int64_t *offsets, int nruns, int reverse,
                            gm_kernel kernel, gm_gpu_times *times, gm_status *st)
{
    int rc = gm_gpu_probe(nullptr, st);
    if (rc)
        return rc;
    memset(times, 0, sizeof *times);
    gm_kernel used = resolve(kernel, keys->n, keys->width);
    times->kernel_used = used;
    if (keys->n == 0 || nruns <= 1)
        return GM_OK;
    return keys->width == GM_I32
               ? merge_on_gpu<int32_t>(keys, offsets, nruns, reverse, used, times, st)
               : merge_on_gpu<int64_t>(keys, offsets, nruns, reverse, used, times, st);
}

/* ------------------------------------------------------------------ sort */

template <typename K>
int sort_on_device(K *d_keys, K *d_tmp, int64_t n, K mask, gm_kernel kernel, int64_t *d_cor,
                   K **out, int *passes, cudaStream_t s, gm_status *st, sort_trace *trace)
{
    if (trace)
        GM_CUDA(cudaEventRecord(trace->marks[0], s), st);
    int rc = launch_block_sort<K>(d_keys, d_tmp, n, mask, s, st);
    if (rc)
        return rc;
    if (trace)
        GM_CUDA(cudaEventRecord(trace->marks[1], s), st);
    K *src = d_tmp, *dst = d_keys;
    *passes = 0;
    for (int64_t run = tuning<K>::SORT_TILE; run < n; (*passes)++) {
        int ways = sort_pass_ways<K>(kernel, n, run);
        if (ways == 4) {
            rc = launch_merge_multi<K>(src, dst, n, run, mask, d_cor, s, st);
        } else {
            pass_desc d{};
            d.n = n;
            d.run_len = run;
            rc = merge_pass<K>(kernel, src, dst, d, nullptr, nullptr, mask, d_cor, s, st);
        }
        if (rc)
            return rc;
        if (trace && *passes < sort_trace::MAX_PASSES) {
            trace->ways[*passes] = ways;
            trace->run[*passes] = run;
            GM_CUDA(cudaEventRecord(trace->marks[*passes + 2], s), st);
        }
        run = n / ways < run ? n : ways * run;
        std::swap(src, dst);
    }
    *out = src;
    return GM_OK;
}

/* The largest of the passes' scratch: co-ranks of the two-way passes' tiles (basic
 * tiles are the smallest), or any four-way pass's sample lists (about the same
 * every pass: the same samples, and a short last group's unused entries). */
template <typename K> int64_t sort_scratch_entries(int64_t n)
{
    int64_t two = coranks_needed<K>(n, n / tuning<K>::TILE + 1);
    int64_t four = 0;
    for (int64_t run = tuning<K>::SORT_TILE; n - run > run; run *= 4) {
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
    gm_tuning_from_environment();
    device_job<K> job;
    int rc = job.start(keys, sort_scratch_entries<K>(n), 64u << 20, st);
    if (rc)
        return rc;
    K *sorted;
    int passes;
    rc = sort_on_device<K>(job.keys, job.other, n, mask, used, job.coranks, &sorted, &passes,
                           job.s, st);
    if (rc)
        return rc;
    times->passes = passes;
    int64_t n_out = n;
    if (unique) {
        K *to = sorted == job.keys ? job.other : job.keys;
        int64_t *d_count = job.coranks; /* the co-ranks are no longer needed */
        size_t temp_bytes = 0;
        GM_CUDA(cub::DeviceSelect::Unique(nullptr, temp_bytes, sorted, to, d_count, n, job.s), st);
        unsigned char *temp = nullptr;
        if ((rc = job.mem.alloc(&temp, temp_bytes, st)))
            return rc;
        GM_CUDA(cub::DeviceSelect::Unique(temp, temp_bytes, sorted, to, d_count, n, job.s), st);
        GM_CUDA(cudaMemcpyAsync(&n_out, d_count, sizeof n_out, cudaMemcpyDeviceToHost, job.s), st);
        GM_CUDA(cudaStreamSynchronize(job.s), st);
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
    memset(times, 0, sizeof *times);
    /* The sort's passes merge many pairs at once: the tiled kernel was fastest at
     * every size measured, so that is what auto means here. */
    gm_kernel used = kernel == GM_KERNEL_AUTO ? GM_KERNEL_TILED : kernel;
    times->kernel_used = used;
    if (keys->n == 0)
        return GM_OK;
    return keys->width == GM_I32 ? sort_on_gpu<int32_t>(keys, reverse, unique, used, times, st)
                                 : sort_on_gpu<int64_t>(keys, reverse, unique, used, times, st);
}

/* ------------------------------------------------------------------ tables */

extern "C" int64_t gm_gpu_merge_tile(gm_kernel kernel, gm_width width)
{
    if (kernel == GM_KERNEL_TILED)
        return width == GM_I32 ? tuning<int32_t>::TILED_SPAN : tuning<int64_t>::TILED_SPAN;
    if (kernel == GM_KERNEL_CIRCULAR)
        return width == GM_I32 ? tuning<int32_t>::CIRC_TILE : tuning<int64_t>::CIRC_TILE;
    return width == GM_I32 ? tuning<int32_t>::TILE : tuning<int64_t>::TILE;
}

extern "C" int64_t gm_gpu_sort_tile(gm_width width)
{
    return width == GM_I32 ? tuning<int32_t>::SORT_TILE : tuning<int64_t>::SORT_TILE;
}

/*
 * The kernel --kernel=auto runs for a merge of n keys, from the crossover table in
 * bench/RESULTS.md (bench/kernels 22 crossover, H200): below 2^16 keys the basic
 * kernel wins by up to a microsecond (7.0 against 7.7 us at 2^14 int64 keys): one
 * launch, its threads searching for themselves. Since the tiled kernel's blocks
 * search for themselves too on small passes (GM_TILED_SELF_SEARCH_MAX), it ties
 * at 2^16 and wins from 2^18 (8.9 against 10.2 us int64), by 3x at 2^22. The
 * circular kernel never won.
 */
extern "C" gm_kernel gm_gpu_auto_kernel(int64_t n, gm_width width)
{
    (void)width; /* the same crossover for both widths */
    return n < ((int64_t)1 << 16) ? GM_KERNEL_BASIC : GM_KERNEL_TILED;
}

#define GM_INSTANTIATE(K)                                                                  \
    template int merge_pass<K>(gm_kernel, const K *, K *, pass_desc, const int64_t *,      \
                               int64_t *, K, int64_t *, cudaStream_t, gm_status *);        \
    template int sort_on_device<K>(K *, K *, int64_t, K, gm_kernel, int64_t *, K **, int *, \
                                   cudaStream_t, gm_status *, sort_trace *);                \
    template int64_t sort_scratch_entries<K>(int64_t);
GM_INSTANTIATE(int32_t)
GM_INSTANTIATE(int64_t)
