/*
 * keys.c - libFuzzer target: core/keys/keys.h's comparison and prefix of two lines.
 * Under -n the comparison must agree with a slow reference that reads sort's
 * numcompare rules literally (blanks and sign stripped, integer digits without
 * leading zeros or thousands separators compared by count then digit by digit,
 * then the fractions digit by digit, zero unsigned); under the text orders (-f,
 * -d, -i and their mixes) with a reference that drops and folds the bytes as
 * sort's translate and ignore tables do, then compares what is left byte by byte;
 * under -M with one that reads sort's getmonth (blanks skipped, three letters in
 * any case, an unknown name before JAN). Under every order the comparison must be
 * antisymmetric and obey the prefix law (a lower prefix sorts first; equal exact
 * prefixes, equal keys). The first line is also parsed as a -k argument, which
 * must succeed or say why.
 *
 * Input: one byte of options (bits 0-1 the order: -n, -g, -h, bytes; bit 4 -V
 * instead; bit 2 -r; bit 3 the key is field 2 of ','-separated fields, else the
 * whole line; bits 5-7 a text flag: none, -f (with the order above), -d, -i, -df,
 * -if (in byte order), -M, -Mf), then the two lines separated by a NUL byte, each
 * in a buffer of exactly its size.
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

/* The key as -f, -d and -i see it, in out: bytes -d or -i skips dropped (-d keeps
 * letters, digits and blanks, newline among them as sort.c's field_sep has it;
 * -i keeps 0x20 to 0x7e), lower case folded up. */
static size_t ref_text(const uc *s, size_t n, int fold, int ignore, uc *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        uc c = s[i];
        int alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        if (ignore == GM_IGNORE_DICT && !(alnum || c == ' ' || c == '\t' || c == '\n'))
            continue;
        if (ignore == GM_IGNORE_PRINT && !(c >= 0x20 && c <= 0x7e))
            continue;
        out[o++] = fold && c >= 'a' && c <= 'z' ? (uc)(c - 'a' + 'A') : c;
    }
    return o;
}

static int ref_textcmp(const uc *a, size_t an, const uc *b, size_t bn, int fold, int ignore)
{
    uc *ta = malloc(an + 1), *tb = malloc(bn + 1);
    size_t la = ref_text(a, an, fold, ignore, ta), lb = ref_text(b, bn, fold, ignore, tb);
    size_t m = la < lb ? la : lb;
    int d = m ? memcmp(ta, tb, m) : 0;
    if (!d)
        d = (la > lb) - (la < lb);
    free(ta);
    free(tb);
    return d;
}

/* sort's getmonth: 1 to 12 for a month's first three letters after blanks, in
 * any case; 0 for anything else. */
static int ref_month(const uc *s, size_t n)
{
    static const char *const names[] = { "JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                         "JUL", "AUG", "SEP", "OCT", "NOV", "DEC" };
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n'))
        i++;
    if (n - i < 3)
        return 0;
    for (int m = 0; m < 12; m++) {
        int j = 0;
        while (j < 3 && (s[i + j] & ~0x20) == names[m][j])
            j++;
        if (j == 3)
            return m + 1;
    }
    return 0;
}

/* The letters bits 5-7 of the options byte add to a key. -d, -i and -M name the
 * order instead of bits 0-1 and 4 (sort refuses them beside -n, -g, -h or -V);
 * -f keeps it. */
static const char *const text_letters[] = { "", "f", "d", "i", "df", "if", "M", "Mf" };

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
    unsigned tf = flags >> 5;
    int fold = tf == 1 || tf == 4 || tf == 5 || tf == 7;
    int ignore = tf == 2 || tf == 4 ? GM_IGNORE_DICT
                 : tf == 3 || tf == 5 ? GM_IGNORE_PRINT : GM_IGNORE_NONE;
    if (ignore)
        order = GM_ORDER_BYTES;
    if (tf >= 6)
        order = GM_ORDER_MONTH;
    gm_status st = { GM_OK, "", 0 };
    if (flags & 8) {
        ks.tab = ',';
        static const char *const key[] = { "2,2n", "2,2g", "2,2h", "2,2" };
        char arg[16];
        snprintf(arg, sizeof arg, "%s%s",
                 ignore || tf >= 6 ? "2,2" : flags & 16 ? "2,2V" : key[flags & 3],
                 text_letters[tf]);
        CHECK(gm_keyspec_parse_key(&ks, arg, &st) == GM_OK);
        CHECK(gm_keyspec_parse_key(&ks, "9,9n", &st) == GM_OK); /* bytes stay bytes */
        ks.keys[0].reverse = (flags & 4) != 0;
    } else {
        ks.order = order == GM_ORDER_BYTES && !tf ? GM_ORDER_NUMERIC : order;
        ks.fold = fold;
        ks.ignore = ignore;
        ks.reverse = (flags & 4) != 0;
    }
    gm_keyspec_finish(&ks);
    CHECK(ks.keys[0].order == order ||
          (!(flags & 8) && order == GM_ORDER_BYTES && !tf && !ks.keys[0].fold));
    CHECK(ks.keys[0].fold == fold && ks.keys[0].ignore == ignore);

    int ab = gm_line_cmp(&ks, a, an, b, bn), ba = gm_line_cmp(&ks, b, bn, a, an);
    CHECK(sgn(ab) == -sgn(ba));
    CHECK(gm_line_cmp(&ks, a, an, a, an) == 0);
    if (!(flags & 8) && ks.keys[0].order == GM_ORDER_NUMERIC) {
        int want = ref_numcmp(a, an, b, bn);
        int got = gm_key_cmp(&ks, a, an, b, bn);
        CHECK(sgn(got) == (ks.reverse ? -want : want));
    }
    if (!(flags & 8) && (ks.keys[0].order == GM_ORDER_BYTES || ks.keys[0].order == GM_ORDER_MONTH)) {
        int want = ks.keys[0].order == GM_ORDER_MONTH
                       ? sgn(ref_month(a, an) - ref_month(b, bn))
                       : sgn(ref_textcmp(a, an, b, bn, fold, ignore));
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
