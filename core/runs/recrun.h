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

#include "merge/recmerge.h"
#include "base/tmpfile.h"

/* A run of lines is a temporary file of them (tmpfile.h: created, ended, opened
 * again by name, removed). */
typedef gm_tmpfile gm_recrun;

/* Writes the n sorted records as a new run (-u applied when unique), ready to be
 * read from its start, as temps says (its folder, and PROG to write it through),
 * through buffers of buffer bytes (0: the default). Returns GM_OK, GM_EIO or
 * GM_ENOMEM. */
int gm_recrun_write(const gm_keyspec *ks, const gm_rec *r, size_t n, int unique,
                    const gm_tmpspec *temps, int nthreads, size_t buffer, gm_recrun *run,
                    gm_status *st);

/* Merges the runs into out, fan_in at a time: while there are more, groups of
 * fan_in are merged into new runs as temps says (-u applied when unique). Every run is
 * removed, also on error. passes counts the passes. Returns GM_OK or an error of
 * reading, writing or the sink. */
int gm_recrun_merge(const gm_recmerge_opts *o, gm_recrun *runs, int nruns, int fan_in,
                    const gm_tmpspec *temps, int unique, gm_recsink *out, int *passes,
                    gm_status *st);

#endif
