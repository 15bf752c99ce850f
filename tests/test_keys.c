/*
 * test_keys.c - core/keys/keys.h: -k parsing and its messages (against LC_ALL=C sort's
 * own, word for word, and on random -k arguments), positions and flags, the limit
 * on keys, and the finished spec: the inheritance of global flags, the implied
 * -n, and whole-line numeric keys. It also holds what the suite's files share
 * (keys_cases.h).
 *
 * The other files: keys_table.c (tables of each order, -n, -g, -h and bytes, and
 * key form, each pair ordered by LC_ALL=C sort too; NaNs; the last resort; the
 * prefixes' exactness), keys_random.c (a random differential against
 * LC_ALL=C sort: lines of fields, blanks, signs, decimals, long numbers, units,
 * non-numbers, high bytes, empty lines and ties, sorted by a stable merge sort
 * with gm_line_cmp; -s, -r, -u, -b, -t and several -k; and the prefix law:
 * prefix(a) < prefix(b) implies gm_line_cmp(a, b) < 0, and equal exact prefixes
 * imply equal first keys; the prefixes of random lines against digests kept in
 * testdata/records/prefix_digests); keys_version.c (-V's comparison against
 * LC_ALL=C sort -V), keys_verprefix.c (-V's prefix against that comparison) and
 * keys_md5.c.
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

/* Whether the installed sort knows -h's units R and Q (coreutils 9.2 and
 * later), which gpumerge orders as they do: cases with them are compared with
 * an older sort only where it agrees. */
int sort_knows_rq(void)
{
    static int known = -1;
    if (known < 0) {
        cmd_result r = run_sh(NULL, "printf '1Q\\n9R\\n' | LC_ALL=C sort -h | head -n 1");
        known = strcmp(r.out, "9R\n") == 0;
        cmd_free(&r);
    }
    return known;
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

Test(keys, incompatible_flags_named)
{
    /* the orders sort refuses beside -n, named in sort's order; f goes with it */
    static const char flags[] = "diMRVf";
    static const char *const named[] = { "dn", "in", "Mn", "nR", "nV", NULL };
    for (int i = 0; flags[i]; i++) {
        char arg[16];
        snprintf(arg, sizeof arg, "2,3%cn", flags[i]);
        gm_keyspec ks;
        gm_keyspec_init(&ks);
        gm_status st = { GM_OK, "", 0 };
        int rc = gm_keyspec_parse_key(&ks, arg, &st);
        if (!named[i]) {
            cr_assert_eq(rc, GM_OK, "%s: %s", arg, st.msg);
            continue;
        }
        cr_assert_eq(rc, GM_EUSAGE, "%s", arg);
        char want[160];
        snprintf(want, sizeof want, "options '-%s' are incompatible", named[i]);
        cr_assert_str_eq(st.msg, want);
    }
    /* a stray character is reported as sort reports it */
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
