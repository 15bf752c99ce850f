/*
 * text.cu - the text path of the GPU sort (gm_gpu_sort_text): the input's text is
 * copied to the device, parsed there (text_parse.cu), sorted (sort.cu's
 * sort_on_device, -u by unique_on_device), formatted there (text_format.cu) and
 * copied back, so that the host only reads and writes bytes. Moving text costs more
 * bytes than moving int32 keys, but PCIe moves pinned memory several times faster
 * than the host parses and formats (bench/RESULTS.md measures both).
 *
 * This file holds the job's steps around the kernels: the staging ring, the
 * copies, and the driver that chains them, written once for both key widths
 * (sort_and_format); the scratch and scans that parse and format share are
 * text_scratch.cu's.
 *
 * Copies go through a ring of pinned staging buffers (allocated once a process):
 * the caller's copy fills buffer i + 1 while buffer i crosses PCIe, and on the way
 * back the sink takes piece i while piece i + 1 crosses. The text itself can stay
 * in pageable memory, read before CUDA is needed.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "kernels.cuh"
#include "text.cuh"

/* ------------------------------------------------------------------ staging */

/* The pinned staging ring, made at the first text job and kept. Its memory is
 * mapped, touched and then registered with CUDA: cudaHostRegister pins touched
 * memory far faster than cudaHostAlloc allocates pinned memory (bench/RESULTS.md,
 * "Design choices"). */
constexpr int RING = 4;
constexpr size_t STAGE_BYTES = 16u << 20;

struct staging {
    char *buf[RING] = {};
    cudaEvent_t done[RING] = {}; /* the copy through buf[i] has finished */
    int next = 0;                /* the buffer an upload takes next */
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

int text_begin(text_job &j, size_t len, gm_status *st)
{
    GM_CUDA(cudaStreamCreateWithFlags(&j.s, cudaStreamNonBlocking), st);
    j.len = len;
    j.cap = text_room(len);
    int rc = text_fits(j.cap, st);
    if (rc || (rc = j.mem.alloc(&j.text, j.cap, st)))
        return rc;
    /* Zeros after the text: the tiles read whole 16-byte chunks past its end. */
    GM_CUDA(cudaMemsetAsync(j.text + len, 0, j.cap - len, j.s), st);
    return staging_ready(st);
}

int text_upload_read(text_job &j, size_t at, size_t len, gm_read_fn read, void *ctx,
                     gm_status *st)
{
    const size_t piece = stage_piece();
    /* the buffers are taken in turn across calls, so that a call's first piece
     * waits on the oldest copy */
    int &i = ring.next;
    for (size_t off = 0; off < len; off += piece, i = (i + 1) % RING) {
        size_t n = len - off < piece ? len - off : piece;
        GM_CUDA(cudaEventSynchronize(ring.done[i]), st); /* its last copy has moved */
        int rc = read(ctx, ring.buf[i], n, st);
        if (rc)
            return rc;
        GM_CUDA(cudaMemcpyAsync(j.text + at + off, ring.buf[i], n, cudaMemcpyHostToDevice, j.s),
                st);
        GM_CUDA(cudaEventRecord(ring.done[i], j.s), st);
    }
    return GM_OK;
}

/* text_upload_at's read: the host text's next bytes, by copy (NULL: memcpy). */
struct from_host {
    const char *host;
    gm_copy_fn copy;
    void *ctx;
};

static int read_from_host(void *ctx, void *dst, size_t len, gm_status *)
{
    from_host *f = (from_host *)ctx;
    if (f->copy)
        f->copy(f->ctx, dst, f->host, len);
    else
        memcpy(dst, f->host, len);
    f->host += len;
    return GM_OK;
}

int text_upload_at(text_job &j, size_t at, const char *host, size_t len, gm_copy_fn copy,
                   void *ctx, gm_status *st)
{
    from_host f = { host, copy, ctx };
    return text_upload_read(j, at, len, read_from_host, &f, st);
}

int text_upload(text_job &j, const char *host, gm_copy_fn copy, void *ctx, gm_status *st)
{
    return text_upload_at(j, 0, host, j.len, copy, ctx, st);
}


/* What takes a downloaded piece: bytes [at, at + n) of the download, in a staging
 * buffer. */
typedef int (*piece_fn)(void *ctx, uint64_t at, const char *buf, size_t n, gm_status *st);

/* Moves dev[cut[0], cut.back()) to the host piece by piece (piece p is
 * [cut[p], cut[p + 1])): piece p goes through buffer p % RING while piece p - 1 is
 * handed to take. Waits for the stream's work before it. */
static int download_pieces(text_job &j, const char *dev, const std::vector<uint64_t> &cut,
                           piece_fn take, void *ctx, gm_status *st)
{
    const size_t npieces = cut.size() - 1;
    for (size_t p = 0; p <= npieces; p++) {
        if (p < npieces) {
            const int i = (int)(p % RING);
            GM_CUDA(cudaEventSynchronize(ring.done[i]), st);
            GM_CUDA(cudaMemcpyAsync(ring.buf[i], dev + cut[p], cut[p + 1] - cut[p],
                                    cudaMemcpyDeviceToHost, j.s),
                    st);
            GM_CUDA(cudaEventRecord(ring.done[i], j.s), st);
        }
        if (p > 0) {
            const int i = (int)((p - 1) % RING);
            GM_CUDA(cudaEventSynchronize(ring.done[i]), st);
            int rc = take(ctx, cut[p - 1], ring.buf[i], cut[p] - cut[p - 1], st);
            if (rc)
                return rc;
        }
    }
    return GM_OK;
}

/* [0, len) cut into pieces of a staging buffer each, for download_pieces. */
static std::vector<uint64_t> staged_cuts(size_t len)
{
    const size_t piece = stage_piece();
    std::vector<uint64_t> cut;
    for (uint64_t at = 0; at < len; at += piece)
        cut.push_back(at);
    cut.push_back(len);
    return cut;
}

struct to_host {
    char *host;
    gm_copy_fn copy;
    void *ctx;
};

static int take_to_host(void *ctx, uint64_t at, const char *buf, size_t n, gm_status *)
{
    to_host *t = (to_host *)ctx;
    if (t->copy)
        t->copy(t->ctx, t->host + at, buf, n);
    else
        memcpy(t->host + at, buf, n);
    return GM_OK;
}

int text_download_to(text_job &j, void *host, const void *dev, size_t len, gm_copy_fn copy,
                     void *ctx, gm_status *st)
{
    to_host t = {(char *)host, copy, ctx};
    return download_pieces(j, (const char *)dev, staged_cuts(len), take_to_host, &t, st);
}

struct to_sink {
    gm_text_sink sink;
    void *ctx;
    double seconds;
    uint64_t bytes;
};

static int take_to_sink(void *ctx, uint64_t, const char *buf, size_t n, gm_status *st)
{
    to_sink *t = (to_sink *)ctx;
    double a = host_seconds();
    int rc = t->sink(t->ctx, buf, n, st);
    t->seconds += host_seconds() - a;
    if (rc == GM_OK)
        t->bytes += n;
    return rc;
}

int text_download(text_job &j, const std::vector<uint64_t> &off, gm_text_sink sink, void *ctx,
                  double *sink_seconds, uint64_t *bytes, gm_status *st)
{
    const size_t piece = stage_piece();
    /* Pieces end at tile offsets (whole lines), each at most a staging buffer, or
     * one tile when a tile is larger (only with a forced small piece). */
    std::vector<uint64_t> cut(1, 0);
    for (size_t t = 1; t < off.size(); t++) {
        bool last = t + 1 == off.size();
        if ((last || off[t + 1] - cut.back() > piece) && off[t] > cut.back())
            cut.push_back(off[t]);
    }
    to_sink t = {sink, ctx, 0, 0};
    int rc = download_pieces(j, j.text, cut, take_to_sink, &t, st);
    *sink_seconds = t.seconds;
    *bytes = t.bytes;
    return rc;
}

int text_download_sink(text_job &j, const char *dev, size_t len, gm_text_sink sink, void *ctx,
                       double *sink_seconds, uint64_t *bytes, gm_status *st)
{
    to_sink t = {sink, ctx, 0, 0};
    int rc = download_pieces(j, dev, staged_cuts(len), take_to_sink, &t, st);
    *sink_seconds += t.seconds;
    *bytes += t.bytes;
    return rc;
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

/* Sorts the parsed keys (sort_parsed) and formats them into the job's text buffer,
 * *off getting the tiles' offsets; *f0 gets the host's clock as formatting starts. */
template <typename K>
static int sort_and_format(text_job &j, const gm_text_job *job, text_parsed &r, gm_kernel used,
                           int64_t *n_out, std::vector<uint64_t> *off, double *f0,
                           gm_gpu_times *times, gm_status *st)
{
    K *sorted;
    int rc = sort_parsed<K>(j, job, r, used, &sorted, n_out, times, st);
    if (rc)
        return rc;
    GM_CUDA(cudaStreamSynchronize(j.s), st);
    *f0 = host_seconds();
    return text_format<K>(j, sorted, *n_out, job->eol, off, st);
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
    on_probed_device here;
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
    rc = r.width == GM_I32
             ? sort_and_format<int32_t>(j, job, r, used, &n_out, &off, &f0, times, st)
             : sort_and_format<int64_t>(j, job, r, used, &n_out, &off, &f0, times, st);
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
