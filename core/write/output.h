/*
 * output.h - the output stage: gm_writer formats sorted keys as text on all cores,
 * or takes text already formatted, and writes it in order with few system calls,
 * to standard output or to the file named by -o (gm_output; core/write/outfile.h:
 * replaced by a rename where that is safe, else spooled and copied into the
 * target once every input is read).
 *
 * A gm_writer takes the sorted keys chunk by chunk (gm_writer_put) and keeps -u's
 * last key across chunks, so a merge writes its output as it goes and memory
 * stays bounded by a chunk. Its rooms, in the order the data goes: format.c (keys
 * as decimal text), wq.c (the ordered write queue and its buffer pool, for
 * write(2)), reserve.c and mapwrite.c (a regular -o file on four threads or more
 * is written through a shared mapping of space reserved first with fallocate,
 * and can be reserved ahead: gm_writer_ahead), writer.c (this API). Standard
 * output is always written with write(2).
 *
 * Room write/, above sort/: the output: keys formatted as text, the ordered
 * write queue, the mapping writer and its space reserved ahead, the -o file's
 * rules (outfile.h), this front (gm_writer, gm_output) and the records' sink
 * (recsink.h). It includes the rooms below it only (base/ to sort/).
 */
#ifndef GM_OUTPUT_H
#define GM_OUTPUT_H

#include "write/format.h"
#include "base/config.h"
#include "base/progress.h"
#include "write/outfile.h"

typedef struct gm_output {
    char shown[512]; /* "standard output" or the quoted file name */
    int fd;          /* where gm_output_write writes */
    gm_outfile file; /* -o's target, temporary file and way of writing */
} gm_output;

/* Prepares the output (gm_outfile_plan, then gm_outfile_open): standard output
 * when path is NULL, else path's file opened for writing before any input is read.
 * expect_bytes bounds the output's size (0: unknown); an output written in place
 * is spooled in tmpdir (NULL: $TMPDIR, else /tmp; it must outlive out). With
 * late set, the replacement or the spool is created only when the writer's
 * first byte is due, or at the commit (gm_outfile_open_late): out->fd is then -1
 * and the writer's fd is set then, so that a merge's passes before it have that
 * descriptor. Returns GM_OK, GM_EIO ("open failed: FILE: REASON", or "cannot
 * create a temporary file in DIR: REASON") or GM_ENOMEM. */
int gm_output_open_sized(gm_output *out, const char *path, uint64_t expect_bytes,
                         const char *tmpdir, int late, gm_status *st);

/* gm_output_open_sized with the size unknown and the default temporary folder. */
int gm_output_open(gm_output *out, const char *path, gm_status *st);

/* Whether the open file fd (an input) is the output's file itself. */
int gm_output_is_input(const gm_output *out, int input_fd);

/* Where the time of gm_output_write went, in seconds. */
typedef struct gm_output_stats {
    double format_cpu; /* formatting, summed over threads */
    double write;      /* inside write(2) */
    double ahead;      /* inside fallocate, reserving ahead on a thread of its own */
    int touchers;      /* threads faulting the reserved pages in behind it */
} gm_output_stats;

/* Formats keys (canonical decimal, one per line; with unique, the first of each
 * run of equal keys only) on nthreads threads and writes them in order. Returns
 * GM_OK, GM_EPIPE when the reader has gone, GM_EIO ("write failed: FILE: REASON")
 * or GM_ENOMEM. */
int gm_output_write(gm_output *out, const gm_keys *keys, int unique, int nthreads,
                    gm_output_stats *stats, gm_status *st);

struct gm_wq;

/* The streaming writer over an opened output. */
typedef struct gm_writer {
    gm_outfile *file;    /* -o's target and the file written: the output's way of writing */
    int fd;              /* the descriptor written (gm_writer_init; gm_writer_ready once created) */
    const char *shown;   /* the written file's quoted name, for errors (gm_writer_init) */
    int unique;          /* drop a key equal to the one written before it */
    char eol;            /* what ends a line: '\n' (gm_writer_init), or '\0' for -z */
    int nthreads;        /* threads formatting and filling the output (gm_writer_init) */
    size_t mem;          /* bytes the block buffers of write(2) may take, 0: no limit
                          * (the caller sets it after gm_writer_init) */
    int have_last;       /* last holds a key: a chunk is out (chunk_done in writer.c) */
    int64_t last;        /* the last key written (for -u across chunks) */
    int64_t keys;        /* keys handed in so far */
    int64_t bytes;       /* bytes written so far */
    gm_output_stats stats; /* time formatting, writing and reserving (writer.c, mapwrite.c) */
    struct gm_wq *q;     /* the block buffers and the write errors, once started */
    int begun;           /* the first byte was due (the way of writing chosen) */
    int map;             /* writing through a shared mapping (mapwrite.c), not write(2) */
    int extended;        /* the mapping's fallocate extended the file */
    int64_t reserved_end;/* the file's space is reserved up to here (gm_writer_ahead) */
    int scratch;         /* a temporary run's file, not the output: --progress counts
                          * its bytes as a run's (the caller sets it after
                          * gm_writer_init) */
    struct gm_ahead *ahead; /* reserving ahead, while it runs */
} gm_writer;

void gm_writer_init(gm_writer *w, gm_output *out, int unique, int nthreads);

/* Formats and writes one chunk of keys, in order after the previous chunks.
 * Returns as gm_output_write. */
int gm_writer_put(gm_writer *w, const gm_keys *keys, gm_status *st);

/* Writes len bytes of text already formatted as gm_writer_put formats keys (whole
 * lines ending with the writer's eol, -u already applied) in order after the
 * previous chunks; the GPU's formatter hands its output here. The writer's -u
 * memory of the last key is not updated: text and keys are not mixed in one
 * output. Returns as gm_output_write. */
int gm_writer_put_text(gm_writer *w, const char *text, size_t len, gm_status *st);

/* Counts bytes written by w for --progress: a run's where w writes a temporary
 * run (scratch), else the output's. */
static inline void gm_writer_progress(const gm_writer *w, int64_t bytes)
{
    (w->scratch ? gm_progress_run_bytes : gm_progress_written)(bytes);
}

/* Fills the next len bytes of output in place, where the output goes through
 * the writer's mapping: piece p of the npieces covers [at[p], at[p + 1]) and is
 * written by fill(ctx, p, dst), dst its first byte, on the writer's threads, once
 * its space is reserved (the records' gather writes its lines straight into the
 * file's pages). Elsewhere the pieces are filled into a buffer and written. Whole
 * lines, in order after the previous output, as gm_writer_put_text's text.
 * Returns as gm_writer_put_text. */
typedef void (*gm_fill_fn)(void *ctx, int piece, char *dst);
int gm_writer_put_pieces(gm_writer *w, size_t len, int npieces, const size_t *at,
                         gm_fill_fn fill, void *ctx, gm_status *st);

/* Creates the output's file where its opening was put off (gm_output_open_sized
 * with late), and takes its descriptor; the writing calls it before its first
 * byte. Returns GM_OK, or gm_outfile_open's error. */
int gm_writer_ready(gm_writer *w, gm_status *st);

/* Whether the writer's output goes through its mapping (choosing the way of
 * writing when the first byte is due; 0 while its file is still to be created:
 * gm_writer_ready first). */
int gm_writer_mapped(gm_writer *w);

/* Reserves the space of the next bytes of output ahead of what will fill it,
 * where the output goes through the mapping into a temporary file (the
 * replacement, or the spool of an output written in place; nothing is done for
 * other outputs): fallocate on a thread of its own, and touchers threads faulting the pages
 * into one mapping behind it, while the caller goes on reading, parsing and
 * sorting (the GPU's text path: reading and waiting for CUDA). What is written
 * next lands in those pages. A reservation that fails is not an error (the output
 * may need less; the writing reserves as it goes, and reports a full file system
 * then). Where one already runs, it only gains touchers. Nothing is done under a
 * limit on the address space (ulimit -v), which the mapping would eat into.
 * Returns GM_OK: nothing here is an error (st is not written). */
int gm_writer_ahead(gm_writer *w, uint64_t bytes, int touchers, gm_status *st);

/* The same for an output whose length is learnt as the input is read (a pipe):
 * gm_writer_ahead_open maps room for at most most bytes and reserves nothing yet;
 * each gm_writer_ahead_grow lets the reservation reach bytes, the last one with
 * final set (a reservation made final does not grow). */
int gm_writer_ahead_open(gm_writer *w, uint64_t most, int touchers, gm_status *st);
void gm_writer_ahead_grow(gm_writer *w, uint64_t bytes, int final);

/* For an output written with write(2) (fewer threads than the mapping takes):
 * the space of the next bytes reserved by fallocate on a thread of its own, from
 * where the output is, while the caller goes on (the records path: sorting), so
 * that the writes find the file's pages allocated (on tmpfs the allocation is
 * most of a write's cost) instead of allocating them one by one on the single
 * thread that writes. As gm_writer_ahead: only a temporary file, never an error,
 * ended by gm_writer_finish (the file then ends where the output does); nothing
 * on one thread. */
void gm_writer_reserve_ahead(gm_writer *w, uint64_t bytes);

/* Ends the reserving ahead (its threads stopped and joined): for a caller that
 * hands the writer keys instead of the text it reserved for. What was reserved
 * stays reserved. gm_writer_finish ends it too. */
void gm_writer_ahead_end(gm_writer *w);

/* Releases the writer's buffers and adds its write time to the stats. Call it
 * before gm_output_commit (and after an error). Returns GM_OK, or the first write
 * error: GM_EPIPE or GM_EIO ("write failed: FILE: REASON"). */
int gm_writer_finish(gm_writer *w, gm_status *st);

/* Finishes the output (gm_outfile_commit): closes it and renames the temporary
 * file over the target. Returns GM_OK or GM_EIO. After an error the temporary file
 * is removed. */
int gm_output_commit(gm_output *out, gm_status *st);

/* Abandons the output (gm_outfile_abort): removes the temporary file, if any.
 * Safe after commit. */
void gm_output_abort(gm_output *out);

/* For the tests only: how a regular -o file is written. 0: through a shared
 * mapping when the writer has four threads or more, else with write(2) (the
 * default); 1: through the mapping at any thread count; -1: with write(2); 2: as
 * 1, with fallocate answering EOPNOTSUPP, so that the fall-back to write(2) runs. */
void gm_output_test_map(int mode);

#endif
