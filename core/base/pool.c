/*
 * pool.c - the persistent thread pool behind gm_parallel_for (util.h), shared by
 * every stage: parsing, merging, sorting and formatting hand it one job at a time.
 *
 * Workers are started on first need (up to the largest thread count asked for) and
 * then sleep on a condition variable between jobs, so a stream of many small chunks
 * pays for thread creation once, not once per chunk. A job's tasks are handed out
 * with an atomic counter; the caller takes tasks too and then waits for the workers
 * that joined. Stacks are small (the stages keep their data on the heap), so that a
 * virtual-memory limit (ulimit -v) is not spent on stacks. A gm_parallel_for called
 * from inside a task, or while another thread's job runs, runs on its caller alone.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/util.h"

enum { MAX_WORKERS = 1024 };

struct pool_job {
    gm_task_fn fn;   /* gm_parallel_for's fn, called once per task */
    void *ctx;       /* fn's first argument (gm_parallel_for's ctx) */
    int ntasks;      /* tasks numbered [0, ntasks), shared by the caller and helpers */
    int next;    /* next task (atomic) */
    int helpers; /* workers wanted: those with index < helpers join */
};

static struct {
    pthread_mutex_t lock; /* guards the fields below (forget_workers renews it in a child) */
    pthread_cond_t wake, done; /* wake: a new job for the workers; done: pending fell to 0 */
    int nworkers;        /* workers started by grow (detached, they never end) */
    unsigned gen;        /* bumped for every job */
    struct pool_job *job; /* gm_parallel_for's current job, NULL between jobs */
    int pending;         /* workers still inside the current job */
    int busy;            /* a job is running */
} pool = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
           0, 0, NULL, 0, 0 };

static _Thread_local int inside_task;

static void run_tasks(struct pool_job *job)
{
    inside_task = 1;
    for (;;) {
        int t = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (t >= job->ntasks)
            break;
        job->fn(job->ctx, t);
    }
    inside_task = 0;
}

static void *worker(void *arg)
{
    int index = (int)(intptr_t)arg;
    unsigned seen = 0;
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        while (pool.gen == seen)
            pthread_cond_wait(&pool.wake, &pool.lock);
        seen = pool.gen;
        struct pool_job *job = pool.job;
        if (!job || index >= job->helpers)
            continue;
        pthread_mutex_unlock(&pool.lock);
        run_tasks(job);
        pthread_mutex_lock(&pool.lock);
        if (--pool.pending == 0)
            pthread_cond_signal(&pool.done);
    }
    return NULL;
}

/* A child of fork has none of the workers: it starts its own on first need. */
static void forget_workers(void)
{
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.done, NULL);
    pool.nworkers = 0;
    pool.job = NULL;
    pool.pending = 0;
    pool.busy = 0;
}

/* Starts workers until there are want of them (or no more can be started). Called
 * with the lock held. */
static void grow(int want)
{
    static int registered;
    if (!registered) {
        registered = 1;
        pthread_atfork(NULL, NULL, forget_workers);
    }
    if (want > MAX_WORKERS)
        want = MAX_WORKERS;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, GM_THREAD_STACK);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    while (pool.nworkers < want) {
        pthread_t tid;
        if (pthread_create(&tid, &attr, worker, (void *)(intptr_t)pool.nworkers) != 0)
            break; /* the workers we have (and the caller) do the rest */
        pool.nworkers++;
    }
    pthread_attr_destroy(&attr);
}

int gm_thread_start(pthread_t *tid, void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, GM_THREAD_STACK);
    int rc = pthread_create(tid, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    return rc;
}

/* The one descriptor closed on a thread of its own (gm_close_later). */
static pthread_t closer;
static int closer_fd = -1, closing;

static void *close_fd(void *arg)
{
    (void)arg;
    close(closer_fd);
    return NULL;
}

void gm_close_later(int fd)
{
    gm_close_later_join();
    closer_fd = fd;
    closing = gm_thread_start(&closer, close_fd, NULL) == 0;
    if (!closing)
        close(fd);
}

double gm_close_later_join(void)
{
    if (!closing)
        return 0;
    double a = gm_now();
    pthread_join(closer, NULL);
    closing = 0;
    return gm_now() - a;
}

void gm_parallel_for(int nthreads, int ntasks, gm_task_fn fn, void *ctx)
{
    struct pool_job job = { fn, ctx, ntasks, 0, 0 };
    if (nthreads > ntasks)
        nthreads = ntasks;
    if (nthreads <= 1 || inside_task) {
        run_tasks(&job);
        return;
    }
    pthread_mutex_lock(&pool.lock);
    if (pool.busy) { /* another thread's job is running: do this one alone */
        pthread_mutex_unlock(&pool.lock);
        run_tasks(&job);
        return;
    }
    grow(nthreads - 1);
    job.helpers = nthreads - 1 < pool.nworkers ? nthreads - 1 : pool.nworkers;
    pool.busy = 1;
    pool.job = &job;
    pool.pending = job.helpers;
    pool.gen++;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);

    run_tasks(&job);

    pthread_mutex_lock(&pool.lock);
    while (pool.pending > 0)
        pthread_cond_wait(&pool.done, &pool.lock);
    pool.job = NULL;
    pool.busy = 0;
    pthread_mutex_unlock(&pool.lock);
}
