/*
 * test_cli.c - the gpumerge command as users run it: what the suite's files share
 * (cli_cases.h: running gpumerge, checking its status and output, whether a GPU is
 * usable), the golden cases of testdata/cases, -o onto an input and a failed run
 * leaving -o as it was, /dev/full, --help, --version and -v.
 * The cases are in
 *   cli_gnusort.c   random cases compared byte for byte with GNU sort (LC_ALL=C
 *                   sort -n, sort -m -n, sort -n -u, sort -n -r, sort -c), -o
 *                   through the shared mapping, the text orders, a pipe into
 *                   head (SIGPIPE);
 *   cli_default.c   the default order's line about a line with no number, and
 *                   where nothing is said;
 *   cli_errors.c    every error with its message and exit status, and -z's
 *                   messages showing the input;
 *   cli_gpu.c       --device=gpu and --gpu=N with and without a GPU, CUDA left
 *                   unloaded without need, data too large for the GPU;
 *   cli_textpath.c  the GPU's text path against the CPU engine, a pipe read whole
 *                   and given back, boundaries inside chunks forced small.
 *
 * $GPUMERGE names the binary, $TESTDATA the golden cases; $GM_TEST_DEVICE=gpu runs
 * every case with --device=gpu (make test-gpu).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_cases.h"
#include "helpers.h"

/* ---------------------------------------------------------------- helpers */

/* Runs "gpumerge SUBCOMMAND [--device=gpu] REST" in dir. */
cmd_result gm(const char *dir, const char *subcommand, const char *rest)
{
    char *cmd;
    if (asprintf(&cmd, "'%s' %s %s %s", gpumerge_path(), subcommand, gpumerge_device_arg(),
                 rest) < 0)
        abort();
    cmd_result r = run_sh(dir, cmd);
    free(cmd);
    return r;
}

void assert_result(cmd_result *r, int status, const char *out, const char *err)
{
    cr_assert_eq(r->status, status, "exit status %d, want %d; stderr: %s", r->status, status,
                 r->err);
    if (out)
        cr_assert_str_eq(r->out, out);
    if (err)
        cr_assert_str_eq(r->err, err);
}

/* Whether the gpumerge under test can use a GPU here (asked of the program, as a
 * user would, rather than of CUDA inside this test's process). */
int gpu_usable(void)
{
    cmd_result r = run_sh(NULL, "echo 1 | \"$GPUMERGE\" sort --device=gpu");
    int usable = r.status == 0;
    cmd_free(&r);
    return usable;
}

/* ---------------------------------------------------------------- golden */

static char *trim_newline(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == '\n')
        s[--n] = '\0';
    return s;
}

Test(cli, golden_cases)
{
    const char *root = getenv("TESTDATA");
    char *cases = path_in(root && *root ? root : "testdata", "cases");
    DIR *d = opendir(cases);
    cr_assert_not_null(d, "cannot open %s", cases);
    struct dirent *e;
    int count = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "README") == 0)
            continue;
        char *dir = path_in(cases, e->d_name);
        char *cmdfile = path_in(dir, "cmd"), *outfile = path_in(dir, "expected");
        char *errfile = path_in(dir, "expected.err"), *statusfile = path_in(dir, "status");
        char *args = read_file(cmdfile, NULL), *want = read_file(outfile, NULL);
        char *want_err = read_file(errfile, NULL), *status = read_file(statusfile, NULL);
        cr_assert_not_null(args, "%s: no cmd", e->d_name);
        cr_assert_not_null(want, "%s: no expected", e->d_name);
        trim_newline(args);
        char *sub = strtok(args, " ");
        char *rest = strtok(NULL, "");
        cmd_result r = gm(dir, sub, rest ? rest : "");
        int want_status = status ? atoi(status) : 0;
        cr_expect_eq(r.status, want_status, "case %s: exit %d, want %d (stderr: %s)", e->d_name,
                     r.status, want_status, r.err);
        cr_expect_str_eq(r.out, want, "case %s: standard output differs", e->d_name);
        cr_expect_str_eq(r.err, want_err ? want_err : "", "case %s: standard error differs",
                         e->d_name);
        cmd_free(&r);
        free(args), free(want), free(want_err), free(status);
        free(cmdfile), free(outfile), free(errfile), free(statusfile), free(dir);
        count++;
    }
    closedir(d);
    cr_assert_geq(count, 10, "only %d golden cases found in %s", count, cases);
    free(cases);
}

/* ---------------------------------------------------------------- -o */

Test(cli, output_onto_an_input)
{
    char *dir = scratch_dir();
    char *a = path_in(dir, "a"), *b = path_in(dir, "b");
    write_text(a, "1\n4\n9\n");
    write_text(b, "2\n3\n10\n");
    cmd_result r = gm(dir, "merge", "a b -o a");
    assert_result(&r, 0, "", "");
    char *text = read_file(a, NULL);
    cr_assert_str_eq(text, "1\n2\n3\n4\n9\n10\n");
    free(text);
    cmd_free(&r);
    write_text(b, "3\n1\n2\n");
    r = gm(dir, "sort", "-o b b");
    assert_result(&r, 0, "", "");
    text = read_file(b, NULL);
    cr_assert_str_eq(text, "1\n2\n3\n");
    free(text);
    cmd_free(&r);
    free(a), free(b), free(dir);
}

Test(cli, failed_run_leaves_output_untouched)
{
    char *dir = scratch_dir();
    char *out = path_in(dir, "out"), *in = path_in(dir, "in");
    write_text(out, "precious\n");
    write_text(in, "1\n2\nx\n");
    cmd_result r = gm(dir, "sort", "--strict in -o out");
    assert_result(&r, 2, "", "gpumerge: in:3: not an integer: 'x'\n");
    char *text = read_file(out, NULL);
    cr_assert_str_eq(text, "precious\n");
    free(text);
    cmd_free(&r);
    /* a missing input: no output file appears */
    r = gm(dir, "sort", "nothere -o new");
    assert_result(&r, 2, "", "gpumerge: cannot read: nothere: No such file or directory\n");
    char *fresh = path_in(dir, "new");
    cr_assert_neq(access(fresh, F_OK), 0, "-o file created although the run failed");
    cmd_free(&r);
    /* and nothing but the two files is left in the directory */
    cmd_result ls = run_sh(dir, "ls -A | wc -l");
    cr_assert_str_eq(ls.out, "2\n");
    cmd_free(&ls);
    free(fresh), free(out), free(in), free(dir);
}

/* ---------------------------------------------------------------- full disk */

Test(cli, full_disk_is_an_error)
{
    if (access("/dev/full", W_OK) != 0)
        cr_skip_test("no /dev/full here");
    char *dir = scratch_dir();
    char *p = path_in(dir, "in");
    write_text(p, "3\n1\n2\n");
    cmd_result r = gm(dir, "sort", "in > /dev/full");
    assert_result(&r, 2, "",
                  "gpumerge: write failed: standard output: No space left on device\n");
    cmd_free(&r);
    r = gm(dir, "sort", "in -o /dev/full");
    assert_result(&r, 2, "", "gpumerge: write failed: /dev/full: No space left on device\n");
    cmd_free(&r);
    free(p), free(dir);
}

/* ---------------------------------------------------------------- options */

Test(cli, help_version_verbose)
{
    cmd_result r = run_sh(NULL, "\"$GPUMERGE\" --help");
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.out, "Usage: gpumerge merge") != NULL);
    cr_assert(strstr(r.out, "--kernel=K") != NULL);
    cmd_free(&r);
    r = run_sh(NULL, "\"$GPUMERGE\" sort --help");
    cr_assert_eq(r.status, 0);
    cmd_free(&r);
    r = run_sh(NULL, "\"$GPUMERGE\" --version");
    cr_assert_eq(r.status, 0);
    cr_assert(strncmp(r.out, "gpumerge ", 9) == 0);
    cmd_free(&r);

    char *dir = scratch_dir();
    char *p = path_in(dir, "in");
    write_text(p, "2\n1\n");
    r = gm(dir, "sort", "-v --threads=3 in");
    cr_assert_eq(r.status, 0);
    cr_assert_str_eq(r.out, "1\n2\n");
    /* the plan first, before the work; what ran after it (test_report.c: the rest) */
    const char *plan = strstr(r.err, "gpumerge: plan     sort of 1 input");
    const char *ran = strstr(r.err, "gpumerge: keys     2, int32");
    cr_assert(plan != NULL && ran != NULL && plan < ran, "%s", r.err);
    cr_assert(strstr(r.err, "gpumerge: threads  3\n") != NULL, "%s", r.err);
    const char *total = strstr(r.err, "gpumerge: total    ");
    cr_assert(total != NULL && strstr(total, " s  the stages ") != NULL, "%s", r.err);
    cr_assert(strstr(r.err, "gpumerge: start-up ") != NULL &&
                  strstr(r.err, " s  main's first line to the run\n") != NULL,
              "%s", r.err);
    cr_assert_eq(strchr(total, '\n'), r.err + strlen(r.err) - 1, "not the last line: %s", r.err);
    cmd_free(&r);
    /* every kernel name is accepted; on the CPU they change nothing */
    const char *kernels[] = { "auto", "basic", "tiled", "circular" };
    for (int i = 0; i < 4; i++) {
        char args[64];
        snprintf(args, sizeof args, "--kernel=%s in in", kernels[i]);
        r = gm(dir, "sort", args);
        assert_result(&r, 0, "1\n1\n2\n2\n", "");
        cmd_free(&r);
    }
    r = gm(dir, "sort", "--device=cpu --reverse --unique --output=out in");
    assert_result(&r, 0, "", "");
    cmd_free(&r);
    char *out = path_in(dir, "out");
    char *text = read_file(out, NULL);
    cr_assert_str_eq(text, "2\n1\n");
    free(text), free(out), free(p), free(dir);
}
