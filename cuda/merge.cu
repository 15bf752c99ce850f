/*
 * merge.cu - gm_gpu_merge: a merge of k sorted runs as a tree of two-way passes
 * (pass.cuh), each run by one of the merge kernels.
 *
 * A merge of k runs is ceil(log2 k) passes, each merging neighbouring runs
 * pairwise, so ties keep input order. merge_pass lays one pass out for the kernel
 * chosen (its tiles, and the pairs' bounds on the device when the runs are
 * irregular) and launches the partition and the merge kernel; the sort's two-way
 * passes (sort.cu) go through it too, with values for a sort of pairs, as does
 * merge_pairs_on_device, the merge of two runs of key-value pairs.
 * gm_gpu_merge_device is the keys' merge on the caller's device arrays, for the
 * library's gm_merge_device.
 */
#include <string.h>

#include <utility>
#include <vector>

#include "device.cuh"
#include "kernels.cuh"

/* The kernel --kernel=auto runs for a merge of n keys: the basic kernel (one launch,
 * its threads searching for themselves) below choice::AUTO_TILED_FROM keys, where the
 * two are within a microsecond, the tiled kernel from there (bench/RESULTS.md,
 * `kernels 22 crossover`; the same for both widths). The circular kernel never wins. */
static gm_kernel auto_kernel(int64_t n)
{
    return n < choice::AUTO_TILED_FROM ? GM_KERNEL_BASIC : GM_KERNEL_TILED;
}

/* Keys per tile of kernel for a pass over n keys. */
template <typename K> static int64_t kernel_tile(gm_kernel kernel, int64_t n)
{
    return kernel == GM_KERNEL_CIRCULAR ? circular_segment<K>(n)
           : kernel == GM_KERNEL_TILED  ? (int64_t)tiles<K>::TILED_TILE
                                        : (int64_t)tiles<K>::BASIC_TILE;
}

template <typename K> int64_t coranks_needed(int64_t n, int64_t npairs_max)
{
    return n / tiles<K>::MIN_TILE + npairs_max + 2;
}

template <typename K, typename V>
int merge_pass(gm_kernel kernel, const K *src, K *dst, pass_desc d, const int64_t *host_bounds,
               int64_t *dev_scratch, K mask, int64_t *coranks, cudaStream_t s, gm_status *st,
               const V *vsrc, V *vdst)
{
    d.tile = kernel_tile<K>(kernel, d.n);
    if (d.run_len > 0) {
        int64_t nruns = (d.n + d.run_len - 1) / d.run_len;
        d.npairs = (nruns + 1) / 2;
        d.tiles_per_pair = (2 * d.run_len + d.tile - 1) / d.tile;
        int64_t last_len = d.n - 2 * (d.npairs - 1) * d.run_len;
        d.ntiles = d.npairs == 0
                       ? 0
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
        return launch_merge_basic<K, V>(src, dst, d, mask, s, st, vsrc, vdst);
    /* Partition, then merge; or the tiled kernel's blocks search for themselves. */
    if (kernel == GM_KERNEL_TILED && tiled_searches_itself(d.ntiles))
        return launch_merge_tiled<K, V>(src, dst, d, mask, nullptr, s, st, vsrc, vdst);
    d.coarse = kernel == GM_KERNEL_TILED && tiles<K>::TILED_STEP > 1;
    int rc = launch_partition<K>(src, d, mask, coranks, s, st);
    if (rc)
        return rc;
    return kernel == GM_KERNEL_CIRCULAR
               ? launch_merge_circular<K, V>(src, dst, d, mask, coranks, s, st, vsrc, vdst)
               : launch_merge_tiled<K, V>(src, dst, d, mask, coranks, s, st, vsrc, vdst);
}

template <typename K, typename V>
int merge_pairs_on_device(const K *keys, const V *vals, int64_t m, int64_t n, K *kout, V *vout,
                          K mask, gm_kernel kernel, int64_t *d_cor, cudaStream_t s,
                          gm_status *st)
{
    if (m + n == 0)
        return GM_OK;
    int64_t bounds[3] = { 0, m, m + n };
    pass_desc d{};
    d.n = m + n;
    d.npairs = 1; /* its bounds travel in d: no device scratch */
    d.dependent = true;
    gm_kernel used = kernel == GM_KERNEL_AUTO ? auto_kernel(m + n) : kernel;
    return merge_pass<K, V>(used, keys, kout, d, bounds, nullptr, mask, d_cor, s, st, vals,
                            vout);
}

/* The passes of a merge of the runs bounds[r]..bounds[r+1] of the n keys at *keys,
 * with kernel `used` (never AUTO): each pass merges neighbouring runs from *keys
 * into *other, then the two swap, so *keys holds the result. d_meta: 4 nruns + 8
 * entries of device scratch, coranks: coranks_needed(n, nruns). */
template <typename K>
static int merge_passes(K **keys, K **other, int64_t n, std::vector<int64_t> bounds, K mask,
                        gm_kernel used, int64_t *coranks, int64_t *d_meta, int *passes,
                        cudaStream_t s, gm_status *st)
{
    trace_range range("gpu: merge kernels (launches)");
    *passes = 0;
    while (bounds.size() > 2) {
        int64_t runs = (int64_t)bounds.size() - 1;
        pass_desc d{};
        d.n = n;
        d.npairs = (runs + 1) / 2;
        d.dependent = true; /* the merge kernel on its partition: see gm_after_previous */
        if (runs % 2)
            bounds.push_back(bounds.back()); /* the odd run gets an empty partner */
        int rc = merge_pass<K>(used, *keys, *other, d, bounds.data(), d_meta, mask, coranks, s,
                               st);
        if (rc)
            return rc;
        std::vector<int64_t> next;
        for (size_t r = 0; r < bounds.size(); r += 2)
            next.push_back(bounds[r]);
        bounds.swap(next);
        std::swap(*keys, *other);
        (*passes)++;
    }
    return GM_OK;
}

/* A merge of nruns runs with kernel `used` (never AUTO). */
template <typename K>
static int merge_on_gpu(gm_keys *keys, const int64_t *offsets, int nruns, int reverse,
                        gm_kernel used, gm_gpu_times *times, gm_status *st)
{
    int64_t n = keys->n;
    K mask = reverse ? (K)-1 : (K)0;
    device_job<K> job;
    int64_t *d_meta = nullptr; /* each pass's run boundaries and first tiles */
    int rc = job.start(keys, coranks_needed<K>(n, nruns), (size_t)(4 * nruns + 8) * 8, st);
    if (rc || (rc = job.mem.alloc(&d_meta, (size_t)(4 * nruns + 8), st)))
        return rc;
    std::vector<int64_t> bounds(offsets, offsets + nruns + 1);
    if ((rc = merge_passes<K>(&job.keys, &job.other, n, bounds, mask, used, job.coranks, d_meta,
                              &times->passes, job.s, st)))
        return rc;
    return job.finish(keys, job.keys, n, times, st);
}

extern "C" int gm_gpu_merge(gm_keys *keys, const int64_t *offsets, int nruns, int reverse,
                            gm_kernel kernel, gm_gpu_times *times, gm_status *st)
{
    int rc = gm_gpu_probe(nullptr, st);
    if (rc)
        return rc;
    on_probed_device here;
    memset(times, 0, sizeof *times);
    gm_kernel used = kernel == GM_KERNEL_AUTO ? auto_kernel(keys->n) : kernel;
    times->kernel_used = used;
    if (keys->n == 0 || nruns <= 1)
        return GM_OK;
    return keys->width == GM_I32
               ? merge_on_gpu<int32_t>(keys, offsets, nruns, reverse, used, times, st)
               : merge_on_gpu<int64_t>(keys, offsets, nruns, reverse, used, times, st);
}

/* gm_gpu_merge_device: the caller's k device arrays gathered into a buffer of the
 * engine's own (the kernels need 16 bytes of slack after the keys), merged there,
 * deduplicated with unique, copied to out. */
template <typename K>
static int merge_device_keys(const void *const *arrays, const int64_t *lens, int k, K *out,
                             int reverse, int unique, int64_t *n_out, cudaStream_t s,
                             gm_status *st)
{
    std::vector<int64_t> bounds(1, 0); /* the non-empty arrays' places in the gather */
    for (int i = 0; i < k; i++)
        if (lens[i] > 0)
            bounds.push_back(bounds.back() + lens[i]);
    int64_t runs = (int64_t)bounds.size() - 1, n = bounds.back();
    int64_t ncor = coranks_needed<K>(n, runs), nmeta = 4 * runs + 8;
    *n_out = n;
    if (n == 0)
        return GM_OK;
    device_buffers mem;
    K *keys = nullptr, *other = nullptr;
    int64_t *coranks = nullptr, *d_meta = nullptr;
    int rc = check_fits(2 * (size_t)n * sizeof(K) + (size_t)(ncor + nmeta) * 8, st);
    if (rc || (rc = mem.alloc(&keys, (size_t)n, st)) || (rc = mem.alloc(&other, (size_t)n, st)) ||
        (rc = mem.alloc(&coranks, (size_t)ncor, st)) || (rc = mem.alloc(&d_meta, (size_t)nmeta, st)))
        return rc;
    for (int i = 0, r = 0; i < k; i++)
        if (lens[i] > 0)
            GM_CUDA(cudaMemcpyAsync(keys + bounds[r++], arrays[i], (size_t)lens[i] * sizeof(K),
                                    cudaMemcpyDeviceToDevice, s),
                    st);
    gm_kernel used = auto_kernel(n);
    int passes;
    if ((rc = merge_passes<K>(&keys, &other, n, bounds, reverse ? (K)-1 : (K)0, used, coranks,
                              d_meta, &passes, s, st)))
        return rc;
    if (unique) {
        if ((rc = unique_on_device<K>(keys, other, n, coranks, mem, n_out, s, st)))
            return rc;
        keys = other;
    }
    GM_CUDA(cudaMemcpyAsync(out, keys, (size_t)*n_out * sizeof(K), cudaMemcpyDeviceToDevice, s),
            st);
    GM_CUDA(cudaStreamSynchronize(s), st);
    return GM_OK;
}

extern "C" int gm_gpu_merge_device(const void *const *arrays, const int64_t *lens, int k,
                                   gm_width width, void *out, int reverse, int unique,
                                   int64_t *n_out, void *stream, gm_status *st)
{
    int rc = gm_gpu_probe(nullptr, st);
    if (rc)
        return rc;
    on_probed_device here;
    cudaStream_t s = (cudaStream_t)stream;
    return width == GM_I32
               ? merge_device_keys<int32_t>(arrays, lens, k, (int32_t *)out, reverse, unique,
                                            n_out, s, st)
               : merge_device_keys<int64_t>(arrays, lens, k, (int64_t *)out, reverse, unique,
                                            n_out, s, st);
}

#define GM_INSTANTIATE_KEYS(K) template int64_t coranks_needed<K>(int64_t, int64_t);
GM_FOR_KEYS(GM_INSTANTIATE_KEYS)
#define GM_INSTANTIATE(K, V)                                                               \
    template int merge_pass<K, V>(gm_kernel, const K *, K *, pass_desc, const int64_t *,   \
                                  int64_t *, K, int64_t *, cudaStream_t, gm_status *,      \
                                  const V *, V *);
GM_FOR_KEYS_AND_PAIRS(GM_INSTANTIATE)
#define GM_INSTANTIATE_PAIRS(K)                                                            \
    template int merge_pairs_on_device<K, uint32_t>(const K *, const uint32_t *, int64_t,   \
                                                    int64_t, K *, uint32_t *, K, gm_kernel,  \
                                                    int64_t *, cudaStream_t, gm_status *);
GM_FOR_KEYS(GM_INSTANTIATE_PAIRS)
