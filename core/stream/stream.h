/*
 * stream.h - the streaming data plane: merge, sort and check as stages that pass
 * bounded chunks, in memory set by a budget (-S), not by the inputs' size.
 *
 *   read (reader.c: two text blocks per input; parallel preads for a file, or a
 *         reader thread on four cores or more; a reader thread for a pipe)
 *     -> parse (input.c, parse.c: each block on all cores, into a key buffer)
 *     -> engine (engine.c: each chunk merged or sorted on the CPU or the GPU)
 *     -> write (writer.c: each chunk formatted on all cores and written in order)
 *        or spill (run.c: a sorted run into a temporary file)
 *
 * merge: every input keeps a buffer of parsed keys. Each round the bound is the
 * smallest (largest with -r) last buffered key among the inputs not at their end;
 * every input's prefix up to the bound is merged (k-way, by the engine's co-rank
 * partitioned merge) and written, and the inputs whose buffers emptied (the one
 * that set the bound among them) are refilled with their next block. Output starts
 * with the first round, inputs that never end work, memory is a few blocks per
 * input. More inputs than the fan-in (--batch-size, default 16, and what
 * RLIMIT_NOFILE allows beside the descriptors open) are merged in batches into
 * temporary runs first, as sort -m does, and the runs are merged after; only the
 * inputs and runs of the pass being merged hold descriptors.
 *
 * sort: parsed keys fill a chunk as large as the budget allows; a full chunk is
 * sorted by the engine and written as a run; at the end the runs are merged k-way
 * with the fan-in (more passes when there are more runs), the last pass streamed
 * to the output, as GNU sort does. Input that fits in one chunk never touches a
 * temporary file: it is sorted in memory and written. Regular files whose text fits
 * the plan's text limit may instead go to the GPU as text (textsort.h), which parses, sorts
 * and formats them there; a line it declines brings the sort back here.
 *
 * Every stage's buffers come from gm_buf_alloc (util.h), chunks go to the engine
 * one at a time (gm_engine_run), and each stage's time is measured around one call
 * here, inside an NVTX range of its name (gm_trace_push), which is where
 * device-side hooks (pinned staging, overlapped copies) go. Every size (blocks,
 * chunks, rounds, fan-in, threads) comes from the run's plan (plan.h); the rooms
 * are listed in stream_impl.h.
 *
 * The GPU's start-up: --device=gpu begins it (gm_engine_warm) before the inputs
 * are opened; auto once their size (or for a pipe's sort the keys read so far)
 * makes the largest engine call a candidate for the GPU. --device=gpu's early
 * failure is the start-up's result, asked after every block without waiting, and
 * waited for before the first engine call, the first output byte and the end.
 *
 * Room stream/, above records/: the integer path's streaming data plane
 * (stream_impl.h: the rooms of its merge, sort and check), its text path
 * (textsort.h) and its hand-over to the records path (handover.h). It includes
 * the rooms below it only (base/ to records/); the GPU through device/'s door.
 */
#ifndef GM_STREAM_H
#define GM_STREAM_H

#include "device/engine.h"
#include "read/input.h"
#include "write/output.h"
#include "plan/plan.h"
#include "plan/stats.h"

/* Runs op over the named inputs as the plan (gm_plan_make) says: opens them all
 * (a missing one stops the run before anything is written), completes the plan
 * with what they tell (gm_plan_inputs) and says it under -v, opens cfg->output,
 * streams, and commits the output (or abandons it on error). Returns as gm_run
 * (gm.h). */
int gm_stream_run(gm_op op, const gm_config *cfg, gm_plan *plan, char *const *names,
                  int nnames, gm_stream_stats *stats, gm_status *st);

#endif
