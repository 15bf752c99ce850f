/*
 * input.h - an input as a stream of text blocks, and the parallel parser that
 * turns each block into keys: one integer per line, on all cores. The rooms, in
 * the order data flows:
 *
 *   reader.h / reader.c  stage 1, read: blocks of whole lines (pread.c for files)
 *   input.c              the input: open, close; a block cut into chunks at line
 *                        boundaries, parsed, checked in file order, gathered
 *   parse.c              the line parsers (scalar, SWAR, SSE4.1) run on a chunk
 *   keybuf.h / keybuf.c  where the keys land
 *
 * Stage 2, parse (gm_input_parse_block): the block is cut into chunks at line
 * boundaries whose lines are counted first, so every chunk knows its first line
 * number and where its keys go; then every chunk is parsed on a thread of the
 * pool. The first problem in file order (not an integer, out of range, or - when
 * asked - out of order, checked across blocks too) is reported with its file name
 * and line number, line numbers running on across blocks.
 *
 * Values are parsed as int64 and kept as int32 while they fit (gm_keybuf widens
 * itself to int64 when a wider value arrives, even in the last block).
 *
 * Accepted line: [blanks][+|-]digits[blanks][\r], blanks being space and tab; a
 * line of blanks only is skipped; the last line may lack its newline.
 */
#ifndef GM_INPUT_H
#define GM_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "base/config.h"
#include "read/keybuf.h"
#include "read/reader.h"

struct gm_chunk;

struct gm_input {
    /* The opened file and how it is read: set by gm_input_open, and by the caller
     * before gm_input_start. */
    const char *name;    /* as given on the command line; "-" is standard input */
    char shown[512];     /* name as it appears in messages */
    int fd;              /* -1 once closed */
    int drained;         /* nothing left to read (a second "-") */
    int zero;            /* -z: lines end with NUL (swapped with '\n' as they are read) */
    int ahead;           /* a regular file read ahead by a reader thread: the
                          * consumer has other work between blocks */
    int threads;         /* threads a regular file's preads may use (the run's
                          * --parallel); 0: one */
    size_t line_max;     /* the longest line read (bytes before its end), 0: any */
    int64_t size;        /* bytes to read when known (regular files), else -1 */
    int64_t end;         /* where a range of the file ends (gm_input_range), -1: at
                          * the file's end */

    /* Reading (reader.c). */
    struct gm_reader *rd; /* the reader and its slots (gm_input_start), NULL: not started */
    struct gm_input_prefix { /* bytes read from fd before (gm_input_set_prefix): */
        char *buf;       /* gm_buf_alloc'd, owned here (gm_input_set_prefix), NULL: none */
        size_t at, end;  /* [at, end) are handed out first */
        size_t freed;    /* where its memory is still held from */
    } prefix;
    int64_t bytes;       /* bytes handed out so far */
    double wait;         /* seconds spent waiting for the reader */

    /* Parsing (input.c, parse.c), carried across blocks. */
    int64_t line;        /* lines before the next block */
    int have_prev;       /* prev holds a key (check_chunks, input.c) */
    int64_t prev;        /* last key (order checks across blocks) */
    int eof;             /* the last block has been parsed */
    struct gm_input_work { /* the last block's chunks and their line-indexed
                            * int32 staging area, kept for the next block */
        struct gm_chunk *chunks;  /* the block cut at line boundaries (split_block, input.c) */
        int nchunks, chunk_cap;   /* chunks in use, and room for them (split_block) */
        int32_t *stage;           /* keys bound for an int64 key buffer (stage_room) */
        int64_t stage_cap;        /* keys stage has room for (stage_room) */
    } work;
};

/* What gm_input_parse_block checks beside the syntax. */
typedef struct gm_parse_opts {
    int nthreads;   /* pool threads the parse runs on (the stream callers' s->nthreads) */
    int ordered;    /* report a key that breaks the order below as a disorder */
    int64_t mask;   /* 0 ascending, -1 descending (see corank.h) */
    int strict;     /* with ordered: equal neighbours are a disorder too (-u) */
    int canonical;  /* only canonical integers ([-]digits, no leading zero, no "-0",
                       nothing around them, no blank line): any other line declines
                       the block with GM_ERECORDS, for the records path */
} gm_parse_opts;

/* Opens name for reading and checks it is not a directory. On failure returns
 * GM_EIO with "cannot read: NAME: REASON". The input owns the descriptor. */
int gm_input_open(gm_input *in, const char *name, gm_status *st);

/* Input i of a run: with cfg->ranges, in is moved to its range's start and ends
 * at the range's end. Returns GM_OK, or GM_EIO ("cannot read: FILE: REASON"). */
int gm_input_range(gm_input *in, const gm_config *cfg, int i, gm_status *st);

/* Where in's bytes end: its range's end, else file_size (the file's). */
static inline int64_t gm_input_end(const gm_input *in, int64_t file_size)
{
    return in->end >= 0 ? in->end : file_size;
}

/* Parses block b on o->nthreads threads, appending its keys to kb (NULL keeps no
 * keys, as check does). Returns GM_OK; GM_EINPUT with
 * "FILE:LINE: not an integer: 'TEXT'" or "FILE:LINE: out of range: 'TEXT'", or
 * GM_DISORDER with "FILE:LINE: disorder: TEXT", for the first problem in the file;
 * GM_ERECORDS with "FILE:LINE: not a canonical integer: 'TEXT'" (o->canonical);
 * or GM_ENOMEM. Sets in->eof after the last block. */
int gm_input_parse_block(gm_input *in, const gm_block *b, const gm_parse_opts *o,
                         gm_keybuf *kb, gm_status *st);

/* Reads and parses the next block into kb: gm_input_next then
 * gm_input_parse_block. */
int gm_input_read_keys(gm_input *in, const gm_parse_opts *o, gm_keybuf *kb, gm_status *st);

/* Line number (1-based) of the first line of chunk c of the last parsed block,
 * for tests that place problems at chunk boundaries; -1 when there is none. */
int64_t gm_input_chunk_first_line(const gm_input *in, int c);

/* Stops the reader and releases the blocks, the chunks and the descriptor. Safe to
 * call twice. */
void gm_input_close(gm_input *in);

/* For the tests only: the scalar parser instead of SSE4.1 (on). */
void gm_input_test_scalar(int on);

#endif
