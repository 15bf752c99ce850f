/*
 * progress.c - --progress (progress.h): the counters, the reporter thread and
 * its line, one fact after another:
 *
 *   progress: STAGE PCT%, RATE MB/s, S s left, R of T MB read, W MB written,
 *             N runs written, M merged
 *   progress: done 100%, in S s, RATE MB/s, R MB read, W MB written, ...
 *
 * The share is the work done over the work planned (share()): the inputs' bytes
 * read, sorted (a sort) and written (but for a check), each up to their size,
 * and the temporary runs' bytes written and read back. The stage follows from
 * the counters (a sort reads, then sorts, merges its runs and writes; a merge
 * merges; a check checks). A line is said only when what it says moved since
 * the last one, and the share said never falls.
 */
#define _GNU_SOURCE
#include "base/progress.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/util.h"

enum { TICK_NS = 250 * 1000 * 1000 }; /* the reporter's period: four lines a second */

static long tick_ns = TICK_NS;

void gm_progress_test_tick(int ms) { tick_ns = (long)ms * 1000 * 1000; }

/* The run's progress. The counters are atomic: the working threads add to them
 * (relaxed), the reporter reads them; the rest is the reporter's and
 * gm_progress_begin's, or under mu. */
static struct {
    const gm_config *cfg; /* where lines go (gm_say); gm_progress_begin */
    gm_op op;            /* sort, merge or check: the work planned; gm_progress_begin */
    int on;              /* a run reports (atomic); gm_progress_begin, gm_progress_end */
    double started;      /* when the run began (gm_now); gm_progress_begin */
    int64_t total;       /* the inputs' bytes, -1 unknown (atomic); gm_progress_total */
    int64_t read;        /* the inputs' bytes read (atomic); the readers */
    int64_t sorted;      /* the inputs' bytes whose chunk is sorted (atomic); the sorts */
    int64_t written;     /* the output's bytes written (atomic); the writers */
    int64_t run_bytes;   /* the temporary runs' bytes written (atomic); the run writers */
    int64_t run_read;    /* the runs' bytes read back (atomic); the merges' run readers */
    int read_done;       /* every input read (atomic); the sorts, at their inputs' end */
    int runs;            /* temporary runs begun (atomic); the sorts and merge passes */
    int merged;          /* runs taken into a merge (atomic); the merge passes */
    pthread_t thread;    /* the reporter; gm_progress_begin */
    int have_thread;     /* the reporter runs; gm_progress_begin, gm_progress_end */
    pthread_mutex_t mu;  /* guards stop, with cv */
    pthread_cond_t cv;   /* wakes the reporter to stop; gm_progress_end */
    int stop;            /* the reporter ends (under mu); gm_progress_end */
    char said[320];      /* the last line said, less its rate and time left; compose */
    int pct;             /* the share said last, which never falls; compose */
} P = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

/* The counters at one moment, as the reporter reads them. */
struct counts {
    int64_t total, read, sorted, written, run_bytes, run_read; /* P's */
    int read_done, runs, merged;                                /* P's */
};

static int64_t get64(int64_t *v) { return __atomic_load_n(v, __ATOMIC_RELAXED); }
static int get(int *v) { return __atomic_load_n(v, __ATOMIC_RELAXED); }

static void add64(int64_t *v, int64_t n)
{
    if (get(&P.on))
        __atomic_fetch_add(v, n, __ATOMIC_RELAXED);
}

void gm_progress_total(int64_t bytes) { __atomic_store_n(&P.total, bytes, __ATOMIC_RELAXED); }
void gm_progress_read(int64_t bytes) { add64(&P.read, bytes); }
void gm_progress_sorted(int64_t bytes) { add64(&P.sorted, bytes); }
void gm_progress_sorted_once(int64_t *bytes)
{
    add64(&P.sorted, *bytes);
    *bytes = 0;
}
void gm_progress_written(int64_t bytes) { add64(&P.written, bytes); }
void gm_progress_run_bytes(int64_t bytes) { add64(&P.run_bytes, bytes); }
void gm_progress_run_read(int64_t bytes) { add64(&P.run_read, bytes); }
void gm_progress_read_done(void) { __atomic_store_n(&P.read_done, 1, __ATOMIC_RELAXED); }
void gm_progress_run_written(void) { __atomic_fetch_add(&P.runs, 1, __ATOMIC_RELAXED); }
void gm_progress_runs_merged(int runs) { __atomic_fetch_add(&P.merged, runs, __ATOMIC_RELAXED); }

static struct counts counts_now(void)
{
    struct counts c = { get64(&P.total), get64(&P.read), get64(&P.sorted), get64(&P.written),
                        get64(&P.run_bytes), get64(&P.run_read), get(&P.read_done),
                        get(&P.runs), get(&P.merged) };
    return c;
}

/* What the run does now, from the counters: a sort's merge of runs begins
 * with the first run's bytes read back, its writing with the output's first. */
static const char *stage(const struct counts *c)
{
    if (P.op == GM_OP_CHECK)
        return "checking";
    if (P.op == GM_OP_MERGE)
        return "merging";
    if (!c->read_done && !(c->total > 0 && c->read >= c->total))
        return "reading";
    if (c->written > 0)
        return "writing";
    return c->run_read > 0 ? "merging runs" : "sorting";
}

static double upto(int64_t v, double most) { return (double)v < most ? (double)v : most; }

/* The share of the work done, 0 to 1, or -1 when the inputs' size is unknown:
 * the work done over the work planned, in bytes. Planned: the inputs' size once
 * for their read, once for their sort (a sort), once for their write (but for a
 * check), and each temporary run's bytes twice, written and read back. Until
 * a sort's merge reads its first run back, the runs to come are foreseen at the
 * run bytes that each input byte sorted has made so far. Done: each counter up
 * to what is planned for it. */
static double share(const struct counts *c)
{
    if (c->total <= 0)
        return -1;
    double t = (double)c->total, done = upto(c->read, t), planned = t;
    if (P.op != GM_OP_CHECK) {
        done += upto(c->written, t);
        planned += t;
    }
    double runs = (double)c->run_bytes;
    if (P.op == GM_OP_SORT) {
        done += upto(c->sorted, t);
        planned += t;
        if (c->run_read == 0 && c->sorted > 0 && c->sorted < c->total)
            runs = runs * t / (double)c->sorted;
    }
    done += (double)c->run_bytes + upto(c->run_read, (double)c->run_bytes);
    planned += 2 * runs;
    return done < planned ? done / planned : 1;
}

/* The line's counters into buf: the inputs' bytes read (of their size while
 * the run goes on), the output's written, the runs. */
static void say_counts(char *buf, size_t size, const struct counts *c, int final)
{
    int n;
    if (c->total > 0 && !final)
        n = snprintf(buf, size, "%.1f of %.1f MB read", (double)c->read / 1e6,
                     (double)c->total / 1e6);
    else
        n = snprintf(buf, size, "%.1f MB read", (double)c->read / 1e6);
    if (c->written > 0)
        n += snprintf(buf + n, size - (size_t)n, ", %.1f MB written", (double)c->written / 1e6);
    if (c->runs > 0)
        snprintf(buf + n, size - (size_t)n, ", %d run%s written, %d merged", c->runs,
                 c->runs == 1 ? "" : "s", c->merged);
}

/* The line now into buf: the stage and the share, the rate and the time left
 * (first, so that a line cut to a terminal's width keeps them), then the
 * counters. Returns whether it says something new (or is final): the stage,
 * the share or a counter moved. */
static int compose(char *buf, size_t size, int final)
{
    struct counts c = counts_now();
    double secs = gm_now() - P.started, f = share(&c);
    char head[64], counts[192];
    int n = snprintf(head, sizeof head, "progress: %s", final ? "done" : stage(&c));
    if (f >= 0) {
        int pct = final ? 100 : (int)(f * 100) > 99 ? 99 : (int)(f * 100);
        P.pct = pct > P.pct ? pct : P.pct;
        snprintf(head + n, sizeof head - (size_t)n, " %d%%", P.pct);
    }
    say_counts(counts, sizeof counts, &c, final);
    char said[sizeof head + sizeof counts + 2];
    snprintf(said, sizeof said, "%s, %s", head, counts);
    int fresh = final || strcmp(said, P.said) != 0;
    snprintf(P.said, sizeof P.said, "%s", said);
    /* the rate: the inputs' bytes whose work is done, a second */
    double done = f >= 0 ? f * (double)c.total : (double)c.read;
    double rate = secs > 0 ? done / 1e6 / secs : 0, left = f > 0 ? secs * (1 - f) / f : 0;
    if (final)
        snprintf(buf, size, "%s, in %.2f s, %.0f MB/s, %s", head, secs, rate, counts);
    else if (f > 0.01 && f < 1 && left >= 0.01)
        snprintf(buf, size, "%s, %.0f MB/s, %.*f s left, %s", head, rate,
                 left < 1 ? 2 : left < 10 ? 1 : 0, left, counts);
    else
        snprintf(buf, size, "%s, %.0f MB/s, %s", head, rate, counts);
    return fresh;
}

static void say(int final)
{
    char line[400];
    if (compose(line, sizeof line, final))
        gm_say(P.cfg, GM_MSG_PROGRESS, "%s", line);
}

/* The reporter: a line every tick while the counters move, until told to stop. */
static void *reporter(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&P.mu);
    while (!P.stop) {
        struct timespec due;
        clock_gettime(CLOCK_REALTIME, &due);
        due.tv_sec += tick_ns / 1000000000L;
        due.tv_nsec += tick_ns % 1000000000L;
        if (due.tv_nsec >= 1000000000L) {
            due.tv_sec++;
            due.tv_nsec -= 1000000000L;
        }
        int e = 0;
        while (!P.stop && e != ETIMEDOUT)
            e = pthread_cond_timedwait(&P.cv, &P.mu, &due);
        if (P.stop)
            break;
        pthread_mutex_unlock(&P.mu);
        say(0);
        pthread_mutex_lock(&P.mu);
    }
    pthread_mutex_unlock(&P.mu);
    return NULL;
}

void gm_progress_begin(const gm_config *cfg, gm_op op)
{
    __atomic_store_n(&P.on, 0, __ATOMIC_RELAXED);
    if (!cfg->progress || !cfg->message)
        return;
    P.cfg = cfg;
    P.op = op;
    P.started = gm_now();
    P.total = -1;
    P.read = P.sorted = P.written = P.run_bytes = P.run_read = 0;
    P.read_done = P.runs = P.merged = 0;
    P.said[0] = '\0';
    P.pct = 0;
    P.stop = 0;
    __atomic_store_n(&P.on, 1, __ATOMIC_RELAXED);
    pthread_attr_t attr;
    P.have_thread = pthread_attr_init(&attr) == 0;
    if (P.have_thread) {
        pthread_attr_setstacksize(&attr, GM_THREAD_STACK);
        P.have_thread = pthread_create(&P.thread, &attr, reporter, NULL) == 0;
        pthread_attr_destroy(&attr);
    }
}

void gm_progress_end(int ok)
{
    if (!get(&P.on))
        return;
    if (P.have_thread) {
        pthread_mutex_lock(&P.mu);
        P.stop = 1;
        pthread_cond_signal(&P.cv);
        pthread_mutex_unlock(&P.mu);
        pthread_join(P.thread, NULL);
        P.have_thread = 0;
    }
    if (ok)
        say(1);
    __atomic_store_n(&P.on, 0, __ATOMIC_RELAXED);
}
