/*
 * recmerge.h - the streaming k-way merge of sorted line sources (inputs or runs)
 * into a sink, and the order check of one source, for the records path.
 *
 * Room merge/, above write/: the records path's streaming k-way merge of sorted
 * sources into a sink, and its order check. It includes the rooms below it
 * only (base/ to write/).
 */
#ifndef GM_RECMERGE_H
#define GM_RECMERGE_H

#include "read/lines.h"
#include "write/recsink.h"

/* The most sources merged at once (the fan-in is kept below it). */
#define GM_MERGE_MAX 1024

/* How the sources are read and checked. */
typedef struct gm_recmerge_opts {
    const gm_keyspec *ks; /* the order of lines (gm_records_merge_opts, recsrc.c) */
    size_t block;     /* bytes read from a source at a time */
    int check_order;  /* a source out of order is an error (inputs, not runs) */
    int nthreads;     /* threads for splitting, checking and each round's parts */
} gm_recmerge_opts;

/* Merges the k sources (opened; read to their ends, not closed) into sink,
 * stably: on equal lines the earlier source comes first, so -u keeps the first
 * in source order. Output begins before the sources end. Returns GM_OK; GM_EINPUT
 * ("FILE:LINE: disorder: TEXT") for a source out of order when checking; errors
 * of reading and of the sink. */
int gm_recmerge(const gm_recmerge_opts *o, gm_lines_src *const *srcs, int k, gm_recsink *sink,
                gm_status *st);

/* Reads src to its end and checks its order (strict: equal keys are a disorder,
 * as -c -u). Returns GM_OK, GM_DISORDER ("FILE:LINE: disorder: TEXT"), or an
 * error of reading. */
int gm_reccheck(const gm_recmerge_opts *o, gm_lines_src *src, int strict, gm_status *st);

#endif
