/*
 * util.c - the device's name, the clock, core count, message quoting and the
 * following of a path's links shared by the core modules (see util.h); the
 * parallel-for's thread pool is in pool.c, the status (gm_fail) in status.c.
 */
#define _GNU_SOURCE
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *gm_device_name(gm_device d)
{
    switch (d) {
    case GM_DEVICE_CPU: return "cpu";
    case GM_DEVICE_GPU: return "gpu";
    default: return "auto";
    }
}

double gm_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int gm_cpu_count(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0)
            return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* The quoting of coreutils' quotef() (gnulib quotearg.c, shell_escape_quoting_style
 * with ':' quoted too), in the C locale: a name of safe bytes stands as it is; a
 * name whose only unsafe bytes are spaces, quotes and a leading '#' or '~' goes in
 * double quotes when it holds a single quote; anything else goes in single quotes,
 * quotes as '\'' and bytes that are not printable ASCII as $'\n' or $'\ooo'
 * escapes, so no byte of a name reaches a terminal raw. */
static int quote_plain(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("%+,-./:@]_", c));
}

const char *gm_quote(const char *name, char *buf, size_t size)
{
    const unsigned char *s = (const unsigned char *)name;
    size_t len = strlen(name);
    int special = len == 0, quote = 0, compat = 1;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = s[i];
        if (c == ':') {
            special = 1; /* quotef quotes the colon; it needs no escape */
        } else if (quote_plain(c)) {
        } else if ((c == '{' || c == '}') && len > 1) {
            compat = 0; /* safe unless the whole name */
        } else if ((c == '#' || c == '~') && i > 0) {
            compat = 0; /* safe unless first */
        } else if (c == '{' || c == '}' || c == '#' || c == '~' || c == ' ') {
            special = 1;
        } else if (c == '\'') {
            special = quote = 1;
        } else {
            special = 1;
            compat = 0;
        }
    }
    size_t o = 0;
    int full = 0;
    if (size == 0)
        return buf;
    /* Appends text only when it fits whole, so a cut never splits an escape. */
#define PUT(text)                                                                 \
    do {                                                                          \
        size_t n_ = strlen(text);                                                 \
        if (o + n_ < size) {                                                      \
            memcpy(buf + o, text, n_);                                            \
            o += n_;                                                              \
        } else {                                                                  \
            full = 1; /* cut here: nothing more */                                \
        }                                                                         \
    } while (0)
    if (!special) {
        for (size_t i = 0; i < len && !full; i++) {
            char c[2] = { name[i], 0 };
            PUT(c);
        }
    } else if (quote && compat) {
        PUT("\"");
        for (size_t i = 0; i < len && !full; i++) {
            char c[2] = { name[i], 0 };
            PUT(c);
        }
        PUT("\"");
    } else {
        int in_escape = 0; /* inside a $'...' */
        PUT("'");
        for (size_t i = 0; i < len && !full; i++) {
            unsigned char c = s[i];
            if (c < 0x20 || c >= 0x7f) {
                static const char named[] = "abtnvfr";
                char esc[8];
                if (c >= '\a' && c <= '\r')
                    snprintf(esc, sizeof esc, "%s\\%c", in_escape ? "" : "'$'",
                             named[c - '\a']);
                else
                    snprintf(esc, sizeof esc, "%s\\%03o", in_escape ? "" : "'$'", c);
                PUT(esc);
                in_escape = 1;
            } else if (c == '\'') {
                PUT("'\\''");
                in_escape = 0;
            } else {
                char t[4] = { '\'', '\'', (char)c, 0 };
                PUT(in_escape ? t : t + 2);
                in_escape = 0;
            }
        }
        PUT("'");
    }
#undef PUT
    buf[o] = '\0';
    return buf;
}

const char *gm_show_text(const char *text, size_t len, char *buf, size_t size)
{
    size_t o = 0, limit = len < GM_SHOW_BYTES ? len : GM_SHOW_BYTES;
    for (size_t i = 0; i < limit && o + 5 < size; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c >= 0x20 && c < 0x7f) {
            buf[o++] = (char)c;
        } else {
            snprintf(buf + o, size - o, "\\x%02x", c);
            o += 4;
        }
    }
    if (len > limit && o + 4 < size) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}

void gm_fill_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
            continue;
        int got = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
        if (got >= 0 && got != fd) { /* cannot happen: the lowest free number */
            dup2(got, fd);
            close(got);
        }
    }
}

int gm_fd_room(void)
{
    struct rlimit rl;
    int limit = GM_FD_WINDOW;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)limit)
        limit = (int)rl.rlim_cur;
    /* One poll(2) asks about every number below the limit at once: a closed one
     * comes back POLLNVAL. (Listing /proc/self/fd costs a short run several times
     * as much: the kernel makes the process's /proc entries first.) */
    struct pollfd fds[GM_FD_WINDOW];
    for (int fd = 0; fd < limit; fd++)
        fds[fd] = (struct pollfd){ .fd = fd, .events = 0 };
    int used = 0;
    if (poll(fds, (nfds_t)limit, 0) >= 0) {
        for (int fd = 0; fd < limit; fd++)
            used += !(fds[fd].revents & POLLNVAL);
    } else {
        for (int fd = 0; fd < limit; fd++)
            used += fcntl(fd, F_GETFD) >= 0;
    }
    return limit - used;
}

void gm_say(const gm_config *cfg, gm_message kind, const char *fmt, ...)
{
    if (!cfg->message || (kind == GM_MSG_VERBOSE && !cfg->verbose) ||
        (kind == GM_MSG_PROGRESS && !cfg->progress))
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* --progress's reporter thread says its lines beside the run's own */
    static pthread_mutex_t said = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&said);
    cfg->message(cfg->message_ctx, kind, line);
    pthread_mutex_unlock(&said);
}

void *gm_alloc(size_t bytes, gm_status *st)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        gm_fail(st, GM_ENOMEM, "out of memory (%zu bytes)", bytes);
        return NULL;
    }
    /* Large arrays are touched once, in full: with 2 MiB pages the kernel takes
     * one fault where it would take 512 (where transparent huge pages are on
     * request only, as is common). */
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (bytes >= 4 * huge) {
        uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
        uintptr_t hi = ((uintptr_t)p + bytes) & ~(huge - 1);
        if (hi > lo)
            madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
    }
    return p;
}

/* Chunk buffers are mappings of their own, with a 64-byte header holding the
 * mapping's size: a growing buffer is moved by mremap, never copied, and a large
 * one asks for 2 MiB pages on the whole mapping (one fault where there would be
 * 512, where transparent huge pages are on request only, as is common; advising
 * a part would split the mapping and stop mremap). */
enum { BUF_HEADER = 64 };

static size_t buf_map_size(size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (bytes + BUF_HEADER + page - 1) / page * page;
}

static void *buf_ready(char *base, size_t map)
{
    if (map >= (8u << 20))
        madvise(base, map, MADV_HUGEPAGE);
    memcpy(base, &map, sizeof map);
    return base + BUF_HEADER;
}

void *gm_buf_alloc(size_t bytes, const char *what, gm_status *st)
{
    size_t map = buf_map_size(bytes);
    void *base = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        gm_fail(st, GM_ENOMEM, "out of memory (%zu bytes for %s)", bytes, what);
        return NULL;
    }
    return buf_ready(base, map);
}

void *gm_buf_resize(void *p, size_t bytes, const char *what, gm_status *st)
{
    if (!p)
        return gm_buf_alloc(bytes, what, st);
    char *base = (char *)p - BUF_HEADER;
    size_t old;
    memcpy(&old, base, sizeof old);
    size_t map = buf_map_size(bytes);
    if (map == old)
        return p;
    void *moved = mremap(base, old, map, MREMAP_MAYMOVE);
    if (moved == MAP_FAILED) {
        gm_fail(st, GM_ENOMEM, "out of memory (%zu bytes for %s)", bytes, what);
        return NULL;
    }
    return buf_ready(moved, map);
}

void gm_buf_free(void *p)
{
    if (!p)
        return;
    char *base = (char *)p - BUF_HEADER;
    size_t map;
    memcpy(&map, base, sizeof map);
    munmap(base, map);
}

void gm_buf_release(void *p, size_t from, size_t to)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)p + from + page - 1) / page * page;
    uintptr_t hi = ((uintptr_t)p + to) / page * page;
    if (hi > lo)
        munmap((void *)lo, hi - lo); /* never the header's page: p is past it */
}

void gm_pipe_enlarge(int fd, const struct stat *st)
{
    enum { PIPE_BYTES = 1 << 20 };
    if (S_ISFIFO(st->st_mode) && fcntl(fd, F_GETPIPE_SZ) < PIPE_BYTES)
        fcntl(fd, F_SETPIPE_SZ, PIPE_BYTES);
}

int gm_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t put = write(fd, p, len);
        if (put < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        p += put;
        len -= (size_t)put;
    }
    return 0;
}

/* ------------------------------------------------------------------ paths */

enum { MAX_LINKS = 40 }; /* as the kernel's limit on links followed in a path */

char *gm_dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* One link at a time, by readlink, each relative one against its own folder. */
char *gm_follow_links(const char *name, int *via_proc)
{
    char *p = strdup(name);
    *via_proc = 0;
    for (int hops = 0; p; hops++) {
        struct stat sb;
        *via_proc |= strncmp(p, "/proc/", 6) == 0;
        if (lstat(p, &sb) != 0 || !S_ISLNK(sb.st_mode))
            return p;
        char target[PATH_MAX];
        ssize_t n = hops < MAX_LINKS ? readlink(p, target, sizeof target - 1) : -1;
        if (n < 0) {
            int err = hops < MAX_LINKS ? errno : ELOOP;
            free(p);
            errno = err;
            return NULL;
        }
        target[n] = '\0';
        char *next = NULL, *dir = NULL;
        if (target[0] == '/' || !strchr(p, '/')) /* absolute, or p is in "." */
            next = strdup(target);
        else if ((dir = gm_dir_of(p)) && asprintf(&next, "%s/%s", dir, target) < 0)
            next = NULL;
        free(dir);
        free(p);
        p = next;
        if (!p)
            errno = ENOMEM;
    }
    return NULL;
}
