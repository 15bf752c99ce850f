/*
 * util.h - small services every core module uses: a monotonic clock, the core
 * count, a parallel-for on a persistent thread pool, and the quoting of file names
 * in messages (as coreutils does it). The status (gm_fail) is the ground floor's:
 * types.h declares it, status.c defines it.
 *
 * Room base/, the ground floor: the services every room stands on, the host's
 * alone: the status and the shared types (types.h, status.c), the run's
 * configuration (config.h), the clock, cores, threads and the pool, memory and
 * bulk copies (pages.h), temporary files, their clean-up and --compress-program,
 * and --progress. It includes no other room: only the C library and the public
 * header (include/gpumerge.h).
 */
#ifndef GM_UTIL_H
#define GM_UTIL_H

#include <pthread.h>
#include <sys/stat.h>
#include <stddef.h>
#include <stdint.h>

#include "base/config.h"

/* Seconds on a monotonic clock. */
double gm_now(void);

/* Number of online processors, at least 1. */
int gm_cpu_count(void);

/* Calls fn(ctx, t) once for every t in [0, ntasks), on up to nthreads threads
 * of the persistent pool (pool.c; the caller is one of them). Tasks are handed out
 * in increasing order. If a thread cannot be started the remaining threads do its
 * share: this can't fail. */
typedef void (*gm_task_fn)(void *ctx, int task);
void gm_parallel_for(int nthreads, int ntasks, gm_task_fn fn, void *ctx);

/* Part t of parts of n items: [*lo, *hi), the parts as even as can be. */
static inline void gm_slice(size_t n, int t, int parts, size_t *lo, size_t *hi)
{
    *lo = n * (size_t)t / (size_t)parts;
    *hi = n * (size_t)(t + 1) / (size_t)parts;
}

/* The stack of every thread the pool and gm_thread_start start: small, since the
 * stages keep their data on the heap, and counted in the memory budget. */
enum { GM_THREAD_STACK = 256 << 10 };

/* Starts a joinable thread with the pool's small stack (for a stage's own thread,
 * such as an input's reader). Returns pthread_create's result. */
int gm_thread_start(pthread_t *tid, void *(*fn)(void *), void *arg);

/* Closes fd on a thread of its own, for a descriptor whose close can take long and
 * whose result does not matter: the last reference to a replaced -o target, whose
 * pages the close frees (0.1 s for a 1.1 GB tmpfs file), while the run finishes
 * (CUDA's teardown). One at a time: a second call waits for the first.
 * gm_close_later_join waits for it and returns the seconds it waited. */
void gm_close_later(int fd);
double gm_close_later_join(void);

/* Writes name into buf as coreutils' sort shows a file name in a message (quotef:
 * gnulib's shell-escape quoting, ':' quoted, the C locale): unchanged when every
 * byte is safe, else in quotes, with $'\n' and $'\ooo' escapes for bytes that are
 * not printable ASCII, so no byte of the name reaches a terminal raw. Cut at an
 * escape's boundary to fit size (at least 1). Returns buf. */
const char *gm_quote(const char *name, char *buf, size_t size);

/* Renders a line of input for a message: at most GM_SHOW_BYTES bytes (the only
 * ones read), control and non-ASCII bytes as \xHH, and "..." when cut. Returns
 * buf. */
enum { GM_SHOW_BYTES = 60 };
const char *gm_show_text(const char *text, size_t len, char *buf, size_t size);

/* The folder part of path: "." when it has none. malloc'd, or NULL. */
char *gm_dir_of(const char *path);

/* Follows the symbolic links of name's last component as open does, a dangling
 * last link included, without touching the folders on the way (they stay as
 * named: renaming within them works the same). *via_proc is set when a step is
 * under /proc (/dev/stdout, /dev/fd/N: the name of an open descriptor). Returns
 * a malloc'd path, or NULL with errno set (ELOOP, ENOMEM, or readlink's error). */
char *gm_follow_links(const char *name, int *via_proc);

/* Opens /dev/null on each of the standard descriptors 0, 1 and 2 that is closed
 * (for reading on 1 and 2, for writing on 0, so that using it fails), so that no
 * file we open later takes its number: "-o /dev/stdout" with standard output
 * closed must never name an input. */
void gm_fill_std_fds(void);

/* How many more descriptors open(2) may hand out now: the free numbers below
 * RLIMIT_NOFILE, counting only those below GM_FD_WINDOW where the limit is
 * higher (a safe answer: open(2) takes the lowest free number, so that many opens
 * stay below the window, and so below the limit). */
enum { GM_FD_WINDOW = 1024 };
int gm_fd_room(void);

/* Hands a printf-style message of this kind to cfg->message, when there is one and
 * the kind is wanted (-v for GM_MSG_VERBOSE, --progress for GM_MSG_PROGRESS), one
 * message at a time whichever thread says it. */
void gm_say(const gm_config *cfg, gm_message kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The width of the key's column in -v's lines (report.h: "KEY VALUE"; the
 * longest keys are "start-up" and "clean-up"). */
enum { GM_REPORT_KEY = 8 };

/* malloc that reports failure in st (GM_ENOMEM) and returns NULL. Large blocks
 * are marked for transparent huge pages. Release with free(). */
void *gm_alloc(size_t bytes, gm_status *st);

/* Chunk buffers (text blocks, key chunks, run buffers) come from here and nowhere
 * else, so that one change can make them pinned host memory for the GPU's copies.
 * gm_buf_alloc reports failure in st (GM_ENOMEM, with what) and returns NULL;
 * gm_buf_resize keeps the contents (the old block stays valid when it fails). */
void *gm_buf_alloc(size_t bytes, const char *what, gm_status *st);
void *gm_buf_resize(void *p, size_t bytes, const char *what, gm_status *st);
void gm_buf_free(void *p);
/* Gives back the memory of the whole pages within p[from, to) of a gm_buf_alloc
 * block, whose bytes there are no longer needed (gm_buf_free still frees it). */
void gm_buf_release(void *p, size_t from, size_t to);

/* Writes all of buf at fd, retrying short and interrupted writes. Returns 0 or
 * an errno value. */
int gm_write_all(int fd, const void *buf, size_t len);

/* Enlarges the pipe fd (st its fstat) to 1 MiB where the system allows (the
 * kernel's default is 64 KiB; pipe-max-size may refuse): fewer switches between
 * the two ends. Anything but a pipe is left alone. */
void gm_pipe_enlarge(int fd, const struct stat *st);

#endif
