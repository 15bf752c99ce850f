/*
 * resident.cu - the records sort with the text kept on the device
 * (gm_gpu_sort_lines, gpu.h). The input's bytes go from the caller's reads
 * through the pinned staging ring into one device text, so the host never holds
 * them; the lines are found, keyed and sorted there by records.cu's steps (the
 * stable key-value merge sort of chapter 12 and the refinement rounds). What the
 * device cannot order, the runs of records whose sort keys are equal, is gathered
 * into a compact buffer with its lines, sent to the host's tie routine
 * (core/device/recgpu.c, sort's own comparison) and its new order sent back. Then the
 * lines are gathered on the device into their sorted order, as cuDF gathers rows
 * by sorted indices: an inclusive sum of the kept lines' lengths places each one,
 * a warp copies 32 of them at a time, a piece of the output at a time, and every
 * piece goes back through the staging ring to the sink while the next moves. -u keeps the
 * first line of each run of equal keys where the device knows them equal (one
 * key, every prefix exact); under -s the same runs are final as sorted.
 */
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "kernels.cuh"
#include "records.cuh"
#include "recsteps.cuh"
#include "text.cuh"

/* Output bytes gathered on the device at a time (a piece may hold one line
 * more). */
constexpr size_t LINES_PIECE = 256u << 20;

/* ------------------------------------------------------------------ kernels */

/* Sorted record i is in a run of ties: tied to the one before or the one after. */
struct res_in_run {
    const unsigned char *tied;
    u64 n;
    __device__ bool operator()(u64 i) const { return tied[i] || (i + 1 < n && tied[i + 1]); }
};

/* Sorted record i begins a piece of the output: its first byte lies in another
 * piece than the record before's. */
struct res_piece_start {
    const u64 *off;
    u64 piece;
    __device__ bool operator()(u64 i) const
    {
        return i == 0 || off[i] / piece != off[i - 1] / piece;
    }
};

/* The bytes each listed record's line takes with its terminator (0 for a line
 * that -u drops): len[k] for record at[k], or record k where at is null. */
__global__ void res_len_kernel(const u64 *ends, const uint32_t *val, const uint32_t *at,
                               const unsigned char *drop, u64 n, u64 *len)
{
    gm_after_previous();
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += stride) {
        u64 i = at ? at[k] : k, s, l;
        rec_line(ends, val[i], &s, &l);
        len[k] = drop && drop[i] ? 0 : l + 1;
    }
}

/* Copies the listed records' lines (as res_len_kernel lists them) with their
 * terminators to out + off[k] - base, records [lo, hi) of the list. A warp takes
 * 32 records at a time, each lane finding one's line, and copies their lines one
 * after another, the lanes on consecutive bytes, so that every load and store of
 * the warp is coalesced (a thread a line would store 32 scattered bytes at once). */
__global__ void res_gather_kernel(const unsigned char *text, const u64 *ends,
                                  const uint32_t *val, const uint32_t *at,
                                  const unsigned char *drop, const u64 *off, u64 base, u64 lo,
                                  u64 hi, unsigned char *out)
{
    gm_after_previous();
    const unsigned lane = threadIdx.x & 31u;
    const u64 warp = ((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const u64 warps = ((u64)gridDim.x * blockDim.x) >> 5;
    for (u64 first = lo + warp * 32; first < hi; first += warps * 32) {
        const u64 k = first + lane;
        u64 s = 0, len = 0, to = 0; /* len 0: nothing to copy */
        if (k < hi) {
            const u64 i = at ? at[k] : k;
            if (!drop || !drop[i]) {
                rec_line(ends, val[i], &s, &len);
                len += 1; /* the terminator */
                to = off[k] - base;
            }
        }
        for (int t = 0; t < 32; t++) {
            const u64 ts = __shfl_sync(0xffffffffu, s, t);
            const u64 tl = __shfl_sync(0xffffffffu, len, t);
            const u64 tt = __shfl_sync(0xffffffffu, to, t);
            for (u64 b = lane; b < tl; b += 32)
                out[tt + b] = text[ts + b];
        }
    }
}

/* The tied records as the host's tie routine takes them: each one's prefix, its
 * reference moved to its line's place in the host's copy (host + off[k]), and
 * its tie flag. */
__global__ void res_ties_kernel(const u64 *recs, const unsigned char *tied, const uint32_t *at,
                                const u64 *off, u64 host, u64 m, u64 *out, unsigned char *out_tied)
{
    gm_after_previous();
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x; k < m; k += stride) {
        u64 i = at[k];
        out[2 * k] = recs[2 * i];
        out[2 * k + 1] = (recs[2 * i + 1] & ~GM_REC_ADDR_MASK) | (host + off[k]);
        out_tied[k] = tied[i];
    }
}

/* The tied records' lines in their new order: the host's order perm[k'] = k (the
 * record of list place k goes to place k'), through a copy of their lines. */
__global__ void res_take_kernel(const uint32_t *val, const uint32_t *at, u64 m, uint32_t *copy)
{
    gm_after_previous();
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x; k < m; k += stride)
        copy[k] = val[at[k]];
}

__global__ void res_put_kernel(const uint32_t *copy, const uint32_t *at, const uint32_t *perm,
                               u64 m, uint32_t *val)
{
    gm_after_previous();
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x; k < m; k += stride)
        val[at[k]] = copy[perm[k]];
}

/* off[at[k]] for each piece start k, and off[n] after them. */
__global__ void res_piece_off_kernel(const u64 *off, const uint32_t *at, u64 np, u64 n, u64 *out)
{
    gm_after_previous();
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x; k <= np; k += stride)
        out[k] = k < np ? off[at[k]] : off[n];
}

/* ------------------------------------------------------------------ steps */

/* The indices i < n where pred holds, into a new buffer *at; *count of them. */
template <typename P>
static int res_select(text_job &j, P pred, u64 n, u64 most, uint32_t **at, u64 *count,
                      gm_status *st)
{
    u64 *d_count = nullptr;
    int rc;
    if ((rc = j.mem.alloc(at, most ? most : 1, st)) || (rc = j.mem.alloc(&d_count, 1, st)))
        return rc;
    thrust::counting_iterator<u64> from(0);
    size_t bytes = 0;
    GM_CUDA(cub::DeviceSelect::If(nullptr, bytes, from, *at, d_count, (int64_t)n, pred, j.s), st);
    void *t = nullptr;
    if ((rc = text_cub_temp(j, bytes, &t, st)))
        return rc;
    GM_CUDA(cub::DeviceSelect::If(t, bytes, from, *at, d_count, (int64_t)n, pred, j.s), st);
    GM_CUDA(cudaMemcpyAsync(count, d_count, sizeof *count, cudaMemcpyDeviceToHost, j.s), st);
    GM_CUDA(cudaStreamSynchronize(j.s), st);
    return GM_OK;
}

/* off[0] = 0 and off[k + 1] = len[0] + ... + len[k], k < n. */
static int res_offsets(text_job &j, const u64 *len, u64 n, u64 *off, gm_status *st)
{
    GM_CUDA(cudaMemsetAsync(off, 0, sizeof *off, j.s), st);
    size_t bytes = 0;
    GM_CUDA(cub::DeviceScan::InclusiveSum(nullptr, bytes, len, off + 1, (int64_t)n, j.s), st);
    void *t = nullptr;
    int rc = text_cub_temp(j, bytes, &t, st);
    if (rc)
        return rc;
    GM_CUDA(cub::DeviceScan::InclusiveSum(t, bytes, len, off + 1, (int64_t)n, j.s), st);
    return GM_OK;
}

/* Record k' of the host's order: the list place of the line its reference points
 * at (the lines lie at host + off[k], in list order). */
static uint32_t res_place(const std::vector<u64> &off, u64 host, u64 ref)
{
    u64 at = (ref & GM_REC_ADDR_MASK) - host;
    return (uint32_t)(std::lower_bound(off.begin(), off.end() - 1, at) - off.begin());
}

/* The runs of ties (ties of them flagged in b->tied) put in sort's order by the
 * host: their records and lines to job->ties, the new order back into val. */
static int res_ties(text_job &j, const gm_gpu_lines_job *job, rec_buffers *b, uint32_t *val,
                    u64 n, u64 ties, gm_gpu_lines_result *res, gm_status *st)
{
    uint32_t *at = nullptr;
    u64 m = 0, *d_len = nullptr, *d_off = nullptr;
    int rc = res_select(j, res_in_run{ b->tied, n }, n, std::min(n, 2 * ties), &at, &m, st);
    if (rc || (rc = j.mem.alloc(&d_len, m, st)) || (rc = j.mem.alloc(&d_off, m + 1, st)))
        return rc;
    res->tied = m;
    GM_LAUNCH("lines tied lengths", st, false, res_len_kernel, dim3(rec_grid(m)),
              dim3(REC_THREADS), 0, j.s, (const u64 *)b->ends, (const uint32_t *)val,
              (const uint32_t *)at, (const unsigned char *)nullptr, m, d_len);
    if ((rc = res_offsets(j, d_len, m, d_off, st)))
        return rc;
    std::vector<u64> off(m + 1);
    GM_CUDA(cudaMemcpyAsync(off.data(), d_off, (m + 1) * sizeof(u64), cudaMemcpyDeviceToHost, j.s),
            st);
    GM_CUDA(cudaStreamSynchronize(j.s), st);
    const u64 bytes = off[m];
    if (bytes > job->ties_max)
        return gm_fail(st, GM_ETEXT, "lines: %llu bytes of tied lines for the host, %zu at most",
                       bytes, job->ties_max);
    unsigned char *d_lines = nullptr, *d_tied = nullptr;
    u64 *d_recs = nullptr;
    if ((rc = j.mem.alloc(&d_lines, bytes, st)) || (rc = j.mem.alloc(&d_recs, 2 * m, st)) ||
        (rc = j.mem.alloc(&d_tied, m, st)))
        return rc;
    unsigned char *lines = (unsigned char *)malloc(bytes + 1);
    uint64_t *recs = (uint64_t *)malloc(16 * m + 1);
    unsigned char *tied = (unsigned char *)malloc(m + 1);
    std::vector<uint32_t> perm(m);
    struct freer {
        void *p[3];
        ~freer() { for (void *x : p) free(x); }
    } f{ { lines, recs, tied } };
    if (!lines || !recs || !tied)
        return gm_fail(st, GM_ENOMEM, "out of memory sorting");
    const u64 host = (u64)(uintptr_t)lines;
    GM_LAUNCH("lines tied gather", st, false, res_gather_kernel, dim3(rec_grid(m)),
              dim3(REC_THREADS), 0, j.s, (const unsigned char *)j.text, (const u64 *)b->ends,
              (const uint32_t *)val, (const uint32_t *)at, (const unsigned char *)nullptr,
              (const u64 *)d_off, (u64)0, (u64)0, m, d_lines);
    GM_LAUNCH("lines tied records", st, false, res_ties_kernel, dim3(rec_grid(m)),
              dim3(REC_THREADS), 0, j.s, (const u64 *)b->recs, (const unsigned char *)b->tied,
              (const uint32_t *)at, (const u64 *)d_off, host, m, d_recs, d_tied);
    if ((rc = text_download_to(j, lines, d_lines, bytes, nullptr, nullptr, st)) ||
        (rc = text_download_to(j, recs, d_recs, 16 * m, nullptr, nullptr, st)) ||
        (rc = text_download_to(j, tied, d_tied, m, nullptr, nullptr, st)))
        return rc;
    double a = host_seconds();
    rc = job->ties(job->ties_ctx, recs, tied, m, st);
    res->ties += host_seconds() - a;
    if (rc)
        return rc;
    for (u64 k = 0; k < m; k++)
        perm[k] = res_place(off, host, recs[2 * k + 1]);
    uint32_t *d_perm = nullptr, *d_copy = nullptr;
    if ((rc = j.mem.alloc(&d_perm, m, st)) || (rc = j.mem.alloc(&d_copy, m, st)))
        return rc;
    GM_CUDA(cudaMemcpyAsync(d_perm, perm.data(), m * sizeof(uint32_t), cudaMemcpyHostToDevice, j.s),
            st);
    GM_LAUNCH("lines tied take", st, false, res_take_kernel, dim3(rec_grid(m)), dim3(REC_THREADS),
              0, j.s, (const uint32_t *)val, (const uint32_t *)at, m, d_copy);
    GM_LAUNCH("lines tied put", st, false, res_put_kernel, dim3(rec_grid(m)), dim3(REC_THREADS),
              0, j.s, (const uint32_t *)d_copy, (const uint32_t *)at, (const uint32_t *)d_perm, m,
              val);
    GM_CUDA(cudaStreamSynchronize(j.s), st); /* perm is freed on return */
    return GM_OK;
}

/* The sorted lines gathered on the device a piece at a time and handed to the
 * sink; drop (or null) marks the lines -u leaves out. off: n + 1 words, len: n. */
static int res_output(text_job &j, const gm_gpu_lines_job *job, rec_buffers *b,
                      const uint32_t *val, const unsigned char *drop, u64 n, u64 *len, u64 *off,
                      gm_gpu_lines_result *res, gm_status *st)
{
    GM_LAUNCH("lines lengths", st, false, res_len_kernel, dim3(rec_grid(n)), dim3(REC_THREADS),
              0, j.s, (const u64 *)b->ends, val, (const uint32_t *)nullptr, drop, n, len);
    int rc = res_offsets(j, len, n, off, st);
    const u64 piece = gm_forced.lines_piece ? gm_forced.lines_piece : LINES_PIECE;
    uint32_t *at = nullptr;
    u64 np = 0, *d_poff = nullptr;
    /* every piece start lies in a piece of its own */
    const u64 most_pieces = job->bytes / piece + 2;
    if (rc || (rc = res_select(j, res_piece_start{ off, piece }, n, most_pieces, &at, &np, st)) ||
        (rc = j.mem.alloc(&d_poff, np + 1, st)))
        return rc;
    GM_LAUNCH("lines pieces", st, false, res_piece_off_kernel, dim3(rec_grid(np + 1)),
              dim3(REC_THREADS), 0, j.s, (const u64 *)off, (const uint32_t *)at, np, n, d_poff);
    std::vector<u64> poff(np + 1);
    std::vector<uint32_t> pat(np);
    GM_CUDA(cudaMemcpyAsync(poff.data(), d_poff, (np + 1) * sizeof(u64), cudaMemcpyDeviceToHost,
                            j.s),
            st);
    GM_CUDA(cudaMemcpyAsync(pat.data(), at, np * sizeof(uint32_t), cudaMemcpyDeviceToHost, j.s),
            st);
    GM_CUDA(cudaStreamSynchronize(j.s), st);
    u64 most = 0;
    for (u64 k = 0; k < np; k++)
        most = std::max(most, poff[k + 1] - poff[k]);
    unsigned char *buf = nullptr;
    if ((rc = j.mem.alloc(&buf, most ? most : 1, st)))
        return rc;
    for (u64 k = 0; k < np; k++) {
        const u64 lo = pat[k], hi = k + 1 < np ? pat[k + 1] : n;
        const u64 bytes = poff[k + 1] - poff[k];
        if (bytes == 0)
            continue;
        GM_LAUNCH("lines gather", st, false, res_gather_kernel, dim3(rec_grid(hi - lo)),
                  dim3(REC_THREADS), 0, j.s, (const unsigned char *)j.text,
                  (const u64 *)b->ends, val, (const uint32_t *)nullptr, drop, (const u64 *)off,
                  poff[k], lo, hi, buf);
        if ((rc = text_download_sink(j, (const char *)buf, bytes, job->sink, job->sink_ctx,
                                     &res->sink, &res->bytes, st)))
            return rc;
    }
    return GM_OK;
}

/* ------------------------------------------------------------------ entry */

/* The keyspec and the one-block map to the device (references are text
 * offsets until the ties are sent to the host). */
static int res_tables(text_job &j, const gm_gpu_lines_job *job, rec_buffers *b, gm_status *st)
{
    const u64 bounds[2] = { 0, job->bytes }, zero = 0;
    int rc = rec_tables(j, b, job->ks, bounds, &zero, 1, st);
    if (rc)
        return rc;
    GM_CUDA(cudaStreamSynchronize(j.s), st); /* bounds live on this frame */
    return GM_OK;
}

/* After the sort: the runs of ties ordered (on the host where the device cannot
 * tell), or under -u the lines to drop; GM_ETEXT where -u's equal keys are not
 * known on the device. */
static int res_settle(text_job &j, const gm_gpu_lines_job *job, rec_buffers *b, uint32_t *val,
                      u64 n, const unsigned char **drop, gm_gpu_lines_result *res, gm_status *st)
{
    const gm_keyspec *ks = job->ks;
    int inexact = 1;
    u64 ties = 0, *d_count = nullptr;
    int rc = j.mem.alloc(&d_count, 1, st);
    GM_CUDA(cudaMemcpyAsync(&inexact, b->inexact, sizeof inexact, cudaMemcpyDeviceToHost, j.s),
            st);
    if (rc || (rc = rec_count_ties(j, b->tied, n, d_count, &ties, st)))
        return rc;
    const int final = !inexact && ks->nkeys == 1 && (ks->stable || ks->unique);
    *drop = nullptr;
    res->written = n - (ks->unique ? ties : 0);
    if (ks->unique) {
        if (!final)
            return gm_fail(st, GM_ETEXT, "lines: -u with keys the device cannot compare whole");
        *drop = b->tied; /* each run's first line stays: the sort is stable */
        return GM_OK;
    }
    return final || ties == 0 ? GM_OK : res_ties(j, job, b, val, n, ties, res, st);
}

/* Device memory the sort of a text of bytes and n lines needs beside the text:
 * its records and pairs, CUB's scratch, the output's pieces. */
static int res_rest_bytes(const gm_keyspec *ks, u64 bytes, u64 n, size_t *rest, gm_status *st)
{
    const int head8 = ks->nkeys == 1 && !ks->stable && !ks->unique;
    size_t cub_bytes = 0;
    int rc = rec_cub_bytes((int64_t)n, bytes, &cub_bytes, st);
    *rest = rec_bytes(n, head8, 1) + 4 * cub_bytes + std::min<u64>(bytes, 2 * LINES_PIECE);
    return rc;
}

extern "C" int gm_gpu_lines_fit(const gm_keyspec *ks, uint64_t bytes, uint64_t lines,
                                gm_status *st)
{
    int rc = gm_gpu_probe(nullptr, st);
    if (rc)
        return rc;
    if (lines > UINT32_MAX)
        return gm_fail(st, GM_ETEXT, "lines: %llu lines, the device takes fewer than 2^32",
                       (unsigned long long)lines);
    on_probed_device here;
    size_t rest = 0;
    if ((rc = res_rest_bytes(ks, bytes, lines, &rest, st)))
        return rc;
    /* a sixteenth to spare: CUDA's own allocations as the kernels first load */
    return text_fits((text_room(bytes) + rest) / 16 * 17, st);
}

extern "C" int gm_gpu_sort_lines(const gm_gpu_lines_job *job, gm_gpu_lines_result *res,
                                 gm_gpu_times *times, gm_status *st)
{
    memset(res, 0, sizeof *res);
    memset(times, 0, sizeof *times);
    const double t0 = host_seconds();
    int rc = gm_gpu_probe(nullptr, st);
    if (rc || job->bytes == 0)
        return rc;
    on_probed_device here;
    trace_range range("gpu: lines");
    const gm_keyspec *ks = job->ks;
    const int head8 = ks->nkeys == 1 && !ks->stable && !ks->unique;
    /* four fifths of the lines hinted, for a sample that overcounts them */
    if (job->lines_hint &&
        (rc = text_fits(text_room(job->bytes) + rec_bytes(job->lines_hint / 5 * 4, head8, 1), st)))
        return rc;
    text_job j;
    event_set ev;
    if ((rc = ev.create(st)) || (rc = text_begin(j, job->bytes, st)))
        return rc;
    GM_CUDA(cudaEventRecord(ev.e[0], j.s), st);
    double a = host_seconds();
    res->setup = a - t0;
    if ((rc = text_upload_read(j, 0, job->bytes, job->read, job->read_ctx, st)))
        return rc;
    GM_CUDA(cudaEventRecord(ev.e[1], j.s), st);
    u64 n = 0;
    if ((rc = rec_count_lines(j, job->ks->eol, &n, st)))
        return rc;
    res->read = host_seconds() - a;
    if (n == 0)
        return gm_fail(st, GM_ETEXT, "lines: no terminator in the text");
    if (n > UINT32_MAX)
        return gm_fail(st, GM_ETEXT, "lines: %llu lines, the device takes fewer than 2^32", n);
    size_t rest = 0;
    if ((rc = res_rest_bytes(ks, job->bytes, n, &rest, st)) || (rc = text_fits(rest, st)))
        return rc;
    const gm_gpu_rec_job rj = { ks, nullptr, nullptr, 1, n, head8, nullptr, nullptr, nullptr,
                                nullptr };
    rec_buffers b;
    int rounds = 0, in_v1 = 0;
    if ((rc = rec_alloc(j, &rj, head8, &b, st)) || (rc = res_tables(j, job, &b, st)) ||
        (rc = rec_kernels(j, &rj, head8, &b, &rounds, &in_v1, st)))
        return rc;
    uint32_t *val = in_v1 ? b.v1 : b.v0;
    const unsigned char *drop = nullptr;
    if ((rc = res_settle(j, job, &b, val, n, &drop, res, st)))
        return rc;
    GM_CUDA(cudaEventRecord(ev.e[2], j.s), st);
    GM_CUDA(cudaEventSynchronize(ev.e[2]), st);
    res->lines = n;
    /* the pairs' keys are free now: the lengths in one half, the offsets (n + 1)
     * in the records' 2 n words */
    double d0 = host_seconds();
    rc = res_output(j, job, &b, val, drop, n, b.k0, b.recs, res, st);
    times->h2d = elapsed_seconds(ev.e[0], ev.e[1]);
    times->kernel = elapsed_seconds(ev.e[1], ev.e[2]);
    times->d2h = host_seconds() - d0 - res->sink;
    times->passes = (head8 ? 2 : 1) + rounds;
    return rc;
}
