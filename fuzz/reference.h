/*
 * reference.h - what the fuzz targets check gpumerge against: a plain,
 * line-at-a-time reading of the input format of core/read/input.h (written apart from
 * the parser under test, from the man page's INPUT FORMAT), and the checks every
 * message must pass. Header-only: each target is one program.
 */
#ifndef GM_FUZZ_REFERENCE_H
#define GM_FUZZ_REFERENCE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum ref_problem { REF_OK, REF_NOT_INT, REF_RANGE, REF_DISORDER };

typedef struct ref_parse {
    int64_t *keys;          /* malloc'd */
    int64_t n;
    enum ref_problem prob;  /* the first problem in line order */
    int64_t prob_line;      /* 1-based */
    int canonical;          /* every line is a key in canonical form ("-?[1-9][0-9]*|0\n") */
} ref_parse;

/* One line, without its newline: 0 blank, 1 key (*v), 2 not an integer, 3 out of
 * range. Accepted: [blanks][+|-]digits[blanks][\r]; blanks are space and tab. */
static int ref_line(const char *s, size_t n, int64_t *v)
{
    size_t b = 0, e = n;
    if (e > 0 && s[e - 1] == '\r')
        e--;
    while (b < e && (s[b] == ' ' || s[b] == '\t'))
        b++;
    while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t'))
        e--;
    if (b == e)
        return 0;
    int neg = 0;
    if (s[b] == '+' || s[b] == '-')
        neg = s[b++] == '-';
    if (b == e)
        return 2;
    for (size_t i = b; i < e; i++)
        if (s[i] < '0' || s[i] > '9')
            return 2;
    /* Accumulate the magnitude with an overflow check, digit by digit. */
    const uint64_t limit = neg ? (uint64_t)1 << 63 : ((uint64_t)1 << 63) - 1;
    uint64_t m = 0;
    for (size_t i = b; i < e; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (m > (limit - d) / 10)
            return 3;
        m = m * 10 + d;
    }
    *v = neg ? (int64_t)(0 - m) : (int64_t)m;
    return 1;
}

static int ref_canonical_line(const char *s, size_t n)
{
    size_t i = 0;
    if (n == 1 && s[0] == '0')
        return 1;
    if (i < n && s[i] == '-')
        i++;
    if (i >= n || s[i] < '1' || s[i] > '9')
        return 0;
    for (; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return n <= 19; /* within int64 for sure */
}

/* Reads text as gpumerge does. ordered: a key out of order (by dir: +1
 * ascending, -1 descending) is a problem; strict: an equal neighbour too. */
static ref_parse ref_read(const char *text, size_t len, int ordered, int dir, int strict)
{
    ref_parse r;
    memset(&r, 0, sizeof r);
    r.keys = malloc((len / 2 + 1) * sizeof *r.keys);
    r.canonical = len == 0 || text[len - 1] == '\n';
    int64_t line = 0;
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        line++;
        int64_t v = 0;
        int kind = ref_line(text + at, n, &v);
        r.canonical &= ref_canonical_line(text + at, n);
        if (kind == 2 || kind == 3) {
            r.prob = kind == 2 ? REF_NOT_INT : REF_RANGE;
            r.prob_line = line;
            return r;
        }
        if (kind == 1) {
            if (ordered && r.n > 0) {
                int64_t p = r.keys[r.n - 1];
                int bad = dir > 0 ? v < p : v > p;
                if (bad || (strict && v == p)) {
                    r.prob = REF_DISORDER;
                    r.prob_line = line;
                    return r;
                }
            }
            r.keys[r.n++] = v;
        }
        at += n + 1;
    }
    return r;
}

/* Every byte of a message is printable ASCII: no byte of a file name or a line
 * reaches the terminal raw. */
static int ref_printable(const char *msg)
{
    if (!*msg)
        return 0;
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
        if (*p < 0x20 || *p >= 0x7f)
            return 0;
    return 1;
}

#endif
