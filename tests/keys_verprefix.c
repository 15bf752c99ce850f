/*
 * keys_verprefix.c - part of the keys suite: core/keys/verprefix.h's -V prefix
 * against gm_version_cmp (vercmp.c, itself checked against LC_ALL=C sort -V in
 * keys_version.c). The law on every pair of many random and adversarial names
 * (digit runs with leading zeros and past the 15-digit stop, '~', '.', file
 * suffixes, hidden and special names, high bytes, NUL, stems that differ only
 * around the 64th bit): a lower prefix is a lower name, a higher prefix a higher
 * one, and equal exact prefixes are equal names; golden prefixes for the cases
 * the encoding singles out; and the law through gm_line_prefix for -V keys of
 * fields, reversed, and folded (whose prefix the comparison leaves undecided).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/keys/keys.h"
#include "../core/keys/vercmp.h"
#include "../core/keys/verprefix.h"
#include "specs.h"

typedef unsigned char uc;

typedef struct {
    uc s[200];
    size_t n;
} vname;

static uint64_t vp_state;

static unsigned vp_rnd(unsigned n)
{
    vp_state = vp_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)((vp_state >> 33) % n);
}

static void add(vname *v, const char *t, size_t len)
{
    if (v->n + len <= sizeof v->s) {
        memcpy(v->s + v->n, t, len);
        v->n += len;
    }
}

/* Appends one piece: a suffix, a separator, letters, a digit run (leading zeros,
 * lengths about the 15-digit stop), '~', a NUL or a high byte. */
static void add_piece(vname *v)
{
    static const char *const pieces[] = {
        ".tar.gz", ".txt", ".~1~", ".a1", ".gz", ".b~", "-rc1", "~rc", "~", "~~",
        ".", "..", "-", ",", "_", "+", " ", "a", "b", "Z", "x86", "v", ".1", ".0",
        "a.", ".~", "0", "00", "000000000",
    };
    char tmp[64];
    switch (vp_rnd(7)) {
    case 0: case 1: {
        const char *p = pieces[vp_rnd(sizeof pieces / sizeof pieces[0])];
        add(v, p, strlen(p));
        break;
    }
    case 2: case 3: { /* a digit run, sometimes long */
        unsigned zeros = vp_rnd(4) == 0 ? vp_rnd(20) : 0;
        unsigned len = vp_rnd(3) == 0 ? 12 + vp_rnd(8) : 1 + vp_rnd(9);
        size_t k = 0;
        for (unsigned i = 0; i < zeros; i++)
            tmp[k++] = '0';
        for (unsigned i = 0; i < len && k < sizeof tmp; i++)
            tmp[k++] = (char)('0' + (i == 0 ? 1 + vp_rnd(9) : vp_rnd(10)));
        add(v, tmp, k);
        break;
    }
    case 4: {
        static const uc odd[] = { 0, 1, '\t', '!', '/', ':', '[', '`', '{', 0x7f, 0x80, 0xff };
        tmp[0] = (char)odd[vp_rnd(sizeof odd)];
        add(v, tmp, 1);
        break;
    }
    default:
        tmp[0] = (char)("abczAZ~.-019"[vp_rnd(12)]);
        add(v, tmp, 1);
        break;
    }
}

/* A random name: now and then empty, ".", "..", or hidden. */
static vname random_name(void)
{
    vname v = { { 0 }, 0 };
    unsigned kind = vp_rnd(40);
    if (kind == 0)
        return v;
    if (kind == 1 || kind == 2) {
        add(&v, "..", kind);
        return v;
    }
    if (kind < 8)
        add(&v, ".", 1);
    for (unsigned i = 1 + vp_rnd(7); i > 0; i--)
        add_piece(&v);
    return v;
}

static int sign(int x) { return (x > 0) - (x < 0); }

/* The law over every pair of v; returns the pairs with equal prefixes. */
static long law(const vname *v, size_t n)
{
    uint64_t *p = malloc(n * sizeof *p);
    int *ex = malloc(n * sizeof *ex);
    cr_assert(p && ex);
    for (size_t i = 0; i < n; i++)
        p[i] = gm_kp_version(v[i].s, v[i].n, &ex[i]);
    long ties = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            int d = sign(gm_version_cmp(v[i].s, v[i].n, v[j].s, v[j].n));
            int want = p[i] < p[j] ? -1 : p[i] > p[j];
            if (want != 0)
                cr_assert_eq(d, want, "prefix %016llx of '%.*s', %016llx of '%.*s', cmp %d",
                             (unsigned long long)p[i], (int)v[i].n, v[i].s,
                             (unsigned long long)p[j], (int)v[j].n, v[j].s, d);
            else if (ties++, ex[i] && ex[j])
                cr_assert_eq(d, 0, "exact prefix %016llx of '%.*s' and '%.*s'",
                             (unsigned long long)p[i], (int)v[i].n, v[i].s, (int)v[j].n,
                             v[j].s);
        }
    free(p);
    free(ex);
    return ties;
}

/* The device's rounds' law (cuda/records.cuh): a name's prefix and then its
 * stream's 32-bit windows after it, compared in turn, order names as
 * gm_version_cmp wherever they differ; and a window is the stream's bits, as
 * the prefix's halves show. */
enum { VP_WINDOWS = 6 };

static void windows(const vname *v, uint64_t *w)
{
    int ex;
    w[0] = gm_kp_version(v->s, v->n, &ex);
    for (int r = 0; r < VP_WINDOWS; r++)
        w[1 + r] = gm_vp_window(v->s, v->n, 64 + 32 * (size_t)r, 32, &ex);
    cr_assert_eq(gm_vp_window(v->s, v->n, 0, 32, &ex), w[0] >> 32, "'%.*s'", (int)v->n, v->s);
    cr_assert_eq(gm_vp_window(v->s, v->n, 32, 32, &ex), w[0] & 0xFFFFFFFFu, "'%.*s'",
                 (int)v->n, v->s);
}

static void law_windows(const vname *v, size_t n)
{
    uint64_t(*w)[1 + VP_WINDOWS] = malloc(n * sizeof *w);
    cr_assert(w);
    for (size_t i = 0; i < n; i++)
        windows(&v[i], w[i]);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            int r = 0;
            while (r <= VP_WINDOWS && w[i][r] == w[j][r])
                r++;
            if (r > VP_WINDOWS)
                continue;
            int want = w[i][r] < w[j][r] ? -1 : 1;
            int d = sign(gm_version_cmp(v[i].s, v[i].n, v[j].s, v[j].n));
            cr_assert_eq(d, want, "window %d of '%.*s' %llx, of '%.*s' %llx, cmp %d", r,
                         (int)v[i].n, v[i].s, (unsigned long long)w[i][r], (int)v[j].n,
                         v[j].s, (unsigned long long)w[j][r], d);
        }
    free(w);
}

Test(keys, version_prefix_law_random, .timeout = 120)
{
    enum { N = 2500 };
    vname *v = calloc(N, sizeof *v);
    cr_assert(v);
    for (unsigned round = 0; round < 3; round++) {
        vp_state = 0x7e5f0000ULL + round;
        for (size_t i = 0; i < N; i++)
            v[i] = random_name();
        long ties = law(v, N);
        law_windows(v, N);
        /* the prefix tells most names apart (a constant one would pass the law) */
        cr_assert_lt(ties, (long)N * N / 50, "round %u: %ld pairs share a prefix", round, ties);
    }
    free(v);
}

/* Names that share a stem and differ in what follows it, so that the difference
 * falls before, on and after the 64th bit (a stem of k letters fills 8k bits). */
Test(keys, version_prefix_law_shared_stems, .timeout = 120)
{
    enum { N = 2400 };
    static const char *const stems[] = { "", "a", "abcdefg", "abcdefgh", "1234567", "a.1.2",
                                         "x12345678901", "0000012", "libfoo-1.", ".abcdef" };
    vname *v = calloc(N, sizeof *v);
    cr_assert(v);
    vp_state = 0x57e4ULL;
    for (size_t i = 0; i < N; i++) {
        const char *st = stems[i % (sizeof stems / sizeof stems[0])];
        add(&v[i], st, strlen(st));
        for (unsigned k = vp_rnd(4); k > 0; k--)
            add_piece(&v[i]);
    }
    law(v, N);
    law_windows(v, N);
    free(v);
}

/* Digit runs whose counts lie about the stop, with and without leading zeros. */
Test(keys, version_prefix_law_long_numbers)
{
    enum { N = 600 };
    vname *v = calloc(N, sizeof *v);
    cr_assert(v);
    vp_state = 0x10e6ULL;
    for (size_t i = 0; i < N; i++) {
        char t[80];
        size_t k = 0;
        if (i % 3 == 0)
            t[k++] = 'v';
        for (unsigned z = vp_rnd(3); z > 0; z--)
            t[k++] = '0';
        unsigned len = 12 + vp_rnd(6);
        for (unsigned d = 0; d < len; d++)
            t[k++] = (char)('0' + (d == 0 ? 1 + vp_rnd(9) : vp_rnd(3)));
        if (vp_rnd(2))
            t[k++] = (char)".~a-"[vp_rnd(4)];
        add(&v[i], t, k);
    }
    law(v, N);
    law_windows(v, N);
    free(v);
}

static uint64_t vp(const char *s, int *ex)
{
    return gm_kp_version((const uc *)s, strlen(s), ex);
}

Test(keys, version_prefix_golden)
{
    int ex;
    /* the special names, whole and exact, below the hidden ones and the rest */
    cr_expect_eq(vp("", &ex), 0);
    cr_expect(ex);
    cr_expect_eq(vp(".", &ex), UINT64_C(1) << 56);
    cr_expect(ex);
    cr_expect_eq(vp("..", &ex), UINT64_C(2) << 56);
    cr_expect(ex);
    cr_expect_eq(vp(".a", &ex) >> 56, 3);
    cr_expect(!ex, "'.a' is all suffix: '.b' shares its prefix");
    cr_expect_lt(vp(".zzz9", &ex), vp("~", &ex));
    /* '~' lowest, then the end of a run, letters, other bytes */
    cr_expect_eq(vp("~", &ex) >> 56, GM_VP_TILDE);
    cr_expect_eq(vp("1", &ex) >> 56, GM_VP_RUN);
    cr_expect_lt(vp("a~", &ex), vp("a", &ex));
    cr_expect_lt(vp("a", &ex), vp("aA", &ex));
    cr_expect_lt(vp("aZ", &ex), vp("aa", &ex));
    cr_expect_lt(vp("az", &ex), vp("a-", &ex));
    cr_expect_lt(vp("a-", &ex), vp("a\xff", &ex));
    /* numbers by value: count, then digits */
    cr_expect_lt(vp("1.9", &ex), vp("1.10", &ex));
    cr_expect_lt(vp("file2.txt", &ex), vp("file10.txt", &ex));
    cr_expect_lt(vp("68721579,1700062442,x", &ex), vp("68721580,1700062442,a", &ex));
    /* equal names, equal prefixes: leading zeros, a trailing zero run, suffixes */
    int ex2;
    cr_expect_eq(vp("1", &ex), vp("01", &ex2));
    cr_expect(ex && ex2, "'1' and '01' fit whole");
    cr_expect_eq(vp("a", &ex), vp("a000", &ex2));
    cr_expect_eq(vp("foo", &ex), vp("foo.tar.gz", &ex2));
    cr_expect(ex && !ex2, "the suffix is left to the comparison");
    /* 15 digits stop the stream: 15 and 16 digits tie, 14 and 15 do not */
    cr_expect_eq(vp("100000000000000a", &ex), vp("1000000000000000", &ex));
    cr_expect(!ex);
    cr_expect_lt(vp("99999999999999", &ex), vp("100000000000000", &ex));
}

/* The law through gm_line_prefix, on lines of fields, for -V keys. */
Test(keys, version_prefix_law_keys, .timeout = 120)
{
    static const char *const specs[] = { "-V", "-V -r", "-k2,2V", "-t, -k3V",
                                         "-k1,1Vr -k2n", "-b -k2V", "-k1fV" };
    enum { N = 700 };
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        gm_keyspec ks = spec_from(specs[s], NULL);
        gm_keyspec first = ks;
        first.nkeys = 1;
        first.stable = 1;
        vname *v = calloc(N, sizeof *v);
        uint64_t *p = malloc(N * sizeof *p);
        int *ex = malloc(N * sizeof *ex);
        cr_assert(v && p && ex);
        vp_state = 0x4e75ULL + s;
        for (size_t i = 0; i < N; i++) {
            for (unsigned f = 1 + vp_rnd(4); f > 0; f--) {
                vname w = random_name();
                add(&v[i], (const char *)w.s, w.n);
                add(&v[i], vp_rnd(2) ? "," : "  ", vp_rnd(2) ? 1 : 2);
            }
            for (size_t k = 0; k < v[i].n; k++)
                if (v[i].s[k] == '\n')
                    v[i].s[k] = '?';
            p[i] = gm_line_prefix(&ks, v[i].s, v[i].n, &ex[i]);
        }
        for (size_t i = 0; i < N; i++)
            for (size_t j = 0; j < N; j++)
                if (p[i] < p[j])
                    cr_assert_lt(gm_line_cmp(&ks, v[i].s, v[i].n, v[j].s, v[j].n), 0,
                                 "%s: '%.*s' below '%.*s'", specs[s], (int)v[i].n, v[i].s,
                                 (int)v[j].n, v[j].s);
                else if (p[i] == p[j] && ex[i] && ex[j])
                    cr_assert_eq(gm_line_cmp(&first, v[i].s, v[i].n, v[j].s, v[j].n), 0,
                                 "%s: exact '%.*s', '%.*s'", specs[s], (int)v[i].n, v[i].s,
                                 (int)v[j].n, v[j].s);
        free(v);
        free(p);
        free(ex);
    }
}
