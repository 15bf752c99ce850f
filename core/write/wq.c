/*
 * wq.c - the ordered write queue (see wq.h), as pigz's writer takes compression
 * jobs in sequence: fillers format blocks in any order into buffers from a small
 * pool, and the blocks leave in the order of their sequence numbers, so filling
 * and writing overlap, the output stays in order, and filling runs at most a
 * window of blocks ahead of the writing: memory stays small whatever the output's
 * size.
 *
 * With a writer thread (threaded), the filler that completes the next block due
 * hands it and every block after it to the thread, and the writes of one batch go
 * on while the caller prepares the next. Without one, that filler writes them
 * itself: on few cores a thread of its own competes with the fillers and reads
 * the blocks from another core's cache. One lock guards everything below.
 */
#include "write/wq.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "base/progress.h"
#include "base/util.h"

struct gm_wq {
    pthread_mutex_t lock;    /* guards the queue's state between fillers and the writer */
    pthread_cond_t changed;  /* a block was written, a buffer freed, or err set */
    int fd;                  /* where the blocks are written (gm_wq_create) */
    int err;                 /* first write errno */
    double write_time;       /* seconds inside write(2) (writer_main, write_due) */
    int64_t bytes;           /* bytes written (writer_main, write_due) */
    /* the buffer pool, kept from batch to batch: buffers are made as blocks first
     * need them, up to nbufs, so a short output holds few */
    size_t buf_bytes;        /* each buffer's bytes (gm_wq_create) */
    int nbufs;               /* buffers at most, and the due ring's size (gm_wq_create) */
    int made;                /* buffers made so far */
    char **pool;             /* free buffers */
    int nfree;               /* buffers in pool (pool_get, pool_release) */
    /* the writer thread, when there is one, and the blocks due, in order */
    pthread_t tid;           /* the writer thread, running writer_main (gm_wq_create) */
    int threaded;            /* tid runs: gm_wq_create sets it, wq_join clears it */
    int stop;                /* the writer thread ends once nothing is due (wq_join) */
    char **due;              /* ring of nbufs blocks handed to the writer thread (gm_wq_put) */
    size_t *due_len;         /* each due block's bytes (gm_wq_put) */
    int due_head, due_count; /* the ring's first entry and its entries (gm_wq_put, writer_main) */
    /* the batch: its blocks by sequence number */
    int nblocks;             /* the batch's blocks (gm_wq_begin; 0 after gm_wq_end) */
    int window;              /* blocks filled ahead of the writing, at most */
    char **buf;              /* block b's buffer, once filled (gm_wq_put) */
    size_t *len;             /* block b's bytes (gm_wq_put) */
    unsigned char *ready;    /* block b is filled and put (gm_wq_put) */
    int next_write;          /* first block not yet written */
    int writing;             /* a filler has the writing role */
};

/* ------------------------------------------------------------------ pool */

/* Waits (under the lock) until block b is within the window and a buffer is free
 * or may be made, and takes it: the buffer, or NULL with err set. */
static char *pool_get(struct gm_wq *q, int b)
{
    while ((b >= q->next_write + q->window || (q->nfree == 0 && q->made == q->nbufs)) &&
           !q->err)
        pthread_cond_wait(&q->changed, &q->lock);
    if (!q->err && q->nfree == 0) { /* a buffer more: made outside the lock */
        q->made++;
        pthread_mutex_unlock(&q->lock);
        char *made = gm_buf_alloc(q->buf_bytes, "formatting", NULL);
        pthread_mutex_lock(&q->lock);
        if (made)
            q->pool[q->nfree++] = made;
        else if (!q->err)
            q->err = ENOMEM;
    }
    if (q->err)
        return NULL;
    return q->pool[--q->nfree];
}

/* Gives a written block's buffer back (under the lock). */
static void pool_release(struct gm_wq *q, char *buf)
{
    q->pool[q->nfree++] = buf;
}

/* ------------------------------------------------------------------ writer */

static void *writer_main(void *arg)
{
    struct gm_wq *q = arg;
    pthread_mutex_lock(&q->lock);
    for (;;) {
        while (q->due_count == 0 && !q->stop)
            pthread_cond_wait(&q->changed, &q->lock);
        if (q->due_count == 0)
            break; /* stopped, and nothing left to write */
        char *buf = q->due[q->due_head];
        size_t len = q->due_len[q->due_head];
        int err = q->err;
        pthread_mutex_unlock(&q->lock);
        double w0 = gm_now();
        int e = err ? 0 : gm_write_all(q->fd, buf, len);
        double w1 = gm_now();
        pthread_mutex_lock(&q->lock);
        q->write_time += w1 - w0;
        if (e && !q->err)
            q->err = e;
        q->bytes += err ? 0 : (int64_t)len;
        gm_progress_written(err ? 0 : (int64_t)len);
        q->due_head = (q->due_head + 1) % q->nbufs;
        q->due_count--;
        pool_release(q, buf);
        pthread_cond_broadcast(&q->changed);
    }
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

/* Lets the writer thread, if any, write what is due and end. */
static void wq_join(struct gm_wq *q)
{
    if (!q->threaded)
        return;
    pthread_mutex_lock(&q->lock);
    q->stop = 1;
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->lock);
    pthread_join(q->tid, NULL);
    q->threaded = 0;
}

static void wq_free(struct gm_wq *q)
{
    wq_join(q);
    free(q->due);
    free(q->due_len);
    for (int i = 0; i < q->nfree; i++)
        gm_buf_free(q->pool[i]);
    free(q->pool);
    pthread_cond_destroy(&q->changed);
    pthread_mutex_destroy(&q->lock);
    free(q);
}

struct gm_wq *gm_wq_create(int fd, int nbufs, size_t buf_bytes, int threaded)
{
    struct gm_wq *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->changed, NULL);
    q->fd = fd;
    q->buf_bytes = buf_bytes;
    q->nbufs = nbufs;
    q->pool = calloc((size_t)nbufs, sizeof *q->pool);
    int ok = q->pool != NULL;
    if (ok && threaded) {
        q->due = calloc((size_t)nbufs, sizeof *q->due);
        q->due_len = calloc((size_t)nbufs, sizeof *q->due_len);
        ok = q->due && q->due_len && gm_thread_start(&q->tid, writer_main, q) == 0;
        q->threaded = ok;
    }
    if (!ok) {
        wq_free(q);
        return NULL;
    }
    return q;
}

int gm_wq_close(struct gm_wq *q, double *write_time, int64_t *bytes)
{
    wq_join(q);
    int err = q->err;
    *write_time += q->write_time;
    *bytes += q->bytes;
    wq_free(q);
    return err;
}

/* ------------------------------------------------------------------ batch */

int gm_wq_begin(struct gm_wq *q, int nblocks, int window)
{
    q->nblocks = nblocks;
    q->window = window;
    q->next_write = 0;
    q->writing = 0;
    q->buf = calloc((size_t)nblocks, sizeof *q->buf);
    q->len = calloc((size_t)nblocks, sizeof *q->len);
    q->ready = calloc((size_t)nblocks, 1);
    return q->buf && q->len && q->ready ? 0 : ENOMEM;
}

int gm_wq_end(struct gm_wq *q)
{
    free(q->buf);
    free(q->len);
    free(q->ready);
    q->buf = NULL;
    q->len = NULL;
    q->ready = NULL;
    q->nblocks = 0;
    pthread_mutex_lock(&q->lock);
    int err = q->err;
    pthread_mutex_unlock(&q->lock);
    return err;
}

char *gm_wq_get(struct gm_wq *q, int b)
{
    pthread_mutex_lock(&q->lock);
    char *buf = pool_get(q, b);
    if (!buf)
        pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->lock);
    return buf;
}

/* Writes (under the lock, dropped around each write) the batch's filled blocks in
 * order from the next due, while no error stops it. */
static void write_due(struct gm_wq *q)
{
    while (q->next_write < q->nblocks && q->ready[q->next_write] && !q->err) {
        int w = q->next_write;
        pthread_mutex_unlock(&q->lock);
        double w0 = gm_now();
        int e = gm_write_all(q->fd, q->buf[w], q->len[w]);
        double w1 = gm_now();
        pthread_mutex_lock(&q->lock);
        q->write_time += w1 - w0;
        if (e && !q->err)
            q->err = e;
        q->bytes += (int64_t)q->len[w];
        gm_progress_written((int64_t)q->len[w]);
        pool_release(q, q->buf[w]);
        q->next_write++;
        pthread_cond_broadcast(&q->changed);
    }
}

void gm_wq_put(struct gm_wq *q, int b, char *buf, size_t len)
{
    pthread_mutex_lock(&q->lock);
    q->buf[b] = buf;
    q->len[b] = len;
    q->ready[b] = 1;
    if (q->threaded) { /* hand the blocks now in order to the writer thread */
        while (q->next_write < q->nblocks && q->ready[q->next_write]) {
            int w = q->next_write++;
            int at = (q->due_head + q->due_count) % q->nbufs;
            q->due[at] = q->buf[w];
            q->due_len[at] = q->len[w];
            q->due_count++;
        }
    } else if (!q->writing) {
        q->writing = 1;
        write_due(q);
        q->writing = 0;
    }
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->lock);
}

int gm_wq_drain(struct gm_wq *q)
{
    pthread_mutex_lock(&q->lock);
    while (q->threaded && q->due_count > 0)
        pthread_cond_wait(&q->changed, &q->lock);
    int err = q->err;
    pthread_mutex_unlock(&q->lock);
    return err;
}
