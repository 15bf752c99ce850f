/*
 * keybuf.c - the key buffer (see keybuf.h): reserve (doubling, capped by its limit,
 * widening int32 to int64 in a new array), append, consume from the front, free.
 * Its memory is chunk memory (gm_buf_alloc), so it can become pinned for the GPU.
 */
#include "read/keybuf.h"

#include <string.h>

#include "base/util.h"

int gm_keybuf_reserve(gm_keybuf *kb, int64_t extra, gm_width w, gm_status *st)
{
    if (kb->width != GM_I32 && kb->width != GM_I64)
        kb->width = GM_I32;
    gm_width nw = w > kb->width ? w : kb->width;
    int64_t need = kb->n + extra;
    if (need <= kb->cap && nw == kb->width)
        return GM_OK;
    int64_t cap = kb->cap;
    if (need > cap) {
        cap = cap * 2 > 4096 ? cap * 2 : 4096;
        if (kb->limit > 0 && cap > kb->limit)
            cap = kb->limit;
        if (cap < need)
            cap = need;
    }
    if (nw == kb->width) {
        void *p = gm_buf_resize(kb->data, (size_t)cap * nw, "keys", st);
        if (!p)
            return GM_ENOMEM;
        kb->data = p;
        kb->cap = cap;
        return GM_OK;
    }
    /* Widen: a new int64 array. */
    int64_t *p = gm_buf_alloc((size_t)cap * sizeof *p, "keys", st);
    if (!p)
        return GM_ENOMEM;
    const int32_t *old = kb->data;
    for (int64_t i = 0; i < kb->n; i++)
        p[i] = old[i];
    gm_buf_free(kb->data);
    kb->data = p;
    kb->cap = cap;
    kb->width = GM_I64;
    return GM_OK;
}

int gm_keybuf_append(gm_keybuf *kb, const void *src, int64_t n, gm_width w, gm_status *st)
{
    int rc = gm_keybuf_reserve(kb, n, w, st);
    if (rc)
        return rc;
    if (w == kb->width) {
        memcpy((char *)kb->data + (size_t)kb->n * w, src, (size_t)n * w);
    } else { /* int32 into int64 */
        const int32_t *s = src;
        int64_t *d = (int64_t *)kb->data + kb->n;
        for (int64_t i = 0; i < n; i++)
            d[i] = s[i];
    }
    kb->n += n;
    return GM_OK;
}

void gm_keybuf_consume(gm_keybuf *kb, int64_t n)
{
    if (n <= 0)
        return;
    size_t w = (size_t)kb->width;
    if (n < kb->n)
        memmove(kb->data, (char *)kb->data + (size_t)n * w, (size_t)(kb->n - n) * w);
    kb->n -= n < kb->n ? n : kb->n;
}

void gm_keybuf_free(gm_keybuf *kb)
{
    gm_buf_free(kb->data);
    kb->data = NULL;
    kb->n = kb->cap = 0;
}
