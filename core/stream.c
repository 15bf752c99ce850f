/*
 * stream.c - the streaming merge, the external sort and the check (see stream.h
 * for the stages). The external sort follows coreutils' sort.c (sort chunks that
 * fill the buffer, spill them to temporary files, merge them NMERGE at a time in
 * passes, the last pass into the output) and sqlite's vdbesort.c (compact binary
 * runs, merged by a k-way merge that reads each run through a small buffer); the
 * streaming merge's rounds bounded by the smallest last-buffered key are the
 * same idea as sort -m's, over blocks of keys instead of single lines, so the
 * merge of each round can be cut by co-rank and run on all cores.
 */
#define _GNU_SOURCE
#include "stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cuda/gpu.h"
#include "cleanup.h"
#include "cpu.h"
#include "handover.h"
#include "run.h"
#include "textsort.h"
#include "util.h"

enum {
    DEFAULT_FAN_IN = 16,           /* sort's NMERGE */
    MERGE_MEMORY = 96 << 20,       /* merge: all the inputs' buffers together, at most, */
    MERGE_CORES = 2,               /* per this many threads, */
    MERGE_SCALE = 8,               /* up to this many times (thread_scale) */
    MAX_BLOCK = 4 << 20,           /* a text block, per MERGE_CORES threads */
    MIN_BLOCK = 4 << 10,
    MIN_BUDGET = 64 << 10,
    FD_SPARE = 4,                  /* descriptors kept free of inputs and runs: the
                                    * output's two, a run being written, and one for
                                    * a moment (an input's spooled copy) */
    READ_AHEAD_THREADS = 4,        /* merge inputs read ahead from this many threads */
    THREAD_SHARE = 8,              /* the threads' stacks take at most 1/this of the
                                    * budget, and the writer's buffers as much */
    WARM_LINE_BYTES = 4,           /* bytes a line, for the keys a size may hold: a short
                                    * count errs toward starting CUDA, which costs a
                                    * thread during a run long enough to hide it */
    AHEAD_TOUCHERS = 0,            /* threads faulting the output's pages in ahead: the
                                    * CPU's threads are busy parsing and sorting then */
};

size_t gm_default_budget(void)
{
    /* default_sort_size of coreutils' sort.c. */
    double size = 1e300;
    struct rlimit rl;
    if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        size = (double)rl.rlim_cur;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < size)
        size = (double)rl.rlim_cur;
    size /= 2;
    if (getrlimit(RLIMIT_RSS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (double)rl.rlim_cur / 16 * 15 < size)
        size = (double)rl.rlim_cur / 16 * 15;
    double page = (double)sysconf(_SC_PAGESIZE);
    double avail = (double)sysconf(_SC_AVPHYS_PAGES) * page;
    double total = (double)sysconf(_SC_PHYS_PAGES) * page;
    double mem = avail > total / 8 ? avail : total / 8;
    if (total > 0 && total * 0.75 < size)
        size = total * 0.75; /* a quarter of the memory left to everything else */
    if (mem > 0 && mem < size)
        size = mem;
    if (size > (double)(SIZE_MAX / 4))
        size = (double)(SIZE_MAX / 4);
    return size < MIN_BUDGET ? MIN_BUDGET : (size_t)size;
}

static size_t clamp_size(size_t v, size_t lo, size_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* How many times a block and a merge's buffers grow with the threads: once per
 * MERGE_CORES threads, up to MERGE_SCALE. A block is read and parsed by all the
 * threads in fork-joins, and a merge round fills and drains the writer's pipeline,
 * so with more threads they are larger and those fixed costs stay small beside
 * the work. */
static size_t thread_scale(int nthreads)
{
    size_t scale = nthreads > MERGE_CORES ? (size_t)(nthreads / MERGE_CORES) : 1;
    return scale < MERGE_SCALE ? scale : MERGE_SCALE;
}

/* The sort's text block: a sixteenth of the budget, within MIN_BLOCK and
 * MAX_BLOCK times thread_scale. */
static size_t sort_block(size_t budget, int nthreads)
{
    return clamp_size(budget / 16, MIN_BLOCK, (size_t)MAX_BLOCK * thread_scale(nthreads));
}

int64_t gm_sort_chunk_keys(size_t budget, gm_width width)
{
    /* Half the budget for the chunk and the engine's scratch of the same size;
     * the rest for the text blocks, the staging area and the writer. */
    if (budget < MIN_BUDGET)
        budget = MIN_BUDGET;
    int64_t k = (int64_t)(budget / 4 / width);
    return k > 0 ? k : 1;
}

/* ------------------------------------------------------------------ context */

struct source {
    gm_input *in;  /* a text input, or */
    gm_runfile *run;   /* a run */
    gm_keybuf kb;
    int eof;
};

struct stream {
    const gm_config *cfg;
    gm_op op;
    int nthreads;
    int64_t mask;
    char *const *names;
    int nnames;
    gm_input *ins;
    unsigned char *open, *drained;
    int fan_in;
    size_t budget;
    size_t merge_block;      /* text block of a merged input */
    int64_t run_read_keys;   /* keys read from a run at a time */
    gm_writer *w;
    gm_stream_stats *stats;
    /* progress */
    double started, last_said;
    int64_t total_bytes;     /* -1: not known */
    int64_t done_bytes;      /* of inputs already closed */
    int runs_merged;
    /* the GPU's start-up */
    int warm;                /* begun (gm_engine_warm) */
    int device_known;        /* --device=gpu's early check passed (or not a GPU run) */
    int64_t device_cap[2];   /* gm_engine_max_chunk for int32 and int64, once known */
    /* the block whose line declined the integer path (GM_ERECORDS), and its input */
    gm_input *declined;
    gm_block declined_block;
};

/* --device=gpu's early failure (gm_engine_prepare): asked without waiting after
 * every block read, waited for before the first engine call, the first output
 * byte and the end; once passed, the GPU's chunk limits are known. */
static int device_check(struct stream *s, int wait, gm_status *st)
{
    if (s->device_known)
        return GM_OK;
    int done = 0;
    double a = gm_now();
    if (wait)
        gm_trace_push("waiting for CUDA's start-up");
    int rc = gm_engine_prepare(s->cfg, wait, &done, st);
    if (wait)
        gm_trace_pop();
    s->stats->startup_wait += gm_now() - a;
    if (rc || !done)
        return rc;
    s->device_known = 1;
    s->device_cap[0] = gm_engine_max_chunk(s->cfg, GM_I32);
    s->device_cap[1] = gm_engine_max_chunk(s->cfg, GM_I64);
    return GM_OK;
}

static int64_t bytes_read(const struct stream *s)
{
    int64_t b = s->done_bytes;
    for (int i = 0; i < s->nnames; i++)
        if (s->open[i])
            b += s->ins[i].bytes;
    return b;
}

/* One --progress line, at most four a second (or now, when final). */
static void progress(struct stream *s, int final)
{
    if (!s->cfg->progress)
        return;
    double now = gm_now();
    if (!final && now - s->last_said < 0.25)
        return;
    s->last_said = now;
    double mb = (double)bytes_read(s) / 1e6, secs = now - s->started;
    char total[64] = "";
    if (s->total_bytes > 0)
        snprintf(total, sizeof total, " of %.1f MB (%.0f%%)", (double)s->total_bytes / 1e6,
                 100.0 * mb * 1e6 / (double)s->total_bytes);
    char runs[96] = "";
    if (s->stats->runs > 0)
        snprintf(runs, sizeof runs, ", %d run%s written, %d merged", s->stats->runs,
                 s->stats->runs == 1 ? "" : "s", s->runs_merged);
    gm_say(s->cfg, GM_MSG_PROGRESS, "progress: read %.1f MB%s%s, %.0f MB/s", mb, total, runs,
           secs > 0 ? mb / secs : 0.0);
}

static int input_open(struct stream *s, int i, size_t block, gm_status *st)
{
    gm_input *in = &s->ins[i];
    double a = gm_now();
    int rc = GM_OK;
    if (!s->open[i]) {
        rc = gm_input_open(in, s->names[i], st);
        if (rc)
            gm_input_close(in);
        else
            s->open[i] = 1;
        in->drained = s->drained[i];
    }
    in->zero = s->cfg->zero_terminated;
    in->line_max = s->budget; /* a line must fit in the memory budget */
    in->ahead = s->op == GM_OP_MERGE && s->nthreads >= READ_AHEAD_THREADS;
    in->threads = s->nthreads; /* --parallel governs the preads too */
    if (!rc)
        rc = gm_input_start(in, block, st);
    s->stats->open += gm_now() - a;
    return rc;
}

static void input_close(struct stream *s, int i)
{
    if (!s->open[i])
        return;
    double a = gm_now();
    s->done_bytes += s->ins[i].bytes;
    gm_input_close(&s->ins[i]);
    s->open[i] = 0;
    s->stats->cleanup += gm_now() - a;
}

/* ------------------------------------------------------------------ merge */

/* Number of leading keys of kb that are at or before bound in the order. */
static int64_t upper_bound(const gm_keybuf *kb, int64_t bound, int64_t mask)
{
    int64_t lo = 0, hi = kb->n, b = bound ^ mask;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if ((gm_keybuf_get(kb, mid) ^ mask) <= b)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The read and parse stages for one block of in (keys onto kb), timed apart; then
 * whether --device=gpu's start-up has failed meanwhile (its error first). */
static int read_keys(struct stream *s, gm_input *in, const gm_parse_opts *o, gm_keybuf *kb,
                     gm_status *st)
{
    int64_t before = kb ? kb->n : 0;
    gm_block b;
    double a = gm_now();
    gm_trace_push("read");
    int rc = gm_input_next(in, &b, st);
    gm_trace_pop();
    double c = gm_now();
    s->stats->read += c - a;
    if (!rc) {
        gm_trace_push("parse");
        rc = gm_input_parse_block(in, &b, o, kb, st);
        gm_trace_pop();
        s->stats->parse += gm_now() - c;
        if (rc == GM_ERECORDS) {
            s->declined = in;
            s->declined_block = b;
            return rc;
        }
    }
    s->stats->keys += kb ? kb->n - before : 0;
    int drc = device_check(s, rc != GM_OK, st);
    return drc ? drc : rc;
}

/* Reads into src until it holds a key or is at its end. */
static int refill(struct stream *s, struct source *src, gm_status *st)
{
    gm_parse_opts o = { s->nthreads, 1, s->mask, 0, !s->cfg->strict };
    while (src->kb.n == 0 && !src->eof) {
        int rc;
        if (src->in) {
            rc = read_keys(s, src->in, &o, &src->kb, st);
            if (rc == GM_DISORDER) /* an unsorted merge input is an error, not a finding */
                rc = st->code = GM_EINPUT;
            src->eof = src->in->eof;
        } else {
            double a = gm_now();
            rc = gm_run_read(src->run, &src->kb, s->run_read_keys, st);
            s->stats->spill += gm_now() - a;
            src->eof = src->run->eof;
        }
        if (rc)
            return rc;
    }
    return GM_OK;
}

typedef int (*sink_fn)(struct stream *s, void *ctx, const gm_keys *keys, gm_status *st);

static int to_writer(struct stream *s, void *ctx, const gm_keys *keys, gm_status *st)
{
    (void)ctx;
    int rc = device_check(s, 1, st); /* before the first byte */
    if (rc)
        return rc;
    double a = gm_now();
    gm_trace_push("format and write");
    rc = gm_writer_put(s->w, keys, st);
    gm_trace_pop();
    s->stats->write += gm_now() - a;
    return rc;
}

static int to_run(struct stream *s, void *ctx, const gm_keys *keys, gm_status *st)
{
    double a = gm_now();
    gm_trace_push("spill");
    int rc = gm_run_put(ctx, keys, st);
    gm_trace_pop();
    s->stats->spill += gm_now() - a;
    return rc;
}

void gm_stream_tally(gm_stream_stats *t, gm_op op, int64_t n, gm_width w,
                     const gm_engine_report *rep)
{
    int gpu = rep->device == GM_DEVICE_GPU;
    t->calls[op == GM_OP_MERGE][gpu]++;
    t->startup_wait += rep->startup_wait;
    t->h2d += rep->h2d;
    t->kernel_s += rep->kernel_s;
    t->d2h += rep->d2h;
    if (!t->used_engine || n >= t->rep_keys) {
        t->rep = *rep;
        t->rep_keys = n;
    }
    t->used_engine = 1;
    if (w > t->width)
        t->width = w;
}

static int run_engine(struct stream *s, gm_op op, gm_keys *keys, void **scratch,
                      const int64_t *offsets, int nruns, gm_status *st)
{
    int rc = device_check(s, 1, st);
    if (rc)
        return rc;
    gm_engine_report rep;
    int64_t n = keys->n;
    double a = gm_now();
    gm_trace_push(op == GM_OP_MERGE ? "merge" : "sort");
    rc = gm_engine_run(s->cfg, op, keys, scratch, offsets, nruns, s->nthreads, &rep, st);
    gm_trace_pop();
    /* the wait for CUDA's start-up inside the call is its own stage */
    s->stats->engine += gm_now() - a - rep.startup_wait;
    gm_stream_tally(s->stats, op, n, keys->width, &rep);
    return rc;
}

/* The calling thread's time in the stages so far. */
static double staged(const gm_stream_stats *t)
{
    return t->open + t->read + t->parse + t->startup_wait + t->engine + t->spill + t->write +
           t->finish + t->cleanup;
}

/* Merges the k sources into sink, round by round (see stream.h). */
static int merge_sources(struct stream *s, struct source *src, int k, sink_fn sink,
                         void *sink_ctx, gm_status *st)
{
    int64_t *cnt = calloc((size_t)k, sizeof *cnt);
    int64_t *offsets = calloc((size_t)k + 1, sizeof *offsets);
    void *mbuf = NULL, *sbuf = NULL;
    size_t mcap = 0;
    int rc = cnt && offsets ? GM_OK : gm_fail(st, GM_ENOMEM, "out of memory merging");
    while (!rc) {
        double round = gm_now(), before = staged(s->stats);
        for (int i = 0; i < k && !rc; i++)
            rc = refill(s, &src[i], st);
        if (rc)
            break;
        int have_bound = 0;
        int64_t bound = 0;
        for (int i = 0; i < k; i++) {
            if (src[i].eof)
                continue;
            int64_t last = gm_keybuf_get(&src[i].kb, src[i].kb.n - 1);
            if (!have_bound || (last ^ s->mask) < (bound ^ s->mask))
                bound = last;
            have_bound = 1;
        }
        int64_t total = 0;
        int nonempty = 0, only = -1;
        gm_width w = GM_I32;
        for (int i = 0; i < k; i++) {
            cnt[i] = have_bound ? upper_bound(&src[i].kb, bound, s->mask) : src[i].kb.n;
            total += cnt[i];
            if (cnt[i] > 0) {
                nonempty++;
                only = i;
                if (src[i].kb.width == GM_I64)
                    w = GM_I64;
            }
        }
        if (total == 0)
            break; /* every source is at its end */
        gm_keys keys;
        if (nonempty == 1) {
            keys = (gm_keys){ src[only].kb.data, cnt[only], src[only].kb.width };
        } else {
            size_t bytes = (size_t)total * w;
            if (bytes > mcap) {
                size_t want = bytes + bytes / 2;
                gm_buf_free(mbuf);
                gm_buf_free(sbuf);
                sbuf = NULL;
                mbuf = gm_buf_alloc(want, "merging", st);
                sbuf = mbuf ? gm_buf_alloc(want, "merging", st) : NULL;
                mcap = sbuf ? want : 0;
                if (!sbuf) {
                    rc = GM_ENOMEM;
                    break;
                }
            }
            int a = -1, b = -1;
            for (int i = 0; i < k; i++) {
                if (cnt[i] > 0 && a < 0)
                    a = i;
                else if (cnt[i] > 0)
                    b = i;
            }
            if (nonempty == 2 && s->cfg->device != GM_DEVICE_GPU &&
                src[a].kb.width == w && src[b].kb.width == w) {
                /* Two runs on the CPU (what the engine picks for a round of this
                 * size): merged straight from the buffers, without a gather. */
                double t0 = gm_now();
                gm_trace_push("merge");
                gm_cpu_merge2(w, src[a].kb.data, cnt[a], src[b].kb.data, cnt[b], mbuf,
                              s->cfg->reverse, s->nthreads);
                gm_trace_pop();
                s->stats->engine += gm_now() - t0;
                gm_engine_report rep;
                memset(&rep, 0, sizeof rep);
                rep.device = GM_DEVICE_CPU;
                snprintf(rep.reason, sizeof rep.reason, "%s",
                         s->cfg->device == GM_DEVICE_CPU ? "--device=cpu"
                                                         : "auto: two runs, merged on the CPU");
                gm_stream_tally(s->stats, GM_OP_MERGE, total, w, &rep);
                keys = (gm_keys){ mbuf, total, w };
                goto merged;
            }
            gm_keybuf m = { mbuf, 0, (int64_t)(mcap / w), 0, w };
            int nr = 0;
            for (int i = 0; i < k && !rc; i++) {
                if (cnt[i] == 0)
                    continue;
                offsets[nr++] = m.n;
                rc = gm_keybuf_append(&m, src[i].kb.data, cnt[i], src[i].kb.width, st);
            }
            offsets[nr] = m.n;
            if (rc)
                break;
            keys = (gm_keys){ mbuf, total, w };
            rc = run_engine(s, GM_OP_MERGE, &keys, &sbuf, offsets, nr, st);
            if (rc)
                break;
            mbuf = keys.data;
        }
    merged:
        rc = sink(s, sink_ctx, &keys, st);
        for (int i = 0; i < k; i++)
            gm_keybuf_consume(&src[i].kb, cnt[i]);
        progress(s, 0);
        /* the round's bounds, gathers and moves are the merge's time too */
        s->stats->engine += gm_now() - round - (staged(s->stats) - before);
    }
    double a = gm_now();
    gm_buf_free(mbuf);
    gm_buf_free(sbuf);
    free(cnt);
    free(offsets);
    s->stats->cleanup += gm_now() - a;
    return rc;
}

static void free_sources(struct source *src, int k)
{
    for (int i = 0; i < k; i++)
        gm_keybuf_free(&src[i].kb);
    free(src);
}

/* Merges the runs (removing them) into sink; more than the fan-in are merged in
 * passes, each merging groups of fan_in runs into one new run. */
static int merge_runs(struct stream *s, gm_runfile *runs, int nruns, gm_status *st)
{
    int rc = GM_OK;
    while (!rc && nruns > s->fan_in) {
        int out = 0;
        for (int g = 0; g < nruns; g += s->fan_in) {
            int k = nruns - g < s->fan_in ? nruns - g : s->fan_in;
            gm_runfile next;
            memset(&next, 0, sizeof next);
            next.fd = -1;
            if (!rc)
                rc = gm_run_create(&next, s->cfg->tmpdir, st);
            struct source *src = rc ? NULL : calloc((size_t)k, sizeof *src);
            if (!rc && !src)
                rc = gm_fail(st, GM_ENOMEM, "out of memory merging");
            for (int i = 0; i < k && src; i++)
                src[i].run = &runs[g + i];
            if (!rc)
                rc = merge_sources(s, src, k, to_run, &next, st);
            if (src)
                free_sources(src, k);
            for (int i = 0; i < k; i++)
                gm_run_remove(&runs[g + i]);
            s->runs_merged += k;
            if (!rc)
                rc = gm_run_rewind(&next, st);
            runs[out++] = next; /* slot out <= g is free: its run is removed */
        }
        s->stats->passes++;
        nruns = out;
    }
    if (!rc) {
        struct source *src = calloc((size_t)nruns, sizeof *src);
        if (!src)
            rc = gm_fail(st, GM_ENOMEM, "out of memory merging");
        for (int i = 0; i < nruns && src; i++)
            src[i].run = &runs[i];
        if (!rc)
            rc = merge_sources(s, src, nruns, to_writer, NULL, st);
        if (src)
            free_sources(src, nruns);
        s->stats->passes++;
        s->runs_merged += nruns;
    }
    for (int i = 0; i < nruns; i++)
        gm_run_remove(&runs[i]);
    return rc;
}

/* The records merge goes on where a line declined the integer merge. */
static int merge_handover(struct stream *s, struct source *src, int n, gm_status *st)
{
    gm_input **ins = calloc((size_t)n, sizeof *ins);
    gm_keybuf **kbs = calloc((size_t)n, sizeof *kbs);
    int rc = ins && kbs ? GM_OK : gm_fail(st, GM_ENOMEM, "out of memory merging");
    int at = 0;
    for (int i = 0; i < n && !rc; i++) {
        ins[i] = src[i].in;
        kbs[i] = &src[i].kb;
        at = ins[i] == s->declined ? i : at;
    }
    if (!rc) {
        gm_say(s->cfg, GM_MSG_VERBOSE, "path: records from %s line %lld on (%s)",
               s->declined->shown, (long long)s->declined->line + 1,
               "a line that is not a canonical integer");
        rc = device_check(s, 1, st);
    }
    s->stats->handed_over = 1;
    if (!rc)
        rc = gm_handover_merge(s->cfg, ins, kbs, n, at, &s->declined_block, s->w, st);
    free(ins);
    free(kbs);
    return rc;
}

static int merge_op(struct stream *s, gm_status *st)
{
    int n = s->nnames, rc = GM_OK;
    if (n <= s->fan_in) {
        struct source *src = calloc((size_t)n, sizeof *src);
        if (!src)
            return gm_fail(st, GM_ENOMEM, "out of memory merging");
        for (int i = 0; i < n && !rc; i++) {
            src[i].in = &s->ins[i];
            rc = input_open(s, i, s->merge_block, st);
        }
        if (!rc)
            rc = merge_sources(s, src, n, to_writer, NULL, st);
        if (rc == GM_ERECORDS)
            rc = merge_handover(s, src, n, st);
        free_sources(src, n);
        return rc;
    }
    if (!s->cfg->strict) { /* batches of lines are the records path's, from the start */
        gm_say(s->cfg, GM_MSG_VERBOSE, "path: records (a merge of more inputs than the "
                                       "fan-in, in batches)");
        s->stats->handed_over = 1;
        return gm_handover_start(s->cfg, GM_OP_MERGE, s->ins, s->open, s->names, s->nnames,
                                 s->w, st);
    }
    /* Batches of fan_in inputs into runs, then the runs. */
    int nruns = (n + s->fan_in - 1) / s->fan_in;
    gm_runfile *runs = calloc((size_t)nruns, sizeof *runs);
    if (!runs)
        return gm_fail(st, GM_ENOMEM, "out of memory merging");
    int made = 0;
    for (int g = 0; g < n && !rc; g += s->fan_in) {
        int k = n - g < s->fan_in ? n - g : s->fan_in;
        struct source *src = calloc((size_t)k, sizeof *src);
        if (!src) {
            rc = gm_fail(st, GM_ENOMEM, "out of memory merging");
            break;
        }
        rc = gm_run_create(&runs[made], s->cfg->tmpdir, st);
        if (!rc) {
            made++;
            s->stats->runs++;
        }
        for (int i = 0; i < k && !rc; i++) {
            src[i].in = &s->ins[g + i];
            rc = input_open(s, g + i, s->merge_block, st);
        }
        if (!rc)
            rc = merge_sources(s, src, k, to_run, &runs[made - 1], st);
        for (int i = 0; i < k; i++)
            input_close(s, g + i);
        free_sources(src, k);
        if (!rc)
            rc = gm_run_rewind(&runs[made - 1], st);
    }
    s->stats->passes++;
    if (rc) {
        for (int i = 0; i < made; i++)
            gm_run_remove(&runs[i]);
    } else {
        rc = merge_runs(s, runs, made, st);
    }
    free(runs);
    return rc;
}

/* ------------------------------------------------------------------ sort */

/* Sorts the first count keys of kb (using *scratch) and writes them as a new run;
 * the rest moves to the front of kb. */
static int spill(struct stream *s, gm_keybuf *kb, int64_t count, void **scratch,
                 size_t *scratch_bytes, gm_runfile **runs, int *nruns, int *cap, gm_status *st)
{
    size_t need = (size_t)count * kb->width;
    if (need > *scratch_bytes) {
        gm_buf_free(*scratch);
        *scratch = gm_buf_alloc(need, "sorting", st);
        *scratch_bytes = *scratch ? need : 0;
        if (!*scratch)
            return GM_ENOMEM;
    }
    if (*nruns == *cap) {
        int c = *cap ? *cap * 2 : 16;
        gm_runfile *r = realloc(*runs, (size_t)c * sizeof *r);
        if (!r)
            return gm_fail(st, GM_ENOMEM, "out of memory sorting");
        *runs = r;
        *cap = c;
    }
    gm_keys keys = { kb->data, count, kb->width };
    void *other = *scratch;
    int rc = run_engine(s, GM_OP_SORT, &keys, &other, NULL, 1, st);
    if (rc)
        return rc;
    gm_runfile *r = &(*runs)[*nruns];
    rc = gm_run_create(r, s->cfg->tmpdir, st);
    if (rc)
        return rc;
    (*nruns)++;
    s->stats->runs++;
    double a = gm_now();
    rc = gm_run_put(r, &keys, st);
    if (!rc)
        rc = gm_run_rewind(r, st);
    s->stats->spill += gm_now() - a;
    /* The keys' buffer stays kb's; the other one is the scratch again. */
    *scratch = keys.data == kb->data ? other : keys.data;
    gm_keybuf_consume(kb, count);
    progress(s, 0);
    return rc;
}

static int sort_op(struct stream *s, gm_status *st)
{
    /* The GPU may take the text (pipes are read whole for it); when it does not,
     * every input is where it was, or has its bytes back. */
    int rc = gm_text_sort(s->cfg, s->ins, s->nnames, s->nthreads, s->budget, s->w, s->stats, st);
    if (rc != GM_ETEXT)
        return rc;
    gm_keybuf kb = { NULL, 0, 0, 0, GM_I32 };
    void *scratch = NULL;
    size_t scratch_bytes = 0;
    gm_runfile *runs = NULL;
    int nruns = 0, cap = 0;
    rc = GM_OK;
    size_t block = sort_block(s->budget, s->nthreads);
    gm_parse_opts o = { s->nthreads, 0, s->mask, 0, !s->cfg->strict };
    kb.limit = gm_sort_chunk_keys(s->budget, GM_I32) + (int64_t)block;
    int sized = 0, handed = 0;
    for (int i = 0; i < s->nnames && !rc; i++) {
        rc = input_open(s, i, block, st);
        while (!rc && !s->ins[i].eof) {
            rc = read_keys(s, &s->ins[i], &o, &kb, st);
            if (!rc && !s->warm && s->total_bytes < 0) /* a pipe: the keys so far */
                s->warm = gm_engine_warm(s->cfg, GM_OP_SORT, kb.n, s->nthreads);
            if (!rc && !sized && s->total_bytes > 0 && kb.n > 0) {
                /* Size the chunk once from the first block's keys per byte: a
                 * buffer that grows as it fills is moved and loses its huge pages. */
                double per_byte = (double)kb.n / (double)s->ins[i].bytes;
                int64_t want = (int64_t)(per_byte * 1.05 * (double)s->total_bytes) + (int64_t)block;
                if (want > kb.limit)
                    want = kb.limit;
                if (want > kb.cap)
                    rc = gm_keybuf_reserve(&kb, want - kb.n, kb.width, st);
                sized = 1;
            }
            int64_t chunk = gm_sort_chunk_keys(s->budget, kb.width);
            /* A chunk the GPU sorts must also fit in its memory (known once the
             * start-up is: it is waited for before a chunk that may be cut). */
            if (!rc && !s->device_known && kb.n >= chunk)
                rc = device_check(s, 1, st);
            int64_t device = s->device_cap[kb.width == GM_I64];
            if (device > 0 && device < chunk)
                chunk = device;
            while (!rc && (kb.n > chunk || (kb.n == chunk && !s->ins[i].eof)))
                rc = spill(s, &kb, chunk, &scratch, &scratch_bytes, &runs, &nruns, &cap, st);
            progress(s, 0);
        }
        if (rc == GM_ERECORDS) {
            gm_say(s->cfg, GM_MSG_VERBOSE, "path: records from %s line %lld on (%s)",
                   s->ins[i].shown, (long long)s->ins[i].line + 1,
                   "a line that is not a canonical integer");
            rc = device_check(s, 1, st);
            s->stats->handed_over = 1;
            if (!rc)
                rc = gm_handover_sort(s->cfg, s->ins, s->open, s->names, s->nnames, i,
                                      &s->declined_block, &kb, runs, nruns, s->w, st);
            handed = 1;
            break;
        }
        input_close(s, i);
    }
    if (handed)
        goto clean;
    if (!rc) /* the GPU's chunk limit, had the start-up ended after the last block */
        rc = device_check(s, 1, st);
    int64_t device = s->device_cap[kb.width == GM_I64];
    while (!rc && device > 0 && kb.n > device)
        rc = spill(s, &kb, device, &scratch, &scratch_bytes, &runs, &nruns, &cap, st);
    if (!rc && nruns == 0) {
        /* Everything fits: sort in memory and write, no temporary file. */
        size_t need = (size_t)kb.n * kb.width;
        if (need > scratch_bytes) {
            gm_buf_free(scratch);
            scratch = gm_buf_alloc(need, "sorting", st);
            if (!scratch)
                rc = GM_ENOMEM;
        }
        gm_keys keys = { kb.data, kb.n, kb.width };
        if (!rc)
            rc = run_engine(s, GM_OP_SORT, &keys, &scratch, NULL, 1, st);
        if (!rc) {
            /* The sort's other buffer goes back before the output is written, so
             * that the output's pages (a file's page cache, a pipe's reader) can
             * reuse its memory rather than the system's fresh pages. */
            double a = gm_now();
            gm_buf_free(scratch);
            scratch = NULL;
            s->stats->cleanup += gm_now() - a;
        }
        if (!rc) {
            s->w->unique = s->cfg->unique && !s->stats->rep.deduplicated;
            rc = to_writer(s, NULL, &keys, st);
        }
        kb.data = keys.data;
        if (keys.width > s->stats->width)
            s->stats->width = keys.width;
    } else if (!rc) {
        if (kb.n > 0)
            rc = spill(s, &kb, kb.n, &scratch, &scratch_bytes, &runs, &nruns, &cap, st);
        double a = gm_now();
        gm_keybuf_free(&kb);
        gm_buf_free(scratch);
        scratch = NULL;
        s->stats->cleanup += gm_now() - a;
        if (!rc) {
            rc = merge_runs(s, runs, nruns, st);
            nruns = 0;
        }
    }
clean:;
    double a = gm_now();
    gm_trace_push("clean-up");
    for (int i = 0; i < nruns; i++)
        gm_run_remove(&runs[i]);
    free(runs);
    gm_keybuf_free(&kb);
    gm_buf_free(scratch);
    gm_trace_pop();
    s->stats->cleanup += gm_now() - a;
    return rc;
}

/* ------------------------------------------------------------------ check */

static int check_op(struct stream *s, gm_status *st)
{
    gm_parse_opts o = { s->nthreads, 1, s->mask, s->cfg->unique, !s->cfg->strict };
    int rc = GM_OK;
    for (int i = 0; i < s->nnames && !rc; i++) {
        rc = input_open(s, i, sort_block(s->budget, s->nthreads), st);
        while (!rc && !s->ins[i].eof) {
            rc = read_keys(s, &s->ins[i], &o, NULL, st);
            progress(s, 0);
        }
        if (rc == GM_ERECORDS) {
            gm_say(s->cfg, GM_MSG_VERBOSE, "path: records from %s line %lld on (%s)",
                   s->ins[i].shown, (long long)s->ins[i].line + 1,
                   "a line that is not a canonical integer");
            s->stats->handed_over = 1;
            rc = gm_handover_check(s->cfg, &s->ins[i], &s->declined_block, st);
        }
        input_close(s, i);
    }
    return rc;
}

/* ------------------------------------------------------------------ entry */

/* Whether fd is not a regular file: a pipe, socket or device, which is not
 * closed before its turn (what it holds would be lost). */
static int is_stream(int fd)
{
    struct stat sb;
    return fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode);
}

int gm_stream_run(gm_op op, const gm_config *cfg, char *const *names, int nnames,
                  gm_stream_stats *stats, gm_status *st)
{
    double opening = gm_now();
    struct stream s;
    memset(&s, 0, sizeof s);
    memset(stats, 0, sizeof *stats);
    stats->width = GM_I32;
    s.cfg = cfg;
    s.op = op;
    s.nthreads = cfg->threads > 0 ? cfg->threads : gm_cpu_count();
    /* --device=gpu: CUDA's start-up begins now, beside everything that follows */
    s.warm = gm_engine_warm(cfg, op, -1, s.nthreads);
    gm_trace_push("open");
    s.mask = cfg->reverse ? -1 : 0;
    s.names = names;
    s.nnames = nnames;
    s.stats = stats;
    s.budget = cfg->buffer_size ? cfg->buffer_size : gm_default_budget();
    if (s.budget < MIN_BUDGET)
        s.budget = MIN_BUDGET;
    stats->budget = s.budget;
    /* What the threads hold counts against the budget: as many threads as their
     * stacks' share pays for, and the writer's buffers within a share as large
     * (gm_writer.mem), so that any --parallel runs under a limit on the address
     * space (ulimit -v), whose half is the default budget. */
    size_t most_threads = s.budget / THREAD_SHARE / GM_THREAD_STACK;
    if ((size_t)s.nthreads > most_threads)
        s.nthreads = most_threads > 1 ? (int)most_threads : 1;
    stats->threads = s.nthreads;
    /* A merge pass holds its fan-in of inputs or runs open beside the spare;
     * every other input and run is closed until its pass. */
    s.fan_in = cfg->batch_size >= 2 ? cfg->batch_size : DEFAULT_FAN_IN;
    int fds = gm_fd_room() - FD_SPARE;
    if (cfg->device != GM_DEVICE_CPU && gm_gpu_driver_loaded() && fds >= GM_GPU_START_FDS + 2)
        fds -= GM_GPU_START_FDS; /* CUDA may start beside the merge (gpu.h) */
    if (s.fan_in > fds)
        s.fan_in = fds > 2 ? fds : 2;
    int k = nnames < s.fan_in ? nnames : s.fan_in;
    /* A merge round's buffers grow with the threads, as far as the budget allows. */
    size_t scale = thread_scale(s.nthreads);
    size_t merge_mem = (size_t)MERGE_MEMORY * scale;
    if (s.budget < merge_mem)
        merge_mem = s.budget;
    s.merge_block = clamp_size(merge_mem / (6 * (size_t)(k > 0 ? k : 1)), MIN_BLOCK,
                               (size_t)MAX_BLOCK * scale);
    s.run_read_keys = (int64_t)clamp_size(s.budget / (8 * 8 * (size_t)s.fan_in), 1024, 1 << 20);
    s.started = s.last_said = gm_now();

    s.ins = calloc((size_t)nnames, sizeof *s.ins);
    s.open = calloc((size_t)nnames, 1);
    s.drained = calloc((size_t)nnames, 1);
    if (!s.ins || !s.open || !s.drained) {
        free(s.ins);
        free(s.open);
        free(s.drained);
        gm_trace_pop();
        return gm_fail(st, GM_ENOMEM, "out of memory");
    }
    /* A second "-" reads what the first left: nothing. */
    int have_stdin = 0;
    for (int i = 0; i < nnames; i++) {
        if (strcmp(names[i], "-") == 0) {
            s.drained[i] = (unsigned char)have_stdin;
            have_stdin = 1;
        }
    }
    /* Every input is opened before anything is written, so a missing one stops
     * the run first. Those of a merge's first pass stay open (all of them when
     * they are one pass, as an input that is the output needs), and as many of a
     * sort's or a check's as descriptors allow (a sort reads them one at a time);
     * the rest are closed and opened again by name when their turn comes, but
     * for pipes and devices (streams), which would lose what they hold. */
    int keep = op == GM_OP_MERGE ? s.fan_in : fds, streams = 0;
    int rc = GM_OK;
    uint64_t regular_bytes = 0; /* bounds the output, for -o's space check */
    s.total_bytes = 0;
    for (int i = 0; i < nnames && !rc; i++) {
        rc = gm_input_open(&s.ins[i], names[i], st);
        if (rc) {
            gm_input_close(&s.ins[i]);
            break;
        }
        s.open[i] = 1;
        s.ins[i].drained = s.drained[i];
        int64_t size = -1; /* bytes from the current offset, when seekable */
        off_t at = lseek(s.ins[i].fd, 0, SEEK_CUR);
        off_t end = at >= 0 ? lseek(s.ins[i].fd, 0, SEEK_END) : -1;
        if (at >= 0 && end >= at && lseek(s.ins[i].fd, at, SEEK_SET) == at)
            size = end - at;
        if (size >= 0 && !s.drained[i])
            regular_bytes += (uint64_t)size + 1; /* + a last newline that may be missing */
        if (size < 0 || s.total_bytes < 0)
            s.total_bytes = -1;
        else if (!s.drained[i])
            s.total_bytes += size;
        if (i >= keep && s.ins[i].fd > STDIN_FILENO) {
            if (is_stream(s.ins[i].fd))
                streams++;
            else
                input_close(&s, i);
        }
    }
    if (streams > 0) {
        /* They take their descriptors from every pass, and the first keeps fewer. */
        s.fan_in = s.fan_in - streams > 2 ? s.fan_in - streams : 2;
        int held = op == GM_OP_MERGE ? s.fan_in : fds - streams;
        for (int i = held > 0 ? held : 0; i < keep && i < nnames; i++)
            if (s.open[i] && s.ins[i].fd > STDIN_FILENO && !is_stream(s.ins[i].fd))
                input_close(&s, i);
    }
    /* auto: CUDA's start-up begins now if the inputs' size makes the GPU a
     * candidate for the largest engine call (a pipe's sort asks again as it reads) */
    if (!rc && !s.warm && s.total_bytes > 0) {
        if (op == GM_OP_SORT && regular_bytes <= s.budget / 2) {
            /* the text path will take the sort or leave it: the same test, made now */
            s.warm = gm_engine_warm_text(cfg, regular_bytes, 0, s.nthreads);
        } else {
            int64_t bytes = s.total_bytes;
            if (op == GM_OP_MERGE && (int64_t)merge_mem < bytes)
                bytes = (int64_t)merge_mem; /* a round holds at most this much */
            int64_t keys = bytes / WARM_LINE_BYTES;
            int64_t chunk = gm_sort_chunk_keys(s.budget, GM_I32);
            if (op == GM_OP_SORT && keys > chunk)
                keys = chunk;
            s.warm = gm_engine_warm(cfg, op, keys, s.nthreads);
        }
    }
    gm_output out;
    gm_writer w;
    int have_out = 0;
    if (!rc && op != GM_OP_CHECK) {
        /* An output written in place goes to a spool in -T's folder first: an input
         * that is the output is read whole before any of its bytes changes. */
        rc = gm_output_open_sized(&out, cfg->output, regular_bytes, cfg->tmpdir, st);
        have_out = !rc;
        gm_writer_init(&w, &out, cfg->unique, s.nthreads);
        w.mem = s.budget / THREAD_SHARE;
        w.eol = cfg->zero_terminated ? '\0' : '\n';
        s.w = &w;
        /* The output is no longer than the regular inputs: its space is reserved
         * on a thread of its own while they are read, parsed and sorted. */
        if (!rc && regular_bytes > 0)
            rc = gm_writer_ahead(&w, regular_bytes, AHEAD_TOUCHERS, st);
    }
    gm_trace_pop();
    stats->open += gm_now() - opening;
    if (!rc) {
        if (op == GM_OP_MERGE)
            rc = merge_op(&s, st);
        else if (op == GM_OP_SORT)
            rc = sort_op(&s, st);
        else
            rc = check_op(&s, st);
    }
    if (!rc) /* --device=gpu without a GPU fails even where no engine ran */
        rc = device_check(&s, 1, st);
    /* The device's work is over: the last run's CUDA context goes away while the
     * output is finished (closing, renaming, freeing a replaced file's pages). */
    if (!rc && cfg->last) {
        gm_engine_release_begin();
        stats->teardown_begun = 1;
    }
    for (int i = 0; i < nnames; i++)
        input_close(&s, i);
    if (have_out) {
        double a = gm_now();
        gm_trace_push("finish the output");
        gm_status ignored;
        int frc = gm_writer_finish(&w, rc ? &ignored : st);
        if (!rc)
            rc = frc;
        if (!rc)
            rc = gm_output_commit(&out, st);
        gm_trace_pop();
        stats->finish += gm_now() - a;
        if (rc)
            gm_output_abort(&out);
        else if (out.file.kind == GM_OUTFILE_IN_PLACE)
            gm_say(cfg, GM_MSG_VERBOSE, "output: %s written in place: %s", out.shown,
                   out.file.why);
        if (!rc && w.map)
            gm_say(cfg, GM_MSG_VERBOSE, "output: %s written through a shared mapping",
                   out.shown);
        stats->format = w.stats.format_cpu / s.nthreads;
        stats->write_syscalls = w.stats.write;
        stats->ahead = w.stats.ahead;
        stats->touchers = w.stats.touchers;
        stats->mapped = w.map;
    }
    double a = gm_now();
    if (!rc)
        progress(&s, 1);
    free(s.ins);
    free(s.open);
    free(s.drained);
    stats->cleanup += gm_now() - a;
    return rc;
}
