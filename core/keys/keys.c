/*
 * keys.c - sort's comparison of two lines by a gm_keyspec (keys.h): each key's
 * bytes located as sort.c's begfield and limfield locate them (fields begin at
 * the blanks before them without -t; a start skips whole fields, then blanks with
 * 'b', then characters; an end of N.C takes C characters of field N, or the whole
 * field when C is 0), compared in the key's order (numcmp.c) and direction, then
 * the last-resort comparison of whole lines; and the first key's 64-bit prefix.
 * The orders that compare text (-f, -d, -i, -M, -R, -V) are keytext.c's.
 * Locating a key and the prefix's encodings are keyprefix.h's, which the device
 * shares.
 */
#include "keys/keys.h"

#include <string.h>

#include "keys/keyprefix.h"
#include "keys/keytext.h"
#include "keys/numcmp.h"

typedef unsigned char uc;

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
    const uc *ka = gm_kp_key_span(ks->tab, k, a, alen, &la);
    const uc *kb = gm_kp_key_span(ks->tab, k, b, blen, &lb);
    int d;
    switch (gm_key_is_text(k) ? -1 : (int)k->order) {
    case -1: d = gm_text_cmp(ks, k, ka, la, kb, lb); break;
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

/* The prefix is keyprefix.h's, shared with the device, but for a first key it
 * does not take: -g, whose encoding needs strtold (numcmp.c), and keytext.c's
 * -R, -V and the numbers and months of a copy that skips or folds. */
uint64_t gm_line_prefix(const gm_keyspec *ks, const uc *line, size_t len, int *exact)
{
    int ex;
    uint64_t p;
    const gm_keydef *k = &ks->keys[0];
    if (ks->nkeys > 0 && !gm_kp_takes(k)) {
        size_t kl;
        const uc *kt = gm_kp_key_span(ks->tab, k, line, len, &kl);
        p = gm_key_is_text(k) ? gm_text_prefix(ks, k, kt, kl, &ex)
                              : gm_general_prefix(kt, kl, &ex);
        p = k->reverse ? ~p : p;
    } else {
        p = gm_kp_line_prefix(ks, line, len, &ex);
    }
    if (exact)
        *exact = ex;
    return p;
}
