/*
 * keytext.h - the orders of keys that compare text rather than bytes alone, on
 * the host: -f, -d, -i over any order, -M, -R and -V (keytext.c, after
 * coreutils' sort.c keycompare in the C locale).
 */
#ifndef GM_KEYTEXT_H
#define GM_KEYTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "keys/keys.h"

/* Whether key k needs these orders (keys.c's own cover the rest). */
static inline int gm_key_is_text(const gm_keydef *k)
{
    return k->fold || k->ignore || k->order == GM_ORDER_MONTH ||
           k->order == GM_ORDER_RANDOM || k->order == GM_ORDER_VERSION;
}

/* The keys a and b (their bytes, located) in k's order, without its -r.
 * Returns <0, 0 or >0. */
int gm_text_cmp(const gm_keyspec *ks, const gm_keydef *k, const unsigned char *a, size_t alen,
                const unsigned char *b, size_t blen);

/* The prefix of a first key that keyprefix.h's gm_kp_takes leaves to the host
 * (-R's digest; 0 for the rest, -V with -f, -d or -i among them), in k's order
 * without its -r; *exact as keys.h's gm_line_prefix says. */
uint64_t gm_text_prefix(const gm_keyspec *ks, const gm_keydef *k, const unsigned char *s,
                        size_t len, int *exact);

#endif
