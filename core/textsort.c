/*
 * textsort.c - the sort's text path (see textsort.h): every input's bytes read
 * into one buffer by preads on the pool's threads (as input.c reads a regular
 * file, and before CUDA is needed, so that the read overlaps CUDA's start-up),
 * an end of line added where a file lacks its last one, then gm_gpu_sort_text
 * (cuda/gpu.h), whose staged copies the pool fills, and whose output pieces go to
 * the writer (gm_writer_put_text). The preads leave the offsets alone, so a
 * declined input is read again from where it was by the streaming sort.
 */
#define _GNU_SOURCE
#include "textsort.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cuda/gpu.h"
#include "engine.h"
#include "util.h"

enum { PIECE = 4 << 20, COPY_PIECE = 1 << 20 };

struct file_span {
    int fd;
    int64_t at, size;  /* offset read from, bytes */
    char *dst;
};

struct read_task {
    const struct file_span *file;
    int64_t lo, hi;    /* within the file's span */
};

struct read_job {
    struct read_task *tasks;
    const struct file_span *files;
    int err;           /* an errno, or -1: a file ended early */
    int bad;           /* the file it happened to */
};

static void read_piece(void *ctx, int i)
{
    struct read_job *job = ctx;
    const struct read_task *t = &job->tasks[i];
    int err = gm_pread_all(t->file->fd, t->file->dst + t->lo, (size_t)(t->hi - t->lo),
                           t->file->at + t->lo);
    if (err) { /* any one failure is reported */
        __atomic_store_n(&job->bad, (int)(t->file - job->files), __ATOMIC_RELAXED);
        __atomic_store_n(&job->err, err, __ATOMIC_RELAXED);
    }
}

/* The pool's memcpy for the staging ring: pieces of a megabyte on every thread. */
struct copy_job {
    char *dst;
    const char *src;
    size_t len;
    int pieces;
};

static void copy_piece(void *ctx, int i)
{
    struct copy_job *c = ctx;
    size_t lo = c->len * (size_t)i / (size_t)c->pieces, hi = c->len * (size_t)(i + 1) / (size_t)c->pieces;
    memcpy(c->dst + lo, c->src + lo, hi - lo);
}

struct text_ctx {
    int nthreads;
    gm_writer *w;
};

static void pool_copy(void *ctx, void *dst, const void *src, size_t len)
{
    struct text_ctx *t = ctx;
    struct copy_job c = { dst, src, len, (int)(len / COPY_PIECE) + 1 };
    if (c.pieces > t->nthreads)
        c.pieces = t->nthreads;
    gm_parallel_for(c.pieces, c.pieces, copy_piece, &c);
}

static int to_writer(void *ctx, const char *text, size_t len, gm_status *st)
{
    struct text_ctx *t = ctx;
    return gm_writer_put_text(t->w, text, len, st);
}

/* Reads every span into place on the pool, then checks that no file changed size
 * (input.c's rule). Returns GM_OK, GM_EIO or GM_ENOMEM. */
static int read_all(gm_input *ins, struct file_span *f, int nins, int nthreads, gm_status *st)
{
    int ntasks = 0;
    for (int i = 0; i < nins; i++)
        ntasks += (int)((f[i].size + PIECE - 1) / PIECE);
    struct read_task *tasks = calloc((size_t)ntasks + 1, sizeof *tasks);
    if (!tasks)
        return gm_fail(st, GM_ENOMEM, "out of memory reading");
    int k = 0;
    for (int i = 0; i < nins; i++)
        for (int64_t lo = 0; lo < f[i].size; lo += PIECE)
            tasks[k++] = (struct read_task){ &f[i], lo, lo + PIECE < f[i].size ? lo + PIECE : f[i].size };
    struct read_job job = { tasks, f, 0, 0 };
    gm_parallel_for(nthreads, ntasks, read_piece, &job);
    free(tasks);
    if (job.err > 0)
        return gm_fail(st, GM_EIO, "cannot read: %s: %s", ins[job.bad].shown, strerror(job.err));
    if (job.err < 0)
        return gm_fail(st, GM_EIO, "%s: file changed while reading", ins[job.bad].shown);
    for (int i = 0; i < nins; i++) {
        struct stat sb;
        if (fstat(f[i].fd, &sb) != 0)
            return gm_fail(st, GM_EIO, "cannot read: %s: %s", ins[i].shown, strerror(errno));
        if ((int64_t)sb.st_size != f[i].at + f[i].size)
            return gm_fail(st, GM_EIO, "%s: file changed while reading", ins[i].shown);
    }
    return GM_OK;
}

int gm_text_sort(const gm_config *cfg, gm_input *ins, int nins, int nthreads, size_t budget,
                 gm_writer *w, gm_stream_stats *stats, gm_status *st)
{
    const char eol = cfg->zero_terminated ? '\0' : '\n';
    struct file_span *f = calloc((size_t)nins + 1, sizeof *f);
    if (!f)
        return gm_fail(st, GM_ENOMEM, "out of memory");
    uint64_t total = 0;
    int ok = 1;
    for (int i = 0; i < nins && ok; i++) {
        struct stat sb;
        off_t at = ins[i].fd >= 0 ? lseek(ins[i].fd, 0, SEEK_CUR) : -1;
        ok = !ins[i].drained && at >= 0 && fstat(ins[i].fd, &sb) == 0 && S_ISREG(sb.st_mode);
        if (ok) {
            f[i].fd = ins[i].fd;
            f[i].at = at;
            f[i].size = (int64_t)sb.st_size > at ? (int64_t)sb.st_size - at : 0;
            total += (uint64_t)f[i].size + 1; /* an eol that may be missing */
        }
    }
    char why[512] = "";
    if (!ok || total > budget / 2 || total == 0 ||
        !gm_engine_text_path(cfg, total, nthreads, why, sizeof why)) {
        if (why[0])
            gm_say(cfg, GM_MSG_VERBOSE, "text path: not taken: %s", why);
        free(f);
        return GM_ETEXT;
    }
    double t0 = gm_now();
    char *text = gm_buf_alloc(total + 16, "reading", st);
    if (!text) { /* the streaming sort needs less at once */
        free(f);
        return GM_ETEXT;
    }
    uint64_t len = 0;
    for (int i = 0; i < nins; i++) {
        f[i].dst = text + len;
        len += (uint64_t)f[i].size;
    }
    int rc = read_all(ins, f, nins, nthreads, st);
    /* The spans lie back to back; where a file lacks its last eol, the files after
     * it move up one byte to make room (rare: a move per such file). */
    if (!rc) {
        uint64_t end = len;
        for (int i = nins - 1; i >= 0; i--) {
            if (f[i].size == 0 || f[i].dst[f[i].size - 1] == eol)
                continue;
            char *after = f[i].dst + f[i].size;
            memmove(after + 1, after, (size_t)(text + end - after));
            *after = eol;
            end++;
        }
        len = end;
    }
    stats->read += gm_now() - t0;
    if (!rc && !gm_gpu_probe_done()) { /* CUDA still starting: the output's space meanwhile */
        double r0 = gm_now();
        rc = gm_writer_reserve(w, len, st);
        stats->write += gm_now() - r0;
    }
    if (rc) {
        gm_buf_free(text);
        free(f);
        return rc;
    }
    /* What is left of CUDA's start-up is waited for here, so that -v names it. */
    double w0 = gm_now();
    gm_trace_push("waiting for CUDA's start-up");
    rc = gm_gpu_probe(NULL, st);
    gm_trace_pop();
    stats->startup_wait += gm_now() - w0;
    if (rc) {
        gm_buf_free(text);
        free(f);
        if (cfg->device == GM_DEVICE_GPU)
            return rc;
        gm_say(cfg, GM_MSG_VERBOSE, "text path: not taken: auto: %s", st->msg);
        return GM_ETEXT;
    }
    struct text_ctx ctx = { nthreads, w };
    gm_text_job job = { text, (size_t)len, eol, cfg->reverse, cfg->unique, cfg->kernel,
                        pool_copy, &ctx, to_writer, &ctx };
    gm_text_result res;
    gm_gpu_times t;
    double t1 = gm_now();
    rc = gm_gpu_sort_text(&job, &res, &t, st);
    double t2 = gm_now();
    gm_buf_free(text);
    if (rc == GM_OK) {
        for (int i = 0; i < nins; i++) { /* where read(2) would leave them */
            lseek(f[i].fd, f[i].at + f[i].size, SEEK_SET);
            ins[i].bytes = f[i].size;
        }
        gm_engine_report rep;
        memset(&rep, 0, sizeof rep);
        rep.device = GM_DEVICE_GPU;
        rep.kernel = t.kernel_used;
        snprintf(rep.reason, sizeof rep.reason, "%s", why);
        gm_gpu_info info;
        gm_status ignored;
        if (gm_gpu_probe(&info, &ignored) == GM_OK)
            snprintf(rep.gpu_name, sizeof rep.gpu_name, "%s", info.name);
        rep.h2d = t.h2d;
        rep.kernel_s = t.kernel;
        rep.d2h = t.d2h;
        rep.passes = t.passes;
        rep.deduplicated = cfg->unique;
        gm_stream_tally(stats, GM_OP_SORT, res.keys, res.width, &rep);
        stats->keys += res.keys;
        stats->engine += t2 - t1 - res.sink;
        stats->write += res.sink;
        gm_say(cfg, GM_MSG_VERBOSE,
               "text path: %.1f MB read, host to device %.3f s, parse %.3f s, format %.3f s "
               "on the device, device to host %.3f s, writer %.3f s",
               (double)len / 1e6, t.h2d, t.parse, t.format, t.d2h, res.sink);
        free(f);
        return GM_OK;
    }
    free(f);
    if (rc == GM_ETEXT) {
        gm_say(cfg, GM_MSG_VERBOSE, "%s; the CPU's path reads the input", st->msg);
        return GM_ETEXT;
    }
    if (res.bytes > 0 || cfg->device == GM_DEVICE_GPU || rc == GM_EPIPE || rc == GM_EIO)
        return rc;
    gm_say(cfg, GM_MSG_NOTICE, "notice: %s; using the CPU", st->msg);
    return GM_ETEXT;
}
