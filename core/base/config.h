/*
 * config.h - a run's configuration, as the command line or the library's caller
 * sets it (gm_config), what is to be done (gm_op) and the kinds of the messages the
 * core hands back (gm_message): what every part of the core is given. The order of
 * lines is keys.h's (gm_keyspec), only pointed to here.
 */
#ifndef GM_CONFIG_H
#define GM_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "base/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gm_keyspec;

/* The release: the one line of VERSION, which the Makefile passes as -DGM_VERSION. */
#ifndef GM_VERSION
#define GM_VERSION "unknown (built without the Makefile)"
#endif

/* What to do with the inputs. */
typedef enum gm_op { GM_OP_MERGE, GM_OP_SORT, GM_OP_CHECK } gm_op;

/* gm_device (--device) and gm_device_name, its name on the command line and in -v
 * output, are the library's: include/gpumerge.h. */

/* What a message from the core is: -v's plan and times, a notice worth a user's
 * attention (the GPU failed and the CPU took over), or a --progress line (the
 * front end redraws it in place on a terminal). */
typedef enum gm_message { GM_MSG_VERBOSE, GM_MSG_NOTICE, GM_MSG_PROGRESS } gm_message;

typedef struct gm_config {
    int reverse;        /* -r: descending order */
    int unique;         /* -u: one line per value */
    int verbose;        /* -v: plan and stage times through message() */
    int progress;       /* --progress: progress lines through message() */
    int threads;        /* --parallel / --threads; 0 = all online cores */
    int check_quiet;    /* check: -C / --check=quiet: report disorder by status only */
    int zero_terminated;/* -z: lines end with NUL, not newline */
    gm_device device;   /* --device */
    gm_kernel kernel;   /* --kernel */
    int gpu;            /* --gpu=N: the CUDA device, numbered from 0 among those
                           CUDA_VISIBLE_DEVICES leaves; 0 by default */
    const char *output; /* -o FILE, or NULL for standard output */
    size_t buffer_size; /* -S: memory budget in bytes; 0 = chosen from the machine */
    const char *tmpdir; /* -T: temporary files; NULL = $TMPDIR, else /tmp */
    const char *compress_program; /* --compress-program: runs written through it and
                           read back through it with -d; NULL: as they are */
    int batch_size;     /* --batch-size: most runs merged at once; 0 = default */
    int strict;         /* --strict: every line one integer, output canonical (the
                           integer path only); else lines are ordered by keyspec */
    const struct gm_keyspec *keyspec; /* the order of lines (keys.h: -k, -t, -n, -g,
                           -h, -b, -s, -u, -r, -z); NULL: the whole line by -n */
    double started;     /* gm_now() at the program's first line: -v's total counts from
                           here (0: from gm_run's call) */
    const int64_t *ranges; /* input i is the bytes [ranges[2 i], ranges[2 i + 1]) of
                           its file, a regular file that is not the output, its lines
                           numbered from the range's first (gpumerge-mpi's slices of
                           files, read where they lie); NULL: every input whole */
    int last;           /* the process's last gm_run: it ends CUDA's part too (the
                           context destroyed now, timed, not in exit's handlers) */
    /* Where the core's messages go (no trailing newline in text); NULL: nowhere. */
    void (*message)(void *ctx, gm_message kind, const char *text);
    void *message_ctx;  /* message's first argument, the front end's own (localsort.c) */
} gm_config;

#ifdef __cplusplus
}
#endif

#endif
