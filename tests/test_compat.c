/*
 * test_compat.c - gpumerge in sort's place: what the suite's files share
 * (compat_cases.h: gpumerge and LC_ALL=C sort run side by side, sort's messages as
 * gpumerge words them), the compatibility cases of testdata/compat (coreutils'
 * own sort tests that gpumerge can run: numeric orders, keys, fields, -z, check
 * and merge on their original inputs) checked against both their expected bytes
 * and LC_ALL=C sort, bench/e2e.sh leaving nothing in its scratch folder, and a
 * missing temporary directory worded as sort words it. The cases are in
 *   compat_parse.c    the command line parsed as GNU sort parses it
 *                     (gm_cli_parse called directly, to see what reaches
 *                     gm_config);
 *   compat_gnusort.c  random inputs through the sort-style invocation compared
 *                     byte for byte with sort (-n, -m, -c, -C, -u, -r, -z),
 *                     --files0-from;
 *   compat_errors.c   every refusal and usage error with its message and status
 *                     (compared with sort's where sort has the option);
 *   compat_order.c    option order around the subcommand, `gpumerge help`,
 *                     POSIXLY_CORRECT, check over several files.
 * tests/test_package.c has the build, --version and the installation.
 *
 * $GPUMERGE names the binary, $TESTDATA the golden cases (its parent is the
 * source tree).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compat_cases.h"
#include "helpers.h"

/* ---------------------------------------------------------------- helpers */

static const char *testdata(void)
{
    const char *t = getenv("TESTDATA");
    return t && *t ? t : "testdata";
}

/* The source tree: the parent of $TESTDATA. malloc'd. */
static char *source_root(void)
{
    char *root = realpath(testdata(), NULL);
    cr_assert_not_null(root, "cannot resolve %s", testdata());
    char *slash = strrchr(root, '/');
    *slash = '\0';
    return root;
}

/* Runs "gpumerge ARGS" in dir, standard input from /dev/null unless args
 * redirect it (a redirection in args comes later on the line and wins). */
cmd_result gm(const char *dir, const char *args)
{
    char *cmd;
    if (asprintf(&cmd, "'%s' </dev/null %s %s", gpumerge_path(), gpumerge_device_arg(),
                 args) < 0)
        abort();
    cmd_result r = run_sh(dir, cmd);
    free(cmd);
    return r;
}

cmd_result sort_sh(const char *dir, const char *args)
{
    char *cmd;
    if (asprintf(&cmd, "LC_ALL=C sort </dev/null %s", args) < 0)
        abort();
    cmd_result r = run_sh(dir, cmd);
    free(cmd);
    return r;
}

/* sort's standard error as gpumerge words it: "sort:" and "Try 'sort --help'"
 * renamed; n bytes in, NULs within kept, *out_len (when not NULL) bytes out.
 * malloc'd and NUL-terminated. */
static char *as_ours_n(const char *err, size_t n, size_t *out_len)
{
    char *out = malloc(2 * n + 1), *o = out;
    for (const char *p = err, *end = err + n; p < end;) {
        int line_start = p == err || p[-1] == '\n';
        if (line_start && end - p >= 6 && memcmp(p, "sort: ", 6) == 0) {
            o = stpcpy(o, "gpumerge: ");
            p += 6;
        } else if (end - p >= 17 && memcmp(p, "Try 'sort --help'", 17) == 0) {
            o = stpcpy(o, "Try 'gpumerge --help'");
            p += 17;
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    if (out_len)
        *out_len = (size_t)(o - out);
    return out;
}

char *as_ours(const char *err)
{
    return as_ours_n(err, strlen(err), NULL);
}

void assert_result(cmd_result *r, int status, const char *out, const char *err,
                   const char *what)
{
    cr_assert_eq(r->status, status, "%s: exit %d, want %d; stderr: %s", what, r->status,
                 status, r->err);
    if (out)
        cr_assert_str_eq(r->out, out, "%s: standard output", what);
    if (err)
        cr_assert_str_eq(r->err, err, "%s: standard error", what);
}

void same_as_sort(const char *dir, const char *args, const char *sort_args)
{
    same_as_sort_noting(dir, args, sort_args, "");
}

void same_as_sort_noting(const char *dir, const char *args, const char *sort_args,
                         const char *notice)
{
    cmd_result ours = gm(dir, args), theirs = sort_sh(dir, sort_args);
    char *theirs_err = as_ours(theirs.err), *want_err;
    if (asprintf(&want_err, "%s%s", notice, theirs_err) < 0)
        abort();
    free(theirs_err);
    cr_assert_eq(ours.status, theirs.status, "gpumerge %s: exit %d, sort %s: %d (%s | %s)",
                 args, ours.status, sort_args, theirs.status, ours.err, theirs.err);
    cr_assert_eq(ours.out_len, theirs.out_len, "gpumerge %s: %zu bytes, sort %s: %zu", args,
                 ours.out_len, sort_args, theirs.out_len);
    cr_assert(memcmp(ours.out, theirs.out, ours.out_len) == 0, "gpumerge %s differs from sort %s",
              args, sort_args);
    cr_assert_str_eq(ours.err, want_err, "gpumerge %s: standard error", args);
    free(want_err);
    cmd_free(&ours);
    cmd_free(&theirs);
}

/* ---------------------------------------------------------------- golden */

/* The file's bytes (NUL-terminated; *len counts them, NULs within included), or
 * NULL where it is absent. */
static char *read_or_null(const char *dir, const char *name, size_t *len)
{
    char *p = path_in(dir, name);
    char *text = read_file(p, len);
    free(p);
    return text;
}

/* Whether the installed sort is coreutils VERSION ("9.2") or later: a case whose
 * bytes follow a later change of sort (a "since" file) holds sort to them only
 * then. */
static int sort_at_least(const char *version)
{
    int want_major = 0, want_minor = 0, major = 0, minor = 0;
    sscanf(version, "%d.%d", &want_major, &want_minor);
    cmd_result r = run_sh(NULL, "LC_ALL=C sort --version | sed -n '1s/.* //p'");
    int ok = sscanf(r.out, "%d.%d", &major, &minor) == 2 &&
             (major > want_major || (major == want_major && minor >= want_minor));
    cmd_free(&r);
    return ok;
}

Test(compat, coreutils_cases, .timeout = 120)
{
    char *cases = path_in(testdata(), "compat");
    DIR *d = opendir(cases);
    cr_assert_not_null(d, "cannot open %s", cases);
    struct dirent *e;
    int count = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "README") == 0)
            continue;
        char *src = path_in(cases, e->d_name);
        size_t want_len = 0;
        char *args = read_or_null(src, "cmd", NULL), *want = read_or_null(src, "expected", &want_len);
        size_t want_err_len = 0;
        char *want_err = read_or_null(src, "expected.err", &want_err_len);
        char *status = read_or_null(src, "status", NULL), *differs = read_or_null(src, "differs", NULL);
        char *since = read_or_null(src, "since", NULL);
        int with_sort = !since || sort_at_least(since);
        cr_assert_not_null(args, "%s: no cmd", e->d_name);
        cr_assert_not_null(want, "%s: no expected", e->d_name);
        args[strcspn(args, "\n")] = '\0';
        int want_status = status ? atoi(status) : 0;
        const char *err = want_err ? want_err : "";
        size_t err_len = want_err ? want_err_len : 0;

        /* each program in its own fresh copy: some cases write files */
        for (int prog = 0; prog < 1 + with_sort; prog++) {
            char *scratch = scratch_dir(), *copy;
            if (asprintf(&copy, "cp -R '%s'/. '%s'/", src, scratch) < 0)
                abort();
            cmd_result c = run_sh(NULL, copy);
            cr_assert_eq(c.status, 0, "%s", c.err);
            cmd_free(&c);
            cmd_result r = prog == 0 ? gm(scratch, args) : sort_sh(scratch, args);
            const char *who = prog == 0 ? "gpumerge" : "sort";
            cr_expect_eq(r.status, want_status, "%s: %s exits %d, want %d (%s)", e->d_name, who,
                         r.status, want_status, r.err);
            /* -z cases write NULs: compare bytes, not strings */
            cr_expect_eq(r.out_len, want_len, "%s: %s wrote %zu bytes, want %zu", e->d_name,
                         who, r.out_len, want_len);
            cr_expect(r.out_len == want_len && memcmp(r.out, want, want_len) == 0,
                      "%s: %s: standard output:\n%.600s\nwant:\n%.600s", e->d_name, who, r.out, want);
            if (prog == 0 || !differs) {
                /* compared as bytes: a message may show a line's NULs */
                size_t got_len = r.err_len;
                char *theirs = prog == 0 ? memcpy(malloc(r.err_len + 1), r.err, r.err_len + 1)
                                         : as_ours_n(r.err, r.err_len, &got_len);
                cr_expect(got_len == err_len && memcmp(theirs, err, err_len) == 0,
                          "%s: %s: standard error (%zu bytes, want %zu):\n%s\nwant:\n%s",
                          e->d_name, who, got_len, err_len, theirs, err);
                free(theirs);
            }
            cmd_free(&r);
            char *rm;
            if (asprintf(&rm, "rm -rf '%s'", scratch) < 0)
                abort();
            cmd_result gone = run_sh(NULL, rm);
            cmd_free(&gone);
            free(rm), free(copy), free(scratch);
        }
        free(args), free(want), free(want_err), free(status), free(differs), free(since);
        free(src);
        count++;
    }
    closedir(d);
    cr_assert_geq(count, 200, "only %d compatibility cases in %s", count, cases);
    free(cases);
}

/* ---------------------------------------------------------------- first hour */

Test(compat, e2e_bench_cleans_its_scratch_folder, .timeout = 300)
{
    char *root = source_root(), *base = scratch_dir(), *cmd;
    /* a normal run leaves nothing in DIR's parent */
    if (asprintf(&cmd, "cd '%s' && SCRATCH_ROOT='%s' REPEAT=1 bash bench/e2e.sh 2000 && "
                       "ls -A '%s' | wc -l",
                 root, base, base) < 0)
        abort();
    cmd_result r = run_sh(NULL, cmd);
    cr_assert_eq(r.status, 0, "e2e.sh: %s", r.err);
    const char *last = r.out + r.out_len;
    while (last > r.out && last[-1] == '\n')
        last--;
    while (last > r.out && last[-1] != '\n')
        last--;
    cr_expect_str_eq(last, "0\n", "e2e.sh left files: %s", r.out);
    cmd_free(&r);
    free(cmd);
    /* nor does a run stopped by SIGTERM once its scratch folder exists */
    if (asprintf(&cmd, "cd '%s' && { SCRATCH_ROOT='%s' REPEAT=50 bash bench/e2e.sh 300000 "
                       ">/dev/null 2>&1 & pid=$!; "
                       "seen=0; for i in $(seq 600); do "
                       "[ -n \"$(ls -A '%s')\" ] && seen=1 && break; sleep 0.1; done; "
                       "sleep 0.5; kill -TERM $pid; wait $pid; "
                       "echo \"seen=$seen status=$? left=$(ls -A '%s' | wc -l)\"; }",
                 root, base, base, base) < 0)
        abort();
    r = run_sh(NULL, cmd);
    cr_expect_str_eq(r.out, "seen=1 status=143 left=0\n",
                     "e2e.sh stopped by SIGTERM (its folder seen, its status, what it left)");
    cmd_free(&r);
    free(cmd);
    rmdir(base);
    free(root), free(base);
}

/* A temporary folder that cannot take a run: sort's words, its folder quoted as
 * sort quotes it, once the input outgrows -S. */
Test(compat, missing_temporary_directory_as_sort_words_it, .timeout = 120)
{
    char *dir = scratch_dir();
    cmd_result r = run_sh(dir, "seq 300000 | shuf --random-source=/dev/zero > big");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cmd_free(&r);
    same_as_sort(dir, "-T nothere -S 1M big", "-T nothere -S 1M big");
    same_as_sort(dir, "-T 'no where' -S 1M big", "-T 'no where' -S 1M big");
    r = gm(dir, "-T nothere -S 1M big");
    cr_assert_str_eq(r.err, "gpumerge: cannot create temporary file in 'nothere': No such file "
                            "or directory\n");
    cmd_free(&r);
    free(dir);
}
