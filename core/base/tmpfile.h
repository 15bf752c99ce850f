/*
 * tmpfile.h - a run's temporary file, as both paths' runs keep it (run.c: keys,
 * recrun.c: lines): created in -T DIR / $TMPDIR / /tmp and registered with
 * core/cleanup (removed on success, on error and on every catchable signal); its
 * descriptor held only while it is written or read, and between them closed and
 * opened again by name, known again by device, inode and size, as sort trusts
 * its own temporary files, so that any number of runs fits under a small limit on
 * descriptors. With --compress-program=PROG (compress.h) the file is written
 * through PROG and read back through PROG -d, as sort's are: the descriptor is
 * then a pipe to or from the child, read and written as a stream.
 */
#ifndef GM_TMPFILE_H
#define GM_TMPFILE_H

#include <stdint.h>
#include <sys/types.h>

#include "base/types.h"

/* Where runs go and how they are kept, from the configuration (-T,
 * --compress-program). */
typedef struct gm_tmpspec {
    const char *dir;      /* NULL: $TMPDIR, else /tmp */
    const char *compress; /* PROG; NULL: a file holds the bytes written */
} gm_tmpspec;

typedef struct gm_tmpfile {
    char *path;       /* NULL once removed */
    char shown[512];
    int fd;           /* -1 while the file is neither written nor read */
    dev_t dev;        /* the file, to know it again when it is opened by name */
    ino_t ino;
    int64_t bytes;    /* bytes written; through PROG, the file's once it has ended */
    const char *prog; /* PROG it is written and read through; NULL: none */
    pid_t pid;        /* PROG writing it or PROG -d reading it; 0: none */
} gm_tmpfile;

/* Creates an empty file as spec says, open for writing (through PROG where one
 * is named and can be started). Returns GM_OK, GM_EIO ("cannot create a
 * temporary file in DIR: REASON", or "write failed: FILE: REASON") or GM_ENOMEM. */
int gm_tmpfile_create(gm_tmpfile *t, const gm_tmpspec *spec, gm_status *st);

/* Ends writing bytes bytes, after writes whose outcome was rc (GM_OK, or their
 * error, already in st): the descriptor is closed and PROG waited for. PROG's
 * failure takes the place of a write error (GM_EIO, GM_EPIPE: a write to a PROG
 * that has gone fails so), and a write's GM_EPIPE is GM_EIO here: the pipe was
 * the run's, not the output's. Safe after an earlier end. Returns rc, or GM_EIO
 * ("write failed: FILE: REASON", "'PROG' [-d] terminated abnormally"). */
int gm_tmpfile_end(gm_tmpfile *t, int64_t bytes, int rc, gm_status *st);

/* Opens the written file again by name for reading from its start (through
 * PROG -d); it must be the file written. Returns GM_OK, or GM_EIO ("cannot read:
 * FILE: REASON", "FILE: file changed while reading", "couldn't create process
 * for 'PROG' -d: REASON"). */
int gm_tmpfile_reopen(gm_tmpfile *t, gm_status *st);

/* Ends reading: the descriptor is closed (unless -1: a reader that took it has
 * closed it) and PROG -d waited for. Call it once the reads met the end; after
 * an error, gm_tmpfile_remove. Returns GM_OK, or GM_EIO ("'PROG' [-d] terminated
 * abnormally"). */
int gm_tmpfile_close(gm_tmpfile *t, gm_status *st);

/* Closes and unlinks the file, waiting for its PROG (whose status no longer
 * matters). Safe twice. */
void gm_tmpfile_remove(gm_tmpfile *t);

#endif
