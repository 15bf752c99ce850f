/*
 * bench/experiments/gpu_text.cu - an experiment, not part of gpumerge: do parsing
 * and formatting on the GPU pay for shipping text (about 2.75 times the bytes of
 * int32 keys) over PCIe instead of keys?
 *
 * Parse: the text is cut into tiles of 4 KiB. One kernel counts each tile's
 * newlines, cub::DeviceScan turns the counts into each tile's first line number,
 * and a second kernel stages its tile (and a halo after it) in shared memory, scans
 * its threads' newline counts (cub::BlockScan) so each newline knows its global
 * line number, and parses the line after each newline on the thread that found it,
 * with the grammar of core/input.h. Keys go to their line's slot as int32; a value
 * wider than int32 raises a flag, the blocks still to start return at once, and the
 * pass is run again into int64 (the CPU parser's policy: int32 while every key
 * fits). The first bad line is the smallest line index reported with atomicMin, so
 * messages keep file:line. Blank lines leave gaps that cub::DeviceSelect closes,
 * only when there are any.
 *
 * Format: per tile of 2048 keys, one kernel sums the lines' lengths, cub::DeviceScan
 * gives each tile its output offset, and a second kernel scans the threads' lengths
 * (cub::BlockScan), writes the digits into shared memory and copies the tile out
 * with aligned 16-byte stores.
 *
 * Both are checked first, loudly: the parser against a plain host parser
 * (strtoll after a syntax check) on random texts of every accepted and rejected
 * line form, the formatter byte for byte against snprintf, and on the benchmark's
 * own data against the keys that generated it. Then the stages are timed (CUDA
 * events, median of REPEAT runs) next to core/input.c's parser and a parallel loop
 * over core/output.c's formatter on all cores.
 *
 * Usage: gpu_text [LINES (default 100000000)] [CASES (default 300)] [REPEAT (5)]
 *        gpu_text --host-selftest    (no GPU needed: the host references only)
 */
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <errno.h>
#include <fcntl.h>
#include <random>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <thread>
#include <unistd.h>
#include <vector>

extern "C" {
#include "../../core/input.h"
#include "../../core/output.h"
#include "../../core/util.h"
}

typedef unsigned long long u64;

#include "../bench_check.cuh"

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "gpu_text: FAILED: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

/* ================================================================ device: parse */

constexpr int PB = 256;          /* threads per parse block */
constexpr int TILE = PB * 16;    /* text bytes per tile: 16 per thread, one uint4 */
constexpr int HALO = 256;        /* bytes after the tile also staged in shared memory */

struct parse_summary {
    u64 first_bad;  /* 2 * line index + (1 out of range, 0 not an integer); ~0 none */
    u64 nlines;
    int wide;       /* a key does not fit int32 */
    int any_blank;
};

/* The line-level functions also compile for the host, whose self-test runs them. */
#define HD __host__ __device__

/* Bit j set where byte j of the 16 at text position pos is a newline before len. */
HD __forceinline__ unsigned newline_mask(uint4 v, u64 pos, u64 len)
{
    const uint32_t w[4] = { v.x, v.y, v.z, v.w };
    unsigned m = 0;
    for (int i = 0; i < 4; i++) {
#ifdef __CUDA_ARCH__
        unsigned eq = __vcmpeq4(w[i], 0x0a0a0a0au); /* 0xff in each equal byte */
#else
        unsigned eq = 0;
        for (int k = 0; k < 4; k++)
            eq |= ((w[i] >> 8 * k) & 0xff) == 0x0a ? 0xffu << 8 * k : 0;
#endif
        m |= (((eq >> 7) & 1) | ((eq >> 14) & 2) | ((eq >> 21) & 4) | ((eq >> 28) & 8)) << (4 * i);
    }
    if (pos + 16 > len)
        m &= pos < len ? (1u << (len - pos)) - 1 : 0;
    return m;
}

__global__ void __launch_bounds__(PB) count_newlines(const char *text, u64 len, u64 *tile_nl)
{
    typedef cub::BlockReduce<unsigned, PB> reduce;
    __shared__ typename reduce::TempStorage tmp;
    u64 pos = (u64)blockIdx.x * TILE + threadIdx.x * 16;
    unsigned c = 0;
    if (pos < len)
        c = __popc(newline_mask(*(const uint4 *)(text + pos), pos, len));
    unsigned total = reduce(tmp).Sum(c);
    if (threadIdx.x == 0)
        tile_nl[blockIdx.x] = total;
}

/* A tile's bytes: from shared memory while they are staged, else from the text. */
struct tile_text {
    const char *s, *text;
    u64 t0, len;
    HD __forceinline__ char at(u64 q) const
    {
        u64 r = q - t0;
        return r < (u64)(TILE + HALO) ? s[r] : text[q];
    }
};

HD __forceinline__ bool is_blank(char c) { return c == ' ' || c == '\t'; }

/* Parses the line with index `line` that starts at `start` (core/input.c's
 * parse_line_slow, byte for byte). */
template <typename K>
HD void parse_one(const tile_text &t, u64 start, u64 line, K *keys, uint8_t *is_key,
                          parse_summary *sum)
{
    u64 e = start;
    while (e < t.len && t.at(e) != '\n')
        e++;
    u64 p = start;
    while (p < e && is_blank(t.at(p)))
        p++;
    u64 tail = e;
    if (tail > p && t.at(tail - 1) == '\r')
        tail--;
    while (tail > p && is_blank(t.at(tail - 1)))
        tail--;
    if (p == tail) {
        is_key[line] = 0;
        keys[line] = 0;
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
    int nd = 0; /* significant digits */
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
#ifdef __CUDA_ARCH__
        atomicMin(&sum->first_bad, 2 * line + (bad == 2));
#else
        sum->first_bad = std::min(sum->first_bad, 2 * line + (bad == 2));
#endif
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
    parse_lines(const char *text, u64 len, const u64 *tile_line0, K *keys, uint8_t *is_key,
                parse_summary *sum)
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
        *(uint4 *)(s + TILE + threadIdx.x * 16) = *(const uint4 *)(text + t0 + TILE + threadIdx.x * 16);
    unsigned m = newline_mask(v, pos, len), before, total;
    scan(tmp).ExclusiveSum((unsigned)__popc(m), before, total);
    __syncthreads();
    const tile_text t = { s, text, t0, len };
    u64 nl = tile_line0[blockIdx.x] + before; /* newlines before this thread's bytes */
    if (pos == 0 && len > 0)
        parse_one(t, 0, 0, keys, is_key, sum);
    while (m) {
        int j = __ffs(m) - 1;
        m &= m - 1;
        nl++;
        if (pos + j + 1 < len)
            parse_one(t, pos + j + 1, nl, keys, is_key, sum);
    }
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0)
        sum->nlines = tile_line0[blockIdx.x] + total + (text[len - 1] != '\n');
}

__global__ void reset_summary(parse_summary *sum)
{
    sum->first_bad = ~0ULL;
    sum->nlines = 0;
    sum->wide = 0;
    sum->any_blank = 0;
}

/* ================================================================ device: format */

constexpr int FB = 256;          /* threads per format block */
constexpr int FITEMS = 8;        /* keys per thread */
constexpr int FTILE = FB * FITEMS;

template <typename K> struct max_line;
template <> struct max_line<int32_t> { static constexpr int value = 12; }; /* -2147483648\n */
template <> struct max_line<int64_t> { static constexpr int value = 21; };

HD __forceinline__ u64 magnitude(long long k) { return k < 0 ? 0 - (u64)k : (u64)k; }

HD __forceinline__ unsigned line_length(long long k)
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
HD __forceinline__ void put_digits(char *end, u64 u)
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
    format_write(const K *keys, u64 n, const u64 *tile_off, char *out)
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
        p[len[i] - 1] = '\n';
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

/* ================================================================ host: GPU drivers */

struct gpu_bufs {
    cudaStream_t st;
    char *text = nullptr;        /* device text, capacity text_cap (+ TILE + HALO) */
    u64 text_cap = 0;
    u64 *tiles = nullptr, *tile_pre = nullptr; /* per-tile counts and their scan */
    u64 tiles_cap = 0;
    void *keys = nullptr, *keys2 = nullptr;    /* 8 bytes per line */
    uint8_t *is_key = nullptr;
    u64 lines_cap = 0;
    char *out = nullptr;         /* formatted text */
    u64 out_cap = 0;
    void *tmp = nullptr;         /* cub's temporary storage */
    size_t tmp_cap = 0;
    parse_summary *sum = nullptr, *h_sum = nullptr;
    u64 *h_u64 = nullptr;        /* pinned scratch for small read-backs */
    long long *d_nsel = nullptr;
};

static void *grow(void *p, u64 &cap, u64 need)
{
    if (need <= cap)
        return p;
    CHECK(cudaFree(p));
    CHECK(cudaMalloc(&p, need));
    cap = need;
    return p;
}

static void bufs_init(gpu_bufs &b)
{
    /* A blocking stream: the tests' cudaMemcpy calls (legacy stream) order with it. */
    CHECK(cudaStreamCreate(&b.st));
    CHECK(cudaMalloc(&b.sum, sizeof *b.sum));
    CHECK(cudaMallocHost(&b.h_sum, sizeof *b.h_sum));
    CHECK(cudaMallocHost(&b.h_u64, sizeof *b.h_u64));
    CHECK(cudaMalloc(&b.d_nsel, sizeof *b.d_nsel));
}

static void bufs_free(gpu_bufs &b)
{
    cudaFree(b.text);
    cudaFree(b.tiles);
    cudaFree(b.tile_pre);
    cudaFree(b.keys);
    cudaFree(b.keys2);
    cudaFree(b.is_key);
    cudaFree(b.out);
    cudaFree(b.tmp);
    cudaFree(b.sum);
    cudaFree(b.d_nsel);
    cudaFreeHost(b.h_sum);
    cudaFreeHost(b.h_u64);
    cudaStreamDestroy(b.st);
}

/* Room for len bytes of text; the bytes after it are readable (never used). */
static void ensure_text(gpu_bufs &b, u64 len)
{
    u64 need = (len + TILE - 1) / TILE * TILE + TILE + HALO, cap = b.text_cap;
    if (need > cap) {
        b.text = (char *)grow(b.text, cap, need);
        CHECK(cudaMemset(b.text, 0, need));
        b.text_cap = cap;
    }
}

static void ensure_tiles(gpu_bufs &b, u64 ntiles)
{
    if (ntiles + 1 <= b.tiles_cap)
        return;
    u64 c1 = 0, c2 = 0;
    cudaFree(b.tiles);
    cudaFree(b.tile_pre);
    b.tiles = b.tile_pre = nullptr;
    b.tiles = (u64 *)grow(nullptr, c1, (ntiles + 1) * 8);
    b.tile_pre = (u64 *)grow(nullptr, c2, (ntiles + 1) * 8);
    b.tiles_cap = ntiles + 1;
}

static void *tmp_storage(gpu_bufs &b, size_t bytes)
{
    u64 cap = b.tmp_cap;
    b.tmp = grow(b.tmp, cap, bytes ? bytes : 1);
    b.tmp_cap = cap;
    return b.tmp;
}

/* Exclusive scan of b.tiles[0..ntiles] (the last entry 0) into b.tile_pre. */
static void scan_tiles(gpu_bufs &b, u64 ntiles)
{
    CHECK(cudaMemsetAsync(b.tiles + ntiles, 0, 8, b.st));
    size_t bytes = 0;
    CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, b.tiles, b.tile_pre, (int64_t)ntiles + 1, b.st));
    void *t = tmp_storage(b, bytes);
    CHECK(cub::DeviceScan::ExclusiveSum(t, bytes, b.tiles, b.tile_pre, (int64_t)ntiles + 1, b.st));
}

struct parse_result {
    u64 nlines = 0, nkeys = 0;
    int wide = 0;
    u64 bad_line = 0; /* 1-based; 0: none */
    int bad_range = 0;
    const void *keys = nullptr; /* device: nkeys keys, int64 if wide else int32 */
};

template <typename K> static void launch_parse(gpu_bufs &b, u64 len, u64 ntiles)
{
    reset_summary<<<1, 1, 0, b.st>>>(b.sum);
    parse_lines<K><<<(unsigned)ntiles, PB, 0, b.st>>>(b.text, len, b.tile_pre, (K *)b.keys,
                                                       b.is_key, b.sum);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(b.h_sum, b.sum, sizeof *b.sum, cudaMemcpyDeviceToHost, b.st));
    CHECK(cudaStreamSynchronize(b.st));
}

template <typename K> static u64 compact(gpu_bufs &b, u64 nlines)
{
    size_t bytes = 0;
    CHECK(cub::DeviceSelect::Flagged(nullptr, bytes, (K *)b.keys, b.is_key, (K *)b.keys2,
                                     b.d_nsel, (int64_t)nlines, b.st));
    void *t = tmp_storage(b, bytes);
    CHECK(cub::DeviceSelect::Flagged(t, bytes, (K *)b.keys, b.is_key, (K *)b.keys2, b.d_nsel,
                                     (int64_t)nlines, b.st));
    CHECK(cudaMemcpyAsync(b.h_u64, b.d_nsel, 8, cudaMemcpyDeviceToHost, b.st));
    CHECK(cudaStreamSynchronize(b.st));
    return *b.h_u64;
}

/* Parses the len bytes at b.text (already on the device). */
static parse_result gpu_parse(gpu_bufs &b, u64 len)
{
    parse_result r;
    if (len == 0)
        return r;
    u64 ntiles = (len + TILE - 1) / TILE;
    if (ntiles > 0x7fffffffULL)
        die("text too large for one launch");
    ensure_tiles(b, ntiles);
    count_newlines<<<(unsigned)ntiles, PB, 0, b.st>>>(b.text, len, b.tiles);
    CHECK(cudaGetLastError());
    scan_tiles(b, ntiles);
    CHECK(cudaMemcpyAsync(b.h_u64, b.tile_pre + ntiles, 8, cudaMemcpyDeviceToHost, b.st));
    CHECK(cudaStreamSynchronize(b.st));
    u64 bound = *b.h_u64 + 1; /* lines, at most */
    if (bound > b.lines_cap) {
        u64 c1 = 0, c2 = 0, c3 = 0;
        cudaFree(b.keys);
        cudaFree(b.keys2);
        cudaFree(b.is_key);
        b.keys = grow(nullptr, c1, bound * 8);
        b.keys2 = grow(nullptr, c2, bound * 8);
        b.is_key = (uint8_t *)grow(nullptr, c3, bound);
        b.lines_cap = bound;
    }
    launch_parse<int32_t>(b, len, ntiles);
    r.wide = b.h_sum->wide;
    if (r.wide)
        launch_parse<int64_t>(b, len, ntiles);
    const parse_summary &s = *b.h_sum;
    r.nlines = s.nlines;
    if (s.first_bad != ~0ULL) {
        r.bad_line = s.first_bad / 2 + 1;
        r.bad_range = (int)(s.first_bad & 1);
        return r;
    }
    r.keys = b.keys;
    r.nkeys = r.nlines;
    if (s.any_blank) {
        r.nkeys = r.wide ? compact<int64_t>(b, r.nlines) : compact<int32_t>(b, r.nlines);
        r.keys = b.keys2;
    }
    return r;
}

/* Formats n keys at d_keys into b.out; returns the number of bytes. */
template <typename K> static u64 gpu_format(gpu_bufs &b, const K *d_keys, u64 n)
{
    if (n == 0)
        return 0;
    u64 ntiles = (n + FTILE - 1) / FTILE, cap = b.out_cap;
    ensure_tiles(b, ntiles);
    b.out = (char *)grow(b.out, cap, n * max_line<K>::value);
    b.out_cap = cap;
    format_count<K><<<(unsigned)ntiles, FB, 0, b.st>>>(d_keys, n, b.tiles);
    CHECK(cudaGetLastError());
    scan_tiles(b, ntiles);
    format_write<K><<<(unsigned)ntiles, FB, 0, b.st>>>(d_keys, n, b.tile_pre, b.out);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(b.h_u64, b.tile_pre + ntiles, 8, cudaMemcpyDeviceToHost, b.st));
    CHECK(cudaStreamSynchronize(b.st));
    return *b.h_u64;
}

/* ================================================================ host references */

/* The plain parser: a line's syntax checked by hand, its value by strtoll. */
struct ref_result {
    std::vector<int64_t> keys;
    int wide = 0;
    u64 nlines = 0, bad_line = 0;
    int bad_range = 0;
};

static ref_result ref_parse(const char *t, size_t len)
{
    ref_result r;
    size_t i = 0;
    while (i < len) {
        size_t e = i;
        while (e < len && t[e] != '\n')
            e++;
        r.nlines++;
        std::string s(t + i, e - i);
        i = e + 1;
        if (!s.empty() && s.back() == '\r')
            s.pop_back();
        size_t a = s.find_first_not_of(" \t");
        if (a == std::string::npos)
            continue;
        s = s.substr(a, s.find_last_not_of(" \t") - a + 1);
        size_t d = s[0] == '+' || s[0] == '-';
        bool ok = s.size() > d;
        for (size_t k = d; k < s.size(); k++)
            ok = ok && s[k] >= '0' && s[k] <= '9';
        errno = 0;
        long long v = ok ? strtoll(s.c_str(), nullptr, 10) : 0;
        if (!ok || errno == ERANGE) {
            if (!r.bad_line) {
                r.bad_line = r.nlines;
                r.bad_range = ok;
            }
            continue; /* keep counting lines */
        }
        if (v < INT32_MIN || v > INT32_MAX)
            r.wide = 1;
        r.keys.push_back(v);
    }
    return r;
}

/* core/input.c's parser on text in memory, as one block (gm_input_parse_block) on
 * nthreads threads, into a key buffer that starts as int32 and widens itself. */
static ref_result core_parse(const char *t, size_t len, int nthreads, double *seconds,
                             bool keep = true)
{
    ref_result r;
    gm_input in;
    memset(&in, 0, sizeof in);
    in.name = "t";
    strcpy(in.shown, "t");
    in.fd = -1;
    in.size = (int64_t)len;
    gm_block blk = { t, len, 1 };
    gm_keybuf kb = { nullptr, 0, 0, 0, GM_I32 };
    gm_parse_opts o = { nthreads, 0, 0, 0 };
    gm_status st;
    double t0 = gm_now();
    int rc = gm_input_parse_block(&in, &blk, &o, &kb, &st);
    if (seconds)
        *seconds = gm_now() - t0;
    if (rc == GM_OK) {
        r.wide = kb.width == GM_I64;
        if (keep) {
            r.keys.resize(kb.n);
            for (int64_t i = 0; i < kb.n; i++)
                r.keys[i] = gm_keybuf_get(&kb, i);
        }
    } else {
        unsigned long long line = 0;
        if (sscanf(st.msg, "t:%llu:", &line) != 1)
            die("core parse: %s", st.msg);
        r.bad_line = line;
        r.bad_range = strstr(st.msg, "out of range") != nullptr;
    }
    r.nlines = (u64)in.line;
    gm_keybuf_free(&kb);
    gm_input_close(&in);
    return r;
}

/* core/input.c's whole path on a file, as gpumerge runs it: open, read in blocks
 * (preads on every thread), parse each block into a key buffer. Returns the
 * seconds. */
static double core_parse_file(const char *path, int nthreads)
{
    gm_input in;
    gm_status st;
    gm_keybuf kb = { nullptr, 0, 0, 0, GM_I32 };
    gm_parse_opts o = { nthreads, 0, 0, 0 };
    double t0 = gm_now();
    if (gm_input_open(&in, path, &st))
        die("core: %s", st.msg);
    while (!in.eof)
        if (gm_input_read_keys(&in, &o, &kb, &st))
            die("core: %s", st.msg);
    gm_input_close(&in);
    double t = gm_now() - t0;
    gm_keybuf_free(&kb);
    return t;
}

/* pread or pwrite of all of [lo, hi) (one call moves at most about 2 GB). */
static void io_all(bool write, int fd, char *buf, u64 lo, u64 hi)
{
    while (lo < hi) {
        ssize_t got = write ? pwrite(fd, buf + lo, hi - lo, (off_t)lo)
                            : pread(fd, buf + lo, hi - lo, (off_t)lo);
        if (got <= 0)
            die("%s the scratch file: %s", write ? "writing" : "reading",
                got ? strerror(errno) : "end of file");
        lo += (u64)got;
    }
}

static std::string ref_format(int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld\n", (long long)v);
    return buf;
}

/* ================================================================ random texts */

static const char *const accepted[] = {
    "0", "-0", "+0", "+17", "-17", "2147483647", "-2147483648", "2147483648", "-2147483649",
    "9223372036854775807", "-9223372036854775808", "+9223372036854775807",
    "0000000000000000000000000000042", "-00000000000000000000009223372036854775808",
    "9999999999999999", "10000000000000000", "99999999999999999", "-4294967296",
    " 12", "\t-5\t", "  +7  \t ", "12\r", " 3 \r", "00", "1000000000000000000",
};
static const char *const blanks[] = { "", " ", "\t", "\r", " \t \r", "   " };
static const char *const rejected[] = {
    "+", "-", "12a", "a12", "1 2", "--1", "+-1", "- 1", "1\r\r", "12\r ", "x", "0x10",
    "1.5", "1e5", "\xd9\xa1", "\v1", "1\f",
};
static const char *const too_big[] = {
    "9223372036854775808", "-9223372036854775809", "99999999999999999999",
    "+18446744073709551616", "-100000000000000000000000",
};

static std::string random_key(std::mt19937_64 &g, int narrow)
{
    char buf[32];
    int64_t v;
    switch (g() % 4) {
    case 0: v = (int32_t)g(); break;
    case 1: v = (int64_t)(g() % 2000) - 1000; break;
    case 2: v = narrow ? (int32_t)g() : (int64_t)g(); break;
    default: v = narrow ? (int32_t)(g() >> (g() % 32)) : (int64_t)(g() >> (g() % 64)) * (g() & 1 ? 1 : -1);
    }
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    return buf;
}

/* A random text: keys, the fixed forms above, blank lines (unless c % 5 == 2), long
 * lines that leave a tile's halo, CRLF; narrow keeps every key within int32; bad
 * plants rejected lines. */
static std::string random_text(std::mt19937_64 &g, size_t lines, int c)
{
    const int narrow = c % 3 == 0, bad = c % 4 == 1, blank = c % 5 != 2;
    std::string t;
    for (size_t i = 0; i < lines; i++) {
        unsigned r = g() % 100;
        if (r < 70) {
            t += random_key(g, narrow);
        } else if (r < 82) {
            const char *a = accepted[g() % (sizeof accepted / sizeof *accepted)];
            bool fits = true;
            errno = 0;
            long long v = strtoll(a, nullptr, 10);
            fits = errno != ERANGE && v >= INT32_MIN && v <= INT32_MAX;
            t += narrow && !fits ? "1" : a;
        } else if (r < 90 && blank) {
            t += blanks[g() % (sizeof blanks / sizeof *blanks)];
        } else if (r < 92) {
            t += std::string(g() % 5000, g() & 1 ? ' ' : '\t') + random_key(g, narrow);
        } else if (r < 94 && bad) {
            t += rejected[g() % (sizeof rejected / sizeof *rejected)];
        } else if (r < 95 && bad) {
            t += too_big[g() % (sizeof too_big / sizeof *too_big)];
        } else {
            t += random_key(g, narrow) + (g() & 1 ? "\r" : " ");
        }
        if (i + 1 < lines || g() % 2)
            t += '\n';
    }
    return t;
}

static std::vector<std::string> fixed_texts()
{
    return { "", "\n", "\n\n\n", "5", "5\n", " ", "-", "\r\n", "\r", "-9223372036854775808",
             "1\n\n2\n", "1\n2\n3", "9223372036854775808\nx\n", "x\n9223372036854775808\n",
             std::string(TILE - 1, ' ') + "7\n8", std::string(TILE + HALO + 3, '\t') + "-1",
             std::string(TILE, '\n') + "3", std::string(3 * TILE + 5, '0') + "\n" };
}

/* ================================================================ host-only self-test */

static const char *scratch_dir(u64 bytes);

/* The parse kernels' per-thread work run on the host, tile after tile and thread
 * after thread: each tile staged (with its halo) in a copy of its own, newline masks
 * of 16 bytes, parse_one for every line start, the int32 pass then the int64 one,
 * and the compaction of blank lines' gaps. */
template <typename K>
static parse_summary emulate_pass(const std::string &padded, u64 len, std::vector<K> &keys,
                                  std::vector<uint8_t> &is_key)
{
    parse_summary sum = { ~0ULL, 0, 0, 0 };
    u64 nl = 0;
    for (u64 t0 = 0; t0 < len; t0 += TILE) {
        std::string staged = padded.substr(t0, TILE + HALO);
        const tile_text t = { staged.data(), padded.data(), t0, len };
        if (t0 == 0)
            parse_one(t, 0, 0, keys.data(), is_key.data(), &sum);
        for (u64 pos = t0; pos < t0 + TILE; pos += 16) {
            uint4 v;
            memcpy(&v, padded.data() + pos, 16);
            for (unsigned m = newline_mask(v, pos, len); m; m &= m - 1) {
                nl++;
                u64 start = pos + __builtin_ctz(m) + 1;
                if (start < len)
                    parse_one(t, start, nl, keys.data(), is_key.data(), &sum);
            }
        }
    }
    sum.nlines = nl + (len > 0 && padded[len - 1] != '\n');
    return sum;
}

static ref_result emulate_parse(const std::string &text)
{
    ref_result r;
    /* readable after the text as on the device; never a newline */
    std::string padded = text + std::string(TILE + HALO + TILE, 'x');
    std::vector<int32_t> k32(text.size() + 1);
    std::vector<int64_t> k64(text.size() + 1);
    std::vector<uint8_t> is_key(text.size() + 1);
    parse_summary s = emulate_pass(padded, text.size(), k32, is_key);
    r.wide = s.wide;
    if (r.wide)
        s = emulate_pass(padded, text.size(), k64, is_key);
    else
        std::copy(k32.begin(), k32.end(), k64.begin());
    r.nlines = s.nlines;
    if (s.first_bad != ~0ULL) {
        r.bad_line = s.first_bad / 2 + 1;
        r.bad_range = (int)(s.first_bad & 1);
        return r;
    }
    for (u64 i = 0; i < s.nlines; i++)
        if (is_key[i])
            r.keys.push_back(k64[i]);
    return r;
}

static int host_selftest()
{
    std::mt19937_64 g(42);
    std::vector<std::string> texts = fixed_texts();
    for (int c = 0; c < 400; c++) {
        size_t lines = c % 10 == 9 ? 20000 + g() % 30000 : g() % 3000;
        texts.push_back(random_text(g, lines, c));
    }
    size_t nbad = 0, nwide = 0, nblank = 0;
    for (size_t c = 0; c < texts.size(); c++) {
        const std::string &t = texts[c];
        ref_result a = ref_parse(t.data(), t.size());
        nbad += a.bad_line != 0;
        nwide += !a.bad_line && a.wide;
        nblank += !a.bad_line && a.keys.size() < a.nlines;
        for (int th : { 0, 1, 3 }) { /* 0: the kernels' code; else core on th threads */
            ref_result b = th ? core_parse(t.data(), t.size(), th, nullptr) : emulate_parse(t);
            const char *who = th ? "core" : "the kernels' code on the host";
            if (a.bad_line != b.bad_line || a.bad_range != b.bad_range)
                die("host self-test, text %zu: reference says bad line %llu (%d), %s %llu (%d)",
                    c, a.bad_line, a.bad_range, who, b.bad_line, b.bad_range);
            if (!a.bad_line && (a.keys != b.keys || a.wide != b.wide || a.nlines != b.nlines))
                die("host self-test, text %zu: the reference's keys and %s's differ", c, who);
        }
    }
    std::vector<int64_t> vals = { 0, -1, 1, 9, 10, 99, 100, INT32_MAX, INT32_MIN, INT64_MAX,
                                  INT64_MIN, 4294967295LL, 4294967296LL, -4294967296LL,
                                  99999999, 100000000, 9999999999999999LL };
    for (int i = 0; i < 100000; i++)
        vals.push_back((int64_t)(g() >> (g() % 64)) * (g() & 1 ? 1 : -1));
    for (int64_t v : vals) {
        char buf[32];
        char *e = gm_format_i64(buf, v);
        *e++ = '\n';
        if (std::string(buf, e) != ref_format(v))
            die("host self-test: gm_format_i64(%lld) differs from snprintf", (long long)v);
        /* format_write's per-key part */
        unsigned n = line_length(v);
        memset(buf, 0, sizeof buf);
        if (v < 0)
            buf[0] = '-';
        put_digits(buf + n - 1, magnitude(v));
        buf[n - 1] = '\n';
        if (std::string(buf, n) != ref_format(v))
            die("host self-test: the format kernel's code gives '%.*s' for %lld", (int)n, buf,
                (long long)v);
    }
    /* The benchmark's file path: a scratch file unlinked at once, read back, and
     * parsed by core/input.c through /proc/self/fd. */
    std::string big = random_text(g, 30000, 3), path = std::string(scratch_dir(0)) + "/gpu_text.st";
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        die("%s: %s", path.c_str(), strerror(errno));
    unlink(path.c_str());
    io_all(true, fd, &big[0], 0, big.size());
    std::string back(big.size(), '\0');
    io_all(false, fd, &back[0], 0, back.size());
    if (back != big)
        die("host self-test: the scratch file reads back different");
    core_parse_file(("/proc/self/fd/" + std::to_string(fd)).c_str(), 2);
    close(fd);
    printf("host self-test: %zu texts (%zu with a bad line, %zu good with int64 keys, %zu "
           "good with blank lines) parsed alike by the reference, core/input.c on 1 and 3 "
           "threads and the parse kernel's code; %zu keys formatted alike by snprintf, "
           "gm_format_i64 and the format kernel's code\n",
           texts.size(), nbad, nwide, nblank, vals.size());
    return 0;
}

/* ================================================================ GPU correctness */

static void check_gpu_parse(gpu_bufs &b, const std::string &t, size_t c)
{
    ref_result a = ref_parse(t.data(), t.size());
    ensure_text(b, t.size());
    if (!t.empty())
        CHECK(cudaMemcpy(b.text, t.data(), t.size(), cudaMemcpyHostToDevice));
    parse_result r = gpu_parse(b, t.size());
    if (r.bad_line != a.bad_line || r.bad_range != a.bad_range)
        die("parse, text %zu (%zu bytes): first bad line %llu (%s) on the GPU, %llu (%s) "
            "on the host", c, t.size(), r.bad_line, r.bad_range ? "range" : "syntax",
            a.bad_line, a.bad_range ? "range" : "syntax");
    if (a.bad_line)
        return;
    if (r.nlines != a.nlines || r.nkeys != a.keys.size() || r.wide != a.wide)
        die("parse, text %zu: GPU %llu lines %llu keys wide %d, host %llu lines %zu keys wide %d",
            c, r.nlines, r.nkeys, r.wide, a.nlines, a.keys.size(), a.wide);
    std::vector<int64_t> got(r.nkeys);
    if (r.wide) {
        CHECK(cudaMemcpy(got.data(), r.keys, r.nkeys * 8, cudaMemcpyDeviceToHost));
    } else {
        std::vector<int32_t> g32(r.nkeys);
        CHECK(cudaMemcpy(g32.data(), r.keys, r.nkeys * 4, cudaMemcpyDeviceToHost));
        std::copy(g32.begin(), g32.end(), got.begin());
    }
    for (u64 i = 0; i < r.nkeys; i++)
        if (got[i] != a.keys[i])
            die("parse, text %zu: key %llu is %lld on the GPU, %lld on the host", c, i,
                (long long)got[i], (long long)a.keys[i]);
}

template <typename K> static void check_gpu_format(gpu_bufs &b, const std::vector<K> &keys)
{
    std::string want;
    for (K k : keys)
        want += ref_format(k);
    K *d;
    CHECK(cudaMalloc(&d, keys.size() * sizeof(K) + 1));
    CHECK(cudaMemcpy(d, keys.data(), keys.size() * sizeof(K), cudaMemcpyHostToDevice));
    u64 n = gpu_format<K>(b, d, keys.size());
    std::string got(n, '\0');
    if (n)
        CHECK(cudaMemcpy(&got[0], b.out, n, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d));
    if (got != want) {
        size_t i = 0;
        while (i < got.size() && i < want.size() && got[i] == want[i])
            i++;
        die("format (int%zu, %zu keys): %llu bytes on the GPU, %zu from snprintf, first "
            "difference at byte %zu", 8 * sizeof(K), keys.size(), n, want.size(), i);
    }
}

static void gpu_selftest(gpu_bufs &b, int cases)
{
    std::mt19937_64 g(7);
    std::vector<std::string> texts = fixed_texts();
    for (int c = 0; c < cases; c++) {
        size_t lines = c % 10 == 9 ? 20000 + g() % 30000 : g() % 3000;
        texts.push_back(random_text(g, lines, c));
    }
    for (size_t c = 0; c < texts.size(); c++)
        check_gpu_parse(b, texts[c], c);
    int fcases = std::max(4, cases / 10);
    for (int c = 0; c < fcases; c++) {
        size_t n = c == 0 ? 1 : c == 1 ? FTILE : c == 2 ? FTILE + 1 : g() % 50000;
        std::vector<int32_t> k32(n);
        std::vector<int64_t> k64(n);
        for (size_t i = 0; i < n; i++) {
            int s = (int)(g() % 64);
            k64[i] = i % 7 == 0 ? (g() & 1 ? INT64_MIN : INT64_MAX) : (int64_t)(g() >> s) * (g() & 1 ? 1 : -1);
            k32[i] = i % 7 == 0 ? (g() & 1 ? INT32_MIN : INT32_MAX) : (int32_t)(g() >> (32 + s / 2));
        }
        check_gpu_format(b, k32);
        check_gpu_format(b, k64);
    }
    printf("GPU self-test: %zu texts parsed as the host parser does (first bad line, "
           "keys, width); %d x 2 key sets formatted as snprintf does\n", texts.size(), fcases);
}

/* ================================================================ benchmark */

static inline u64 splitmix(u64 x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}
template <typename K> static inline K bench_key(u64 i) { return (K)(int64_t)splitmix(i); }

/* fn(lo, hi, t) over [0, n) cut into nthreads ranges, thread t taking the t-th. */
template <typename F> static void par(int nthreads, u64 n, F fn)
{
    std::vector<std::thread> th;
    for (int t = 0; t < nthreads; t++)
        th.emplace_back([=, &fn] { fn(n * t / nthreads, n * (t + 1) / nthreads, t); });
    for (auto &x : th)
        x.join();
}

static int REPEAT = 5;

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/* Median seconds of fn on the stream, by CUDA events, after one warm-up run. */
template <typename F> static double time_gpu(cudaStream_t st, F fn)
{
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    fn();
    std::vector<double> t;
    for (int i = 0; i < REPEAT; i++) {
        CHECK(cudaEventRecord(a, st));
        fn();
        CHECK(cudaEventRecord(b, st));
        CHECK(cudaEventSynchronize(b));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms / 1e3);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return median(t);
}

/* Median wall seconds of fn (which finishes its own work), after one warm-up run. */
template <typename F> static double time_wall(F fn)
{
    fn();
    std::vector<double> t;
    for (int i = 0; i < REPEAT; i++) {
        double t0 = gm_now();
        fn();
        t.push_back(gm_now() - t0);
    }
    return median(t);
}

static void row(const char *what, u64 bytes, double s)
{
    printf("  %-52s %14llu %9.2f %8.2f\n", what, bytes, s * 1e3, bytes / s / 1e9);
}

/* A directory with room for bytes more on a memory file system, else /tmp. */
static const char *scratch_dir(u64 bytes)
{
    struct statvfs v;
    if (statvfs("/dev/shm", &v) == 0 && (u64)v.f_bavail * v.f_frsize > bytes + (1ULL << 30))
        return "/dev/shm";
    return "/tmp";
}

template <typename K> static void bench(gpu_bufs &b, u64 n, int nthreads)
{
    const char *kname = sizeof(K) == 4 ? "int32" : "int64";
    /* The text: canonical lines of bench_key(i), made in parallel into pinned memory. */
    std::vector<u64> off(nthreads + 1, 0);
    par(nthreads, n, [&](u64 lo, u64 hi, int t) {
        char buf[32];
        u64 s = 0;
        for (u64 i = lo; i < hi; i++)
            s += gm_format_i64(buf, bench_key<K>(i)) - buf + 1;
        off[t + 1] = s;
    });
    for (int t = 0; t < nthreads; t++)
        off[t + 1] += off[t];
    const u64 len = off[nthreads];
    char *h_text, *h_out;
    K *h_keys;
    CHECK(cudaMallocHost(&h_text, len));
    CHECK(cudaMallocHost(&h_out, len));
    CHECK(cudaMallocHost(&h_keys, n * sizeof(K)));
    par(nthreads, n, [&](u64 lo, u64 hi, int t) {
        char *p = h_text + off[t];
        for (u64 i = lo; i < hi; i++) {
            p = gm_format_i64(p, bench_key<K>(i));
            *p++ = '\n';
        }
    });
    const u64 kbytes = n * sizeof(K);
    printf("\n%s: %llu random lines, %llu bytes of text (%.2f x the keys' %llu bytes), "
           "%d CPU threads\n", kname, n, len, (double)len / kbytes, kbytes, nthreads);
    printf("  %-52s %14s %9s %8s\n", "stage", "bytes", "ms", "GB/s");

    /* ---- parse: correctness on the benchmark's own data first */
    ensure_text(b, len);
    CHECK(cudaMemcpy(b.text, h_text, len, cudaMemcpyHostToDevice));
    parse_result r = gpu_parse(b, len);
    if (r.bad_line || r.nkeys != n || r.wide != (sizeof(K) == 8))
        die("benchmark parse (%s): bad line %llu, %llu keys, wide %d", kname, r.bad_line,
            r.nkeys, r.wide);
    CHECK(cudaMemcpy(h_keys, r.keys, kbytes, cudaMemcpyDeviceToHost));
    std::atomic<u64> wrong(0);
    par(nthreads, n, [&](u64 lo, u64 hi, int) {
        for (u64 i = lo; i < hi; i++)
            if (h_keys[i] != bench_key<K>(i))
                wrong++;
    });
    if (wrong)
        die("benchmark parse (%s): %llu keys differ from the generated ones", kname, (u64)wrong);
    u64 flen = gpu_format<K>(b, (const K *)r.keys, n);
    if (flen != len)
        die("benchmark format (%s): %llu bytes on the GPU, %llu generated", kname, flen, len);
    CHECK(cudaMemcpy(h_out, b.out, len, cudaMemcpyDeviceToHost));
    if (memcmp(h_out, h_text, len) != 0)
        die("benchmark format (%s): the GPU's text differs from the generated text", kname);

    /* ---- parse: the stages */
    double h2d_text = time_gpu(b.st, [&] {
        CHECK(cudaMemcpyAsync(b.text, h_text, len, cudaMemcpyHostToDevice, b.st));
    });
    double gparse = time_gpu(b.st, [&] { gpu_parse(b, len); });
    double gparse_wall = time_wall([&] {
        CHECK(cudaMemcpyAsync(b.text, h_text, len, cudaMemcpyHostToDevice, b.st));
        gpu_parse(b, len);
    });
    double h2d_keys = time_gpu(b.st, [&] {
        CHECK(cudaMemcpyAsync(b.keys2, h_keys, kbytes, cudaMemcpyHostToDevice, b.st));
    });
    std::vector<double> cp;
    for (int i = 0; i <= REPEAT; i++) {
        double s;
        ref_result c = core_parse(h_text, len, nthreads, &s, i == 0);
        if (i == 0) {
            if (c.bad_line || c.keys.size() != n || c.wide != (sizeof(K) == 8))
                die("benchmark: core/input.c parsed %zu keys", c.keys.size());
            par(nthreads, n, [&](u64 lo, u64 hi, int) {
                for (u64 k = lo; k < hi; k++)
                    if (c.keys[k] != bench_key<K>(k))
                        wrong++;
            });
            if (wrong)
                die("benchmark: core/input.c's keys differ from the generated ones");
        }
        if (i > 0)
            cp.push_back(s);
    }
    double cparse = median(cp);

    /* The text's way into pinned memory, from a file on a memory file system. */
    double rd_pinned = 0, h2d_pageable = 0, reg = 0, cparse_file = 0;
    std::string path = std::string(scratch_dir(len)) + "/gpu_text." + std::to_string(getpid());
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd >= 0) {
        unlink(path.c_str()); /* gone when we exit, however we exit */
        par(nthreads, len, [&](u64 lo, u64 hi, int) { io_all(true, fd, h_text, lo, hi); });
        rd_pinned = time_wall([&] {
            par(nthreads, len, [&](u64 lo, u64 hi, int) { io_all(false, fd, h_out, lo, hi); });
        });
        std::string self = "/proc/self/fd/" + std::to_string(fd);
        cparse_file = time_wall([&] { core_parse_file(self.c_str(), nthreads); });
        h2d_pageable = time_wall([&] {
            void *m = mmap(nullptr, len, PROT_READ, MAP_PRIVATE, fd, 0);
            if (m == MAP_FAILED)
                die("mmap: %s", strerror(errno));
            madvise(m, len, MADV_WILLNEED);
            CHECK(cudaMemcpyAsync(b.text, m, len, cudaMemcpyHostToDevice, b.st));
            CHECK(cudaStreamSynchronize(b.st));
            munmap(m, len);
        });
        cudaError_t reg_err = cudaSuccess;
        reg = time_wall([&] {
            void *m = mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, 0);
            if (m == MAP_FAILED)
                die("mmap: %s", strerror(errno));
            if (reg_err == cudaSuccess)
                reg_err = cudaHostRegister(m, len, cudaHostRegisterReadOnly);
            if (reg_err == cudaSuccess)
                CHECK(cudaHostUnregister(m));
            munmap(m, len);
        });
        if (reg_err != cudaSuccess) {
            printf("  (cudaHostRegister of the mapping failed: %s)\n", cudaGetErrorString(reg_err));
            cudaGetLastError();
            reg = 0;
        }
        close(fd);
    }

    row("H2D text, pinned", len, h2d_text);
    row("GPU parse (count, scan, parse; int32 pass first)", len, gparse);
    row("H2D text + GPU parse, wall clock", len, gparse_wall);
    row("CPU parse, core/input.c (one block in memory)", len, cparse);
    row(sizeof(K) == 4 ? "H2D int32 keys, pinned" : "H2D int64 keys, pinned", kbytes, h2d_keys);
    if (fd >= 0) {
        row("CPU read + parse of the file as gpumerge does", len, cparse_file);
        row("file read into pinned memory, pread", len, rd_pinned);
        row("H2D from a fresh mmap of the file (pageable)", len, h2d_pageable);
        if (reg > 0)
            row("cudaHostRegister + unregister of a fresh mapping", len, reg);
    } else {
        printf("  (no scratch file: %s: %s)\n", path.c_str(), strerror(errno));
    }

    /* ---- format */
    const K *d_keys = (const K *)r.keys;
    double gfmt = time_gpu(b.st, [&] { gpu_format<K>(b, d_keys, n); });
    double d2h_text = time_gpu(b.st, [&] {
        CHECK(cudaMemcpyAsync(h_out, b.out, len, cudaMemcpyDeviceToHost, b.st));
    });
    double gfmt_wall = time_wall([&] {
        gpu_format<K>(b, d_keys, n);
        CHECK(cudaMemcpyAsync(h_out, b.out, len, cudaMemcpyDeviceToHost, b.st));
        CHECK(cudaStreamSynchronize(b.st));
    });
    double d2h_keys = time_gpu(b.st, [&] {
        CHECK(cudaMemcpyAsync(h_keys, d_keys, kbytes, cudaMemcpyDeviceToHost, b.st));
    });
    /* The CPU formatter as output.c runs it: blocks of 65536 keys on every thread,
     * each into a buffer of its own that is reused (the writer's part left out). */
    const u64 blk = 65536, nblk = (n + blk - 1) / blk;
    std::vector<std::vector<char>> bufs(nthreads, std::vector<char>(blk * 21));
    std::atomic<u64> sink(0);
    double cfmt = time_wall([&] {
        std::atomic<u64> next(0);
        std::vector<std::thread> th;
        for (int t = 0; t < nthreads; t++)
            th.emplace_back([&, t] {
                u64 bytes = 0;
                for (u64 k; (k = next++) < nblk;) {
                    char *p = bufs[t].data();
                    for (u64 i = k * blk; i < std::min(n, (k + 1) * blk); i++) {
                        p = gm_format_i64(p, h_keys[i]);
                        *p++ = '\n';
                    }
                    bytes += p - bufs[t].data();
                }
                sink += bytes;
            });
        for (auto &x : th)
            x.join();
    });
    if (sink != (u64)(REPEAT + 1) * len)
        die("benchmark: the CPU formatter wrote %llu bytes", (u64)sink);

    row("GPU format (count, scan, write)", len, gfmt);
    row("D2H text, pinned", len, d2h_text);
    row("GPU format + D2H text, wall clock", len, gfmt_wall);
    row(sizeof(K) == 4 ? "D2H int32 keys, pinned" : "D2H int64 keys, pinned", kbytes, d2h_keys);
    row("CPU format, output.c's formatter on every thread", len, cfmt);

    printf("  end to end (ms; 'overlapped' = the slower stage, as a chunked pipeline would run):\n");
    printf("    parse:  ship text + GPU parse  %8.2f (overlapped %8.2f, measured wall %8.2f)\n",
           (h2d_text + gparse) * 1e3, std::max(h2d_text, gparse) * 1e3, gparse_wall * 1e3);
    printf("            CPU parse + ship keys  %8.2f (overlapped %8.2f)  -> GPU path %.2fx faster\n",
           (cparse + h2d_keys) * 1e3, std::max(cparse, h2d_keys) * 1e3,
           (cparse + h2d_keys) / (h2d_text + gparse));
    if (fd >= 0)
        printf("      from the file: pread to pinned + ship text + GPU parse %8.2f (overlapped %8.2f)\n"
               "                     CPU read + parse + ship keys          %8.2f (overlapped %8.2f)"
               "  -> GPU path %.2fx faster\n",
               (rd_pinned + h2d_text + gparse) * 1e3,
               std::max(rd_pinned, std::max(h2d_text, gparse)) * 1e3,
               (cparse_file + h2d_keys) * 1e3, std::max(cparse_file, h2d_keys) * 1e3,
               (cparse_file + h2d_keys) / (rd_pinned + h2d_text + gparse));
    printf("    format: GPU format + ship text %8.2f (overlapped %8.2f, measured wall %8.2f)\n",
           (gfmt + d2h_text) * 1e3, std::max(gfmt, d2h_text) * 1e3, gfmt_wall * 1e3);
    printf("            ship keys + CPU format %8.2f (overlapped %8.2f)  -> GPU path %.2fx faster\n",
           (d2h_keys + cfmt) * 1e3, std::max(d2h_keys, cfmt) * 1e3,
           (d2h_keys + cfmt) / (gfmt + d2h_text));
    CHECK(cudaFreeHost(h_text));
    CHECK(cudaFreeHost(h_out));
    CHECK(cudaFreeHost(h_keys));
}

int main(int argc, char **argv)
{
    setvbuf(stdout, nullptr, _IOLBF, 0);
    if (argc > 1 && strcmp(argv[1], "--host-selftest") == 0)
        return host_selftest();
    u64 n = argc > 1 ? strtoull(argv[1], nullptr, 10) : 100000000ULL;
    int cases = argc > 2 ? atoi(argv[2]) : 300;
    if (argc > 3)
        REPEAT = std::max(1, atoi(argv[3]));
    int nthreads = gm_cpu_count();
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, 0));
    printf("device: %s, %d SMs; %d CPU threads; median of %d runs after one warm-up\n",
           p.name, p.multiProcessorCount, nthreads, REPEAT);
    gpu_bufs b;
    bufs_init(b);
    gpu_selftest(b, cases);
    if (n > 0) {
        bench<int32_t>(b, n, nthreads);
        bench<int64_t>(b, n, nthreads);
    }
    bufs_free(b);
    CHECK(cudaDeviceSynchronize());
    printf("gpu_text: done, every check passed\n");
    return 0;
}
