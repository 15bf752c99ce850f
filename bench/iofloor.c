/*
 * iofloor.c - the output floor: how fast N bytes of text like gpumerge's output
 * (random int32 in decimal, one per line, made in memory before any timing) can
 * be put into a regular file or a pipe, by each way a writer can do it: write(2)
 * in blocks; T threads with pwrite(2) on disjoint ranges; T threads copying into a
 * shared mapping (ftruncate or fallocate first, with MADV_HUGEPAGE and/or
 * MADV_POPULATE_WRITE); into a pipe, write(2) or vmsplice(2) (no SPLICE_F_GIFT)
 * with the pipe's default buffer or one enlarged by F_SETPIPE_SZ to
 * /proc/sys/fs/pipe-max-size, vmsplice from the text itself or ("fresh") from
 * a copy of each block in new pages. Each strategy runs REPEAT times and one TSV line
 * gives the median. Its bytes are checked once, outside the timing: a file is
 * read back and compared, a pipe strategy first runs once into a pipe of our own
 * whose reader thread compares. A strategy the target refuses (mmap on a pipe,
 * vmsplice into a file, mmap of a write-only standard output) is reported n/a.
 *
 * A file target is unlinked (standard output: truncated) after every run, outside
 * the timing, so each run creates the file as gpumerge's -o does; "overwrite"
 * rewrites the kept file instead, a reference (not a way to write a new file)
 * that shows what allocating the file's pages costs.
 *
 * Usage: iofloor [-n BYTES] [-r REPEAT] [-t MAXTHREADS] [-s NAMES] [-l LABEL]
 *                [-o TSV] TARGET         TARGET: a file's path, or - (stdout)
 *        iofloor -g FILE [-n BYTES]      writes the same text into FILE, once
 *        iofloor -C [-b BYTES]           reads stdin in BYTES reads (1 MiB),
 *                                        and says how many bytes came
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define MIB ((size_t)1 << 20)
enum { WHY = 160, MAX_STRATS = 64, MAX_REPEAT = 101 };

static const char *prog = "iofloor";

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------------ the text */

static uint64_t rng_next(uint64_t *s) /* xorshift64* */
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* Writes v in decimal at p and returns the end. */
static char *put_i32(char *p, int32_t v)
{
    char tmp[12];
    int n = 0;
    uint32_t u = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *p++ = '-';
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* A line of exactly len bytes (2..12): an int32 of len-1 characters. */
static char *put_line_of(char *p, size_t len, uint64_t *s)
{
    size_t digits = len - 1;
    if (digits == 11) { /* -1xxxxxxxxx */
        *p++ = '-';
        digits = 10;
    }
    *p++ = (char)(digits == 10 ? '1' : '1' + rng_next(s) % 9);
    for (size_t i = 1; i < digits; i++)
        *p++ = (char)('0' + rng_next(s) % 10);
    *p++ = '\n';
    return p;
}

/* Fills exactly len bytes (len >= 2) with whole lines. */
static void fill(char *p, size_t len, uint64_t seed)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    char *end = p + len;
    while ((size_t)(end - p) >= 26) {
        p = put_i32(p, (int32_t)(uint32_t)(rng_next(&s) >> 32));
        *p++ = '\n';
    }
    size_t r = (size_t)(end - p), k = (r + 11) / 12;
    for (size_t i = 0; i < k; i++) {
        size_t l = r / k + (i < r % k);
        p = put_line_of(p, l, &s);
    }
}

struct gen_job {
    char *buf;
    size_t n, nchunks, next;
};

static void *gen_worker(void *arg)
{
    struct gen_job *g = arg;
    for (;;) {
        size_t c = __atomic_fetch_add(&g->next, 1, __ATOMIC_RELAXED);
        if (c >= g->nchunks)
            return NULL;
        size_t lo = c * g->n / g->nchunks, hi = (c + 1) * g->n / g->nchunks;
        fill(g->buf + lo, hi - lo, c);
    }
}

/* The text of n bytes, in page-aligned memory: the same for the same n. */
static char *make_text(size_t n, int nthreads)
{
    char *buf = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED)
        die("mmap of %zu bytes: %s", n, strerror(errno));
    struct gen_job g = {buf, n, n / (64 * MIB) ? n / (64 * MIB) : 1, 0};
    pthread_t th[64];
    int t = nthreads < 64 ? nthreads : 64;
    for (int i = 0; i < t; i++)
        if ((errno = pthread_create(&th[i], NULL, gen_worker, &g)))
            die("pthread_create: %s", strerror(errno));
    for (int i = 0; i < t; i++)
        pthread_join(th[i], NULL);
    return buf;
}

/* ------------------------------------------------------------------ targets */

typedef struct target {
    const char *path;  /* NULL: the descriptor fd (standard output, a check pipe) */
    int fd;
    int is_pipe, is_reg;
    int pipe_default;  /* the pipe's buffer size when we found it */
    char fs[16];
} target;

static int pipe_max;   /* /proc/sys/fs/pipe-max-size */

/* Errors that mean "this kind of file does not do that", not a failure. */
static int refused(int e)
{
    return e == ESPIPE || e == ENODEV || e == EINVAL || e == EOPNOTSUPP || e == EACCES ||
           e == EBADF || e == EPERM;
}

static const char *fs_name(long type)
{
    switch ((unsigned long)type) {
    case 0x01021994: return "tmpfs";
    case 0xEF53: return "ext4";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    case 0x794c7630: return "overlay";
    case 0x6969: return "nfs";
    case 0x50495045: return "pipefs";
    default: return "other";
    }
}

/* Outside the timing: makes the target empty for the next run. */
static void target_reset(target *t)
{
    if (t->path) {
        if (unlink(t->path) != 0 && errno != ENOENT)
            die("unlink %s: %s", t->path, strerror(errno));
    } else if (t->is_reg) {
        if (ftruncate(t->fd, 0) != 0 || lseek(t->fd, 0, SEEK_SET) < 0)
            die("truncating standard output: %s", strerror(errno));
    }
}

/* Inside the timing: a descriptor to write to (keep: the file as it is). */
static int target_open(target *t, int keep)
{
    int fd;
    if (t->path)
        fd = open(t->path, O_RDWR | O_CREAT | (keep ? 0 : O_TRUNC), 0644);
    else
        fd = dup(t->fd);
    if (fd < 0)
        die("open %s: %s", t->path ? t->path : "standard output", strerror(errno));
    if (!t->path && t->is_reg && lseek(fd, 0, SEEK_SET) < 0)
        die("lseek standard output: %s", strerror(errno));
    return fd;
}

static void xclose(int fd)
{
    if (close(fd) != 0)
        die("close: %s", strerror(errno));
}

/* ------------------------------------------------------------------ strategies */

enum op { OP_WRITE, OP_PWRITE, OP_MMAP, OP_VMSPLICE };
enum {
    F_BIGPIPE = 1,   /* the pipe enlarged to pipe-max-size */
    F_HUGE = 2,      /* MADV_HUGEPAGE on the mapping */
    F_FALLOC = 4,    /* fallocate the whole file first */
    F_POPULATE = 8,  /* each thread MADV_POPULATE_WRITEs its range before copying */
    F_KEEP = 16,     /* overwrite the file of the previous run */
    F_FRESH = 32,    /* vmsplice: each block copied into fresh pages, unmapped after */
};

typedef struct strat {
    char name[24];
    enum op op;
    int flags, threads;
    size_t block;
} strat;

typedef struct run_ctx {
    const char *src;
    size_t n;
    int probe;        /* report huge pages of the mapping */
    long huge_kb;     /* the probe's answer */
} run_ctx;

static int write_all(int fd, const char *p, size_t len)
{
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

struct part {
    pthread_t th;
    int fd;
    char *dst;            /* OP_MMAP: the mapping */
    const char *src;
    size_t lo, hi, block;
    int populate;
    int err;
    const char *what;
};

static void *pwrite_part(void *arg)
{
    struct part *pt = arg;
    for (size_t off = pt->lo; off < pt->hi;) {
        size_t len = pt->hi - off < pt->block ? pt->hi - off : pt->block;
        ssize_t w = pwrite(pt->fd, pt->src + off, len, (off_t)off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            pt->err = errno;
            pt->what = "pwrite";
            return NULL;
        }
        off += (size_t)w;
    }
    return NULL;
}

static void *copy_part(void *arg)
{
    struct part *pt = arg;
    if (pt->populate && pt->hi > pt->lo &&
        madvise(pt->dst + pt->lo, pt->hi - pt->lo, MADV_POPULATE_WRITE) != 0) {
        pt->err = errno;
        pt->what = "madvise(MADV_POPULATE_WRITE)";
        return NULL;
    }
    memcpy(pt->dst + pt->lo, pt->src + pt->lo, pt->hi - pt->lo);
    return NULL;
}

/* Runs parts[0..t) on t threads (the first on this one). Returns 0 or an errno,
 * with *what naming the call. */
static int run_parts(struct part *parts, int t, void *(*fn)(void *), const char **what)
{
    for (int i = 1; i < t; i++)
        if ((errno = pthread_create(&parts[i].th, NULL, fn, &parts[i])))
            die("pthread_create: %s", strerror(errno));
    fn(&parts[0]);
    for (int i = 1; i < t; i++)
        if ((errno = pthread_join(parts[i].th, NULL)))
            die("pthread_join: %s", strerror(errno));
    for (int i = 0; i < t; i++)
        if (parts[i].err) {
            *what = parts[i].what;
            return parts[i].err;
        }
    return 0;
}

/* Splits [0, n) into t page-aligned ranges. */
static void split(struct part *parts, int t, size_t n)
{
    for (int i = 0; i < t; i++) {
        size_t lo = (size_t)i * (n / 4096) / (size_t)t * 4096;
        size_t hi = i + 1 == t ? n : (size_t)(i + 1) * (n / 4096) / (size_t)t * 4096;
        parts[i].lo = lo;
        parts[i].hi = hi;
    }
}

/* Sets the pipe's buffer size, waiting for a reader to drain it when it must
 * shrink. Returns 0 or an errno. */
static int set_pipe_size(int fd, int size)
{
    for (int tries = 0;; tries++) {
        int cur = fcntl(fd, F_GETPIPE_SZ);
        if (cur < 0)
            return errno;
        if (cur == size || fcntl(fd, F_SETPIPE_SZ, size) >= 0)
            return 0;
        if (errno != EBUSY || tries > 5000)
            return errno;
        usleep(1000);
    }
}

static long smaps_pmd_kb(const void *addr);

/* One run of s into t. Returns 0 with *secs, or 1 (n/a) with why. */
static int run_once(const strat *s, target *t, run_ctx *c, double *secs, char *why)
{
    const char *src = c->src;
    size_t n = c->n;
    struct part parts[64];
    memset(parts, 0, sizeof parts);
    const char *what = NULL;
    int e = 0;

    double t0 = now(), excluded = 0;
    int fd = target_open(t, s->flags & F_KEEP);

    /* Pipe strategies set the pipe's size; on a pipe every write strategy does. */
    if (s->op == OP_VMSPLICE || (s->flags & F_BIGPIPE) || t->is_pipe) {
        int want = (s->flags & F_BIGPIPE) ? pipe_max : t->pipe_default;
        if ((e = set_pipe_size(fd, want))) {
            what = "F_SETPIPE_SZ";
            goto fail;
        }
    }
    if (s->flags & F_KEEP) {
        struct stat sb;
        if (fstat(fd, &sb) != 0)
            die("fstat: %s", strerror(errno));
        if (!S_ISREG(sb.st_mode)) {
            e = ESPIPE;
            what = "overwrite";
            goto fail;
        }
    }
    if ((s->flags & F_FALLOC) && fallocate(fd, 0, 0, (off_t)n) != 0) {
        e = errno;
        what = "fallocate";
        goto fail;
    }

    switch (s->op) {
    case OP_WRITE:
        for (size_t off = 0; off < n; off += s->block) {
            size_t len = n - off < s->block ? n - off : s->block;
            if ((e = write_all(fd, src + off, len))) {
                what = "write";
                goto fail;
            }
        }
        break;
    case OP_PWRITE:
        if (fcntl(fd, F_GETFL) & O_APPEND) { /* pwrite would append, whatever the offset */
            e = EINVAL;
            what = "pwrite on an O_APPEND file";
            goto fail;
        }
        if (pwrite(fd, src, 0, 0) < 0) {
            e = errno;
            what = "pwrite";
            goto fail;
        }
        split(parts, s->threads, n);
        for (int i = 0; i < s->threads; i++) {
            parts[i].fd = fd;
            parts[i].src = src;
            parts[i].block = s->block;
        }
        if ((e = run_parts(parts, s->threads, pwrite_part, &what)))
            goto fail;
        break;
    case OP_VMSPLICE:
        /* The pipe holds references to our pages until its reader has them: pages
         * written again before then would change what the reader gets. F_FRESH
         * gives every block pages of its own, never written again (munmap leaves
         * them to the pipe), as a writer must whose reader may splice them on. */
        for (size_t off = 0; off < n;) {
            size_t len = n - off < s->block ? n - off : s->block;
            const char *from = src + off;
            char *fresh = NULL;
            if (s->flags & F_FRESH) {
                fresh = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                             -1, 0);
                if (fresh == MAP_FAILED)
                    die("mmap of %zu bytes: %s", len, strerror(errno));
                memcpy(fresh, from, len);
                from = fresh;
            }
            for (size_t done = 0; done < len;) {
                struct iovec iov = {(void *)(from + done), len - done};
                ssize_t w = vmsplice(fd, &iov, 1, 0);
                if (w < 0) {
                    if (errno == EINTR)
                        continue;
                    e = errno;
                    what = "vmsplice";
                    if (fresh)
                        munmap(fresh, len);
                    goto fail;
                }
                done += (size_t)w;
            }
            if (fresh && munmap(fresh, len) != 0)
                die("munmap: %s", strerror(errno));
            off += len;
        }
        break;
    case OP_MMAP: {
        if (!(s->flags & F_FALLOC) && ftruncate(fd, (off_t)n) != 0) {
            e = errno;
            what = "ftruncate";
            goto fail;
        }
        char *dst = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (dst == MAP_FAILED) {
            e = errno;
            what = "mmap";
            goto fail;
        }
        if ((s->flags & F_HUGE) && madvise(dst, n, MADV_HUGEPAGE) != 0) {
            e = errno;
            what = "madvise(MADV_HUGEPAGE)";
            munmap(dst, n);
            goto fail;
        }
        split(parts, s->threads, n);
        for (int i = 0; i < s->threads; i++) {
            parts[i].dst = dst;
            parts[i].src = src;
            parts[i].populate = !!(s->flags & F_POPULATE);
        }
        e = run_parts(parts, s->threads, copy_part, &what);
        if (!e && c->probe) {
            double p0 = now();
            c->huge_kb = smaps_pmd_kb(dst);
            excluded = now() - p0;
        }
        if (munmap(dst, n) != 0)
            die("munmap: %s", strerror(errno));
        if (e)
            goto fail;
        break;
    }
    }
    xclose(fd);
    *secs = now() - t0 - excluded;
    return 0;

fail:
    if (!refused(e))
        die("%s: %s: %s", s->name, what, strerror(e));
    snprintf(why, WHY, "%s: %s", what, strerror(e));
    close(fd);
    return 1;
}

/* Huge pages (kB) mapping the file at addr, from /proc/self/smaps; -1 when not
 * found. */
static long smaps_pmd_kb(const void *addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    int in = 0;
    long kb = -1;
    while (getline(&line, &cap, f) > 0) {
        unsigned long lo, hi;
        char c;
        if (sscanf(line, "%lx-%lx%c", &lo, &hi, &c) == 3 && c == ' ') {
            if (in)
                break;
            in = lo == (unsigned long)(uintptr_t)addr;
            if (in)
                kb = 0;
            continue;
        }
        long v;
        if (in && (sscanf(line, "FilePmdMapped: %ld kB", &v) == 1 ||
                   sscanf(line, "ShmemPmdMapped: %ld kB", &v) == 1))
            kb += v;
    }
    free(line);
    fclose(f);
    return kb;
}

/* ------------------------------------------------------------------ checking */

/* Reads the target file back and compares it with the text. Returns 0, or 1
 * with why. */
static int check_file(target *t, const char *src, size_t n, char *why)
{
    const char *name = t->path ? t->path : "/proc/self/fd/1";
    int fd = open(name, O_RDONLY);
    if (fd < 0)
        die("open %s to check it: %s", name, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0)
        die("fstat %s: %s", name, strerror(errno));
    if ((size_t)sb.st_size != n) {
        snprintf(why, WHY, "WRONG: %lld bytes written, not %zu", (long long)sb.st_size, n);
        close(fd);
        return 1;
    }
    size_t cap = 16 * MIB;
    char *buf = malloc(cap);
    if (!buf)
        die("out of memory");
    int bad = 0;
    for (size_t off = 0; off < n && !bad;) {
        ssize_t r = read(fd, buf, cap);
        if (r < 0)
            die("read %s: %s", name, strerror(errno));
        if (r == 0)
            break;
        if (memcmp(buf, src + off, (size_t)r) != 0) {
            snprintf(why, WHY, "WRONG: bytes differ in [%zu, %zu)", off, off + (size_t)r);
            bad = 1;
        }
        off += (size_t)r;
    }
    free(buf);
    xclose(fd);
    return bad;
}

struct pipe_reader {
    int fd;
    const char *src;
    size_t n, got;
    int bad;
};

static void *read_and_compare(void *arg)
{
    struct pipe_reader *r = arg;
    char *buf = malloc(MIB);
    if (!buf)
        die("out of memory");
    for (;;) {
        ssize_t k = read(r->fd, buf, MIB);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            die("read from the check pipe: %s", strerror(errno));
        }
        if (k == 0)
            break;
        if (r->got + (size_t)k > r->n || memcmp(buf, r->src + r->got, (size_t)k) != 0)
            r->bad = 1;
        r->got += (size_t)k;
    }
    free(buf);
    return NULL;
}

/* Runs s once into a pipe of our own whose reader compares every byte. Returns 0
 * (right), 1 (n/a, why) or 2 (wrong bytes, why). */
static int check_pipe_strategy(const strat *s, run_ctx *c, char *why)
{
    int p[2];
    if (pipe(p) != 0)
        die("pipe: %s", strerror(errno));
    target t = {NULL, p[1], 1, 0, 0, "pipefs"};
    t.pipe_default = fcntl(p[1], F_GETPIPE_SZ);
    struct pipe_reader r = {p[0], c->src, c->n, 0, 0};
    pthread_t th;
    if ((errno = pthread_create(&th, NULL, read_and_compare, &r)))
        die("pthread_create: %s", strerror(errno));
    double secs;
    int na = run_once(s, &t, c, &secs, why);
    xclose(p[1]);
    pthread_join(th, NULL);
    xclose(p[0]);
    if (na)
        return 1;
    if (r.bad || r.got != c->n) {
        snprintf(why, WHY, "WRONG: the reader got %zu bytes%s", r.got,
                 r.bad ? ", not the ones written" : "");
        return 2;
    }
    return 0;
}

/* ------------------------------------------------------------------ main */

static long meminfo_kb(const char *key)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long v = -1;
    size_t kl = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, kl) == 0 && line[kl] == ':')
            v = strtol(line + kl + 1, NULL, 10);
    if (f)
        fclose(f);
    return v;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static size_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        die("not a size: %s", s);
    switch (*end) {
    case 'k': case 'K': v *= 1024; break;
    case 'm': case 'M': v *= 1024 * 1024; break;
    case 'g': case 'G': v *= 1024.0 * 1024 * 1024; break;
    case '\0': break;
    default: die("not a size: %s", s);
    }
    return (size_t)v;
}

static int add(strat *list, int k, const char *name, enum op op, int flags, int threads,
               size_t block)
{
    if (k >= MAX_STRATS)
        die("too many strategies");
    strat *s = &list[k];
    snprintf(s->name, sizeof s->name, "%s", name);
    s->op = op;
    s->flags = flags;
    s->threads = threads;
    s->block = block;
    return k + 1;
}

/* Whether name is selected by the comma-separated list (NULL: all). */
static int selected(const char *list, const char *name)
{
    if (!list)
        return 1;
    size_t nl = strlen(name);
    for (const char *p = list; *p;) {
        size_t l = strcspn(p, ",");
        if (l == nl && strncmp(p, name, l) == 0)
            return 1;
        p += l + (p[l] == ',');
    }
    return 0;
}

static int consume(size_t block)
{
    char *buf = malloc(block);
    if (!buf)
        die("out of memory");
    unsigned long long total = 0;
    for (;;) {
        ssize_t r = read(0, buf, block);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            die("read standard input: %s", strerror(errno));
        }
        if (r == 0)
            break;
        total += (unsigned long long)r;
    }
    fprintf(stderr, "%s -C: read %llu bytes\n", prog, total);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    size_t n = 1100000000, block = MIB;
    int repeat = 5, maxthreads = 0, opt, mode = 0;
    const char *only = NULL, *label = NULL, *tsv_path = NULL, *gen_path = NULL;
    while ((opt = getopt(argc, argv, "n:r:t:s:l:o:g:Cb:")) != -1) {
        switch (opt) {
        case 'n': n = parse_size(optarg); break;
        case 'r': repeat = atoi(optarg); break;
        case 't': maxthreads = atoi(optarg); break;
        case 's': only = optarg; break;
        case 'l': label = optarg; break;
        case 'o': tsv_path = optarg; break;
        case 'g': gen_path = optarg; mode = 'g'; break;
        case 'C': mode = 'C'; break;
        case 'b': block = parse_size(optarg); break;
        default:
            fprintf(stderr,
                    "usage: %s [-n BYTES] [-r REPEAT] [-t MAXTHREADS] [-s NAME,...] [-l LABEL]"
                    " [-o TSV] FILE|-\n       %s -g FILE [-n BYTES]\n       %s -C [-b BYTES]\n",
                    prog, prog, prog);
            return 2;
        }
    }
    if (mode == 'C')
        return consume(block ? block : MIB);
    int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1)
        ncpu = 1;
    if (maxthreads <= 0 || maxthreads > ncpu)
        maxthreads = ncpu;
    if (maxthreads > 64)
        maxthreads = 64;
    if (repeat < 1 || repeat > MAX_REPEAT)
        die("REPEAT must be 1 to %d", MAX_REPEAT);
    if (n < 4096)
        die("BYTES must be at least 4096");
    if (mode == 'g') {
        char *src = make_text(n, ncpu);
        int fd = open(gen_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            die("open %s: %s", gen_path, strerror(errno));
        if ((errno = write_all(fd, src, n)))
            die("write %s: %s", gen_path, strerror(errno));
        xclose(fd);
        return 0;
    }
    if (optind + 1 != argc)
        die("one target, please (a file's path, or - for standard output)");

    /* The target. */
    target t;
    memset(&t, 0, sizeof t);
    struct statfs sf;
    struct stat sb;
    if (strcmp(argv[optind], "-") == 0) {
        t.fd = 1;
        if (fstat(1, &sb) != 0 || fstatfs(1, &sf) != 0)
            die("standard output: %s", strerror(errno));
        t.is_pipe = S_ISFIFO(sb.st_mode);
        t.is_reg = S_ISREG(sb.st_mode);
    } else {
        t.path = argv[optind];
        t.fd = -1;
        t.is_reg = 1;
        int fd = open(t.path, O_WRONLY | O_CREAT, 0644);
        if (fd < 0 || fstatfs(fd, &sf) != 0 || fstat(fd, &sb) != 0)
            die("%s: %s", t.path, strerror(errno));
        xclose(fd);
        if (!S_ISREG(sb.st_mode))
            die("%s: not a regular file", t.path);
    }
    snprintf(t.fs, sizeof t.fs, "%s", t.is_pipe ? "pipe" : fs_name((long)sf.f_type));
    if (t.is_pipe && (t.pipe_default = fcntl(1, F_GETPIPE_SZ)) < 0)
        die("F_GETPIPE_SZ: %s", strerror(errno));
    FILE *pm = fopen("/proc/sys/fs/pipe-max-size", "r");
    if (!pm || fscanf(pm, "%d", &pipe_max) != 1)
        pipe_max = 1 << 20;
    if (pm)
        fclose(pm);

    FILE *tsv = stdout;
    if (tsv_path) {
        tsv = fopen(tsv_path, "a");
        if (!tsv)
            die("%s: %s", tsv_path, strerror(errno));
    } else if (!t.path) {
        tsv = stderr;
    }
    if (!label)
        label = t.path ? t.path : t.is_pipe ? "stdout-pipe" : "stdout";

    /* The strategies. */
    strat list[MAX_STRATS];
    int k = 0;
    static const size_t wblocks[] = {1, 4, 16, 64}, pblocks[] = {1, 4, 16};
    for (int i = 0; i < 4; i++)
        k = add(list, k, "write", OP_WRITE, 0, 1, wblocks[i] * MIB);
    k = add(list, k, "falloc-write", OP_WRITE, F_FALLOC, 1, 16 * MIB);
    k = add(list, k, "overwrite", OP_WRITE, F_KEEP, 1, 16 * MIB);
    for (int th = 2; th <= maxthreads; th *= 2)
        k = add(list, k, "pwrite", OP_PWRITE, 0, th, 16 * MIB);
    for (int th = 1; th <= maxthreads; th *= 2)
        k = add(list, k, "mmap", OP_MMAP, 0, th, 0);
    int most = 1; /* the variants run on the most threads of the list */
    while (most * 2 <= maxthreads)
        most *= 2;
    k = add(list, k, "mmap-huge", OP_MMAP, F_HUGE, most, 0);
    k = add(list, k, "mmap-falloc", OP_MMAP, F_FALLOC, most, 0);
    k = add(list, k, "mmap-populate", OP_MMAP, F_POPULATE, most, 0);
    k = add(list, k, "mmap-huge-populate", OP_MMAP, F_HUGE | F_POPULATE, most, 0);
    for (int i = 0; i < 3; i++)
        k = add(list, k, "write-bigpipe", OP_WRITE, F_BIGPIPE, 1, pblocks[i] * MIB);
    for (int i = 0; i < 3; i++)
        k = add(list, k, "vmsplice", OP_VMSPLICE, 0, 1, pblocks[i] * MIB);
    for (int i = 0; i < 3; i++)
        k = add(list, k, "vmsplice-bigpipe", OP_VMSPLICE, F_BIGPIPE, 1, pblocks[i] * MIB);
    for (int i = 0; i < 2; i++)
        k = add(list, k, "vmsplice-fresh", OP_VMSPLICE, F_BIGPIPE | F_FRESH, 1,
                pblocks[i] * MIB);

    double g0 = now();
    char *src = make_text(n, ncpu);
    double gen_s = now() - g0;

    char thp[64] = "?";
    FILE *tf = fopen("/sys/kernel/mm/transparent_hugepage/shmem_enabled", "r");
    if (tf) {
        if (!fgets(thp, sizeof thp, tf))
            snprintf(thp, sizeof thp, "?");
        thp[strcspn(thp, "\n")] = '\0';
        fclose(tf);
    }
    /* The human table goes to stderr, unless the TSV does. */
    FILE *human = tsv == stderr ? NULL : stderr;
    fprintf(stderr, "%s: %s (%s), %zu bytes (made in %.2f s), median of %d, %d cores, up to %d"
            " threads, pipe buffer %d (pipe-max-size %d), shmem THP: %s\n",
            prog, label, t.fs, n, gen_s, repeat, ncpu, maxthreads, t.pipe_default, pipe_max, thp);
    if (human)
        fprintf(human, "%-18s %3s %6s %9s %7s  %s\n", "strategy", "T", "block", "median s",
                "GB/s", "note");
    struct stat tsb;
    if (fstat(fileno(tsv), &tsb) != 0 || !S_ISREG(tsb.st_mode) || tsb.st_size == 0)
        fprintf(tsv, "target\tfs\tstrategy\tthreads\tblock\tmedian_s\tGBps\tmin_s\tmax_s\tnote\n");
    fflush(tsv);

    int wrong = 0;
    unsigned long long to_stdout = 0;
    for (int i = 0; i < k; i++) {
        strat *s = &list[i];
        if (!selected(only, s->name))
            continue;
        char why[WHY] = "", note[2 * WHY] = "";
        double times[MAX_REPEAT];
        int na = 0, bad = 0;
        run_ctx c = {src, n, 0, -1};
        long dirty = meminfo_kb("Dirty");

        if (t.is_pipe) { /* checked through our own pipe first */
            int r = check_pipe_strategy(s, &c, why);
            na = r == 1;
            bad = r == 2;
        }
        if (!na && !bad && (s->flags & F_KEEP)) {
            target_reset(&t);
            double secs;
            na = run_once(s, &t, &c, &secs, why); /* the file to overwrite */
        }
        for (int r = 0; r < repeat && !na && !bad; r++) {
            if (!(s->flags & F_KEEP))
                target_reset(&t);
            c.probe = s->op == OP_MMAP && r == repeat - 1;
            na = run_once(s, &t, &c, &times[r], why);
            if (!na && !t.is_reg)
                to_stdout += n;
        }
        if (!na && !bad && t.is_reg)
            bad = check_file(&t, src, n, why);
        if (t.is_reg)
            target_reset(&t);

        char blk[16] = "-";
        if (s->block)
            snprintf(blk, sizeof blk, "%zuM", s->block / MIB);
        if (na || bad) {
            wrong += bad;
            fprintf(tsv, "%s\t%s\t%s\t%d\t%zu\tn/a\tn/a\tn/a\tn/a\t%s\n", label, t.fs, s->name,
                    s->threads, s->block, why);
            if (human)
                fprintf(human, "%-18s %3d %6s %9s %7s  %s\n", s->name, s->threads, blk, "n/a",
                        "n/a", why);
            fflush(tsv);
            continue;
        }
        qsort(times, (size_t)repeat, sizeof times[0], cmp_double);
        double med = repeat % 2 ? times[repeat / 2]
                                : (times[repeat / 2 - 1] + times[repeat / 2]) / 2;
        int len = snprintf(note, sizeof note, "%s%s; dirty %ld MB before",
                           s->flags & F_KEEP ? "reference, pages already there; "
                           : s->op == OP_VMSPLICE && !(s->flags & F_FRESH)
                               ? "reference, pages the pipe still holds are reused; "
                               : "",
                           t.is_pipe ? "checked via own pipe" : "read back ok",
                           dirty < 0 ? -1 : dirty / 1024);
        if (s->op == OP_MMAP && c.huge_kb >= 0)
            snprintf(note + len, sizeof note - (size_t)len, "; %ld MB in huge pages",
                     c.huge_kb / 1024);
        fprintf(tsv, "%s\t%s\t%s\t%d\t%zu\t%.4f\t%.3f\t%.4f\t%.4f\t%s\n", label, t.fs, s->name,
                s->threads, s->block, med, (double)n / med / 1e9, times[0], times[repeat - 1],
                note);
        fflush(tsv);
        if (human)
            fprintf(human, "%-18s %3d %6s %9.4f %7.2f  %s\n", s->name, s->threads, blk, med,
                    (double)n / med / 1e9, note);
    }
    if (!t.is_reg)
        fprintf(stderr, "%s: wrote %llu bytes to standard output\n", prog, to_stdout);
    if (tsv != stdout && tsv != stderr && fclose(tsv) != 0)
        die("%s: %s", tsv_path, strerror(errno));
    munmap(src, n);
    if (wrong)
        fprintf(stderr, "%s: %d strategies wrote wrong bytes\n", prog, wrong);
    return wrong ? 1 : 0;
}
