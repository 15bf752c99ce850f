/*
 * input.h - reading and parsing inputs: one integer per line, on all cores.
 *
 * Regular files are mapped with mmap, anything else (pipes, terminals, devices) is
 * read with large reads. The text is cut into chunks at line boundaries whose lines
 * are counted first (gm_input_split), so every chunk knows its first line number
 * and where its keys go; then every chunk is parsed on its own thread. The first
 * problem in file order (not an integer, out of range, or - when asked - out of
 * order) is reported with its file name and line number.
 *
 * Values are parsed as int64 and stored as int32 while they fit, straight into the
 * caller's array: int32 keys halve every later stage's traffic, and most inputs
 * fit. A chunk that meets a wider value moves to an int64 buffer of its own, and
 * gm_input_gather then widens everything into an int64 array.
 *
 * Accepted line: [blanks][+|-]digits[blanks][\r], blanks being space and tab; a
 * line of blanks only is skipped; the last line may lack its newline.
 */
#ifndef GM_INPUT_H
#define GM_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "gm.h"

struct gm_chunk;

typedef struct gm_input {
    const char *name;    /* as given on the command line; "-" is standard input */
    char shown[512];     /* name as it appears in messages */
    int fd;              /* -1 once closed */
    char *text;          /* the whole input */
    size_t len;
    int mapped;          /* text is an mmap of the file (else malloc'd) */
    struct gm_chunk *chunks;
    int nchunks;
    int64_t nlines;      /* after gm_input_split: an upper bound on the keys */
    int32_t *dest32;     /* where gm_input_parse put the int32 keys */
    int64_t nkeys;       /* after gm_input_parse */
    int wide;            /* some key does not fit int32 */
    int64_t min, max;    /* smallest and largest key (when nkeys > 0) */
} gm_input;

/* What gm_input_parse checks beside the syntax. */
typedef struct gm_parse_opts {
    int nthreads;
    int ordered;    /* report a key that breaks the order below as a disorder */
    int64_t mask;   /* 0 ascending, -1 descending (see corank.h) */
    int strict;     /* with ordered: equal neighbours are a disorder too (-u) */
} gm_parse_opts;

/* Opens name for reading and checks it is not a directory. On failure returns
 * GM_EIO with "cannot read: NAME: REASON". The input owns the descriptor. */
int gm_input_open(gm_input *in, const char *name, gm_status *st);

/* Loads the whole input into memory (mmap for regular files, reads otherwise).
 * Returns GM_OK, GM_EIO or GM_ENOMEM. */
int gm_input_load(gm_input *in, gm_status *st);

/* Cuts the loaded text into chunks of whole lines and counts the lines (nlines),
 * on nthreads threads. Returns GM_OK or GM_ENOMEM. */
int gm_input_split(gm_input *in, int nthreads, gm_status *st);

/* Parses the split text on o->nthreads threads into dest32 (room for nlines keys;
 * NULL keeps no keys, as check does). Keys stay in dest32 in order, with a gap for
 * each blank line, except in the chunks that hold a key wider than int32 (then
 * in->wide is set). Returns GM_OK; GM_EINPUT with
 * "FILE:LINE: not an integer: 'TEXT'" or "FILE:LINE: out of range: 'TEXT'", or
 * GM_DISORDER with "FILE:LINE: disorder: TEXT", for the first problem in the file;
 * or GM_ENOMEM. */
int gm_input_parse(gm_input *in, const gm_parse_opts *o, int32_t *dest32, gm_status *st);

/* Puts the parsed keys in order, without gaps, at dest as width-wide integers.
 * GM_I32 (only when no input is wide): dest is dest32 or lies before it in the same
 * array, and the keys move left. GM_I64: dest is another array. Can't fail. */
void gm_input_gather(gm_input *in, gm_width width, void *dest, int nthreads);

/* Line number (1-based) of the first line of chunk c, for tests that place
 * problems at chunk boundaries; -1 when there is no chunk c. */
int64_t gm_input_chunk_first_line(const gm_input *in, int c);

/* Releases the text, the chunks and the descriptor. Safe to call twice. */
void gm_input_close(gm_input *in);

#endif
