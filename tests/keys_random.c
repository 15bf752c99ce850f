/*
 * keys_random.c - core/keys/keys.h on random lines: a differential against LC_ALL=C
 * sort (lines of fields, blanks, signs, decimals, long numbers, units,
 * non-numbers, high bytes, empty lines and ties, sorted by a stable merge sort
 * with gm_line_cmp; -s, -r, -u, -b, -t, -z and several -k), and the prefix law:
 * prefix(a) < prefix(b) implies gm_line_cmp(a, b) < 0, and equal exact prefixes
 * imply equal first keys; the same for the text orders (-f -d -i -M) on lines
 * of words; -n's prefix read a byte or eight at a time; the
 * prefixes of random lines against digests kept in testdata/records/prefix_digests.
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

typedef struct { unsigned char *s; size_t n; } line;

static int pick(rng *r, int n) { return (int)rng_range(r, 0, n - 1); }

/* Now and then a byte 0x80: sort's thousands separator where char is signed
 * (keyprefix.h), passed over in an integer part, not in a fraction or a unit. */
static void maybe_thousands(rng *r, text *t)
{
    if (pick(r, 14) == 0)
        text_puts(t, pick(r, 4) ? "\x80" : "\x80\x80");
}

/* A number as the orders read them: signs, leading zeros, fractions with trailing
 * zeros, long digit strings, units, exponents, thousands separators; NaNs unless
 * nan is 0 (the installed sort, coreutils 9.1, orders two NaNs by uninitialised
 * bytes). */
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
    maybe_thousands(r, t);
    int zeros = pick(r, 4) == 0 ? pick(r, 3) + 1 : 0;
    for (int i = 0; i < zeros; i++) {
        text_puts(t, "0");
        maybe_thousands(r, t);
    }
    int il = pick(r, 10) == 0 ? pick(r, 30) : pick(r, 5);
    for (int i = 0; i < il; i++) {
        char d = (char)('0' + (i == 0 ? 1 + pick(r, 9) : pick(r, 10)));
        text_put(t, &d, 1);
        maybe_thousands(r, t);
    }
    if (pick(r, 3) == 0) {
        text_puts(t, ".");
        int fl = pick(r, 10) == 0 ? pick(r, 25) : pick(r, 4);
        for (int i = 0; i < fl; i++) {
            char d = (char)('0' + pick(r, 10));
            text_put(t, &d, 1);
            maybe_thousands(r, t);
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

/* A field for the text orders: month names (any case, after blanks, cut short),
 * words of mixed case sharing long beginnings, punctuation, digits, control and
 * high bytes, version-like names. */
static void random_text_field(rng *r, text *t)
{
    static const char *const parts[] = { "jan", "FEB", " Mar", "\tapr", "may", "JuN", "jul",
                                         "aug ", "Sep", "oct", "NOV", "dEc", "ja", "xyz",
                                         "https://www.", "Https://WWW.", "abcdefgh", "ABCDEFGH",
                                         "a-b", "a.b", "A_B", "~", "1.2.10", "1.2.9", "v01",
                                         "\x01", "\x7f", "\x80", "\xe9", "\xff", "!", "", " " };
    int k = 1 + pick(r, 3);
    for (int i = 0; i < k; i++)
        text_puts(t, parts[pick(r, sizeof parts / sizeof *parts)]);
    if (pick(r, 3) == 0) {
        char c = (char)(pick(r, 2) ? 'a' + pick(r, 26) : 'A' + pick(r, 26));
        text_put(t, &c, 1);
    }
}

/* n lines, some repeated whole for ties; nl: newlines may sit inside lines;
 * words: fields for the text orders instead of numbers. */
static line *random_lines_of(rng *r, int n, int nl, int nan, int words)
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
            if (words)
                random_text_field(r, &t);
            else
                random_field(r, &t, nan);
        }
        v[i].s = (unsigned char *)t.buf;
        v[i].n = t.n;
    }
    return v;
}

static line *random_lines(rng *r, int n, int nl, int nan)
{
    return random_lines_of(r, n, nl, nan, 0);
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

static void differential_of(const char *args, int seed, int n, int words)
{
    int implied;
    gm_keyspec ks = spec_from_as(args, words, &implied);
    rng r;
    rng_seed(&r, (uint64_t)seed);
    int general = 0;
    for (int i = 0; i < ks.nkeys; i++)
        general |= ks.keys[i].order == GM_ORDER_GENERAL;
    line *v = random_lines_of(&r, n, ks.eol == '\0', !general, words);
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

static void differential(const char *args, int seed, int n)
{
    differential_of(args, seed, n, 0);
}

/* The text orders on lines of words, in byte order where none is named (as
 * gpusort orders them): -f, -d, -i, -M and their mixes, as keys and globally,
 * with numeric keys beside them. */
static const char *const text_args[] = {
    "", "-r", "-u", "-s -k2", "-f", "-f -u", "-d", "-i", "-d -r", "-fd", "-fi -u",
    "-M", "-M -r", "-M -u", "-Mf -s", "-k2,2f", "-k1,1d -k2", "-k2M -k1,1", "-t, -k2,2i -s",
    "-b -k2,2M -u", "-k1.3,1.9f", "-z -f", "-z -k2,2M", "-k2,2f -k1,1n",
};

Test(keys, text_orders_against_sort, .timeout = 120)
{
    for (size_t a = 0; a < sizeof text_args / sizeof *text_args; a++)
        for (int seed = 1; seed <= 3; seed++)
            differential_of(text_args[a], (int)(a * 100 + (size_t)seed + 7000), 300, 1);
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
