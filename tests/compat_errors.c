/*
 * compat_errors.c - every refusal and usage error with its message, its status
 * and nothing on standard output: sort's options gpumerge refuses, named with
 * the reason, and usage errors worded as sort words them (compared with sort's
 * where sort has the option).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "compat_cases.h"
#include "helpers.h"

/* ---------------------------------------------------------------- errors */

typedef struct {
    const char *args;
    int status;
    const char *err;
    int like_sort; /* 1: sort gives the same message and status for the same args */
} error_case;

#define TRY "Try 'gpumerge --help' for more information.\n"

static void run_error_cases(const error_case *cases, size_t n)
{
    char *dir = scratch_dir();
    char *p;
    write_text(p = path_in(dir, "ok"), "1\n2\n3\n"), free(p);
    write_text(p = path_in(dir, "unsorted"), "1\n3\n2\n"), free(p);
    for (size_t i = 0; i < n; i++) {
        const error_case *c = &cases[i];
        cmd_result r = gm(dir, c->args);
        cr_expect_eq(r.status, c->status, "gpumerge %s: exit %d, want %d (%s)", c->args,
                     r.status, c->status, r.err);
        cr_expect_str_eq(r.err, c->err, "gpumerge %s", c->args);
        cr_expect_str_eq(r.out, "", "gpumerge %s wrote to standard output", c->args);
        if (c->like_sort) {
            cmd_result s = sort_sh(dir, c->args);
            char *theirs = as_ours(s.err);
            cr_expect_eq(s.status, c->status, "sort %s: exit %d", c->args, s.status);
            cr_expect_str_eq(theirs, c->err, "sort %s says otherwise", c->args);
            free(theirs);
            cmd_free(&s);
        }
        cmd_free(&r);
    }
    free(dir);
}

Test(compat, refused_options_are_named)
{
    static const error_case cases[] = {
        { "--debug ok", 2, "gpumerge: option '--debug' is not supported: it annotates sort's key fields; -v shows gpumerge's plan\n", 0 },
        { "--de ok", 2, "gpumerge: option '--debug' is not supported: it annotates sort's key fields; -v shows gpumerge's plan\n", 0 },
        /* the orders sort refuses together, in sort's words */
        { "-Mn ok", 2, "gpumerge: options '-Mn' are incompatible\n", 0 },
        { "-k1,1dV -k1,1inM ok", 2, "gpumerge: options '-iMn' are incompatible\n", 0 },
        { "-R --random-source=nonexistent ok", 2,
          "gpumerge: open failed: nonexistent: No such file or directory\n", 0 },
    };
    run_error_cases(cases, sizeof cases / sizeof cases[0]);
}

Test(compat, usage_errors_as_sort_words_them)
{
    struct rlimit rl;
    cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
    char big[256];
    snprintf(big, sizeof big,
             "gpumerge: --batch-size argument '99999999999' too large\n"
             "gpumerge: maximum --batch-size argument with current rlimit is %u\n",
             (unsigned)(rl.rlim_cur > 0xffffffffu ? 0xffffffffu : rl.rlim_cur) - 3);
    const error_case cases[] = {
        /* the same words and status as sort 9.1 */
        { "-c unsorted", 1, "gpumerge: unsorted:3: disorder: 2\n", 1 },
        { "-C unsorted", 1, "", 1 },
        { "--check=quiet unsorted", 1, "", 1 },
        { "-c ok unsorted", 2, "gpumerge: extra operand 'unsorted' not allowed with -c\n", 1 },
        { "-C ok unsorted", 2, "gpumerge: extra operand 'unsorted' not allowed with -C\n", 1 },
        { "--check=silent ok ok", 2, "gpumerge: extra operand 'ok' not allowed with -C\n", 1 },
        { "-c -o out ok", 2, "gpumerge: options '-co' are incompatible\n", 1 },
        { "-C -o out ok", 2, "gpumerge: options '-Co' are incompatible\n", 1 },
        { "-cC ok", 2, "gpumerge: options '-cC' are incompatible\n", 1 },
        { "--check=quiet -c ok", 2, "gpumerge: options '-cC' are incompatible\n", 1 },
        { "-o a -o b ok", 2, "gpumerge: multiple output files specified\n", 1 },
        { "-o a -o ./a ok", 2, "gpumerge: multiple output files specified\n", 1 },
        { "--compress-program=a --compress-program=b ok", 2, "gpumerge: multiple compress programs specified\n", 1 },
        { "--unique=1 ok", 2, "gpumerge: option '--unique' doesn't allow an argument\n" TRY, 1 },
        { "--reverse=yes ok", 2, "gpumerge: option '--reverse' doesn't allow an argument\n" TRY, 1 },
        { "ok --output", 2, "gpumerge: option '--output' requires an argument\n" TRY, 1 },
        { "ok -S", 2, "gpumerge: option requires an argument -- 'S'\n" TRY, 1 },
        { "ok -T", 2, "gpumerge: option requires an argument -- 'T'\n" TRY, 1 },
        { "-x ok", 2, "gpumerge: invalid option -- 'x'\n" TRY, 1 },
        { "--frob=1 ok", 2, "gpumerge: unrecognized option '--frob=1'\n" TRY, 1 },
        { "--c ok", 2, "gpumerge: option '--c' is ambiguous; possibilities: '--check' '--compress-program'\n" TRY, 1 },
        { "--r ok", 2, "gpumerge: option '--r' is ambiguous; possibilities: '--random-sort' '--random-source' '--reverse'\n" TRY, 1 },
        { "-S 5x ok", 2, "gpumerge: invalid suffix in -S argument '5x'\n", 1 },
        { "--buffer-size=5x ok", 2, "gpumerge: invalid suffix in --buffer-size argument '5x'\n", 1 },
        { "-S 1kb ok", 2, "gpumerge: invalid suffix in -S argument '1kb'\n", 1 },
        { "-S 1p ok", 2, "gpumerge: invalid suffix in -S argument '1p'\n", 1 },
        { "-S -1 ok", 2, "gpumerge: invalid -S argument '-1'\n", 1 },
        { "-S '' ok", 2, "gpumerge: invalid -S argument ''\n", 1 },
        { "-S 99999999999999999999 ok", 2, "gpumerge: -S argument '99999999999999999999' too large\n", 1 },
        { "-S 99999999999999999P ok", 2, "gpumerge: -S argument '99999999999999999P' too large\n", 1 },
        { "--parallel=0 ok", 2, "gpumerge: number in parallel must be nonzero\n", 1 },
        { "--parallel=a ok", 2, "gpumerge: invalid --parallel argument 'a'\n", 1 },
        { "--parallel=-1 ok", 2, "gpumerge: invalid --parallel argument '-1'\n", 1 },
        { "--parallel=5x ok", 2, "gpumerge: invalid suffix in --parallel argument '5x'\n", 1 },
        { "--batch-size=1 ok", 2, "gpumerge: invalid --batch-size argument '1'\n"
                                  "gpumerge: minimum --batch-size argument is '2'\n", 1 },
        { "--batch-size=0 ok", 2, "gpumerge: invalid --batch-size argument '0'\n"
                                  "gpumerge: minimum --batch-size argument is '2'\n", 1 },
        { "--batch-size=a ok", 2, "gpumerge: invalid --batch-size argument 'a'\n", 1 },
        { "--batch-size=5x ok", 2, "gpumerge: invalid suffix in --batch-size argument '5x'\n", 1 },
        { "--batch-size=99999999999 ok", 2, big, 1 },
        { "nothere", 2, "gpumerge: cannot read: nothere: No such file or directory\n", 1 },
        { ".", 2, "gpumerge: read failed: .: Is a directory\n", 1 },
        { "-m ok .", 2, "gpumerge: read failed: .: Is a directory\n", 1 },
        { "-c .", 2, "gpumerge: read failed: .: Is a directory\n", 1 },
        { "ok -o .", 2, "gpumerge: open failed: .: Is a directory\n", 1 },
        { "--files0-from=nothere", 2, "gpumerge: open failed: nothere: No such file or directory\n", 1 },
        /* sort exits 1 for a bad --check or --sort argument; gpumerge keeps 1 for disorder */
        { "--check=foo ok", 2, "gpumerge: invalid argument 'foo' for '--check'\n"
                               "Valid arguments are:\n  - 'quiet', 'silent'\n  - 'diagnose-first'\n" TRY, 0 },
        { "--check= ok", 2, "gpumerge: ambiguous argument '' for '--check'\n"
                            "Valid arguments are:\n  - 'quiet', 'silent'\n  - 'diagnose-first'\n" TRY, 0 },
        /* every order is listed, as sort lists them */
        { "--sort=foo ok", 2, "gpumerge: invalid argument 'foo' for '--sort'\nValid arguments are:\n"
                              "  - 'general-numeric'\n  - 'human-numeric'\n  - 'month'\n  - 'numeric'\n  - 'random'\n  - 'version'\n" TRY, 0 },
        { "--sort= ok", 2, "gpumerge: ambiguous argument '' for '--sort'\nValid arguments are:\n"
                           "  - 'general-numeric'\n  - 'human-numeric'\n  - 'month'\n  - 'numeric'\n  - 'random'\n  - 'version'\n" TRY, 0 },
        { "--gpu=a ok", 2, "gpumerge: invalid --gpu argument 'a'\n", 0 },
        { "--gpu=-1 ok", 2, "gpumerge: invalid --gpu argument '-1'\n", 0 },
        { "--gpu= ok", 2, "gpumerge: invalid --gpu argument ''\n", 0 },
        { "--gpu=1x ok", 2, "gpumerge: invalid suffix in --gpu argument '1x'\n", 0 },
        { "--gpu=2147483648 ok", 2, "gpumerge: --gpu argument '2147483648' too large\n", 0 },
        { "ok --gpu", 2, "gpumerge: option '--gpu' requires an argument\n" TRY, 0 },
        /* gpumerge's own */
        { "-c nothere", 2, "gpumerge: cannot read: nothere: No such file or directory\n", 0 },
        { "--ver ok", 2, "gpumerge: option '--ver' is ambiguous; possibilities: '--version-sort' '--version' '--verbose'\n" TRY, 0 },
        { "sort -m ok", 2, "gpumerge: option '-m' does not go with the 'sort' command\n" TRY, 0 },
        { "sort -c ok", 2, "gpumerge: option '-c' does not go with the 'sort' command\n" TRY, 0 },
        { "merge -C ok", 2, "gpumerge: option '-C' does not go with the 'merge' command\n" TRY, 0 },
        { "check -m ok", 2, "gpumerge: option '-m' does not go with the 'check' command\n" TRY, 0 },
        { "frob", 2, "gpumerge: cannot read: frob: No such file or directory\n", 0 },
        { "-- -r", 2, "gpumerge: cannot read: -r: No such file or directory\n", 0 },
        { "-- sort", 2, "gpumerge: cannot read: sort: No such file or directory\n", 0 },
        { "-m ok unsorted", 2, "gpumerge: unsorted:3: disorder: 2\n", 0 },
    };
    run_error_cases(cases, sizeof cases / sizeof cases[0]);
}
