/*
 * util.h - small services every core module uses: status messages, a monotonic
 * clock, the core count, a parallel-for over POSIX threads, and the quoting of file
 * names in messages (as coreutils does it).
 */
#ifndef GM_UTIL_H
#define GM_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "gm.h"

/* Seconds on a monotonic clock. */
double gm_now(void);

/* Number of online processors, at least 1. */
int gm_cpu_count(void);

/* Calls fn(ctx, t) once for every t in [0, ntasks), on up to nthreads threads
 * (the caller is one of them). Tasks are handed out in increasing order. If a
 * thread cannot be started the remaining threads do its share: this can't fail. */
typedef void (*gm_task_fn)(void *ctx, int task);
void gm_parallel_for(int nthreads, int ntasks, gm_task_fn fn, void *ctx);

/* Writes name into buf as coreutils' sort shows a file name in a message (quotef:
 * gnulib's shell-escape quoting, ':' quoted, the C locale): unchanged when every
 * byte is safe, else in quotes, with $'\n' and $'\ooo' escapes for bytes that are
 * not printable ASCII, so no byte of the name reaches a terminal raw. Cut at an
 * escape's boundary to fit size (at least 1). Returns buf. */
const char *gm_quote(const char *name, char *buf, size_t size);

/* Renders a line of input for a message: at most 60 bytes, control and non-ASCII
 * bytes as \xHH, and "..." when cut. Returns buf. */
const char *gm_show_text(const char *text, size_t len, char *buf, size_t size);

/* Opens /dev/null on each of the standard descriptors 0, 1 and 2 that is closed
 * (for reading on 1 and 2, for writing on 0, so that using it fails), so that no
 * file we open later takes its number: "-o /dev/stdout" with standard output
 * closed must never name an input. */
void gm_fill_std_fds(void);

/* Hands a printf-style message of this kind to cfg->message, when there is one and
 * the kind is wanted (-v for GM_MSG_VERBOSE, --progress for GM_MSG_PROGRESS). */
void gm_say(const gm_config *cfg, gm_message kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* malloc that reports failure in st (GM_ENOMEM) and returns NULL. Large blocks
 * are marked for transparent huge pages. Release with free(). */
void *gm_alloc(size_t bytes, gm_status *st);

#endif
