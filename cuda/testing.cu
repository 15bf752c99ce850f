/*
 * testing.cu - testing.h: the setter of the forced choices and the tile sizes the
 * tests probe around, the text path's parser and formatter alone (text.cuh), and
 * the device's sort and merge of key-value pairs on host arrays, and the records
 * sort's per-line steps on the host (records.cuh).
 * Linked into the test binaries and the benchmark only.
 */
#include <string.h>

#include <algorithm>
#include <numeric>

#include "device.cuh"
#include "kernels.cuh"
#include "records.cuh"
#include "testing.h"
#include "text.cuh"

extern "C" void gm_gpu_force(const gm_gpu_choices *c)
{
    if (c)
        gm_forced = *c;
    else
        memset(&gm_forced, 0, sizeof gm_forced);
}

extern "C" int64_t gm_gpu_merge_tile(gm_kernel kernel, gm_width width)
{
    bool i32 = width == GM_I32;
    if (kernel == GM_KERNEL_TILED)
        return i32 ? tiles<int32_t>::TILED_TILE : tiles<int64_t>::TILED_TILE;
    if (kernel == GM_KERNEL_CIRCULAR)
        return i32 ? tiles<int32_t>::CIRC_TILE : tiles<int64_t>::CIRC_TILE;
    return i32 ? tiles<int32_t>::BASIC_TILE : tiles<int64_t>::BASIC_TILE;
}

extern "C" int64_t gm_gpu_sort_tile(gm_width width)
{
    return width == GM_I32 ? tiles<int32_t>::SORT_TILE : tiles<int64_t>::SORT_TILE;
}

extern "C" int gm_gpu_test_cuda_touched(void)
{
    return gm_cuda_touched;
}

extern "C" int gm_gpu_test_parse(const char *text, size_t len, char eol, int64_t *keys,
                                 int64_t cap, int64_t *nkeys, gm_width *width,
                                 int64_t *bad_line, int *bad_range, gm_status *st)
{
    *nkeys = 0;
    *width = GM_I32;
    *bad_line = 0;
    *bad_range = 0;
    int rc = gm_gpu_probe(nullptr, st);
    if (rc || len == 0)
        return rc;
    text_job j;
    text_parsed r;
    if ((rc = text_begin(j, len, st)) || (rc = text_upload(j, text, nullptr, nullptr, st)) ||
        (rc = text_parse(j, eol, &r, st)))
        return rc;
    if (r.bad_line) {
        *bad_line = r.bad_line;
        *bad_range = r.bad_range;
        return gm_fail(st, GM_ETEXT, "line %lld declined", (long long)r.bad_line);
    }
    if (r.nkeys > cap)
        return gm_fail(st, GM_ENOMEM, "%lld keys for room for %lld", (long long)r.nkeys,
                       (long long)cap);
    *nkeys = r.nkeys;
    *width = r.width;
    if (r.nkeys == 0)
        return GM_OK;
    /* on the job's stream, which does not wait for the legacy default stream */
    GM_CUDA(cudaMemcpyAsync(keys, r.keys, (size_t)r.nkeys * r.width, cudaMemcpyDeviceToHost, j.s),
            st);
    GM_CUDA(cudaStreamSynchronize(j.s), st);
    if (r.width == GM_I32) /* widen in place, from the end */
        for (int64_t i = r.nkeys; i-- > 0;)
            keys[i] = ((const int32_t *)keys)[i];
    return GM_OK;
}

struct into_buffer {
    char *out;
    size_t cap, len;
};

static int copy_out(void *ctx, const char *text, size_t len, gm_status *st)
{
    into_buffer *b = (into_buffer *)ctx;
    if (b->len + len > b->cap)
        return gm_fail(st, GM_ENOMEM, "output larger than %zu bytes", b->cap);
    memcpy(b->out + b->len, text, len);
    b->len += len;
    return GM_OK;
}

template <typename K>
static int format_keys(text_job &j, const gm_keys *keys, char eol, into_buffer *b, gm_status *st)
{
    K *d = nullptr;
    int rc = j.mem.alloc(&d, (size_t)keys->n, st);
    if (rc)
        return rc;
    /* On the job's stream: a plain cudaMemcpy from pageable memory may return before
     * its DMA ends, and the job's stream does not wait for the legacy one. */
    GM_CUDA(cudaMemcpyAsync(d, keys->data, (size_t)keys->n * sizeof(K), cudaMemcpyHostToDevice,
                            j.s),
            st);
    GM_CUDA(cudaStreamSynchronize(j.s), st);
    std::vector<uint64_t> off;
    double sink_s;
    uint64_t bytes;
    if ((rc = text_format<K>(j, d, keys->n, eol, &off, st)))
        return rc;
    return text_download(j, off, copy_out, b, &sink_s, &bytes, st);
}

extern "C" int gm_gpu_test_format(const gm_keys *keys, char eol, char *out, size_t cap,
                                  size_t *len, gm_status *st)
{
    *len = 0;
    int rc = gm_gpu_probe(nullptr, st);
    if (rc || keys->n == 0)
        return rc;
    text_job j;
    into_buffer b = { out, cap, 0 };
    if ((rc = text_begin(j, (size_t)keys->n * 21, st)))
        return rc;
    rc = keys->width == GM_I32 ? format_keys<int32_t>(j, keys, eol, &b, st)
                               : format_keys<int64_t>(j, keys, eol, &b, st);
    *len = b.len;
    return rc;
}

/* The pairs' sort (m < 0) or merge of runs [0, m) and [m, n) on the device, in
 * place on the host's arrays. */
template <typename K>
static int pairs_on_device(K *keys, uint32_t *vals, int64_t m, int64_t n, int reverse,
                           gm_kernel kernel, gm_status *st)
{
    int rc = gm_gpu_probe(nullptr, st);
    if (rc || n == 0)
        return rc;
    device_buffers mem;
    K *d_keys = nullptr, *d_ktmp = nullptr;
    uint32_t *d_vals = nullptr, *d_vtmp = nullptr;
    int64_t *d_cor = nullptr;
    int64_t ncor = m < 0 ? sort_scratch_entries<K>(n) : coranks_needed<K>(n, 1);
    if ((rc = mem.alloc(&d_keys, (size_t)n, st)) || (rc = mem.alloc(&d_ktmp, (size_t)n, st)) ||
        (rc = mem.alloc(&d_vals, (size_t)n, st)) || (rc = mem.alloc(&d_vtmp, (size_t)n, st)) ||
        (rc = mem.alloc(&d_cor, (size_t)ncor, st)))
        return rc;
    cudaStream_t s = 0;
    GM_CUDA(cudaMemcpyAsync(d_keys, keys, (size_t)n * sizeof(K), cudaMemcpyHostToDevice, s), st);
    GM_CUDA(cudaMemcpyAsync(d_vals, vals, (size_t)n * 4, cudaMemcpyHostToDevice, s), st);
    K mask = reverse ? (K)-1 : (K)0;
    K *kout = d_ktmp;
    uint32_t *vout = d_vtmp;
    rc = m < 0 ? sort_pairs_on_device<K, uint32_t>(d_keys, d_vals, d_ktmp, d_vtmp, n, mask, kernel,
                                                   d_cor, &kout, &vout, s, st)
               : merge_pairs_on_device<K, uint32_t>(d_keys, d_vals, m, n - m, d_ktmp, d_vtmp, mask,
                                                    kernel, d_cor, s, st);
    if (rc)
        return rc;
    GM_CUDA(cudaMemcpyAsync(keys, kout, (size_t)n * sizeof(K), cudaMemcpyDeviceToHost, s), st);
    GM_CUDA(cudaMemcpyAsync(vals, vout, (size_t)n * 4, cudaMemcpyDeviceToHost, s), st);
    GM_CUDA(cudaStreamSynchronize(s), st);
    return GM_OK;
}

static int pairs_by_type(gm_pair_key type, void *keys, uint32_t *vals, int64_t m, int64_t n,
                         int reverse, gm_kernel kernel, gm_status *st)
{
    switch (type) {
    case GM_PAIR_I32:
        return pairs_on_device<int32_t>((int32_t *)keys, vals, m, n, reverse, kernel, st);
    case GM_PAIR_I64:
        return pairs_on_device<int64_t>((int64_t *)keys, vals, m, n, reverse, kernel, st);
    case GM_PAIR_U32:
        return pairs_on_device<uint32_t>((uint32_t *)keys, vals, m, n, reverse, kernel, st);
    default:
        return pairs_on_device<uint64_t>((uint64_t *)keys, vals, m, n, reverse, kernel, st);
    }
}

extern "C" int gm_gpu_test_sort_pairs(gm_pair_key type, void *keys, uint32_t *vals, int64_t n,
                                      int reverse, gm_kernel kernel, gm_status *st)
{
    return pairs_by_type(type, keys, vals, -1, n, reverse, kernel, st);
}

extern "C" int gm_gpu_test_merge_pairs(gm_pair_key type, void *keys, uint32_t *vals, int64_t m,
                                       int64_t n, int reverse, gm_kernel kernel, gm_status *st)
{
    return pairs_by_type(type, keys, vals, m, m + n, reverse, kernel, st);
}
/* A stable sort of (key, val) pairs by key, the device's rec_sort_pairs' twin. */
static void records_sort_pairs(std::vector<u64> &key, std::vector<uint32_t> &val)
{
    std::vector<size_t> at(key.size());
    std::iota(at.begin(), at.end(), 0);
    std::stable_sort(at.begin(), at.end(), [&](size_t a, size_t b) { return key[a] < key[b]; });
    std::vector<u64> k(key.size());
    std::vector<uint32_t> v(val.size());
    for (size_t i = 0; i < at.size(); i++) {
        k[i] = key[at[i]];
        v[i] = val[at[i]];
    }
    key.swap(k);
    val.swap(v);
}

extern "C" int gm_gpu_test_records_host(const gm_gpu_rec_job *job, gm_status *st)
{
    std::vector<unsigned char> text;
    std::vector<u64> bstart, hbase;
    for (int b = 0; b < job->nblocks; b++) {
        bstart.push_back(text.size());
        hbase.push_back((u64)(uintptr_t)job->text[b]);
        text.insert(text.end(), job->text[b], job->text[b] + job->len[b]);
    }
    bstart.push_back(text.size());
    std::vector<u64> ends;
    for (size_t i = 0; i < text.size(); i++)
        if (text[i] == (unsigned char)job->ks->eol)
            ends.push_back(i);
    const u64 n = job->lines;
    if (ends.size() != n)
        return gm_fail(st, GM_ECUDA, "records: %zu lines found, %llu expected", ends.size(), n);
    const int head8 = job->refine != 0;
    std::vector<u64> pfx(n), key(n);
    std::vector<uint32_t> val(n);
    std::vector<unsigned char> exact(n);
    int inexact = 0;
    for (u64 j = 0; j < n; j++)
        inexact |= !rec_prefix_one(job->ks, text.data(), ends.data(), j, head8, pfx.data(),
                                   key.data(), val.data(), exact.data());
    records_sort_pairs(key, val);
    if (head8) {
        for (u64 i = 0; i < n; i++)
            key[i] = pfx[val[i]];
        records_sort_pairs(key, val);
    }
    u64 *recs = (u64 *)job->recs;
    for (u64 i = 0; i < n; i++)
        rec_build_one(job->ks, text.data(), ends.data(), key.data(), val.data(), exact.data(), i,
                      bstart.data(), hbase.data(), job->nblocks, head8 && !inexact, recs,
                      job->tied);
    /* the device's refinement rounds, as records.cu runs them */
    std::vector<uint32_t> group(n);
    const int words = head8 ? rec_round_words(job->ks, inexact) : REC_WORDS_NONE;
    for (int r = 0; words != REC_WORDS_NONE && r < REC_REFINE_ROUNDS; r++) {
        u64 ties = 0;
        for (u64 i = 0; i < n; i++)
            ties += job->tied[i];
        if (!rec_refine_wanted(ties, n))
            break;
        for (u64 i = 0; i < n; i++) {
            uint32_t m = rec_group_mark(job->tied, i);
            group[i] = i && group[i - 1] > m ? group[i - 1] : m;
        }
        for (u64 i = 0; i < n; i++)
            key[i] = rec_refine_key(job->ks, words, text.data(), ends.data(), group.data(),
                                    val.data(), i, r);
        records_sort_pairs(key, val);
        for (u64 i = 0; i < n; i++)
            rec_refine_one(ends.data(), pfx.data(), key.data(), val.data(), exact.data(), i,
                           bstart.data(), hbase.data(), job->nblocks, recs, job->tied);
    }
    return GM_OK;
}
