/*
 * text.cuh - the steps of the text path that gm_gpu_sort_text (text.cu) chains and
 * the tests' hooks (testing.cu) call one by one: the text copied to the device
 * (text.cu), parsed there (text_parse.cu), keys formatted there (text_format.cu),
 * the output copied back in pieces (text.cu); and the helpers those files share.
 */
#ifndef GM_CUDA_TEXT_CUH
#define GM_CUDA_TEXT_CUH

#include <stdint.h>

#include <vector>

#include "device.cuh"

typedef unsigned long long u64;

/* One text job on the device: its stream and buffers, released with it. text
 * holds the input, then the output (canonical lines are never longer than the
 * lines they come from, and one eol more fits in the padding). */
struct text_job {
    device_buffers mem;   /* the job's device buffers (text_begin and the steps after it) */
    cudaStream_t s = nullptr; /* the job's stream (text_begin) */
    char *text = nullptr; /* cap bytes; zeros after the text */
    size_t len = 0, cap = 0; /* the text's bytes, and text's with the padding (text_begin) */
    bool canonical = false; /* only canonical integers: any other line is declined */
    text_job() = default;
    text_job(const text_job &) = delete;
    text_job &operator=(const text_job &) = delete;
    ~text_job()
    {
        if (s)
            cudaStreamDestroy(s);
    }
};

/* What the parser found. keys and other (room for bound keys of either width, so
 * the sort can ping-pong) are device buffers of the job. */
struct text_parsed {
    int64_t lines = 0, nkeys = 0; /* lines parsed, keys among them (text_parse, close_gaps) */
    gm_width width = GM_I32;  /* the keys' width: GM_I64 once one needs it (text_parse) */
    int64_t bad_line = 0; /* 1-based; 0: none */
    int bad_range = 0;    /* the bad line is an integer out of range (text_parse) */
    /* the keys and their partner (text_parse; close_gaps swaps them) */
    void *keys = nullptr, *other = nullptr;
    int64_t bound = 0;    /* the buffers' room, in keys */
};

/* Creates the stream and the device text buffer for len bytes. GM_ETEXT when they
 * do not fit in device memory. */
int text_begin(text_job &j, size_t len, gm_status *st);

/* Copies len bytes of host text to the device through the pinned staging ring,
 * copy (NULL: memcpy) filling each staging buffer while the one before it moves. */
int text_upload(text_job &j, const char *host, gm_copy_fn copy, void *ctx, gm_status *st);

/* The same for len bytes of host text into the job's text at byte at (a text made
 * of several host pieces, cuda/records.cu). */
int text_upload_at(text_job &j, size_t at, const char *host, size_t len, gm_copy_fn copy,
                   void *ctx, gm_status *st);

/* The same for len bytes that read (gpu.h's gm_read_fn) puts into each staging
 * buffer in turn, into the job's text at byte at. */
int text_upload_read(text_job &j, size_t at, size_t len, gm_read_fn read, void *ctx,
                     gm_status *st);

/* The way back: len bytes of device memory at dev into host memory (any kind)
 * through the staging ring, copy (NULL: memcpy) emptying each staging buffer
 * while the next one moves. Waits for the stream's work before it. */
int text_download_to(text_job &j, void *host, const void *dev, size_t len, gm_copy_fn copy,
                     void *ctx, gm_status *st);

/* Parses the job's text (lines ending with eol). A declined line is reported in
 * r->bad_line, not as an error; GM_ETEXT when the keys do not fit in device memory. */
int text_parse(text_job &j, char eol, text_parsed *r, gm_status *st);

/* The device text buffer's size for len bytes of text: whole parse tiles, and the
 * bytes after them that the last tile's halo reads (text_parse.cu). */
size_t text_room(size_t len);

/* Formats the n keys at d_keys into the job's text buffer; *off gets the byte
 * offset of every tile of keys and the total at the end. */
template <typename K>
int text_format(text_job &j, const K *d_keys, int64_t n, char eol, std::vector<uint64_t> *off,
                gm_status *st);

/* Copies the formatted text (tile offsets off, from text_format) back through the
 * staging ring in pieces of whole lines, each handed to sink while the next moves;
 * *sink_seconds gets the time spent in sink, *bytes what it took. */
int text_download(text_job &j, const std::vector<uint64_t> &off, gm_text_sink sink, void *ctx,
                  double *sink_seconds, uint64_t *bytes, gm_status *st);

/* dev[0, len) back through the staging ring to sink, a staging buffer's bytes at
 * a time (lines may be cut between calls), each handed over while the next moves;
 * the seconds in sink and the bytes it took are added to *sink_seconds and *bytes. */
int text_download_sink(text_job &j, const char *dev, size_t len, gm_text_sink sink, void *ctx,
                       double *sink_seconds, uint64_t *bytes, gm_status *st);

/* Shared by parse and format (text.cu): scratch of one call of cub's device-wide
 * algorithms, released with the job; an exclusive scan of counts[0..ntiles] (the
 * last entry set to 0) into pre; a fits check that declines the text path
 * (GM_ETEXT) instead of failing the run. */
int text_cub_temp(text_job &j, size_t bytes, void **p, gm_status *st);
int text_scan_tiles(text_job &j, u64 *counts, u64 *pre, u64 ntiles, gm_status *st);
int text_fits(size_t need, gm_status *st);

#endif
