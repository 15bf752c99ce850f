/*
 * fieldnum.h - the host's quick prefix of the commonest keyed sort: a first key
 * that is one whole field of a one-byte -t ordered by -n (-t, -kN,Nn). One look
 * at the line's first 32 bytes, as two SSE2 compares (eolscan.h's way), gives
 * every separator and every digit there; the key's field is read off the
 * separators' bits, and a field of 1 to 16 digits not starting with 0 is
 * encoded straight from the digits (gm_kp_value8). Any other field goes to
 * gm_kp_num with its bounds, and a line whose field does not lie in the look to
 * gm_line_prefix, the general twin whose prefixes these equal (keyprefix.h
 * holds the encoding; the device does not use this file).
 */
#ifndef GM_FIELDNUM_H
#define GM_FIELDNUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "read/eolscan.h"
#include "keys/keyprefix.h"
#include "keys/keys.h"

typedef struct gm_fieldnum {
    int on;           /* the quick prefix applies to this spec */
    unsigned char tab;
    unsigned sword;   /* the fields before the key's */
    int reverse;      /* the first key's 'r' */
} gm_fieldnum;

/* The look's width, and the bytes that must follow a line's start in its block
 * for the look and the digits' eight-byte loads to stay inside the block. */
enum { GM_FIELDNUM_LOOK = 32, GM_FIELDNUM_READ = 48 };

/* Whether ks's first key is a whole field [N, N] of a -t byte under -n (any
 * 'b', any 'r'; a blank -t with 'b' excepted, as 'b' would skip the separator
 * too), on a host with the SSE2 compares and the eight-byte digit reading. */
static inline void gm_fieldnum_init(gm_fieldnum *f, const gm_keyspec *ks)
{
    memset(f, 0, sizeof *f);
#if defined(GM_LINES_SSE2) && defined(GM_KP_WORDS)
    if (ks->nkeys == 0 || ks->tab < 0)
        return;
    const gm_keydef *k = &ks->keys[0];
    f->on = k->order == GM_ORDER_NUMERIC && !k->fold && !k->ignore && k->schar == 0 &&
            k->echar == 0 &&
            k->eword == k->sword && k->sword < GM_FIELDNUM_LOOK &&
            !(k->skipsblanks && gm_kp_blank((unsigned char)ks->tab));
    f->tab = (unsigned char)ks->tab;
    f->sword = (unsigned)k->sword;
    f->reverse = k->reverse;
#else
    (void)ks;
#endif
}

#if defined(GM_LINES_SSE2) && defined(GM_KP_WORDS)
/* The separators (*tabs) and digits (return) among the 32 bytes at s. */
static inline uint32_t gm_fieldnum_look(const unsigned char *s, unsigned char tab,
                                        uint32_t *tabs)
{
    const __m128i t = _mm_set1_epi8((char)tab), zero = _mm_set1_epi8('0');
    const __m128i nine = _mm_set1_epi8(9);
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)s);
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
    *tabs = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a, t)) |
            (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(b, t)) << 16;
    __m128i da = _mm_sub_epi8(a, zero), db = _mm_sub_epi8(b, zero);
    return (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(da, nine), da)) |
           (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(db, nine), db)) << 16;
}

/* -n's encoding (gm_kp_num's) of the n digits at s, 1 to 16, the first not 0;
 * 16 bytes at s may be read. */
static inline uint64_t gm_fieldnum_digits(const unsigned char *s, unsigned n)
{
    uint64_t lo, hi, d;
    memcpy(&lo, s, 8);
    if (n <= 8) {
        d = gm_kp_value8(lo, (int)n);
    } else {
        memcpy(&hi, s + 8, 8);
        d = gm_kp_value8(lo, 8) * gm_kp_pow10[n - 8] + gm_kp_value8(hi, (int)(n - 8));
    }
    return (uint64_t)(0x81 + n) << 56 | d * gm_kp_pow10[16 - n];
}
#endif

/* The line [s, s + len)'s prefix as gm_line_prefix(ks) gives it where its
 * field is not a plain number in the look: the field's bounds, when found, go
 * to gm_kp_num, else the line to gm_line_prefix (kept out of line: the quick
 * path stays small). */
__attribute__((noinline, unused)) static uint64_t
gm_fieldnum_slow(const gm_fieldnum *f, const gm_keyspec *ks, const unsigned char *s, size_t len,
                 unsigned beg, unsigned end, int found, int *exact)
{
    if (!found)
        return gm_line_prefix(ks, s, len, exact);
    uint64_t p = gm_kp_num(s + beg, end - beg, exact);
    return f->reverse ? ~p : p;
}

/* The line [s, s + len)'s prefix as gm_line_prefix(ks) gives it, for a spec f
 * was made from with f->on; limit: the end of the bytes that may be read (the
 * block's end). */
static inline uint64_t gm_fieldnum_prefix(const gm_fieldnum *f, const gm_keyspec *ks,
                                          const unsigned char *s, size_t len,
                                          const unsigned char *limit, int *exact)
{
#if defined(GM_LINES_SSE2) && defined(GM_KP_WORDS)
    if (limit - s < GM_FIELDNUM_READ)
        return gm_fieldnum_slow(f, ks, s, len, 0, 0, 0, exact);
    uint32_t tabs, digits = gm_fieldnum_look(s, f->tab, &tabs);
    if (len < GM_FIELDNUM_LOOK)
        tabs &= (UINT32_C(1) << len) - 1;
    unsigned beg = 0, n = f->sword;
    for (; n && tabs; n--) {
        beg = (unsigned)__builtin_ctz(tabs) + 1;
        tabs &= tabs - 1;
    }
    if (!tabs && len > GM_FIELDNUM_LOOK) /* the field may go on past the look */
        return gm_fieldnum_slow(f, ks, s, len, 0, 0, 0, exact);
    if (n) /* fewer fields than the key's: the key is empty, at the line's end */
        beg = (unsigned)len;
    unsigned end = tabs ? (unsigned)__builtin_ctz(tabs) : (unsigned)len;
    unsigned w = end - beg;
    uint32_t want = w ? (UINT32_MAX >> (32 - w)) << beg : 0;
    if (w == 0 || w > 16 || (digits & want) != want || s[beg] == '0')
        return gm_fieldnum_slow(f, ks, s, len, beg, end, 1, exact);
    *exact = 1;
    uint64_t p = gm_fieldnum_digits(s + beg, w);
    return f->reverse ? ~p : p;
#else
    (void)f;
    (void)limit;
    return gm_line_prefix(ks, s, len, exact);
#endif
}

#endif
