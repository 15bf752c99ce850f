/*
 * records.h - the records path: merge, sort and check of any lines by the order
 * of a gm_keyspec (keys.h), each line written back with its own bytes.
 *
 * A record is a line's first-key prefix (gm_line_prefix) and a reference to the
 * line's bytes in an input block; blocks stay alive while records point into them.
 * Sorting compares prefixes and falls back to gm_line_cmp on equal ones; the sort
 * is stable, so that -s and -u keep sort's choice of line. Input larger than the
 * budget is sorted in chunks written as temporary runs of lines, merged after
 * with the fan-in (--batch-size), the last pass into the output. A merge streams:
 * output begins before the inputs end. Output goes through core/output's gm_output
 * (safe -o), so an error leaves an existing -o file as it was.
 *
 * Room records/, above plan/: the records path's run: its state and inputs
 * (records_impl.h, recsrc.c), the entry, merge and check (records.c), the
 * chunk sort (recchunk.c) and the sort in device memory (recdev.c, recrange.c,
 * recdevsort.c, their spans and passes). It includes the rooms below it only
 * (base/ to plan/); the GPU through device/'s door.
 */
#ifndef GM_RECORDS_H
#define GM_RECORDS_H

#include "base/config.h"
#include "keys/keys.h"
#include "write/output.h"
#include "plan/plan.h"

/* What a run's -v report leaves to its caller, which ends CUDA's part and
 * releases a replaced output after the run and then says the last two rows
 * (report.h's gm_report_end). */
typedef struct gm_records_said {
    double stages;      /* the sum of the rows said, start-up included */
    double cleanup;     /* inputs closed and buffers freed, not yet said */
    int touched;        /* the run used the GPU or began CUDA's start-up */
    int teardown_begun; /* CUDA's teardown began in the background before the finish */
} gm_records_said;

/* Runs op over the inputs ("-" is standard input) in the order of
 * cfg->keyspec (finished), with the threads, budget and fan-in of plan (NULL: a
 * plan made from cfg here). Returns GM_OK; GM_DISORDER from check (sort's message
 * "FILE:LINE: disorder: TEXT" in st unless cfg->check_quiet); GM_EINPUT for a
 * merge input out of order ("FILE:LINE: disorder: TEXT", as the integer path
 * says it); GM_EIO, GM_ENOMEM, GM_EPIPE as the integer path. Under -v, with
 * said (not NULL) the report stops before its clean-up and total rows, which
 * said holds the means for; with NULL it says them too. */
int gm_records_run(gm_op op, const gm_config *cfg, const gm_plan *plan, char *const *names,
                   int nnames, gm_records_said *said, gm_status *st);

/* Whether the GPU may sort op's chunks in the order of ks: a sort whose first
 * key's prefix the device makes (keyprefix.h's gm_kp_takes). */
int gm_records_gpu_takes(gm_op op, const gm_keyspec *ks);

/* Whether --device=auto gives such a sort to the GPU (from the size where the
 * cost model's estimates meet, engine.h's gm_engine_records_least): not
 * where a first key by -V has other keys behind it, whose prefix ties (wherever
 * names share their first number) the device's rounds leave to the host's
 * comparison; where -V is the one key the rounds order them by its stream. */
int gm_records_gpu_auto(const gm_keyspec *ks);

/* For the tests only: a sort reads its inputs in blocks of about bytes (0: a
 * share of the budget), so that a chunk holds many blocks. */
void gm_records_test_block(size_t bytes);

/* For the tests only: the sort in device memory by ranges of keys reads its inputs
 * in windows of bytes (0: a share of the budget), so that lines cross windows. */
void gm_records_test_window(size_t bytes);

/* For the tests only: the host's memory the sort by ranges of keys counts on
 * (0: the machine's), which bounds the ranges worth reading the inputs for. */
void gm_records_test_memory(uint64_t bytes);

/* One input of a records run that the integer path hands over part-way
 * (core/stream/handover.c): bytes already read come first, then the descriptor's. */
typedef struct gm_rec_source {
    const char *name;    /* as given ("-": standard input), for messages */
    int fd;              /* read from its offset on; -1: open name */
    int own_fd;          /* the records path closes fd at the end */
    char *head;          /* bytes that come before fd's (malloc'd; the records path
                            frees them), or NULL */
    size_t head_len;
    int64_t line0;       /* lines of the input before head's first, for FILE:LINE */
    int64_t start, end;  /* the input's range of its file (gm_config's ranges): fd
                            reads on to end, name is opened at start; end -1: the
                            whole file */
} gm_rec_source;

/* Goes on with op over the sources in the order of cfg->keyspec, writing into
 * w (opened by the caller, who finishes and commits it; NULL for check). For a
 * merge with -u, last (last_len bytes, when not NULL) is the line written last:
 * lines equal to it by the keys are dropped. Returns as gm_records_run; the
 * sources' heads are freed and owned descriptors closed in every case. */
int gm_records_continue(gm_op op, const gm_config *cfg, gm_rec_source *src, int n,
                        gm_writer *w, const char *last, size_t last_len, gm_status *st);

#endif
