/*
 * plan.h - the run's numbers, computed once before any work from the
 * configuration (-S, --parallel, --batch-size, --device) and the machine (cores,
 * memory limits, descriptors free), then completed by what opening the inputs
 * tells (their sizes, the pipes among them). Every stage reads its sizes here:
 * the threads, the memory budget and its shares (sort chunks, merge rounds, the
 * writer, blocks), the fan-in, the text path's limit, and the records path's
 * threads, budget and fan-in. -v prints it first (gm_plan_say).
 *
 * The budget is GNU sort's default_sort_size (coreutils sort.c) unless -S sets
 * it; the fan-in is sort's NMERGE (--batch-size), bounded by RLIMIT_NOFILE less
 * what a pass writes to, so that a merge needs no more descriptors than sort's:
 * under ulimit -n 6, two inputs and a run, or two and the output.
 *
 * Room plan/, above device/: the run's numbers before any work (budget,
 * threads, fan-in, descriptors), what it did (stats.h) and -v's report of both
 * (report.h). It includes the rooms below it only (base/ to device/).
 */
#ifndef GM_PLAN_H
#define GM_PLAN_H

#include "base/config.h"

typedef struct gm_plan {
    gm_op op;               /* the work planned: merge, sort or check (gm_plan_make) */
    int ninputs;            /* the input names given (gm_plan_make's nnames) */
    int threads;            /* the integer path's: --parallel or the cores, as many
                             * as the budget's share pays the stacks of */
    size_t budget;          /* bytes (-S, or gm_default_budget) */
    size_t writer_mem;      /* the writer's share of the budget (gm_writer.mem) */
    int fan_in;             /* inputs or runs merged at once: --batch-size, else as
                               many as the memory and the descriptors free allow */
    int fds;                /* descriptors for inputs and runs, less CUDA's start-up
                             * where it may start */
    int output_late;        /* -o's replacement or spool is created when its first
                             * byte is due (descriptors are short), not at the start */
    size_t merge_mem;       /* a merge round's buffers, every input's together */
    size_t merge_block;     /* the text block of a merged input */
    int64_t run_read_keys;  /* keys read from a run at a time */
    size_t sort_block;      /* the text block of a sort or a check */
    int64_t chunk_keys[2];  /* keys in one sorted chunk, int32 and int64 */
    uint64_t text_limit;    /* the text path takes inputs of at most this many bytes */
    int read_ahead;         /* a merge's inputs are read ahead on threads of their own */
    /* what opening the inputs tells (gm_plan_inputs) */
    int64_t total_bytes;    /* the inputs' bytes from their offsets; -1: not known */
    uint64_t regular_bytes; /* the regular files' (+ 1 each), which bound the output */
    int streams;            /* pipes and devices past the first pass, held open */
    /* what -v's plan says beside the numbers (gm_plan_say) */
    const char *path;       /* the path and why: "integer keys (...)", "records (...)" */
    char engine[160];       /* the engine and why: "cpu (--device=cpu)" */
    int gpu;                /* a GPU may take the work: CUDA's start-up is begun */
    /* the records path's */
    struct {
        int threads;        /* --parallel or the cores */
        int fan_in;         /* the fan-in, at most GM_MERGE_MAX */
        int fds;            /* descriptors for inputs and runs */
    } records;
} gm_plan;

/* The machine's physical memory in bytes (0 where it cannot be known). */
uint64_t gm_physical_memory(void);

/* The default memory budget, as GNU sort's default_sort_size: half the smaller of
 * RLIMIT_DATA and RLIMIT_AS, at most 15/16 of RLIMIT_RSS, at most three quarters
 * of the physical memory, and at most the available physical memory (or an eighth
 * of the total, whichever is more). */
size_t gm_default_budget(void);

/* How many times a block and a merge's buffers grow with nthreads threads: once
 * per two threads, up to eight times. */
size_t gm_plan_thread_scale(int nthreads);

/* Keys of the given width in one sorted chunk under this budget (the runs of the
 * external sort hold this many keys, the last one fewer). */
int64_t gm_sort_chunk_keys(size_t budget, gm_width width);

/* The plan of op over nnames inputs under cfg, from the configuration and the
 * machine (the descriptors free now). Cannot fail. */
void gm_plan_make(gm_plan *p, gm_op op, const gm_config *cfg, int nnames);

/* What opening the inputs told: total bytes (-1: a pipe among them), the regular
 * files' bytes, and the streams held open past the first pass, which take their
 * descriptors from every pass (the fan-in shrinks by as many, to 2 at least). */
void gm_plan_inputs(gm_plan *p, int64_t total_bytes, uint64_t regular_bytes, int streams);

/* -v's plan, one fact a line (report.h): the work and its inputs' size, the path,
 * the engine, the threads, the budget and its shares, the fan-in; records: the
 * records path's. */
void gm_plan_say(const gm_plan *p, const gm_config *cfg, int records);

/* bytes in binary units, as -S reads them (K = 1024), into buf. */
const char *gm_plan_bytes(double bytes, char *buf, size_t size);

#endif
