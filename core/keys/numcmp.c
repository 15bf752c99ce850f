/*
 * numcmp.c - sort's three numeric orders in the C locale (see numcmp.h): -n
 * compares decimal text exactly without converting it (sign, integer digits
 * without leading zeros by count then bytes, fraction digits without trailing
 * zeros), -g converts with strtold, -h puts the SI unit first. Each order also has
 * a 64-bit encoding whose unsigned order follows it, in the manner of DuckDB's
 * normalised sort keys: -n is a header byte (sign and count of integer digits)
 * and the first 16 significant digits as one binary number below it, all of it
 * complemented for a negative number. The -n and -h encodings are keyprefix.h's,
 * which the device shares.
 */
#include "keys/numcmp.h"

#include "keys/keyprefix.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned char uc;

/* A number as -n reads it: the integer digits without leading zeros, the
 * fraction digits without trailing zeros; zero has neither and is never neg. */
typedef struct num {
    const uc *ip, *fp; /* the integer and the fraction digits in s (num_parse) */
    size_t il, fl;     /* their lengths, separators counted in il (num_parse) */
    int neg;           /* a '-' came before a nonzero number (num_parse) */
    int seps; /* thousands separators among the integer digits (keyprefix.h) */
} num;

static num num_parse(const uc *s, size_t len)
{
    const uc *p = s, *e = s + len;
    num n;
    while (p < e && gm_kp_blank(*p))
        p++;
    n.neg = p < e && *p == '-';
    p += n.neg;
    while (p < e && (*p == '0' || gm_kp_thousands(*p)))
        p++;
    n.ip = p;
    n.il = 0;
    n.seps = 0;
    for (; p < e && (gm_kp_digit(*p) || gm_kp_thousands(*p)); p++) {
        if (gm_kp_digit(*p))
            n.il++;
        else
            n.seps = 1;
    }
    n.fp = p;
    n.fl = 0;
    if (p < e && *p == '.') {
        n.fp = ++p;
        while (p < e && gm_kp_digit(*p))
            p++;
        n.fl = (size_t)(p - n.fp);
        while (n.fl && n.fp[n.fl - 1] == '0')
            n.fl--;
    }
    if (!n.il && !n.fl)
        n.neg = 0;
    return n;
}

/* The order of n integer digits at a and at b, thousands separators passed. */
static int digits_cmp(const uc *a, const uc *b, size_t n)
{
    for (; n; n--, a++, b++) {
        while (gm_kp_thousands(*a))
            a++;
        while (gm_kp_thousands(*b))
            b++;
        if (*a != *b)
            return *a < *b ? -1 : 1;
    }
    return 0;
}

static int num_cmp_parsed(const num *a, const num *b)
{
    if (a->neg != b->neg)
        return a->neg ? -1 : 1;
    int d;
    if (a->il != b->il)
        d = a->il < b->il ? -1 : 1;
    else if ((d = a->seps || b->seps ? digits_cmp(a->ip, b->ip, a->il)
                                        : memcmp(a->ip, b->ip, a->il)) == 0) {
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

uint64_t gm_num_prefix(const uc *s, size_t len, int *exact)
{
    return gm_kp_num(s, len, exact);
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

int gm_human_cmp(const uc *a, size_t alen, const uc *b, size_t blen)
{
    size_t i = gm_kp_skip_blanks(a, alen, 0), j = gm_kp_skip_blanks(b, blen, 0);
    int d = gm_kp_human_unit(a + i, alen - i) - gm_kp_human_unit(b + j, blen - j);
    return d ? d : gm_num_cmp(a + i, alen - i, b + j, blen - j);
}

uint64_t gm_human_prefix(const uc *s, size_t len, int *exact)
{
    return gm_kp_human(s, len, exact);
}
