/*
 * keys_version.c - part of the keys suite: core/keys/vercmp.h's gm_version_cmp,
 * the order of sort -V. Golden pairs (each checked with LC_ALL=C sort -V of
 * coreutils 9.1), and a random differential against LC_ALL=C sort -V itself:
 * a few thousand generated names (digit runs with leading zeros, letters,
 * '.', '~', '-', other bytes, NUL, hidden names, file suffixes, empty lines)
 * sorted whole, and as pairs sorted within groups (-k1,1n -k2V), so that each
 * comparison is checked on its own too.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/keys/vercmp.h"

/* ---------------------------------------------------------------- helpers */

typedef struct vstr {
    unsigned char *p;
    size_t n;
} vstr;

static int vcmp(const char *a, const char *b)
{
    return gm_version_cmp((const unsigned char *)a, strlen(a),
                          (const unsigned char *)b, strlen(b));
}

static int sign(int x)
{
    return (x > 0) - (x < 0);
}

/* sort -V's whole order: the version order, then the bytes. */
static int line_cmp(const vstr *a, const vstr *b)
{
    int r = gm_version_cmp(a->p, a->n, b->p, b->n);
    if (r)
        return r;
    size_t n = a->n < b->n ? a->n : b->n;
    r = n ? memcmp(a->p, b->p, n) : 0;
    return r ? r : (a->n > b->n) - (a->n < b->n);
}

static int qsort_cmp(const void *a, const void *b)
{
    return line_cmp(a, b);
}

static unsigned long long rng_state;

static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)((rng_state >> 33) % n);
}

/* Appends one random piece of a version-like name to S (capacity 256). */
static void add_piece(unsigned char *s, size_t *n, int no_tab)
{
    static const char *const pieces[] = {
        ".tar.gz", ".txt", ".~1~", ".a1", ".tar", ".gz", ".b~", "-rc1", "~rc",
        "~", "~~", ".", "..", "-", "0", "00", "007", "1", "10", "9", "a", "b",
        "Z", "x86", "_", "+", " ", "~1", ".1", ".0", "a.", ".~", "v",
    };
    char tmp[24];
    const char *add;
    switch (rnd(8)) {
    case 0: case 1:
        add = pieces[rnd(sizeof pieces / sizeof pieces[0])];
        break;
    case 2: {
        int len = snprintf(tmp, sizeof tmp, "%.*s%u", (int)rnd(3), "000", rnd(1000));
        (void)len;
        add = tmp;
        break;
    }
    case 3:
        tmp[0] = (char)("abczAZ~.-"[rnd(9)]);
        tmp[1] = 0;
        add = tmp;
        break;
    case 4:
        if (rnd(4) == 0) { /* a byte outside the usual ones */
            static const unsigned char odd[] = {0, 1, '\t', '!', '/', ':', 0x7f, 0x80, 0xff};
            unsigned char c = odd[rnd(sizeof odd)];
            if (no_tab && c == '\t')
                c = '!';
            if (*n < 250)
                s[(*n)++] = c;
            return;
        }
        add = "1.2";
        break;
    default:
        tmp[0] = (char)('0' + rnd(10));
        tmp[1] = 0;
        add = tmp;
        break;
    }
    size_t len = strlen(add);
    if (*n + len < 250) {
        memcpy(s + *n, add, len);
        *n += len;
    }
}

/* A random name: empty now and then, hidden now and then, or "." / "..". */
static vstr random_name(int no_tab)
{
    unsigned char s[256];
    size_t n = 0;
    unsigned kind = rnd(40);
    if (kind == 0) {
        /* empty */
    } else if (kind == 1) {
        s[n++] = '.';
    } else if (kind == 2) {
        s[n++] = '.';
        s[n++] = '.';
    } else {
        if (kind < 8)
            s[n++] = '.';
        if (kind < 10)
            s[n++] = '.';
        unsigned pieces = 1 + rnd(6);
        for (unsigned i = 0; i < pieces; i++)
            add_piece(s, &n, no_tab);
    }
    vstr v = {malloc(n + 1), n};
    cr_assert(v.p);
    memcpy(v.p, s, n);
    v.p[n] = 0;
    return v;
}

static void write_lines(FILE *f, const vstr *v, size_t count, int grouped)
{
    for (size_t i = 0; i < count; i++) {
        if (grouped)
            fprintf(f, "%zu\t", i / 2);
        fwrite(v[i].p, 1, v[i].n, f);
        fputc('\n', f);
    }
}

/* Runs LC_ALL=C sort ARGS on the lines and reads its output into OUT. */
static void run_sort(const char *args, const vstr *v, size_t count, int grouped,
                     char **out, size_t *outlen)
{
    char path[] = "/tmp/gm_keys_version_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    cr_assert(f);
    write_lines(f, v, count, grouped);
    cr_assert(fclose(f) == 0);

    char cmd[256];
    snprintf(cmd, sizeof cmd, "LC_ALL=C sort %s '%s'", args, path);
    FILE *p = popen(cmd, "r");
    cr_assert(p, "popen %s", cmd);
    FILE *mem = open_memstream(out, outlen);
    cr_assert(mem);
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, p)) > 0)
        fwrite(buf, 1, got, mem);
    fclose(mem);
    cr_assert(pclose(p) == 0, "%s failed", cmd);
    unlink(path);
}

/* Compares sort's output with V's lines in order (with group prefixes when
 * GROUPED); returns the number of mismatched lines. */
static size_t count_mismatches(const char *out, size_t outlen, const vstr *v,
                               size_t count, int grouped)
{
    char *want = NULL;
    size_t wantlen = 0;
    FILE *mem = open_memstream(&want, &wantlen);
    cr_assert(mem);
    write_lines(mem, v, count, grouped);
    fclose(mem);
    cr_assert_eq(outlen, wantlen, "sort's output has %zu bytes, not %zu", outlen, wantlen);

    size_t bad = 0, line = 0;
    const char *a = out, *b = want;
    while (a < out + outlen) {
        const char *ea = memchr(a, '\n', (size_t)(out + outlen - a));
        const char *eb = memchr(b, '\n', (size_t)(want + wantlen - b));
        cr_assert(ea && eb);
        if (ea - a != eb - b || memcmp(a, b, (size_t)(ea - a)) != 0) {
            if (bad < 5)
                cr_log_error("line %zu: sort -V has \"%.*s\", gm_version_cmp \"%.*s\"",
                             line, (int)(ea - a), a, (int)(eb - b), b);
            bad++;
        }
        a = ea + 1;
        b = eb + 1;
        line++;
    }
    free(want);
    return bad;
}

/* ---------------------------------------------------------------- golden */

Test(keys, version_golden_pairs)
{
    /* Each row: a, b, the sign of the comparison (0 for "equal keys": sort
     * then orders by bytes). The nonzero ones are LC_ALL=C sort -V's order. */
    static const struct { const char *a, *b; int s; } cases[] = {
        {"", ".", -1}, {".", "..", -1}, {"..", ".a", -1}, {"", "a", -1},
        {".", "a", -1}, {".z", "a", -1}, {".a", "..a", -1}, {"..a", ".1", -1},
        {".a", ".1", -1}, {".foo", ".foo.tar", -1}, {".9", "0", -1},
        {"~~", "~", -1}, {"~", "0", -1}, {"1", "01", 0}, {"001", "1", 0},
        {"1.0~", "1.0~rc1", -1}, {"1.0~rc1", "1.0", -1}, {"1.0", "1.0.tar.gz", -1},
        {"1.0.tar.gz", "1.0a", -1}, {"1.0a", "1.0-1", -1}, {"1.0-1", "1.0.1", -1},
        {"1.2.tar.gz", "1.10.tar.gz", -1}, {"1.9", "1.10", -1},
        {"a~", "a", -1}, {"a", "a.~", -1}, {"a.~", "a.b", -1}, {"a.b", "a.b.c", -1},
        {"a.b.c", "a001", -1}, {"a001", "a01", 0}, {"a1", "a-b", -1},
        {"a-b", "a.", -1}, {"a.", "a.1", -1}, {"a.b", "a.1", -1},
        {"foo", "foo.tar", -1}, {"foo.tar", "foo.tar.gz", -1},
        {"x~", "x~y", -1}, {"x~y", "x", -1}, {"x", "x0", 0}, {"x0", "x!", -1},
        {"x!", "x-", -1}, {"x-", "x.", -1}, {"xa", "xB", 1}, {"xZ", "x_", -1},
        {"file2.txt", "file10.txt", -1}, {"file10.txt", "file10.tar.gz", 1},
        {"abc-1.2.3", "abc-1.2.10", -1}, {"abc-1.10", "abc-1.9z", 1},
        {"8.0", "8.0.0", -1}, {"0", "00", 0}, {"a0b", "a00b", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int r = sign(vcmp(cases[i].a, cases[i].b));
        cr_expect_eq(r, cases[i].s, "cmp(\"%s\", \"%s\") = %d, not %d",
                     cases[i].a, cases[i].b, r, cases[i].s);
        int back = sign(vcmp(cases[i].b, cases[i].a));
        cr_expect_eq(back, -cases[i].s, "cmp(\"%s\", \"%s\") = %d, not %d",
                     cases[i].b, cases[i].a, back, -cases[i].s);
    }
}

Test(keys, version_nul_bytes)
{
    /* NUL is an ordinary byte: after letters, after the end, and not the end. */
    static const unsigned char a[] = {'a', 0, '1'}, b[] = {'a'}, c[] = {'a', 'b'};
    cr_expect_gt(gm_version_cmp(a, 3, b, 1), 0);
    cr_expect_gt(gm_version_cmp(a, 3, c, 2), 0);
    cr_expect_lt(gm_version_cmp(c, 2, a, 3), 0);
    cr_expect_eq(gm_version_cmp(a, 3, a, 3), 0);
}

/* ---------------------------------------------------------------- against sort */

Test(keys, version_random_against_sort, .timeout = 120)
{
    enum { COUNT = 4000, ROUNDS = 3 };
    for (unsigned round = 0; round < ROUNDS; round++) {
        rng_state = 0x5eed0000ULL + round;
        vstr *v = calloc(COUNT, sizeof *v);
        cr_assert(v);
        for (size_t i = 0; i < COUNT; i++)
            v[i] = random_name(0);
        /* Some duplicates and near-duplicates for ties. */
        for (size_t i = 0; i < COUNT / 20; i++) {
            size_t from = rnd(COUNT), to = rnd(COUNT);
            free(v[to].p);
            v[to].n = v[from].n;
            v[to].p = malloc(v[to].n + 1);
            memcpy(v[to].p, v[from].p, v[to].n + 1);
        }

        char *out = NULL;
        size_t outlen = 0;
        run_sort("-V", v, COUNT, 0, &out, &outlen);
        qsort(v, COUNT, sizeof *v, qsort_cmp);
        size_t bad = count_mismatches(out, outlen, v, COUNT, 0);
        cr_expect_eq(bad, 0, "round %u: %zu of %d lines differ from sort -V",
                     round, bad, COUNT);
        free(out);
        for (size_t i = 0; i < COUNT; i++)
            free(v[i].p);
        free(v);
    }
}

Test(keys, version_random_pairs_against_sort, .timeout = 120)
{
    /* Pairs in groups "k<TAB>name", sorted with -k1,1n -k2V: within a group
     * sort compares the two names directly, which checks every comparison
     * by itself, transitive or not. The last resort compares whole lines,
     * whose group prefixes are equal, so it orders the names by bytes. */
    enum { PAIRS = 5000 };
    rng_state = 0xfeedULL;
    vstr *v = calloc(2 * PAIRS, sizeof *v);
    cr_assert(v);
    for (size_t i = 0; i < 2 * PAIRS; i++)
        v[i] = random_name(1);
    /* Half the pairs share a stem, so that their differences come late. */
    for (size_t i = 0; i < PAIRS; i += 2) {
        vstr *a = &v[2 * i], *b = &v[2 * i + 1];
        size_t keep = a->n ? rnd((unsigned)a->n + 1) : 0;
        unsigned char *p = malloc(keep + b->n + 1);
        memcpy(p, a->p, keep);
        memcpy(p + keep, b->p, b->n + 1);
        free(b->p);
        b->p = p;
        b->n += keep;
    }

    char *out = NULL;
    size_t outlen = 0;
    run_sort("-t '\t' -k1,1n -k2V", v, 2 * PAIRS, 1, &out, &outlen);
    for (size_t i = 0; i < PAIRS; i++)
        if (line_cmp(&v[2 * i], &v[2 * i + 1]) > 0) {
            vstr t = v[2 * i];
            v[2 * i] = v[2 * i + 1];
            v[2 * i + 1] = t;
        }
    size_t bad = count_mismatches(out, outlen, v, 2 * PAIRS, 1);
    cr_expect_eq(bad, 0, "%zu of %d lines differ from sort -k2V", bad, 2 * PAIRS);
    free(out);
    for (size_t i = 0; i < 2 * PAIRS; i++)
        free(v[i].p);
    free(v);
}
