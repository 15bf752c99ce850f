/*
 * pread.h - the parallel pread: spans of regular files read at their offsets in
 * pieces on the pool's threads (on many cores several times faster than one
 * thread's reads), and the rule for a file read by offsets: nothing is mapped, so a
 * file that ends early or whose size changes underneath is an error ("FILE: file
 * changed while reading"), never a signal. The reader (reader.c), the sort's text
 * path (textsort.c) and the records' blocks (lines.c) read regular files through it.
 */
#ifndef GM_PREAD_H
#define GM_PREAD_H

#include <stddef.h>
#include <stdint.h>

#include "base/config.h"

/* One file's bytes to read: buf[at, end) from the file's offset off (the offset of
 * buf[at]). shown is the file's name as messages show it. */
typedef struct gm_pread_span {
    int fd;            /* the file, open for reading (set by the caller, as all here) */
    const char *shown; /* its name in messages */
    char *buf;         /* where its bytes land */
    size_t at, end;    /* buf[at, end) is read; pieces count from buf's start */
    int64_t off;       /* the file's offset of buf[at] */
} gm_pread_span;

/* Called once piece number piece of span number span is read, on the thread that
 * read it (while its bytes are in cache), with the piece's bounds [lo, hi) in the
 * span's buf; lo may lie before the span's at. */
typedef void (*gm_pread_piece_fn)(void *ctx, int span, int piece, size_t lo, size_t hi);

/* Reads every span. Each span's buf[0, end) is cut into pieces of piece bytes from
 * buf's start (a piece wholly before at reads nothing, but done still sees it);
 * the pieces run on up to nthreads threads of the pool. done may be NULL. Returns
 * GM_OK; GM_EIO with "cannot read: FILE: REASON", or "FILE: file changed while
 * reading" for a file that ends first, naming one file that failed; or GM_ENOMEM. */
int gm_pread_parallel(const gm_pread_span *spans, int nspans, size_t piece, int nthreads,
                      gm_pread_piece_fn done, void *ctx, gm_status *st);

/* Reads len bytes of fd at off into buf on the calling thread, retrying short and
 * interrupted reads. Returns 0, an errno value, or -1 when the file ends first. */
int gm_pread_all(int fd, void *buf, size_t len, int64_t off);

/* The status for gm_pread_all's nonzero result err on the file shown: GM_EIO with
 * "FILE: file changed while reading" (-1) or "cannot read: FILE: REASON". */
int gm_pread_error(int err, const char *shown, gm_status *st);

/* The size rule, once a regular file's bytes up to end are read by offsets: its
 * size must still be end. Returns GM_OK, or GM_EIO with "FILE: file changed while
 * reading" (or "cannot read: FILE: REASON" when fstat fails). Leaves the offset. */
int gm_pread_check_size(int fd, int64_t end, const char *shown, gm_status *st);

#endif
