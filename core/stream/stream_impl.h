/*
 * stream_impl.h - what the rooms of the streaming data plane share (stream.h says
 * how data flows): the run's context and a merge's source, and each room's verbs.
 *
 *   stream.c       the entry: the context, the output, the end
 *   streamopen.c   opening every input, and the read and parse stage of a block
 *   streamgate.c   CUDA's start-up gate
 *   streamround.c  the merge of k sources round by round, the engine's calls
 *   streampass.c   merge passes over runs, batches of inputs, the merge's hand-over
 *   streamsort.c   the sort: chunks, the external sort's spill, the in-memory sort
 *   streamcheck.c  the check
 */
#ifndef GM_STREAM_IMPL_H
#define GM_STREAM_IMPL_H

#include "plan/plan.h"
#include "runs/run.h"
#include "stream/stream.h"

/* One of a merge's k sources; in or run set by streampass.c, the rest by refill
 * (streamround.c). */
struct source {
    gm_input *in;      /* a text input, or */
    gm_runfile *run;   /* a run */
    gm_keybuf kb;      /* its parsed keys not yet merged; refill, consumed by rounds */
    int eof;           /* nothing more to read past kb; refill */
};

/* The run's context: set by stream_init (stream.c) unless said otherwise. */
struct stream {
    const gm_config *cfg;    /* the command line's options */
    gm_plan *plan;           /* the run's plan: budget, threads, chunk sizes */
    gm_tmpspec temps;        /* the runs' folder and PROG (cfg's -T, --compress-program) */
    gm_op op;                /* sort, merge or check */
    int nthreads;            /* plan->threads */
    int64_t mask;            /* -1 with -r, else 0: XORed into keys to compare */
    char *const *names;      /* the input files' names */
    int nnames;              /* how many */
    gm_input *ins;           /* one per name; opened by streamopen.c */
    unsigned char *open, *drained; /* per input: open now, and read whole; streamopen.c */
    gm_writer *w;            /* the output's writer; open_output (stream.c) */
    gm_stream_stats *stats;  /* the caller's timings and counts, added to by every stage */
    /* the GPU's start-up */
    int warm;                /* begun (gm_engine_warm) */
    int device_known;        /* --device=gpu's early check passed (or not a GPU run) */
    int64_t device_cap[2];   /* gm_engine_max_chunk for int32 and int64, once known */
    /* the block whose line declined the integer path (GM_ERECORDS), and its input */
    gm_input *declined;      /* set by gm_stream_read_keys (streamopen.c) */
    gm_block declined_block; /* that block, for the records path; gm_stream_read_keys */
};

/* A stage that takes merged keys: the writer or a run (ctx). */
typedef int (*gm_stream_sink)(struct stream *s, void *ctx, const gm_keys *keys, gm_status *st);

/* streamopen.c */
int gm_stream_open_inputs(struct stream *s, gm_status *st);
int gm_stream_input_open(struct stream *s, int i, size_t block, gm_status *st);
void gm_stream_input_close(struct stream *s, int i);
int gm_stream_read_keys(struct stream *s, gm_input *in, const gm_parse_opts *o, gm_keybuf *kb,
                        gm_status *st);

/* streamgate.c */
int gm_stream_device_check(struct stream *s, int wait, gm_status *st);
void gm_stream_warm_sized(struct stream *s);
void gm_stream_say_plan(struct stream *s);
void gm_stream_say_records(const struct stream *s, const gm_input *in);

/* streamround.c */
int gm_stream_to_writer(struct stream *s, void *ctx, const gm_keys *keys, gm_status *st);
int gm_stream_to_run(struct stream *s, void *ctx, const gm_keys *keys, gm_status *st);
int gm_stream_engine(struct stream *s, gm_op op, gm_keys *keys, void **scratch,
                     const int64_t *offsets, int nruns, gm_status *st);
int gm_stream_merge_sources(struct stream *s, struct source *src, int k, gm_stream_sink sink,
                            void *sink_ctx, gm_status *st);
void gm_stream_free_sources(struct source *src, int k);

/* streampass.c */
int gm_stream_merge_runs(struct stream *s, gm_runfile *runs, int nruns, gm_status *st);
int gm_stream_merge(struct stream *s, gm_status *st);

/* streamsort.c, streamcheck.c */
int gm_stream_sort(struct stream *s, gm_status *st);
int gm_stream_check(struct stream *s, gm_status *st);

#endif
