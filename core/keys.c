/*
 * keys.c - sort's comparison of two lines by a gm_keyspec (keys.h): each key's
 * bytes located as sort.c's begfield and limfield locate them (fields begin at
 * the blanks before them without -t; a start skips whole fields, then blanks with
 * 'b', then characters; an end of N.C takes C characters of field N, or the whole
 * field when C is 0), compared in the key's order (numcmp.c) and direction, then
 * the last-resort comparison of whole lines; and the first key's 64-bit prefix.
 */
#include "keys.h"

#include <string.h>

#include "numcmp.h"

typedef unsigned char uc;

static const uc gm_blanks[256] = { [' '] = 1, ['\t'] = 1, ['\n'] = 1 };

/* The position after n more fields from p: without -t a field is its leading
 * blanks and the non-blanks after them; with -t it ends at the separator, which
 * the step over the last field passes only when past_last is set (sort's
 * limfield stops at the separator that ends the key's last field). */
/* The first c in s[p, len), or len: a field's first bytes are looked at one by
 * one (most fields are short, shorter than memchr's start-up), the rest by
 * memchr. */
static size_t find_byte(const uc *s, size_t len, size_t p, uc c)
{
    size_t stop = len - p > 16 ? p + 16 : len;
    for (; p < stop; p++)
        if (s[p] == c)
            return p;
    const uc *t = p < len ? memchr(s + p, c, len - p) : NULL;
    return t ? (size_t)(t - s) : len;
}

static size_t skip_fields(const gm_keyspec *ks, const uc *s, size_t len, size_t p, size_t n,
                          int past_last)
{
    if (ks->tab >= 0) {
        while (p < len && n--) {
            p = find_byte(s, len, p, (uc)ks->tab);
            if (p < len && (n || past_last))
                p++;
        }
    } else {
        while (p < len && n--) {
            while (p < len && gm_blanks[s[p]])
                p++;
            while (p < len && !gm_blanks[s[p]])
                p++;
        }
    }
    return p;
}

static size_t skip_blanks(const uc *s, size_t len, size_t p)
{
    while (p < len && gm_blanks[s[p]])
        p++;
    return p;
}

/* The bytes of key k in a line (sort's begfield and limfield): the start skips
 * sword fields, then blanks with 'b', then schar characters; the end skips eword
 * fields, then blanks with 'b' and echar characters, bounded by the line's end
 * only (echar 0: the end of field eword). A limit before the start is an empty
 * key. The end's field walk goes on from the start's where it lies further. */
static const uc *key_span(const gm_keyspec *ks, const gm_keydef *k, const uc *s, size_t len,
                          size_t *klen)
{
    size_t field = skip_fields(ks, s, len, 0, k->sword, 1);
    size_t beg = k->skipsblanks ? skip_blanks(s, len, field) : field;
    beg = k->schar < len - beg ? beg + k->schar : len;
    size_t lim = len;
    if (k->eword != SIZE_MAX) {
        size_t n = k->eword + (k->echar == 0);
        lim = n > k->sword ? skip_fields(ks, s, len, field, n - k->sword, k->echar != 0)
                           : skip_fields(ks, s, len, 0, n, k->echar != 0);
        if (k->echar) {
            if (k->skipeblanks)
                lim = skip_blanks(s, len, lim);
            lim = k->echar < len - lim ? lim + k->echar : len;
        }
    }
    *klen = lim > beg ? lim - beg : 0;
    return s + beg;
}

/* Byte order: memcmp, then the shorter first. */
static int bytes_cmp(const uc *a, size_t alen, const uc *b, size_t blen)
{
    size_t m = alen < blen ? alen : blen;
    int d = m ? memcmp(a, b, m) : 0;
    return d ? d : (alen > blen) - (alen < blen);
}

static int key_cmp_one(const gm_keyspec *ks, const gm_keydef *k, const uc *a, size_t alen,
                       const uc *b, size_t blen)
{
    size_t la, lb;
    const uc *ka = key_span(ks, k, a, alen, &la);
    const uc *kb = key_span(ks, k, b, blen, &lb);
    int d;
    switch (k->order) {
    case GM_ORDER_NUMERIC: d = gm_num_cmp(ka, la, kb, lb); break;
    case GM_ORDER_GENERAL: d = gm_general_cmp(ka, la, kb, lb); break;
    case GM_ORDER_HUMAN: d = gm_human_cmp(ka, la, kb, lb); break;
    default: d = bytes_cmp(ka, la, kb, lb); break;
    }
    d = (d > 0) - (d < 0);
    return k->reverse ? -d : d;
}

static int last_resort(const gm_keyspec *ks, const uc *a, size_t alen, const uc *b,
                       size_t blen)
{
    int d = bytes_cmp(a, alen, b, blen);
    return ks->reverse ? -d : d;
}

int gm_line_cmp_from(const gm_keyspec *ks, int from, const uc *a, size_t alen, const uc *b,
                     size_t blen)
{
    for (int i = from; i < ks->nkeys; i++) {
        int d = key_cmp_one(ks, &ks->keys[i], a, alen, b, blen);
        if (d)
            return d;
    }
    if (ks->nkeys > 0 && (ks->stable || ks->unique))
        return 0;
    return last_resort(ks, a, alen, b, blen);
}

int gm_line_cmp(const gm_keyspec *ks, const uc *a, size_t alen, const uc *b, size_t blen)
{
    return gm_line_cmp_from(ks, 0, a, alen, b, blen);
}

int gm_key_cmp(const gm_keyspec *ks, const uc *a, size_t alen, const uc *b, size_t blen)
{
    if (ks->nkeys == 0) /* sort without keys: whole lines decide */
        return last_resort(ks, a, alen, b, blen);
    for (int i = 0; i < ks->nkeys; i++) {
        int d = key_cmp_one(ks, &ks->keys[i], a, alen, b, blen);
        if (d)
            return d;
    }
    return 0;
}

/* Byte order's prefix: the first 8 bytes big-endian, zeros after a shorter key.
 * Exact unless a longer key or trailing NULs could hide behind the same bytes. */
static uint64_t bytes_prefix(const uc *s, size_t len, int *exact)
{
    uc buf[8] = { 0 };
    memcpy(buf, s, len < 8 ? len : 8);
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | buf[i];
    *exact = len <= 8 && (len == 0 || s[len - 1] != 0);
    return v;
}

uint64_t gm_line_prefix(const gm_keyspec *ks, const uc *line, size_t len, int *exact)
{
    int ex;
    uint64_t p;
    if (ks->nkeys == 0) { /* the last resort alone */
        p = bytes_prefix(line, len, &ex);
        if (exact)
            *exact = 0;
        return ks->reverse ? ~p : p;
    }
    const gm_keydef *k = &ks->keys[0];
    size_t kl;
    const uc *kt = key_span(ks, k, line, len, &kl);
    switch (k->order) {
    case GM_ORDER_NUMERIC: p = gm_num_prefix(kt, kl, &ex); break;
    case GM_ORDER_GENERAL: p = gm_general_prefix(kt, kl, &ex); break;
    case GM_ORDER_HUMAN: p = gm_human_prefix(kt, kl, &ex); break;
    default: p = bytes_prefix(kt, kl, &ex); break;
    }
    if (exact)
        *exact = ex;
    return k->reverse ? ~p : p;
}
