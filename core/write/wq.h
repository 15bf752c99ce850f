/*
 * wq.h - the ordered write queue (wq.c): a pool of block buffers, and blocks
 * written to one descriptor in the order of their sequence numbers whatever the
 * order they are filled in, by a writer thread of the queue's own or by whichever
 * filler finds the next block due.
 *
 * Call order: gm_wq_create once per output; per batch of blocks (a chunk),
 * gm_wq_begin, then on any threads gm_wq_get (a buffer for block b) and gm_wq_put
 * (block b is filled), then gm_wq_end; gm_wq_drain before bytes written past the
 * queue; gm_wq_close last.
 */
#ifndef GM_WQ_H
#define GM_WQ_H

#include <stddef.h>
#include <stdint.h>

struct gm_wq;

/* A queue writing to fd with at most nbufs buffers of buf_bytes each, made as
 * blocks first need them; with threaded, a writer thread of its own writes the
 * blocks. Returns NULL when out of memory or the thread cannot start. */
struct gm_wq *gm_wq_create(int fd, int nbufs, size_t buf_bytes, int threaded);

/* Starts a batch of nblocks blocks, numbered from 0, of which at most window are
 * filled ahead of the first not yet written. Returns 0 or ENOMEM. */
int gm_wq_begin(struct gm_wq *q, int nblocks, int window);

/* A free buffer for block b of the batch, once b is within the window of the
 * writing; NULL when the queue has failed (a write error, or no memory for a
 * buffer): the filler stops. */
char *gm_wq_get(struct gm_wq *q, int b);

/* Block b is in buf, len bytes: it and every filled block after it are handed to
 * the writer thread, or written here when no other thread is writing them. */
void gm_wq_put(struct gm_wq *q, int b, char *buf, size_t len);

/* Ends the batch (every block of it put, or the queue failed). Returns 0 or the
 * first error of the queue (an errno value). */
int gm_wq_end(struct gm_wq *q);

/* Waits until every block put is written. Returns 0 or the first error. */
int gm_wq_drain(struct gm_wq *q);

/* Writes what is due, stops the writer thread and frees the queue, adding its
 * time inside write(2) to *write_time and the bytes it wrote to *bytes. Returns 0
 * or the first error (an errno value). */
int gm_wq_close(struct gm_wq *q, double *write_time, int64_t *bytes);

#endif
