/*
 * input.h - inputs as streams of text blocks, and the parallel parser that turns
 * each block into keys: one integer per line, on all cores.
 *
 * Stage 1, read: every input (regular file, pipe, terminal, standard input) is
 * read from its current offset into one of two block buffers. A pipe or a device
 * is read with large read(2)s by a reader thread of its own, which fills one
 * buffer while the consumer parses the other (and pipes get a larger pipe buffer
 * where the system allows); a regular file is read when the block is asked for,
 * by preads of a megabyte or more on all the pool's threads, or, when the caller
 * asks (a merge on four threads or more), ahead by a reader thread's preads, and
 * the offset is left where read(2) would leave it. A block holds whole lines; the partial line
 * at its end is carried to the front of the next block, and a line longer than a
 * block grows the buffer, as far as the longest line allowed (the memory budget):
 * a longer line is an error once that much of it is read. A regular file whose size at its end differs from its
 * size at the start, or that ends early, is an error ("FILE: file changed while
 * reading"), never a signal: nothing is mapped.
 *
 * Stage 2, parse (gm_input_parse_block): the block is cut into chunks at line
 * boundaries whose lines are counted first, so every chunk knows its first line
 * number and where its keys go; then every chunk is parsed on a thread of the
 * pool. The first problem in file order (not an integer, out of range, or - when
 * asked - out of order, checked across blocks too) is reported with its file name
 * and line number, line numbers running on across blocks.
 *
 * Values are parsed as int64 and kept as int32 while they fit: int32 keys halve
 * every later stage's traffic, and most inputs fit. A key buffer (gm_keybuf)
 * widens itself to int64 when a wider value arrives, even in the last block.
 *
 * Accepted line: [blanks][+|-]digits[blanks][\r], blanks being space and tab; a
 * line of blanks only is skipped; the last line may lack its newline.
 */
#ifndef GM_INPUT_H
#define GM_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "gm.h"

/* A growable array of keys: int32 until a key needs int64. The memory comes from
 * gm_buf_alloc. limit (keys, 0: none) caps how far a doubling grows it, so a
 * budget is not overshot by more than one block's keys. */
typedef struct gm_keybuf {
    void *data;
    int64_t n, cap;
    int64_t limit;
    gm_width width;
} gm_keybuf;

/* Makes room for extra more keys of width at least w (widening the held keys when
 * w is wider). Returns GM_OK or GM_ENOMEM. */
int gm_keybuf_reserve(gm_keybuf *kb, int64_t extra, gm_width w, gm_status *st);
/* Appends n keys of width w from src. Returns GM_OK or GM_ENOMEM. */
int gm_keybuf_append(gm_keybuf *kb, const void *src, int64_t n, gm_width w, gm_status *st);
/* Drops the first n keys (the rest moves to the front). */
void gm_keybuf_consume(gm_keybuf *kb, int64_t n);
/* Key i as int64. */
static inline int64_t gm_keybuf_get(const gm_keybuf *kb, int64_t i)
{
    return kb->width == GM_I32 ? ((const int32_t *)kb->data)[i] : ((const int64_t *)kb->data)[i];
}
void gm_keybuf_free(gm_keybuf *kb);

struct gm_chunk;
struct gm_reader;

/* One block of text: whole lines (the last one may lack its newline at the end of
 * the input). Valid until the next gm_input_next. */
typedef struct gm_block {
    const char *text;
    size_t len;
    int eof;   /* no block follows */
} gm_block;

typedef struct gm_input {
    const char *name;    /* as given on the command line; "-" is standard input */
    char shown[512];     /* name as it appears in messages */
    int fd;              /* -1 once closed */
    int drained;         /* nothing left to read (a second "-") */
    int zero;            /* -z: lines end with NUL (swapped with '\n' as they are read) */
    int ahead;           /* a regular file read ahead by a reader thread (set before
                          * gm_input_start): the consumer has other work between blocks */
    size_t line_max;     /* the longest line read (bytes before its end), 0: any;
                          * set before gm_input_start */
    int64_t size;        /* bytes to read when known (regular files), else -1 */
    struct gm_reader *rd;
    char *prefix;        /* bytes read from fd before (gm_input_set_prefix): */
    size_t prefix_at, prefix_end; /* [prefix_at, prefix_end) are handed out first */
    size_t prefix_freed; /* where its memory is still held from */
    int64_t bytes;       /* bytes handed out so far */
    double wait;         /* seconds spent waiting for the reader */
    /* parse state, carried across blocks */
    int64_t line;        /* lines before the next block */
    int have_prev;
    int64_t prev;        /* last key (order checks across blocks) */
    int eof;             /* the last block has been parsed */
    /* the last block's chunks and their line-indexed int32 staging area */
    struct gm_chunk *chunks;
    int nchunks, chunk_cap;
    int32_t *stage;
    int64_t stage_cap;
} gm_input;

/* What gm_input_parse_block checks beside the syntax. */
typedef struct gm_parse_opts {
    int nthreads;
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

/* Gives a stream input the bytes buf[from, to) already read from its descriptor
 * (a pipe that the sort's text path read whole and then did not sort): they are
 * handed out before what is read next. The input owns buf (from gm_buf_alloc) from
 * then on, and gives its memory back as the bytes are handed out. */
void gm_input_set_prefix(gm_input *in, char *buf, size_t from, size_t to);

/* Starts reading in blocks of about block_bytes (the reader thread). Returns
 * GM_OK or GM_ENOMEM. */
int gm_input_start(gm_input *in, size_t block_bytes, gm_status *st);

/* The next block (starting the reader with a default block size if needed).
 * Returns GM_OK; GM_EIO ("cannot read: FILE: REASON" or "FILE: file changed while
 * reading"); GM_EINPUT ("FILE:LINE: line longer than the memory budget (-S)") for
 * a line longer than in->line_max, found after reading at most that many bytes
 * past the lines before it; or GM_ENOMEM. */
int gm_input_next(gm_input *in, gm_block *b, gm_status *st);

/* Parses block b on o->nthreads threads, appending its keys to kb (NULL keeps no
 * keys, as check does). Returns GM_OK; GM_EINPUT with
 * "FILE:LINE: not an integer: 'TEXT'" or "FILE:LINE: out of range: 'TEXT'", or
 * GM_DISORDER with "FILE:LINE: disorder: TEXT", for the first problem in the file;
 * or GM_ENOMEM. Sets in->eof after the last block. */
int gm_input_parse_block(gm_input *in, const gm_block *b, const gm_parse_opts *o,
                         gm_keybuf *kb, gm_status *st);

/* Reads and parses the next block into kb: gm_input_next then
 * gm_input_parse_block. */
int gm_input_read_keys(gm_input *in, const gm_parse_opts *o, gm_keybuf *kb, gm_status *st);

/* Line number (1-based) of the first line of chunk c of the last parsed block,
 * for tests that place problems at chunk boundaries; -1 when there is none. */
int64_t gm_input_chunk_first_line(const gm_input *in, int c);

/* For the records path, which goes on where this input's parsing declined block
 * b (or, with b NULL, after the last block handed out): returns in *buf (malloc'd,
 * the caller frees it; NULL when empty) the bytes read from the input but not
 * parsed, b's own included, as they were in the input (-z's swap undone), and
 * leaves the descriptor where the next byte after them is read. The reader is
 * stopped after the fill it is in. Returns GM_OK, GM_ENOMEM, or the reader's
 * error. Close the input after it, as usual. */
int gm_input_take_rest(gm_input *in, const gm_block *b, char **buf, size_t *len,
                       gm_status *st);

/* Stops the reader and releases the blocks, the chunks and the descriptor. Safe to
 * call twice. */
void gm_input_close(gm_input *in);

/* For the tests only: the scalar parser instead of SSE4.1 (on), a block size
 * that overrides every other (0: none), so block boundaries fall where a test
 * wants them, and every regular file read ahead by a reader thread (on). */
void gm_input_test_scalar(int on);
void gm_input_test_block_size(size_t bytes);
void gm_input_test_read_ahead(int on);

#endif
