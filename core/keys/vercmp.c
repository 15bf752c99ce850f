/*
 * vercmp.c - version order for sort -V, own-written from the description of
 * gnulib's filevercmp/filenvercmp (2022 rewrite, as used by coreutils 9.1):
 * "" first, then ".", then "..", then other names beginning with '.', then
 * the rest; a file suffix matching (\.[A-Za-z~][A-Za-z0-9~]*)*$ (possibly
 * the whole name, as in the gnulib of coreutils 9.1) is ignored unless the
 * rest compares equal; and the Debian-style comparison of
 * alternating non-digit and digit runs ('~' before everything, even the end;
 * letters before other non-digits; digit runs numerically).
 */
#include "keys/vercmp.h"

#include <stdbool.h>

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static bool is_alpha(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* The length of S without its file suffix: the longest tail matching
 * (\.[A-Za-z~][A-Za-z0-9~]*)*$, which may be all of S (coreutils 9.1's gnulib;
 * later ones keep S's first byte out of the suffix). Each chain of suffix
 * parts is taken greedily; one that stops short of the end is prefix. */
static size_t prefix_len(const unsigned char *s, size_t n)
{
    size_t i = 0;
    for (;;) {
        size_t prefix = i;
        while (i + 1 < n && s[i] == '.' && (is_alpha(s[i + 1]) || s[i + 1] == '~')) {
            i += 2;
            while (i < n && (is_alpha(s[i]) || is_digit(s[i]) || s[i] == '~'))
                i++;
        }
        if (i >= n)
            return prefix;
        i++;
    }
}

/* The weight of the non-digit byte at POS, or of the end: '~' < end < digit <
 * letters < every other byte. */
static int weight(const unsigned char *s, size_t pos, size_t len)
{
    if (pos >= len)
        return -1;
    unsigned char c = s[pos];
    if (is_digit(c))
        return 0;
    if (is_alpha(c))
        return c;
    if (c == '~')
        return -2;
    return c + 256;
}

/* The Debian-style comparison: non-digit runs by weight, byte by byte, then
 * digit runs by numeric value (leading zeros skipped), alternating. */
static int debian_cmp(const unsigned char *a, size_t alen,
                      const unsigned char *b, size_t blen)
{
    size_t i = 0, j = 0;
    while (i < alen || j < blen) {
        while ((i < alen && !is_digit(a[i])) || (j < blen && !is_digit(b[j]))) {
            int wa = weight(a, i, alen), wb = weight(b, j, blen);
            if (wa != wb)
                return wa < wb ? -1 : 1;
            i++;
            j++;
        }
        while (i < alen && a[i] == '0')
            i++;
        while (j < blen && b[j] == '0')
            j++;
        int first = 0;
        while (i < alen && j < blen && is_digit(a[i]) && is_digit(b[j])) {
            if (!first)
                first = a[i] < b[j] ? -1 : a[i] > b[j];
            i++;
            j++;
        }
        if (i < alen && is_digit(a[i]))
            return 1;
        if (j < blen && is_digit(b[j]))
            return -1;
        if (first)
            return first;
    }
    return 0;
}

/* The ranks of the special names: 0 for "", 1 for ".", 2 for "..", 3 for
 * other names beginning with '.', 4 for the rest. */
static int name_rank(const unsigned char *s, size_t n)
{
    if (n == 0)
        return 0;
    if (s[0] != '.')
        return 4;
    if (n == 1)
        return 1;
    if (n == 2 && s[1] == '.')
        return 2;
    return 3;
}

int gm_version_cmp(const unsigned char *a, size_t alen,
                   const unsigned char *b, size_t blen)
{
    int ra = name_rank(a, alen), rb = name_rank(b, blen);
    if (ra != rb)
        return ra < rb ? -1 : 1;
    if (ra < 3)
        return 0;

    size_t apre = prefix_len(a, alen);
    size_t bpre = prefix_len(b, blen);
    int r = debian_cmp(a, apre, b, bpre);
    if (r || (apre == alen && bpre == blen))
        return r;
    return debian_cmp(a, alen, b, blen);
}
