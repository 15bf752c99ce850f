/*
 * keys_table.c - core/keys/keys.h's comparisons on tables of pairs: each order (-n,
 * -g, -h, bytes) and key form (fields, characters, -t, -b, ends before starts,
 * several keys, -r and the last resort), both ways round, with LC_ALL=C sort
 * putting each pair in the same order and the prefixes agreeing; -g's NaNs; the
 * keys' comparison without the last resort; and which prefixes are exact.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/keys/keys.h"
#include "helpers.h"
#include "keys_cases.h"
#include "specs.h"

/* ---------------------------------------------------------------- helpers */

/* A key that names an order and is empty on every line of the tables: the other
 * keys keep byte order instead of -n being implied. */
#define NO_N "-k99,99n"

static int sgn(int d) { return (d > 0) - (d < 0); }

static int cmp_str(const gm_keyspec *ks, const char *a, const char *b)
{
    return sgn(gm_line_cmp(ks, (bytes)a, strlen(a), (bytes)b, strlen(b)));
}

/* ---------------------------------------------------------------- tables */

typedef struct { const char *args, *a, *b; int want; } cmp_case;

static const cmp_case cmp_cases[] = {
    /* -n: numcompare */
    { "-n -s", "1", "2", -1 },
    { "-n -s", "-0", "0", 0 },
    { "-n -s", "-0.000", "", 0 },
    { "-n -s", "1.", "1.0", 0 },
    { "-n -s", ".5", "0.5", 0 },
    { "-n -s", "-.5", "-0.50", 0 },
    { "-n -s", "  \t\n12", "12", 0 },
    { "-n -s", "007", "7", 0 },
    { "-n -s", "+5", "0", 0 },
    { "-n -s", "--5", "0", 0 },
    { "-n -s", "1e3", "1", 0 },
    { "-n -s", "-1", "-0.5", -1 },
    { "-n -s", "-10", "-9", -1 },
    { "-n -s", "10", "9", 1 },
    { "-n -s", "1.5", "1.49999999999999999999999999", 1 },
    { "-n -s", "123456789012345678901234567890", "123456789012345678901234567891", -1 },
    { "-n -s", "-123456789012345678901234567890", "-123456789012345678901234567891", 1 },
    { "-n -s", "0.000000000000000000001", "0", 1 },
    { "-n -s", "-0.000000000000000000001", "0", -1 },
    { "-n -s", "\v5", "0", 0 },
    { "-n -s", "1,000", "1", 0 },
    { "-n -s", "abc", "-", 0 },
    { "-n", "abc", "-", 1 },   /* the last resort: bytes */
    { "-n -r", "abc", "-", -1 },
    { "-n -u", "abc", "-", 0 },
    /* -g: strtold */
    { "-g -s", "1e3", "999", 1 },
    { "-g -s", "abc", "-inf", -1 },
    { "-g -s", "nan", "-inf", -1 },
    { "-g -s", "abc", "nan", -1 },
    { "-g -s", "abc", "", 0 },
    { "-g -s", "0x10", "15", 1 },
    { "-g -s", " \v\f\r1.5", "1.5", 0 },
    { "-g -s", "-0", "0", 0 },
    { "-g -s", "inf", "1e999999", 0 },
    { "-g -s", "1e-99999", "0", 0 },
    { "-g -s", "1.0000000000000000001", "1", 1 },
    /* -h: units */
    { "-h -s", "1K", "999", 1 },
    { "-h -s", "1k", "1K", 0 },
    { "-h -s", "1M", "2K", 1 },
    { "-h -s", "-1M", "-2K", -1 },
    { "-h -s", "-1K", "-5", -1 },
    { "-h -s", "0K", "0", 0 },
    { "-h -s", "0K", "1", -1 },
    { "-h -s", "1.K", "1000", 1 },
    { "-h -s", "1Y", "9Z", 1 },
    { "-h -s", "1Q", "9R", 1 },    /* units since coreutils 9.2 */
    { "-h -s", "1 K", "1", 0 },
    { "-h -s", "1X", "1", 0 },
    { "-h -s", "  2G", "3G", -1 },
    /* bytes and fields */
    { "-k1,1 -s " NO_N, "b", "a", 1 },
    { "-k1,1 -s " NO_N, "", "a", -1 },
    { "-k1,1 -s " NO_N, "ab", "abc", -1 },
    { "-k1,1 -s " NO_N, "\xff", "a", 1 },
    { "-k2,2 -s " NO_N, "x  b", "y a", -1 },   /* leading blanks belong to the field */
    { "-k2b,2 -s " NO_N, "x  b", "y a", 1 },
    { "-b -k2,2 -s " NO_N, "x  b", "y a", 1 },
    { "-t, -k2,2 -s " NO_N, "1,b,c", "2,a,d", 1 },
    { "-t, -k2 -s " NO_N, "1,a,c", "2,a,b", 1 },
    { "-t, -k2,2n -s", "x,10", "y,9", 1 },
    { "-t, -k3,3n -s", "x,10", "y,9", 0 },   /* both keys empty */
    { "-k1.2,1.3 -s " NO_N, "abcz", "xbcy", 0 },
    { "-k1.2,1.3 -s " NO_N, "abdz", "xbcy", 1 },
    { "-k2.2b,2.2 -s " NO_N, "a  xb", "a yc", 0 },  /* the ends fall before the starts */
    { "-k2.2b,2.2b -s " NO_N, "a  xb", "a yc", -1 },
    { "-k2,1 -s " NO_N, "b", "a", 0 },   /* an end before the start: empty */
    { "-t, -k1,1.5 -s " NO_N, "ab,cd", "ab,ce", -1 }, /* POS2's characters go past the field */
    { "-k1,1.1 -s " NO_N, " a", " b", 0 },   /* the blank is the key's one character */
    { "-k1,1.1b -s " NO_N, " a", " b", -1 },
    { "-k3n -s", "a b 5", "a b", 1 },
    { "-k1,1r -k2,2n -s", "a 2", "b 1", 1 },
    { "-k1,1 -k2,2nr -s", "a 2", "a 10", 1 },
    { "-r -k1,1 " NO_N, "a", "a ", 1 },      /* keys equal; -r reverses the last resort */
    { "-r -k1,1b", "a", "b", -1 },     /* the key has flags: not reversed */
};

static int has_rq(const char *s)
{
    return strchr(s, 'R') || strchr(s, 'Q');
}

/* LC_ALL=C sort orders the two lines of c as c->want says, given either first. */
static void sort_agrees(const cmp_case *c)
{
    if (strstr(c->args, "-h") && (has_rq(c->a) || has_rq(c->b)) && !sort_knows_rq())
        return;
    int implied;
    spec_from(c->args, &implied);
    char *cmd;
    setenv("GM_A", c->a, 1);
    setenv("GM_B", c->b, 1);
    cr_assert(asprintf(&cmd, "for i in 1 2; do printf '%%s\\n%%s\\n' \"$GM_A\" \"$GM_B\" "
                       "| LC_ALL=C sort %s %s; export GM_A=\"$GM_B\" GM_B=\"$GM_A\"; done",
                       implied ? "-n" : "", c->args) > 0);
    cmd_result r = run_sh(NULL, cmd);
    char *want;
    const char *lo = c->want > 0 ? c->b : c->a, *hi = c->want > 0 ? c->a : c->b;
    if (c->want == 0 && strstr(c->args, "-u"))
        cr_assert(asprintf(&want, "%s\n%s\n", c->a, c->b) > 0);
    else if (c->want == 0)
        cr_assert(asprintf(&want, "%s\n%s\n%s\n%s\n", c->a, c->b, c->b, c->a) > 0);
    else
        cr_assert(asprintf(&want, "%s\n%s\n%s\n%s\n", lo, hi, lo, hi) > 0);
    cr_assert_str_eq(r.out, want, "sort %s: '%s' vs '%s'", c->args, c->a, c->b);
    free(want);
    free(cmd);
    cmd_free(&r);
}

Test(keys, comparison_table)
{
    for (size_t i = 0; i < sizeof cmp_cases / sizeof *cmp_cases; i++) {
        const cmp_case *c = &cmp_cases[i];
        gm_keyspec ks = spec_from(c->args, NULL);
        cr_assert_eq(cmp_str(&ks, c->a, c->b), c->want, "%s: '%s' vs '%s'", c->args, c->a,
                     c->b);
        cr_assert_eq(cmp_str(&ks, c->b, c->a), -c->want, "%s: '%s' vs '%s'", c->args, c->b,
                     c->a);
        /* sort puts them in the same order, whichever comes first (a line with
         * a newline in it is for -z, which the random differential covers) */
        if (!strchr(c->a, '\n') && !strchr(c->b, '\n'))
            sort_agrees(c);
        int ea, eb;
        uint64_t pa = gm_line_prefix(&ks, (bytes)c->a, strlen(c->a), &ea);
        uint64_t pb = gm_line_prefix(&ks, (bytes)c->b, strlen(c->b), &eb);
        if (pa < pb)
            cr_assert_eq(c->want, -1, "%s: prefix of '%s' below '%s'", c->args, c->a, c->b);
        if (pa > pb)
            cr_assert_eq(c->want, 1, "%s: prefix of '%s' above '%s'", c->args, c->a, c->b);
    }
}

/* Two NaNs: "-nan" < "nan", payloads aside, as coreutils 9.2 and later order
 * them (the installed 9.1 compares their bytes, padding included). */
Test(keys, general_nans)
{
    gm_keyspec ks = spec_from("-g -s", NULL);
    cr_assert_eq(cmp_str(&ks, "-nan", "nan"), -1);
    cr_assert_eq(cmp_str(&ks, "nan", "-nan"), 1);
    cr_assert_eq(cmp_str(&ks, "nan(12)", "NAN"), 0);
    cr_assert_eq(cmp_str(&ks, "-nan(3)", " -nan"), 0);
    cr_assert_eq(cmp_str(&ks, "-nan", "x"), 1);
    cr_assert_eq(cmp_str(&ks, "nan", "-inf"), -1);
    uint64_t e = gm_line_prefix(&ks, (bytes) "x", 1, NULL);
    uint64_t m = gm_line_prefix(&ks, (bytes) "-nan", 4, NULL);
    uint64_t p = gm_line_prefix(&ks, (bytes) "nan", 3, NULL);
    uint64_t i = gm_line_prefix(&ks, (bytes) "-inf", 4, NULL);
    cr_assert(e < m && m < p && p < i);
}

Test(keys, key_cmp_ignores_the_last_resort)
{
    gm_keyspec ks = spec_from("-n", NULL);
    cr_assert_eq(gm_key_cmp(&ks, (bytes) "01", 2, (bytes) "1", 1), 0);
    cr_assert_lt(gm_line_cmp(&ks, (bytes) "01", 2, (bytes) "1", 1), 0);
    /* from nkeys: only the last resort */
    cr_assert_gt(gm_line_cmp_from(&ks, 1, (bytes) "2", 1, (bytes) "10", 2), 0);
    ks = spec_from("-t, -k1,1 -k2,2n", NULL);
    cr_assert_lt(gm_line_cmp_from(&ks, 1, (bytes) "b,1", 3, (bytes) "a,2", 3), 0);
    cr_assert_gt(gm_line_cmp_from(&ks, 0, (bytes) "b,1", 3, (bytes) "a,2", 3), 0);
}

typedef struct { const char *args, *line; int exact; } exact_case;

Test(keys, prefix_exactness)
{
    static const exact_case cases[] = {
        { "-n", "1700000000", 1 },
        { "-n", "-12345678901234.5", 1 },
        { "-n", "1234567890123456", 1 },
        { "-n", "12345678901234567", 0 },
        { "-n", "0.0000000000000001", 1 },
        { "-n", "0.00000000000000001", 0 },
        { "-n", "abc", 1 },
        { "-n", "1" "0000000000" "0000000000" "0000000000" "0000000000" "0000000000"
                "0000000000" "0000000000" "0000000000" "0000000000" "0000000000"
                "0000000000" "0000000000" "00000", 0 },
        { "-k1,1 " NO_N, "abcdefgh", 1 },
        { "-k1,1 " NO_N, "abcdefghi", 0 },
        { "-k1,1 " NO_N, "abcdefg\x01", 1 },
        { "-k1,1 " NO_N, "abcdef\x01", 1 },
        { "-k1,1 " NO_N, "", 1 },
        { "-g", "1.5", 1 },
        { "-g", "0.1", 0 },
        { "-g", "nan", 1 },
        { "-g", "-nan(5)", 1 },
        { "-g", "x", 1 },
        { "-h", "5K", 1 },
        { "-h", "-5K", 1 },
        { "-h", "123456789012345", 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gm_keyspec ks = spec_from(cases[i].args, NULL);
        int ex = -1;
        gm_line_prefix(&ks, (bytes)cases[i].line, strlen(cases[i].line), &ex);
        cr_assert_eq(ex, cases[i].exact, "%s '%s'", cases[i].args, cases[i].line);
    }
    /* the epoch and 14-digit numbers are distinguished exactly */
    gm_keyspec ks = spec_from("-n", NULL);
    uint64_t a = gm_line_prefix(&ks, (bytes) "1700000000", 10, NULL);
    uint64_t b = gm_line_prefix(&ks, (bytes) "1700000001", 10, NULL);
    cr_assert_lt(a, b);
}
