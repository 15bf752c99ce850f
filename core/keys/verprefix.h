/*
 * verprefix.h - the 64-bit prefix of a key in sort -V's order (vercmp.c's
 * gm_version_cmp, gnulib's filenvercmp), one copy for the host and the device
 * (GM_HD, as keyprefix.h): an order-preserving encoding of the part of the key
 * that filenvercmp compares first, in the way DuckDB and Polars normalise keys
 * into bytes compared as one unsigned number.
 *
 * The model. Before its file suffix, a name is non-digit runs N and digit runs
 * D alternating: N1 D1 N2 D2 ... (N1 may be empty). The Debian comparison
 * reads it as the symbol stream N1 $ D1 N2 $ D2 ... with the end of the name
 * continuing as ($ 0)($ 0)..., where $ closes a non-digit run and weighs above
 * '~' and below every other non-digit byte (against one byte, the digit that
 * ends a run (weight 0) and the end of the name (weight -1) order alike), and
 * each D is a number (leading zeros skipped; an absent run is 0). So "a" ties
 * "a0" and "a~" sorts before "a", as filenvercmp has them.
 *
 * The encoding. Non-digit bytes and $ become 8-bit codes in that order, a
 * digit run its count of significant digits in 4 bits and then its digits in
 * 4 bits each; the stream is written from the top bit down and cut at 64 bits.
 * The codes of the special names ("" 0, "." 1, ".." 2, as whole prefixes)
 * and the mark of a hidden name (3, then the stream) stay below every code of
 * the stream (4 up), as filenvercmp ranks them first.
 *
 * Why a lower prefix is a lower key. Each field's width follows from the bits
 * before it (a code, then a count, then that many digits), so two streams
 * first differ at the same field, and there the field's order is the
 * comparison's: codes by weight, counts (a longer number is larger), then
 * digits. A cut keeps that, as the first 64 bits of two streams order as the
 * streams unless they are equal. A run of 15 or more significant digits is
 * written as the count 15 and the stream stops there (zeros after): every
 * name whose stream has the same bits up to it stops the same way and ties.
 * Only the part before the suffix is encoded, which is what filenvercmp
 * compares first; equal parts tie, and the comparison goes on. Names that
 * filenvercmp calls equal have equal streams, so they get equal prefixes.
 */
#ifndef GM_VERPREFIX_H
#define GM_VERPREFIX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "keys/hd.h"

enum {
    GM_VP_HIDDEN = 3, /* the first byte of a name beginning with '.' */
    GM_VP_TILDE = 4,  /* the code of '~', the lowest */
    GM_VP_RUN = 5,    /* $, the end of a non-digit run */
    GM_VP_LONG = 15   /* the count of a run of 15 or more digits: the stop */
};

GM_HD int gm_vp_digit(unsigned char c) { return (unsigned)(c - '0') <= 9; }

GM_HD int gm_vp_alpha(unsigned char c) { return (unsigned)((c | 0x20) - 'a') < 26; }

/* The code of a non-digit byte: '~' 4, letters 6 to 57, every other byte
 * from 58 up (250 for 0xFF), in byte order. */
GM_HD unsigned gm_vp_code(unsigned char c)
{
    if (c == '~')
        return GM_VP_TILDE;
    if (c >= 'A' && c <= 'Z')
        return 6u + (unsigned)(c - 'A');
    if (c >= 'a' && c <= 'z')
        return 32u + (unsigned)(c - 'a');
    /* the others, counted among themselves: digits, letters and '~' skipped */
    return 58u + c - (c > '9' ? 10u : 0u) - (c > 'Z' ? 26u : 0u) - (c > 'z' ? 26u : 0u) -
           (c > '~' ? 1u : 0u);
}

/* The length of s without its file suffix, the longest tail matching
 * (\.[A-Za-z~][A-Za-z0-9~]*)*$ (all of s possibly, as vercmp.c's prefix_len):
 * read from the end, each part's body is the whole run of [A-Za-z0-9~] before
 * the end or the part after it, so no part can be chosen another way. */
GM_HD size_t gm_vp_stem(const unsigned char *s, size_t len)
{
#ifndef __CUDA_ARCH__
    if (!memchr(s, '.', len)) /* no part can begin: memchr is quicker than the walk */
        return len;
#endif
    size_t pos = len;
    for (;;) {
        size_t r = pos;
        while (r > 0 && (gm_vp_alpha(s[r - 1]) || gm_vp_digit(s[r - 1]) || s[r - 1] == '~'))
            r--;
        if (r == 0 || r == pos || s[r - 1] != '.' || gm_vp_digit(s[r]))
            return pos;
        pos = r - 1;
    }
}

/* The stream's writer: the window of bits [skip, skip + room) of the stream,
 * written from the top of v's low room bits down. */
typedef struct {
    uint64_t v;  /* the window so far */
    int room;    /* its bits still to write */
    int cut;     /* a field did not fit whole */
    size_t skip; /* the stream's bits still to drop before the window */
} gm_vp_bits;

GM_HD void gm_vp_put(gm_vp_bits *b, unsigned x, int width)
{
    if (b->skip) { /* the field's bits before the window are dropped */
        if (b->skip >= (size_t)width) {
            b->skip -= (size_t)width;
            return;
        }
        width -= (int)b->skip;
        x &= (1u << width) - 1u;
        b->skip = 0;
    }
    if (width <= b->room) {
        b->room -= width;
        b->v |= (uint64_t)x << b->room;
    } else {
        if (b->room > 0)
            b->v |= (uint64_t)x >> (width - b->room);
        b->room = 0;
        b->cut = 1;
    }
}

/* Writes the runs of s[0, end) from i on, until the stream fills: a non-digit
 * run, $, the digit run. Returns 1 where a run of GM_VP_LONG or more digits
 * stopped it, else 0. */
GM_HD int gm_vp_runs(gm_vp_bits *b, const unsigned char *s, size_t end)
{
    size_t i = 0;
    while (i < end && b->room > 0) {
        for (; i < end && !gm_vp_digit(s[i]) && b->room > 0; i++)
            gm_vp_put(b, gm_vp_code(s[i]), 8);
        if (b->room == 0)
            break;
        gm_vp_put(b, GM_VP_RUN, 8);
        while (i < end && s[i] == '0')
            i++;
        size_t d = i;
        while (d < end && gm_vp_digit(s[d]) && d - i < GM_VP_LONG)
            d++;
        if (d - i >= GM_VP_LONG) {
            gm_vp_put(b, GM_VP_LONG, 4);
            return 1;
        }
        gm_vp_put(b, (unsigned)(d - i), 4);
        for (; i < d; i++)
            gm_vp_put(b, (unsigned)(s[i] - '0'), 4);
    }
    if (i < end)
        b->cut = 1;
    return 0;
}

/* Bits [skip, skip + width) of the key s[0, len)'s stream (width 64 at most),
 * the first of them the top bit of the result's low width bits: the prefix is
 * the window at 0 of width 64, and the device's rounds order tied keys by the
 * windows after it. *exact where the stream ends within the window's end:
 * equal streams then mean names this order calls equal (the special names, and
 * a name whose part before the suffix fits whole). */
GM_HD uint64_t gm_vp_window(const unsigned char *s, size_t len, size_t skip, int width,
                            int *exact)
{
    if (len == 0 || (s[0] == '.' && (len == 1 || (len == 2 && s[1] == '.')))) {
        *exact = 1;
        return skip ? 0 : (uint64_t)len << (width - 8);
    }
    gm_vp_bits b = { 0, width, 0, skip };
    if (s[0] == '.')
        gm_vp_put(&b, GM_VP_HIDDEN, 8);
    size_t end = gm_vp_stem(s, len);
    if (gm_vp_runs(&b, s, end)) {
        *exact = 0;
        return b.v;
    }
    *exact = !b.cut && end == len;
    while (b.room > 0) { /* the end of the name: ($ 0)... */
        gm_vp_put(&b, GM_VP_RUN, 8);
        gm_vp_put(&b, 0, 4);
    }
    return b.v;
}

/* The key s[0, len)'s -V prefix: prefix(a) < prefix(b) implies
 * gm_version_cmp(a, b) < 0, and names it calls equal share their prefix.
 * *exact (equal prefixes mean equal names in this order) where the special
 * names are, and where the whole name, without a suffix, fits in the stream. */
GM_HD uint64_t gm_kp_version(const unsigned char *s, size_t len, int *exact)
{
    return gm_vp_window(s, len, 0, 64, exact);
}

#endif
