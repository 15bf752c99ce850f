/*
 * progress.h - --progress: what a run has done so far, counted by whichever
 * thread does it (relaxed atomic counters: the inputs' bytes read, the inputs'
 * bytes whose chunk is sorted, the output's bytes written, the temporary runs'
 * bytes written and read back by a merge), and one reporter thread that reads
 * them four times a second and says a line when they moved: the stage, the
 * share done, the rate and the time left. The last line ("done", 100%) is said
 * when the run ends well. The counters are the process's: one run reports at a
 * time (gm_run runs one at a time).
 *
 * The share done is the work done over the work planned, in bytes: a sort reads,
 * sorts and writes the inputs' bytes (three times their size), a merge reads and
 * writes them, a check reads them; temporary runs add their bytes written and
 * read back again, foreseen while chunks are still sorted at the run bytes each
 * sorted byte made so far. The time left is the time so far scaled by the share
 * left, as pv(1) estimates its ETA.
 */
#ifndef GM_PROGRESS_H
#define GM_PROGRESS_H

#include <stdint.h>

#include "base/config.h"

/* Begins a run's progress under cfg (nothing without --progress): the counters
 * set to zero, the reporter thread started. */
void gm_progress_begin(const gm_config *cfg, gm_op op);

/* The inputs' bytes from their offsets, once opened (-1: a pipe among them). */
void gm_progress_total(int64_t bytes);

/* Counted by the threads that do the work. */
void gm_progress_read(int64_t bytes);     /* an input's bytes read (not a run's); a
                                           * negative count takes back bytes that
                                           * are read again */
void gm_progress_read_done(void);         /* every input read (a sort sorts next) */
void gm_progress_sorted(int64_t bytes);   /* inputs' bytes whose chunk's sort returned */
void gm_progress_sorted_once(int64_t *bytes); /* *bytes as sorted, then 0: a GPU sort's
                                           * text at its first sorted piece or its end */
void gm_progress_written(int64_t bytes);  /* the output's bytes written */
void gm_progress_run_written(void);       /* a temporary run begun */
void gm_progress_run_bytes(int64_t bytes); /* a temporary run's bytes written */
void gm_progress_run_read(int64_t bytes); /* a temporary run's bytes read back by a merge */
void gm_progress_runs_merged(int runs);   /* temporary runs taken into a merge */

/* Ends the run's progress: the reporter stopped and, when ok, the last line. */
void gm_progress_end(int ok);

/* Tests only (tests/gpumerge_forced.c): the reporter's period in milliseconds,
 * so that a short run says many lines. */
void gm_progress_test_tick(int ms);

#endif
