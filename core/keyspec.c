/*
 * keyspec.c - building a gm_keyspec (keys.h) from the command line: -k POS1[,POS2]
 * parsed as sort.c's main parses it (parse_field_count, set_ordering, its
 * messages word for word, arguments quoted as gnulib's quote() does in the C
 * locale), then the global options inherited by keys without flags of their own
 * (sort's default_key_compare rule), -n implied when nothing names an order.
 */
#include "keys.h"

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

/* sort's set_ordering: the flag letters after a position. 'b' applies to the
 * start or the end it follows. Stops at the first byte that is not a flag;
 * *unsupported gets the first flag gpumerge does not implement. */
static const char *parse_flags(const char *s, gm_keydef *k, int end, int *nflags,
                               int *order_bits, char *unsupported)
{
    for (;; s++) {
        switch (*s) {
        case 'b':
            if (end)
                k->skipeblanks = 1;
            else
                k->skipsblanks = 1;
            break;
        case 'n': *order_bits |= 4; k->order = GM_ORDER_NUMERIC; break;
        case 'g': *order_bits |= 1; k->order = GM_ORDER_GENERAL; break;
        case 'h': *order_bits |= 2; k->order = GM_ORDER_HUMAN; break;
        case 'r': k->reverse = 1; break;
        case 'd': case 'f': case 'i': case 'M': case 'R': case 'V':
            if (!*unsupported)
                *unsupported = *s;
            break;
        default:
            return s;
        }
        ++*nflags;
    }
}

int gm_keyspec_parse_key(gm_keyspec *ks, const char *arg, gm_status *st)
{
    gm_keydef k;
    memset(&k, 0, sizeof k);
    k.order = GM_ORDER_BYTES;
    int nflags = 0, order_bits = 0;
    char unsupported = 0;
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
    s = parse_flags(s, &k, 0, &nflags, &order_bits, &unsupported);
    k.eword = SIZE_MAX;
    if (*s == ',') {
        if (!(s = parse_count(s + 1, &k.eword, "invalid number after ','", st)))
            return GM_EUSAGE;
        if (k.eword-- == 0)
            return bad_spec(st, "field number is zero", arg);
        if (*s == '.' && !(s = parse_count(s + 1, &k.echar, "invalid number after '.'", st)))
            return GM_EUSAGE;
        s = parse_flags(s, &k, 1, &nflags, &order_bits, &unsupported);
    }
    if (*s)
        return bad_spec(st, "stray character in field spec", arg);
    if (unsupported) {
        char q[512];
        quote_arg(arg, q, sizeof q);
        return gm_fail(st, GM_EUSAGE,
                       "key %s: flag '%c' is not supported (gpumerge orders keys by "
                       "b, g, h, n and r only)", q, unsupported);
    }
    if (order_bits & (order_bits - 1)) /* sort names them in the order g, h, n */
        return gm_fail(st, GM_EUSAGE, "options '-%s%s%s' are incompatible",
                       order_bits & 1 ? "g" : "", order_bits & 2 ? "h" : "",
                       order_bits & 4 ? "n" : "");
    if (ks->nkeys >= GM_MAX_KEYS)
        return gm_fail(st, GM_EUSAGE, "too many keys: at most %d -k options", GM_MAX_KEYS);
    k.has_flags = nflags > 0;
    ks->keys[ks->nkeys++] = k;
    return GM_OK;
}

/* The key is -n over the whole line (or over its first field where no -t can
 * cut a number short), in the global direction: as the integer path orders. */
static int whole_line_numeric(const gm_keyspec *ks)
{
    if (ks->nkeys != 1)
        return 0;
    const gm_keydef *k = &ks->keys[0];
    if (k->order != GM_ORDER_NUMERIC || k->sword != 0 || k->schar != 0 ||
        k->reverse != ks->reverse)
        return 0;
    return k->eword == SIZE_MAX || (k->eword == 0 && k->echar == 0 && ks->tab < 0);
}

void gm_keyspec_finish(gm_keyspec *ks)
{
    int named = ks->order != GM_ORDER_BYTES;
    for (int i = 0; i < ks->nkeys; i++)
        named |= ks->keys[i].order != GM_ORDER_BYTES;
    if (!named)
        ks->order = GM_ORDER_NUMERIC;
    for (int i = 0; i < ks->nkeys; i++) {
        gm_keydef *k = &ks->keys[i];
        if (k->has_flags)
            continue;
        k->skipsblanks = k->skipeblanks = ks->skip_blanks;
        k->order = ks->order;
        k->reverse = ks->reverse;
    }
    if (ks->nkeys == 0) { /* the whole line, in the global order */
        gm_keydef *k = &ks->keys[ks->nkeys++];
        memset(k, 0, sizeof *k);
        k->eword = SIZE_MAX;
        k->skipsblanks = k->skipeblanks = ks->skip_blanks;
        k->order = ks->order;
        k->reverse = ks->reverse;
    }
    ks->whole_line_numeric = whole_line_numeric(ks);
}
