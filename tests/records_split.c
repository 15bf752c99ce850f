/*
 * records_split.c - the split of a block into records (gm_lines_split) against a
 * line-by-line reading of the same block: every record's line, length, key
 * prefix and its exactness, '\n' and -z, on one to three threads; and -t
 * -kN,Nn's quick prefix (core/read/fieldnum.h) against the general gm_line_prefix,
 * the specs it must not take refused; and the default -n's scan for a line with
 * no number (core/read/numwarn.h) against a line-by-line reading.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../core/read/fieldnum.h"
#include "../core/read/lines.h"
#include "../core/read/numwarn.h"
#include "helpers.h"
#include "records_cases.h"
#include "specs.h"

/* gm_lines_split against a line-by-line reading of the same block: lines of
 * every length from empty to a few hundred bytes (so that terminators fall
 * anywhere in the 64-byte windows the split compares at once), '\n' and -z's
 * '\0', on one to three threads (pieces of a quarter megabyte). */
Test(records, split_finds_every_line, .timeout = 60)
{
    rng r;
    rng_seed(&r, 64);
    for (int zero = 0; zero <= 1; zero++) {
        gm_keyspec ks = spec_of(&TABLE[0], zero);
        char eol = ks.eol;
        size_t cap = 3 << 20, len = 0;
        unsigned char *data = malloc(cap);
        cr_assert_not_null(data);
        while (len < cap - 1024) {
            int n = rng_range(&r, 0, 9) == 0 ? (int)rng_range(&r, 64, 400)
                                               : (int)rng_range(&r, 0, 70);
            for (int i = 0; i < n; i++) {
                static const char chars[] = "0123456789,,,-. abc\n";
                char c = chars[rng_range(&r, 0, sizeof chars - 2)];
                data[len++] = (unsigned char)(c == eol ? 'x' : c);
            }
            data[len++] = (unsigned char)eol;
        }
        for (int threads = 1; threads <= 3; threads++) {
            gm_lines_block b = { 1, len, cap, data, NULL, 0 };
            gm_recs v = { NULL, 0, 0, 0 };
            gm_status st;
            cr_assert_eq(gm_lines_split(&ks, &b, &v, threads, &st), GM_OK);
            size_t at = 0, i = 0;
            for (; at < len; i++) {
                const unsigned char *e = memchr(data + at, eol, len - at);
                size_t n = (size_t)(e - (data + at));
                cr_assert_lt(i, v.n, "too few records");
                cr_assert_eq(gm_rec_line(&v.r[i]), data + at, "record %zu's line", i);
                cr_assert_eq(gm_rec_len(&v.r[i], eol), n, "record %zu's length", i);
                int exact;
                cr_assert_eq(v.r[i].prefix, gm_line_prefix(&ks, data + at, n, &exact),
                             "record %zu's prefix", i);
                cr_assert_eq(gm_rec_is_exact(&v.r[i]), exact, "record %zu's exactness", i);
                at += n + 1;
            }
            cr_assert_eq(v.n, i, "%zu records for %zu lines", v.n, i);
            gm_recs_free(&v);
        }
        free(data);
    }
}

/* One random field for the quick prefix's cases: digits of every length up to
 * 20 with leading zeros, signs, blanks before them, '.', a letter or a CR after
 * them, other separators inside, or nothing. */
static size_t quick_field(rng *r, unsigned char *o)
{
    static const char *const pieces[] = { "", " ", "\t", "  ", "-", "+", "0", "00", ".",
                                          "-0", "x", "\r", ",", ".5", "-.", "\n" };
    size_t n = 0;
    if (rng_range(r, 0, 2) == 0) {
        const char *pre = pieces[rng_range(r, 0, 15)];
        memcpy(o, pre, strlen(pre));
        n += strlen(pre);
    }
    int digits = (int)rng_range(r, 0, 3) == 0 ? (int)rng_range(r, 0, 20) : (int)rng_range(r, 1, 12);
    for (int i = 0; i < digits; i++)
        o[n++] = (unsigned char)('0' + rng_range(r, i == 0 && rng_range(r, 0, 3) ? 1 : 0, 9));
    if (rng_range(r, 0, 3) == 0) {
        const char *post = pieces[rng_range(r, 0, 15)];
        memcpy(o + n, post, strlen(post));
        n += strlen(post);
    }
    return n;
}

/* The quick prefix of a whole -t field under -n (fieldnum.h) against the general
 * gm_line_prefix, line by line with room to read after each line, and through
 * gm_lines_split, where the lines near the block's end take the general path:
 * separators that are blanks, digits, '-' and '.', fields first to 32nd, 'b' and
 * 'r', -z, lines shorter and longer than the 32 bytes looked at, fields missing,
 * empty or past the look; the specs it must not take are refused. */
Test(records, split_quick_field_prefix_matches_the_general, .timeout = 60)
{
    static const struct {
        const char *args;
        int quick;
    } specs[] = {
        { "-t, -k2,2n", 1 }, { "-t, -k1,1n -s", 1 }, { "-t, -k3,3nr", 1 },
        { "-t, -k2b,2n", 1 }, { "-t, -b -n -k2,2 -k1,1", 1 }, { "-t' ' -k2,2n", 1 },
        { "-t' ' -k2b,2n", 0 }, { "-t. -k2,2n", 1 }, { "-t- -k1,1n", 1 },
        { "-t0 -k2,2n", 1 }, { "-t, -k2,2n -z", 1 }, { "-t, -k9,9n", 1 },
        { "-t, -k32,32n", 1 }, { "-t, -k33,33n", 0 }, { "-t, -k2,3n", 0 },
        { "-t, -k2.2,2n", 0 }, { "-t, -k2,2.3n", 0 }, { "-t, -k2,2 -k1,1n", 0 }, { "-t, -k2", 0 },
        { "-k2,2n", 0 }, { "-t, -k2,2h", 0 }, { "-n", 0 },
    };
    rng r;
    rng_seed(&r, 65);
    for (size_t c = 0; c < sizeof specs / sizeof specs[0]; c++) {
        gm_keyspec ks = spec_from(specs[c].args, NULL);
        gm_fieldnum f;
        gm_fieldnum_init(&f, &ks);
        cr_assert_eq(f.on, specs[c].quick, "%s: quick %d", specs[c].args, f.on);
        unsigned char tab = ks.tab >= 0 ? (unsigned char)ks.tab : ',';
        size_t cap = 1 << 20, len = 0;
        unsigned char *data = malloc(cap + GM_FIELDNUM_READ);
        cr_assert_not_null(data);
        while (len < cap - 2048) {
            int fields = (int)rng_range(&r, 0, 10) == 0 ? (int)rng_range(&r, 0, 40)
                                                         : (int)rng_range(&r, 0, 5);
            for (int i = 0; i < fields; i++) {
                if (i)
                    data[len++] = tab;
                len += quick_field(&r, data + len);
            }
            data[len++] = (unsigned char)ks.eol;
        }
        memset(data + len, tab, GM_FIELDNUM_READ); /* readable after the last line */
        for (size_t at = 0, i = 0; f.on && at < len; i++) {
            const unsigned char *e = memchr(data + at, ks.eol, len - at);
            size_t n = (size_t)(e - (data + at));
            int ex1, ex2;
            uint64_t want = gm_line_prefix(&ks, data + at, n, &ex1);
            uint64_t got = gm_fieldnum_prefix(&f, &ks, data + at, n, data + len + GM_FIELDNUM_READ,
                                              &ex2);
            cr_assert_eq(got, want, "%s: line %zu '%.*s': %016llx, not %016llx",
                         specs[c].args, i, (int)n, data + at, (unsigned long long)got,
                         (unsigned long long)want);
            cr_assert_eq(ex2, ex1, "%s: line %zu '%.*s''s exactness", specs[c].args, i, (int)n,
                         data + at);
            at += n + 1;
        }
        gm_lines_block b = { 1, len, cap, data, NULL, 0 };
        gm_recs v = { NULL, 0, 0, 0 };
        gm_status st;
        cr_assert_eq(gm_lines_split(&ks, &b, &v, 2, &st), GM_OK);
        size_t at = 0, i = 0;
        for (; at < len; i++) {
            const unsigned char *e = memchr(data + at, ks.eol, len - at);
            size_t n = (size_t)(e - (data + at));
            int exact;
            cr_assert_lt(i, v.n, "too few records");
            cr_assert_eq(v.r[i].prefix, gm_line_prefix(&ks, data + at, n, &exact),
                         "%s: record %zu's prefix", specs[c].args, i);
            cr_assert_eq(gm_rec_is_exact(&v.r[i]), exact, "%s: record %zu's exactness",
                         specs[c].args, i);
            at += n + 1;
        }
        cr_assert_eq(v.n, i, "%zu records for %zu lines", v.n, i);
        gm_recs_free(&v);
        free(data);
    }
}

/* gm_numwarn_scan against gm_numwarn_holds line by line: lines that hold numbers
 * in every form -n reads (blanks, '-', '.'), blank ones, and now and then one
 * that holds none, placed anywhere in the 64-byte windows and the pieces (a few
 * megabytes on three threads), for the whole line, a first field (the scan's
 * look at line starts) and a -t field; '\n' and -z's '\0'. */
Test(records, numwarn_scan_finds_the_first_line_without_a_number, .timeout = 60)
{
    /* forms hold a number under every key here (or are blank); bad lines hold
     * none under some */
    static const char *const forms[] = { "12,3", " 7,-1", "-3,.5", ".5, 4", "-.25,\t0",
                                         "\t0,0x", "", "  ", "9 a,8", "1,", "0x,7", "-0,",
                                         "4 ,  -9", "0.0,1." };
    static const char *const bad[] = { "a", "-", ".", "+5", " -x,1", "5,z", "y,5", "- 1,-" };
    static const char *const keys[] = { NULL, "1,1", "2,2", "2" };
    rng r;
    rng_seed(&r, 65);
    for (int round = 0; round < 48; round++) {
        int zero = round % 2, k = round / 2 % 4, big = round / 8 % 2, odds = round / 16;
        gm_keyspec ks;
        gm_keyspec_init(&ks);
        gm_status st;
        if (keys[k])
            cr_assert_eq(gm_keyspec_parse_key(&ks, keys[k], &st), GM_OK);
        ks.tab = k >= 2 ? ',' : -1;
        ks.eol = zero ? '\0' : '\n';
        gm_keyspec_finish(&ks);
        cr_assert(ks.order_implied);
        text t = { NULL, 0, 0 };
        /* odds 0 and 1: a line in 4000 or 60 holds no number; 2: one line only,
         * anywhere (or none, where it falls past the end) */
        size_t want = big ? 3 << 20 : 4096, plant = (size_t)rng_range(&r, 0, (int64_t)want);
        while (t.n < want) {
            int pick = odds == 2 ? t.n >= plant ? (plant = SIZE_MAX, 0) : 1
                                 : (int)rng_range(&r, 0, odds == 0 ? 4000 : 60);
            text_puts(&t, pick == 0 ? bad[rng_range(&r, 0, 7)]
                                    : forms[rng_range(&r, 0, 13)]);
            text_put(&t, &ks.eol, 1);
        }
        size_t at = 0, lines = 0, first = SIZE_MAX;
        while (at < t.n) {
            const char *e = memchr(t.buf + at, ks.eol, t.n - at);
            size_t n = (size_t)(e - (t.buf + at));
            if (first == SIZE_MAX &&
                !gm_numwarn_holds(&ks, 0, (const unsigned char *)t.buf + at, n))
                first = lines;
            lines++;
            at += n + 1;
        }
        for (int threads = 1; threads <= 3; threads += 2) {
            size_t got_lines;
            size_t got = gm_numwarn_scan(&ks, 0, (const unsigned char *)t.buf, t.n, threads,
                                         &got_lines);
            cr_assert_eq(got, first, "round %d, %d threads: line %zu, want %zu", round,
                         threads, got, first);
            cr_assert_eq(got_lines, first == SIZE_MAX ? lines : first,
                         "round %d, %d threads: %zu lines, want %zu", round, threads, got_lines,
                         first == SIZE_MAX ? lines : first);
        }
        free(t.buf);
    }
}
