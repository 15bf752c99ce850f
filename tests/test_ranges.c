/*
 * test_ranges.c - inputs that are ranges of their files (gm_config's ranges,
 * core/read/input.h's gm_input_range, core/read/lines.h's gm_lines_range): gpumerge-mpi
 * reads its slices of files and of other ranks' spools where they lie. Every
 * path of gm_run is run on ranges and checked against the same run on files
 * that hold just those bytes: the integer sort (in memory and through runs),
 * the integer merge, the records sort and merge, the integer path handing a
 * range over to the records path mid-way, check, and a message's FILE:LINE,
 * counted from the range's first line.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/gm.h"
#include "helpers.h"
#include "specs.h"

/* Two files, each with bytes before and after the range that would change any
 * result read with them; the range's bytes also written alone as the reference. */
struct ranged {
    char *dir, *whole[2], *alone[2];
    int64_t ranges[4];
};

static void ranged_make(struct ranged *r, const char *body0, const char *body1,
                        const char *noise)
{
    r->dir = scratch_dir();
    const char *body[2] = { body0, body1 };
    for (int i = 0; i < 2; i++) {
        char name[16];
        snprintf(name, sizeof name, "whole%d", i);
        r->whole[i] = path_in(r->dir, name);
        snprintf(name, sizeof name, "alone%d", i);
        r->alone[i] = path_in(r->dir, name);
        text t = { 0 };
        text_puts(&t, noise);
        r->ranges[2 * i] = (int64_t)t.n;
        text_puts(&t, body[i]);
        r->ranges[2 * i + 1] = (int64_t)t.n;
        text_puts(&t, noise);
        write_file(r->whole[i], t.buf, t.n);
        write_text(r->alone[i], body[i]);
        free(t.buf);
    }
}

static void ranged_free(struct ranged *r)
{
    char *cmd;
    if (asprintf(&cmd, "rm -rf '%s'", r->dir) < 0 || system(cmd) != 0)
        abort();
    free(cmd);
    for (int i = 0; i < 2; i++) {
        free(r->whole[i]);
        free(r->alone[i]);
    }
    free(r->dir);
}

/* op over the two ranges and over the two files alone: the same status, message
 * (with the names swapped) and output. */
static void same_as_alone(gm_op op, gm_config c, struct ranged *r)
{
    char *out = path_in(r->dir, "out");
    gm_status st_r = { 0 }, st_a = { 0 };
    c.output = op == GM_OP_CHECK ? NULL : out;
    c.ranges = r->ranges;
    int n = op == GM_OP_CHECK ? 1 : 2;
    int rc_r = gm_run(op, &c, r->whole, n, &st_r);
    char *got = op == GM_OP_CHECK ? NULL : read_file(out, NULL);
    c.ranges = NULL;
    int rc_a = gm_run(op, &c, r->alone, n, &st_a);
    char *want = op == GM_OP_CHECK ? NULL : read_file(out, NULL);
    cr_assert_eq(rc_r, rc_a, "ranges: %d (%s), alone: %d (%s)", rc_r, st_r.msg, rc_a,
                 st_a.msg);
    if (rc_a) {
        char *m = st_a.msg, swapped[sizeof st_a.msg];
        char *at = strstr(m, "alone");
        cr_assert_not_null(at, "%s", m);
        snprintf(swapped, sizeof swapped, "%.*swhole%s", (int)(at - m), m, at + 5);
        cr_assert_str_eq(st_r.msg, swapped);
    }
    if (op != GM_OP_CHECK && !rc_a)
        cr_assert_str_eq(got, want);
    free(got);
    free(want);
    unlink(out);
    free(out);
}

static gm_config base(void)
{
    gm_config c;
    memset(&c, 0, sizeof c);
    c.device = GM_DEVICE_CPU;
    c.threads = 2;
    return c;
}

/* n random integers a line, sorted when asked. */
static char *numbers(uint64_t seed, int n, int sorted)
{
    rng g;
    rng_seed(&g, seed);
    int64_t *v = malloc((size_t)n * sizeof *v);
    for (int i = 0; i < n; i++)
        v[i] = rng_range(&g, -100000, 100000);
    if (sorted)
        ref_sort_i64(v, n, 1);
    text t = { 0 };
    for (int i = 0; i < n; i++)
        text_putf(&t, "%lld\n", (long long)v[i]);
    free(v);
    return t.buf;
}

/* Two ranges of integers (30000 and 20000 lines, sorted when asked). */
static void ranged_numbers(struct ranged *r, uint64_t seed, int sorted, const char *noise)
{
    char *a = numbers(seed, 30000, sorted), *b = numbers(seed + 1, 20000, sorted);
    ranged_make(r, a, b, noise);
    free(a);
    free(b);
}

Test(ranges, integer_sort_in_memory_and_through_runs)
{
    struct ranged r;
    ranged_numbers(&r, 1, 0, "-999999999\n999999999\n");
    gm_config c = base();
    c.strict = 1;
    same_as_alone(GM_OP_SORT, c, &r);
    c.buffer_size = 64 << 10; /* runs */
    c.tmpdir = r.dir;
    same_as_alone(GM_OP_SORT, c, &r);
    c.unique = 1;
    c.reverse = 1;
    same_as_alone(GM_OP_SORT, c, &r);
    ranged_free(&r);
}

Test(ranges, integer_merge_and_check)
{
    struct ranged r;
    ranged_numbers(&r, 3, 1, "5\n-3\n");
    gm_config c = base();
    c.strict = 1;
    same_as_alone(GM_OP_MERGE, c, &r);
    c.buffer_size = 64 << 10;
    same_as_alone(GM_OP_MERGE, c, &r);
    same_as_alone(GM_OP_CHECK, c, &r);
    ranged_free(&r);
}

Test(ranges, records_sort_and_merge)
{
    const char *a = "b,3\na,10\nc,-2\nd,3\n", *b = "x,1.5\ny,\nz,0\n";
    struct ranged r;
    ranged_make(&r, a, b, "zz,-99\naa,99\n");
    gm_keyspec ks = spec_from("-t, -k2,2n", NULL);
    gm_config c = base();
    c.keyspec = &ks;
    same_as_alone(GM_OP_SORT, c, &r);
    c.buffer_size = 1 << 16;
    same_as_alone(GM_OP_SORT, c, &r);
    ranged_free(&r);
    const char *sa = "a,-2\nb,3\nc,3\n", *sb = "x,0\ny,1.5\nz,7\n";
    ranged_make(&r, sa, sb, "q,-5\n");
    same_as_alone(GM_OP_MERGE, c, &r);
    ranged_free(&r);
}

/* Whole lines by -n: the integer path reads canonical lines and hands the rest
 * of a range, from a line that is not one, to the records path. */
Test(ranges, handed_over_to_the_records_path)
{
    text a = { 0 };
    for (int i = 0; i < 5000; i++)
        text_putf(&a, "%d\n", (i * 7919) % 10007);
    text_puts(&a, "007\n1.5\n-0\n");
    for (int i = 0; i < 5000; i++)
        text_putf(&a, "%d\n", (i * 104729) % 9973);
    char *b = numbers(5, 3000, 0);
    struct ranged r;
    ranged_make(&r, a.buf, b, "-1e9\n0x\n");
    gm_keyspec ks = spec_from("n", NULL);
    gm_config c = base();
    c.keyspec = &ks;
    same_as_alone(GM_OP_SORT, c, &r);
    ranged_free(&r);
    free(a.buf);
    free(b);
    char *sa = numbers(6, 4000, 1), *sb = numbers(7, 4000, 1);
    text m = { 0 };
    text_puts(&m, sa);
    text_puts(&m, "100000.5\n100001\n");
    ranged_make(&r, m.buf, sb, "7\n");
    same_as_alone(GM_OP_MERGE, c, &r);
    ranged_free(&r);
    free(sa);
    free(sb);
    free(m.buf);
}

/* A disorder is reported at its line within the range. */
Test(ranges, a_message_counts_lines_from_the_range)
{
    struct ranged r;
    ranged_make(&r, "1\n2\n3\n", "4\n6\n5\n7\n", "9\n8\n");
    gm_config c = base();
    c.strict = 1;
    same_as_alone(GM_OP_MERGE, c, &r);
    same_as_alone(GM_OP_CHECK, c, &r);
    gm_keyspec ks = spec_from("-t, -k1,1n", NULL);
    c.strict = 0;
    c.keyspec = &ks;
    same_as_alone(GM_OP_MERGE, c, &r);
    ranged_free(&r);
}

/* The GPU's paths read ranges as the CPU's do: the integer text path and the
 * records path, against the same run on the files alone. */
Test(ranges, on_the_gpu)
{
    struct ranged r;
    ranged_numbers(&r, 8, 0, "-999999999\n999999999\n");
    gm_config c = base();
    c.strict = 1;
    c.device = GM_DEVICE_GPU;
    gm_status st = { 0 };
    char *out = path_in(r.dir, "out");
    c.output = out;
    if (gm_run(GM_OP_SORT, &c, r.alone, 1, &st) != GM_OK) {
        ranged_free(&r);
        cr_skip_test("GPU case skipped: %s", st.msg);
    }
    c.output = NULL;
    same_as_alone(GM_OP_SORT, c, &r);
    gm_keyspec ks = spec_from("-t, -k1,1n", NULL);
    c.strict = 0;
    c.keyspec = &ks;
    same_as_alone(GM_OP_SORT, c, &r);
    ranged_free(&r);
    free(out);
}
