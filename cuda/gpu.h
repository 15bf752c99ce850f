/*
 * gpu.h - the C interface of the GPU engine: all the core knows of CUDA.
 *
 * Implemented by the .cu files in this directory when the build has nvcc, and by
 * gpu_stub.c otherwise (every call then reports "built without CUDA"). Keys are
 * host arrays; the functions copy them to the device, run the kernels, and copy
 * the result back. Errors come back as a status, never as an exit.
 */
#ifndef GM_GPU_H
#define GM_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "../core/keys/keys.h"
#include "../core/base/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gm_gpu_info {
    char name[256];   /* the device's name (gm_gpu_probe, device.cu) */
    int sm_count;     /* its multiprocessors (gm_gpu_probe) */
    int cc_major, cc_minor; /* its compute capability (gm_gpu_probe) */
    int index;        /* the device's number among those CUDA sees */
    size_t free_bytes, total_bytes; /* its free and total memory at the probe (gm_gpu_probe) */
    char detail[256]; /* after a failed probe: the CUDA error behind the message, by
                         name and CUDA's own words (for -v); else empty */
    double seconds;   /* how long the probe took: CUDA's initialisation and the
                         context's creation (0 without CUDA) */
} gm_gpu_info;

/* Stage times of one GPU operation, in seconds. */
typedef struct gm_gpu_times {
    /* copying in, in the kernels, copying out (device_job::finish, text.cu, records.cu,
       resident.cu) */
    double h2d, kernel, d2h;
    double parse, format; /* gm_gpu_sort_text: the parse and format kernels (in kernel) */
    int passes;          /* merge passes run (sort: after the block sort) */
    gm_kernel kernel_used; /* the merge kernel AUTO came to (merge.cu, sort.cu, text.cu) */
} gm_gpu_times;

/* Descriptors CUDA's start-up opens on a machine with one GPU (the driver's
 * device files, its threads' pipes and event descriptors), and one more. With
 * fewer free, CUDA fails or crashes, so the probe does not start it; a merge
 * keeps this many free beside its fan-in while the GPU may start. */
#define GM_GPU_START_FDS 34

/* Finds the chosen CUDA device (gm_gpu_select) and creates its context (once a
 * process; later calls return what the first found); the probing thread's current
 * device is made current again (a library caller's choice). Returns GM_OK, GM_EUSAGE
 * when the chosen index names no device, or GM_ENODEV with the reason in
 * words ("no usable CUDA device: no NVIDIA driver loaded", "...: no CUDA-capable
 * device", "...: built without CUDA", "...: N file descriptors free, CUDA's
 * start-up needs 34 (ulimit -n)", ...). info, if not null, is filled in either
 * way (all zero but detail after a failure). */
int gm_gpu_probe(gm_gpu_info *info, gm_status *st);

/* Chooses the device the probe takes: index among the devices CUDA sees (those
 * CUDA_VISIBLE_DEVICES leaves, numbered from 0), 0 unless chosen. Has no effect
 * once the probe has begun. An index with no device makes the probe fail with
 * GM_EUSAGE ("--gpu=N: no such CUDA device: ..."), which --device=auto reports
 * as an error rather than falling back to the CPU. */
void gm_gpu_select(int index);

/* Whether this build has the CUDA engine (0 in the stub): no CUDA call. */
int gm_gpu_built(void);

/* Starts the probe (and so the CUDA context) in a background thread and returns at
 * once, so that start-up overlaps the caller's own work (reading the input); the
 * next gm_gpu_probe, merge or sort waits for it and reports its result. Calling it
 * more than once, or not at all, is harmless. */
void gm_gpu_warm_start(void);

/* Whether an NVIDIA driver is loaded (its control device exists): a look at the
 * file system, no CUDA call, so that a caller may skip work that only pays when a
 * GPU can run, before any start-up. 0 in a build without CUDA. */
int gm_gpu_driver_loaded(void);

/* Whether the probe has run to its end (gm_gpu_probe then returns at once); never
 * waits. 0 when it has not begun. */
int gm_gpu_probe_done(void);

/* Ends CUDA's part in the process: waits for a warm start still running, then
 * destroys the context if the probe made one (cudaDeviceReset), so that exit has
 * nothing of CUDA's left to do. Device memory the engine still held is freed with
 * it. Touches nothing when CUDA was never started. A GPU call after it makes a new
 * context. Returns how long the destruction took (0 when there was none). When
 * gm_gpu_teardown_begin started it, this waits for that thread instead. */
double gm_gpu_teardown(void);

/* Begins the teardown above in a thread of its own, for a caller whose GPU work is
 * over and that has other work left (finishing the output); gm_gpu_teardown then
 * waits for it. No GPU call may come between the two. */
void gm_gpu_teardown_begin(void);

/* NVTX ranges around the stages (trace.cu): push opens a range named name on the
 * calling thread, pop closes the innermost one. No cost worth measuring unless a
 * tool (Nsight Systems) is attached; nothing at all in a build without CUDA. */
void gm_trace_push(const char *name);
void gm_trace_pop(void);

/* Merges the nruns sorted runs of keys (run r is [offsets[r], offsets[r+1])) in
 * place on the GPU with the given kernel (GM_KERNEL_AUTO: the tuned choice for this
 * size and width). Stable: ties take the earlier run first. reverse: descending.
 * Returns GM_OK, GM_EDEVMEM when the data does not fit in device memory (nothing is
 * changed), GM_ECUDA, or GM_ENODEV. */
int gm_gpu_merge(gm_keys *keys, const int64_t *offsets, int nruns, int reverse,
                 gm_kernel kernel, gm_gpu_times *times, gm_status *st);

/* Sorts keys in place on the GPU: block sort, then merge passes with the given
 * kernel. With unique, equal keys are collapsed on the device and keys->n shrinks.
 * Same returns as gm_gpu_merge. */
int gm_gpu_sort(gm_keys *keys, int reverse, int unique, gm_kernel kernel,
                gm_gpu_times *times, gm_status *st);

/* The library's calls on device memory (gm_sort_device, gm_merge_device in
 * include/gpumerge.h): keys already on device 0 (made current for the call, the
 * calling thread's own device current again after it),
 * the work ordered on stream (a cudaStream_t; NULL the default stream) and waited
 * for. gm_gpu_sort_device sorts the n keys at keys in place; gm_gpu_merge_device
 * merges the k sorted device arrays arrays[i] of lens[i] keys into out (stable:
 * the earlier array first on ties). With unique only the first of equal keys is
 * kept; *n_out gets the keys written. Both copy the keys into buffers of their own
 * (about twice the keys) and back. Same returns as gm_gpu_merge. */
int gm_gpu_sort_device(void *keys, int64_t n, gm_width width, int reverse, int unique,
                       int64_t *n_out, void *stream, gm_status *st);
int gm_gpu_merge_device(const void *const *arrays, const int64_t *lens, int k, gm_width width,
                        void *out, int reverse, int unique, int64_t *n_out, void *stream,
                        gm_status *st);

/* The text path of a sort: the input's text goes to the device whole, is parsed
 * there (the grammar of core/read/input.h: [blanks][+|-]digits[blanks][\r] lines ending
 * with eol, blank lines skipped, the last line's eol optional, int32 keys while
 * every value fits, else int64), sorted (as gm_gpu_sort), formatted there
 * (canonical decimal, each line ending with eol) and handed back in pieces. */

/* Copies len bytes from src to dst; the caller's (parallel) memcpy. */
typedef void (*gm_copy_fn)(void *ctx, void *dst, const void *src, size_t len);
/* Takes the next len bytes of output (whole lines, in order). Returns GM_OK or an
 * error status, which ends the sort with it. */
typedef int (*gm_text_sink)(void *ctx, const char *text, size_t len, gm_status *st);
/* Puts the next len bytes of input into dst (pinned staging memory). Returns GM_OK
 * or an error status, which ends the sort with it. */
typedef int (*gm_read_fn)(void *ctx, void *dst, size_t len, gm_status *st);

typedef struct gm_text_job {
    const char *text;   /* host memory, any kind (copied through pinned staging) */
    size_t len;         /* text's bytes (the caller: core/stream/textsort.c) */
    char eol;           /* '\n', or '\0' for -z */
    int reverse, unique; /* -r: descending; -u: the first of equal keys only (the caller) */
    gm_kernel kernel;   /* the merge kernel asked for; AUTO: the device's choice */
    int canonical;      /* only canonical integers ([-]digits, no leading zero, no
                           "-0", nothing around them, no blank line): any other line
                           is declined as one that is not an integer */
    gm_copy_fn copy;    /* NULL: memcpy */
    void *copy_ctx;     /* copy's argument (the caller) */
    gm_text_sink sink;  /* takes the formatted output in pieces (the caller) */
    void *sink_ctx;     /* sink's argument (the caller) */
} gm_text_job;

typedef struct gm_text_result {
    int64_t keys;       /* keys parsed */
    int64_t written;    /* keys handed to the sink (fewer with unique) */
    uint64_t bytes;     /* bytes handed to the sink */
    gm_width width;     /* the keys' width as parsed (gm_gpu_sort_text) */
    double sink;        /* seconds spent in the sink */
} gm_text_result;

/* Sorts job's text on the GPU, handing the formatted result to job->sink. Returns
 * GM_OK; GM_ETEXT when the device's parser meets a line it does not take (not an
 * integer, out of range) or the text does not fit in device memory, before
 * anything reaches the sink (the caller then runs the CPU's path, which names the
 * line: its parser is the reference for messages); the sink's error; GM_EDEVMEM,
 * GM_ECUDA or GM_ENODEV (res->bytes says whether output was handed out before). */
int gm_gpu_sort_text(const gm_text_job *job, gm_text_result *res, gm_gpu_times *times,
                     gm_status *st);

/* The records path's sort of one chunk (cuda/records.cu): the chunk's blocks of
 * lines go to the device, where the lines are found, each line's first-key prefix
 * is made by the CPU's code (core/keys/keyprefix.h), and the (prefix, line) pairs are
 * sorted stably; the records come back in that order, with the places where the
 * device's order is not sort's final word. */
typedef struct gm_gpu_rec_job {
    const gm_keyspec *ks;              /* its first key not ordered by -g */
    const unsigned char *const *text;  /* the blocks, host memory: whole lines, each
                                          ending with ks->eol */
    const size_t *len;                 /* each block's bytes */
    int nblocks;                       /* the blocks in text and len (core/device/recgpu.c) */
    uint64_t lines;                    /* the lines of all blocks (counted by the caller) */
    int refine;                        /* one key with the last resort after it (no -s,
                                          -u): where every prefix is exact, equal ones are
                                          ordered by the lines' first eight bytes too */
    gm_copy_fn copy;                   /* NULL: memcpy (into the staging ring) */
    void *copy_ctx;                    /* copy's argument (the caller) */
    uint64_t *recs;                    /* out, 2 * lines: core/read/lines.h's gm_rec (prefix,
                                          reference) of each line, in the device's order */
    unsigned char *tied;               /* out, lines: 1 where a record's sort key (the
                                          prefix, with refine and exact prefixes also the
                                          first eight bytes) equals the one before it, so
                                          sort's comparison must order the two */
} gm_gpu_rec_job;

/* Sorts job's lines on the GPU as above. Equal sort keys keep the lines' order in
 * the blocks. Returns GM_OK; GM_ETEXT when the device declines the chunk (it does
 * not fit in device memory, or has 2^32 lines or more), before anything is
 * written, for the caller to sort it on the CPU; GM_EDEVMEM, GM_ECUDA or
 * GM_ENODEV. */
int gm_gpu_sort_records(const gm_gpu_rec_job *job, gm_gpu_times *times, gm_status *st);

/* Orders every run of tied records of recs[0, 2 n) (core/read/lines.h's gm_rec, their
 * references to host memory; a run begins where tied is 0) as core/device/recgpu.c's
 * gm_recgpu_ties does. Returns GM_OK or an error status. */
typedef int (*gm_ties_fn)(void *ctx, uint64_t *recs, const unsigned char *tied, size_t n,
                          gm_status *st);

/* The records sort with the text kept on the device (cuda/resident.cu): the
 * input's bytes go from read through the staging ring into device memory, the
 * lines are sorted there as gm_gpu_sort_records sorts them, the runs of ties the
 * device cannot order go to ties with their lines and come back ordered, and the
 * lines are gathered on the device into their sorted order and handed to sink
 * in pieces. The host holds no more of the text than those ties. */
typedef struct gm_gpu_lines_job {
    const gm_keyspec *ks;       /* its first key not ordered by -g */
    uint64_t bytes;             /* the text: whole lines, each ending with ks->eol */
    uint64_t lines_hint;        /* about how many lines (0: unknown): a text plainly too
                                   large for the device is declined before it is read */
    gm_read_fn read;            /* fills staging with the input's next bytes (the caller:
                                   core/records/recdevsort.c) */
    void *read_ctx;             /* read's argument (the caller) */
    size_t ties_max;            /* the most bytes of tied lines ties may take */
    gm_ties_fn ties;            /* orders the runs of ties the device cannot (the caller) */
    void *ties_ctx;             /* ties' argument (the caller) */
    gm_text_sink sink;          /* takes the sorted lines in pieces (the caller) */
    void *sink_ctx;             /* sink's argument (the caller) */
} gm_gpu_lines_job;

typedef struct gm_gpu_lines_result {
    uint64_t lines;             /* lines sorted */
    uint64_t written;           /* lines handed to the sink (fewer with -u) */
    uint64_t bytes;             /* bytes handed to the sink */
    uint64_t tied;              /* records sent to ties */
    double setup;               /* seconds before the first byte is read: CUDA's
                                   start-up (what is left of it) and the text's memory */
    double read, ties, sink;    /* seconds in read, ties and sink */
} gm_gpu_lines_result;

/* Sorts job's text on the GPU as above. Returns GM_OK; GM_ETEXT when the device
 * declines, before anything reaches the sink (the text and its lines do not fit
 * in device memory, 2^32 lines or more, tied lines beyond ties_max, -u whose
 * equal keys the device cannot tell), for the caller to sort the input another
 * way; read's, ties' or sink's error; GM_EDEVMEM, GM_ECUDA or GM_ENODEV
 * (res->bytes says whether output was handed out before). */
int gm_gpu_sort_lines(const gm_gpu_lines_job *job, gm_gpu_lines_result *res,
                      gm_gpu_times *times, gm_status *st);

/* Whether a text of bytes holding lines lines, sorted in ks's order, fits the
 * device's free memory with all that gm_gpu_sort_lines allocates for it: GM_OK;
 * GM_ETEXT where it does not (or holds 2^32 lines or more); the device's error. */
int gm_gpu_lines_fit(const gm_keyspec *ks, uint64_t bytes, uint64_t lines, gm_status *st);

#ifdef __cplusplus
}
#endif

#endif
