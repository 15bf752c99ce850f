/*
 * pages.h - bulk work on memory, shared by the stages that move whole buffers: the
 * parallel copy (cut into pieces on the pool's threads), the page toucher (faulting
 * pages in ahead of whoever fills them), and a file's shared mapping at any byte
 * offset.
 */
#ifndef GM_PAGES_H
#define GM_PAGES_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A copy of len bytes cut into len / GM_PAGES_COPY_PIECE + 1 equal pieces, at
 * most most of them (gm_pages_copy_plan; most < 1: no bound), so that threads take
 * a piece each. Piece p covers bytes [lo, hi) (gm_pages_copy_range), and
 * gm_pages_copy_piece copies it: a caller that must wait before it writes a piece
 * (the mapping writer, for its space) takes the pieces one by one; any other
 * calls gm_pages_copy. */
enum { GM_PAGES_COPY_PIECE = 1 << 20 };

typedef struct gm_pages_copy_job {
    char *dst;         /* where the bytes go (gm_pages_copy_plan's dst) */
    const char *src;   /* where they come from (gm_pages_copy_plan's src) */
    size_t len;        /* bytes to copy, cut into pieces by gm_pages_copy_range */
    int pieces;        /* pieces of about GM_PAGES_COPY_PIECE, at most gm_pages_copy_plan's most */
} gm_pages_copy_job;

void gm_pages_copy_plan(gm_pages_copy_job *c, void *dst, const void *src, size_t len, int most);
void gm_pages_copy_range(const gm_pages_copy_job *c, int p, size_t *lo, size_t *hi);
void gm_pages_copy_piece(const gm_pages_copy_job *c, int p);

/* memcpy(dst, src, len) on up to nthreads threads of the pool. Can't fail. */
void gm_pages_copy(void *dst, const void *src, size_t len, int nthreads);

/* Faults in, writable, every page whose first byte lies in [from, to): with
 * populate, by MADV_POPULATE_WRITE where the kernel has it (one call for a
 * private buffer's range), else, or without populate, by a locked add of zero to
 * each page's first byte (a file's shared mapping, whose pages the population of
 * many threads made no faster). No byte changes either way, so another thread
 * may be writing the same memory meanwhile (read(2) into it, or a copy that took
 * it). */
void gm_pages_touch(void *from, void *to, int populate);

/* The page toucher: a thread that faults in the pages of a buffer that one
 * thread fills in order (read(2) from a pipe into fresh memory), a little ahead
 * of where the filler is, so that the filler does not stop at every page's fault:
 * ahead by as much as has been filled, up to GM_TOUCH_AHEAD, so that a short
 * input leaves little memory touched for nothing. */
enum { GM_TOUCH_STEP = 4 << 20, GM_TOUCH_AHEAD = 128 << 20 };

typedef struct gm_toucher {
    char *base;        /* the buffer (gm_toucher_start) */
    uint64_t end;      /* bytes of base that may be filled (gm_toucher_start) */
    uint64_t at;       /* bytes filled so far (atomic; gm_toucher_at) */
    int stop;          /* the filling is over (atomic; gm_toucher_stop) */
    int running;       /* the thread started (gm_toucher_start) */
    pthread_t tid;     /* the thread */
} gm_toucher;

/* Starts touching base[0, end) ahead of the filler; without a thread, nothing is
 * touched and the filler faults its own pages. Can't fail. */
void gm_toucher_start(gm_toucher *t, char *base, uint64_t end);
/* The filler has filled at bytes. */
void gm_toucher_at(gm_toucher *t, uint64_t at);
/* Ends the touching (the thread joined). */
void gm_toucher_stop(gm_toucher *t);

/* Maps len bytes of fd from offset at on, shared and writable (the mapping may
 * reach past the file's end). Returns at's byte in the mapping, with the mapping
 * itself (from the page holding at) in *base and *size for munmap, or NULL when
 * mmap fails. */
char *gm_pages_map(int fd, off_t at, size_t len, char **base, size_t *size);

#endif
