/*
 * keys.c - libFuzzer target: core/keys/keys.h's comparison and prefix of two lines.
 * Under -n the comparison must agree with a slow reference that reads sort's
 * numcompare rules literally (blanks and sign stripped, integer digits without
 * leading zeros or thousands separators compared by count then digit by digit,
 * then the fractions digit by digit, zero unsigned); under every order it must be antisymmetric and obey the
 * prefix law (a lower prefix sorts first; equal exact prefixes, equal keys). The
 * first line is also parsed as a -k argument, which must succeed or say why.
 *
 * Input: one byte of options (bits 0-1 the order: -n, -g, -h, bytes; bit 4 -V
 * instead; bit 2 -r; bit 3 the key is field 2 of ','-separated fields, else the
 * whole line), then the two lines separated by a NUL byte, each in a buffer of
 * exactly its size.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/keys/keys.h"

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "fuzz/keys.c:%d: check failed: %s\n", __LINE__, #cond); \
            abort();                                                                 \
        }                                                                            \
    } while (0)

typedef unsigned char uc;

/* sort's thousands separator in the C locale, CHAR_MAX + 1, compared with bytes
 * read as unsigned char: the byte 0x80 where char is signed, else no byte. */
#define SORT_THOUSANDS (CHAR_MAX + 1)

/* The -n reading of s, normalised: sign, integer digits without leading zeros,
 * fraction digits without trailing zeros, each NUL-terminated in out. */
typedef struct { int neg; char *ip, *fp; } ref_num;

static ref_num ref_read(const uc *s, size_t n, char *buf)
{
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n'))
        i++;
    ref_num r = { 0, buf, NULL };
    if (i < n && s[i] == '-') {
        r.neg = 1;
        i++;
    }
    char *o = buf;
    while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == SORT_THOUSANDS)) {
        if (s[i] != SORT_THOUSANDS && (o != buf || s[i] != '0'))
            *o++ = (char)s[i];
        i++;
    }
    *o++ = '\0';
    r.fp = o;
    if (i < n && s[i] == '.')
        for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            *o++ = (char)s[i];
    while (o > r.fp && o[-1] == '0')
        o--;
    *o = '\0';
    if (!*r.ip && !*r.fp)
        r.neg = 0;
    return r;
}

static int ref_numcmp(const uc *a, size_t an, const uc *b, size_t bn)
{
    char *ba = malloc(an + 2), *bb = malloc(bn + 2);
    ref_num x = ref_read(a, an, ba), y = ref_read(b, bn, bb);
    int d = 0;
    if (x.neg != y.neg) {
        d = x.neg ? -1 : 1;
    } else {
        size_t lx = strlen(x.ip), ly = strlen(y.ip);
        if (lx != ly)
            d = lx < ly ? -1 : 1;
        for (size_t k = 0; !d && k < lx; k++)
            d = (x.ip[k] > y.ip[k]) - (x.ip[k] < y.ip[k]);
        for (size_t k = 0; !d && (x.fp[k] || y.fp[k]); k++) {
            char cx = x.fp[k] ? x.fp[k] : '0', cy = y.fp[k] ? y.fp[k] : '0';
            d = (cx > cy) - (cx < cy);
            if (!x.fp[k] || !y.fp[k]) /* one ended: the other has a nonzero digit */
                d = x.fp[k] ? 1 : -1;
        }
        if (x.neg)
            d = -d;
    }
    free(ba);
    free(bb);
    return d;
}

static int sgn(int d) { return (d > 0) - (d < 0); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned flags = data[0];
    const uc *text = data + 1;
    size_t len = size - 1;
    const uc *nul = memchr(text, 0, len);
    size_t an = nul ? (size_t)(nul - text) : len;
    size_t bn = nul ? len - an - 1 : 0;
    uc *a = malloc(an ? an : 1), *b = malloc(bn ? bn : 1);
    memcpy(a, text, an);
    if (bn)
        memcpy(b, nul + 1, bn);

    gm_keyspec ks;
    gm_keyspec_init(&ks);
    static const gm_order orders[] = { GM_ORDER_NUMERIC, GM_ORDER_GENERAL, GM_ORDER_HUMAN,
                                       GM_ORDER_BYTES };
    gm_order order = flags & 16 ? GM_ORDER_VERSION : orders[flags & 3];
    gm_status st = { GM_OK, "", 0 };
    if (flags & 8) {
        ks.tab = ',';
        static const char *const key[] = { "2,2n", "2,2g", "2,2h", "2,2" };
        CHECK(gm_keyspec_parse_key(&ks, flags & 16 ? "2,2V" : key[flags & 3], &st) == GM_OK);
        CHECK(gm_keyspec_parse_key(&ks, "9,9n", &st) == GM_OK); /* bytes stay bytes */
        ks.keys[0].reverse = (flags & 4) != 0;
    } else {
        ks.order = order == GM_ORDER_BYTES ? GM_ORDER_NUMERIC : order;
        ks.reverse = (flags & 4) != 0;
    }
    gm_keyspec_finish(&ks);
    CHECK(ks.keys[0].order == order || (!(flags & 8) && order == GM_ORDER_BYTES));

    int ab = gm_line_cmp(&ks, a, an, b, bn), ba = gm_line_cmp(&ks, b, bn, a, an);
    CHECK(sgn(ab) == -sgn(ba));
    CHECK(gm_line_cmp(&ks, a, an, a, an) == 0);
    if (!(flags & 8) && ks.keys[0].order == GM_ORDER_NUMERIC) {
        int want = ref_numcmp(a, an, b, bn);
        int got = gm_key_cmp(&ks, a, an, b, bn);
        CHECK(sgn(got) == (ks.reverse ? -want : want));
    }

    gm_keyspec first = ks;
    first.nkeys = 1;
    first.stable = 1;
    int ea, eb;
    uint64_t pa = gm_line_prefix(&ks, a, an, &ea), pb = gm_line_prefix(&ks, b, bn, &eb);
    if (pa < pb)
        CHECK(ab < 0);
    if (pa > pb)
        CHECK(ab > 0);
    if (pa == pb && ea && eb)
        CHECK(gm_line_cmp(&first, a, an, b, bn) == 0);
    if (gm_line_cmp(&first, a, an, b, bn) == 0)
        CHECK(pa == pb);

    /* the first line as a -k argument */
    char *arg = malloc(an + 1);
    memcpy(arg, a, an);
    arg[an] = '\0';
    gm_keyspec kk;
    gm_keyspec_init(&kk);
    gm_status ps = { GM_OK, "", 0 };
    int rc = gm_keyspec_parse_key(&kk, arg, &ps);
    CHECK(rc == GM_OK ? kk.nkeys == 1 : (rc == GM_EUSAGE && ps.msg[0] && kk.nkeys == 0));
    free(arg);
    free(a);
    free(b);
    return 0;
}
