/*
 * handover.h - the integer path giving a run to the records path where a line
 * that is not a canonical integer declines it (handover.c says how).
 */
#ifndef GM_HANDOVER_H
#define GM_HANDOVER_H

#include "read/input.h"
#include "write/output.h"
#include "runs/run.h"

/* A sort declined by block b of ins[at]: kb and the runs hold every key parsed
 * before it; the inputs after it are open where open[i] says so (and not yet
 * read), else named. The records path sorts them all into w. Returns as
 * gm_records_continue. The caller still removes the runs and closes the inputs. */
int gm_handover_sort(const gm_config *cfg, gm_input *ins, const unsigned char *open,
                     char *const *names, int nnames, int at, const gm_block *b,
                     gm_keybuf *kb, gm_runfile *runs, int nruns, gm_writer *w,
                     gm_status *st);

/* The whole run, before any input is read: the inputs open where open[i] says
 * so (their descriptors go along, so that a pipe keeps its bytes), else named.
 * The records path runs op into w (NULL for check). */
int gm_handover_start(const gm_config *cfg, gm_op op, gm_input *ins, const unsigned char *open,
                      char *const *names, int nnames, gm_writer *w, gm_status *st);

/* A merge of the n inputs ins[i] with their buffered keys kbs[i] (not yet
 * written), declined by block b of ins[at]: the records merge goes on into w. */
int gm_handover_merge(const gm_config *cfg, gm_input *const *ins, gm_keybuf *const *kbs,
                      int n, int at, const gm_block *b, gm_writer *w, gm_status *st);

/* A check of in declined by its block b: the records check goes on from in's
 * last line. */
int gm_handover_check(const gm_config *cfg, gm_input *in, const gm_block *b, gm_status *st);

#endif
