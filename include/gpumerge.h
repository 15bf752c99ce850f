/*
 * gpumerge.h - libgpumerge: merge sorted arrays and sort arrays of int32 or int64
 * keys in memory, on all CPU cores or on an NVIDIA GPU, with the engines the
 * gpumerge program runs (co-rank merges after chapter 12 of Programming Massively
 * Parallel Processors, a radix sort on the CPU, a merge sort on the GPU).
 *
 * Plain C, for C (C99 and later) and C++; no CUDA header: a CUDA stream travels as
 * a void *. Build with   cc prog.c $(pkg-config --cflags --libs gpumerge)
 * (a static link: pkg-config --static --libs gpumerge). The manual: gpumerge(3).
 *
 * Every call returns a gm_code and, on failure, fills in the caller's gm_status
 * (when not NULL) with the same code and a message; the library never exits and
 * never prints. Calls may come from several threads at once.
 */
#ifndef GPUMERGE_H
#define GPUMERGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ status */

/* Outcome of a call. The calls on memory return GM_OK, GM_EUSAGE, GM_EINPUT,
 * GM_ENOMEM, GM_ENODEV, GM_EDEVMEM or GM_ECUDA; the rest are the gpumerge
 * program's (its exit status is GM_OK's and GM_DISORDER's value, else 2). */
typedef enum gm_code {
    GM_OK = 0,
    GM_DISORDER = 1, /* the program's check found an input out of order */
    GM_EUSAGE,       /* a bad argument (the message names it) */
    GM_EINPUT,       /* an input is not as promised: a merge's array out of order */
    GM_EIO,          /* a file could not be read or written */
    GM_EPIPE,        /* the reader of the program's output went away */
    GM_ENOMEM,       /* host memory exhausted */
    GM_ENODEV,       /* no usable CUDA device, or a library built without CUDA */
    GM_EDEVMEM,      /* the data does not fit in device memory */
    GM_ECUDA,        /* any other CUDA runtime error */
    GM_ETEXT,        /* internal to the program: never returned by these calls */
    GM_ERECORDS      /* internal to the program: never returned by these calls */
} gm_code;

/* A code and its message (NUL-terminated, cut to fit). */
typedef struct gm_status {
    gm_code code;
    char msg[1024];
    size_t len; /* bytes of msg when it holds a NUL byte (the program's messages
                   quoting a line); 0: msg ends at its first NUL */
} gm_status;

/* ------------------------------------------------------------------ choices */

/* Which engine runs a call (the GPU engine runs on device 0). GM_DEVICE_AUTO: on
 * host memory, the GPU where one is usable and the cost model (start-up, copies,
 * kernels against the CPU's rate) says it is faster, else the CPU, and the CPU
 * again when the GPU then fails; on device memory, the GPU. GM_DEVICE_GPU fails
 * with GM_ENODEV when no GPU is usable, GM_EDEVMEM when the data does not fit. */
typedef enum gm_device { GM_DEVICE_AUTO, GM_DEVICE_CPU, GM_DEVICE_GPU } gm_device;

/* The width of the keys: int32_t or int64_t, signed. */
typedef enum gm_width { GM_I32 = 4, GM_I64 = 8 } gm_width;

/* The options of a call. A zeroed struct (or a NULL pointer) means: ascending,
 * every key kept, the device chosen by GM_DEVICE_AUTO, all online cores, the
 * default stream. */
typedef struct gm_options {
    gm_device device;
    int descending; /* order, and the order a merge's inputs are in: 0 ascending */
    int unique;     /* keep the first of each run of equal keys; the calls then
                       need n_out for the count kept */
    int threads;    /* the CPU engine's threads; 0: all online cores */
    void *stream;   /* the device calls: a cudaStream_t, NULL for the default
                       (legacy) stream */
    void *reserved[4]; /* zero */
} gm_options;

/* ------------------------------------------------------------------ host memory */

/* Sorts the n keys of width at keys in place, in opt's order. With unique the
 * first *n_out keys are the result; else *n_out (when n_out is not NULL) is n. */
int gm_sort(void *keys, size_t n, gm_width width, const gm_options *opt, size_t *n_out,
            gm_status *st);

/* Merges the k arrays arrays[0..k-1] of lens[0..k-1] keys of width, each sorted
 * in opt's order, into out (room for the sum of lens keys, overlapping no input).
 * Stable: of equal keys, the earlier array's come first. An array out of order
 * fails with GM_EINPUT naming it, the index and the keys (out then holds no
 * result). k may be 0; arrays may be empty (their pointers then may be NULL).
 * *n_out (when n_out is not NULL) gets the keys written: fewer with unique. */
int gm_merge(const void *const *arrays, const size_t *lens, size_t k, gm_width width,
             void *out, const gm_options *opt, size_t *n_out, gm_status *st);

/* ------------------------------------------------------------------ device memory */

/* gm_sort and gm_merge on device pointers, on the GPU: keys in the memory of
 * device 0, the device the engine probes and tunes its kernels for (made current
 * for the call; the calling thread's own current device is left as it was). The
 * work is ordered on opt->stream (a stream of device 0) after the work the caller
 * queued there; each call returns once its work is done. Temporary device memory:
 * about twice the keys. GM_DEVICE_CPU is refused (GM_EUSAGE). A merge's arrays
 * are not checked for order on the device: an unsorted input gives an unsorted
 * output. A library built without CUDA returns GM_ENODEV ("... built without
 * CUDA"). */
int gm_sort_device(void *keys, size_t n, gm_width width, const gm_options *opt,
                   size_t *n_out, gm_status *st);
int gm_merge_device(const void *const *arrays, const size_t *lens, size_t k, gm_width width,
                    void *out, const gm_options *opt, size_t *n_out, gm_status *st);

/* ------------------------------------------------------------------ key-value pairs */

/* Pairs (a key and a value carried with it) are not in this version; their calls
 * will sit here, beside the keys' ones, with the same options and statuses. */

/* ------------------------------------------------------------------ the library */

/* GM_OK when the GPU engine can run here; else GM_ENODEV with the reason in words
 * ("no usable CUDA device: built without CUDA", "...: no CUDA-capable device").
 * The first call creates the CUDA context of device 0 (a fraction of a second). */
int gm_device_probe(gm_status *st);

/* The library's version (the release, "1.1.0"). */
const char *gm_version(void);

/* "auto", "cpu" or "gpu". */
const char *gm_device_name(gm_device d);

#ifdef __cplusplus
}
#endif

#endif
