/*
 * text.cu - the text path of the GPU sort (gm_gpu_sort_text): the input's text is
 * copied to the device, parsed there, sorted (sort.cu's sort_on_device, -u by
 * unique_on_device), formatted there and copied back, so that the host only reads
 * and writes bytes. Moving text costs 2.75 times the bytes of int32 keys, but PCIe
 * moves pinned memory at about 55 GB/s each way, while the host parses and formats
 * at under 10 GB/s on 16 cores (bench/RESULTS.md).
 *
 * Parse (the grammar of core/input.h, byte for byte as input.c's parse_line_slow):
 * the text is cut into tiles of 4 KiB. One kernel counts each tile's line ends,
 * cub::DeviceScan turns the counts into each tile's first line number, and a second
 * kernel stages its tile (and a halo after it) in shared memory, scans its threads'
 * counts (cub::BlockScan) so each line end knows its line number, and parses the
 * line after it on the thread that found it. Keys go to their line's slot as int32;
 * a value wider than int32 raises a flag, the blocks still to start return at once,
 * and the pass runs again into int64 (the host parser's policy: int32 while every
 * key fits). The first declined line is the smallest line index reported with
 * atomicMin; the caller then runs the host's parser, which names it. Blank lines
 * leave gaps that cub::DeviceSelect::Flagged closes, only when there are any.
 *
 * Format: per tile of 2048 keys, one kernel sums the lines' lengths, cub::DeviceScan
 * gives each tile its output offset, and a second kernel scans the threads' lengths
 * (cub::BlockScan), writes the digits into shared memory and copies the tile out
 * with aligned 16-byte stores. The tiles' offsets also cut the copy back into
 * pieces of whole lines.
 *
 * Copies go through a ring of pinned staging buffers (allocated once a process):
 * the caller's copy fills buffer i + 1 while buffer i crosses PCIe, and on the way
 * back the sink takes piece i while piece i + 1 crosses. The text itself can stay
 * in pageable memory, read before CUDA is needed.
 */
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "kernels.cuh"
#include "text.cuh"

typedef unsigned long long u64;

/* ------------------------------------------------------------------ parse */

constexpr int PB = 256;       /* threads per parse block */
constexpr int TILE = PB * 16; /* text bytes per tile: 16 per thread, one uint4 */
constexpr int HALO = 256;     /* bytes after the tile also staged in shared memory */

struct parse_summary {
    u64 first_bad; /* 2 * line index + (1 out of range, 0 not an integer); ~0 none */
    u64 nlines;
    int wide;      /* a key does not fit int32 */
    int any_blank;
};

/* Bit j set where byte j of the 16 at text position pos is eol, before len. */
__device__ __forceinline__ unsigned eol_mask(uint4 v, u64 pos, u64 len, unsigned eol4)
{
    const uint32_t w[4] = { v.x, v.y, v.z, v.w };
    unsigned m = 0;
    for (int i = 0; i < 4; i++) {
        unsigned eq = __vcmpeq4(w[i], eol4); /* 0xff in each equal byte */
        m |= (((eq >> 7) & 1) | ((eq >> 14) & 2) | ((eq >> 21) & 4) | ((eq >> 28) & 8)) << (4 * i);
    }
    if (pos + 16 > len)
        m &= pos < len ? (1u << (len - pos)) - 1 : 0;
    return m;
}

__global__ void __launch_bounds__(PB)
    count_lines(const char *text, u64 len, unsigned eol4, u64 *tile_nl)
{
    typedef cub::BlockReduce<unsigned, PB> reduce;
    __shared__ typename reduce::TempStorage tmp;
    u64 pos = (u64)blockIdx.x * TILE + threadIdx.x * 16;
    unsigned c = 0;
    if (pos < len)
        c = __popc(eol_mask(*(const uint4 *)(text + pos), pos, len, eol4));
    unsigned total = reduce(tmp).Sum(c);
    if (threadIdx.x == 0)
        tile_nl[blockIdx.x] = total;
}

/* A tile's bytes: from shared memory while they are staged, else from the text. */
struct tile_text {
    const char *s, *text;
    u64 t0, len;
    __device__ __forceinline__ char at(u64 q) const
    {
        u64 r = q - t0;
        return r < (u64)(TILE + HALO) ? s[r] : text[q];
    }
};

__device__ __forceinline__ bool is_blank(char c) { return c == ' ' || c == '\t'; }

/* Parses the line with index `line` that starts at `start`. */
template <typename K>
__device__ void parse_one(const tile_text &t, u64 start, u64 line, char eol, bool canonical,
                          K *keys, uint8_t *is_key, parse_summary *sum)
{
    u64 e = start;
    while (e < t.len && t.at(e) != eol)
        e++;
    u64 p = start;
    while (p < e && is_blank(t.at(p)))
        p++;
    u64 tail = e;
    if (tail > p && t.at(tail - 1) == '\r')
        tail--;
    while (tail > p && is_blank(t.at(tail - 1)))
        tail--;
    if (canonical) { /* [-]digits and nothing else, no leading zero, no "-0" */
        u64 d = start + (start < e && t.at(start) == '-');
        if (p != start || tail != e || d == e || t.at(start) == '+' ||
            (t.at(d) == '0' && (e - d > 1 || d != start))) {
            atomicMin(&sum->first_bad, 2 * line);
            return;
        }
    }
    if (p == tail) {
        is_key[line] = 0;
        sum->any_blank = 1;
        return;
    }
    bool neg = false;
    char c = t.at(p);
    if (c == '+' || c == '-') {
        neg = c == '-';
        p++;
    }
    int bad = p == tail; /* 1: not an integer, 2: out of range */
    u64 v = 0;
    int nd = 0;          /* significant digits */
    for (u64 q = p; q < tail && !bad; q++) {
        unsigned d = (unsigned)(unsigned char)t.at(q) - '0';
        if (d > 9) {
            bad = 1;
        } else if (nd > 0 || d != 0) {
            if (nd < 19)
                v = v * 10 + d; /* below 10^19: no overflow */
            nd++;
        }
    }
    if (!bad && (nd > 19 || v > (neg ? 1ULL << 63 : (1ULL << 63) - 1)))
        bad = 2;
    if (bad) {
        atomicMin(&sum->first_bad, 2 * line + (bad == 2));
        return;
    }
    long long x = neg ? (long long)(0 - v) : (long long)v;
    if (sizeof(K) == 4 && (x < INT32_MIN || x > INT32_MAX)) {
        *(volatile int *)&sum->wide = 1;
        return;
    }
    keys[line] = (K)x;
    is_key[line] = 1;
}

/* Every line starting in this block's tile, parsed; with K = int32 the block returns
 * at once when a wider key has been seen. The text has TILE + HALO readable bytes
 * after the last tile's start. */
template <typename K>
__global__ void __launch_bounds__(PB)
    parse_lines(const char *text, u64 len, char eol, bool canonical, const u64 *tile_line0,
                K *keys, uint8_t *is_key, parse_summary *sum)
{
    typedef cub::BlockScan<unsigned, PB> scan;
    __shared__ __align__(16) char s[TILE + HALO];
    __shared__ typename scan::TempStorage tmp;
    __shared__ int quit;
    if (sizeof(K) == 4) {
        if (threadIdx.x == 0)
            quit = *(volatile int *)&sum->wide;
        __syncthreads();
        if (quit)
            return;
    }
    const u64 t0 = (u64)blockIdx.x * TILE, pos = t0 + threadIdx.x * 16;
    uint4 v = *(const uint4 *)(text + pos);
    *(uint4 *)(s + threadIdx.x * 16) = v;
    if (threadIdx.x < HALO / 16)
        *(uint4 *)(s + TILE + threadIdx.x * 16) =
            *(const uint4 *)(text + t0 + TILE + threadIdx.x * 16);
    unsigned m = eol_mask(v, pos, len, 0x01010101u * (unsigned char)eol), before, total;
    scan(tmp).ExclusiveSum((unsigned)__popc(m), before, total);
    __syncthreads();
    const tile_text t = { s, text, t0, len };
    u64 nl = tile_line0[blockIdx.x] + before; /* line ends before this thread's bytes */
    if (pos == 0 && len > 0)
        parse_one(t, 0, 0, eol, canonical, keys, is_key, sum);
    while (m) {
        int j = __ffs(m) - 1;
        m &= m - 1;
        nl++;
        if (pos + j + 1 < len)
            parse_one(t, pos + j + 1, nl, eol, canonical, keys, is_key, sum);
    }
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0)
        sum->nlines = tile_line0[blockIdx.x] + total + (text[len - 1] != eol);
}

__global__ void reset_summary(parse_summary *sum)
{
    sum->first_bad = ~0ULL;
    sum->nlines = 0;
    sum->wide = 0;
    sum->any_blank = 0;
}

/* ------------------------------------------------------------------ format */

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

/* ------------------------------------------------------------------ staging */

/* The pinned staging ring, made at the first text job and kept. Its memory is
 * mapped, touched and then registered with CUDA: on the H100 machine cudaHostAlloc
 * takes 38 ms for 64 MB (0.62 s for 1.1 GB), while cudaHostRegister pins 1.1 GB
 * of touched memory in 0.045 s (bench/RESULTS.md, "The GPU sort's text path"). */
constexpr int RING = 4;
constexpr size_t STAGE_BYTES = 16u << 20;

struct staging {
    char *buf[RING] = {};
    cudaEvent_t done[RING] = {}; /* the copy through buf[i] has finished */
    bool ready = false;
};
static staging ring;

static int staging_ready(gm_status *st)
{
    if (ring.ready)
        return GM_OK;
    if (!ring.buf[0]) {
        const size_t bytes = RING * STAGE_BYTES;
        void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return gm_fail(st, GM_ENOMEM, "out of memory (%zu bytes for staging)", bytes);
        madvise(p, bytes, MADV_HUGEPAGE);
        memset(p, 0, bytes); /* the pages exist before they are pinned */
        cudaError_t err = cudaHostRegister(p, bytes, cudaHostRegisterDefault);
        if (err != cudaSuccess) {
            munmap(p, bytes);
            return gm_cuda_fail(st, err, "cudaHostRegister");
        }
        for (int i = 0; i < RING; i++)
            ring.buf[i] = (char *)p + i * STAGE_BYTES;
    }
    for (int i = 0; i < RING; i++)
        if (!ring.done[i])
            GM_CUDA(cudaEventCreateWithFlags(&ring.done[i], cudaEventDisableTiming), st);
    ring.ready = true;
    return GM_OK;
}

/* Bytes one staged copy moves. */
static size_t stage_piece()
{
    size_t f = gm_forced.text_chunk;
    return f >= 16 && f < STAGE_BYTES ? f : STAGE_BYTES;
}

/* ------------------------------------------------------------------ steps */

/* Scratch of one call of cub's device-wide algorithms, released with the job. */
static int cub_temp(text_job &j, size_t bytes, void **p, gm_status *st)
{
    unsigned char *t = nullptr;
    int rc = j.mem.alloc(&t, bytes ? bytes : 1, st);
    *p = t;
    return rc;
}

/* Exclusive scan of counts[0..ntiles] (the last entry set to 0) into pre. */
static int scan_tiles(text_job &j, u64 *counts, u64 *pre, u64 ntiles, gm_status *st)
{
    GM_CUDA(cudaMemsetAsync(counts + ntiles, 0, sizeof *counts, j.s), st);
    size_t bytes = 0;
    GM_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, bytes, counts, pre, (int64_t)ntiles + 1, j.s),
            st);
    void *t = nullptr;
    int rc = cub_temp(j, bytes, &t, st);
    if (rc)
        return rc;
    GM_CUDA(cub::DeviceScan::ExclusiveSum(t, bytes, counts, pre, (int64_t)ntiles + 1, j.s), st);
    return GM_OK;
}

/* A fits check that declines the text path instead of failing the run. */
static int text_fits(size_t need, gm_status *st)
{
    if (check_fits(need, st) == GM_OK)
        return GM_OK;
    char why[sizeof st->msg];
    snprintf(why, sizeof why, "%s", st->msg);
    return gm_fail(st, GM_ETEXT, "text path: %s", why);
}

int text_begin(text_job &j, size_t len, gm_status *st)
{
    GM_CUDA(cudaStreamCreateWithFlags(&j.s, cudaStreamNonBlocking), st);
    j.len = len;
    j.cap = (len + TILE - 1) / TILE * TILE + TILE + HALO;
    int rc = text_fits(j.cap, st);
    if (rc || (rc = j.mem.alloc(&j.text, j.cap, st)))
        return rc;
    /* Zeros after the text: the tiles read whole 16-byte chunks past its end. */
    GM_CUDA(cudaMemsetAsync(j.text + len, 0, j.cap - len, j.s), st);
    return staging_ready(st);
}

int text_upload(text_job &j, const char *host, gm_copy_fn copy, void *ctx, gm_status *st)
{
    const size_t piece = stage_piece();
    int i = 0;
    for (size_t off = 0; off < j.len; off += piece, i = (i + 1) % RING) {
        size_t n = j.len - off < piece ? j.len - off : piece;
        GM_CUDA(cudaEventSynchronize(ring.done[i]), st); /* its last copy has moved */
        if (copy)
            copy(ctx, ring.buf[i], host + off, n);
        else
            memcpy(ring.buf[i], host + off, n);
        GM_CUDA(cudaMemcpyAsync(j.text + off, ring.buf[i], n, cudaMemcpyHostToDevice, j.s), st);
        GM_CUDA(cudaEventRecord(ring.done[i], j.s), st);
    }
    return GM_OK;
}

template <typename K>
static int parse_pass(text_job &j, char eol, u64 ntiles, const u64 *line0, K *keys,
                      uint8_t *is_key, parse_summary *sum, parse_summary *h_sum, gm_status *st)
{
    GM_LAUNCH("reset_summary", st, false, reset_summary, dim3(1), dim3(1), 0, j.s, sum);
    GM_LAUNCH("parse_lines", st, false, parse_lines<K>, dim3((unsigned)ntiles), dim3(PB), 0, j.s,
              (const char *)j.text, (u64)j.len, eol, j.canonical, line0, keys, is_key, sum);
    GM_CUDA(cudaMemcpyAsync(h_sum, sum, sizeof *sum, cudaMemcpyDeviceToHost, j.s), st);
    GM_CUDA(cudaStreamSynchronize(j.s), st);
    return GM_OK;
}

template <typename K>
static int close_gaps(text_job &j, text_parsed *r, const uint8_t *is_key, gm_status *st)
{
    int64_t *d_n = nullptr, n = 0;
    int rc = j.mem.alloc(&d_n, 1, st);
    if (rc)
        return rc;
    size_t bytes = 0;
    GM_CUDA(cub::DeviceSelect::Flagged(nullptr, bytes, (K *)r->keys, is_key, (K *)r->other, d_n,
                                       r->lines, j.s),
            st);
    void *t = nullptr;
    if ((rc = cub_temp(j, bytes, &t, st)))
        return rc;
    GM_CUDA(cub::DeviceSelect::Flagged(t, bytes, (K *)r->keys, is_key, (K *)r->other, d_n,
                                       r->lines, j.s),
            st);
    GM_CUDA(cudaMemcpyAsync(&n, d_n, sizeof n, cudaMemcpyDeviceToHost, j.s), st);
    GM_CUDA(cudaStreamSynchronize(j.s), st);
    r->nkeys = n;
    void *k = r->keys;
    r->keys = r->other;
    r->other = k;
    return GM_OK;
}

int text_parse(text_job &j, char eol, text_parsed *r, gm_status *st)
{
    *r = text_parsed();
    if (j.len == 0)
        return GM_OK;
    const u64 ntiles = (j.len + TILE - 1) / TILE;
    if (ntiles > 0x7fffffffULL)
        return gm_fail(st, GM_ETEXT, "text path: text too large for one launch");
    u64 *counts = nullptr, *line0 = nullptr;
    parse_summary *sum = nullptr;
    int rc;
    if ((rc = j.mem.alloc(&counts, ntiles + 1, st)) || (rc = j.mem.alloc(&line0, ntiles + 1, st)) ||
        (rc = j.mem.alloc(&sum, 1, st)))
        return rc;
    GM_LAUNCH("count_lines", st, false, count_lines, dim3((unsigned)ntiles), dim3(PB), 0, j.s,
              (const char *)j.text, (u64)j.len, 0x01010101u * (unsigned char)eol, counts);
    if ((rc = scan_tiles(j, counts, line0, ntiles, st)))
        return rc;
    u64 ends = 0;
    GM_CUDA(cudaMemcpyAsync(&ends, line0 + ntiles, sizeof ends, cudaMemcpyDeviceToHost, j.s), st);
    GM_CUDA(cudaStreamSynchronize(j.s), st);
    r->bound = (int64_t)ends + 1; /* lines, at most */
    /* Both key buffers hold int64 keys, the sort's scratch about as many int64
     * entries; the line flags a byte each. */
    if ((rc = text_fits((size_t)r->bound * (2 * 8 + 1 + 8), st)))
        return rc;
    uint8_t *is_key = nullptr;
    int64_t *keys = nullptr, *other = nullptr;
    if ((rc = j.mem.alloc(&keys, (size_t)r->bound, st)) ||
        (rc = j.mem.alloc(&other, (size_t)r->bound, st)) ||
        (rc = j.mem.alloc(&is_key, (size_t)r->bound, st)))
        return rc;
    r->keys = keys;
    r->other = other;
    parse_summary h;
    if ((rc = parse_pass<int32_t>(j, eol, ntiles, line0, (int32_t *)keys, is_key, sum, &h, st)))
        return rc;
    if (h.wide) {
        r->width = GM_I64;
        if ((rc = parse_pass<int64_t>(j, eol, ntiles, line0, keys, is_key, sum, &h, st)))
            return rc;
    }
    r->lines = (int64_t)h.nlines;
    if (h.first_bad != ~0ULL) {
        r->bad_line = (int64_t)(h.first_bad / 2) + 1;
        r->bad_range = (int)(h.first_bad & 1);
        return GM_OK;
    }
    r->nkeys = r->lines;
    if (h.any_blank)
        return r->width == GM_I64 ? close_gaps<int64_t>(j, r, is_key, st)
                                  : close_gaps<int32_t>(j, r, is_key, st);
    return GM_OK;
}

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
    if ((rc = scan_tiles(j, counts, pre, ntiles, st)))
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

int text_download(text_job &j, const std::vector<uint64_t> &off, gm_text_sink sink, void *ctx,
                  double *sink_seconds, uint64_t *bytes, gm_status *st)
{
    const size_t piece = stage_piece();
    *sink_seconds = 0;
    *bytes = 0;
    /* Pieces end at tile offsets (whole lines), each at most a staging buffer, or
     * one tile when a tile is larger (only with a forced small piece). */
    std::vector<uint64_t> cut(1, 0);
    for (size_t t = 1; t < off.size(); t++) {
        bool last = t + 1 == off.size();
        if ((last || off[t + 1] - cut.back() > piece) && off[t] > cut.back())
            cut.push_back(off[t]);
    }
    const int npieces = (int)cut.size() - 1;
    /* Piece p goes through buffer p % RING; piece p - 1 is handed to the sink while p
     * crosses. */
    for (int p = 0; p <= npieces; p++) {
        if (p < npieces) {
            int i = p % RING;
            GM_CUDA(cudaEventSynchronize(ring.done[i]), st);
            GM_CUDA(cudaMemcpyAsync(ring.buf[i], j.text + cut[p], cut[p + 1] - cut[p],
                                    cudaMemcpyDeviceToHost, j.s),
                    st);
            GM_CUDA(cudaEventRecord(ring.done[i], j.s), st);
        }
        if (p > 0) {
            int i = (p - 1) % RING;
            GM_CUDA(cudaEventSynchronize(ring.done[i]), st);
            double a = host_seconds();
            int rc = sink(ctx, ring.buf[i], cut[p] - cut[p - 1], st);
            *sink_seconds += host_seconds() - a;
            if (rc)
                return rc;
            *bytes += cut[p] - cut[p - 1];
        }
    }
    return GM_OK;
}

/* ------------------------------------------------------------------ the sort */

template <typename K>
static int sort_parsed(text_job &j, const gm_text_job *job, text_parsed &r, gm_kernel used,
                       K **sorted, int64_t *n_out, gm_gpu_times *times, gm_status *st)
{
    int64_t n = r.nkeys;
    *n_out = n;
    *sorted = (K *)r.keys;
    if (n == 0)
        return GM_OK;
    int64_t *d_cor = nullptr;
    int rc = j.mem.alloc(&d_cor, (size_t)sort_scratch_entries<K>(n), st);
    if (rc)
        return rc;
    K mask = job->reverse ? (K)-1 : (K)0;
    if ((rc = sort_on_device<K>((K *)r.keys, (K *)r.other, n, mask, used, d_cor, sorted,
                                &times->passes, j.s, st)))
        return rc;
    if (job->unique) {
        K *to = *sorted == (K *)r.keys ? (K *)r.other : (K *)r.keys;
        if ((rc = unique_on_device<K>(*sorted, to, n, d_cor, j.mem, n_out, j.s, st)))
            return rc;
        *sorted = to;
    }
    return GM_OK;
}

extern "C" int gm_gpu_sort_text(const gm_text_job *job, gm_text_result *res, gm_gpu_times *times,
                                gm_status *st)
{
    memset(res, 0, sizeof *res);
    memset(times, 0, sizeof *times);
    res->width = GM_I32;
    int rc = gm_gpu_probe(nullptr, st);
    if (rc)
        return rc;
    gm_kernel used = job->kernel == GM_KERNEL_AUTO ? GM_KERNEL_TILED : job->kernel;
    times->kernel_used = used;
    if (job->len == 0)
        return GM_OK;
    text_job j;
    j.canonical = job->canonical != 0;
    event_set ev;
    if ((rc = ev.create(st)) || (rc = text_begin(j, job->len, st)))
        return rc;
    cudaEvent_t parsed_at;
    GM_CUDA(cudaEventCreate(&parsed_at), st);
    struct destroy {
        cudaEvent_t e;
        ~destroy() { cudaEventDestroy(e); }
    } d{ parsed_at };
    GM_CUDA(cudaEventRecord(ev.e[0], j.s), st);
    if ((rc = text_upload(j, job->text, job->copy, job->copy_ctx, st)))
        return rc;
    GM_CUDA(cudaEventRecord(ev.e[1], j.s), st);
    text_parsed r;
    if ((rc = text_parse(j, job->eol, &r, st)))
        return rc;
    GM_CUDA(cudaEventRecord(parsed_at, j.s), st);
    if (r.bad_line)
        return gm_fail(st, GM_ETEXT, "text path: line %lld %s", (long long)r.bad_line,
                       r.bad_range ? "out of range" : "not an integer");
    res->keys = r.nkeys;
    res->width = r.width;
    std::vector<uint64_t> off;
    int64_t n_out = 0;
    double f0 = 0;
    if (r.width == GM_I32) {
        int32_t *sorted;
        if (!(rc = sort_parsed<int32_t>(j, job, r, used, &sorted, &n_out, times, st))) {
            GM_CUDA(cudaStreamSynchronize(j.s), st);
            f0 = host_seconds();
            rc = text_format<int32_t>(j, sorted, n_out, job->eol, &off, st);
        }
    } else {
        int64_t *sorted;
        if (!(rc = sort_parsed<int64_t>(j, job, r, used, &sorted, &n_out, times, st))) {
            GM_CUDA(cudaStreamSynchronize(j.s), st);
            f0 = host_seconds();
            rc = text_format<int64_t>(j, sorted, n_out, job->eol, &off, st);
        }
    }
    if (rc)
        return rc;
    times->format = host_seconds() - f0;
    GM_CUDA(cudaEventRecord(ev.e[2], j.s), st);
    double d0 = host_seconds();
    rc = text_download(j, off, job->sink, job->sink_ctx, &res->sink, &res->bytes, st);
    double d1 = host_seconds();
    res->written = rc ? 0 : n_out;
    times->h2d = elapsed_seconds(ev.e[0], ev.e[1]);
    times->parse = elapsed_seconds(ev.e[1], parsed_at);
    times->kernel = elapsed_seconds(ev.e[1], ev.e[2]);
    times->d2h = d1 - d0 - res->sink;
    return rc;
}

#define GM_INSTANTIATE(K)                                                                  \
    template int text_format<K>(text_job &, const K *, int64_t, char, std::vector<uint64_t> *, \
                                gm_status *);
GM_INSTANTIATE(int32_t)
GM_INSTANTIATE(int64_t)
