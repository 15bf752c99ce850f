/*
 * report.h - the shape of -v: one fact a line, "KEY VALUE", the key a word in a
 * column of its own so that the values line up and a script finds a fact by its
 * key (awk '$2 == "sort"'). A stage's row gives its wall time in seconds at a
 * fixed width, then what ran beside it:
 *
 *   gpumerge: plan     sort of 1 input, 20.8 MB
 *   gpumerge: engine   cpu (--device=cpu)
 *   gpumerge: read        0.008 s  files read, pipes waited for
 *   gpumerge: sort        0.012 s
 *   gpumerge: total       0.056 s  the stages 0.056 s, the rest 0.000 s
 *
 * The plan comes first (plan.c), then what the run found (keys, runs, the
 * device), then the stages in the order data flows, then the total. The stage
 * rows are the calling thread's, so that they add up to the total but for the
 * rest it names; other threads' work (formatting, write(2), CUDA's start-up)
 * overlaps them and is said in their notes. The GPU is named only by a run that
 * started it.
 */
#ifndef GM_REPORT_H
#define GM_REPORT_H

#include "plan/stats.h"

/* A fact: "KEY VALUE" (printf-style value), under -v. */
void gm_report_fact(const gm_config *cfg, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A stage's row: "STAGE  SECONDS s  NOTE" (note printf-style, or "" for none). */
void gm_report_row(const gm_config *cfg, const char *stage, double seconds,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The runs' fact: "N temporary, P merge passes over them", and with
 * --compress-program ", written through PROG, read through PROG -d". */
void gm_report_runs(const gm_config *cfg, int runs, int passes);

/* Whether this process started CUDA (a GPU run, or auto's start-up begun and
 * ended), so that its start-up and teardown are worth a word. */
int gm_report_gpu_touched(const gm_stream_stats *s);

/* -v's last two rows on every path: "clean-up" (cleanup: inputs closed and
 * buffers freed; teardown: CUDA's end and a replaced output's release, of which
 * the teardown itself took `took` in the background where teardown_begun; CUDA
 * is named where touched) and "total" (since the program's first line) beside
 * stages, the sum of the rows above. */
void gm_report_end(const gm_config *cfg, int touched, int teardown_begun, double cleanup,
                   double teardown, double took, double stages, double total);

/* The integer path's report after a run of op over nins inputs: what it found,
 * then its stages (startup: main's first line to the run; teardown: CUDA's end
 * and a replaced output's release, took: the teardown's own time when begun in
 * the background), then the total since the program's first line. */
void gm_report_stream(const gm_config *cfg, gm_op op, const gm_stream_stats *s, double startup,
                      double teardown, double took, double total);

#endif
