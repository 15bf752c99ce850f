/*
 * test_parser.c - core/input's parser: every accepted and rejected line form, a
 * NUL byte, int64 edges and the int32 narrowing, blank lines, CRLF and missing
 * final newlines, lines of 17 to 19 digits, an input that cannot be read, and
 * the SSE4.1 parser against its scalar twin. It also holds what the suite's
 * files share (parser_cases.h).
 *
 * The other files: parser_chunks.c (large inputs on several threads, the int32
 * gather, line numbers that stay right when the problem sits at a boundary
 * between two threads' chunks, order checks) and parser_pread.c (the parallel
 * pread, core/read/pread.h, under the reader: pieces, spans, the thread cap, its
 * messages and the size rule).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/read/input.h"
#include "helpers.h"
#include "parser_cases.h"

parsed parse_with(const char *text, size_t len, int nthreads, int ordered,
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

void parsed_free(parsed *p)
{
    unlink(p->path);
    free(p->path);
    free(p->keys);
}

/* The message after "FILE:" */
const char *after_name(const parsed *p)
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
