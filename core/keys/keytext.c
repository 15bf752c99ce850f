/*
 * keytext.c - the orders of text keys (keytext.h), as coreutils' sort.c's
 * keycompare orders them in the C locale: -f folds lower case to upper, -d and
 * -i skip bytes (sort's nondictionary and nonprinting tables), -M compares
 * getmonth's months, -R the MD5 of a seed and the key (compare_random: the
 * digests, then the bytes), -V gnulib's filenvercmp (vercmp.c). A key that skips
 * or folds is copied so before any order but bytes compares it, as keycompare
 * copies it; bytes with -d or -i compare as sort's CMP_WITH_IGNORE walks them.
 * Each order's 64-bit prefix keeps keys.h's promise (a smaller prefix is a
 * smaller key); -V's is verprefix.h's, which keyprefix.h makes.
 */
#include "keys/keytext.h"

#include <stdlib.h>
#include <string.h>

#include "keys/keyprefix.h"
#include "keys/md5.h"
#include "keys/numcmp.h"
#include "keys/vercmp.h"

typedef unsigned char uc;

/* sort's CMP_WITH_IGNORE, or the folded bytes: the key's bytes as k shows them,
 * skipped ones passed over, then the one with bytes left is larger. */
static int bytes_cmp(const gm_keydef *k, const uc *a, size_t la, const uc *b, size_t lb)
{
    size_t i = 0, j = 0;
    for (;;) {
        while (i < la && gm_kp_skipped(k, a[i]))
            i++;
        while (j < lb && gm_kp_skipped(k, b[j]))
            j++;
        if (i == la || j == lb)
            return (i < la) - (j < lb);
        int d = (int)gm_kp_shown_byte(k, a[i]) - (int)gm_kp_shown_byte(k, b[j]);
        if (d)
            return d;
        i++;
        j++;
    }
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
    case GM_ORDER_MONTH: return gm_kp_month(a, la) - gm_kp_month(b, lb);
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
        if (!gm_kp_skipped(k, s[i]))
            to[n++] = gm_kp_shown_byte(k, s[i]);
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

uint64_t gm_text_prefix(const gm_keyspec *ks, const gm_keydef *k, const uc *s, size_t len,
                        int *exact)
{
    *exact = 0;
    if (k->order != GM_ORDER_RANDOM || k->fold || k->ignore)
        return 0; /* copies that skip or fold: the comparison decides */
    uc d[16];
    digest(ks, s, len, d); /* the digest's first bytes */
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | d[i];
    return v;
}
