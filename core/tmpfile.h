/*
 * tmpfile.h - a run's temporary file, as both paths' runs keep it (run.c: keys,
 * recrun.c: lines): created in -T DIR / $TMPDIR / /tmp and registered with
 * core/cleanup (removed on success, on error and on every catchable signal); its
 * descriptor held only while it is written or read, and between them closed and
 * opened again by name, known again by device, inode and size, as sort trusts
 * its own temporary files, so that any number of runs fits under a small limit on
 * descriptors.
 */
#ifndef GM_TMPFILE_H
#define GM_TMPFILE_H

#include <stdint.h>
#include <sys/types.h>

#include "types.h"

typedef struct gm_tmpfile {
    char *path;       /* NULL once removed */
    char shown[512];
    int fd;           /* -1 while the file is neither written nor read */
    dev_t dev;        /* the file, to know it again when it is opened by name */
    ino_t ino;
    int64_t bytes;    /* bytes written */
} gm_tmpfile;

/* Creates an empty file in dir (NULL: $TMPDIR, else /tmp), open for writing.
 * Returns GM_OK, GM_EIO ("cannot create a temporary file in DIR: REASON", or
 * "write failed: FILE: REASON") or GM_ENOMEM. */
int gm_tmpfile_create(gm_tmpfile *t, const char *dir, gm_status *st);

/* Ends writing bytes bytes: the descriptor is closed. Returns GM_OK or GM_EIO
 * ("write failed: FILE: REASON"). */
int gm_tmpfile_end(gm_tmpfile *t, int64_t bytes, gm_status *st);

/* Opens the written file again by name for reading from its start; it must be
 * the file written. Returns GM_OK, or GM_EIO ("cannot read: FILE: REASON",
 * "FILE: file changed while reading"). */
int gm_tmpfile_reopen(gm_tmpfile *t, gm_status *st);

/* Closes and unlinks the file. Safe twice. */
void gm_tmpfile_remove(gm_tmpfile *t);

#endif
