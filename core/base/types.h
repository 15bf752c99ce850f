/*
 * types.h - the types every layer shares: the status that carries an error upward,
 * key arrays and their width, and the merge kernels' names. The CUDA side
 * (cuda/gpu.h) includes this file and nothing else of the core's but the co-rank,
 * so the program's API in gm.h can change without touching the GPU engine. status.c
 * defines the functions declared here.
 */
#ifndef GM_TYPES_H
#define GM_TYPES_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "../../include/gpumerge.h"

#ifdef __cplusplus
extern "C" { /* the CUDA side (C++) calls gm_fail */
#endif

/* gm_code (the outcome of an operation) and gm_status (a code and the message main
 * prints after "gpumerge: ") are the library's public ones: include/gpumerge.h.
 * Two codes stay inside the program: GM_ETEXT, the GPU's text path declining the
 * input (a line that is not an integer, or text too large for the device), after
 * which the caller runs the CPU's path, which reports the line; and GM_ERECORDS,
 * the integer path declining a line that is not a canonical integer (outside
 * --strict), after which the records path takes the run over. */

/* Sets st (code and printf-style message) and returns code. st may be NULL. */
int gm_fail(gm_status *st, gm_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* gm_width (include/gpumerge.h): int64 while parsing, int32 when every value fits. */

/* A plain array of keys. data is owned by whoever filled it in. */
typedef struct gm_keys {
    void *data;     /* n keys of width bytes each, set by the filler (keybuf.c, api.c) */
    int64_t n;      /* keys in data */
    gm_width width; /* int32 or int64: how data is read; the sorts and runs keep it */
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
