/*
 * text_format.cu - the text path's formatter (text_format, see text.cuh): sorted
 * keys written back as lines on the device. Per tile of 2048 keys, one kernel sums
 * the lines' lengths, cub::DeviceScan gives each tile its output offset, and a
 * second kernel scans the threads' lengths (cub::BlockScan), writes the digits into
 * shared memory and copies the tile out with aligned 16-byte stores. The tiles'
 * offsets also cut the copy back into pieces of whole lines (text_download).
 */
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "kernels.cuh"
#include "text.cuh"

/* ------------------------------------------------------------------ kernels */

constexpr int FB = 256;   /* threads per format block */
constexpr int FITEMS = 8; /* keys per thread */
constexpr int FTILE = FB * FITEMS;

template <typename K> struct max_line;
template <> struct max_line<int32_t> { static constexpr int value = 12; }; /* -2147483648 + eol */
template <> struct max_line<int64_t> { static constexpr int value = 21; };

__device__ __forceinline__ u64 magnitude(long long k) { return k < 0 ? 0 - (u64)k : (u64)k; }

__device__ __forceinline__ unsigned line_length(long long k)
{
    u64 u = magnitude(k), p = 10;
    unsigned n = 1;
    while (n < 20 && u >= p) {
        n++;
        p *= 10; /* 10^20 overflows only after the last comparison */
    }
    return n + (k < 0) + 1;
}

/* Writes the digits of u so that they end just before end. */
__device__ __forceinline__ void put_digits(char *end, u64 u)
{
    while (u > 0xffffffffULL) {
        uint32_t low = (uint32_t)(u % 100000000ULL);
        u /= 100000000ULL;
        for (int i = 0; i < 8; i++) {
            *--end = (char)('0' + low % 10);
            low /= 10;
        }
    }
    uint32_t w = (uint32_t)u;
    do {
        *--end = (char)('0' + w % 10);
        w /= 10;
    } while (w);
}

template <typename K>
__global__ void __launch_bounds__(FB) format_count(const K *keys, u64 n, u64 *tile_bytes)
{
    typedef cub::BlockReduce<unsigned, FB> reduce;
    __shared__ typename reduce::TempStorage tmp;
    unsigned b = 0;
    for (int i = 0; i < FITEMS; i++) {
        u64 k = (u64)blockIdx.x * FTILE + (u64)i * FB + threadIdx.x;
        if (k < n)
            b += line_length(keys[k]);
    }
    unsigned total = reduce(tmp).Sum(b);
    if (threadIdx.x == 0)
        tile_bytes[blockIdx.x] = total;
}

template <typename K>
__global__ void __launch_bounds__(FB)
    format_write(const K *keys, u64 n, char eol, const u64 *tile_off, char *out)
{
    typedef cub::BlockScan<unsigned, FB> scan;
    __shared__ __align__(16) char s[FTILE * max_line<K>::value + 16];
    __shared__ typename scan::TempStorage tmp;
    const u64 k0 = (u64)blockIdx.x * FTILE + threadIdx.x * FITEMS;
    K k[FITEMS];
    unsigned len[FITEMS], mine = 0, off, total;
    for (int i = 0; i < FITEMS; i++) {
        k[i] = k0 + i < n ? keys[k0 + i] : 0;
        len[i] = k0 + i < n ? line_length(k[i]) : 0;
        mine += len[i];
    }
    scan(tmp).ExclusiveSum(mine, off, total);
    const u64 base = tile_off[blockIdx.x], lo = base & ~15ULL; /* s[g - lo] is out[g] */
    char *p = s + (base - lo) + off;
    for (int i = 0; i < FITEMS; i++) {
        if (!len[i])
            continue;
        if (k[i] < 0)
            *p = '-';
        put_digits(p + len[i] - 1, magnitude(k[i]));
        p[len[i] - 1] = eol;
        p += len[i];
    }
    __syncthreads();
    const u64 end = base + total;
    u64 a0 = (base + 15) & ~15ULL, a1 = end & ~15ULL; /* the 16-byte aligned middle */
    a0 = a0 < end ? a0 : end;
    a1 = a1 > a0 ? a1 : a0;
    for (u64 g = base + threadIdx.x; g < a0; g += FB)
        out[g] = s[g - lo];
    for (u64 g = a1 + threadIdx.x; g < end; g += FB)
        out[g] = s[g - lo];
    for (u64 g = a0 + threadIdx.x * 16ULL; g < a1; g += FB * 16ULL)
        *(uint4 *)(out + g) = *(const uint4 *)(s + (g - lo));
}

/* ------------------------------------------------------------------ host */

template <typename K>
int text_format(text_job &j, const K *d_keys, int64_t n, char eol, std::vector<uint64_t> *off,
                gm_status *st)
{
    const u64 ntiles = ((u64)n + FTILE - 1) / FTILE;
    off->assign(ntiles + 1, 0);
    if (n == 0)
        return GM_OK;
    if (ntiles > 0x7fffffffULL)
        return gm_fail(st, GM_ETEXT, "text path: too many keys for one launch");
    u64 *counts = nullptr, *pre = nullptr;
    int rc;
    if ((rc = j.mem.alloc(&counts, ntiles + 1, st)) || (rc = j.mem.alloc(&pre, ntiles + 1, st)))
        return rc;
    GM_LAUNCH("format_count", st, false, format_count<K>, dim3((unsigned)ntiles), dim3(FB), 0,
              j.s, d_keys, (u64)n, counts);
    if ((rc = text_scan_tiles(j, counts, pre, ntiles, st)))
        return rc;
    /* The total first: the output must fit in the text's buffer (it does whenever
     * the keys come from that text; the tests' keys may not). */
    u64 total = 0;
    GM_CUDA(cudaMemcpyAsync(&total, pre + ntiles, sizeof total, cudaMemcpyDeviceToHost, j.s), st);
    GM_CUDA(cudaStreamSynchronize(j.s), st);
    if (total > j.cap)
        return gm_fail(st, GM_ECUDA, "text path: %llu bytes of output for a buffer of %zu",
                       total, j.cap);
    GM_LAUNCH("format_write", st, false, format_write<K>, dim3((unsigned)ntiles), dim3(FB), 0,
              j.s, d_keys, (u64)n, eol, (const u64 *)pre, j.text);
    GM_CUDA(cudaMemcpyAsync(off->data(), pre, (ntiles + 1) * sizeof(u64), cudaMemcpyDeviceToHost,
                            j.s),
            st);
    GM_CUDA(cudaStreamSynchronize(j.s), st);
    return GM_OK;
}

#define GM_INSTANTIATE(K)                                                                  \
    template int text_format<K>(text_job &, const K *, int64_t, char, std::vector<uint64_t> *, \
                                gm_status *);
GM_INSTANTIATE(int32_t)
GM_INSTANTIATE(int64_t)
