/*
 * records.cu - the records path's sort of one chunk on the device
 * (gm_gpu_sort_records, gpu.h). The chunk's blocks of lines are copied one after
 * another into one device text through the text path's staging ring (text.cu);
 * the terminators are counted (cub::DeviceReduce, against the host's count) and
 * found (cub::DeviceSelect: line j ends at the j-th, and begins after the one
 * before); each line's first-key prefix and its exactness
 * come from core/keys/keyprefix.h, the very code the CPU's records use; the (key, line
 * index) pairs are sorted stably (rec_sort_pairs); and the records are built in
 * sorted order with their lines' host addresses, as core/read/lines.h packs them, so
 * the host gathers the output from them as from its own sort.
 *
 * Where sort's order after the first key is the last resort alone (one key, no
 * -s or -u) the pairs are sorted by the lines' first eight bytes first and then,
 * stably, by the prefix: equal exact prefixes then come out ordered by those bytes
 * as well, as recpar.c's combine orders them on the CPU; while many records stay
 * tied, rounds order each run of ties by the next 32 bits of its keys (records.cuh's
 * refinement). What the device cannot decide (equal sort keys) is flagged per
 * record for the host's comparison (core/device/recgpu.c).
 * The layers: the per-line steps and the predicates of cub's passes
 * (records.cuh), the kernels that run them, the launchers, the entry.
 */
#include <cub/util_type.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/functional>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <string.h>

#include <vector>

#include "kernels.cuh"
#include "records.cuh"
#include "recsteps.cuh"
#include "text.cuh"

/* ------------------------------------------------------------------ kernels */

/* Each line's prefix, exactness and first sort key (rec_prefix_one); *inexact
 * becomes 1 when a prefix is not exact. */
__global__ void rec_prefix_kernel(const gm_keyspec *ks, const unsigned char *text,
                                  const u64 *ends, u64 n, int head8, u64 *pfx, u64 *key,
                                  uint32_t *val, unsigned char *exact, int *inexact)
{
    gm_after_previous();
    int any = 0;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x; j < n; j += stride)
        any |= !rec_prefix_one(ks, text, ends, j, head8, pfx, key, val, exact);
    if (__syncthreads_or(any) && threadIdx.x == 0)
        atomicOr(inexact, 1);
}

/* The second sort's keys: each sorted line's prefix. */
__global__ void rec_gather_kernel(const u64 *pfx, const uint32_t *val, u64 n, u64 *key)
{
    gm_after_previous();
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        key[i] = pfx[val[i]];
}

/* The sorted records and their tie flags (rec_build_one); the lines' first
 * bytes join the sort key with head8 when every prefix is exact. */
__global__ void rec_build_kernel(const gm_keyspec *ks, const unsigned char *text,
                                 const u64 *ends, const u64 *key, const uint32_t *val,
                                 const unsigned char *exact, u64 n, const u64 *bstart,
                                 const u64 *hbase, int nblocks, int head8, const int *inexact,
                                 u64 *recs, unsigned char *tied)
{
    gm_after_previous();
    const int by_head = head8 && !*inexact;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        rec_build_one(ks, text, ends, key, val, exact, i, bstart, hbase, nblocks, by_head, recs,
                      tied);
}

/* A refinement round (records.cuh): each sorted record's group mark; its key;
 * the records and tie flags after the round's sort. */
__global__ void rec_mark_kernel(const unsigned char *tied, u64 n, uint32_t *mark)
{
    gm_after_previous();
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        mark[i] = rec_group_mark(tied, i);
}

__global__ void rec_refine_key_kernel(const gm_keyspec *ks, int words,
                                      const unsigned char *text, const u64 *ends,
                                      const uint32_t *group, const uint32_t *val, u64 n, int r,
                                      u64 *key)
{
    gm_after_previous();
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        key[i] = rec_refine_key(ks, words, text, ends, group, val, i, r);
}

__global__ void rec_refine_kernel(const u64 *ends, const u64 *pfx, const u64 *key,
                                  const uint32_t *val, const unsigned char *exact, u64 n,
                                  const u64 *bstart, const u64 *hbase, int nblocks, u64 *recs,
                                  unsigned char *tied)
{
    gm_after_previous();
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        rec_refine_one(ends, pfx, key, val, exact, i, bstart, hbase, nblocks, recs, tied);
}

/* ------------------------------------------------------------------ launchers */

unsigned rec_grid(u64 n)
{
    u64 want = (n + REC_THREADS - 1) / REC_THREADS;
    u64 most = (u64)(gm_facts.sm_count > 0 ? gm_facts.sm_count : 1) * 32;
    return (unsigned)(want < most ? (want ? want : 1) : most);
}

/* The int64 co-rank scratch of the pairs' sort, in bytes. */
static size_t rec_sort_bytes(int64_t n)
{
    return (size_t)sort_scratch_entries<uint64_t>(n) * sizeof(int64_t);
}

/* Sorts n (key, value) pairs by key, stably, on the job's stream, by the
 * project's own key-value merge sort (sort.cu's sort_pairs_on_device: block
 * sort, then the tiled merge passes of chapter 12): the current halves of keys
 * and vals hold the pairs before and after, the other halves are scratch. */
static int rec_sort_pairs(text_job &j, cub::DoubleBuffer<u64> &keys,
                          cub::DoubleBuffer<uint32_t> &vals, int64_t n, gm_status *st)
{
    void *cor = nullptr;
    int rc = text_cub_temp(j, rec_sort_bytes(n), &cor, st);
    if (rc)
        return rc;
    /* the kernels are instantiated for uint64_t, the same bits as u64 */
    uint64_t *kout = nullptr;
    uint32_t *vout = nullptr;
    rc = sort_pairs_on_device<uint64_t, uint32_t>(
        reinterpret_cast<uint64_t *>(keys.Current()), vals.Current(),
        reinterpret_cast<uint64_t *>(keys.Alternate()), vals.Alternate(), n, (uint64_t)0,
        GM_KERNEL_AUTO, (int64_t *)cor, &kout, &vout, j.s, st);
    if (rc)
        return rc;
    if (reinterpret_cast<u64 *>(kout) != keys.Current())
        keys.selector ^= 1;
    if (vout != vals.Current())
        vals.selector ^= 1;
    return GM_OK;
}

/* The largest scratch of rec_sort_pairs and of the count and search for
 * terminators, for the fits check before anything is allocated (each call takes
 * its own). */
int rec_cub_bytes(int64_t n, u64 text_len, size_t *bytes, gm_status *st)
{
    size_t sort = rec_sort_bytes(n), select = 0, count = 0;
    thrust::counting_iterator<u64> at(0);
    GM_CUDA(cub::DeviceSelect::If(nullptr, select, at, (u64 *)nullptr, (u64 *)nullptr,
                                  (int64_t)text_len, rec_is_eol{ nullptr, 0 }, (cudaStream_t)0),
            st);
    thrust::transform_iterator<rec_eol_count, thrust::counting_iterator<u64>, u64> flags(
        at, rec_eol_count{ nullptr, 0 });
    GM_CUDA(cub::DeviceReduce::Sum(nullptr, count, flags, (u64 *)nullptr, (int64_t)text_len,
                                   (cudaStream_t)0),
            st);
    *bytes = sort > select ? sort : select;
    *bytes = *bytes > count ? *bytes : count;
    return GM_OK;
}

int rec_count_lines(text_job &j, char eol, u64 *n, gm_status *st)
{
    u64 *d_count = nullptr;
    int rc = j.mem.alloc(&d_count, 1, st);
    if (rc)
        return rc;
    thrust::counting_iterator<u64> at(0);
    thrust::transform_iterator<rec_eol_count, thrust::counting_iterator<u64>, u64> flags(
        at, rec_eol_count{ (const unsigned char *)j.text, (unsigned char)eol });
    size_t bytes = 0;
    GM_CUDA(cub::DeviceReduce::Sum(nullptr, bytes, flags, d_count, (int64_t)j.len, j.s), st);
    void *t = nullptr;
    if ((rc = text_cub_temp(j, bytes, &t, st)))
        return rc;
    GM_CUDA(cub::DeviceReduce::Sum(t, bytes, flags, d_count, (int64_t)j.len, j.s), st);
    GM_CUDA(cudaMemcpyAsync(n, d_count, sizeof *n, cudaMemcpyDeviceToHost, j.s), st);
    GM_CUDA(cudaStreamSynchronize(j.s), st);
    return GM_OK;
}

/* The terminators' offsets into ends (room for n): counted first, so that a count
 * other than n fails before the search writes past ends. */
static int rec_find_lines(text_job &j, char eol, u64 *ends, u64 n, gm_status *st)
{
    u64 found = 0, *d_count = nullptr;
    int rc = rec_count_lines(j, eol, &found, st);
    if (rc || (rc = j.mem.alloc(&d_count, 1, st)))
        return rc;
    if (found != n)
        return gm_fail(st, GM_ECUDA, "records: %llu lines on the device, %llu expected", found,
                       (unsigned long long)n);
    thrust::counting_iterator<u64> at(0);
    const unsigned char *text = (const unsigned char *)j.text;
    size_t bytes = 0;
    void *t = nullptr;
    rec_is_eol pred{ text, (unsigned char)eol };
    GM_CUDA(cub::DeviceSelect::If(nullptr, bytes, at, ends, d_count, (int64_t)j.len, pred, j.s),
            st);
    if ((rc = text_cub_temp(j, bytes, &t, st)))
        return rc;
    GM_CUDA(cub::DeviceSelect::If(t, bytes, at, ends, d_count, (int64_t)j.len, pred, j.s), st);
    return GM_OK;
}

/* ------------------------------------------------------------------ entry */

size_t rec_bytes(u64 n, int head8, int nblocks)
{
    /* ends, two key and two value halves, the prefixes by line (head8), exactness,
     * records, ties; each allocation's slack */
    return (size_t)n * (8 + 16 + 8 + (head8 ? 8 : 0) + 1 + 16 + 1) +
           (size_t)(nblocks + 1) * 16 + 16 * 16;
}

int rec_alloc(text_job &j, const gm_gpu_rec_job *job, int head8, rec_buffers *b,
              gm_status *st)
{
    u64 n = job->lines;
    int rc;
    if ((rc = j.mem.alloc(&b->ks, 1, st)) || (rc = j.mem.alloc(&b->ends, n, st)) ||
        (rc = j.mem.alloc(&b->k0, n, st)) || (rc = j.mem.alloc(&b->k1, n, st)) ||
        (rc = j.mem.alloc(&b->v0, n, st)) || (rc = j.mem.alloc(&b->v1, n, st)) ||
        (head8 && (rc = j.mem.alloc(&b->pfx, n, st))) || (rc = j.mem.alloc(&b->exact, n, st)) ||
        (rc = j.mem.alloc(&b->recs, 2 * n, st)) || (rc = j.mem.alloc(&b->tied, n, st)) ||
        (rc = j.mem.alloc(&b->bstart, (size_t)job->nblocks + 1, st)) ||
        (rc = j.mem.alloc(&b->hbase, (size_t)job->nblocks, st)) ||
        (rc = j.mem.alloc(&b->inexact, 1, st)))
        return rc;
    return GM_OK;
}

int rec_tables(text_job &j, rec_buffers *b, const gm_keyspec *ks, const u64 *bstart,
               const u64 *hbase, int nblocks, gm_status *st)
{
    GM_CUDA(cudaMemcpyAsync(b->bstart, bstart, ((size_t)nblocks + 1) * sizeof(u64),
                            cudaMemcpyHostToDevice, j.s),
            st);
    GM_CUDA(cudaMemcpyAsync(b->hbase, hbase, (size_t)nblocks * sizeof(u64),
                            cudaMemcpyHostToDevice, j.s),
            st);
    GM_CUDA(cudaMemcpyAsync(b->ks, ks, sizeof *ks, cudaMemcpyHostToDevice, j.s), st);
    GM_CUDA(cudaMemsetAsync(b->inexact, 0, sizeof(int), j.s), st);
    return GM_OK;
}

/* Copies the blocks into the job's text, back to back, and the table that maps
 * a text offset to its host address (bstart and hbase, kept alive by the caller
 * until the stream has taken them). */
static int rec_upload(text_job &j, const gm_gpu_rec_job *job, rec_buffers *b,
                      std::vector<u64> &bstart, std::vector<u64> &hbase, gm_status *st)
{
    u64 at = 0;
    for (int i = 0; i < job->nblocks; i++) {
        bstart[i] = at;
        hbase[i] = (u64)(uintptr_t)job->text[i];
        int rc = text_upload_at(j, at, (const char *)job->text[i], job->len[i], job->copy,
                                job->copy_ctx, st);
        if (rc)
            return rc;
        at += job->len[i];
    }
    bstart[job->nblocks] = at;
    return rec_tables(j, b, job->ks, bstart.data(), hbase.data(), job->nblocks, st);
}

/* The records still tied (flags in tied) into *ties, waiting for the count. */
int rec_count_ties(text_job &j, const unsigned char *tied, u64 n, u64 *d_count, u64 *ties,
                   gm_status *st)
{
    thrust::transform_iterator<rec_tie_count, const unsigned char *, u64> flags(tied,
                                                                            rec_tie_count{});
    size_t bytes = 0;
    GM_CUDA(cub::DeviceReduce::Sum(nullptr, bytes, flags, d_count, (int64_t)n, j.s), st);
    void *t = nullptr;
    int rc = text_cub_temp(j, bytes, &t, st);
    if (rc)
        return rc;
    GM_CUDA(cub::DeviceReduce::Sum(t, bytes, flags, d_count, (int64_t)n, j.s), st);
    GM_CUDA(cudaMemcpyAsync(ties, d_count, sizeof *ties, cudaMemcpyDeviceToHost, j.s), st);
    GM_CUDA(cudaStreamSynchronize(j.s), st);
    return GM_OK;
}

/* The refinement rounds (records.cuh) over the built records, while they pay:
 * keys' current half is free to take the round's keys and its other half the
 * group marks and groups (n 32-bit words each) until the round's sort. */
static int rec_refine(text_job &j, const gm_gpu_rec_job *job, rec_buffers *b,
                      cub::DoubleBuffer<u64> &keys, cub::DoubleBuffer<uint32_t> &vals,
                      int *rounds, gm_status *st)
{
    const u64 n = job->lines;
    int inexact = 1;
    GM_CUDA(cudaMemcpyAsync(&inexact, b->inexact, sizeof inexact, cudaMemcpyDeviceToHost, j.s),
            st);
    u64 *d_count = nullptr;
    int rc = j.mem.alloc(&d_count, 1, st);
    if (rc)
        return rc;
    const unsigned grid = rec_grid(n);
    const unsigned char *text = (const unsigned char *)j.text;
    const int words = rec_round_words(job->ks, inexact);
    for (int r = 0; r < REC_REFINE_ROUNDS && words != REC_WORDS_NONE; r++) {
        u64 ties = 0;
        if ((rc = rec_count_ties(j, b->tied, n, d_count, &ties, st)))
            return rc;
        if (!rec_refine_wanted(ties, n))
            break;
        uint32_t *mark = (uint32_t *)keys.Alternate(), *group = mark + n;
        GM_LAUNCH("records mark", st, false, rec_mark_kernel, dim3(grid), dim3(REC_THREADS), 0,
                  j.s, (const unsigned char *)b->tied, n, mark);
        size_t bytes = 0;
        GM_CUDA(cub::DeviceScan::InclusiveScan(nullptr, bytes, mark, group, cuda::maximum<uint32_t>{}, (int64_t)n,
                                               j.s),
                st);
        void *t = nullptr;
        if ((rc = text_cub_temp(j, bytes, &t, st)))
            return rc;
        GM_CUDA(cub::DeviceScan::InclusiveScan(t, bytes, mark, group, cuda::maximum<uint32_t>{}, (int64_t)n, j.s),
                st);
        GM_LAUNCH("records refine key", st, false, rec_refine_key_kernel, dim3(grid),
                  dim3(REC_THREADS), 0, j.s, (const gm_keyspec *)b->ks, words, text,
                  (const u64 *)b->ends, (const uint32_t *)group,
                  (const uint32_t *)vals.Current(), n, r, keys.Current());
        if ((rc = rec_sort_pairs(j, keys, vals, (int64_t)n, st)))
            return rc;
        GM_LAUNCH("records refine", st, false, rec_refine_kernel, dim3(grid), dim3(REC_THREADS), 0,
                  j.s, (const u64 *)b->ends, (const u64 *)b->pfx, (const u64 *)keys.Current(),
                  (const uint32_t *)vals.Current(), (const unsigned char *)b->exact, n,
                  (const u64 *)b->bstart, (const u64 *)b->hbase, job->nblocks, b->recs, b->tied);
        ++*rounds;
    }
    return GM_OK;
}

/* The prefixes, the sort (two with head8) and the records, on the job's stream. */
int rec_kernels(text_job &j, const gm_gpu_rec_job *job, int head8, rec_buffers *b,
                int *rounds, int *in_v1, gm_status *st)
{
    u64 n = job->lines;
    int rc = rec_find_lines(j, job->ks->eol, b->ends, n, st);
    if (rc)
        return rc;
    const unsigned grid = rec_grid(n);
    const unsigned char *text = (const unsigned char *)j.text;
    GM_LAUNCH("records prefix", st, false, rec_prefix_kernel, dim3(grid), dim3(REC_THREADS), 0,
              j.s, (const gm_keyspec *)b->ks, text, (const u64 *)b->ends, n, head8, b->pfx,
              b->k0, b->v0, b->exact, b->inexact);
    cub::DoubleBuffer<u64> keys(b->k0, b->k1);
    cub::DoubleBuffer<uint32_t> vals(b->v0, b->v1);
    if ((rc = rec_sort_pairs(j, keys, vals, (int64_t)n, st)))
        return rc;
    if (head8) {
        GM_LAUNCH("records gather", st, false, rec_gather_kernel, dim3(grid), dim3(REC_THREADS),
                  0, j.s, (const u64 *)b->pfx, (const uint32_t *)vals.Current(), n,
                  keys.Alternate());
        keys.selector ^= 1;
        if ((rc = rec_sort_pairs(j, keys, vals, (int64_t)n, st)))
            return rc;
    }
    GM_LAUNCH("records build", st, false, rec_build_kernel, dim3(grid), dim3(REC_THREADS), 0, j.s,
              (const gm_keyspec *)b->ks, text, (const u64 *)b->ends,
              (const u64 *)keys.Current(), (const uint32_t *)vals.Current(),
              (const unsigned char *)b->exact, n, (const u64 *)b->bstart,
              (const u64 *)b->hbase, job->nblocks, head8, (const int *)b->inexact, b->recs,
              b->tied);
    if (head8 && (rc = rec_refine(j, job, b, keys, vals, rounds, st)))
        return rc;
    *in_v1 = vals.Current() == b->v1;
    return GM_OK;
}

extern "C" int gm_gpu_sort_records(const gm_gpu_rec_job *job, gm_gpu_times *times,
                                   gm_status *st)
{
    memset(times, 0, sizeof *times);
    int rc = gm_gpu_probe(nullptr, st);
    if (rc)
        return rc;
    const u64 n = job->lines;
    if (n == 0)
        return GM_OK;
    if (n > UINT32_MAX)
        return gm_fail(st, GM_ETEXT, "records: %llu lines in a chunk, the device takes fewer "
                       "than 2^32", (unsigned long long)n);
    u64 total = 0;
    for (int i = 0; i < job->nblocks; i++)
        total += job->len[i];
    const int head8 = job->refine != 0;
    size_t cub_bytes = 0;
    if ((rc = rec_cub_bytes((int64_t)n, total, &cub_bytes, st)) ||
        (rc = text_fits(text_room(total) + rec_bytes(n, head8, job->nblocks) + 4 * cub_bytes, st)))
        return rc;
    on_probed_device here;
    trace_range range("gpu: records");
    text_job j;
    event_set ev;
    rec_buffers b;
    if ((rc = ev.create(st)) || (rc = text_begin(j, total, st)) ||
        (rc = rec_alloc(j, job, head8, &b, st)))
        return rc;
    std::vector<u64> bstart((size_t)job->nblocks + 1), hbase((size_t)job->nblocks);
    GM_CUDA(cudaEventRecord(ev.e[0], j.s), st);
    if ((rc = rec_upload(j, job, &b, bstart, hbase, st)))
        return rc;
    GM_CUDA(cudaEventRecord(ev.e[1], j.s), st);
    int rounds = 0, in_v1 = 0;
    if ((rc = rec_kernels(j, job, head8, &b, &rounds, &in_v1, st)))
        return rc;
    GM_CUDA(cudaEventRecord(ev.e[2], j.s), st);
    GM_CUDA(cudaEventSynchronize(ev.e[2]), st);
    /* back through the staging ring on the host's threads, as the text came: a
     * copy into pageable memory alone moves several times slower */
    const double back = host_seconds();
    if ((rc = text_download_to(j, job->recs, b.recs, (size_t)n * 16, job->copy, job->copy_ctx,
                               st)) ||
        (rc = text_download_to(j, job->tied, b.tied, (size_t)n, job->copy, job->copy_ctx, st)))
        return rc;
    times->h2d = elapsed_seconds(ev.e[0], ev.e[1]);
    times->kernel = elapsed_seconds(ev.e[1], ev.e[2]);
    times->d2h = host_seconds() - back;
    times->passes = (head8 ? 2 : 1) + rounds;
    return GM_OK;
}
