/*
 * gm.h - the public face of the gpumerge core: status, key arrays, configuration,
 * and the three operations the command line offers (merge, sort, check).
 *
 * Data flows files -> core/input (parse) -> core/engine (cpu.c or cuda/) ->
 * core/output (format, write); see ../shared/design.md. Nothing here includes a
 * CUDA header. Library code never exits: every failure is reported through a
 * gm_status, and only cli/main.c turns a status into an exit code.
 */
#ifndef GM_H
#define GM_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" { /* the CUDA side (C++) calls gm_fail */
#endif

#define GM_VERSION "1.0.0"

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
    GM_ECUDA         /* any other CUDA runtime error */
} gm_code;

/* A status carries a code and a message that main prints after "gpumerge: ". */
typedef struct gm_status {
    gm_code code;
    char msg[1024];
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

typedef enum gm_device { GM_DEVICE_AUTO, GM_DEVICE_CPU, GM_DEVICE_GPU } gm_device;

typedef enum gm_kernel {
    GM_KERNEL_AUTO,
    GM_KERNEL_BASIC,
    GM_KERNEL_TILED,
    GM_KERNEL_CIRCULAR
} gm_kernel;

/* Names used on the command line and in -v output. */
const char *gm_device_name(gm_device d);
const char *gm_kernel_name(gm_kernel k);

typedef struct gm_config {
    int reverse;        /* -r: descending order */
    int unique;         /* -u: one line per value */
    int verbose;        /* -v: plan and stage times on stderr */
    int threads;        /* --threads; 0 = all online cores */
    gm_device device;   /* --device */
    gm_kernel kernel;   /* --kernel */
    const char *output; /* -o FILE, or NULL for standard output */
} gm_config;

/* Each returns GM_OK, or an error code with st filled in. gm_check returns
 * GM_DISORDER (with the "FILE:LINE: disorder: TEXT" message in st) when an input is
 * not sorted. names are file names, "-" meaning standard input; gm_sort and gm_check
 * read standard input when nnames is 0. */
int gm_merge(const gm_config *cfg, char *const *names, int nnames, gm_status *st);
int gm_sort(const gm_config *cfg, char *const *names, int nnames, gm_status *st);
int gm_check(const gm_config *cfg, char *const *names, int nnames, gm_status *st);

#ifdef __cplusplus
}
#endif

#endif
