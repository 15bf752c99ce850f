/*
 * test_recgpu.c - the records path's sort on the GPU (core/device/recgpu.c,
 * cuda/records.cu), and the inputs the suite's files share (recgpu_cases.h):
 * id,ts,payload lines whose timestamps many lines share, fields of numbers,
 * units and words, CRLF and blank lines, a line of a megabyte among short ones,
 * a single key for every line, NUL-terminated lines, each case with sort's
 * options. Here: gm_lines_count, which tells the device how many lines a chunk
 * holds, agrees with the split on blocks read from files (with the counts made
 * while reading) and pipes.
 *
 * The other files: recgpu_ties.c (without a GPU, the host's half fed what a CPU
 * twin of the device hands back, against gm_recsort; in a build with CUDA the
 * kernels' per-line steps run on the host against the twin) and recgpu_cli.c
 * (gpumerge against LC_ALL=C sort with --device=cpu and --device=gpu, as the
 * cases come and through gpumerge_forced; the text in device memory, whole and
 * range by range; a chunk too large for the device's memory; no device).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/read/lines.h"
#include "helpers.h"
#include "recgpu_cases.h"
#include "specs.h"

/* ---------------------------------------------------------------- inputs */

/* bench/records.sh's lines: id,ts,payload, a timestamp shared by about fifty. */
void gen_events(rng *r, text *t, int n, char eol)
{
    for (int i = 0; i < n; i++) {
        text_putf(t, "%lld,%lld,", (long long)rng_range(r, 0, 10 * (int64_t)n),
             1700000000LL + rng_range(r, 0, n / 50));
        int len = (int)rng_range(r, 0, 12);
        for (int k = 0; k < len; k++)
            text_putf(t, "%c", (char)('a' + rng_range(r, 0, 25)));
        text_put(t, &eol, 1);
    }
}

/* Fields of numbers (signs, decimals, long ones, units, zeros) and words, blank
 * or comma separated; blank lines, CRs and lines equal to an earlier one. */
void gen_fields(rng *r, text *t, int n, char eol)
{
    static const char *odd[] = { "abc", "x", "-", "+1", ".", "-.5", "0.0", "-0", "1e3", "1K",
                                 "2M", "007", "1.50", "-0.0", "9999999999999999999999",
                                 "12345678901234567.5", "-3G", "" };
    size_t *starts = malloc((size_t)n * sizeof *starts);
    for (int i = 0; i < n; i++) {
        starts[i] = t->n;
        if (i > 0 && rng_range(r, 0, 9) == 0) { /* a copy of an earlier line */
            size_t s = starts[rng_range(r, 0, i - 1)];
            size_t e = s;
            while (t->buf[e] != eol)
                e++;
            char *copy = strndup(t->buf + s, e - s);
            text_put(t, copy, e - s);
            free(copy);
        } else if (rng_range(r, 0, 30) > 0) {
            int nf = (int)rng_range(r, 1, 4);
            for (int f = 0; f < nf; f++) {
                if (f)
                    text_put(t, rng_range(r, 0, 2) ? "," : " ", 1);
                int64_t k = rng_range(r, 0, 9);
                if (k < 2)
                    text_putf(t, "%s", odd[rng_range(r, 0, 17)]);
                else if (k < 4)
                    text_putf(t, "%lld.%lld", (long long)rng_range(r, -50, 50),
                         (long long)rng_range(r, 0, 999));
                else
                    text_putf(t, "%lld", (long long)rng_range(r, -30, 30));
            }
            if (rng_range(r, 0, 20) == 0)
                text_put(t, "\r", 1);
        }
        text_put(t, &eol, 1);
    }
    free(starts);
}

/* Short lines, and a line of a megabyte (its key first) now and then. */
static void gen_long(rng *r, text *t, int n, char eol)
{
    for (int i = 0; i < n; i++) {
        text_putf(t, "%lld,", (long long)rng_range(r, -100, 100));
        int big = i % (n / 3 + 1) == 1;
        size_t len = big ? (size_t)1 << 20 : (size_t)rng_range(r, 0, 20);
        for (size_t k = 0; k < len; k++)
            text_putf(t, "%c", (char)('a' + (k * 7 + (size_t)i) % 26));
        text_put(t, &eol, 1);
    }
}

/* One key for every line, the rest of the line telling them apart or not. */
void gen_equal(rng *r, text *t, int n, char eol)
{
    for (int i = 0; i < n; i++) {
        text_putf(t, "%lld,42,%lld", (long long)rng_range(r, 0, 20), (long long)rng_range(r, 0, 3));
        text_put(t, &eol, 1);
    }
}

/* One key for every line, and the lines' first eight bytes shared by thousands. */
void gen_equal_heads(rng *r, text *t, int n, char eol)
{
    for (int i = 0; i < n; i++) {
        text_putf(t, "row-%06lld,42,%lld", (long long)rng_range(r, 0, 30000),
             (long long)rng_range(r, 0, 99));
        text_put(t, &eol, 1);
    }
}

/* Lines whose ids many share, with more bytes in common after the id (a
 * timestamp, or a constant middle that only bytes past the 32nd tell apart). */
void gen_long_heads(rng *r, text *t, int n, char eol)
{
    for (int i = 0; i < n; i++) {
        long long id = rng_range(r, 0, 150);
        if (rng_range(r, 0, 1))
            text_putf(t, "%08lld,1700%06lld,", id, (long long)rng_range(r, 0, 2000));
        else
            text_putf(t, "%08lld,the same twenty-six bytes,%lld", id, (long long)rng_range(r, 0, 9));
        int len = (int)rng_range(r, 0, 3);
        for (int k = 0; k < len; k++)
            text_putf(t, "%c", (char)('a' + rng_range(r, 0, 2)));
        text_put(t, &eol, 1);
    }
}

/* Fields of words for the text orders: upper and lower case, month names after
 * blanks, punctuation and control bytes that -d and -i skip, high bytes, and
 * beginnings shared past 8 and 16 bytes; copies of earlier lines. */
void gen_words(rng *r, text *t, int n, char eol)
{
    static const char *const parts[] = { "jan", "FEB", " Mar", "\tapr", "May", "jun", "JUL",
                                         "aug", "sep ", "Oct", "nov", "DEC", "xyz", "Ja",
                                         "https://www.", "HTTPS://WWW.", "example.com/",
                                         "Example.COM/", "a-b", "a.b", "A_B", "~", "1.2",
                                         "\x01", "\x7f", "\xc3\xa9", "\xff", "!", "" };
    size_t *starts = malloc((size_t)n * sizeof *starts);
    for (int i = 0; i < n; i++) {
        starts[i] = t->n;
        if (i > 0 && rng_range(r, 0, 9) == 0) {
            size_t s = starts[rng_range(r, 0, i - 1)], e = s;
            while (t->buf[e] != eol)
                e++;
            char *copy = strndup(t->buf + s, e - s);
            text_put(t, copy, e - s);
            free(copy);
        } else {
            int nf = (int)rng_range(r, 1, 3);
            for (int f = 0; f < nf; f++) {
                if (f)
                    text_put(t, rng_range(r, 0, 2) ? "," : " ", 1);
                int np = (int)rng_range(r, 0, 4);
                for (int k = 0; k < np; k++)
                    text_putf(t, "%s", parts[rng_range(r, 0, 28)]);
                text_putf(t, "%c", (char)((rng_range(r, 0, 1) ? 'a' : 'A') + rng_range(r, 0, 25)));
            }
        }
        text_put(t, &eol, 1);
    }
    free(starts);
}

/* File names for -V: names sharing a long first number and more after it
 * (past the prefix's 64 bits), suffixes, '~', hidden and special names, runs of
 * 15 digits and more, leading zeros, and copies of earlier lines. */
void gen_versions(rng *r, text *t, int n, char eol)
{
    static const char *const stems[] = { "pkg-", "lib", "", ".", "a", "A-", "x~", "~" };
    static const char *const sufs[] = { "", ".tar.gz", ".1", ".deb", "~rc1", ".~", ".a1" };
    for (int i = 0; i < n; i++) {
        int64_t k = rng_range(r, 0, 19);
        if (k == 0) {
            text_putf(t, "%s", rng_range(r, 0, 2) ? "." : rng_range(r, 0, 1) ? ".." : "");
        } else if (k == 1) {
            text_putf(t, "v%lld%015lld", (long long)rng_range(r, 0, 3),
                      (long long)rng_range(r, 0, 5));
        } else {
            text_putf(t, "%s%08lld.%0*lld.%lld%s", stems[rng_range(r, 0, 7)],
                      (long long)rng_range(r, 0, 40), (int)rng_range(r, 1, 3),
                      (long long)rng_range(r, 0, 30), (long long)rng_range(r, 0, 300),
                      sufs[rng_range(r, 0, 6)]);
            if (rng_range(r, 0, 3) == 0)
                text_putf(t, "-%c%lld", (char)('a' + rng_range(r, 0, 2)),
                          (long long)rng_range(r, 0, 9));
        }
        text_put(t, &eol, 1);
    }
}

const rec_case CASES[] = {
    { gen_events, 20000, "-t, -k2,2n", 0, 0 },
    { gen_events, 20000, "-t, -k2,2nr -s", 0, 0 },
    { gen_events, 20000, "-t, -k2,2n -u", 0, 0 },
    { gen_events, 20000, "-t, -k1,1 -k2,2n", 0, 0 },
    { gen_events, 5000, "-t, -k3 -k9,9n -r", 0, 0 },
    { gen_events, 5000, "-t, -k2,2n -k1,1nr", 0, 0 },
    { gen_fields, 8000, "-n", 0, 0 },
    { gen_fields, 8000, "-n -u", 0, 0 },
    { gen_fields, 8000, "-h -s", 0, 0 },
    { gen_fields, 8000, "-h -r", 0, 0 },
    { gen_fields, 8000, "-k2,2 -k1,1n", 0, 0 },
    { gen_fields, 8000, "-b -k2,2n -k3", 0, 0 },
    { gen_fields, 8000, "-t, -k1.2,1.4n -u", 0, 0 },
    { gen_fields, 4000, "-g", 0, 0 },
    { gen_long, 40, "-t, -k1,1n", 0, 0 },
    { gen_long, 40, "-t, -k2 -k9,9n", 0, 0 },
    { gen_equal, 20000, "-t, -k2,2n", 0, 0 },
    { gen_equal, 20000, "-t, -k2,2n -s", 0, 0 },
    { gen_equal, 20000, "-t, -k2,2n -u", 0, 0 },
    { gen_equal_heads, 20000, "-t, -k2,2n", 0, 0 },
    { gen_long_heads, 20000, "-n", 0, 0 },
    { gen_long_heads, 20000, "-n -r", 0, 0 },
    { gen_long_heads, 20000, "-t, -k1,1n", 0, 0 },
    { gen_fields, 8000, "-z -n", 1, 0 },
    { gen_events, 8000, "-z -t, -k2,2n -s", 1, 0 },
    { gen_words, 20000, "", 0, 1 },
    { gen_words, 20000, "-r -u", 0, 1 },
    { gen_words, 20000, "-f", 0, 1 },
    { gen_words, 20000, "-f -u", 0, 1 },
    { gen_words, 20000, "-d -s", 0, 1 },
    { gen_words, 20000, "-i -r", 0, 1 },
    { gen_words, 20000, "-df", 0, 1 },
    { gen_words, 20000, "-M", 0, 1 },
    { gen_words, 20000, "-t, -k2,2M -k1,1f", 0, 1 },
    { gen_words, 20000, "-t, -k2,2f -s", 0, 1 },
    { gen_words, 20000, "-t, -k1,1 -k2,2n", 0, 1 },
    { gen_long_heads, 20000, "", 0, 1 },
    { gen_long_heads, 20000, "-t, -k2 -u", 0, 1 },
    { gen_events, 20000, "-t, -k3,3 -s", 0, 1 },
    { gen_words, 8000, "-z -f", 1, 1 },
    { gen_versions, 20000, "-V", 0, 1 },
    { gen_versions, 20000, "-V -r", 0, 1 },
    { gen_versions, 20000, "-V -u", 0, 1 },
    { gen_versions, 20000, "-t. -k2V", 0, 1 },
    { gen_versions, 20000, "-t. -k1,1Vr", 0, 1 },
    { gen_long_heads, 20000, "-V", 0, 1 },
    { gen_events, 20000, "-V", 0, 1 },
    { gen_words, 20000, "-k1,1V", 0, 1 },
};
const size_t NCASES = sizeof CASES / sizeof CASES[0];

/* ---------------------------------------------------------------- lines */

/* gm_lines_count on blocks as a sort reads them (the counts made while a regular
 * file is read, and a pipe's counted after), against the records split makes. */
Test(recgpu, lines_counted_as_split)
{
    char *dir = scratch_dir();
    static const size_t wants[] = { 1000, 64 << 10, 3 << 20 };
    for (int zero = 0; zero <= 1; zero++)
        for (int last_eol = 0; last_eol <= 1; last_eol++) {
            rng r;
            rng_seed(&r, 500 + 2 * (uint64_t)zero + (uint64_t)last_eol);
            text t = { NULL, 0, 0 };
            char eol = zero ? '\0' : '\n';
            gen_fields(&r, &t, 150000, eol);
            gen_long(&r, &t, 6, eol);
            if (!last_eol)
                t.n--; /* no terminator after the last line */
            char *in = path_in(dir, "in");
            write_file(in, t.buf, t.n);
            gm_keyspec ks = spec_from(zero ? "-z -n" : "-n", NULL);
            for (size_t w = 0; w < sizeof wants / sizeof *wants; w++)
                for (int pipe = 0; pipe <= 1; pipe++) {
                    gm_lines_src src;
                    gm_status st;
                    char cmd[4200];
                    snprintf(cmd, sizeof cmd, "cat '%s'", in);
                    FILE *p = pipe ? popen(cmd, "r") : NULL;
                    if (pipe)
                        gm_lines_open_fd(&src, fileno(p), 0, "pipe", eol);
                    else
                        cr_assert_eq(gm_lines_open(&src, in, eol, 0, &st), GM_OK, "%s", st.msg);
                    size_t lines = 0;
                    int with_counts = 0;
                    for (;;) {
                        gm_lines_block *b;
                        cr_assert_eq(gm_lines_read(&src, wants[w], 0, 2, &b, &st), GM_OK, "%s",
                                     st.msg);
                        if (!b)
                            break;
                        gm_recs v = { NULL, 0, 0, 0 };
                        cr_assert_eq(gm_lines_split(&ks, b, &v, 2, &st), GM_OK, "%s", st.msg);
                        size_t c = gm_lines_count(b, eol, 2);
                        with_counts |= b->counts != NULL;
                        cr_assert_eq(c, v.n, "block of %zu bytes (pipe %d): %zu lines counted, "
                                     "%zu split", b->len, pipe, c, v.n);
                        lines += c;
                        gm_recs_free(&v);
                        gm_lines_block_unref(b);
                    }
                    cr_assert_eq(lines, 150006u);
                    cr_assert(pipe || wants[w] < (1 << 20) || with_counts,
                              "no block of %zu bytes came with its counts", wants[w]);
                    gm_lines_close(&src);
                    if (p)
                        pclose(p);
                }
            free(in);
            free(t.buf);
        }
    free(dir);
}
