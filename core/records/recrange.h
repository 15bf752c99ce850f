/*
 * recrange.h - the records sort in device memory for a text larger than the
 * device holds (recrange.c): the lines sorted range by range of their first key's
 * prefix, the inputs read again for each range.
 */
#ifndef GM_RECRANGE_H
#define GM_RECRANGE_H

#include "records/recspan.h"

/* Sorts the spans' text (bytes in all) into r->out on the GPU, one range of
 * prefixes at a time. Returns GM_OK; GM_ETEXT before any output where it does not
 * (a range of one prefix too large for the device, -u whose equal keys the device
 * cannot tell, more ranges than are worth the reads, the first range declined);
 * or the error that ended it, *written saying whether output had been handed out
 * (then a range the device declines is an error too). ps: nspans + 1 entries of
 * scratch. */
int gm_records_ranges(struct rec_run *r, const gm_span *spans, int nspans, uint64_t bytes,
                      gm_pread_span *ps, uint64_t *written, gm_status *st);

#endif
