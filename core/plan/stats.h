/*
 * stats.h - what a run of the integer path did, for -v: the calling thread's
 * time stage by stage, the engine calls by op and device, and the report of the
 * largest call. Below both the streaming data plane (stream.h) and the text path
 * (textsort.h), which fill it, and report.c, which prints it.
 */
#ifndef GM_STATS_H
#define GM_STATS_H

#include "device/engine.h"

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
    int handed_over;      /* the records path took the run over part-way */
} gm_stream_stats;

/* Counts one engine call (n keys of op, its report) in the stats: the calls by op
 * and device, the GPU's times summed, and the report of the largest call kept for
 * the device lines of -v. */
void gm_stream_tally(gm_stream_stats *t, gm_op op, int64_t n, gm_width w,
                     const gm_engine_report *rep);

/* The calling thread's time in the stages so far (their sum). */
double gm_stream_staged(const gm_stream_stats *t);

#endif
