/*
 * textsort.h - the sort's text path: when every input is a regular file and the
 * whole text fits the plan's text limit (half the memory budget), and the engine sends the sort to the GPU, the
 * files' bytes go to the device as they are, which parses, sorts and formats them
 * (cuda/text.cu), and the formatted text comes back to the writer. The host reads
 * and writes bytes only.
 */
#ifndef GM_TEXTSORT_H
#define GM_TEXTSORT_H

#include "read/input.h"
#include "write/output.h"
#include "plan/plan.h"
#include "plan/stats.h"

/* Sorts the nins open inputs (at their current offsets) into w by the text path.
 * Returns GM_OK; GM_ETEXT when the path is not taken or declines the input (not
 * all regular files, too large for the budget or the device, a line the device's
 * parser does not take, auto's cost model or fallback): nothing has been written
 * and every input's offset is where it was, so the caller runs the streaming sort,
 * which names any bad line; or an error: "FILE: file changed while reading",
 * a read or write error, and with --device=gpu a CUDA error. */
int gm_text_sort(const gm_config *cfg, const gm_plan *plan, gm_input *ins, int nins,
                 gm_writer *w, gm_stream_stats *stats, gm_status *st);

#endif
