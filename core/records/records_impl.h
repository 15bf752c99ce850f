/*
 * records_impl.h - what records.c (the entry, merge and check) shares with
 * recchunk.c (the sort): the state of one records run and its inputs.
 */
#ifndef GM_RECORDS_IMPL_H
#define GM_RECORDS_IMPL_H

#include "read/lines.h"
#include "write/output.h"
#include "merge/recmerge.h"
#include "write/recsink.h"
#include "base/tmpfile.h"

enum {
    GM_RECORDS_MIN_BLOCK = 64 << 10,
};

struct rec_run {
    const gm_config *cfg;         /* the run's options (rec_init, records.c) */
    gm_tmpspec temps;             /* the runs' folder and PROG (-T, --compress-program) */
    const gm_keyspec *ks;         /* the keys, cfg's keyspec (rec_init) */
    gm_op op;                     /* sort, merge or check (rec_init) */
    int nthreads;                 /* pool threads for splits and sorts (rec_init, the plan's) */
    size_t budget;                /* the memory budget in bytes, -S (rec_init, the plan's) */
    int fan_in;                   /* inputs or runs a merge pass holds open (rec_init) */
    int fds;                      /* descriptors for inputs and runs */
    int output_late;              /* -o's file is created at its first byte (plan.h) */
    char *const *names;           /* the inputs' names as given (rec_init) */
    int nnames;                   /* how many (rec_init) */
    const int64_t *ranges;        /* source i is [ranges[2 i], ranges[2 i + 1]) of its
                                   * file when ranges[2 i + 1] >= 0 (gm_config's) */
    gm_lines_src *srcs;           /* the inputs, nnames of them (gm_records_src_open, recsrc.c) */
    unsigned char *open, *drained; /* per input: open now; read already (recsrc.c, records.c) */
    char **spooled;               /* temporary copies of inputs that are the output */
    gm_recsink *out;              /* the output's sink for one call, else NULL (records.c) */
    int runs, passes;             /* for -v: */
    double read, split, sort, write; /* seconds in the stages of a sort: reading,
                                  * splitting, sorting, writing a chunk alone */
    double spill, merge;          /* writing runs, merging them into the output */
    double open_s;                /* opening the inputs and the output */
    uint64_t in_bytes;            /* the regular inputs' bytes (0: none or unknown) */
    int gpu;                      /* the sort keeps chunks as text for the GPU (recchunk.c) */
    int gpu_chunks;               /* for -v: chunks sorted on the GPU, */
    int gpu_resident;             /* or the whole text in device memory (recdev.c) */
    double gpu_device, gpu_ties;  /* seconds in the device's calls and the ties after */
    double gpu_h2d, gpu_kernel, gpu_d2h; /* within the calls: copies and kernels */
    int gpu_said;                 /* -v has said why a chunk went to the CPU */
};

/* Input i, opened again when it was closed to spare descriptors (or the first
 * time). Returns GM_OK or GM_EIO. */
int gm_records_src_open(struct rec_run *r, int i, gm_status *st);

/* Closes input i; it reads nothing if opened again. */
void gm_records_src_close(struct rec_run *r, int i);

/* How k sources are read in a merge (check: inputs checked in order). */
gm_recmerge_opts gm_records_merge_opts(const struct rec_run *r, int k, int check);

size_t gm_records_clamp(size_t v, size_t lo, size_t hi);

/* The bytes of each of a sink's two buffers: a sixteenth of the budget, from
 * 64 KiB to 4 MiB. */
static inline size_t gm_records_out_buffer(size_t budget)
{
    return gm_records_clamp(budget / 16, 64 << 10, 4 << 20);
}

/* What the chunk sort holds for bytes of text and lines lines: the text and its
 * records, twice the records where the sort is stable (-s, -u: a scratch array).
 * Beyond the budget, the chunk sort writes runs. */
static inline uint64_t gm_records_chunk_memory(const gm_keyspec *ks, uint64_t bytes,
                                               uint64_t lines)
{
    return bytes + (ks->stable || ks->unique ? 2 : 1) * lines * sizeof(gm_rec);
}

/* Opens every input (recsrc.c) before any output; *bytes: the regular inputs'
 * sizes, which bound the output. Returns GM_OK or GM_EIO. */
int gm_records_open_inputs(struct rec_run *r, uint64_t *bytes, gm_status *st);

/* An output written in place that is also an input of a merge: that input is
 * copied to a temporary file first. Returns GM_OK, GM_EIO or GM_ENOMEM. */
int gm_records_spool_aliases(struct rec_run *r, const gm_output *out, gm_status *st);

/* The sort: reads every input, sorts, and writes into r->out. Returns as
 * gm_records_run. */
int gm_records_sort(struct rec_run *r, gm_status *st);

/* Whether the run's CUDA context goes once its device work is done (the run
 * used the GPU and is the process's last), in the background beside the output's
 * finish (recchunk.c). */
static inline int gm_records_releases_device(const struct rec_run *r)
{
    return (r->gpu_chunks || r->gpu_resident) && r->cfg->last;
}

#endif
