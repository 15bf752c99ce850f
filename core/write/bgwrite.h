/*
 * bgwrite.h - a writer thread for double buffering: one buffer at a time is
 * handed to it and written by the caller's function on the thread while the
 * caller fills the other; the thread starts with the first buffer and lives as
 * long as the writer. Where no thread can start, the caller's thread writes.
 */
#ifndef GM_BGWRITE_H
#define GM_BGWRITE_H

#include <stddef.h>

#include "base/types.h"

/* Writes len bytes of buf wherever ctx says. Returns GM_OK or an error, its
 * message in st. */
typedef int (*gm_bgwrite_fn)(void *ctx, const unsigned char *buf, size_t len, gm_status *st);

typedef struct gm_bgwrite gm_bgwrite;

/* A writer that calls fn(ctx, ...). NULL when out of memory. */
gm_bgwrite *gm_bgwrite_new(gm_bgwrite_fn fn, void *ctx);

/* Hands buf (len bytes, left alone until gm_bgwrite_wait) to the thread, after
 * gm_bgwrite_wait. Returns GM_OK, or fn's result where it wrote here. */
int gm_bgwrite_start(gm_bgwrite *w, const unsigned char *buf, size_t len, gm_status *st);

/* Waits until the buffer handed over is written. Returns its result (its
 * message into st, when not NULL); GM_OK when none was handed over. */
int gm_bgwrite_wait(gm_bgwrite *w, gm_status *st);

/* Waits for the last buffer, ends the thread and frees w. Safe with NULL. */
void gm_bgwrite_free(gm_bgwrite *w);

#endif
