/*
 * test_compat.c - gpumerge in sort's place: the command line parsed as GNU sort
 * parses it (gm_cli_parse called directly, to see what reaches gm_config), the
 * compatibility cases of testdata/compat (coreutils' own sort tests that gpumerge
 * can run: numeric orders, keys, fields, -z, check and merge on their original
 * inputs) checked against both their expected bytes and LC_ALL=C sort, random
 * inputs through the sort-style invocation compared byte for byte with sort
 * (-n, -m, -c, -C, -u, -r), every refusal and usage error with its message and
 * status (compared with sort's where sort has the option), --files0-from, option
 * order around the subcommand, `gpumerge help`, POSIXLY_CORRECT, check over
 * several files, and bench/e2e.sh leaving nothing in its scratch folder
 * (tests/test_package.c has the build, --version and the installation).
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cli/options.h"
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
static cmd_result gm(const char *dir, const char *args)
{
    char *cmd;
    if (asprintf(&cmd, "'%s' </dev/null %s %s", gpumerge_path(), gpumerge_device_arg(),
                 args) < 0)
        abort();
    cmd_result r = run_sh(dir, cmd);
    free(cmd);
    return r;
}

static cmd_result sort_sh(const char *dir, const char *args)
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

static char *as_ours(const char *err)
{
    return as_ours_n(err, strlen(err), NULL);
}

static void assert_result(cmd_result *r, int status, const char *out, const char *err,
                          const char *what)
{
    cr_assert_eq(r->status, status, "%s: exit %d, want %d; stderr: %s", what, r->status,
                 status, r->err);
    if (out)
        cr_assert_str_eq(r->out, out, "%s: standard output", what);
    if (err)
        cr_assert_str_eq(r->err, err, "%s: standard error", what);
}

/* gpumerge ARGS and sort SORT_ARGS in dir: the same status, output and (after
 * renaming) error output. */
static void same_as_sort(const char *dir, const char *args, const char *sort_args)
{
    cmd_result ours = gm(dir, args), theirs = sort_sh(dir, sort_args);
    char *want_err = as_ours(theirs.err);
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

/* ---------------------------------------------------------------- parsing */

/* Parses a command line given as one string of words without quotes. */
static int parse(const char *line, gm_cli *cli, gm_status *st)
{
    static char buf[1024];
    static char *argv[64];
    snprintf(buf, sizeof buf, "%s", line);
    int argc = 0;
    argv[argc++] = "gpumerge";
    for (char *w = strtok(buf, " "); w && argc < 63; w = strtok(NULL, " "))
        argv[argc++] = w;
    argv[argc] = NULL;
    st->code = GM_OK;
    st->msg[0] = '\0';
    return gm_cli_parse(argc, argv, cli, st);
}

Test(compat, parse_modes_and_operands)
{
    static const struct {
        const char *line;
        gm_op op;
        int have_op, nfiles, quiet;
        const char *first;
    } cases[] = {
        { "", GM_OP_SORT, 0, 0, 0, NULL },
        { "-n f", GM_OP_SORT, 0, 1, 0, "f" },
        { "-m a b", GM_OP_MERGE, 0, 2, 0, "a" },
        { "-c f", GM_OP_CHECK, 0, 1, 0, "f" },
        { "-C f", GM_OP_CHECK, 0, 1, 1, "f" },
        { "--check=quiet f", GM_OP_CHECK, 0, 1, 1, "f" },
        { "--check=silent f", GM_OP_CHECK, 0, 1, 1, "f" },
        { "--check=s f", GM_OP_CHECK, 0, 1, 1, "f" },
        { "--check=diagnose-first f", GM_OP_CHECK, 0, 1, 0, "f" },
        { "--check f", GM_OP_CHECK, 0, 1, 0, "f" },
        { "-c -m f", GM_OP_CHECK, 0, 1, 0, "f" }, /* sort -c -m checks */
        { "-c -c f", GM_OP_CHECK, 0, 1, 0, "f" },
        { "merge a b", GM_OP_MERGE, 1, 2, 0, "a" },
        { "-r sort x", GM_OP_SORT, 1, 1, 0, "x" },
        { "sort x -r", GM_OP_SORT, 1, 1, 0, "x" },
        { "x sort", GM_OP_SORT, 0, 2, 0, "x" },   /* only the first operand */
        { "-- sort x", GM_OP_SORT, 0, 2, 0, "sort" }, /* after --: a file */
        { "./sort", GM_OP_SORT, 0, 1, 0, "./sort" },
        { "-o merge sort x", GM_OP_SORT, 1, 1, 0, "x" }, /* -o's argument */
        { "check -C a b c", GM_OP_CHECK, 1, 3, 1, "a" },
        { "merge -m a", GM_OP_MERGE, 1, 1, 0, "a" },
        { "- -", GM_OP_SORT, 0, 2, 0, "-" },
        { "-rn -- -r", GM_OP_SORT, 0, 1, 0, "-r" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gm_cli cli;
        gm_status st;
        int rc = parse(cases[i].line, &cli, &st);
        cr_assert_eq(rc, GM_OK, "'%s': %s", cases[i].line, st.msg);
        cr_expect_eq(cli.op, cases[i].op, "'%s': op %d", cases[i].line, cli.op);
        cr_expect_eq(cli.have_op, cases[i].have_op, "'%s': have_op", cases[i].line);
        cr_expect_eq(cli.nfiles, cases[i].nfiles, "'%s': %d files", cases[i].line, cli.nfiles);
        cr_expect_eq(cli.config.check_quiet, cases[i].quiet, "'%s': quiet", cases[i].line);
        if (cases[i].first && cli.nfiles > 0)
            cr_expect_str_eq(cli.files[0], cases[i].first, "'%s'", cases[i].line);
        gm_cli_free(&cli);
    }
}

Test(compat, parse_values_reach_the_config)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t tenth = (size_t)((double)pages * (double)page * 10 / 100);
    static const struct {
        const char *line;
        size_t buffer;
    } sizes[] = {
        { "-S 1", 1024 },           { "-S1b", 1 },          { "-S 32b", 32 },
        { "-S 1K", 1024 },          { "-S 1k", 1024 },      { "-S 3M", 3u << 20 },
        { "-S 2G", (size_t)2 << 30 }, { "--buffer-size=1T", (size_t)1 << 40 },
        { "-S K", 1024 },           { "-S 1M -S 1K", 1u << 20 }, /* the largest wins */
        { "-S 1K -S 1M", 1u << 20 }, { "--buf=7b", 7 },  { "-S ' 5'", 5 * 1024 },
        { "-S 0", 1 },              { "-S 0b", 1 },         /* sort's smallest, not "automatic" */
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        gm_cli cli;
        gm_status st;
        char line[64];
        /* "' 5'" stands for the argument " 5" (a leading blank, as strtoumax takes) */
        if (strstr(sizes[i].line, "' 5'")) {
            char *argv[] = { "gpumerge", "-S", " 5", NULL };
            cr_assert_eq(gm_cli_parse(3, argv, &cli, &st), GM_OK, "%s", st.msg);
        } else {
            snprintf(line, sizeof line, "%s", sizes[i].line);
            cr_assert_eq(parse(line, &cli, &st), GM_OK, "'%s': %s", line, st.msg);
        }
        cr_expect_eq(cli.config.buffer_size, sizes[i].buffer, "'%s': %zu", sizes[i].line,
                     cli.config.buffer_size);
        gm_cli_free(&cli);
    }
    gm_cli cli;
    gm_status st;
    cr_assert_eq(parse("-S 10%", &cli, &st), GM_OK, "%s", st.msg);
    cr_expect_eq(cli.config.buffer_size, tenth);
    gm_cli_free(&cli);

    cr_assert_eq(parse("-T /a --temporary-directory=/b -T/c --batch-size=7 --parallel=3 "
                       "--progress -s -n -b -f --sort=numeric --stable --numeric-sort "
                       "--ignore-leading-blanks --ignore-case -v -r -u -o out",
                       &cli, &st),
                 GM_OK, "%s", st.msg);
    cr_expect_str_eq(cli.config.tmpdir, "/c", "the last -T is used");
    cr_expect_eq(cli.config.batch_size, 7);
    cr_expect_eq(cli.config.threads, 3);
    cr_expect_eq(cli.config.progress, 1);
    cr_expect_eq(cli.config.verbose, 1);
    cr_expect_eq(cli.config.reverse, 1);
    cr_expect_eq(cli.config.unique, 1);
    cr_expect_str_eq(cli.config.output, "out");
    cr_expect_eq(cli.config.zero_terminated, 0);
    cr_expect_eq(cli.nfiles, 0);
    gm_cli_free(&cli);

    cr_assert_eq(parse("--parallel=99999999999999999999999", &cli, &st), GM_OK, "%s", st.msg);
    cr_expect_eq(cli.config.threads, 4096, "a huge --parallel is as many as allowed");
    gm_cli_free(&cli);
    cr_assert_eq(parse("--threads=5 --p=2", &cli, &st), GM_OK, "%s", st.msg);
    cr_expect_eq(cli.config.threads, 2, "--p is sort's --parallel");
    gm_cli_free(&cli);
    cr_assert_eq(parse("--dev=cpu --ker=tiled --th=6", &cli, &st), GM_OK, "%s", st.msg);
    cr_expect_eq(cli.config.device, GM_DEVICE_CPU);
    cr_expect_eq(cli.config.kernel, GM_KERNEL_TILED);
    cr_expect_eq(cli.config.threads, 6);
    gm_cli_free(&cli);
    cr_assert_eq(parse("-o x -o x f", &cli, &st), GM_OK, "the same -o twice: %s", st.msg);
    gm_cli_free(&cli);
    cr_assert_eq(parse("--help --frobnicate", &cli, &st), GM_OK, "%s", st.msg);
    cr_expect_eq(cli.show_help, 1, "--help ends the parse, as in sort");
    gm_cli_free(&cli);
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

/* ---------------------------------------------------------------- vs sort */

Test(compat, sort_style_invocation_matches_gnu_sort, .timeout = 300)
{
    rng r;
    rng_seed(&r, 30);
    char *dir = scratch_dir();
    int64_t sizes[] = { 0, 1, 2000, 100000 };
    for (int s = 0; s < 4; s++) {
        for (int spread = 0; spread < 3; spread++) {
            random_file(&r, dir, "in", sizes[s], spread, 0);
            same_as_sort(dir, "-n in", "-n in");
            same_as_sort(dir, "in", "-n in");
            same_as_sort(dir, "-r in", "-n -r in");
            same_as_sort(dir, "-nu in", "-nu in");
            same_as_sort(dir, "-n -r -u in", "-n -r -u in");
            same_as_sort(dir, "-ns --parallel=1 < in", "-ns --parallel=1 < in");
            same_as_sort(dir, "--numeric-sort --stable -S 1M -b -f --sort=numeric in",
                         "--numeric-sort --stable -S 1M -b -f --sort=numeric in");
        }
    }
    random_file(&r, dir, "a", 30000, 0, 0);
    random_file(&r, dir, "b", 40000, 1, 0);
    same_as_sort(dir, "-n a b -o out && cat out", "-n a b -o out && cat out");
    same_as_sort(dir, "a - < b", "-n a - < b");
    free(dir);
}

Test(compat, merge_style_invocation_matches_gnu_sort, .timeout = 300)
{
    rng r;
    rng_seed(&r, 31);
    char *dir = scratch_dir();
    for (int spread = 0; spread < 3; spread++) {
        random_file(&r, dir, "a", 60000, spread, 1);
        random_file(&r, dir, "b", 40000, spread, 1);
        random_file(&r, dir, "c", 0, spread, 1);
        same_as_sort(dir, "-m -n a b c", "-m -n a b c");
        same_as_sort(dir, "-mu a b", "-m -n -u a b");
        same_as_sort(dir, "--merge b - < a", "-m -n b - < a");
        same_as_sort(dir, "a -m --batch-size=2 b", "-n a -m --batch-size=2 b");
        random_file(&r, dir, "a", 60000, spread, -1);
        random_file(&r, dir, "b", 40000, spread, -1);
        same_as_sort(dir, "-m -r a b", "-m -n -r a b");
        same_as_sort(dir, "-mnru a b", "-mnru a b");
    }
    free(dir);
}

Test(compat, check_style_invocation_matches_gnu_sort, .timeout = 120)
{
    rng r;
    rng_seed(&r, 32);
    char *dir = scratch_dir();
    static const char *const forms[] = {
        "-c", "-C", "--check", "--check=quiet", "--check=silent", "--check=diagnose-first",
        "-c -u", "-C -u", "-c -r", "-cr -u", "-nc", "-c -m",
    };
    for (int round = 0; round < 12; round++) {
        int64_t n = round < 4 ? round : rng_range(&r, 1, 50000);
        int sorted = round % 3 == 0 ? 0 : round % 3 == 1 ? 1 : -1;
        random_file(&r, dir, "in", n, round % 3 == 2 ? 2 : round % 2, sorted);
        for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
            char args[128], sort_args[128];
            snprintf(args, sizeof args, "%s in", forms[f]);
            snprintf(sort_args, sizeof sort_args, "-n %s in", forms[f]);
            same_as_sort(dir, args, sort_args);
            snprintf(args, sizeof args, "%s < in", forms[f]);
            snprintf(sort_args, sizeof sort_args, "-n %s < in", forms[f]);
            same_as_sort(dir, args, sort_args);
        }
    }
    /* a disorder late in a file, and one between equal keys under -u */
    char *p = path_in(dir, "in");
    write_text(p, "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n-4\n");
    same_as_sort(dir, "-c in", "-n -c in");
    write_text(p, "1\n2\n2\n3\n");
    same_as_sort(dir, "-c -u in", "-n -c -u in");
    same_as_sort(dir, "-C -u in", "-n -C -u in");
    same_as_sort(dir, "-c in", "-n -c in");
    free(p);
    free(dir);
}

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
        { "-V ok", 2, "gpumerge: option '-V' is not supported: gpumerge orders by number or by bytes, not by version\n", 0 },
        { "--version-sort ok", 2, "gpumerge: option '--version-sort' is not supported: gpumerge orders by number or by bytes, not by version\n", 0 },
        { "-M ok", 2, "gpumerge: option '-M' is not supported: gpumerge orders by number or by bytes, not by month names\n", 0 },
        { "--month-sort ok", 2, "gpumerge: option '--month-sort' is not supported: gpumerge orders by number or by bytes, not by month names\n", 0 },
        { "-R ok", 2, "gpumerge: option '-R' is not supported: the order is always by key (shuf(1) shuffles)\n", 0 },
        { "--random-sort ok", 2, "gpumerge: option '--random-sort' is not supported: the order is always by key (shuf(1) shuffles)\n", 0 },
        { "-d ok", 2, "gpumerge: option '-d' is not supported: gpumerge orders by number or by bytes, not in dictionary order\n", 0 },
        { "--dictionary-order ok", 2, "gpumerge: option '--dictionary-order' is not supported: gpumerge orders by number or by bytes, not in dictionary order\n", 0 },
        { "-i ok", 2, "gpumerge: option '-i' is not supported: gpumerge orders by number or by bytes, ignoring no characters\n", 0 },
        { "--ignore-nonprinting ok", 2, "gpumerge: option '--ignore-nonprinting' is not supported: gpumerge orders by number or by bytes, ignoring no characters\n", 0 },
        { "--random-source=ok ok", 2, "gpumerge: option '--random-source' is not supported: it only serves -R, which is not supported\n", 0 },
        { "--debug ok", 2, "gpumerge: option '--debug' is not supported: it annotates sort's key fields; -v shows gpumerge's plan\n", 0 },
        { "--de ok", 2, "gpumerge: option '--debug' is not supported: it annotates sort's key fields; -v shows gpumerge's plan\n", 0 },
        { "--compress-program=gzip ok", 2, "gpumerge: option '--compress-program' is not supported: temporary files are not compressed\n", 0 },
        { "--sort=month ok", 2, "gpumerge: option '--sort=month' is not supported: gpumerge orders by number or by bytes, not by month names\n", 0 },
        { "--sort=random ok", 2, "gpumerge: option '--sort=random' is not supported: the order is always by key (shuf(1) shuffles)\n", 0 },
        { "--sort=version ok", 2, "gpumerge: option '--sort=version' is not supported: gpumerge orders by number or by bytes, not by version\n", 0 },
        { "-t, -k1,1 -k2n -f ok", 2, "gpumerge: option '-f' is not supported: gpumerge orders by number or by bytes, without folding case\n", 0 },
        { "ok check -M", 2, "gpumerge: option '-M' is not supported: gpumerge orders by number or by bytes, not by month names\n", 0 },
        { "merge -k1 -M ok", 2, "gpumerge: option '-M' is not supported: gpumerge orders by number or by bytes, not by month names\n", 0 },
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
        /* only the orders gpumerge takes are listed; month, random and version are
         * refused by name */
        { "--sort=foo ok", 2, "gpumerge: invalid argument 'foo' for '--sort'\nValid arguments are:\n"
                              "  - 'general-numeric'\n  - 'human-numeric'\n  - 'numeric'\n" TRY, 0 },
        { "--sort= ok", 2, "gpumerge: ambiguous argument '' for '--sort'\nValid arguments are:\n"
                           "  - 'general-numeric'\n  - 'human-numeric'\n  - 'numeric'\n" TRY, 0 },
        { "--sort=mo ok", 2, "gpumerge: option '--sort=mo' is not supported: gpumerge orders by "
                             "number or by bytes, not by month names\n", 0 },
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

Test(compat, zero_terminated_as_sort)
{
    char *dir = scratch_dir();
    char *p = path_in(dir, "in");
    /* coreutils' zero-1 */
    write_file(p, "2\0" "1\0", 4);
    cmd_result r = gm(dir, "-z in");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_eq(r.out_len, 4);
    cr_assert(memcmp(r.out, "1\0" "2\0", 4) == 0);
    cmd_free(&r);
    /* random canonical NUL-ended lines (sort repeats a line's text, gpumerge writes
     * the number: the bytes agree on canonical input), the last without its NUL */
    srand(1234);
    char *buf = malloc(1 << 20);
    size_t len = 0;
    for (int i = 0; i < 20000; i++)
        len += (size_t)sprintf(buf + len, "%d%c", rand() % 2001 - 1000, 0);
    len--; /* no NUL after the last line */
    write_file(p, buf, len);
    static const char *const opts[] = { "-z", "-z -r", "-z -u", "-z -r -u" };
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        char ours[64], theirs[64];
        snprintf(ours, sizeof ours, "%s in", opts[i]);
        snprintf(theirs, sizeof theirs, "%s -n in", opts[i]);
        same_as_sort(dir, ours, theirs);
    }
    char *q = path_in(dir, "sorted");
    r = gm(dir, "-z in -o sorted");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cmd_free(&r);
    same_as_sort(dir, "-z -m sorted sorted", "-z -n -m sorted sorted");
    same_as_sort(dir, "-z -c sorted", "-z -n -c sorted");
    same_as_sort(dir, "-z -C in", "-z -n -C in");
    /* a newline inside a NUL-ended line: a line as sort takes it; --strict refuses
     * it as not an integer, on that line */
    write_file(p, "1\0" "2\n3\0", 6);
    same_as_sort(dir, "-z in", "-z -n in");
    r = gm(dir, "--strict -z in");
    cr_assert_eq(r.status, 2);
    cr_assert(strncmp(r.err, "gpumerge: in:2: not an integer: ", 32) == 0, "%s", r.err);
    cr_assert_eq(r.out_len, 0);
    cmd_free(&r);
    free(buf), free(q), free(p), free(dir);
}

/* ---------------------------------------------------------------- files0 */

Test(compat, files0_from_matches_sort)
{
    rng r;
    rng_seed(&r, 33);
    char *dir = scratch_dir();
    random_file(&r, dir, "a", 5000, 0, 0);
    random_file(&r, dir, "odd name", 3000, 1, 0);
    random_file(&r, dir, "line\nbreak", 100, 2, 0);
    char *p = path_in(dir, "list");
    static const char names[] = "a\0odd name\0line\nbreak\0a";
    write_file(p, names, sizeof names - 1);
    same_as_sort(dir, "--files0-from=list", "-n --files0-from=list");
    same_as_sort(dir, "--files0-from list -r", "-n --files0-from list -r");
    same_as_sort(dir, "--files0-from=- < list", "-n --files0-from=- < list");
    same_as_sort(dir, "-u --files0-from=list -o out && cat out", "-n -u --files0-from=list -o out && cat out");
    /* sorted inputs merged, one checked */
    random_file(&r, dir, "s1", 4000, 0, 1);
    random_file(&r, dir, "s2", 4000, 0, 1);
    write_file(p, "s1\0s2\0", 6);
    same_as_sort(dir, "-m --files0-from=list", "-m -n --files0-from=list");
    same_as_sort(dir, "-c --files0-from=list", "-c -n --files0-from=list");
    write_file(p, "s1\0", 3);
    same_as_sort(dir, "-c --files0-from=list", "-c -n --files0-from=list");
    /* a subcommand is not an operand */
    cmd_result ours = gm(dir, "merge --files0-from=list");
    cmd_result theirs = sort_sh(dir, "-m -n s1");
    cr_assert_eq(ours.status, 0, "%s", ours.err);
    cr_assert_str_eq(ours.out, theirs.out);
    cmd_free(&ours), cmd_free(&theirs);
    /* a missing input named in the list */
    write_file(p, "s1\0gone\0", 8);
    same_as_sort(dir, "--files0-from=list", "-n --files0-from=list");
    /* a folder as the list */
    same_as_sort(dir, "--files0-from=.", "-n --files0-from=.");
    free(p), free(dir);
}

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
 * it does not check. A subcommand is not a file operand. */
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
    r = gm(dir, "sort -r a");
    assert_result(&r, 0, "3\n2\n1\n", "", "options after a subcommand");
    cmd_free(&r);
    gm_cli cli;
    gm_status st;
    cr_assert_eq(parse("-n a -r -u -oout", &cli, &st), GM_OK, "%s", st.msg);
    cr_expect_eq(cli.nfiles, 4, "-n a -r -u -oout: %d files", cli.nfiles);
    cr_expect_eq(cli.config.reverse, 0);
    cr_expect_eq(cli.config.output, NULL);
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
