/*
 * keytext.c - the orders of text keys (keytext.h), as coreutils' sort.c's
 * keycompare orders them in the C locale: -f folds lower case to upper, -d and
 * -i skip bytes (sort's nondictionary and nonprinting tables), -M compares
 * getmonth's months, -R the MD5 of a seed and the key (compare_random: the
 * digests, then the bytes), -V gnulib's filenvercmp (vercmp.c). A key that skips
 * or folds is copied so before any order but bytes compares it, as keycompare
 * copies it; bytes with -d or -i compare as sort's CMP_WITH_IGNORE walks them.
 * Each order's 64-bit prefix keeps keys.h's promise (a smaller prefix is a
 * smaller key).
 */
#include "keytext.h"

#include <stdlib.h>
#include <string.h>

#include "md5.h"
#include "numcmp.h"
#include "vercmp.h"

typedef unsigned char uc;

static int blank(uc c) { return c == ' ' || c == '\t' || c == '\n'; }
static int alnum(uc c) { return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'); }
static uc upper(uc c) { return c >= 'a' && c <= 'z' ? (uc)(c - 'a' + 'A') : c; }

/* Whether k skips byte c. */
static int skipped(const gm_keydef *k, uc c)
{
    if (k->ignore == GM_IGNORE_DICT)
        return !alnum(c) && !blank(c);
    if (k->ignore == GM_IGNORE_PRINT)
        return c < 0x20 || c > 0x7e;
    return 0;
}

static uc shown(const gm_keydef *k, uc c) { return k->fold ? upper(c) : c; }

/* sort's CMP_WITH_IGNORE, or the folded bytes: the key's bytes as k shows them,
 * skipped ones passed over, then the one with bytes left is larger. */
static int bytes_cmp(const gm_keydef *k, const uc *a, size_t la, const uc *b, size_t lb)
{
    size_t i = 0, j = 0;
    for (;;) {
        while (i < la && skipped(k, a[i]))
            i++;
        while (j < lb && skipped(k, b[j]))
            j++;
        if (i == la || j == lb)
            return (i < la) - (j < lb);
        int d = (int)shown(k, a[i]) - (int)shown(k, b[j]);
        if (d)
            return d;
        i++;
        j++;
    }
}

/* sort's getmonth: blanks, then the first three bytes folded naming a month
 * (1 to 12), else 0. */
static int month(const uc *s, size_t len)
{
    static const char names[12][4] = { "JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                       "JUL", "AUG", "SEP", "OCT", "NOV", "DEC" };
    size_t p = 0;
    while (p < len && blank(s[p]))
        p++;
    if (len - p < 3)
        return 0;
    for (int m = 0; m < 12; m++)
        if (upper(s[p]) == (uc)names[m][0] && upper(s[p + 1]) == (uc)names[m][1] &&
            upper(s[p + 2]) == (uc)names[m][2])
            return m + 1;
    return 0;
}

static void digest(const gm_keyspec *ks, const uc *s, size_t len, uc out[16])
{
    gm_md5 m;
    gm_md5_init(&m);
    gm_md5_update(&m, ks->random_seed, sizeof ks->random_seed);
    gm_md5_update(&m, s, len);
    gm_md5_final(&m, out);
}

static int plain_cmp(const uc *a, size_t la, const uc *b, size_t lb)
{
    size_t m = la < lb ? la : lb;
    int d = m ? memcmp(a, b, m) : 0;
    return d ? d : (la > lb) - (la < lb);
}

/* The key in order k on bytes already skipped and folded. */
static int ordered_cmp(const gm_keyspec *ks, const gm_keydef *k, const uc *a, size_t la,
                       const uc *b, size_t lb)
{
    uc da[16], db[16];
    int d;
    switch (k->order) {
    case GM_ORDER_NUMERIC: return gm_num_cmp(a, la, b, lb);
    case GM_ORDER_GENERAL: return gm_general_cmp(a, la, b, lb);
    case GM_ORDER_HUMAN: return gm_human_cmp(a, la, b, lb);
    case GM_ORDER_MONTH: return month(a, la) - month(b, lb);
    case GM_ORDER_VERSION: return gm_version_cmp(a, la, b, lb);
    case GM_ORDER_RANDOM:
        digest(ks, a, la, da);
        digest(ks, b, lb, db);
        d = memcmp(da, db, 16);
        return d ? d : plain_cmp(a, la, b, lb);
    default: return plain_cmp(a, la, b, lb);
    }
}

/* s as k shows it, skipped bytes dropped, into buf (cap bytes) or a malloc'd
 * copy (*heap). Returns the copy and its length in *out. */
static const uc *shown_copy(const gm_keydef *k, const uc *s, size_t len, uc *buf, size_t cap,
                            uc **heap, size_t *out)
{
    uc *to = len <= cap ? buf : (*heap = malloc(len ? len : 1));
    if (!to)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        if (!skipped(k, s[i]))
            to[n++] = shown(k, s[i]);
    *out = n;
    return to;
}

int gm_text_cmp(const gm_keyspec *ks, const gm_keydef *k, const uc *a, size_t la, const uc *b,
                size_t lb)
{
    if (k->order == GM_ORDER_BYTES)
        return bytes_cmp(k, a, la, b, lb);
    if (!k->fold && !k->ignore)
        return ordered_cmp(ks, k, a, la, b, lb);
    uc bufa[256], bufb[256], *ha = NULL, *hb = NULL;
    size_t na, nb;
    const uc *ca = shown_copy(k, a, la, bufa, sizeof bufa, &ha, &na);
    const uc *cb = shown_copy(k, b, lb, bufb, sizeof bufb, &hb, &nb);
    /* without memory for a copy the fold and skip are left out: the order of
     * the key's own bytes */
    int d = ca && cb ? ordered_cmp(ks, k, ca, na, cb, nb) : ordered_cmp(ks, k, a, la, b, lb);
    free(ha);
    free(hb);
    return d;
}

/* The first 8 bytes k shows, big-endian, zeros after; exact where the key ends
 * within them and its last shown byte is not NUL (zeros could hide it). */
static uint64_t shown_prefix(const gm_keydef *k, const uc *s, size_t len, int *exact)
{
    uint64_t v = 0;
    int n = 0;
    uc last = 1;
    size_t i = 0;
    for (; i < len && n < 8; i++)
        if (!skipped(k, s[i])) {
            last = shown(k, s[i]);
            v = v << 8 | last;
            n++;
        }
    while (i < len && skipped(k, s[i]))
        i++;
    *exact = i == len && (n == 0 || last != 0);
    return n == 0 ? 0 : n < 8 ? v << (8 * (8 - n)) : v;
}

uint64_t gm_text_prefix(const gm_keyspec *ks, const gm_keydef *k, const uc *s, size_t len,
                        int *exact)
{
    uc d[16];
    uint64_t v = 0;
    switch (k->order) {
    case GM_ORDER_BYTES:
        return shown_prefix(k, s, len, exact);
    case GM_ORDER_MONTH: /* the month is the whole order of the key */
        if (!k->ignore) {
            *exact = 1;
            return (uint64_t)month(s, len);
        }
        break;
    case GM_ORDER_RANDOM: /* the digest's first bytes, when nothing changes them */
        if (!k->fold && !k->ignore) {
            digest(ks, s, len, d);
            for (int i = 0; i < 8; i++)
                v = v << 8 | d[i];
            *exact = 0;
            return v;
        }
        break;
    default:
        break;
    }
    *exact = 0; /* -V, and the rest copied first: the comparison decides */
    return 0;
}
