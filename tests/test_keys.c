/*
 * test_keys.c - core/keys.h: -k parsing and its messages (against LC_ALL=C sort's
 * own), the inheritance of global flags and the implied -n, tables of each order
 * (-n, -g, -h, bytes) and key form, a random differential against LC_ALL=C sort
 * (lines of fields, blanks, signs, decimals, long numbers, units, non-numbers,
 * high bytes, empty lines and ties, sorted by a stable merge sort with
 * gm_line_cmp; -s, -r, -u, -b, -t and several -k), and the prefix law:
 * prefix(a) < prefix(b) implies gm_line_cmp(a, b) < 0, and equal exact prefixes
 * imply equal first keys; the prefixes of random lines against digests kept in
 * testdata/records/prefix_digests.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/keys.h"
#include "helpers.h"
#include "specs.h"

typedef const unsigned char *bytes;

/* ---------------------------------------------------------------- helpers */

/* A key that names an order and is empty on every line of the tables: the other
 * keys keep byte order instead of -n being implied. */
#define NO_N "-k99,99n"

static int sgn(int d) { return (d > 0) - (d < 0); }

static int cmp_str(const gm_keyspec *ks, const char *a, const char *b)
{
    return sgn(gm_line_cmp(ks, (bytes)a, strlen(a), (bytes)b, strlen(b)));
}

/* ---------------------------------------------------------------- -k parsing */

typedef struct { const char *arg, *msg; } bad_key;

static const bad_key bad_keys[] = {
    { "0", "field number is zero: invalid field specification '0'" },
    { "0,1", "field number is zero: invalid field specification '0,1'" },
    { "1.0", "character offset is zero: invalid field specification '1.0'" },
    { "1,0", "field number is zero: invalid field specification '1,0'" },
    { "", "invalid number at field start: invalid count at start of ''" },
    { "a", "invalid number at field start: invalid count at start of 'a'" },
    { "-2", "invalid number at field start: invalid count at start of '-2'" },
    { ".1", "invalid number at field start: invalid count at start of '.1'" },
    { ",1", "invalid number at field start: invalid count at start of ',1'" },
    { "1,", "invalid number after ',': invalid count at start of ''" },
    { "1.", "invalid number after '.': invalid count at start of ''" },
    { "1.x", "invalid number after '.': invalid count at start of 'x'" },
    { "1,x", "invalid number after ',': invalid count at start of 'x'" },
    { "1,1.x", "invalid number after '.': invalid count at start of 'x'" },
    { "1,-2", "invalid number after ',': invalid count at start of '-2'" },
    { "1.1,2.", "invalid number after '.': invalid count at start of ''" },
    { "1x", "stray character in field spec: invalid field specification '1x'" },
    { "1z", "stray character in field spec: invalid field specification '1z'" },
    { "1 ", "stray character in field spec: invalid field specification '1 '" },
    { "1.2.3", "stray character in field spec: invalid field specification '1.2.3'" },
    { "1,2,3", "stray character in field spec: invalid field specification '1,2,3'" },
    { "2,1b.", "stray character in field spec: invalid field specification '2,1b.'" },
    { "1,2.3bx", "stray character in field spec: invalid field specification '1,2.3bx'" },
    { "1'x", "stray character in field spec: invalid field specification '1\\'x'" },
    { "1\\x", "stray character in field spec: invalid field specification '1\\\\x'" },
    { "1\tx", "stray character in field spec: invalid field specification '1\\tx'" },
    { "1\x80y", "stray character in field spec: invalid field specification '1\\200y'" },
    { "1\x1b", "stray character in field spec: invalid field specification '1\\033'" },
    { "a\n", "invalid number at field start: invalid count at start of 'a\\n'" },
    { "1ng", "options '-gn' are incompatible" },
    { "1hnr,2b", "options '-hn' are incompatible" },
    { "1gh", "options '-gh' are incompatible" },
    { "1bn,2ng", "options '-gn' are incompatible" },
};

Test(keys, parse_errors_word_for_word)
{
    for (size_t i = 0; i < sizeof bad_keys / sizeof *bad_keys; i++) {
        gm_keyspec ks;
        gm_keyspec_init(&ks);
        gm_status st = { GM_OK, "", 0 };
        cr_assert_eq(gm_keyspec_parse_key(&ks, bad_keys[i].arg, &st), GM_EUSAGE, "-k %s",
                     bad_keys[i].arg);
        cr_assert_eq(st.code, GM_EUSAGE);
        cr_assert_str_eq(st.msg, bad_keys[i].msg, "-k %s", bad_keys[i].arg);
        cr_assert_eq(ks.nkeys, 0);
        /* sort itself says the same */
        setenv("GM_KEYARG", bad_keys[i].arg, 1);
        cmd_result r = run_sh(NULL, "LC_ALL=C sort -k \"$GM_KEYARG\" </dev/null");
        cr_assert_eq(r.status, 2);
        char *want;
        cr_assert(asprintf(&want, "sort: %s\n", bad_keys[i].msg) > 0);
        cr_assert_str_eq(r.err, want, "-k %s", bad_keys[i].arg);
        free(want);
        cmd_free(&r);
    }
}

Test(keys, unsupported_flags_named)
{
    const char *flags = "dfiMRV";
    for (const char *f = flags; *f; f++) {
        char arg[16];
        snprintf(arg, sizeof arg, "2,3%cn", *f);
        gm_keyspec ks;
        gm_keyspec_init(&ks);
        gm_status st = { GM_OK, "", 0 };
        cr_assert_eq(gm_keyspec_parse_key(&ks, arg, &st), GM_EUSAGE);
        char want[160];
        snprintf(want, sizeof want,
                 "key '%s': flag '%c' is not supported (gpumerge orders keys by b, g, h, "
                 "n and r only)", arg, *f);
        cr_assert_str_eq(st.msg, want);
    }
    /* a stray character is reported before a flag we refuse, as sort would */
    gm_keyspec ks;
    gm_keyspec_init(&ks);
    gm_status st;
    cr_assert_eq(gm_keyspec_parse_key(&ks, "1dz", &st), GM_EUSAGE);
    cr_assert_str_eq(st.msg, "stray character in field spec: invalid field specification '1dz'");
}

/* Random -k arguments from the bytes that matter: sort accepts what we accept
 * (flags aside that gpumerge refuses), and refuses with our message. */
Test(keys, random_specs_against_sort, .timeout = 60)
{
    static const char alphabet[] = "0123456789..,,bnghr +-xdM";
    enum { N = 400 };
    rng r;
    rng_seed(&r, 4242);
    char specs[N][12];
    char *dir = scratch_dir(), *path = path_in(dir, "specs");
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < N; i++) {
        int n = 1 + (int)rng_range(&r, 0, 9);
        for (int k = 0; k < n; k++)
            specs[i][k] = alphabet[rng_range(&r, 0, (int64_t)sizeof alphabet - 2)];
        specs[i][n] = '\0';
        if (rng_range(&r, 0, 2) == 0) /* most start with a field number */
            specs[i][0] = (char)('1' + rng_range(&r, 0, 3));
        fprintf(f, "%s\n", specs[i]);
    }
    fclose(f);
    cmd_result res = run_sh(dir, "while IFS= read -r k; do e=$(LC_ALL=C sort -k \"$k\" "
                                 "</dev/null 2>&1); echo \"$?|$e\"; done <specs");
    char *line = res.out, *save = NULL;
    int accepted = 0;
    for (int i = 0; i < N; i++, line = NULL) {
        char *got = strtok_r(line, "\n", &save);
        cr_assert_not_null(got);
        gm_keyspec ks;
        gm_keyspec_init(&ks);
        gm_status st = { GM_OK, "", 0 };
        int rc = gm_keyspec_parse_key(&ks, specs[i], &st);
        if (got[0] == '0') {
            accepted++;
            if (strpbrk(specs[i], "dM"))
                cr_assert(rc == GM_EUSAGE && strstr(st.msg, "is not supported"), "'%s'",
                          specs[i]);
            else
                cr_assert_eq(rc, GM_OK, "'%s': sort accepts it, we say %s", specs[i], st.msg);
        } else {
            cr_assert_eq(rc, GM_EUSAGE, "'%s': sort says %s", specs[i], got);
            if (strstr(st.msg, "is not supported")) /* sort: d and M incompatible */
                cr_assert(strstr(got, "are incompatible"), "'%s': sort says %s", specs[i],
                          got);
            else
                cr_assert_str_eq(got + 2 + strlen("sort: "), st.msg, "'%s'", specs[i]);
        }
    }
    cr_assert_gt(accepted, N / 10);
    cr_assert_lt(accepted, N - N / 10);
    cmd_free(&res);
    free(path);
    free(dir);
}

typedef struct {
    const char *arg;
    size_t sword, schar, eword, echar;
    int sb, eb, rev, flags;
    gm_order order;
} good_key;

static const good_key good_keys[] = {
    { "1", 0, 0, SIZE_MAX, 0, 0, 0, 0, 0, GM_ORDER_BYTES },
    { "2.3", 1, 2, SIZE_MAX, 0, 0, 0, 0, 0, GM_ORDER_BYTES },
    { "2,2n", 1, 0, 1, 0, 0, 0, 0, 1, GM_ORDER_NUMERIC },
    { "1.3b,1.5", 0, 2, 0, 5, 1, 0, 0, 1, GM_ORDER_BYTES },
    { "3,4.0br", 2, 0, 3, 0, 0, 1, 1, 1, GM_ORDER_BYTES },
    { " 2", 1, 0, SIZE_MAX, 0, 0, 0, 0, 0, GM_ORDER_BYTES },
    { "+2,+3g", 1, 0, 2, 0, 0, 0, 0, 1, GM_ORDER_GENERAL },
    { "1h", 0, 0, SIZE_MAX, 0, 0, 0, 0, 1, GM_ORDER_HUMAN },
    { "1nn", 0, 0, SIZE_MAX, 0, 0, 0, 0, 1, GM_ORDER_NUMERIC },
    { "99999999999999999999999", SIZE_MAX - 1, 0, SIZE_MAX, 0, 0, 0, 0, 0, GM_ORDER_BYTES },
    { "1,1.99999999999999999999999", 0, 0, 0, SIZE_MAX, 0, 0, 0, 0, GM_ORDER_BYTES },
};

Test(keys, parse_positions_and_flags)
{
    for (size_t i = 0; i < sizeof good_keys / sizeof *good_keys; i++) {
        const good_key *g = &good_keys[i];
        gm_keyspec ks;
        gm_keyspec_init(&ks);
        gm_status st = { GM_OK, "", 0 };
        cr_assert_eq(gm_keyspec_parse_key(&ks, g->arg, &st), GM_OK, "%s: %s", g->arg, st.msg);
        const gm_keydef *k = &ks.keys[0];
        cr_assert_eq(ks.nkeys, 1);
        cr_assert(k->sword == g->sword && k->schar == g->schar && k->eword == g->eword &&
                      k->echar == g->echar, "-k %s: %zu.%zu,%zu.%zu", g->arg, k->sword,
                  k->schar, k->eword, k->echar);
        cr_assert(k->skipsblanks == g->sb && k->skipeblanks == g->eb && k->reverse == g->rev &&
                      k->has_flags == g->flags && k->order == g->order, "-k %s", g->arg);
        /* sort accepts it too */
        setenv("GM_KEYARG", g->arg, 1);
        cmd_result r = run_sh(NULL, "echo 1 | LC_ALL=C sort -k \"$GM_KEYARG\"");
        cr_assert_eq(r.status, 0, "-k %s: %s", g->arg, r.err);
        cmd_free(&r);
    }
}

Test(keys, too_many_keys)
{
    gm_keyspec ks;
    gm_keyspec_init(&ks);
    gm_status st;
    for (int i = 0; i < GM_MAX_KEYS; i++)
        cr_assert_eq(gm_keyspec_parse_key(&ks, "1,1", &st), GM_OK);
    cr_assert_eq(gm_keyspec_parse_key(&ks, "1,1", &st), GM_EUSAGE);
    cr_assert_str_eq(st.msg, "too many keys: at most 64 -k options");
}

/* ---------------------------------------------------------------- finish */

Test(keys, finish_inherits_and_implies_n)
{
    int implied;
    gm_keyspec ks = spec_from("-k2", &implied);
    cr_assert(implied);
    cr_assert_eq(ks.keys[0].order, GM_ORDER_NUMERIC);
    cr_assert_eq(ks.order, GM_ORDER_NUMERIC);

    ks = spec_from("-t, -k1,1 -k2,2n", &implied);
    cr_assert(!implied);
    cr_assert_eq(ks.keys[0].order, GM_ORDER_BYTES);
    cr_assert_eq(ks.keys[1].order, GM_ORDER_NUMERIC);

    ks = spec_from("-g -r -b -k2 -k3n", NULL);
    cr_assert(ks.keys[0].order == GM_ORDER_GENERAL && ks.keys[0].reverse &&
              ks.keys[0].skipsblanks && ks.keys[0].skipeblanks);
    cr_assert(ks.keys[1].order == GM_ORDER_NUMERIC && !ks.keys[1].reverse &&
              !ks.keys[1].skipsblanks);

    ks = spec_from("-n -k1r", NULL); /* r alone is a flag of its own */
    cr_assert(ks.keys[0].order == GM_ORDER_BYTES && ks.keys[0].reverse);

    ks = spec_from("-h -r", NULL); /* no -k: the whole line in the global order */
    cr_assert(ks.nkeys == 1 && ks.keys[0].order == GM_ORDER_HUMAN && ks.keys[0].reverse &&
              ks.keys[0].sword == 0 && ks.keys[0].eword == SIZE_MAX);
}

typedef struct { const char *args; int wln; } wln_case;

Test(keys, whole_line_numeric)
{
    static const wln_case cases[] = {
        { "", 1 }, { "-n", 1 }, { "-r -s -u", 1 }, { "-b", 1 }, { "-k1", 1 },
        { "-k1n", 1 }, { "-k1,1", 1 }, { "-k1bn,1", 1 }, { "-k1b,1", 0 }, { "-r -k1", 1 }, { "-t, -k1", 1 },
        { "-t, -k1,1", 0 }, { "-g", 0 }, { "-h", 0 }, { "-k2", 0 }, { "-k1.2", 0 },
        { "-k1,1.3", 0 }, { "-k1 -k2", 0 }, { "-k1nr", 0 }, { "-r -k1n", 0 },
        { "-k1,2", 0 }, { "-t, -k1,1n", 0 }, { "-k1b", 0 }, { "-k1nb", 1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gm_keyspec ks = spec_from(cases[i].args, NULL);
        cr_assert_eq(ks.whole_line_numeric, cases[i].wln, "'%s'", cases[i].args);
    }
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

/* Whether the installed sort knows -h's units R and Q (coreutils 9.2 and
 * later), which gpumerge orders as they do: cases with them are compared with
 * an older sort only where it agrees. */
static int sort_knows_rq(void)
{
    static int known = -1;
    if (known < 0) {
        cmd_result r = run_sh(NULL, "printf '1Q\\n9R\\n' | LC_ALL=C sort -h | head -n 1");
        known = strcmp(r.out, "9R\n") == 0;
        cmd_free(&r);
    }
    return known;
}

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

/* ---------------------------------------------------------------- random lines */

typedef struct { unsigned char *s; size_t n; } line;

static int pick(rng *r, int n) { return (int)rng_range(r, 0, n - 1); }

/* A number as the orders read them: signs, leading zeros, fractions with trailing
 * zeros, long digit strings, units, exponents; NaNs unless nan is 0 (the
 * installed sort, coreutils 9.1, orders two NaNs by uninitialised bytes). */
static void random_number(rng *r, text *t, int nan)
{
    static const char *const special[] = {
        "", "-", ".", "-.", "+1", "--1", "abc", "\xff\xfe", "1,000", "nan", "-nan",
        "inf", "-inf", "0x1.8p1", "1e400", "-0", "0.0", "-0.000", "1.", ".5", "-.5",
        "1e-5000", "NaN(12)", "infinity", "0x",
    };
    if (pick(r, 8) == 0) {
        const char *sp = special[pick(r, sizeof special / sizeof *special)];
        text_puts(t, nan || !strcasestr(sp, "nan") ? sp : "1");
        return;
    }
    if (pick(r, 3) == 0)
        text_puts(t, "-");
    int zeros = pick(r, 4) == 0 ? pick(r, 3) + 1 : 0;
    for (int i = 0; i < zeros; i++)
        text_puts(t, "0");
    int il = pick(r, 10) == 0 ? pick(r, 30) : pick(r, 5);
    for (int i = 0; i < il; i++) {
        char d = (char)('0' + (i == 0 ? 1 + pick(r, 9) : pick(r, 10)));
        text_put(t, &d, 1);
    }
    if (pick(r, 3) == 0) {
        text_puts(t, ".");
        int fl = pick(r, 10) == 0 ? pick(r, 25) : pick(r, 4);
        for (int i = 0; i < fl; i++) {
            char d = (char)('0' + pick(r, 10));
            text_put(t, &d, 1);
        }
    }
    if (pick(r, 6) == 0) {
        static const char units[] = "kKMGTPEZYRQXb";
        text_put(t, &units[pick(r, sizeof units - 1)], 1);
    } else if (pick(r, 10) == 0) {
        char e[16];
        snprintf(e, sizeof e, "e%d", pick(r, 80) - 40);
        text_puts(t, e);
    }
}

/* A field: a number, a word, or a number with trailing text. */
static void random_field(rng *r, text *t, int nan)
{
    static const char *const words[] = { "a", "b", "ab", "B", "x\x80", "\xff", "zz", "a b" };
    switch (pick(r, 6)) {
    case 0: text_puts(t, words[pick(r, sizeof words / sizeof *words)]); break;
    case 1: random_number(r, t, nan); text_puts(t, "x"); break;
    default: random_number(r, t, nan); break;
    }
}

/* n lines, some repeated whole for ties; nl: newlines may sit inside lines. */
static line *random_lines(rng *r, int n, int nl, int nan)
{
    static const char *const seps[] = { " ", "\t", ",", "  ", ", ", " \t", "\n" };
    line *v = calloc((size_t)n, sizeof *v);
    cr_assert_not_null(v);
    for (int i = 0; i < n; i++) {
        if (i > 0 && pick(r, 5) == 0) {
            line *o = &v[pick(r, i)];
            v[i].s = malloc(o->n + 1);
            memcpy(v[i].s, o->s, o->n + 1);
            v[i].n = o->n;
            continue;
        }
        text t = { NULL, 0, 0 };
        text_puts(&t, "");
        if (pick(r, 5) == 0)
            text_puts(&t, pick(r, 2) ? " " : " \t ");
        int nf = pick(r, 12) == 0 ? 0 : 1 + pick(r, 4);
        for (int f = 0; f < nf; f++) {
            if (f > 0)
                text_puts(&t, seps[pick(r, nl ? 7 : 6)]);
            random_field(r, &t, nan);
        }
        v[i].s = (unsigned char *)t.buf;
        v[i].n = t.n;
    }
    return v;
}

static void free_lines(line *v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i].s);
    free(v);
}

/* A stable merge sort of v by gm_line_cmp. */
static void merge_sort(const gm_keyspec *ks, line *v, line *tmp, int n)
{
    if (n < 2)
        return;
    int h = n / 2;
    merge_sort(ks, v, tmp, h);
    merge_sort(ks, v + h, tmp, n - h);
    int i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = gm_line_cmp(ks, v[j].s, v[j].n, v[i].s, v[i].n) < 0 ? v[j++] : v[i++];
    while (i < h)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, (size_t)n * sizeof *v);
}

/* What sort writes for v under ks: sorted, the first of each run of equal keys
 * with -u, each line ended by eol. */
static text expected_output(const gm_keyspec *ks, const line *in, int n)
{
    line *v = malloc((size_t)n * sizeof *v), *tmp = malloc((size_t)n * sizeof *v);
    memcpy(v, in, (size_t)n * sizeof *v);
    merge_sort(ks, v, tmp, n);
    text t = { NULL, 0, 0 };
    text_puts(&t, "");
    for (int i = 0, kept = -1; i < n; i++) {
        if (ks->unique && kept >= 0 &&
            gm_key_cmp(ks, v[kept].s, v[kept].n, v[i].s, v[i].n) == 0)
            continue;
        kept = i;
        text_put(&t, v[i].s, v[i].n);
        text_put(&t, &ks->eol, 1);
    }
    free(v);
    free(tmp);
    return t;
}

/* The prefix law over every pair of v: a lower prefix sorts first, and equal
 * exact prefixes mean equal first keys. Returns the pairs with equal prefixes. */
static long prefix_law(const gm_keyspec *ks, const line *v, int n, const char *args)
{
    gm_keyspec first = *ks; /* the first key alone */
    first.nkeys = 1;
    first.stable = 1;
    uint64_t *p = malloc((size_t)n * sizeof *p);
    int *ex = malloc((size_t)n * sizeof *ex);
    for (int i = 0; i < n; i++)
        p[i] = gm_line_prefix(ks, v[i].s, v[i].n, &ex[i]);
    long ties = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (p[i] < p[j]) {
                int d = gm_line_cmp(ks, v[i].s, v[i].n, v[j].s, v[j].n);
                cr_assert_lt(d, 0, "%s: prefix %016llx of '%.*s' below %016llx of '%.*s'",
                             args, (unsigned long long)p[i], (int)v[i].n, v[i].s,
                             (unsigned long long)p[j], (int)v[j].n, v[j].s);
            } else if (p[i] == p[j] && i < j) {
                ties++;
                if (ex[i] && ex[j])
                    cr_assert_eq(gm_line_cmp(&first, v[i].s, v[i].n, v[j].s, v[j].n), 0,
                                 "%s: exact prefix %016llx of '%.*s' and '%.*s'", args,
                                 (unsigned long long)p[i], (int)v[i].n, v[i].s,
                                 (int)v[j].n, v[j].s);
            }
        }
    free(p);
    free(ex);
    return ties;
}

/* sort's arguments for the differential: orders, key forms, -t, -b, -s, -r, -u,
 * -z. gpumerge's implied -n is passed to sort where the spec implies it. */
static const char *const diff_args[] = {
    "-n", "-n -s", "-n -r", "-n -u", "-n -r -u", "-n -r -s", "-s", "-u",
    "-g", "-g -s", "-g -r", "-g -u",
    "-h", "-h -s", "-h -r -u",
    "-k2", "-k2,2", "-b -k2,2", "-k2b,2 -s", "-k2,2 -r", "-k2,2n -u",
    "-t, -k2,2n", "-t, -k1,1 -k2,2n", "-t, -k2 -k1,1r", "-t, -k2,2 -u -k9,9n",
    "-k1.2,1.4 -k3n", "-k2.2b,2.3b -k1,1", "-k1,1.1 -k2 -s", "-k2,1 -k1n",
    "-t, -k3,3g -k1,1h", "-t' ' -k2n", "-t' ' -k1,1 -k3h -r", "-k1,1 -k2,2h -u",
    "-k3,3nr -k1,1 -s", "-s -k2,2g", "-g -k2 -k1,1n -r", "-b -k1.2 -k2.3,2.5 -h",
    "-t\t -k2,2n -k1,1", "-k2,2 -k2,2 -k2,2 -k2,2n", "-r -k1,1b -k2n", "-z -n",
    "-z -k2n", "-z -k2,2 -u -k9,9n", "-z -t, -k2,2h -s",
};

static void differential(const char *args, int seed, int n)
{
    int implied;
    gm_keyspec ks = spec_from(args, &implied);
    rng r;
    rng_seed(&r, (uint64_t)seed);
    int general = 0;
    for (int i = 0; i < ks.nkeys; i++)
        general |= ks.keys[i].order == GM_ORDER_GENERAL;
    line *v = random_lines(&r, n, ks.eol == '\0', !general);
    if (!sort_knows_rq()) /* an older sort's -h: R and Q (units only here) as no unit */
        for (int i = 0; i < n; i++)
            for (size_t j = 0; j < v[i].n; j++)
                if (v[i].s[j] == 'R' || v[i].s[j] == 'Q')
                    v[i].s[j] = 'X';
    char *dir = scratch_dir(), *in = path_in(dir, "in");
    text t = { NULL, 0, 0 };
    text_puts(&t, "");
    for (int i = 0; i < n; i++) {
        text_put(&t, v[i].s, v[i].n);
        text_put(&t, &ks.eol, 1);
    }
    write_file(in, t.buf, t.n);
    char *cmd;
    const char *tab = strstr(args, "-t\t") ? "-t'\t'" : "";
    cr_assert(asprintf(&cmd, "LC_ALL=C sort %s %s %s in", implied ? "-n" : "",
                       *tab ? args + 3 : args, tab) > 0);
    cmd_result res = run_sh(dir, cmd);
    cr_assert_eq(res.status, 0, "%s: %s", cmd, res.err);
    text want = expected_output(&ks, v, n);
    size_t at = 0;
    while (at < want.n && at < res.out_len && want.buf[at] == res.out[at])
        at++;
    cr_assert(at == want.n && at == res.out_len,
              "%s (seed %d): differs from sort at byte %zu: ours '%.60s', sort's '%.60s'",
              cmd, seed, at, want.buf + (at > 20 ? at - 20 : 0),
              res.out + (at > 20 ? at - 20 : 0));
    prefix_law(&ks, v, n, args);
    cmd_free(&res);
    free(cmd);
    free(want.buf);
    free(t.buf);
    free(in);
    free(dir);
    free_lines(v, n);
}

Test(keys, random_against_sort, .timeout = 120)
{
    for (size_t a = 0; a < sizeof diff_args / sizeof *diff_args; a++)
        for (int seed = 1; seed <= 3; seed++)
            differential(diff_args[a], (int)(a * 100 + (size_t)seed), 300);
}

/* A number's -n prefix is the same whether the line ends after it (short keys
 * are read a byte at a time) or goes on with bytes that are not digits (read
 * eight at a time): digits of every count, with signs, leading zeros and
 * fractions, then a tail that begins with a byte next to the digits in ASCII,
 * a high byte or a separator. */
Test(keys, prefix_digits_in_eights)
{
    static const char *const tails[] = { "/", ":", ",", " ", "\x80", "\xff", "x", "-",
                                         "\t", "/123456789", ":99999999999", "a1234567" };
    gm_keyspec ks = spec_from("-n", NULL);
    rng r;
    rng_seed(&r, 8);
    for (int i = 0; i < 20000; i++) {
        char num[64], line[96];
        int n = 0;
        if (pick(&r, 3) == 0)
            num[n++] = '-';
        for (int z = pick(&r, 4) == 0 ? pick(&r, 10) : 0; z > 0; z--)
            num[n++] = '0';
        for (int d = pick(&r, 21); d > 0; d--)
            num[n++] = (char)('0' + pick(&r, 10));
        if (pick(&r, 4) == 0) {
            num[n++] = '.';
            for (int d = pick(&r, 12); d > 0; d--)
                num[n++] = (char)('0' + pick(&r, 10));
        }
        num[n] = '\0';
        snprintf(line, sizeof line, "%s%s", num, tails[pick(&r, sizeof tails / sizeof *tails)]);
        int ea, eb;
        uint64_t a = gm_line_prefix(&ks, (bytes)num, strlen(num), &ea);
        uint64_t b = gm_line_prefix(&ks, (bytes)line, strlen(line), &eb);
        cr_assert_eq(a, b, "prefix of '%s' %016llx, of '%s' %016llx", num,
                     (unsigned long long)a, line, (unsigned long long)b);
        cr_assert_eq(ea, eb, "exactness of '%s' and '%s'", num, line);
    }
}

/* Many numbers, no sort: the -n, -g and -h prefixes against their comparisons. */
Test(keys, prefix_law_numbers, .timeout = 120)
{
    static const char *const orders[] = { "-n", "-g", "-h", "-n -r", "-h -r", "-g -r" };
    for (size_t o = 0; o < sizeof orders / sizeof *orders; o++) {
        gm_keyspec ks = spec_from(orders[o], NULL);
        rng r;
        rng_seed(&r, 77 + o);
        int n = 1500;
        line *v = calloc((size_t)n, sizeof *v);
        for (int i = 0; i < n; i++) {
            text t = { NULL, 0, 0 };
            text_puts(&t, "");
            if (i > 0 && pick(&r, 4) == 0) { /* a near neighbour: one digit changed */
                text_puts(&t, (const char *)v[pick(&r, i)].s);
                for (size_t k = 0; k < t.n; k++)
                    if ((unsigned)(t.buf[k] - '0') <= 9 && pick(&r, 3) == 0)
                        t.buf[k] = (char)('0' + pick(&r, 10));
            } else {
                random_number(&r, &t, 1);
            }
            v[i].s = (unsigned char *)t.buf;
            v[i].n = t.n;
        }
        long ties = prefix_law(&ks, v, n, orders[o]);
        cr_assert_lt(ties, (long)n * n / 8, "%s: %ld pairs share a prefix", orders[o], ties);
        free_lines(v, n);
    }
}

/* The prefixes of random lines under every spec of the differential, as a digest
 * per spec (FNV-1a over each line's prefix and exactness), against the digests
 * that testdata/records/prefix_digests holds: the prefix is an encoding that runs
 * and the device share, so it must not change unnoticed. */
static uint64_t prefix_digest(const char *args, int seed, int n)
{
    gm_keyspec ks = spec_from(args, NULL);
    rng r;
    rng_seed(&r, (uint64_t)seed);
    line *v = random_lines(&r, n, ks.eol == '\0', 1);
    uint64_t h = 14695981039346656037ull;
    for (int i = 0; i < n; i++) {
        int ex = -1;
        uint64_t p = gm_line_prefix(&ks, v[i].s, v[i].n, &ex);
        for (int b = 0; b < 8; b++)
            h = (h ^ ((p >> (8 * b)) & 255)) * 1099511628211ull;
        h = (h ^ (uint64_t)(ex != 0)) * 1099511628211ull;
    }
    free_lines(v, n);
    return h;
}

Test(keys, prefixes_as_before)
{
    char *path;
    cr_assert(asprintf(&path, "%s/records/prefix_digests", getenv("TESTDATA")) > 0);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    size_t a = 0;
    char want_args[256];
    unsigned long long want;
    for (; fscanf(f, "%llx\t%255[^\n]\n", &want, want_args) == 2; a++) {
        cr_assert_lt(a, sizeof diff_args / sizeof *diff_args);
        cr_assert_str_eq(want_args, diff_args[a]);
        uint64_t got = prefix_digest(diff_args[a], 900 + (int)a, 400);
        if (getenv("GM_PREFIX_DIGESTS_SHOW")) /* to write the file anew on purpose */
            fprintf(stderr, "%016llx\t%s\n", (unsigned long long)got, diff_args[a]);
        else
            cr_assert_eq(got, (uint64_t)want, "%s: prefixes' digest %016llx, was %016llx",
                         diff_args[a], (unsigned long long)got, want);
    }
    cr_assert_eq(a, sizeof diff_args / sizeof *diff_args, "%s: %zu specs", path, a);
    fclose(f);
    free(path);
}
