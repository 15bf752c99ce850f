/*
 * textsort.c - the sort's text path (see textsort.h): every input's bytes read
 * into one buffer by the parallel pread (pread.h; as the reader reads a regular
 * file, and before CUDA is needed, so that the read overlaps CUDA's start-up),
 * an end of line added where a file lacks its last one, then gm_gpu_sort_text
 * (cuda/gpu.h), whose staged copies the pool fills, and whose output pieces go to
 * the writer (gm_writer_put_text). The preads leave the offsets alone, so a
 * declined input is read again from where it was by the streaming sort.
 */
#define _GNU_SOURCE
#include "stream/textsort.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device/gpu.h"
#include "device/engine.h"
#include "base/pages.h"
#include "read/pread.h"
#include "base/progress.h"
#include "plan/report.h"
#include "base/util.h"

enum { PIECE = 4 << 20 };

/* One input's place in the text: set by measure_inputs, off and a stream's size by
 * read_streams or gm_text_sort. */
struct file_span {
    int fd;            /* the input's descriptor, -1 where it was read whole already */
    int64_t at, size;  /* offset read from (regular files), bytes */
    uint64_t off;      /* where its bytes lie in the text */
    int stream;        /* a pipe, socket or terminal: read(2) to its end, first */
};

/* The context of the GPU text sort's callbacks (pool_copy, to_writer); gm_text_sort. */
struct text_ctx {
    int nthreads;      /* threads for the staging copies */
    gm_writer *w;      /* where the sorted pieces go */
    int64_t unsorted;  /* the text's bytes, to --progress as sorted at the first piece
                        * (sort_on_gpu, to_writer) */
};

/* The pool's memcpy for the staging ring. */
static void pool_copy(void *ctx, void *dst, const void *src, size_t len)
{
    struct text_ctx *t = ctx;
    gm_pages_copy(dst, src, len, t->nthreads);
}

static int to_writer(void *ctx, const char *text, size_t len, gm_status *st)
{
    struct text_ctx *t = ctx;
    gm_progress_sorted_once(&t->unsorted);
    return gm_writer_put_text(t->w, text, len, st);
}

/* Reads every regular file's span into place with the parallel pread, then checks
 * that none changed size (pread.h's rule). Returns GM_OK, GM_EIO or GM_ENOMEM. */
static int read_files(gm_input *ins, struct file_span *f, int nins, char *text, int nthreads,
                      gm_status *st)
{
    gm_pread_span *spans = calloc((size_t)nins + 1, sizeof *spans);
    if (!spans)
        return gm_fail(st, GM_ENOMEM, "out of memory reading");
    int n = 0;
    for (int i = 0; i < nins; i++)
        if (!f[i].stream && f[i].fd >= 0)
            spans[n++] = (gm_pread_span){ f[i].fd, ins[i].shown, text + f[i].off, 0,
                                          (size_t)f[i].size, f[i].at };
    int rc = gm_pread_parallel(spans, n, PIECE, nthreads, NULL, NULL, st);
    free(spans);
    for (int i = 0; i < nins && !rc; i++)
        if (!f[i].stream && f[i].fd >= 0 && ins[i].end < 0) /* a range: not at the end */
            rc = gm_pread_check_size(f[i].fd, f[i].at + f[i].size, ins[i].shown, st);
    return rc;
}

/* Reads the stream inputs to their ends, in order, into text at their places, with
 * room left between them for the regular files' known sizes; text holds cap bytes,
 * of which at most limit are used. Auto begins CUDA's start-up once the bytes so
 * far make the GPU worth it. Returns GM_OK with *len the text's length; GM_ETEXT,
 * with the reason in st, when the text outgrows limit or no GPU turns out to be
 * usable (the bytes read stay at the spans, for give_back); or an error. */
static int read_streams(const gm_config *cfg, gm_input *ins, struct file_span *f, int nins,
                        int nthreads, uint64_t limit, char *text, uint64_t *len, gm_writer *w,
                        gm_status *st)
{
    enum { STREAM_READ = 16 << 20 };
    gm_toucher t; /* a pipe's bytes land in fresh memory: its pages faulted in ahead */
    gm_toucher_start(&t, text, limit);
    uint64_t at = 0;
    int rc = GM_OK;
    for (int i = 0; i < nins && !rc; i++) {
        f[i].off = at;
        if (!f[i].stream) {
            at += (uint64_t)f[i].size;
            continue;
        }
        for (;;) {
            if (cfg->device == GM_DEVICE_AUTO)
                gm_engine_warm_text(cfg, at, 1, nthreads);
            gm_status probe;
            if (gm_gpu_probe_done() && gm_gpu_probe(NULL, &probe) != GM_OK) {
                /* no GPU after all: stop reading (the pipe may never end) */
                if (cfg->device == GM_DEVICE_GPU || probe.code == GM_EUSAGE)
                    *st = probe;
                else
                    gm_fail(st, GM_ETEXT, "auto: %s", probe.msg);
                rc = st->code;
                break;
            }
            if (at >= limit) {
                rc = gm_fail(st, GM_ETEXT, "the input outgrew half the memory budget");
                break;
            }
            size_t want = limit - at < STREAM_READ ? (size_t)(limit - at) : STREAM_READ;
            ssize_t got = read(f[i].fd, text + at, want);
            if (got < 0 && errno == EINTR)
                continue;
            if (got < 0) {
                rc = gm_fail(st, GM_EIO, "read failed: %s: %s", ins[i].shown, strerror(errno));
                break;
            }
            if (got == 0)
                break;
            at += (uint64_t)got;
            f[i].size += got;
            gm_toucher_at(&t, at);
            gm_writer_ahead_grow(w, at + (uint64_t)i + 1, 0); /* an eol each may be added */
        }
    }
    gm_toucher_stop(&t);
    *len = at;
    return rc;
}

/* Where a file lacks its last eol, one is added and the spans after it move up a
 * byte (rare: a move per such file). Returns the text's new length. */
static uint64_t add_eols(struct file_span *f, int nins, char *text, uint64_t len, char eol)
{
    uint64_t end = len;
    for (int i = nins - 1; i >= 0; i--) {
        if (f[i].size == 0 || text[f[i].off + (uint64_t)f[i].size - 1] == eol)
            continue;
        uint64_t after = f[i].off + (uint64_t)f[i].size;
        memmove(text + after + 1, text + after, (size_t)(end - after));
        text[after] = eol;
        end++;
        for (int j = i + 1; j < nins; j++)
            f[j].off++;
    }
    return end;
}

/* After the text path did not sort: the stream inputs get back the bytes it read
 * from them (gm_input_set_prefix), so that the streaming sort parses them first.
 * The first such input takes the text buffer itself (*text becomes NULL); any
 * other gets a copy. Returns GM_OK or GM_ENOMEM. */
static int give_back(gm_input *ins, const struct file_span *f, int nins, char **text,
                     gm_status *st)
{
    int owner = -1;
    for (int i = 0; i < nins; i++)
        if (f[i].stream && f[i].size > 0 && owner < 0)
            owner = i;
    for (int i = 0; i < nins; i++) {
        if (!f[i].stream || f[i].size == 0 || i == owner)
            continue;
        char *p = gm_buf_alloc((size_t)f[i].size, "reading", st);
        if (!p)
            return GM_ENOMEM;
        memcpy(p, *text + f[i].off, (size_t)f[i].size);
        gm_input_set_prefix(&ins[i], p, 0, (size_t)f[i].size);
    }
    if (owner >= 0) {
        gm_input_set_prefix(&ins[owner], *text, f[owner].off, f[owner].off + (uint64_t)f[owner].size);
        *text = NULL;
    }
    return GM_OK;
}

/* The threads that fault the output's pages in while the text is read and CUDA
 * starts: a quarter (the rest read the input meanwhile). */
/* Whether [p, e) is a canonical integer: [-]digits, no leading zero, no "-0". */
static int canonical_line(const char *p, const char *e)
{
    const char *d = p + (p < e && *p == '-');
    if (d == e || (*d == '0' && (e - d > 1 || d != p)))
        return 0;
    for (; d < e; d++)
        if ((unsigned char)(*d - '0') > 9)
            return 0;
    return 1;
}

/* Outside --strict the device takes canonical integers only: a look at the first
 * lines of each regular input (up to 64 KB of it) keeps text of another kind from
 * going to the device and back. Returns 0 with the input's name in why when one
 * is seen there. */
static int starts_canonical(const gm_config *cfg, const gm_input *ins,
                            const struct file_span *f, int nins, char *why, size_t n)
{
    enum { LOOK = 1 << 16 };
    const char eol = cfg->zero_terminated ? '\0' : '\n';
    char *buf = cfg->strict ? NULL : malloc(LOOK);
    int canonical = 1;
    for (int i = 0; i < nins && buf && canonical; i++) {
        if (f[i].fd < 0 || f[i].stream || f[i].size == 0)
            continue;
        size_t want = f[i].size < LOOK ? (size_t)f[i].size : LOOK;
        if (gm_pread_all(f[i].fd, buf, want, f[i].at) != 0)
            continue; /* the read proper reports it */
        for (const char *p = buf, *end = buf + want; p < end;) {
            const char *e = memchr(p, eol, (size_t)(end - p));
            if (!e && want < (size_t)f[i].size)
                break; /* a line cut by the look's end */
            e = e ? e : end;
            if (!canonical_line(p, e)) {
                snprintf(why, n, "a line of %.400s is not a canonical integer", ins[i].shown);
                canonical = 0;
                break;
            }
            p = e + 1;
        }
    }
    free(buf);
    return canonical;
}

static int text_touchers(int nthreads)
{
    return nthreads / 4;
}

/* Sorts the text on the GPU, once CUDA's start-up is over, into the writer. */
static int sort_on_gpu(const gm_config *cfg, gm_input *ins, const struct file_span *f,
                       int nins, int nthreads, char *text, uint64_t len, const char *why,
                       gm_writer *w, gm_stream_stats *stats, gm_status *st)
{
    int rc = GM_OK;
    /* What is left of CUDA's start-up is waited for here, so that -v names it. */
    double w0 = gm_now();
    gm_trace_push("waiting for CUDA's start-up");
    rc = gm_gpu_probe(NULL, st);
    gm_trace_pop();
    stats->startup_wait += gm_now() - w0;
    if (rc) {
        if (cfg->device == GM_DEVICE_GPU || rc == GM_EUSAGE) /* --gpu=N: no such device */
            return rc;
        gm_report_fact(cfg, "text", "not taken: auto: %s", st->msg);
        return GM_ETEXT;
    }
    const char eol = cfg->zero_terminated ? '\0' : '\n';
    struct text_ctx ctx = { nthreads, w, (int64_t)len };
    gm_text_job job = { text, (size_t)len, eol, cfg->reverse, cfg->unique, cfg->kernel,
                        !cfg->strict, pool_copy, &ctx, to_writer, &ctx };
    gm_text_result res;
    gm_gpu_times t;
    gm_progress_read((int64_t)len);
    double t1 = gm_now();
    rc = gm_gpu_sort_text(&job, &res, &t, st);
    double t2 = gm_now();
    if (rc == GM_OK) {
        gm_progress_sorted_once(&ctx.unsorted);
        for (int i = 0; i < nins; i++) { /* where read(2) would leave them */
            if (!f[i].stream && f[i].fd >= 0)
                lseek(f[i].fd, f[i].at + f[i].size, SEEK_SET);
            ins[i].bytes = f[i].size;
        }
        gm_engine_report rep;
        gm_engine_report_text(&rep, cfg, why, &t);
        gm_stream_tally(stats, GM_OP_SORT, res.keys, res.width, &rep);
        stats->keys += res.keys;
        stats->engine += t2 - t1 - res.sink;
        stats->write += res.sink;
        gm_report_fact(cfg, "text", "%.1f MB read, host to device %.3f s, parse %.3f s, format "
                       "%.3f s on the device, device to host %.3f s, writer %.3f s",
                       (double)len / 1e6, t.h2d, t.parse, t.format, t.d2h, res.sink);
        return GM_OK;
    }
    if (rc == GM_ETEXT) {
        gm_progress_read(-(int64_t)len); /* the CPU's path reads the text again */
        gm_report_fact(cfg, "text", "%s; the CPU's path reads the input", st->msg);
        return GM_ETEXT;
    }
    if (res.bytes > 0 || cfg->device == GM_DEVICE_GPU || rc == GM_EPIPE || rc == GM_EIO)
        return rc;
    gm_progress_read(-(int64_t)len);
    gm_say(cfg, GM_MSG_NOTICE, "notice: %s; using the CPU", st->msg);
    return GM_ETEXT;
}

/* -v's word on the text path not taken, from a run that began CUDA's start-up
 * or read a pipe whole for it (the path is the GPU's: a run that never touches a
 * GPU does not speak of it). */
static void say_not_taken(const gm_config *cfg, const char *why, int streams)
{
    int background = 0;
    gm_engine_startup(&background);
    if (cfg->device == GM_DEVICE_GPU || background || streams)
        gm_report_fact(cfg, "text", "not taken: %s", why);
}

/* Each input's span: regular files are read at their offsets by preads; a
 * pipe, socket or terminal is read to its end first (it cannot be read again);
 * a second "-" is empty. *total counts the bytes with an eol for each file (a
 * stream's as 1), *known the regular files' bytes. Returns 0 where an input
 * cannot be taken (a directory, an unreadable one). */
static int measure_inputs(gm_input *ins, struct file_span *f, int nins, uint64_t *total,
                          uint64_t *known, int *streams)
{
    int ok = 1;
    for (int i = 0; i < nins && ok; i++) {
        struct stat sb;
        f[i].fd = ins[i].drained ? -1 : ins[i].fd;
        if (f[i].fd < 0) {
            ok = ins[i].drained;
            continue;
        }
        ok = fstat(f[i].fd, &sb) == 0 && !S_ISDIR(sb.st_mode);
        off_t at = ok && S_ISREG(sb.st_mode) ? lseek(f[i].fd, 0, SEEK_CUR) : -1;
        if (ok && at >= 0) {
            f[i].at = at;
            int64_t end = gm_input_end(&ins[i], (int64_t)sb.st_size);
            f[i].size = end > at ? end - at : 0;
            *known += (uint64_t)f[i].size;
            *total += (uint64_t)f[i].size + 1; /* an eol that may be missing */
        } else if (ok) {
            f[i].stream = 1;
            ++*streams;
            *total += 1;
        }
    }
    return ok;
}

int gm_text_sort(const gm_config *cfg, const gm_plan *plan, gm_input *ins, int nins,
                 gm_writer *w, gm_stream_stats *stats, gm_status *st)
{
    if (cfg->device == GM_DEVICE_CPU)
        return GM_ETEXT;
    struct file_span *f = calloc((size_t)nins + 1, sizeof *f);
    if (!f)
        return gm_fail(st, GM_ENOMEM, "out of memory");
    uint64_t total = 0, known = 0; /* bytes with an eol for each file; without */
    int streams = 0;
    int ok = measure_inputs(ins, f, nins, &total, &known, &streams);
    char why[512] = "";
    /* Auto reads a pipe whole only where a GPU may take it: elsewhere the streaming
     * sort parses it as it arrives. */
    if (ok && streams && cfg->device == GM_DEVICE_AUTO && !gm_gpu_driver_loaded())
        ok = 0;
    /* With a stream the cost model is asked once its length is known. */
    if (!ok || total > plan->text_limit || (!streams && known == 0) ||
        (!streams && !gm_engine_text_path(cfg, total, plan->threads, why, sizeof why)) ||
        !starts_canonical(cfg, ins, f, nins, why, sizeof why)) {
        if (why[0])
            say_not_taken(cfg, why, streams);
        free(f);
        return GM_ETEXT;
    }
    double t0 = gm_now();
    int rc = GM_OK;
    uint64_t len = 0;
    char *text = NULL;
    if (streams) {
        /* The whole limit is reserved, and given back past the text once it ends:
         * the buffer never moves while a pipe is read into it. */
        uint64_t limit = plan->text_limit;
        text = gm_buf_alloc(limit + (uint64_t)nins + 16, "reading", st);
        rc = text ? GM_OK : GM_ETEXT; /* the streaming sort needs less at once */
        gm_trace_push("read");
        /* The output is no longer than the text: its space is reserved as it comes. */
        if (!rc)
            rc = gm_writer_ahead_open(w, limit + (uint64_t)nins, text_touchers(plan->threads), st);
        if (!rc)
            rc = read_streams(cfg, ins, f, nins, plan->threads, limit, text, &len, w, st);
        gm_trace_pop();
        if (rc == GM_ETEXT && text)
            say_not_taken(cfg, st->msg, streams);
        char *fit = rc ? NULL : gm_buf_resize(text, len + (uint64_t)nins + 16, "reading", st);
        text = fit ? fit : text; /* a shrink that fails keeps the larger buffer */
    } else {
        /* The output is no longer than the text: its space is being reserved
         * (gm_stream_run began it), and threads fault its pages in meanwhile. */
        rc = gm_writer_ahead(w, total, text_touchers(plan->threads), st);
        text = rc ? NULL : gm_buf_alloc(total + 16, "reading", st);
        rc = rc ? rc : text ? GM_OK : GM_ETEXT; /* the streaming sort needs less at once */
        for (int i = 0; i < nins; i++) {
            f[i].off = len;
            len += (uint64_t)f[i].size;
        }
    }
    if (!rc)
        rc = read_files(ins, f, nins, text, plan->threads, st);
    if (!rc)
        len = add_eols(f, nins, text, len, cfg->zero_terminated ? '\0' : '\n');
    stats->read += gm_now() - t0;
    if (!rc && streams &&
        (len == 0 || !gm_engine_text_path(cfg, len, plan->threads, why, sizeof why))) {
        if (why[0])
            say_not_taken(cfg, why, streams);
        rc = GM_ETEXT;
    }
    if (!rc && streams)
        gm_writer_ahead_grow(w, len, 1);
    if (!rc)
        rc = sort_on_gpu(cfg, ins, f, nins, plan->threads, text, len, why, w, stats, st);
    if (rc == GM_ETEXT) /* the CPU's path hands the writer keys */
        gm_writer_ahead_end(w);
    if (rc == GM_ETEXT && streams && text) { /* the streaming sort parses them again */
        int grc = give_back(ins, f, nins, &text, st);
        rc = grc ? grc : GM_ETEXT;
    }
    gm_buf_free(text);
    free(f);
    return rc;
}
