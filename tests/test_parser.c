/*
 * test_parser.c - core/input: every accepted and rejected line form, int64 edges and
 * the int32 narrowing, blank lines, CRLF and missing final newlines, order checks,
 * and line numbers that stay right when the problem sits at a boundary between two
 * threads' chunks; and the parallel pread (core/pread.h) under the reader: pieces,
 * spans, the thread cap, its messages and the size rule.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/input.h"
#include "../core/pread.h"
#include "helpers.h"

typedef struct {
    int rc;
    gm_status st;
    int64_t *keys; /* gathered as int64 */
    int64_t n;
    int wide;
    char *path;
} parsed;

static parsed parse_with(const char *text, size_t len, int nthreads, int ordered,
                         int64_t mask, int strict)
{
    parsed p;
    memset(&p, 0, sizeof p);
    char *dir = scratch_dir();
    p.path = path_in(dir, "in.txt");
    write_file(p.path, text, len);
    gm_input in;
    gm_keybuf kb = { NULL, 0, 0, 0, GM_I32 };
    p.rc = gm_input_open(&in, p.path, &p.st);
    in.threads = nthreads; /* the preads' pieces too */
    gm_parse_opts o = { nthreads, ordered, mask, strict, 0 };
    while (!p.rc && !in.eof)
        p.rc = gm_input_read_keys(&in, &o, &kb, &p.st);
    if (!p.rc) {
        p.n = kb.n;
        p.wide = kb.width == GM_I64;
        p.keys = malloc((size_t)(p.n + 1) * sizeof *p.keys);
        for (int64_t i = 0; i < kb.n; i++)
            p.keys[i] = gm_keybuf_get(&kb, i);
    }
    gm_input_close(&in);
    gm_keybuf_free(&kb);
    unlink(p.path); /* the messages keep only the name */
    rmdir(dir);
    free(dir);
    return p;
}

static parsed parse_text(const char *text) { return parse_with(text, strlen(text), 2, 0, 0, 0); }

static void parsed_free(parsed *p)
{
    unlink(p->path);
    free(p->path);
    free(p->keys);
}

/* The message after "FILE:" */
static const char *after_name(const parsed *p)
{
    size_t l = strlen(p->path);
    cr_assert(strncmp(p->st.msg, p->path, l) == 0, "message does not start with the file: %s",
              p->st.msg);
    return p->st.msg + l;
}

/* ---------------------------------------------------------------- accepted */

/* Parameters are copied into the test's process: no pointers in them. */
typedef struct {
    char text[64];
    int64_t value;
} accepted;

ParameterizedTestParameters(parser, accepted_forms)
{
    static accepted cases[] = {
        { "5", 5 },
        { "5\n", 5 },
        { "+5\n", 5 },
        { "-5\n", -5 },
        { "  5\n", 5 },
        { "5  \n", 5 },
        { "\t-5\t\n", -5 },
        { " \t +17 \t \n", 17 },
        { "5\r\n", 5 },
        { "5 \r\n", 5 },
        { "-5\r", -5 },
        { "007\n", 7 },
        { "-0\n", 0 },
        { "+0\n", 0 },
        { "0000000000000000000000000000000042\n", 42 },
        { "-00000000000000000000009223372036854775808\n", INT64_MIN },
        { "9223372036854775807\n", INT64_MAX },
        { "-9223372036854775808\n", INT64_MIN },
        { "2147483647\n", 2147483647 },
        { "-2147483648\n", -2147483647 - 1 },
        { "1234567890123456\n", 1234567890123456 },
        { "12345678901234567\n", 12345678901234567 },
        { "-999999999999999999\n", -999999999999999999 },
    };
    return cr_make_param_array(accepted, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(accepted *c, parser, accepted_forms)
{
    /* alone, and followed by a second line so the fast path sees it too */
    for (int twice = 0; twice < 2; twice++) {
        char text[256];
        snprintf(text, sizeof text, "%s%s", c->text,
                 twice ? (c->text[strlen(c->text) - 1] == '\n' ? "1\n" : "\n1\n") : "");
        parsed p = parse_text(text);
        cr_assert_eq(p.rc, GM_OK, "'%s' rejected: %s", c->text, p.st.msg);
        cr_assert_eq(p.n, 1 + twice, "'%s': %lld keys", c->text, (long long)p.n);
        cr_assert_eq(p.keys[0], c->value, "'%s' parsed as %lld", c->text, (long long)p.keys[0]);
        parsed_free(&p);
    }
}

/* ---------------------------------------------------------------- rejected */

typedef struct {
    char text[96];
    char message[128]; /* after "FILE" */
} rejected;

ParameterizedTestParameters(parser, rejected_forms)
{
    static rejected cases[] = {
        { "abc\n", ":1: not an integer: 'abc'" },
        { "5a\n", ":1: not an integer: '5a'" },
        { "a5\n", ":1: not an integer: 'a5'" },
        { "5 5\n", ":1: not an integer: '5 5'" },
        { "--5\n", ":1: not an integer: '--5'" },
        { "+-5\n", ":1: not an integer: '+-5'" },
        { "-\n", ":1: not an integer: '-'" },
        { "+\n", ":1: not an integer: '+'" },
        { "- 5\n", ":1: not an integer: '- 5'" },
        { "5.0\n", ":1: not an integer: '5.0'" },
        { "1e5\n", ":1: not an integer: '1e5'" },
        { "0x10\n", ":1: not an integer: '0x10'" },
        { "\r5\n", ":1: not an integer: '\\x0d5'" },
        { "5\r\r\n", ":1: not an integer: '5\\x0d'" },
        { "1\n2\n\xef\xbc\x99\n", ":3: not an integer: '\\xef\\xbc\\x99'" },
        { "1\n\n\n\nx", ":5: not an integer: 'x'" },
        { "9223372036854775808\n", ":1: out of range: '9223372036854775808'" },
        { "-9223372036854775809\n", ":1: out of range: '-9223372036854775809'" },
        { "99999999999999999999\n", ":1: out of range: '99999999999999999999'" },
        { "1\n-123456789012345678901234567890\n",
          ":2: out of range: '-123456789012345678901234567890'" },
        { "1\n10000000000000000000000000000000000000000000000000000000000000000000000\n",
          ":2: out of range: '100000000000000000000000000000000000000000000000000000000000...'" },
    };
    return cr_make_param_array(rejected, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(rejected *c, parser, rejected_forms)
{
    parsed p = parse_text(c->text);
    cr_assert_eq(p.rc, GM_EINPUT, "'%s' accepted", c->text);
    cr_assert_str_eq(after_name(&p), c->message);
    parsed_free(&p);
}

Test(parser, nul_byte_is_not_an_integer)
{
    parsed p = parse_with("1\n2\0\n", sizeof "1\n2\0\n" - 1, 1, 0, 0, 0);
    cr_assert_eq(p.rc, GM_EINPUT);
    cr_assert_str_eq(after_name(&p), ":2: not an integer: '2\\x00'");
    parsed_free(&p);
}

/* ---------------------------------------------------------------- layout */

Test(parser, blank_lines_are_skipped_but_counted)
{
    parsed p = parse_text("\n\n3\n \n\t\n\r\n-4\n   \n");
    cr_assert_eq(p.rc, GM_OK, "%s", p.st.msg);
    cr_assert_eq(p.n, 2);
    cr_assert_eq(p.keys[0], 3);
    cr_assert_eq(p.keys[1], -4);
    parsed_free(&p);
}

Test(parser, empty_and_blank_only_inputs)
{
    parsed p = parse_text("");
    cr_assert_eq(p.rc, GM_OK);
    cr_assert_eq(p.n, 0);
    parsed_free(&p);
    p = parse_text("\n \n\t\n");
    cr_assert_eq(p.rc, GM_OK);
    cr_assert_eq(p.n, 0);
    parsed_free(&p);
}

Test(parser, crlf_file_without_final_newline)
{
    parsed p = parse_text("1\r\n2\r\n3");
    cr_assert_eq(p.rc, GM_OK, "%s", p.st.msg);
    cr_assert_eq(p.n, 3);
    cr_assert_eq(p.keys[2], 3);
    parsed_free(&p);
}

Test(parser, narrows_to_int32_only_when_every_key_fits)
{
    parsed p = parse_text("2147483647\n-2147483648\n0\n");
    cr_assert_eq(p.wide, 0);
    parsed_free(&p);
    p = parse_text("1\n2147483648\n");
    cr_assert_eq(p.wide, 1);
    cr_assert_eq(p.keys[0], 1);
    cr_assert_eq(p.keys[1], 2147483648LL);
    parsed_free(&p);
    p = parse_text("-2147483649\n");
    cr_assert_eq(p.wide, 1);
    cr_assert_eq(p.keys[0], -2147483649LL);
    parsed_free(&p);
}

/* Lines of 17 to 19 digits (the SSE path takes them with their leading digits
 * added by hand), after 16 bytes of other lines so that the fast path sees them:
 * int64's edges, leading zeros, and a sign or a non-digit among the leading digits. */
Test(parser, seventeen_to_nineteen_digits)
{
    static const char *ok[] = { "9223372036854775807", "-9223372036854775808",
                                "12345678901234567", "-123456789012345678",
                                "0009223372036854775807", "00000000000000001",
                                "1000000000000000000", "-999999999999999999" };
    static const int64_t want[] = { INT64_MAX, INT64_MIN, 12345678901234567LL,
                                    -123456789012345678LL, INT64_MAX, 1,
                                    1000000000000000000LL, -999999999999999999LL };
    static const char *bad[] = { "9223372036854775808", "-9223372036854775809",
                                 "9999999999999999999", "12x45678901234567890",
                                 "1-345678901234567", "+-12345678901234567" };
    static const char *why[] = { "out of range", "out of range", "out of range",
                                 "not an integer", "not an integer", "not an integer" };
    for (int scalar = 0; scalar <= 1; scalar++) {
        gm_input_test_scalar(scalar);
        for (int i = 0; i < 8; i++) {
            char text[128];
            snprintf(text, sizeof text, "1\n2\n3\n4\n5\n6\n7\n8\n9\n%s\n", ok[i]);
            parsed p = parse_text(text);
            cr_assert_eq(p.rc, GM_OK, "%s: %s", ok[i], p.st.msg);
            cr_assert_eq(p.n, 10);
            cr_assert_eq(p.keys[9], want[i], "%s (scalar %d)", ok[i], scalar);
            parsed_free(&p);
        }
        for (int i = 0; i < 6; i++) {
            char text[128], msg[128];
            snprintf(text, sizeof text, "1\n2\n3\n4\n5\n6\n7\n8\n9\n%s\n", bad[i]);
            parsed p = parse_text(text);
            cr_assert_eq(p.rc, GM_EINPUT, "%s (scalar %d)", bad[i], scalar);
            snprintf(msg, sizeof msg, "10: %s: '%s'", why[i], bad[i]);
            cr_assert(strstr(p.st.msg, msg), "%s: %s", bad[i], p.st.msg);
            parsed_free(&p);
        }
    }
    gm_input_test_scalar(0);
}

/* A large input: n lines of random values, some wide, some blank. */
static char *big_text(rng *r, int64_t n, size_t *len, int64_t *keys, int64_t *nkeys)
{
    char *text = malloc((size_t)n * 24 + 1);
    size_t o = 0;
    *nkeys = 0;
    for (int64_t i = 0; i < n; i++) {
        int kind = (int)rng_range(r, 0, 99);
        if (kind == 0) {
            text[o++] = '\n';
            continue;
        }
        int64_t v = kind == 1 ? (int64_t)rng_next(r) : rng_range(r, -2000000000, 2000000000);
        keys[(*nkeys)++] = v;
        o += (size_t)sprintf(text + o, kind == 2 ? " %lld\r\n" : "%lld\n", (long long)v);
    }
    *len = o;
    return text;
}

Test(parser, large_input_on_many_threads)
{
    rng r;
    rng_seed(&r, 3);
    int64_t n = 400000, nkeys;
    int64_t *want = malloc((size_t)n * sizeof *want);
    size_t len;
    char *text = big_text(&r, n, &len, want, &nkeys);
    for (int threads = 1; threads <= 8; threads *= 2) {
        parsed p = parse_with(text, len, threads, 0, 0, 0);
        cr_assert_eq(p.rc, GM_OK, "%s", p.st.msg);
        cr_assert_eq(p.n, nkeys);
        cr_assert_eq(p.wide, 1);
        for (int64_t i = 0; i < nkeys; i++)
            cr_assert_eq(p.keys[i], want[i], "key %lld with %d threads", (long long)i, threads);
        parsed_free(&p);
    }
    free(text);
    free(want);
}

/* The int32 keys close the gaps that blank lines leave. */
Test(parser, int32_gather_closes_gaps)
{
    char *dir = scratch_dir();
    char *path = path_in(dir, "in");
    int64_t n = 300000;
    char *text = malloc((size_t)n * 16);
    int32_t *want = malloc((size_t)n * sizeof *want);
    size_t o = 0;
    int64_t k = 0;
    rng r;
    rng_seed(&r, 4);
    for (int64_t i = 0; i < n; i++) {
        if (rng_range(&r, 0, 9) == 0) {
            text[o++] = '\n';
            continue;
        }
        want[k] = (int32_t)rng_range(&r, INT32_MIN, INT32_MAX);
        o += (size_t)sprintf(text + o, "%d\n", want[k]);
        k++;
    }
    write_file(path, text, o);
    gm_status st;
    gm_input in;
    gm_keybuf kb = { NULL, 0, 0, 0, GM_I32 };
    cr_assert_eq(gm_input_open(&in, path, &st), GM_OK);
    gm_parse_opts opts = { 4, 0, 0, 0, 0 };
    while (!in.eof)
        cr_assert_eq(gm_input_read_keys(&in, &opts, &kb, &st), GM_OK);
    cr_assert_eq(kb.n, k);
    cr_assert_eq(kb.width, GM_I32);
    cr_assert_arr_eq(kb.data, want, (size_t)k * sizeof *want);
    gm_input_close(&in);
    gm_keybuf_free(&kb);
    unlink(path);
    free(want);
    free(text);
    free(path);
    free(dir);
}

/* ---------------------------------------------------------------- boundaries */

/* Returns the first line of every chunk after the first (parsing text cleanly with
 * nthreads threads); *count gets how many. */
static int64_t *chunk_starts(const char *text, size_t len, int nthreads, int *count)
{
    char *dir = scratch_dir();
    char *path = path_in(dir, "in");
    write_file(path, text, len);
    gm_status st;
    gm_input in;
    cr_assert_eq(gm_input_open(&in, path, &st), GM_OK);
    gm_parse_opts opts = { nthreads, 0, 0, 0, 0 };
    cr_assert_eq(gm_input_read_keys(&in, &opts, NULL, &st), GM_OK);
    cr_assert(in.eof, "one block");
    int64_t *starts = malloc(64 * sizeof *starts);
    *count = 0;
    for (int c = 1; c < 64 && gm_input_chunk_first_line(&in, c) > 0; c++)
        starts[(*count)++] = gm_input_chunk_first_line(&in, c);
    gm_input_close(&in);
    unlink(path);
    free(path);
    free(dir);
    return starts;
}

/* Lines "%07d\n": all the same length, so replacing one keeps every offset. */
static char *numbered_text(int64_t n, size_t *len)
{
    char *text = malloc((size_t)n * 8 + 1);
    for (int64_t i = 0; i < n; i++)
        sprintf(text + i * 8, "%07lld\n", (long long)i);
    *len = (size_t)n * 8;
    return text;
}

Test(parser, error_line_numbers_at_chunk_boundaries)
{
    size_t len;
    int64_t n = 200000; /* 1.6 MB: several chunks */
    char *text = numbered_text(n, &len);
    int count;
    int64_t *starts = chunk_starts(text, len, 2, &count);
    cr_assert_geq(count, 2, "want several chunks, got %d boundaries", count);
    for (int c = 0; c < count; c++) {
        for (int64_t line = starts[c] - 2; line <= starts[c] + 1; line++) {
            char *bad = malloc(len);
            memcpy(bad, text, len);
            memcpy(bad + (line - 1) * 8, "12x4567", 7);
            parsed p = parse_with(bad, len, 2, 0, 0, 0);
            cr_assert_eq(p.rc, GM_EINPUT);
            char want[64];
            snprintf(want, sizeof want, ":%lld: not an integer: '12x4567'", (long long)line);
            cr_assert_str_eq(after_name(&p), want, "boundary at line %lld", (long long)starts[c]);
            parsed_free(&p);
            free(bad);
        }
    }
    free(starts);
    free(text);
}

Test(parser, disorder_line_numbers_at_chunk_boundaries)
{
    size_t len;
    int64_t n = 200000;
    char *text = numbered_text(n, &len);
    int count;
    int64_t *starts = chunk_starts(text, len, 2, &count);
    cr_assert_geq(count, 2);
    for (int c = 0; c < count; c++) {
        for (int64_t line = starts[c] - 1; line <= starts[c] + 1; line++) {
            char *bad = malloc(len);
            memcpy(bad, text, len);
            memcpy(bad + (line - 1) * 8, "0000000", 7); /* smaller than the line before */
            parsed p = parse_with(bad, len, 2, 1, 0, 0);
            cr_assert_eq(p.rc, GM_DISORDER);
            char want[64];
            snprintf(want, sizeof want, ":%lld: disorder: 0000000", (long long)line);
            cr_assert_str_eq(after_name(&p), want);
            parsed_free(&p);
            free(bad);
        }
    }
    free(starts);
    free(text);
}

/* ---------------------------------------------------------------- order */

Test(parser, order_checks)
{
    parsed p = parse_with("1\n2\n2\n3\n", sizeof "1\n2\n2\n3\n" - 1, 1, 1, 0, 0);
    cr_assert_eq(p.rc, GM_OK, "equal neighbours are in order");
    parsed_free(&p);
    p = parse_with("1\n2\n2\n3\n", sizeof "1\n2\n2\n3\n" - 1, 1, 1, 0, 1);
    cr_assert_eq(p.rc, GM_DISORDER, "strict: equal neighbours are a disorder");
    cr_assert_str_eq(after_name(&p), ":3: disorder: 2");
    parsed_free(&p);
    p = parse_with("3\n\n 2\n1\n", sizeof "3\n\n 2\n1\n" - 1, 1, 1, -1, 0);
    cr_assert_eq(p.rc, GM_OK, "descending");
    parsed_free(&p);
    p = parse_with("3\n\n 2\n4\n", sizeof "3\n\n 2\n4\n" - 1, 1, 1, -1, 0);
    cr_assert_eq(p.rc, GM_DISORDER);
    cr_assert_str_eq(after_name(&p), ":4: disorder: 4");
    parsed_free(&p);
    p = parse_with("-9223372036854775808\n9223372036854775807\n", sizeof "-9223372036854775808\n9223372036854775807\n" - 1, 1, 1, 0, 0);
    cr_assert_eq(p.rc, GM_OK, "extremes ascending");
    parsed_free(&p);
}

Test(parser, first_problem_in_file_order_wins)
{
    /* a disorder on line 2 comes before the bad line 4 */
    parsed p = parse_with("5\n4\n1\nx\n", sizeof "5\n4\n1\nx\n" - 1, 1, 1, 0, 0);
    cr_assert_eq(p.rc, GM_DISORDER);
    cr_assert_str_eq(after_name(&p), ":2: disorder: 4");
    parsed_free(&p);
    p = parse_with("x\n5\n4\n", sizeof "x\n5\n4\n" - 1, 1, 1, 0, 0);
    cr_assert_eq(p.rc, GM_EINPUT);
    cr_assert_str_eq(after_name(&p), ":1: not an integer: 'x'");
    parsed_free(&p);
}

/* ---------------------------------------------------------------- open */

Test(parser, cannot_read)
{
    gm_status st;
    gm_input in;
    cr_assert_eq(gm_input_open(&in, "/nonexistent/file", &st), GM_EIO);
    cr_assert_str_eq(st.msg, "cannot read: /nonexistent/file: No such file or directory");
    gm_input_close(&in);
    char *dir = scratch_dir();
    cr_assert_eq(gm_input_open(&in, dir, &st), GM_EIO);
    char want[512];
    snprintf(want, sizeof want, "read failed: %s: Is a directory", dir); /* sort's words */
    cr_assert_str_eq(st.msg, want);
    gm_input_close(&in);
    free(dir);
}

/* The SSE4.1 parser and its scalar twin (gm_input_test_scalar) agree on every line form,
 * line lengths 1 to 40, at the start, middle and end of the text. */
Test(parser, simd_and_scalar_agree)
{
    rng r;
    rng_seed(&r, 6);
    static const char alphabet[] = "0123456789-+ \t\rx";
    for (int round = 0; round < 300; round++) {
        char text[4096];
        size_t len = 0;
        int lines = (int)rng_range(&r, 1, 60);
        for (int l = 0; l < lines; l++) {
            int kind = (int)rng_range(&r, 0, 3), n = (int)rng_range(&r, 0, 40);
            for (int c = 0; c < n; c++)
                text[len++] = kind == 0 ? alphabet[rng_range(&r, 0, 15)]
                              : c == 0 && kind == 1 ? '-' : (char)('0' + rng_range(&r, 0, 9));
            if (l + 1 < lines || rng_range(&r, 0, 1))
                text[len++] = '\n';
        }
        gm_input_test_scalar(0);
        parsed a = parse_with(text, len, 1, 0, 0, 0);
        gm_input_test_scalar(1);
        parsed b = parse_with(text, len, 1, 0, 0, 0);
        gm_input_test_scalar(0);
        cr_assert_eq(a.rc, b.rc, "round %d: %s / %s", round, a.st.msg, b.st.msg);
        if (a.rc) {
            cr_assert_str_eq(after_name(&a), after_name(&b), "round %d", round);
        } else {
            cr_assert_eq(a.n, b.n);
            for (int64_t i = 0; i < a.n; i++)
                cr_assert_eq(a.keys[i], b.keys[i], "round %d key %lld", round, (long long)i);
        }
        parsed_free(&a);
        parsed_free(&b);
    }
}

/* ---------------------------------------------------------------- pread */

/* What the pieces' callback saw: each piece's bounds once, and on which thread. */
enum { MAX_PIECES = 64 };
struct seen {
    size_t lo[3][MAX_PIECES], hi[3][MAX_PIECES];
    int calls[3][MAX_PIECES];
    int foreign;          /* pieces done on a thread other than the caller's (atomic) */
    pthread_t caller;
};

static void note_piece(void *ctx, int span, int piece, size_t lo, size_t hi)
{
    struct seen *s = ctx;
    cr_assert(span >= 0 && span < 3 && piece >= 0 && piece < MAX_PIECES);
    s->lo[span][piece] = lo;
    s->hi[span][piece] = hi;
    __atomic_add_fetch(&s->calls[span][piece], 1, __ATOMIC_RELAXED);
    if (!pthread_equal(pthread_self(), s->caller))
        __atomic_store_n(&s->foreign, 1, __ATOMIC_RELAXED);
}

static char *random_bytes(rng *r, size_t n)
{
    char *p = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        p[i] = (char)rng_next(r);
    return p;
}

/* Three spans (one from a file offset into the middle of its buffer, one empty, one
 * whole) read in pieces on several threads: every byte in place, nothing before a
 * span's at touched, and the callback once per piece with its bounds. */
Test(parser, pread_reads_spans_in_pieces)
{
    rng r;
    rng_seed(&r, 11);
    char *dir = scratch_dir(), *fa = path_in(dir, "a"), *fb = path_in(dir, "b");
    size_t na = 1000003, nb = 300001, piece = 64 << 10, at = 200000;
    char *a = random_bytes(&r, na), *b = random_bytes(&r, nb);
    write_file(fa, a, na);
    write_file(fb, b, nb);
    int da = open(fa, O_RDONLY), db = open(fb, O_RDONLY);
    size_t len0 = at + (na - 4096); /* a's bytes from offset 4096, placed at buf0 + at */
    char *buf0 = malloc(len0), *buf2 = malloc(nb);
    memset(buf0, 'x', len0);
    gm_pread_span spans[3] = {
        { da, "a", buf0, at, len0, 4096 },
        { db, "b", buf2, 0, 0, 0 },
        { db, "b", buf2, 0, nb, 0 },
    };
    struct seen seen;
    memset(&seen, 0, sizeof seen);
    seen.caller = pthread_self();
    gm_status st;
    cr_assert_eq(gm_pread_parallel(spans, 3, piece, 4, note_piece, &seen, &st), GM_OK, "%s",
                 st.msg);
    for (size_t i = 0; i < at; i++)
        cr_assert_eq(buf0[i], 'x', "byte %zu before at is left alone", i);
    cr_assert_arr_eq(buf0 + at, a + 4096, na - 4096);
    cr_assert_arr_eq(buf2, b, nb);
    size_t ends[3] = { len0, 0, nb };
    for (int sp = 0; sp < 3; sp++) {
        int pieces = (int)((ends[sp] + piece - 1) / piece);
        cr_assert_lt(pieces, MAX_PIECES);
        for (int k = 0; k < MAX_PIECES; k++) {
            cr_assert_eq(seen.calls[sp][k], k < pieces, "span %d piece %d", sp, k);
            if (k < pieces) {
                cr_assert_eq(seen.lo[sp][k], (size_t)k * piece);
                cr_assert_eq(seen.hi[sp][k], k + 1 < pieces ? (size_t)(k + 1) * piece : ends[sp]);
            }
        }
    }
    close(da);
    close(db);
    free(a), free(b), free(buf0), free(buf2);
    unlink(fa), unlink(fb), rmdir(dir);
    free(dir), free(fa), free(fb);
}

/* The pieces run on no more threads than the caller gives (--parallel): one thread
 * is the caller's alone. */
Test(parser, pread_keeps_to_its_threads)
{
    rng r;
    rng_seed(&r, 12);
    char *dir = scratch_dir(), *f = path_in(dir, "f");
    size_t n = 4 << 20;
    char *want = random_bytes(&r, n), *buf = malloc(n);
    write_file(f, want, n);
    int fd = open(f, O_RDONLY);
    gm_pread_span span = { fd, "f", buf, 0, n, 0 };
    struct seen seen;
    memset(&seen, 0, sizeof seen);
    seen.caller = pthread_self();
    gm_status st;
    cr_assert_eq(gm_pread_parallel(&span, 1, n / 48, 1, note_piece, &seen, &st), GM_OK);
    cr_assert_eq(seen.foreign, 0, "one thread: every piece on the caller's");
    cr_assert_arr_eq(buf, want, n);
    close(fd);
    free(want), free(buf);
    unlink(f), rmdir(dir);
    free(dir), free(f);
}

/* A file shorter than its span, and a descriptor that cannot be read: the message
 * names the file, and the size rule names a file whose size is not the one read. */
Test(parser, pread_errors_name_the_file)
{
    char *dir = scratch_dir(), *f = path_in(dir, "f");
    write_text(f, "12\n34\n");
    int fd = open(f, O_RDONLY);
    char buf[64];
    gm_status st;
    gm_pread_span ok = { fd, "f", buf, 0, 6, 0 };
    gm_pread_span longer[2] = { ok, { fd, "'g h'", buf, 0, 20, 0 } };
    cr_assert_eq(gm_pread_parallel(longer, 2, 4, 2, NULL, NULL, &st), GM_EIO);
    cr_assert_str_eq(st.msg, "'g h': file changed while reading");
    gm_pread_span bad = { -1, "b", buf, 0, 6, 0 };
    cr_assert_eq(gm_pread_parallel(&bad, 1, 4, 2, NULL, NULL, &st), GM_EIO);
    cr_assert_str_eq(st.msg, "read failed: b: Bad file descriptor"); /* sort's words for a read */
    cr_assert_eq(gm_pread_check_size(fd, 6, "f", &st), GM_OK);
    cr_assert_eq(gm_pread_check_size(fd, 5, "f", &st), GM_EIO);
    cr_assert_str_eq(st.msg, "f: file changed while reading");
    close(fd);
    unlink(f), rmdir(dir);
    free(dir), free(f);
}
