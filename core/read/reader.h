/*
 * reader.h - stage 1, read: an input's bytes as blocks of whole lines.
 *
 * Every input (regular file, pipe, terminal, standard input) is read from its
 * current offset into one of two block buffers. A pipe or a device is read with
 * large read(2)s by a reader thread of its own, which fills one buffer while the
 * consumer parses the other (and pipes get a larger pipe buffer where the system
 * allows); a regular file is read when the block is asked for, by the parallel
 * pread (pread.h) on up to the input's threads, or, when the caller asks (a merge on
 * four threads or more), ahead by a reader thread's preads, and the offset is left
 * where read(2) would leave it. A block holds whole lines; the partial line at its
 * end is carried to the front of the next block, and a line longer than a block
 * grows the buffer, as far as the longest line allowed (the memory budget): a
 * longer line is an error once that much of it is read. A regular file whose size
 * at its end differs from its size at the start, or that ends early, is an error
 * ("FILE: file changed while reading"), never a signal: nothing is mapped.
 *
 * Bytes that the sort's text path read from a pipe and then did not sort come back
 * as the input's prefix, handed out before anything read next; and when parsing
 * declines a block, the records path takes the bytes not parsed (take_rest).
 *
 * Room read/, above keys/: the inputs' bytes coming in: the reader and its
 * slots, the parallel pread, the integer path's parser and key buffers
 * (input.h), and the records path's blocks of lines split into records
 * (lines.h). It includes base/ and keys/ only.
 */
#ifndef GM_READER_H
#define GM_READER_H

#include <stddef.h>

#include "base/config.h"

typedef struct gm_input gm_input; /* input.h */
struct gm_reader;

/* One block of text: whole lines (the last one may lack its newline at the end of
 * the input). Valid until the next gm_input_next. */
typedef struct gm_block {
    const char *text;  /* the block's first byte, in a reader slot (hand_out, reader.c) */
    size_t len;        /* its bytes, 0 after the last block (gm_input_next) */
    int eof;   /* no block follows */
} gm_block;

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

/* For the records path, which goes on where this input's parsing declined block
 * b (or, with b NULL, after the last block handed out): returns in *buf (malloc'd,
 * the caller frees it; NULL when empty) the bytes read from the input but not
 * parsed, b's own included, as they were in the input (-z's swap undone), and
 * leaves the descriptor where the next byte after them is read. The reader is
 * stopped after the fill it is in. Returns GM_OK, GM_ENOMEM, or the reader's
 * error. Close the input after it, as usual. */
int gm_input_take_rest(gm_input *in, const gm_block *b, char **buf, size_t *len,
                       gm_status *st);

/* Stops the reader (cancelling its thread inside read(2)) and frees its blocks
 * and the prefix; gm_input_close calls it. Safe to call twice. */
void gm_input_stop_reading(gm_input *in);

/* -z: lines end with NUL. Swapping NUL and newline as the bytes arrive lets every
 * later stage look for newlines; messages swap them back. */
void gm_input_swap_terminators(char *p, size_t n);

/* For the tests only: a block size that overrides every other (0: none), so block
 * boundaries fall where a test wants them, and every regular file read ahead by a
 * reader thread (on). */
void gm_input_test_block_size(size_t bytes);
void gm_input_test_read_ahead(int on);

#endif
