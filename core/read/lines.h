/*
 * lines.h - the records path's input: blocks of whole lines read from files and
 * pipes, owned by reference counts so that a block lives while records point into
 * it, and the records themselves (a line's 64-bit key prefix and a reference to
 * its bytes), made from a block on all cores.
 *
 * Every line in a block is followed by the end-of-line byte (the last line of an
 * input that lacks one gets it, as sort writes it), so a line's bytes and its
 * terminator can be copied out in one piece. A record is 16 bytes: the prefix
 * (keys.h's gm_line_prefix) and a reference: the line's address in the low 48
 * bits (user-space addresses fit in 48 bits on x86-64 and arm64 Linux), its length
 * in the next 15 (a line of GM_REC_LONG bytes or more stores GM_REC_LONG, and its
 * length is found from its terminator), and in the top bit whether the prefix is
 * inexact (equal prefixes then say nothing of the first keys).
 */
#ifndef GM_LINES_H
#define GM_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "base/config.h"
#include "keys/keys.h"
#include "keys/keyprefix.h"

/* A block of whole lines. refs is changed atomically; the last
 * gm_lines_block_unref frees it. */
/* The unit of a block's line counts: counts[i] holds the terminators among its
 * bytes [i GM_LINES_UNIT, (i + 1) GM_LINES_UNIT). */
enum { GM_LINES_UNIT = 1 << 20 };

typedef struct gm_lines_block {
    int refs;            /* holders; 1 at gm_lines_read, changed by gm_lines_block_(un)ref */
    size_t len;          /* bytes of lines, each with its terminator */
    size_t cap;          /* bytes of data's buffer */
    unsigned char *data; /* gm_buf_alloc'd */
    uint32_t *counts;    /* NULL, or the terminators in each GM_LINES_UNIT of data,
                          * counted as it was read (the split's first pass) */
    size_t ncounts;      /* units in counts: len's GM_LINES_UNITs (gm_lines_read) */
} gm_lines_block;

void gm_lines_block_ref(gm_lines_block *b);
void gm_lines_block_unref(gm_lines_block *b);

/* One line. */
typedef struct gm_rec {
    uint64_t prefix; /* gm_line_prefix of the line */
    uint64_t ref;    /* address | length << 48 | inexact << 63 */
} gm_rec;

/* The reference's packing (GM_REC_ADDR_MASK, GM_REC_LONG, GM_REC_INEXACT) is
 * keyprefix.h's, which the device shares. */
static inline uint64_t gm_rec_make_ref(const unsigned char *line, size_t len, int exact)
{
    return gm_kp_ref((uint64_t)(uintptr_t)line, len, exact);
}

static inline int gm_rec_is_exact(const gm_rec *r)
{
    return !(r->ref & GM_REC_INEXACT);
}

/* The length of a line of GM_REC_LONG bytes or more, from its terminator. */
size_t gm_rec_long_len(const unsigned char *line, char eol);

static inline const unsigned char *gm_rec_line(const gm_rec *r)
{
    return (const unsigned char *)(uintptr_t)(r->ref & GM_REC_ADDR_MASK);
}

/* The line's length without its terminator eol. */
static inline size_t gm_rec_len(const gm_rec *r, char eol)
{
    size_t n = (size_t)(r->ref >> 48) & GM_REC_LONG;
    return n == GM_REC_LONG ? gm_rec_long_len(gm_rec_line(r), eol) : n;
}

/* A growable array of records (gm_buf_alloc'd). */
typedef struct gm_recs {
    gm_rec *r;   /* the records, gm_buf_alloc'd (gm_recs_reserve); filled by their maker */
    size_t n;    /* records held */
    size_t cap;  /* records r has room for */
    size_t most; /* 0, or the records a doubling grows to at most (a chunk's
                  * share of the budget); a larger reserve still gets its room */
} gm_recs;

/* Makes room for extra more records: twice the room, or more where needed, up to
 * v->most. Returns GM_OK or GM_ENOMEM. */
int gm_recs_reserve(gm_recs *v, size_t extra, gm_status *st);
void gm_recs_free(gm_recs *v);

/* An input read as blocks of lines: a named file, standard input ("-"), or an
 * open descriptor (a run). */
typedef struct gm_lines_src {
    char shown[512];  /* the name as messages show it */
    int fd;           /* -1 once closed */
    int own_fd;       /* close fd at the end */
    char eol;         /* the line terminator (src_init, from the keyspec's eol) */
    int regular;      /* read with preads from off, left bytes known */
    int64_t off, left; /* next offset and bytes still to read (src_init, fill, gm_lines_range) */
    int range;        /* left ends a range before the file's end (gpumerge-mpi's
                         share of a file): its size is not checked there */
    int eof;          /* nothing more to read from fd */
    int done;         /* the last block has been handed out */
    unsigned char *carry; /* a partial line read after the last block's end */
    size_t carry_len, carry_cap; /* carry's bytes and room (keep_carry) */
    int64_t bytes;    /* bytes handed out */
    unsigned char *spare; /* a used block's buffer, for the next block */
    size_t spare_cap; /* spare's room (gm_lines_recycle) */
    int64_t line0;    /* lines of the input before the first read here (messages) */
    int64_t eols;     /* terminators read here (the line number of a too-long line) */
    size_t line_max;  /* the longest line read (bytes before its end), 0: any */
    int input;        /* an input's, not a run's: --progress counts its bytes */
    int run;          /* a temporary run read back by a merge: --progress counts its
                       * bytes as a run's (the merge sets it after opening) */
    int64_t lines_out;  /* lines handed out in blocks */
    int64_t block_line; /* line0 and the lines handed out before the last block */
    const gm_config *watch; /* the run whose default -n checks the lines for a
                               number (numwarn.h), NULL: none; and the key */
    int watch_key;    /* the key checked, or -1 (gm_numwarn_watch) */
} gm_lines_src;

/* Opens name ("-": standard input) for reading as gm_input_open does. Returns
 * GM_OK or GM_EIO ("cannot read: NAME: REASON"). drained: a second "-", which
 * reads nothing. */
int gm_lines_open(gm_lines_src *s, const char *name, char eol, int drained, gm_status *st);

/* Reads from fd (owned by the source when own is set) from its current offset. */
void gm_lines_open_fd(gm_lines_src *s, int fd, int own, const char *shown, char eol);

/* Ends a regular file's source at offset end, a range that ends before the file
 * does: its size is not checked there. */
void gm_lines_limit(gm_lines_src *s, int64_t end);

/* A source just opened, moved to read the range [lo, hi) of its regular file.
 * Returns GM_OK or GM_EIO ("cannot read: FILE: REASON"). */
int gm_lines_range(gm_lines_src *s, int64_t lo, int64_t hi, gm_status *st);

/* The next block: about want bytes of whole lines (more when one line is longer,
 * up to s->line_max), read by preads on nthreads threads for a regular file.
 * eager: a pipe's block ends at the first read that completes a line (a merge
 * streams), else it is filled to want. *out is NULL after the last line. Returns
 * GM_OK, GM_EIO ("cannot read: NAME: REASON", "NAME: file changed while
 * reading"), GM_EINPUT ("NAME:LINE: line longer than the memory budget (-S)",
 * found after reading at most line_max + 1 bytes of it) or GM_ENOMEM. */
int gm_lines_read(gm_lines_src *s, size_t want, int eager, int nthreads,
                  gm_lines_block **out, gm_status *st);

/* Whether fd is a regular file whose remaining size is known: then *size. */
int gm_lines_size(int fd, int64_t *size);

/* Releases b, whose lines are no longer needed, as gm_lines_block_unref does,
 * but keeps its buffer for s's next block when nothing else holds it (a merge
 * reads block after block of the same size). */
void gm_lines_recycle(gm_lines_src *s, gm_lines_block *b);

/* Releases the carried bytes, a spare buffer and the descriptor (when owned).
 * Safe twice. */
void gm_lines_close(gm_lines_src *s);

/* Appends the records of every line of b (in order) to v, their prefixes made on
 * nthreads threads. Returns GM_OK or GM_ENOMEM. */
int gm_lines_split(const gm_keyspec *ks, const gm_lines_block *b, gm_recs *v, int nthreads,
                   gm_status *st);

/* gm_lines_split of b, the block s handed out last; where s is checked for
 * numbers (numwarn.h), the lines of b are checked as they are split, and the
 * first that holds none is named. */
int gm_lines_split_checked(const gm_lines_src *s, const gm_keyspec *ks, const gm_lines_block *b,
                           gm_recs *v, int nthreads, gm_status *st);

/* The lines of b (its terminators eol), from the counts made as it was read, else
 * counted on nthreads threads. */
#define GM_LINES_COUNT_PIECES 256
size_t gm_lines_count(const gm_lines_block *b, char eol, int nthreads);

#endif
