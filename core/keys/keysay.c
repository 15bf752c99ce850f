/*
 * keysay.c - gm_keyspec_say (keys.h): a finished key spec spelt back as sort's
 * options, for -v's first line ("-t, -k2,2n -s", "-n on whole lines"). Each key
 * is written with the letters it compares by after gm_keyspec_finish (its own
 * or those it inherited), in GM_ORDER_LETTERS' order as sort's key_to_opts
 * spells them, so the line says what the run does, not only what was typed.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "keys/keys.h"

/* Appends printf-style text at *n, within size (the text cut where it would not fit). */
static void put(char *out, size_t size, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *out, size_t size, size_t *n, const char *fmt, ...)
{
    if (*n >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(out + *n, size - *n, fmt, ap);
    va_end(ap);
    if (w > 0)
        *n = *n + (size_t)w < size ? *n + (size_t)w : size - 1;
}

/* The order letters of k (no 'b', no 'r'), in GM_ORDER_LETTERS' order. */
static void letters(const gm_keydef *k, char out[8])
{
    int n = 0;
    for (const char *c = GM_ORDER_LETTERS; *c; c++) {
        int on = 0;
        switch (*c) {
        case 'd': on = k->ignore == GM_IGNORE_DICT; break;
        case 'f': on = k->fold; break;
        case 'g': on = k->order == GM_ORDER_GENERAL; break;
        case 'h': on = k->order == GM_ORDER_HUMAN; break;
        case 'i': on = k->ignore == GM_IGNORE_PRINT; break;
        case 'M': on = k->order == GM_ORDER_MONTH; break;
        case 'n': on = k->order == GM_ORDER_NUMERIC; break;
        case 'R': on = k->order == GM_ORDER_RANDOM; break;
        case 'V': on = k->order == GM_ORDER_VERSION; break;
        default: break;
        }
        if (on)
            out[n++] = *c;
    }
    out[n] = '\0';
}

/* A key as sort's -k: the start (field, character where it is not the field's
 * first, 'b'), the end where there is one (field, character, 'b'), then the
 * order letters and 'r' after the last position, where sort's users write them. */
static void say_key(const gm_keydef *k, char *out, size_t size, size_t *n)
{
    char l[8];
    letters(k, l);
    put(out, size, n, " -k%zu", k->sword + 1);
    if (k->schar)
        put(out, size, n, ".%zu", k->schar + 1);
    if (k->skipsblanks)
        put(out, size, n, "b");
    if (k->eword != SIZE_MAX) {
        put(out, size, n, ",%zu", k->eword + 1);
        if (k->echar)
            put(out, size, n, ".%zu", k->echar);
        if (k->skipeblanks)
            put(out, size, n, "b");
    }
    put(out, size, n, "%s%s", l, k->reverse ? "r" : "");
}

void gm_keyspec_say(const gm_keyspec *ks, char *out, size_t size)
{
    int user_keys = !ks->key_made;
    size_t n = 0;
    out[0] = '\0';
    if (ks->tab == '\t')
        put(out, size, &n, " -t '\\t'");
    else if (ks->tab >= 0x21 && ks->tab <= 0x7e && ks->tab != '\'')
        put(out, size, &n, " -t%c", ks->tab);
    else if (ks->tab >= 0)
        put(out, size, &n, " -t '\\%03o'", (unsigned)ks->tab);
    if (user_keys) {
        for (int i = 0; i < ks->nkeys; i++)
            say_key(&ks->keys[i], out, size, &n);
    } else {
        const gm_keydef *k = &ks->keys[0];
        char l[8];
        letters(k, l);
        if (l[0] || k->skipsblanks)
            put(out, size, &n, " -%s%s", k->skipsblanks ? "b" : "", l);
    }
    if (ks->reverse)
        put(out, size, &n, " -r");
    if (ks->stable)
        put(out, size, &n, " -s");
    if (ks->unique)
        put(out, size, &n, " -u");
    if (ks->eol == '\0')
        put(out, size, &n, " -z");
    if (!user_keys)
        put(out, size, &n, "%s", n ? " on whole lines" : " bytes of whole lines");
    if (ks->order_implied)
        put(out, size, &n, " (no order named: gpumerge's default)");
    else if (!user_keys && !ks->keys[0].fold && !ks->keys[0].ignore &&
             ks->keys[0].order == GM_ORDER_BYTES && ks->bytes_default)
        put(out, size, &n, " (no order named: sort's byte order)");
    if (n && out[0] == ' ') /* the leading space of the first word; out[n] is the NUL */
        memmove(out, out + 1, n);
}
