/*
 * parse.h - the line parsers' side of stage 2 (parse.c), used by input.c: the
 * chunk a thread parses, the job every chunk of a block shares, the task that
 * parses one chunk (SSE4.1 where the processor has it, else SWAR), and the report
 * of a problem as its message.
 */
#ifndef GM_PARSE_H
#define GM_PARSE_H

#include <stdint.h>

#include "read/input.h"
#include "base/util.h"

enum gm_problem { GM_PROB_NONE, GM_PROB_NOT_INT, GM_PROB_RANGE, GM_PROB_DISORDER,
                  GM_PROB_DECLINE };

/* A piece of a block of whole lines, parsed by one task. split (input.c) sets the
 * text and the line counts; the parser sets the rest. */
struct gm_chunk {
    const char *begin, *end; /* text of whole lines */
    int64_t lines;           /* number of lines in the chunk */
    int64_t line0;           /* lines in the block's chunks before this one */
    int64_t n;               /* number of keys */
    int64_t key0;            /* keys in the block's chunks before this one */
    int64_t *wide;           /* the keys, when one does not fit int32 (wide_used) */
    int64_t wide_cap;        /* keys wide has room for (store_key, parse.c) */
    int wide_used;           /* the keys are in wide, not in dest32 (store_key) */
    int64_t first, last;     /* the first and last keys (parse_lines), for check_chunks */
    int64_t first_line;      /* chunk-local line number of the first key */
    const char *first_text;  /* and its text */
    enum gm_problem prob;    /* the first problem in the chunk, if any */
    int64_t prob_line;       /* its chunk-local line number (parse_lines) */
    const char *prob_text;   /* and the line's text (parse_lines) */
    int alloc_failed;        /* wide could not be allocated (parse_lines) */
};

/* What every task of a block reads: task t parses in->work.chunks[t]. */
struct gm_parse_job {
    gm_input *in;                /* whose work.chunks are parsed (gm_input_parse_block) */
    const gm_parse_opts *o;      /* the caller's options (gm_input_parse_block) */
    const char *text, *text_end; /* the block */
    int32_t *dest32;             /* line-indexed int32 keys, or NULL: keep none */
};

/* The gm_parallel_for task that parses one chunk (ctx: a struct gm_parse_job):
 * its keys into dest32 + line0 (line-indexed; a chunk that meets a wider value
 * keeps them in its wide buffer), its first and last key, and its first problem.
 * The SSE4.1 parser where the processor has it and the tests have not asked for
 * the scalar one. */
gm_task_fn gm_parse_task(void);

/* Makes st the message of problem prob at line line of in, whose text starts at
 * text (in block b). Returns the status code: GM_EINPUT, GM_DISORDER or
 * GM_ERECORDS. */
int gm_parse_report(const gm_input *in, const gm_block *b, enum gm_problem prob, int64_t line,
                    const char *text, gm_status *st);

#endif
