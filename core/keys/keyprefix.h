/*
 * keyprefix.h - the first key's 64-bit prefix, one copy for the host and the
 * device: the -n, -h, -M and byte encodings (with -f, -d and -i; numcmp.c and
 * keys.c describe them), -V's from verprefix.h, on the key found as keyspan.h
 * finds it. keys.c, numcmp.c and lines.h call these for the CPU's records, and
 * cuda/records.cu for the device's, so the encodings cannot drift apart.
 *
 * GM_HD makes each function __host__ __device__ under nvcc and static inline
 * under a C compiler (as corank.h does). -g's encoding needs strtold and stays
 * in numcmp.c, -R's MD5 in keytext.c: gm_kp_takes says which keys
 * gm_kp_line_prefix takes.
 */
#ifndef GM_KEYPREFIX_H
#define GM_KEYPREFIX_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "keys/keys.h"
#include "keys/keyspan.h"
#include "keys/verprefix.h"

#include "keys/hd.h"

/* Integer digits past this count saturate -n's encoding; significant digits it
 * holds (10^16 < 2^56). */
#define GM_KP_MAX_INT_DIGITS 125
#define GM_KP_DIGITS 16

/* -n's encoding: a header byte (0x80 for zero; 0x81 plus the count of integer
 * digits, for a positive number) above the first 16 significant digits as one
 * binary number, all complemented for a negative number; saturated past 125
 * integer digits. One pass: the first 16 significant digits are gathered as they
 * are read (a digit past them only counts). */
GM_HD uint64_t gm_kp_num(const unsigned char *s, size_t len, int *exact)
{
    const unsigned char *p = s, *e = s + len;
    while (p < e && gm_kp_blank(*p))
        p++;
    int neg = p < e && *p == '-';
    p += neg;
    while (p < e && (*p == '0' || gm_kp_thousands(*p)))
        p++;
    uint64_t d = 0;
    size_t nd = 0, il = 0; /* digits gathered into d; integer digits */
#ifdef GM_KP_WORDS
    while (e - p >= 8 && nd + 8 <= GM_KP_DIGITS) {
        uint64_t w;
        memcpy(&w, p, 8);
        int k = gm_kp_digits8(w);
        if (k == 0)
            break;
        d = d * gm_kp_pow10[k] + gm_kp_value8(w, k);
        nd += (size_t)k;
        il += (size_t)k;
        p += k;
        if (k < 8)
            break;
    }
#endif
    for (; p < e && (gm_kp_digit(*p) || gm_kp_thousands(*p)); p++) {
        if (!gm_kp_digit(*p))
            continue;
        il++;
        if (nd < GM_KP_DIGITS)
            d = d * 10 + (uint64_t)(*p - '0'), nd++;
    }
    size_t sig = il; /* sig: up to the last nonzero digit */
    if (p < e && *p == '.') {
        const unsigned char *fp = ++p;
        for (; p < e && gm_kp_digit(*p); p++) {
            if (nd < GM_KP_DIGITS)
                d = d * 10 + (uint64_t)(*p - '0'), nd++;
            if (*p != '0')
                sig = il + (size_t)(p - fp) + 1;
        }
    }
    if (sig == 0) { /* zero, whatever its sign */
        *exact = 1;
        return UINT64_C(0x80) << 56;
    }
    uint64_t enc;
    if (il > GM_KP_MAX_INT_DIGITS) {
        enc = ~UINT64_C(0);
        *exact = 0;
    } else {
#ifdef GM_KP_WORDS
        d *= gm_kp_pow10[GM_KP_DIGITS - nd]; /* scaled to 16 digits */
#else
        for (size_t k = nd; k < GM_KP_DIGITS; k++)
            d *= 10;
#endif
        enc = (uint64_t)(0x81 + il) << 56 | d;
        *exact = sig <= GM_KP_DIGITS;
    }
    return neg ? ~enc : enc;
}

/* sort's unit_order: the order of magnitude of an SI or IEC prefix letter, as
 * coreutils 9.2 and later have it (R and Q after Y; 9.1 stops at Y). */
GM_HD int gm_kp_unit_order(unsigned char c)
{
    switch (c) {
    case 'k': case 'K': return 1;
    case 'M': return 2;
    case 'G': return 3;
    case 'T': return 4;
    case 'P': return 5;
    case 'E': return 6;
    case 'Z': return 7;
    case 'Y': return 8;
    case 'R': return 9;
    case 'Q': return 10;
    default: return 0;
    }
}

/* The unit of a number with its blanks skipped: the letter right after its
 * digits (and '.' and digits), negated after '-', none when no digit is
 * nonzero. A thousands separator ends the scan, as it does sort's, which reads
 * it there as a char: "5\x80K" has no unit. */
GM_HD int gm_kp_human_unit(const unsigned char *s, size_t len)
{
    const unsigned char *p = s, *e = s + len;
    int neg = p < e && *p == '-';
    p += neg;
    unsigned char max = 0;
    while (p < e && gm_kp_digit(*p))
        max |= (unsigned char)(*p++ - '0');
    if (p < e && *p == '.')
        for (p++; p < e && gm_kp_digit(*p); p++)
            max |= (unsigned char)(*p - '0');
    if (!max || p == e)
        return 0;
    return neg ? -gm_kp_unit_order(*p) : gm_kp_unit_order(*p);
}

/* -h's encoding: the unit's order (0..20: room for R and Q) in the top 5 bits,
 * -n's encoding shifted below it. */
GM_HD uint64_t gm_kp_human(const unsigned char *s, size_t len, int *exact)
{
    size_t i = gm_kp_skip_blanks(s, len, 0);
    int unit = gm_kp_human_unit(s + i, len - i);
    uint64_t n = gm_kp_num(s + i, len - i, exact);
    /* the shift keeps exactness when the dropped bits are all equal to the
     * sign's filler: zeros for zero and positive numbers, ones for negative */
    uint64_t low = n & 31;
    if (low != (n < UINT64_C(0x80) << 56 ? 31u : 0u))
        *exact = 0;
    return (uint64_t)(unit + 10) << 59 | n >> 5;
}

/* -f, -d and -i as sort's keycompare sees a byte: folded to upper case, skipped
 * (sort's nondictionary and nonprinting tables in the C locale). */
GM_HD unsigned char gm_kp_upper(unsigned char c)
{
    return c >= 'a' && c <= 'z' ? (unsigned char)(c - 'a' + 'A') : c;
}
GM_HD int gm_kp_alnum(unsigned char c)
{
    unsigned char u = gm_kp_upper(c);
    return gm_kp_digit(c) || (u >= 'A' && u <= 'Z');
}
GM_HD int gm_kp_skipped(const gm_keydef *k, unsigned char c)
{
    if (k->ignore == GM_IGNORE_DICT)
        return !gm_kp_alnum(c) && !gm_kp_blank(c);
    if (k->ignore == GM_IGNORE_PRINT)
        return c < 0x20 || c > 0x7e;
    return 0;
}
GM_HD unsigned char gm_kp_shown_byte(const gm_keydef *k, unsigned char c)
{
    return k->fold ? gm_kp_upper(c) : c;
}

/* Byte order's prefix under -f, -d or -i: the first 8 bytes k shows, big-endian,
 * zeros after; exact where the key ends within them and its last shown byte is
 * not NUL (zeros could hide it). */
GM_HD uint64_t gm_kp_shown(const gm_keydef *k, const unsigned char *s, size_t len, int *exact)
{
    uint64_t v = 0;
    int n = 0;
    unsigned char last = 1;
    size_t i = 0;
    for (; i < len && n < 8; i++)
        if (!gm_kp_skipped(k, s[i])) {
            last = gm_kp_shown_byte(k, s[i]);
            v = v << 8 | last;
            n++;
        }
    while (i < len && gm_kp_skipped(k, s[i]))
        i++;
    *exact = i == len && (n == 0 || last != 0);
    return n == 0 ? 0 : n < 8 ? v << (8 * (8 - n)) : v;
}

/* sort's getmonth: blanks, then the first three bytes folded naming a month
 * (1 to 12), else 0. The three letters as one number pick the month. */
GM_HD int gm_kp_month(const unsigned char *s, size_t len)
{
    size_t p = gm_kp_skip_blanks(s, len, 0);
    if (len - p < 3)
        return 0;
    uint32_t w = (uint32_t)gm_kp_upper(s[p]) << 16 | (uint32_t)gm_kp_upper(s[p + 1]) << 8 |
                 gm_kp_upper(s[p + 2]);
#define GM_KP_MON(a, b, c) ((uint32_t)(a) << 16 | (uint32_t)(b) << 8 | (uint32_t)(c))
    switch (w) {
    case GM_KP_MON('J', 'A', 'N'): return 1;
    case GM_KP_MON('F', 'E', 'B'): return 2;
    case GM_KP_MON('M', 'A', 'R'): return 3;
    case GM_KP_MON('A', 'P', 'R'): return 4;
    case GM_KP_MON('M', 'A', 'Y'): return 5;
    case GM_KP_MON('J', 'U', 'N'): return 6;
    case GM_KP_MON('J', 'U', 'L'): return 7;
    case GM_KP_MON('A', 'U', 'G'): return 8;
    case GM_KP_MON('S', 'E', 'P'): return 9;
    case GM_KP_MON('O', 'C', 'T'): return 10;
    case GM_KP_MON('N', 'O', 'V'): return 11;
    case GM_KP_MON('D', 'E', 'C'): return 12;
    default: return 0;
    }
#undef GM_KP_MON
}

/* Whether gm_kp_line_prefix makes the prefix of a first key k: bytes (-f, -d and
 * -i too), -M where nothing is skipped (the month is then the whole order), -n,
 * -h and -V on the key's own bytes. -g (strtold), -R (MD5), and the numbers,
 * months and versions of a copy that skips or folds take keys.c's host code. */
GM_HD int gm_kp_takes(const gm_keydef *k)
{
    switch (k->order) {
    case GM_ORDER_BYTES: return 1;
    case GM_ORDER_MONTH: return !k->ignore;
    case GM_ORDER_NUMERIC:
    case GM_ORDER_HUMAN:
    case GM_ORDER_VERSION: return !k->fold && !k->ignore;
    default: return 0;
    }
}

/* Whether the one key is the whole line in byte order (-f, -d and -i too), in
 * the last resort's direction. */
GM_HD int gm_kp_whole_line(const gm_keyspec *ks)
{
    const gm_keydef *k = &ks->keys[0];
    return ks->nkeys == 1 && k->order == GM_ORDER_BYTES && !k->skipsblanks && k->sword == 0 &&
           k->schar == 0 && k->eword == SIZE_MAX && k->reverse == ks->reverse;
}

/* Whether the one key is the whole line's own bytes: then lines tied on their
 * prefix are ordered by their next bytes whether or not the prefix is exact. */
GM_HD int gm_kp_whole_bytes(const gm_keyspec *ks)
{
    return gm_kp_whole_line(ks) && !ks->keys[0].fold && !ks->keys[0].ignore;
}

/* Whether the one key is the whole line's bytes, folded or not (-f), none
 * skipped: byte i of the key is byte i of the line, so lines tied on their
 * prefix are ordered by their next bytes as the key sees them (folded by -f). */
GM_HD int gm_kp_whole_offsets(const gm_keyspec *ks)
{
    return gm_kp_whole_line(ks) && !ks->keys[0].ignore;
}

/* keys.h's gm_line_prefix for a first key gm_kp_takes (the caller's check):
 * without keys the line's bytes (never exact: the last resort is all there is),
 * else the first key's encoding; either inverted by its -r. */
GM_HD uint64_t gm_kp_line_prefix(const gm_keyspec *ks, const unsigned char *line, size_t len,
                                 int *exact)
{
    if (ks->nkeys == 0) {
        uint64_t p = gm_kp_bytes(line, len, exact);
        *exact = 0;
        return ks->reverse ? ~p : p;
    }
    const gm_keydef *k = &ks->keys[0];
    size_t kl;
    const unsigned char *kt = gm_kp_key_span(ks->tab, k, line, len, &kl);
    uint64_t p;
    switch (k->order) {
    case GM_ORDER_NUMERIC: p = gm_kp_num(kt, kl, exact); break;
    case GM_ORDER_HUMAN: p = gm_kp_human(kt, kl, exact); break;
    case GM_ORDER_MONTH: p = (uint64_t)gm_kp_month(kt, kl), *exact = 1; break;
    case GM_ORDER_VERSION: p = gm_kp_version(kt, kl, exact); break;
    default:
        p = k->fold || k->ignore ? gm_kp_shown(k, kt, kl, exact) : gm_kp_bytes(kt, kl, exact);
        break;
    }
    return k->reverse ? ~p : p;
}

#endif
