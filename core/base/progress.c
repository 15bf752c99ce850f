/*
 * progress.c - --progress (progress.h): the counters, the reporter thread and
 * its line, one fact after another:
 *
 *   progress: STAGE PCT%, RATE MB/s, S s left, R of T MB read, W MB written,
 *             N runs written, M merged
 *   progress: done 100%, in S s, RATE MB/s, R MB read, W MB written, ...
 *
 * The stage follows from the counters (a sort reads, then sorts or merges its
 * runs, then writes; a merge merges; a check checks). A line is said only when
 * the counters moved since the last one, and the share said never falls.
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

static struct {
    const gm_config *cfg;
    gm_op op;
    int on;                      /* a run reports (atomic) */
    double started;
    int64_t total;               /* the counters (atomic) */
    int64_t read, written;
    int read_done, runs, merged;
    pthread_t thread;            /* the reporter */
    int have_thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    char said[320];              /* the last line said, less its rate and time left */
    int pct;                     /* the share said last */
} P = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static int64_t get64(int64_t *v) { return __atomic_load_n(v, __ATOMIC_RELAXED); }
static int get(int *v) { return __atomic_load_n(v, __ATOMIC_RELAXED); }

static void add64(int64_t *v, int64_t n)
{
    if (get(&P.on))
        __atomic_fetch_add(v, n, __ATOMIC_RELAXED);
}

void gm_progress_total(int64_t bytes) { __atomic_store_n(&P.total, bytes, __ATOMIC_RELAXED); }
void gm_progress_read(int64_t bytes) { add64(&P.read, bytes); }
void gm_progress_written(int64_t bytes) { add64(&P.written, bytes); }
void gm_progress_read_done(void) { __atomic_store_n(&P.read_done, 1, __ATOMIC_RELAXED); }
void gm_progress_run_written(void) { __atomic_fetch_add(&P.runs, 1, __ATOMIC_RELAXED); }
void gm_progress_runs_merged(int runs) { __atomic_fetch_add(&P.merged, runs, __ATOMIC_RELAXED); }

/* What the run does now, from the counters. */
static const char *stage(int64_t read, int64_t written, int64_t total)
{
    if (P.op == GM_OP_CHECK)
        return "checking";
    if (P.op == GM_OP_MERGE)
        return "merging";
    if (!get(&P.read_done) && !(total > 0 && read >= total))
        return "reading";
    if (written > 0)
        return "writing";
    return get(&P.runs) > get(&P.merged) ? "merging runs" : "sorting";
}

/* The share of the work done, 0 to 1, or -1 when the inputs' size is unknown:
 * the inputs read, and (but for a check) the output written, half each. */
static double share(int64_t read, int64_t written, int64_t total)
{
    if (total <= 0)
        return -1;
    double r = read < total ? (double)read / (double)total : 1;
    if (P.op == GM_OP_CHECK)
        return r;
    double w = written < total ? (double)written / (double)total : 1;
    return (r + w) / 2;
}

/* The line now into buf: the stage and the share, the rate and the time left
 * (first, so that a line cut to a terminal's width keeps them), then the
 * counters. Returns whether it says something new (or is final): the stage,
 * the share or a counter moved. */
static int compose(char *buf, size_t size, int final)
{
    int64_t read = get64(&P.read), written = get64(&P.written), total = get64(&P.total);
    int runs = get(&P.runs), merged = get(&P.merged);
    double secs = gm_now() - P.started, f = share(read, written, total);
    char head[64], counts[192];
    int n = snprintf(head, sizeof head, "progress: %s",
                     final ? "done" : stage(read, written, total));
    if (f >= 0) {
        int pct = final ? 100 : (int)(f * 100) > 99 ? 99 : (int)(f * 100);
        P.pct = pct > P.pct ? pct : P.pct;
        snprintf(head + n, sizeof head - (size_t)n, " %d%%", P.pct);
    }
    if (total > 0 && !final)
        n = snprintf(counts, sizeof counts, "%.1f of %.1f MB read", (double)read / 1e6,
                     (double)total / 1e6);
    else
        n = snprintf(counts, sizeof counts, "%.1f MB read", (double)read / 1e6);
    if (written > 0)
        n += snprintf(counts + n, sizeof counts - (size_t)n, ", %.1f MB written",
                      (double)written / 1e6);
    if (runs > 0)
        snprintf(counts + n, sizeof counts - (size_t)n, ", %d run%s written, %d merged", runs,
                 runs == 1 ? "" : "s", merged);
    char said[sizeof head + sizeof counts + 2];
    snprintf(said, sizeof said, "%s, %s", head, counts);
    int fresh = final || strcmp(said, P.said) != 0;
    snprintf(P.said, sizeof P.said, "%s", said);
    /* the rate: the inputs' bytes whose work is done, a second */
    double done = f >= 0 ? f * (double)total : (double)read;
    double rate = secs > 0 ? done / 1e6 / secs : 0, left = f > 0 ? secs * (1 - f) / f : 0;
    if (final)
        snprintf(buf, size, "%s, in %.2f s, %.0f MB/s, %s", head, secs, rate, counts);
    else if (f > 0.01 && f < 1 && left >= 0.1)
        snprintf(buf, size, "%s, %.0f MB/s, %.*f s left, %s", head, rate, left < 10 ? 1 : 0,
                 left, counts);
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
    P.read = P.written = 0;
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
