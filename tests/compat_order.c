/*
 * compat_order.c - where options and operands may go: options before or after
 * the subcommand, a file named like a subcommand, `gpumerge help`,
 * POSIXLY_CORRECT ending options at the first file, and check reporting each
 * file of several.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdlib.h>

#include "../cli/options.h"
#include "compat_cases.h"
#include "helpers.h"

/* ---------------------------------------------------------------- order */

Test(compat, options_before_or_after_the_subcommand)
{
    char *dir = scratch_dir();
    char *p = path_in(dir, "in");
    write_text(p, "3\n1\n2\n3\n");
    static const char *const same[] = {
        "-r -u sort in", "sort -r -u in", "sort in -r -u", "-r sort in -u", "-ru in",
        "in -r -u", "--reverse in --unique", "-u -- in -r", /* the last: -r is a file */
    };
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        cmd_result r = gm(dir, same[i]);
        if (i == 7)
            assert_result(&r, 2, "", "gpumerge: cannot read: -r: No such file or directory\n",
                          same[i]);
        else
            assert_result(&r, 0, "3\n2\n1\n", "", same[i]);
        cmd_free(&r);
    }
    /* a file named like a subcommand: ./sort or after -- */
    char *q = path_in(dir, "sort");
    write_text(q, "9\n8\n");
    cmd_result r = gm(dir, "./sort");
    assert_result(&r, 0, "8\n9\n", "", "./sort");
    cmd_free(&r);
    r = gm(dir, "-- sort in");
    assert_result(&r, 0, "1\n2\n3\n3\n8\n9\n", "", "-- sort in");
    cmd_free(&r);
    r = gm(dir, "sort sort");
    assert_result(&r, 0, "8\n9\n", "", "sort sort");
    cmd_free(&r);
    /* -o's argument is not the subcommand */
    r = gm(dir, "-o merge sort in && cat merge");
    assert_result(&r, 0, "1\n2\n3\n3\n", "", "-o merge sort in");
    cmd_free(&r);
    /* no operand at all: standard input, as sort */
    r = gm(dir, "-r < in");
    assert_result(&r, 0, "3\n3\n2\n1\n", "", "-r < in");
    cmd_free(&r);
    free(q), free(p), free(dir);
}

/* `gpumerge help` is --help; a file named help is ./help, or follows a subcommand
 * or "--". */
Test(compat, help_subcommand)
{
    char *dir = scratch_dir();
    cmd_result want = gm(dir, "--help");
    cr_assert_eq(want.status, 0);
    static const char *const helps[] = { "help", "-r help", "help -r", "help nothere",
                                         "help --frobnicate" };
    for (size_t i = 0; i < sizeof helps / sizeof helps[0]; i++) {
        cmd_result r = gm(dir, helps[i]);
        assert_result(&r, 0, want.out, "", helps[i]);
        cmd_free(&r);
    }
    cmd_free(&want);
    char *p = path_in(dir, "help");
    write_text(p, "2\n1\n");
    static const char *const files[] = { "./help", "sort help", "-- help", "merge -r help help" };
    static const char *const outs[] = { "1\n2\n", "1\n2\n", "1\n2\n", "2\n2\n1\n1\n" };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        cmd_result r = gm(dir, files[i]);
        assert_result(&r, 0, outs[i], "", files[i]);
        cmd_free(&r);
    }
    /* an error before "help" is still the error */
    cmd_result r = gm(dir, "-S 0x help");
    cr_assert_eq(r.status, 2, "-S 0x help: %s", r.err);
    cmd_free(&r);
    free(p), free(dir);
}

/* With POSIXLY_CORRECT options end at the first file operand, as sort's do:
 * what follows is read as files, but for sort's "-o FILE" and "-oFILE" where
 * it does not check, wherever they come (not after _POSIX2_VERSION=200112). A
 * subcommand is not a file operand. */
Test(compat, posixly_correct_ends_options_at_the_first_file)
{
    char *dir = scratch_dir();
    char *p = path_in(dir, "a");
    write_text(p, "3\n1\n2\n");
    static const char *const cmds[] = {
        "-n a -r", "-n a -u -r", "a -", "-- a -r", "-r a -o out -u", "-r a -oout -u",
        "-c a -o out", "-C a -r", "-m a -o", "a -k2", "-n a -S 1M",
    };
    cr_assert_eq(setenv("POSIXLY_CORRECT", "1", 1), 0);
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        same_as_sort(dir, cmds[i], cmds[i]);
    cmd_result r = gm(dir, "-n a -o out && cat out");
    assert_result(&r, 0, "1\n2\n3\n", "", "-n a -o out, then out");
    cmd_free(&r);
    same_as_sort(dir, "-n a a -o out && cat out", "-n a a -o out && cat out");
    same_as_sort(dir, "-n a -r a -oout", "-n a -r a -oout");
    cr_assert_eq(setenv("_POSIX2_VERSION", "200112", 1), 0);
    same_as_sort(dir, "-n a -o out", "-n a -o out");
    cr_assert_eq(unsetenv("_POSIX2_VERSION"), 0);
    r = gm(dir, "sort -r a");
    assert_result(&r, 0, "3\n2\n1\n", "", "options after a subcommand");
    cmd_free(&r);
    gm_cli cli;
    gm_status st;
    cr_assert_eq(parse("-n a -r -u -oout", &cli, &st), GM_OK, "%s", st.msg);
    cr_expect_eq(cli.nfiles, 3, "-n a -r -u -oout: %d files", cli.nfiles);
    cr_expect_eq(cli.config.reverse, 0);
    cr_expect_str_eq(cli.config.output, "out");
    gm_cli_free(&cli);
    cr_assert_eq(parse("check -u a -o b", &cli, &st), GM_OK, "%s", st.msg);
    cr_expect_eq(cli.nfiles, 3, "check's -o after a file is a file");
    gm_cli_free(&cli);
    /* without it, GNU's order: options anywhere */
    cr_assert_eq(unsetenv("POSIXLY_CORRECT"), 0);
    same_as_sort(dir, "-n a -r", "-n a -r");
    cr_assert_eq(parse("-n a -r", &cli, &st), GM_OK, "%s", st.msg);
    cr_expect_eq(cli.nfiles, 1);
    cr_expect_eq(cli.config.reverse, 1);
    gm_cli_free(&cli);
    free(p), free(dir);
}

Test(compat, check_reports_each_file)
{
    char *dir = scratch_dir();
    char *p;
    write_text(p = path_in(dir, "ok"), "1\n2\n"), free(p);
    write_text(p = path_in(dir, "b1"), "1\n3\n2\n0\n"), free(p);
    write_text(p = path_in(dir, "b2"), "5\n4\n"), free(p);
    write_text(p = path_in(dir, "bad"), "1\nx\n"), free(p);
    cmd_result r = gm(dir, "check ok b1 ok b2");
    assert_result(&r, 1, "", "gpumerge: b1:3: disorder: 2\ngpumerge: b2:2: disorder: 4\n",
                  "check ok b1 ok b2");
    cmd_free(&r);
    r = gm(dir, "check -C ok b1 b2");
    assert_result(&r, 1, "", "", "check -C");
    cmd_free(&r);
    r = gm(dir, "check --check=quiet b1 b2");
    assert_result(&r, 1, "", "", "check --check=quiet");
    cmd_free(&r);
    r = gm(dir, "check -c ok ok");
    assert_result(&r, 0, "", "", "check -c ok ok");
    cmd_free(&r);
    r = gm(dir, "check --strict b1 bad b2");
    assert_result(&r, 2, "", "gpumerge: b1:3: disorder: 2\ngpumerge: bad:2: not an integer: 'x'\n",
                  "an error stops check");
    cmd_free(&r);
    r = gm(dir, "check b1 nothere");
    assert_result(&r, 2, "",
                  "gpumerge: b1:3: disorder: 2\ngpumerge: cannot read: nothere: No such file or directory\n",
                  "a missing file stops check");
    cmd_free(&r);
    r = gm(dir, "check - b2 < b1");
    assert_result(&r, 1, "", "gpumerge: -:3: disorder: 2\ngpumerge: b2:2: disorder: 4\n",
                  "check - b2");
    cmd_free(&r);
    free(dir);
}
