/*
 * keybuf.h - the key buffer: a growable array of parsed keys that is int32 while
 * every key fits and widens itself to int64 when a wider one arrives, even in the
 * last block (int32 keys halve every later stage's traffic, and most inputs fit).
 * The parser (input.c) appends to it; the merge and the sort consume it.
 */
#ifndef GM_KEYBUF_H
#define GM_KEYBUF_H

#include <stdint.h>

#include "base/config.h"

/* A growable array of keys: int32 until a key needs int64. The memory comes from
 * gm_buf_alloc. limit (keys, 0: none) caps how far a doubling grows it, so a
 * budget is not overshot by more than one block's keys. */
typedef struct gm_keybuf {
    void *data;        /* the keys, int32 or int64 by width (gm_keybuf_reserve) */
    int64_t n, cap;    /* keys held (the parser, input.c) and room (gm_keybuf_reserve) */
    int64_t limit;     /* growth cap in keys, 0: none (set by the owner, streamsort.c) */
    gm_width width;    /* GM_I32 until a wide key arrives (gm_keybuf_reserve) */
} gm_keybuf;

/* Makes room for extra more keys of width at least w (widening the held keys when
 * w is wider). Returns GM_OK or GM_ENOMEM. */
int gm_keybuf_reserve(gm_keybuf *kb, int64_t extra, gm_width w, gm_status *st);
/* Appends n keys of width w from src. Returns GM_OK or GM_ENOMEM. */
int gm_keybuf_append(gm_keybuf *kb, const void *src, int64_t n, gm_width w, gm_status *st);
/* Drops the first n keys (the rest moves to the front). */
void gm_keybuf_consume(gm_keybuf *kb, int64_t n);
/* Key i as int64. */
static inline int64_t gm_keybuf_get(const gm_keybuf *kb, int64_t i)
{
    return kb->width == GM_I32 ? ((const int32_t *)kb->data)[i] : ((const int64_t *)kb->data)[i];
}
void gm_keybuf_free(gm_keybuf *kb);

#endif
