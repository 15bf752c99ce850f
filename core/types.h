/*
 * types.h - the types every layer shares: the status that carries an error upward,
 * key arrays and their width, and the merge kernels' names. The CUDA side
 * (cuda/gpu.h) includes this file and nothing else of the core's but the co-rank,
 * so the public API in gm.h can change without touching the GPU engine. status.c
 * defines the functions declared here.
 */
#ifndef GM_TYPES_H
#define GM_TYPES_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" { /* the CUDA side (C++) calls gm_fail */
#endif

/* Outcome of an operation. The numeric value of GM_OK and GM_DISORDER is the exit
 * status; every other code exits with 2. */
typedef enum gm_code {
    GM_OK = 0,
    GM_DISORDER = 1, /* `check` found an input out of order */
    GM_EUSAGE,       /* bad option or argument */
    GM_EINPUT,       /* an input line is not an integer, out of range, or disordered */
    GM_EIO,          /* a file could not be read or written */
    GM_EPIPE,        /* the reader of our output went away: end quietly */
    GM_ENOMEM,       /* host memory exhausted */
    GM_ENODEV,       /* no usable CUDA device (or a build without CUDA) */
    GM_EDEVMEM,      /* the data does not fit in device memory */
    GM_ECUDA,        /* any other CUDA runtime error */
    GM_ETEXT,        /* the GPU's text path declines the input (a line that is not an
                      * integer, or text too large for the device): the caller runs
                      * the CPU's path, which reports the line; never reaches main */
    GM_ERECORDS      /* the integer path declines a line that is not a canonical
                      * integer (outside --strict): the records path takes the run
                      * over; never reaches main */
} gm_code;

/* A status carries a code and a message that main prints after "gpumerge: ". */
typedef struct gm_status {
    gm_code code;
    char msg[1024];
    size_t len;   /* bytes of msg when it holds a NUL byte (a line's, as sort shows
                     it); 0: msg ends at its first NUL */
} gm_status;

/* Sets st (code and printf-style message) and returns code. st may be NULL. */
int gm_fail(gm_status *st, gm_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Key width: int64 while parsing, int32 when every value fits. */
typedef enum gm_width { GM_I32 = 4, GM_I64 = 8 } gm_width;

/* A plain array of keys. data is owned by whoever filled it in. */
typedef struct gm_keys {
    void *data;
    int64_t n;
    gm_width width;
} gm_keys;

/* The GPU merge kernels (--kernel). */
typedef enum gm_kernel {
    GM_KERNEL_AUTO,
    GM_KERNEL_BASIC,
    GM_KERNEL_TILED,
    GM_KERNEL_CIRCULAR
} gm_kernel;

/* Name used on the command line and in -v output. */
const char *gm_kernel_name(gm_kernel k);

#ifdef __cplusplus
}
#endif

#endif
