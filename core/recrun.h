/*
 * recrun.h - the records path's runs: sorted lines in temporary files (in -T DIR,
 * $TMPDIR or /tmp, registered with core/cleanup so that they vanish on success, on
 * error and on a catchable signal), each line with its terminator, as sort keeps
 * them; and their merge with a bounded fan-in, in passes, the last into the
 * output. A run holds a descriptor only while it is written or read: between,
 * it is closed and opened again by name (and known again by device, inode and
 * size), so that any number of runs fits under a small limit on descriptors.
 */
#ifndef GM_RECRUN_H
#define GM_RECRUN_H

#include <sys/types.h>

#include "recmerge.h"

typedef struct gm_recrun {
    char *path;       /* NULL once removed */
    char shown[512];
    int fd;           /* -1 while the run is neither written nor read */
    dev_t dev;        /* the file, to know it again when it is opened by name */
    ino_t ino;
    int64_t bytes;    /* bytes written */
} gm_recrun;

/* Creates an empty run in dir (NULL: $TMPDIR, else /tmp). Returns GM_OK, GM_EIO
 * ("cannot create a temporary file in DIR: REASON") or GM_ENOMEM. */
int gm_recrun_create(gm_recrun *r, const char *dir, gm_status *st);

/* Writes the n sorted records as a new run (-u applied when unique), ready to be
 * read from its start. Returns GM_OK, GM_EIO or GM_ENOMEM. */
int gm_recrun_write(const gm_keyspec *ks, const gm_rec *r, size_t n, int unique,
                    const char *dir, int nthreads, gm_recrun *run, gm_status *st);

/* Ends writing bytes bytes: the descriptor is closed. Returns GM_OK or GM_EIO. */
int gm_recrun_end(gm_recrun *r, int64_t bytes, gm_status *st);

/* Closes and unlinks the run. Safe twice. */
void gm_recrun_remove(gm_recrun *r);

/* Merges the runs into out, fan_in at a time: while there are more, groups of
 * fan_in are merged into new runs in dir (-u applied when unique). Every run is
 * removed, also on error. passes counts the passes. Returns GM_OK or an error of
 * reading, writing or the sink. */
int gm_recrun_merge(const gm_recmerge_opts *o, gm_recrun *runs, int nruns, int fan_in,
                    const char *dir, int unique, gm_recsink *out, int *passes,
                    gm_status *st);

#endif
