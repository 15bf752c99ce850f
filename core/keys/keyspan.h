/*
 * keyspan.h - where a key lies in a line and its bytes' prefix, one copy for the
 * host and the device (GM_HD, as corank.h): sort's blanks, digits and C-locale
 * thousands separator, field and blank skipping (coreutils sort.c's begfield and
 * limfield), byte order's 64-bit prefix and a line's first eight bytes for the
 * last resort, and the packing of a record's reference (lines.h). keyprefix.h
 * builds each order's encoding on these.
 */
#ifndef GM_KEYSPAN_H
#define GM_KEYSPAN_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "keys/keys.h"

#include "keys/hd.h"

/* A record's reference (lines.h's gm_rec.ref): the line's address in the low 48
 * bits, its length in the next 15 (GM_REC_LONG for a line that long or longer),
 * and whether the prefix is inexact in the top bit. */
#define GM_REC_ADDR_MASK ((UINT64_C(1) << 48) - 1)
#define GM_REC_LONG 0x7FFFu
#define GM_REC_INEXACT (UINT64_C(1) << 63)

GM_HD uint64_t gm_kp_ref(uint64_t addr, size_t len, int exact)
{
    uint64_t l = len < GM_REC_LONG ? (uint64_t)len : GM_REC_LONG;
    return addr | l << 48 | (exact ? 0 : GM_REC_INEXACT);
}

/* sort's blanks in the C locale: space, tab and newline. */
GM_HD int gm_kp_blank(unsigned char c) { return c == ' ' || c == '\t' || c == '\n'; }
GM_HD int gm_kp_digit(unsigned char c) { return (unsigned)(c - '0') <= 9; }

/* sort's thousands separator in the C locale. The locale has none, which sort
 * writes as CHAR_MAX + 1; where char is signed (x86) that is the byte 0x80, so
 * sort's -n and -h pass over a 0x80 anywhere in a number's integer part (after
 * its sign): "\x805" is 5 and "5\x806" is 56. Where char is unsigned no byte
 * equals it. */
#if CHAR_MIN < 0
#define GM_KP_THOUSANDS 0x80u
#else
#define GM_KP_THOUSANDS 0x100u
#endif
GM_HD int gm_kp_thousands(unsigned char c) { return c == GM_KP_THOUSANDS; }

/* memchr: a loop on the device; on the host the first 16 bytes one by one (most
 * fields are shorter than the C library's memchr takes to start), then its
 * memchr. */
GM_HD const unsigned char *gm_kp_memchr(const unsigned char *s, unsigned char c, size_t n)
{
#ifdef __CUDA_ARCH__
    for (size_t i = 0; i < n; i++)
        if (s[i] == c)
            return s + i;
    return NULL;
#else
    size_t m = n < 16 ? n : 16;
    for (size_t i = 0; i < m; i++)
        if (s[i] == c)
            return s + i;
    return n > m ? (const unsigned char *)memchr(s + m, c, n - m) : NULL;
#endif
}

/* On a little-endian host, bytes are read eight at a time where a key has them
 * (one load instead of eight). */
#if !defined(__CUDA_ARCH__) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define GM_KP_WORDS 1

/* 10^i, 0 <= i <= 16: the scales of -n's digits (a loop of multiplies on the
 * device). */
static const uint64_t gm_kp_pow10[17] = {
    1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000,
    10000000000, 100000000000, 1000000000000, 10000000000000, 100000000000000,
    1000000000000000, 10000000000000000,
};

/* How many digits the eight bytes w begin with (the first byte in w's lowest),
 * 0 to 8, by SWAR: a byte is a digit when its xor with '0' is 9 or less. */
static inline int gm_kp_digits8(uint64_t w)
{
    const uint64_t lo7 = UINT64_C(0x7F7F7F7F7F7F7F7F), high = UINT64_C(0x8080808080808080);
    uint64_t x = w ^ UINT64_C(0x3030303030303030);
    uint64_t other = (((x & lo7) + UINT64_C(0x7676767676767676)) | x) & high; /* x > 9 */
    return other ? __builtin_ctzll(other) / 8 : 8;
}

/* The value of w's first k digits (1 to 8), as simdjson parses eight digits:
 * pairs, then fours, then the eight, by three multiplies. */
static inline uint64_t gm_kp_value8(uint64_t w, int k)
{
    uint64_t v = w - UINT64_C(0x3030303030303030); /* borrows only run into later bytes */
    v <<= 8 * (8 - k); /* the k digits in the top bytes, zeros before them */
    v = v * 10 + (v >> 8);
    v = ((v & UINT64_C(0x00FF00FF00FF00FF)) * ((UINT64_C(100) << 16) + 1)) >> 16;
    return ((v & UINT64_C(0x0000FFFF0000FFFF)) * ((UINT64_C(10000) << 32) + 1)) >> 32;
}
#endif

/* The position after n more fields from p: without -t a field is its leading
 * blanks and the non-blanks after them; with -t it ends at the separator, which
 * the step over the last field passes only when past_last is set (sort's
 * limfield stops at the separator that ends the key's last field). */
GM_HD size_t gm_kp_skip_fields(int tab, const unsigned char *s, size_t len, size_t p, size_t n,
                               int past_last)
{
    if (tab >= 0) {
        while (p < len && n--) {
            const unsigned char *t = gm_kp_memchr(s + p, (unsigned char)tab, len - p);
            p = t ? (size_t)(t - s) : len;
            if (p < len && (n || past_last))
                p++;
        }
    } else {
        while (p < len && n--) {
            while (p < len && gm_kp_blank(s[p]))
                p++;
            while (p < len && !gm_kp_blank(s[p]))
                p++;
        }
    }
    return p;
}

GM_HD size_t gm_kp_skip_blanks(const unsigned char *s, size_t len, size_t p)
{
    while (p < len && gm_kp_blank(s[p]))
        p++;
    return p;
}

/* The bytes of key k in a line (sort's begfield and limfield): the start skips
 * sword fields, then blanks with 'b', then schar characters; the end skips eword
 * fields, then blanks with 'b' and echar characters, bounded by the line's end
 * only (echar 0: the end of field eword). A limit before the start is an empty
 * key. The end's field walk goes on from the start's where it lies further. */
GM_HD const unsigned char *gm_kp_key_span(int tab, const gm_keydef *k, const unsigned char *s,
                                          size_t len, size_t *klen)
{
    size_t field = gm_kp_skip_fields(tab, s, len, 0, k->sword, 1);
    size_t beg = k->skipsblanks ? gm_kp_skip_blanks(s, len, field) : field;
    beg = k->schar < len - beg ? beg + k->schar : len;
    size_t lim = len;
    if (k->eword != SIZE_MAX) {
        size_t n = k->eword + (k->echar == 0);
        lim = n > k->sword ? gm_kp_skip_fields(tab, s, len, field, n - k->sword, k->echar != 0)
                           : gm_kp_skip_fields(tab, s, len, 0, n, k->echar != 0);
        if (k->echar) {
            if (k->skipeblanks)
                lim = gm_kp_skip_blanks(s, len, lim);
            lim = k->echar < len - lim ? lim + k->echar : len;
        }
    }
    *klen = lim > beg ? lim - beg : 0;
    return s + beg;
}

/* Byte order's prefix: the first 8 bytes big-endian, zeros after a shorter key.
 * Exact unless a longer key or trailing NULs could hide behind the same bytes. */
GM_HD uint64_t gm_kp_bytes(const unsigned char *s, size_t len, int *exact)
{
#ifdef GM_KP_WORDS
    if (len >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        *exact = len == 8 && s[7] != 0;
        return __builtin_bswap64(w);
    }
#endif
    uint64_t v = 0;
    for (size_t i = 0; i < 8; i++)
        v = v << 8 | (i < len ? s[i] : 0u);
    *exact = len <= 8 && (len == 0 || s[len - 1] != 0);
    return v;
}

/* A line's first eight bytes as gm_kp_bytes takes them, inverted when reverse:
 * their order is the last resort's on those bytes. */
GM_HD uint64_t gm_kp_head8(const unsigned char *line, size_t len, int reverse)
{
    int ignored;
    uint64_t k = gm_kp_bytes(line, len, &ignored);
    return reverse ? ~k : k;
}

#endif
