/*
 * parser_chunks.c - core/input's parser on several threads: a large input of
 * random keys on 1 to 8 threads, the int32 keys gathered without the gaps blank
 * lines leave, the line numbers of a bad line and of a disorder at every boundary
 * between two threads' chunks, the order checks (-u's strictness, descending)
 * and the first problem in file order winning.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/read/input.h"
#include "helpers.h"
#include "parser_cases.h"

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
