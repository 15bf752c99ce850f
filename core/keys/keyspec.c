/*
 * keyspec.c - building a gm_keyspec (keys.h) from the command line: -k POS1[,POS2]
 * and the obsolete +POS1 [-POS2] parsed as sort.c's main parses them
 * (parse_field_count, set_ordering, its messages word for word, arguments quoted
 * as gnulib's quote() does in the C locale), then the global options inherited by
 * keys without flags of their own (sort's default_key_compare rule), -n implied
 * when nothing names an order.
 */
#include "keys/keys.h"

#include <stdio.h>
#include <string.h>

void gm_keyspec_init(gm_keyspec *ks)
{
    memset(ks, 0, sizeof *ks);
    ks->tab = -1;
    ks->order = GM_ORDER_BYTES;
    ks->eol = '\n';
}

/* arg quoted as sort quotes it: in single quotes, with C escapes for quotes,
 * backslashes and control characters and octal for any other unprintable byte. */
static void quote_arg(const char *arg, char *out, size_t cap)
{
    size_t o = 0;
    out[o++] = '\'';
    for (const unsigned char *p = (const unsigned char *)arg; *p && o + 6 < cap; p++) {
        static const char esc[] = "\a\b\f\n\r\t\v";
        static const char name[] = "abfnrtv";
        const char *e = strchr(esc, *p);
        if (*p == '\'' || *p == '\\') {
            out[o++] = '\\';
            out[o++] = (char)*p;
        } else if (e) {
            out[o++] = '\\';
            out[o++] = name[e - esc];
        } else if (*p < 0x20 || *p >= 0x7f) {
            o += (size_t)snprintf(out + o, cap - o, "\\%03o", *p);
        } else {
            out[o++] = (char)*p;
        }
    }
    out[o++] = '\'';
    out[o] = '\0';
}

static int bad_spec(gm_status *st, const char *what, const char *arg)
{
    char q[512];
    quote_arg(arg, q, sizeof q);
    return gm_fail(st, GM_EUSAGE, "%s: invalid field specification %s", what, q);
}

static int is_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* A count as xstrtoumax reads one: blanks, an optional '+', digits; too large a
 * count is SIZE_MAX. Returns the first byte after it, or NULL (and st set) when
 * no digit starts it. */
static const char *parse_count(const char *s, size_t *val, const char *what, gm_status *st)
{
    const char *p = s;
    while (is_space((unsigned char)*p))
        p++;
    if (*p == '+')
        p++;
    if ((unsigned)(*p - '0') > 9) {
        char q[512];
        quote_arg(s, q, sizeof q);
        gm_fail(st, GM_EUSAGE, "%s: invalid count at start of %s", what, q);
        return NULL;
    }
    size_t v = 0;
    int over = 0;
    for (; (unsigned)(*p - '0') <= 9; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (SIZE_MAX - d) / 10)
            over = 1;
        else
            v = v * 10 + d;
    }
    *val = over ? SIZE_MAX : v;
    return p;
}

int gm_order_incompatible(unsigned letters, char out[16])
{
    /* sort's check_ordering_compatibility: n, g, h, M count one each, and V, R,
     * d and i one together */
    unsigned one = (1u << 6) | (1u << 2) | (1u << 3) | (1u << 5); /* n g h M */
    unsigned text = (1u << 8) | (1u << 7) | (1u << 0) | (1u << 4); /* V R d i */
    int count = __builtin_popcount(letters & one) + !!(letters & text);
    size_t n = 0;
    for (int i = 0; GM_ORDER_LETTERS[i]; i++)
        if (letters & (1u << i))
            out[n++] = GM_ORDER_LETTERS[i];
    out[n] = '\0';
    return count > 1;
}

void gm_keydef_set_letters(gm_keydef *k, unsigned letters)
{
    static const struct {
        char letter;
        gm_order order;
    } by_precedence[] = { { 'n', GM_ORDER_NUMERIC }, { 'g', GM_ORDER_GENERAL },
                          { 'h', GM_ORDER_HUMAN },   { 'M', GM_ORDER_MONTH },
                          { 'R', GM_ORDER_RANDOM },  { 'V', GM_ORDER_VERSION } };
    k->order = GM_ORDER_BYTES;
    for (int i = 5; i >= 0; i--)
        if (letters & (1u << (strchr(GM_ORDER_LETTERS, by_precedence[i].letter) -
                              GM_ORDER_LETTERS)))
            k->order = by_precedence[i].order;
    k->fold = !!(letters & (1u << 1));
    k->ignore = letters & 1u ? GM_IGNORE_DICT : letters & (1u << 4) ? GM_IGNORE_PRINT
                                                                  : GM_IGNORE_NONE;
}

/* sort's set_ordering: the flag letters after a position. 'b' applies to the
 * start or the end it follows. Stops at the first byte that is not a flag;
 * *letters gets the order letters (GM_ORDER_LETTERS' bits). */
static const char *parse_flags(const char *s, gm_keydef *k, int end, int *nflags,
                               unsigned *letters)
{
    for (;; s++) {
        const char *at = *s ? strchr(GM_ORDER_LETTERS, *s) : NULL;
        if (*s == 'b') {
            if (end)
                k->skipeblanks = 1;
            else
                k->skipsblanks = 1;
        } else if (*s == 'r') {
            k->reverse = 1;
        } else if (at) {
            *letters |= 1u << (at - GM_ORDER_LETTERS);
        } else {
            return s;
        }
        ++*nflags;
    }
}

/* Appends k with its order letters (refused as sort refuses two orders) and the
 * count of its own flags. */
static int append_key(gm_keyspec *ks, gm_keydef *k, unsigned letters, int nflags,
                      gm_status *st)
{
    char named[16];
    if (gm_order_incompatible(letters, named))
        return gm_fail(st, GM_EUSAGE, "options '-%s' are incompatible", named);
    gm_keydef_set_letters(k, letters);
    if (ks->nkeys >= GM_MAX_KEYS)
        return gm_fail(st, GM_EUSAGE, "too many keys: at most %d -k options", GM_MAX_KEYS);
    k->has_flags = nflags > 0;
    ks->keys[ks->nkeys++] = *k;
    return GM_OK;
}

int gm_keyspec_parse_key(gm_keyspec *ks, const char *arg, gm_status *st)
{
    gm_keydef k;
    memset(&k, 0, sizeof k);
    k.order = GM_ORDER_BYTES;
    int nflags = 0;
    unsigned letters = 0;
    const char *s = parse_count(arg, &k.sword, "invalid number at field start", st);
    if (!s)
        return GM_EUSAGE;
    if (k.sword-- == 0)
        return bad_spec(st, "field number is zero", arg);
    if (*s == '.') {
        if (!(s = parse_count(s + 1, &k.schar, "invalid number after '.'", st)))
            return GM_EUSAGE;
        if (k.schar-- == 0)
            return bad_spec(st, "character offset is zero", arg);
    }
    s = parse_flags(s, &k, 0, &nflags, &letters);
    k.eword = SIZE_MAX;
    if (*s == ',') {
        if (!(s = parse_count(s + 1, &k.eword, "invalid number after ','", st)))
            return GM_EUSAGE;
        if (k.eword-- == 0)
            return bad_spec(st, "field number is zero", arg);
        if (*s == '.' && !(s = parse_count(s + 1, &k.echar, "invalid number after '.'", st)))
            return GM_EUSAGE;
        s = parse_flags(s, &k, 1, &nflags, &letters);
    }
    if (*s)
        return bad_spec(st, "stray character in field spec", arg);
    return append_key(ks, &k, letters, nflags, st);
}

/* sort's +POS1: "+F[.C][FLAGS]", F and C counted from 0. Returns 1 with the start
 * in *k when it is one; 0 when it is not (sort then reads the word as a file). */
static int obsolete_start(const char *pos1, gm_keydef *k, int *nflags, unsigned *letters)
{
    gm_status quiet; /* a bad count means a file name, not an error */
    const char *s = parse_count(pos1 + 1, &k->sword, "", &quiet);
    if (s && *s == '.')
        s = parse_count(s + 1, &k->schar, "", &quiet);
    if (!s)
        return 0;
    /* sort keeps a field past SIZE_MAX as SIZE_MAX, which it reads as the line's
     * start, the character then ignored */
    if (k->sword == SIZE_MAX)
        k->sword = k->schar = 0;
    s = parse_flags(s, k, 0, nflags, letters);
    return *s == '\0';
}

int gm_keyspec_parse_obsolete(gm_keyspec *ks, const char *pos1, const char *pos2,
                              int *is_key, gm_status *st)
{
    gm_keydef k;
    memset(&k, 0, sizeof k);
    k.order = GM_ORDER_BYTES;
    k.eword = SIZE_MAX;
    int nflags = 0;
    unsigned letters = 0;
    *is_key = obsolete_start(pos1, &k, &nflags, &letters);
    if (!*is_key)
        return GM_OK;
    if (pos2) {
        const char *s = parse_count(pos2 + 1, &k.eword, "invalid number after '-'", st);
        if (!s)
            return GM_EUSAGE;
        if (*s == '.' && !(s = parse_count(s + 1, &k.echar, "invalid number after '.'", st)))
            return GM_EUSAGE;
        /* -F ends after field F (counted from 1), -F.C at character C of field F + 1;
         * -0 is the end of the first field */
        if (k.echar == 0 && k.eword > 0)
            k.eword--;
        if (*parse_flags(s, &k, 1, &nflags, &letters))
            return bad_spec(st, "stray character in field spec", pos2);
    }
    return append_key(ks, &k, letters, nflags, st);
}

/* The key is -n over the whole line (or over its first field where no -t can
 * cut a number short), in the global direction: as the integer path orders. */
static int whole_line_numeric(const gm_keyspec *ks)
{
    if (ks->nkeys != 1)
        return 0;
    const gm_keydef *k = &ks->keys[0];
    if (k->order != GM_ORDER_NUMERIC || k->sword != 0 || k->schar != 0 ||
        k->reverse != ks->reverse || k->fold || k->ignore)
        return 0;
    return k->eword == SIZE_MAX || (k->eword == 0 && k->echar == 0 && ks->tab < 0);
}

/* A key without flags of its own takes the global ones. */
static void inherit(gm_keydef *k, const gm_keyspec *ks)
{
    k->skipsblanks = k->skipeblanks = ks->skip_blanks;
    k->order = ks->order;
    k->fold = ks->fold;
    k->ignore = ks->ignore;
    k->reverse = ks->reverse;
}

void gm_keyspec_finish(gm_keyspec *ks)
{
    /* an order, or a flag that compares text (-d, -f, -i), names the order */
    int named = ks->order != GM_ORDER_BYTES || ks->fold || ks->ignore;
    for (int i = 0; i < ks->nkeys; i++)
        named |= ks->keys[i].order != GM_ORDER_BYTES || ks->keys[i].fold ||
                 ks->keys[i].ignore;
    ks->order_implied = !named && !ks->bytes_default;
    if (ks->order_implied)
        ks->order = GM_ORDER_NUMERIC;
    for (int i = 0; i < ks->nkeys; i++)
        if (!ks->keys[i].has_flags)
            inherit(&ks->keys[i], ks);
    if (ks->nkeys == 0) { /* the whole line, in the global order */
        ks->key_made = 1;
        gm_keydef *k = &ks->keys[ks->nkeys++];
        memset(k, 0, sizeof *k);
        k->eword = SIZE_MAX;
        inherit(k, ks);
    }
    ks->whole_line_numeric = whole_line_numeric(ks);
}
