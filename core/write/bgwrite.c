/*
 * bgwrite.c - the writer thread of double buffering (see bgwrite.h): a mutex
 * and a condition variable hand one buffer at a time over; the thread sleeps
 * between buffers, so that a stream of many buffers starts one thread.
 */
#define _GNU_SOURCE
#include "write/bgwrite.h"

#include <pthread.h>
#include <stdlib.h>

#include "base/util.h"

struct gm_bgwrite {
    gm_bgwrite_fn fn;         /* writes a buffer (gm_bgwrite_new) */
    void *ctx;                /* fn's first argument (gm_bgwrite_new) */
    const unsigned char *buf; /* the buffer handed over (gm_bgwrite_start) */
    size_t len;               /* its bytes (gm_bgwrite_start) */
    int rc;                   /* its write's result (writer_main; reset by gm_bgwrite_wait) */
    gm_status st;             /* its error (writer_main) */
    pthread_mutex_t mu;       /* guards busy, rc and stop */
    pthread_cond_t cv;        /* busy or stop changed */
    int busy;                 /* buf is handed over, not yet written (gm_bgwrite_start,
                               * writer_main) */
    int stop;                 /* the thread ends (gm_bgwrite_free) */
    pthread_t tid;            /* the thread (gm_bgwrite_start) */
    int started;              /* tid runs (gm_bgwrite_start) */
};

static void *writer_main(void *arg)
{
    gm_bgwrite *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->busy && !w->stop)
            pthread_cond_wait(&w->cv, &w->mu);
        if (!w->busy)
            break;
        pthread_mutex_unlock(&w->mu);
        int rc = w->fn(w->ctx, w->buf, w->len, &w->st);
        pthread_mutex_lock(&w->mu);
        w->rc = rc;
        w->busy = 0;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

gm_bgwrite *gm_bgwrite_new(gm_bgwrite_fn fn, void *ctx)
{
    gm_bgwrite *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->fn = fn;
    w->ctx = ctx;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    return w;
}

int gm_bgwrite_start(gm_bgwrite *w, const unsigned char *buf, size_t len, gm_status *st)
{
    if (!w->started)
        w->started = gm_thread_start(&w->tid, writer_main, w) == 0;
    if (!w->started)
        return w->fn(w->ctx, buf, len, st);
    pthread_mutex_lock(&w->mu);
    w->buf = buf;
    w->len = len;
    w->busy = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return GM_OK;
}

int gm_bgwrite_wait(gm_bgwrite *w, gm_status *st)
{
    if (!w->started)
        return GM_OK;
    pthread_mutex_lock(&w->mu);
    while (w->busy)
        pthread_cond_wait(&w->cv, &w->mu);
    int rc = w->rc;
    w->rc = GM_OK;
    pthread_mutex_unlock(&w->mu);
    if (rc && st)
        *st = w->st;
    return rc;
}

void gm_bgwrite_free(gm_bgwrite *w)
{
    if (!w)
        return;
    if (w->started) {
        gm_bgwrite_wait(w, NULL);
        pthread_mutex_lock(&w->mu);
        w->stop = 1;
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
        pthread_join(w->tid, NULL);
    }
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
