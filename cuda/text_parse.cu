/*
 * text_parse.cu - the text path's parser (text_parse, see text.cuh): the grammar
 * of core/read/input.h, byte for byte as input.c's parse_line_slow, on the device.
 *
 * The text is cut into tiles of 4 KiB. One kernel counts each tile's line ends,
 * cub::DeviceScan turns the counts into each tile's first line number, and a second
 * kernel stages its tile (and a halo after it) in shared memory, scans its threads'
 * counts (cub::BlockScan) so each line end knows its line number, and parses the
 * line after it on the thread that found it. Keys go to their line's slot as int32;
 * a value wider than int32 raises a flag, the blocks still to start return at once,
 * and the pass runs again into int64 (the host parser's policy: int32 while every
 * key fits). Outside --strict only canonical integers are taken (the job's
 * canonical flag). The first declined line is the smallest line index reported
 * with atomicMin; the caller then runs the host's parser, which names it. Blank
 * lines leave gaps that cub::DeviceSelect::Flagged closes, only when there are any.
 */
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_select.cuh>

#include "kernels.cuh"
#include "text.cuh"

/* ------------------------------------------------------------------ kernels */

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

/* ------------------------------------------------------------------ host */

size_t text_room(size_t len)
{
    return (len + TILE - 1) / TILE * TILE + TILE + HALO;
}

/* One parse of every tile into keys of type K; *h_sum gets the summary. */
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

/* Closes the gaps that blank lines left among the keys (into r->other, which then
 * swaps with r->keys); r->nkeys gets the keys' count. */
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
    if ((rc = text_cub_temp(j, bytes, &t, st)))
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
    if ((rc = text_scan_tiles(j, counts, line0, ntiles, st)))
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
