/*
 * stream.h - the streaming data plane: merge, sort and check as stages that pass
 * bounded chunks, in memory set by a budget (-S), not by the inputs' size.
 *
 *   read (input.c: two text blocks per input; parallel preads for a file, or a
 *         reader thread on four cores or more; a reader thread for a pipe)
 *     -> parse (input.c: each block on all cores, into a key buffer)
 *     -> engine (engine.c: each chunk merged or sorted on the CPU or the GPU)
 *     -> write (output.c: each chunk formatted on all cores and written in order)
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
 * the budget may instead go to the GPU as text (textsort.h), which parses, sorts
 * and formats them there; a line it declines brings the sort back here.
 *
 * Every stage's buffers come from gm_buf_alloc (util.h), chunks go to the engine
 * one at a time (gm_engine_run), and each stage's time is measured around one call
 * here, inside an NVTX range of its name (gm_trace_push), which is where
 * device-side hooks (pinned staging, overlapped copies) go.
 *
 * The GPU's start-up: --device=gpu begins it (gm_engine_warm) before the inputs
 * are opened; auto once their size (or for a pipe's sort the keys read so far)
 * makes the largest engine call a candidate for the GPU. --device=gpu's early
 * failure is the start-up's result, asked after every block without waiting, and
 * waited for before the first engine call, the first output byte and the end.
 */
#ifndef GM_STREAM_H
#define GM_STREAM_H

#include "engine.h"
#include "input.h"
#include "output.h"

/* What a run did, for -v. The seconds are the calling thread's, stage by stage,
 * so that they add up to the time of gm_stream_run; what other threads did
 * meanwhile (CUDA's start-up, a reader's read-ahead, the writer thread's write(2),
 * the pool's formatting) overlaps them and is counted apart. */
typedef struct gm_stream_stats {
    size_t budget;        /* bytes */
    int threads;          /* the threads the budget allows */
    double open;          /* opening the inputs and the output, and the set-up */
    double read;          /* reading a block, or waiting for a reader's */
    double parse, engine; /* engine: the calls less their waits for CUDA's start-up */
    double startup_wait;  /* waiting for CUDA's start-up */
    double spill;         /* writing and reading temporary runs */
    double write;         /* handing chunks to the writer (formatting and writing) */
    double finish;        /* the writer's last blocks, the output's close and rename */
    double cleanup;       /* closing the inputs, freeing the buffers */
    double format;        /* formatting, per thread (inside write and finish) */
    double write_syscalls;/* inside write(2), on whichever thread; through the mapping:
                           * inside fallocate, mmap and munmap */
    double ahead;         /* reserving the output's space ahead, on a thread of its own */
    int touchers;         /* threads faulting its pages in behind it */
    int mapped;           /* the output went through the writer's shared mapping */
    int teardown_begun;   /* CUDA's teardown began before the output's finish */
    int runs;             /* sorted runs spilled (sort chunks, merge batches) */
    int passes;           /* merge passes over them (the last into the output) */
    int64_t keys;         /* keys read */
    gm_width width;       /* widest chunk */
    int used_engine;
    int calls[2][2];      /* engine calls: [sort, merge][cpu, gpu] */
    double h2d, kernel_s, d2h; /* the GPU's copies and kernels, over all its calls */
    gm_engine_report rep; /* the largest call's (most keys): the device that did the
                             bulk of the work, and why */
    int64_t rep_keys;     /* its keys */
    int restart_records;  /* GM_ERECORDS before anything was read: the records path
                             runs from the start */
    int handed_over;      /* the records path took the run over part-way */
} gm_stream_stats;

/* Counts one engine call (n keys of op, its report) in the stats: the calls by op
 * and device, the GPU's times summed, and the report of the largest call kept for
 * the plan and device lines of -v. */
void gm_stream_tally(gm_stream_stats *t, gm_op op, int64_t n, gm_width w,
                     const gm_engine_report *rep);

/* The default memory budget, as GNU sort's default_sort_size: half the smaller of
 * RLIMIT_DATA and RLIMIT_AS, at most 15/16 of RLIMIT_RSS, at most three quarters
 * of the physical memory, and at most the available physical memory (or an eighth
 * of the total, whichever is more). */
size_t gm_default_budget(void);

/* Keys of the given width in one sorted chunk under this budget (the runs of the
 * external sort hold this many keys, the last one fewer). For the tests. */
int64_t gm_sort_chunk_keys(size_t budget, gm_width width);

/* Runs op over the named inputs: opens them all (a missing one stops the run
 * before anything is written), opens cfg->output, streams, and commits the output
 * (or abandons it on error). Returns as gm_run (gm.h). */
int gm_stream_run(gm_op op, const gm_config *cfg, char *const *names, int nnames,
                  gm_stream_stats *stats, gm_status *st);

#endif
