/*
 * output.h - formatting keys as text on all cores and writing them with few system
 * calls, to standard output or atomically to a file named by -o.
 *
 * -o FILE is written to a temporary file in FILE's directory and renamed over FILE
 * only by gm_output_commit, so FILE may also be an input, and a run that fails
 * leaves an existing FILE untouched. A FILE that is not a regular file (/dev/null,
 * /dev/full, a fifo) is written in place.
 */
#ifndef GM_OUTPUT_H
#define GM_OUTPUT_H

#include "gm.h"

typedef struct gm_output {
    char shown[512]; /* "standard output" or the quoted file name */
    int fd;
    char *final;     /* file to rename the temporary over, or NULL */
    char *tmp;       /* the temporary file, or NULL */
} gm_output;

/* Prepares the output: standard output when path is NULL, else a temporary file
 * beside path (or path itself when it is not a regular file). Returns GM_OK or
 * GM_EIO ("cannot create: FILE: REASON"). */
int gm_output_open(gm_output *out, const char *path, gm_status *st);

/* Where the time of gm_output_write went, in seconds. */
typedef struct gm_output_stats {
    double format_cpu; /* formatting, summed over threads */
    double write;      /* inside write(2) */
} gm_output_stats;

/* Formats keys (canonical decimal, one per line; with unique, the first of each
 * run of equal keys only) on nthreads threads and writes them in order. Returns
 * GM_OK, GM_EPIPE when the reader has gone, GM_EIO ("write failed: FILE: REASON")
 * or GM_ENOMEM. */
int gm_output_write(gm_output *out, const gm_keys *keys, int unique, int nthreads,
                    gm_output_stats *stats, gm_status *st);

/* Finishes the output: closes and renames the temporary file over its target.
 * Returns GM_OK or GM_EIO. After an error the temporary file is removed. */
int gm_output_commit(gm_output *out, gm_status *st);

/* Abandons the output: removes the temporary file, if any. Safe after commit. */
void gm_output_abort(gm_output *out);

/* Formats one key as canonical decimal at p and returns the end (no newline).
 * p needs 20 bytes. Exposed for the tests. */
char *gm_format_i64(char *p, int64_t v);

#endif
