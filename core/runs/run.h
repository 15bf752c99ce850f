/*
 * run.h - sorted runs on disk: the temporary files of the external sort and of a
 * merge of more inputs than can be opened at once.
 *
 * A run is a file in -T DIR / $TMPDIR / /tmp (core/base/cleanup.h creates and registers
 * it, so it is removed on success, on error and on every catchable signal) holding
 * keys in binary, as a sequence of segments: a 16-byte header (key count, key width
 * 4 or 8) and the keys. Each segment has the width of the chunk that wrote it, so
 * an int32 run stays compact and a run can turn int64 half-way (a wide key in a
 * late block) without rewriting what came before.
 *
 * Room runs/, above merge/: sorted runs in temporary files, the integer path's
 * (run.h) and the records path's with their merge in passes (recrun.h). It
 * includes the rooms below it only (base/ to merge/).
 */
#ifndef GM_RUN_H
#define GM_RUN_H

#include <sys/types.h>

#include "read/input.h"
#include "base/tmpfile.h"

typedef struct gm_runfile {
    gm_tmpfile f;     /* the file, its name, descriptor and bytes written */
    int64_t keys;     /* keys written */
    /* reading */
    int64_t seg_left; /* keys left in the current segment */
    gm_width seg_width; /* the current segment's key width, from its header (gm_run_read) */
    int eof;          /* every key has been read (gm_run_rewind, end_of_run in run.c) */
} gm_runfile;

/* Creates an empty run as spec says (its folder, and PROG to write it through).
 * Returns GM_OK or GM_EIO ("cannot create a temporary file in DIR: REASON"). */
int gm_run_create(gm_runfile *r, const gm_tmpspec *spec, gm_status *st);

/* Appends the keys as one segment. Returns GM_OK or GM_EIO
 * ("write failed: TMPFILE: REASON", or PROG's failure: the run is then ended). */
int gm_run_put(gm_runfile *r, const gm_keys *keys, gm_status *st);

/* Ends writing: closes the run's descriptor (a written run holds none, so the
 * number of runs is not bounded by RLIMIT_NOFILE), and makes the next read start
 * from the first key. Returns GM_OK or GM_EIO ("write failed: TMPFILE: REASON",
 * "'PROG' [-d] terminated abnormally"). */
int gm_run_rewind(gm_runfile *r, gm_status *st);

/* Appends up to max keys to kb (sets r->eof after the last). The first read
 * opens the file again by name, and the read that reaches the end closes it, so
 * a run holds a descriptor only while a merge reads it. Returns GM_OK, GM_EIO
 * ("cannot read: TMPFILE: REASON", or "TMPFILE: file changed while reading" when
 * the name leads to another file or the size differs; through PROG -d, its
 * failure) or GM_ENOMEM. */
int gm_run_read(gm_runfile *r, gm_keybuf *kb, int64_t max, gm_status *st);

/* Closes and unlinks the run. Safe to call twice. */
void gm_run_remove(gm_runfile *r);

#endif
