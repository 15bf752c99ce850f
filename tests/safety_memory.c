/*
 * safety_memory.c - gpumerge under a limit on its address space (ulimit -v): any
 * --parallel runs sort, merge and check into a file, a pipe and -o, and a line
 * longer than the memory budget is an error naming its file and line, found
 * after about a budget's worth of reading, with nothing written to -o.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "helpers.h"
#include "safety_cases.h"

/* Runs "gpumerge ARGS" in dir under a limit on the address space (ulimit -v, in
 * KiB), its output through a pipe into cat when piped; returns how it ended,
 * with gpumerge's own exit status (not cat's). */
static cmd_result gm_limited(const char *dir, long kib, int piped, const char *args)
{
    char *cmd = piped ? fmt("{ (ulimit -v %ld; exec '%s' %s); echo $? >status; } | cat", kib,
                            gpumerge_path(), args)
                      : fmt("ulimit -v %ld; exec '%s' %s", kib, gpumerge_path(), args);
    cmd_result r = run_sh(dir, cmd);
    free(cmd);
    if (piped) {
        char *status = slurp(dir, "status");
        cr_assert(status != NULL, "no status from: %s", args);
        r.status = atoi(status);
        free(status);
    }
    return r;
}

/* Skips the test when the binary under test cannot start under ulimit -v kib at
 * all: a build with AddressSanitizer reserves terabytes of shadow memory. */
static void need_address_limit(long kib)
{
    /* a sanitizer's own failure goes to the probe's standard error, not to the
     * reports that sanitize-host counts */
    char *cmd = fmt("ulimit -v %ld; ASAN_OPTIONS=log_path=stderr UBSAN_OPTIONS=log_path=stderr "
                    "exec '%s' --version", kib, gpumerge_path());
    cmd_result r = run_sh(NULL, cmd);
    free(cmd);
    int ok = r.status == 0;
    cmd_free(&r);
    if (!ok)
        cr_skip_test("the binary under test cannot start under ulimit -v %ld (a sanitizer "
                     "build)", kib);
}

/* Every thread's stack and the writer's buffers count against the budget, which
 * under ulimit -v is half the limit: any --parallel the command line accepts runs,
 * for sort, merge and check, into a file, a pipe and -o. */
Test(safety, any_parallel_under_a_small_address_space, .timeout = 600)
{
    need_address_limit(30000);
    static const int parallel[] = { 1, 16, 32, 64, 4096 };
    static const int64_t sizes[] = { 200, 300000 };
    char *dir = scratch_dir();
    rng g;
    rng_seed(&g, 57);
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        int64_t n = sizes[z], half = n / 2;
        int64_t *k = malloc((size_t)n * sizeof *k);
        for (int64_t i = 0; i < n; i++)
            k[i] = rng_range(&g, -1000000000, 1000000000);
        char *p;
        write_keys(p = path_in(dir, "in"), k, n), free(p);
        ref_sort_i64(k, half, 1);
        ref_sort_i64(k + half, n - half, 1);
        write_keys(p = path_in(dir, "a"), k, half), free(p);
        write_keys(p = path_in(dir, "b"), k + half, n - half), free(p);
        ref_sort_i64(k, n, 1);
        write_keys(p = path_in(dir, "want"), k, n), free(p);
        char *want = slurp(dir, "want");
        for (size_t i = 0; i < sizeof parallel / sizeof parallel[0]; i++) {
            for (int how = 0; how < 3; how++) { /* a file, a pipe, -o */
                const char *ops[] = { "sort in", "merge a b", "check want" };
                for (int op = 0; op < 3; op++) {
                    if (op == 2 && how == 2)
                        continue; /* check writes nothing */
                    char *args = fmt("%s --parallel=%d%s", ops[op], parallel[i],
                                     how == 2 ? " -o out" : "");
                    cmd_result r = gm_limited(dir, 100000, how == 1, args);
                    cr_expect_eq(r.status, 0, "%zd lines, %s (%s): exit %d: %s", (ssize_t)n,
                                 args, how == 1 ? "pipe" : "file", r.status, r.err);
                    cr_expect_str_eq(r.err, "", "%s", args);
                    char *out = how == 2 ? slurp(dir, "out") : strdup(r.out);
                    cr_expect_str_eq(out, op == 2 ? "" : want, "%zd lines, %s: wrong output",
                                     (ssize_t)n, args);
                    free(out);
                    cmd_free(&r);
                    free(args);
                }
            }
        }
        free(want);
        free(k);
    }
    remove_tree(dir);
}

/* The records path keeps the same promise: its chunks, their records and the
 * sort's scratch, the writer's buffers and a group of equal keys too large for a
 * scratch of its own stay within half of ulimit -v, the default budget. */
Test(safety, records_under_a_small_address_space, .timeout = 600)
{
    need_address_limit(30000);
    char *dir = scratch_dir();
    rng g;
    rng_seed(&g, 58);
    text t = { 0 };
    for (int i = 0; i < 1000000; i++) /* equal keys, then keys of a few values */
        text_putf(&t, i < 500000 ? "a,123\n" : "%c,%d\n", (char)('a' + i % 3),
                  (int)rng_range(&g, 0, 999));
    char *p;
    write_file(p = path_in(dir, "in"), t.buf, t.n), free(p);
    static const char *const args[] = { "-t, -k2,2n", "-t, -k2,2n -s", "-t, -k1,1 -k2,2n -u",
                                        "-t, -k2,2g -r", "-t, -k2,2n --parallel=8" };
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        char *sort = fmt("LC_ALL=C sort %s in > want", args[i]);
        cmd_result w = run_sh(dir, sort);
        cr_assert_eq(w.status, 0, "%s", sort);
        char *want = slurp(dir, "want");
        char *a = fmt("sort %s in -o out", args[i]);
        cmd_result r = gm_limited(dir, 30000, 0, a);
        cr_expect_eq(r.status, 0, "%s: exit %d: %s", a, r.status, r.err);
        char *out = slurp(dir, "out");
        cr_expect(out && strcmp(out, want) == 0, "%s under ulimit -v 30000: wrong output", a);
        free(out);
        free(want);
        cmd_free(&r);
        cmd_free(&w);
        free(a);
        free(sort);
    }
    free(t.buf);
    remove_tree(dir);
}

/* A line longer than the memory budget (-S, or half of ulimit -v) is an error
 * naming the file and the line, found after about a budget's worth of reading,
 * from a file, a device or a pipe, with nothing written to -o. */
Test(safety, a_line_longer_than_the_budget, .timeout = 300)
{
    need_address_limit(200000);
    static const struct {
        const char *source;  /* what feeds standard input */
        const char *args;
        const char *err;
    } cases[] = {
        { "", "merge -S 10M /dev/zero",
          "gpumerge: /dev/zero:1: line longer than the memory budget (-S)\n" },
        { "", "sort -S 10M /dev/zero -o out",
          "gpumerge: /dev/zero:1: line longer than the memory budget (-S)\n" },
        { "", "check -S 10M /dev/zero",
          "gpumerge: /dev/zero:1: line longer than the memory budget (-S)\n" },
        { "", "merge /dev/zero -o out",
          "gpumerge: /dev/zero:1: line longer than the memory budget (-S)\n" },
        { "", "sort /dev/zero",
          "gpumerge: /dev/zero:1: line longer than the memory budget (-S)\n" },
        { "cat /dev/zero |", "merge -S 10M - -o out",
          "gpumerge: -:1: line longer than the memory budget (-S)\n" },
        { "cat /dev/zero |", "sort -S 10M",
          "gpumerge: -:1: line longer than the memory budget (-S)\n" },
        { "cat /dev/zero |", "check -S 10M",
          "gpumerge: -:1: line longer than the memory budget (-S)\n" },
        { "", "sort -S 1M long -o out",
          "gpumerge: long:4: line longer than the memory budget (-S)\n" },
        { "", "merge -S 1M short long -o out",
          "gpumerge: long:4: line longer than the memory budget (-S)\n" },
        { "", "check -S 1M long",
          "gpumerge: long:4: line longer than the memory budget (-S)\n" },
        { "cat long |", "merge -S 1M --parallel=1 -",
          "gpumerge: -:4: line longer than the memory budget (-S)\n" },
        { "cat long |", "sort -S 1M -o out",
          "gpumerge: -:4: line longer than the memory budget (-S)\n" },
        /* the records path (keys in fields, -g, -h): the same limit, the same words */
        { "", "sort -t, -k1,1n -S 10M /dev/zero",
          "gpumerge: /dev/zero:1: line longer than the memory budget (-S)\n" },
        { "", "sort -g -S 10M /dev/zero -o out",
          "gpumerge: /dev/zero:1: line longer than the memory budget (-S)\n" },
        { "", "sort -t, -k2,2h /dev/zero",
          "gpumerge: /dev/zero:1: line longer than the memory budget (-S)\n" },
        { "", "merge -t, -k1,1n -S 10M /dev/zero",
          "gpumerge: /dev/zero:1: line longer than the memory budget (-S)\n" },
        { "", "check -g -S 10M /dev/zero",
          "gpumerge: /dev/zero:1: line longer than the memory budget (-S)\n" },
        { "cat /dev/zero |", "sort -t, -k2,2n -S 10M -o out",
          "gpumerge: -:1: line longer than the memory budget (-S)\n" },
        { "", "sort -t, -k2,2n -S 1M long -o out",
          "gpumerge: long:4: line longer than the memory budget (-S)\n" },
        { "", "merge -t, -k1,1n -S 1M short long -o out",
          "gpumerge: long:4: line longer than the memory budget (-S)\n" },
        { "cat long |", "sort -g -S 1M -o out",
          "gpumerge: -:4: line longer than the memory budget (-S)\n" },
        { "", "sort -S 1M blanks", "" },  /* a long line within the budget */
        { "", "check -S 1M blanks", "" },
    };
    char *dir = scratch_dir();
    /* three lines, then one of 3 MB (no digit but 7s), then one more */
    size_t len = 6 + (3 << 20) + 3;
    char *text = malloc(len);
    memcpy(text, "1\n2\n3\n", 6);
    memset(text + 6, '7', 3 << 20);
    memcpy(text + len - 3, "\n5\n", 3);
    char *p;
    write_file(p = path_in(dir, "long"), text, len), free(p);
    /* a line of 600 kB of blanks before its digit */
    memcpy(text, "1\n", 2);
    memset(text + 2, ' ', 600000);
    memcpy(text + 600002, "5\n", 2);
    write_file(p = path_in(dir, "blanks"), text, 600004), free(p);
    free(text);
    put(dir, "short", "1\n2\n");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        put(dir, "out", "precious\n");
        /* timeout: the error comes after a budget's reading, not an endless one */
        char *cmd = fmt("%s (ulimit -v 200000; exec timeout 20 '%s' %s)", cases[i].source,
                        gpumerge_path(), cases[i].args);
        cmd_result r = run_sh(dir, cmd);
        int ok = cases[i].err[0] == '\0';
        cr_expect_eq(r.status, ok ? 0 : 2, "%s: exit %d: %s", cmd, r.status, r.err);
        cr_expect_str_eq(r.err, cases[i].err, "%s", cmd);
        if (!ok && strncmp(cases[i].args, "merge", 5) != 0) /* merge streams its lines */
            cr_expect_str_eq(r.out, "", "%s wrote to standard output", cmd);
        char *kept = slurp(dir, "out");
        cr_expect_str_eq(kept, "precious\n", "%s: the -o file changed", cmd);
        free(kept);
        cmd_free(&r);
        free(cmd);
    }
    remove_tree(dir);
}
