/*
 * numcmp.c - sort's three numeric orders in the C locale (see numcmp.h): -n
 * compares decimal text exactly without converting it (sign, integer digits
 * without leading zeros by count then bytes, fraction digits without trailing
 * zeros), -g converts with strtold, -h puts the SI unit first. Each order also has
 * a 64-bit encoding whose unsigned order follows it, in the manner of DuckDB's
 * normalised sort keys: -n is a header byte (sign and count of integer digits)
 * and the first 16 significant digits as one binary number below it, all of it
 * complemented for a negative number.
 */
#include "numcmp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned char uc;

/* sort's blanks in the C locale: isblank's space and tab, and newline. */
static int is_blank(uc c) { return c == ' ' || c == '\t' || c == '\n'; }
static int is_digit(uc c) { return (unsigned)(c - '0') <= 9; }

/* A number as -n reads it: the integer digits without leading zeros, the
 * fraction digits without trailing zeros; zero has neither and is never neg. */
typedef struct num {
    const uc *ip, *fp;
    size_t il, fl;
    int neg;
} num;

static num num_parse(const uc *s, size_t len)
{
    const uc *p = s, *e = s + len;
    num n;
    while (p < e && is_blank(*p))
        p++;
    n.neg = p < e && *p == '-';
    p += n.neg;
    while (p < e && *p == '0')
        p++;
    n.ip = p;
    while (p < e && is_digit(*p))
        p++;
    n.il = (size_t)(p - n.ip);
    n.fp = p;
    n.fl = 0;
    if (p < e && *p == '.') {
        n.fp = ++p;
        while (p < e && is_digit(*p))
            p++;
        n.fl = (size_t)(p - n.fp);
        while (n.fl && n.fp[n.fl - 1] == '0')
            n.fl--;
    }
    if (!n.il && !n.fl)
        n.neg = 0;
    return n;
}

static int num_cmp_parsed(const num *a, const num *b)
{
    if (a->neg != b->neg)
        return a->neg ? -1 : 1;
    int d;
    if (a->il != b->il)
        d = a->il < b->il ? -1 : 1;
    else if ((d = memcmp(a->ip, b->ip, a->il)) == 0) {
        size_t m = a->fl < b->fl ? a->fl : b->fl;
        if ((d = memcmp(a->fp, b->fp, m)) == 0)
            d = (a->fl > b->fl) - (a->fl < b->fl);
    }
    return a->neg ? -d : d;
}

int gm_num_cmp(const uc *a, size_t alen, const uc *b, size_t blen)
{
    num x = num_parse(a, alen), y = num_parse(b, blen);
    return num_cmp_parsed(&x, &y);
}

/* Integer digits past this count saturate the encoding. */
#define NUM_MAX_INT_DIGITS 125
/* Significant digits the encoding holds: 10^16 < 2^56. */
#define NUM_DIGITS 16

static const uint64_t pow10_table[NUM_DIGITS + 1] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
    100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
    10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
};

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Eight bytes at a time (SWAR, as simdjson parses eight digits): w holds them
 * with the first in its lowest byte. How many digits w begins with, 0 to 8. */
static inline int swar_digits(uint64_t w)
{
    const uint64_t lo7 = 0x7F7F7F7F7F7F7F7Full, high = 0x8080808080808080ull;
    uint64_t x = w ^ 0x3030303030303030ull; /* a digit's byte becomes 0 to 9 */
    uint64_t other = (((x & lo7) + 0x7676767676767676ull) | x) & high; /* x > 9 */
    return other ? __builtin_ctzll(other) / 8 : 8;
}

/* The value of w's first k digits (1 to 8). */
static inline uint64_t swar_value(uint64_t w, int k)
{
    uint64_t v = w - 0x3030303030303030ull; /* borrows only run into later bytes */
    v <<= 8 * (8 - k); /* the k digits in the top bytes, zeros before them */
    v = v * 10 + (v >> 8);
    v = ((v & 0x00FF00FF00FF00FFull) * ((100ull << 16) + 1)) >> 16;
    v = ((v & 0x0000FFFF0000FFFFull) * ((10000ull << 32) + 1)) >> 32;
    return v;
}
#define GM_NUM_SWAR 1
#endif

/* One pass over the number: the first 16 significant digits are gathered into d
 * as they are read (a digit past them only counts), so that the common short
 * number costs one loop per part and a multiply per digit, or per eight digits
 * where the bytes are read eight at a time. */
uint64_t gm_num_prefix(const uc *s, size_t len, int *exact)
{
    const uc *p = s, *e = s + len;
    while (p < e && is_blank(*p))
        p++;
    int neg = p < e && *p == '-';
    p += neg;
    while (p < e && *p == '0')
        p++;
    uint64_t d = 0;
    size_t nd = 0; /* digits gathered into d */
    const uc *ip = p;
#ifdef GM_NUM_SWAR
    while (e - p >= 8 && nd <= NUM_DIGITS - 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        int k = swar_digits(w);
        if (k == 0)
            break;
        d = d * pow10_table[k] + swar_value(w, k);
        nd += (size_t)k;
        p += k;
        if (k < 8)
            break;
    }
#endif
    for (; p < e && is_digit(*p); p++)
        if (nd < NUM_DIGITS)
            d = d * 10 + (uint64_t)(*p - '0'), nd++;
    size_t il = (size_t)(p - ip), sig = il; /* sig: up to the last nonzero digit */
    if (p < e && *p == '.') {
        const uc *fp = ++p;
        for (; p < e && is_digit(*p); p++) {
            if (nd < NUM_DIGITS)
                d = d * 10 + (uint64_t)(*p - '0'), nd++;
            if (*p != '0')
                sig = il + (size_t)(p - fp) + 1;
        }
    }
    if (sig == 0) { /* zero, whatever its sign */
        *exact = 1;
        return 0x80ull << 56;
    }
    uint64_t enc;
    if (il > NUM_MAX_INT_DIGITS) {
        enc = ~0ull;
        *exact = 0;
    } else {
        enc = (uint64_t)(0x81 + il) << 56 | d * pow10_table[NUM_DIGITS - nd];
        *exact = sig <= NUM_DIGITS;
    }
    return neg ? ~enc : enc;
}

/* -g's value of a key: strtold on a terminated copy (the key's bytes go on into
 * the rest of the line). Returns 0 on a conversion error. */
static int general_value(const uc *s, size_t len, long double *v)
{
    char stack[128];
    char *buf = stack;
    size_t n = len;
    if (n >= sizeof stack) {
        buf = malloc(n + 1);
        if (!buf) { /* a long key: its first bytes still give an order */
            buf = stack;
            n = sizeof stack - 1;
        }
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    *v = strtold(buf, &end);
    int ok = end != buf;
    if (buf != stack)
        free(buf);
    return ok;
}

int gm_general_cmp(const uc *a, size_t alen, const uc *b, size_t blen)
{
    long double x, y;
    int okx = general_value(a, alen, &x), oky = general_value(b, blen, &y);
    if (!okx)
        return oky ? -1 : 0;
    if (!oky)
        return 1;
    if (x < y)
        return -1;
    if (x > y)
        return 1;
    if (x == y)
        return 0;
    if (y == y)
        return -1; /* x is a NaN */
    if (x == x)
        return 1;
    /* two NaNs: by their printed forms, "-nan" < "nan", as coreutils 9.2 and
     * later order them (9.1 compares their bytes, padding included, which does
     * not repeat from one run to the next) */
    return (signbit(y) != 0) - (signbit(x) != 0);
}

uint64_t gm_general_prefix(const uc *s, size_t len, int *exact)
{
    long double x;
    if (!general_value(s, len, &x)) {
        *exact = 1;
        return 0;
    }
    if (isnan(x)) {
        *exact = 1;
        return signbit(x) ? 1 : 2;
    }
    if (x == 0)
        x = 0; /* -0 equals 0 */
    double d = (double)x;
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    *exact = (long double)d == x;
    /* negative numbers: all bits flipped; the smallest, -inf, stays above 2 */
    return bits >> 63 ? ~bits : bits | 1ull << 63;
}

/* sort's unit_order: the order of magnitude of an SI or IEC prefix letter, as
 * coreutils 9.1 (the reference sort) has it; 9.2 adds R (9) and Q (10). */
static int unit_order(uc c)
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
    default: return 0;
    }
}

/* The unit of a number with its blanks skipped: the letter right after its
 * digits (and '.' and digits), negated after '-', none when no digit is
 * nonzero. */
static int human_unit(const uc *s, size_t len)
{
    const uc *p = s, *e = s + len;
    int neg = p < e && *p == '-';
    p += neg;
    uc max = 0;
    while (p < e && is_digit(*p))
        max |= (uc)(*p++ - '0');
    if (p < e && *p == '.')
        for (p++; p < e && is_digit(*p); p++)
            max |= (uc)(*p - '0');
    if (!max || p == e)
        return 0;
    return neg ? -unit_order(*p) : unit_order(*p);
}

static size_t skip_blanks(const uc *s, size_t len)
{
    size_t i = 0;
    while (i < len && is_blank(s[i]))
        i++;
    return i;
}

int gm_human_cmp(const uc *a, size_t alen, const uc *b, size_t blen)
{
    size_t i = skip_blanks(a, alen), j = skip_blanks(b, blen);
    int d = human_unit(a + i, alen - i) - human_unit(b + j, blen - j);
    return d ? d : gm_num_cmp(a + i, alen - i, b + j, blen - j);
}

/* The unit's order (0..20: room for R and Q) in the top 5 bits, -n's encoding
 * shifted below it. */
uint64_t gm_human_prefix(const uc *s, size_t len, int *exact)
{
    size_t i = skip_blanks(s, len);
    int unit = human_unit(s + i, len - i);
    uint64_t n = gm_num_prefix(s + i, len - i, exact);
    /* the shift keeps exactness when the dropped bits are all equal to the
     * sign's filler: zeros for zero and positive numbers, ones for negative */
    uint64_t low = n & 31;
    if (low != (n < 0x80ull << 56 ? 31u : 0u))
        *exact = 0;
    return (uint64_t)(unit + 10) << 59 | n >> 5;
}
