/*
 * test_cli.c - the gpumerge command as users run it: the golden cases of
 * testdata/cases, random cases compared byte for byte with GNU sort (LC_ALL=C
 * sort -n, sort -m -n, sort -n -u, sort -n -r), every error with its message and
 * exit status, -o onto an input, a pipe into head, and /dev/full.
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
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

/* Runs "gpumerge SUBCOMMAND [--device=gpu] REST" in dir. */
static cmd_result gm(const char *dir, const char *subcommand, const char *rest)
{
    char *cmd;
    if (asprintf(&cmd, "'%s' %s %s %s", gpumerge_path(), subcommand, gpumerge_device_arg(),
                 rest) < 0)
        abort();
    cmd_result r = run_sh(dir, cmd);
    free(cmd);
    return r;
}

static void assert_result(cmd_result *r, int status, const char *out, const char *err)
{
    cr_assert_eq(r->status, status, "exit status %d, want %d; stderr: %s", r->status, status,
                 r->err);
    if (out)
        cr_assert_str_eq(r->out, out);
    if (err)
        cr_assert_str_eq(r->err, err);
}

/* Runs cmd in dir, which must fail with status 2, nothing on standard output and
 * err on standard error, leaving the -o file out with the "precious\n" it held. */
static void assert_fails_keeping(const char *dir, const char *cmd, const char *err,
                                 const char *out)
{
    cmd_result r = run_sh(dir, cmd);
    assert_result(&r, 2, "", err);
    cmd_free(&r);
    char *kept = read_file(out, NULL);
    cr_assert_str_eq(kept, "precious\n", "%s: the -o file changed", cmd);
    free(kept);
}

/* Whether the gpumerge under test can use a GPU here (asked of the program, as a
 * user would, rather than of CUDA inside this test's process). */
static int gpu_usable(void)
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

/* ---------------------------------------------------------------- vs sort */

/* Runs gpumerge and GNU sort in dir and compares their standard output. */
static void same_as_sort(const char *dir, const char *sub, const char *args,
                         const char *sort_args)
{
    cmd_result ours = gm(dir, sub, args);
    char *cmd;
    if (asprintf(&cmd, "LC_ALL=C sort %s", sort_args) < 0)
        abort();
    cmd_result theirs = run_sh(dir, cmd);
    cr_assert_eq(theirs.status, 0, "sort failed: %s", theirs.err);
    cr_assert_eq(ours.status, 0, "gpumerge %s %s: exit %d: %s", sub, args, ours.status, ours.err);
    cr_assert_eq(ours.out_len, theirs.out_len, "gpumerge %s %s: %zu bytes, sort %s: %zu", sub,
                 args, ours.out_len, sort_args, theirs.out_len);
    cr_assert(memcmp(ours.out, theirs.out, ours.out_len) == 0,
              "gpumerge %s %s differs from sort %s", sub, args, sort_args);
    cr_assert_str_eq(ours.err, "");
    cmd_free(&ours);
    cmd_free(&theirs);
    free(cmd);
}

/* -o files on four threads, written through the shared mapping whatever the
 * cores: a sort in one chunk, an external sort, a file and a pipe, a merge in many
 * rounds, -r, -u, -z, and in place. */
Test(cli, output_through_the_mapping, .timeout = 300)
{
    rng r;
    rng_seed(&r, 23);
    char *dir = scratch_dir();
    random_file(&r, dir, "in", 300000, 1, 0);
    cmd_result t = run_sh(dir, "LC_ALL=C sort -n in > a && tr '\\n' '\\0' < in > in0 && "
                               "head -n 1000 in | LC_ALL=C sort -n > b && cp b bcopy && "
                               "ln b b2");
    cr_assert_eq(t.status, 0, "%s", t.err);
    cmd_free(&t);
    same_as_sort(dir, "sort", "--parallel=4 in -o out && cat out", "-n in");
    same_as_sort(dir, "sort", "--parallel=4 -r -u in -o out && cat out", "-n -r -u in");
    same_as_sort(dir, "sort", "--parallel=4 -z -o out0 < in0 && cat out0", "-n -z < in0");
    /* reserved ahead for the whole output while temporary runs are made; and for
     * the regular input only, the pipe's lines going past the reservation */
    same_as_sort(dir, "sort", "--parallel=4 -S 1M in -o out && cat out", "-n in");
    same_as_sort(dir, "sort", "--parallel=4 b - -o out < in && cat out", "-n b in");
    same_as_sort(dir, "merge", "--parallel=4 -S 1M a b -o out && cat out", "-m -n a b");
    /* b has another link: written in place, from a spool, b read whole first */
    same_as_sort(dir, "merge", "--parallel=4 -u -S 1M a b -o b && cat b2",
                 "-m -n -u a bcopy");
    free(dir);
}

Test(cli, sort_matches_gnu_sort, .timeout = 300)
{
    rng r;
    rng_seed(&r, 20);
    char *dir = scratch_dir();
    int64_t sizes[] = { 0, 1, 1000, 200000 };
    for (int s = 0; s < 4; s++) {
        for (int spread = 0; spread < 3; spread++) {
            random_file(&r, dir, "in", sizes[s], spread, 0);
            same_as_sort(dir, "sort", "in", "-n in");
            same_as_sort(dir, "sort", "-r in", "-n -r in");
            same_as_sort(dir, "sort", "-u in", "-n -u in");
            same_as_sort(dir, "sort", "-r -u in", "-n -r -u in");
            same_as_sort(dir, "sort", "--threads=1 < in", "-n in");
        }
    }
    random_file(&r, dir, "a", 50000, 0, 0);
    random_file(&r, dir, "b", 70000, 1, 0);
    same_as_sort(dir, "sort", "a b", "-n a b");
    free(dir);
}

Test(cli, merge_matches_gnu_sort, .timeout = 300)
{
    rng r;
    rng_seed(&r, 21);
    char *dir = scratch_dir();
    for (int spread = 0; spread < 3; spread++) {
        random_file(&r, dir, "a", 120000, spread, 1);
        random_file(&r, dir, "b", 80000, spread, 1);
        same_as_sort(dir, "merge", "a b", "-m -n a b");
        same_as_sort(dir, "merge", "-u a b", "-m -n -u a b");
        same_as_sort(dir, "merge", "b - < a", "-m -n b a");
        random_file(&r, dir, "a", 120000, spread, -1);
        random_file(&r, dir, "b", 80000, spread, -1);
        same_as_sort(dir, "merge", "-r a b", "-m -n -r a b");
        same_as_sort(dir, "merge", "-r -u a b", "-m -n -r -u a b");
    }
    /* many inputs, some empty */
    char names[512] = "";
    for (int i = 0; i < 33; i++) {
        char name[16];
        snprintf(name, sizeof name, "k%02d", i);
        random_file(&r, dir, name, i % 7 == 0 ? 0 : rng_range(&r, 1, 5000), i % 3, 1);
        strcat(names, " ");
        strcat(names, name);
    }
    char sort_args[600];
    snprintf(sort_args, sizeof sort_args, "-m -n %s", names);
    same_as_sort(dir, "merge", names, sort_args);
    free(dir);
}

Test(cli, check_agrees_with_sort_c)
{
    rng r;
    rng_seed(&r, 22);
    char *dir = scratch_dir();
    random_file(&r, dir, "in", 100000, 0, 1);
    cmd_result ok = gm(dir, "check", "in");
    assert_result(&ok, 0, "", "");
    cmd_free(&ok);
    random_file(&r, dir, "in", 100000, 0, 0);
    cmd_result bad = gm(dir, "check", "in");
    cmd_result theirs = run_sh(dir, "LC_ALL=C sort -c -n in");
    cr_assert_eq(bad.status, 1);
    cr_assert_eq(theirs.status, 1);
    /* sort says "sort: in:LINE: disorder: TEXT": the same line and text */
    cr_assert_str_eq(bad.err + strlen("gpumerge"), theirs.err + strlen("sort"));
    cmd_free(&bad);
    cmd_free(&theirs);
    free(dir);
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

/* ---------------------------------------------------------------- errors */

typedef struct {
    const char *sub, *args;
    int status;
    const char *err;
} error_case;

Test(cli, every_error_message)
{
    static const error_case cases[] = {
        { "sort", "nothere", 2, "gpumerge: cannot read: nothere: No such file or directory\n" },
        { "merge", "ok .", 2, "gpumerge: read failed: .: Is a directory\n" },
        { "merge", "ok 'odd name'", 2,
          "gpumerge: cannot read: 'odd name': No such file or directory\n" },
        { "sort", "--strict bad", 2, "gpumerge: bad:2: not an integer: '1.5'\n" },
        { "sort", "--strict big", 2,
          "gpumerge: big:1: out of range: '-9223372036854775809'\n" },
        { "merge", "ok unsorted", 2, "gpumerge: unsorted:3: disorder: 2\n" },
        { "merge", "-r ok", 2, "gpumerge: ok:2: disorder: 2\n" },
        { "check", "unsorted", 1, "gpumerge: unsorted:3: disorder: 2\n" },
        { "check", "ok unsorted", 1, "gpumerge: unsorted:3: disorder: 2\n" },
        { "check", "-u dup", 1, "gpumerge: dup:2: disorder: 1\n" },
        { "check", "-r ok", 1, "gpumerge: ok:2: disorder: 2\n" },
        { "check", "--strict bad", 2, "gpumerge: bad:2: not an integer: '1.5'\n" },
        { "sort", "-x ok", 2,
          "gpumerge: invalid option -- 'x'\nTry 'gpumerge --help' for more information.\n" },
        { "sort", "--frobnicate ok", 2,
          "gpumerge: unrecognized option '--frobnicate'\n"
          "Try 'gpumerge --help' for more information.\n" },
        { "sort", "ok -o", 2,
          "gpumerge: option requires an argument -- 'o'\n"
          "Try 'gpumerge --help' for more information.\n" },
        { "sort", "ok --device", 2,
          "gpumerge: option '--device' requires an argument\n"
          "Try 'gpumerge --help' for more information.\n" },
        { "sort", "--device=tpu ok", 2,
          "gpumerge: invalid argument 'tpu' for '--device'\nValid arguments are: auto, cpu, gpu\n"
          "Try 'gpumerge --help' for more information.\n" },
        { "sort", "--kernel=fast ok", 2,
          "gpumerge: invalid argument 'fast' for '--kernel'\n"
          "Valid arguments are: auto, basic, tiled, circular\n"
          "Try 'gpumerge --help' for more information.\n" },
        { "sort", "--threads=0 ok", 2,
          "gpumerge: invalid --threads: '0' (want 1 to 4096)\n"
          "Try 'gpumerge --help' for more information.\n" },
        { "sort", "--threads=two ok", 2,
          "gpumerge: invalid --threads: 'two' (want 1 to 4096)\n"
          "Try 'gpumerge --help' for more information.\n" },
        { "check", "-o out ok", 2,
          "gpumerge: check writes no output: -o is not allowed\n"
          "Try 'gpumerge --help' for more information.\n" },
        { "sort", "ok -o /nonexistent/out", 2,
          "gpumerge: open failed: /nonexistent/out: No such file or directory\n" },
    };
    char *dir = scratch_dir();
    char *p;
    write_text(p = path_in(dir, "ok"), "1\n2\n2\n3\n"), free(p);
    write_text(p = path_in(dir, "bad"), "1\n1.5\n"), free(p);
    write_text(p = path_in(dir, "big"), "-9223372036854775809\n"), free(p);
    write_text(p = path_in(dir, "unsorted"), "1\n3\n2\n"), free(p);
    write_text(p = path_in(dir, "dup"), "1\n1\n"), free(p);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const error_case *c = &cases[i];
        char *cmd;
        if (asprintf(&cmd, "'%s' %s %s", gpumerge_path(), c->sub, c->args) < 0)
            abort();
        cmd_result r = run_sh(dir, cmd);
        cr_expect_eq(r.status, c->status, "%s: exit %d, want %d", cmd, r.status, c->status);
        cr_expect_str_eq(r.err, c->err, "%s", cmd);
        cr_expect_str_eq(r.out, "", "%s wrote to standard output", cmd);
        cmd_free(&r);
        free(cmd);
    }
    free(dir);
}

/* Runs cmd in dir with its standard error kept byte for byte (NULs too): returns
 * the bytes (malloc'd), *len their count, *status the exit status. */
static char *stderr_bytes(const char *dir, const char *cmd, size_t *len, int *status)
{
    char *full;
    if (asprintf(&full, "%s 2>err.bytes", cmd) < 0)
        abort();
    cmd_result r = run_sh(dir, full);
    *status = r.status;
    cmd_free(&r);
    free(full);
    char *p = path_in(dir, "err.bytes");
    char *bytes = read_file(p, len);
    unlink(p);
    free(p);
    return bytes;
}

typedef struct {
    const char *input;  /* printf's format: the input's bytes */
    size_t input_len;   /* for the table's reader: how many there are */
    const char *args;   /* gpumerge's, on standard input or the file z */
    int status;
    const char *err;    /* the message, its terminator included */
    size_t err_len;
} zero_case;

#define ZCASE(in, args, status, err) { in, sizeof in - 1, args, status, err, sizeof err - 1 }

/* -z: a message shows the line's bytes as they were read (a newline inside a
 * record is \x0a, not the NUL it is swapped with while parsing), and -c ends its
 * disorder message with NUL, as sort does. */
Test(cli, zero_terminated_messages_show_the_input)
{
    static const zero_case cases[] = {
        ZCASE("1\0002\n3\0004\000", "--strict -z", 2,
              "gpumerge: -:2: not an integer: '2\\x0a3'\n"),
        ZCASE("1\0002\n3\0004\000", "sort --strict -z z", 2,
              "gpumerge: z:2: not an integer: '2\\x0a3'\n"),
        ZCASE("1\0002\n3\0004\000", "merge --strict -z z", 2,
              "gpumerge: z:2: not an integer: '2\\x0a3'\n"),
        ZCASE("1\000\n2\000", "check --strict -z z", 2,
              "gpumerge: z:2: not an integer: '\\x0a2'\n"),
        ZCASE("2\0001\000", "-z -c -n", 1, "gpumerge: -:2: disorder: 1\0"),
        ZCASE("2\0001\000", "check -z z", 1, "gpumerge: z:2: disorder: 1\0"),
        ZCASE("2\0001\000", "check -z z z", 1, "gpumerge: z:2: disorder: 1\0gpumerge: z:2: disorder: 1\0"),
        ZCASE("2\0001\000", "check -z -C z", 1, ""),
        ZCASE("2\0001\000", "merge -z z", 2, "gpumerge: z:2: disorder: 1\n"),
        ZCASE("2\n1\n", "check --strict -z z", 2,
              "gpumerge: z:1: not an integer: '2\\x0a1\\x0a'\n"),
    };
    char *dir = scratch_dir();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const zero_case *c = &cases[i];
        char *z = path_in(dir, "z");
        write_file(z, c->input, c->input_len);
        free(z);
        char *cmd;
        if (asprintf(&cmd, "'%s' %s <z", gpumerge_path(), c->args) < 0)
            abort();
        size_t len;
        int status;
        char *err = stderr_bytes(dir, cmd, &len, &status);
        cr_expect_eq(status, c->status, "%s: exit %d, want %d", cmd, status, c->status);
        cr_expect(len == c->err_len && memcmp(err, c->err, len) == 0,
                  "%s: stderr %zu bytes '%s', want '%s'", cmd, len, err, c->err);
        free(err);
        free(cmd);
    }
    /* the disorder message is sort's, byte for byte after the program's name */
    char *z = path_in(dir, "z");
    write_file(z, "2\0001\0003\000", 6);
    free(z);
    size_t ours_len, theirs_len;
    int ours_status, theirs_status;
    char *cmd;
    if (asprintf(&cmd, "'%s' -z -c -n <z", gpumerge_path()) < 0)
        abort();
    char *ours = stderr_bytes(dir, cmd, &ours_len, &ours_status);
    char *theirs = stderr_bytes(dir, "LC_ALL=C sort -z -c -n <z", &theirs_len, &theirs_status);
    cr_assert_eq(ours_status, theirs_status);
    cr_assert_eq(ours_len - strlen("gpumerge"), theirs_len - strlen("sort"));
    cr_assert(memcmp(ours + strlen("gpumerge"), theirs + strlen("sort"), theirs_len - strlen("sort")) == 0,
              "'%s' against sort's '%s'", ours, theirs);
    free(ours), free(theirs), free(cmd), free(dir);
}

Test(cli, gpu_requested_without_a_gpu)
{
    if (gpu_usable())
        cr_skip_test("a GPU is usable here: the no-GPU message cannot be produced");
    char *dir = scratch_dir();
    char *p = path_in(dir, "in");
    write_text(p, "2\n1\n");
    cmd_result r = run_sh(dir, "\"$GPUMERGE\" sort --device=gpu in");
    cr_assert_eq(r.status, 2);
    cr_assert(strncmp(r.err, "gpumerge: no usable CUDA device: ", 33) == 0, "%s", r.err);
    cr_assert_str_eq(r.out, "");
    cmd_free(&r);
    /* auto quietly uses the CPU */
    r = run_sh(dir, "\"$GPUMERGE\" sort --device=auto in");
    assert_result(&r, 0, "1\n2\n", "");
    cmd_free(&r);
    /* the failure comes before any output: -o is neither created nor changed, from
     * a file, a merge, a pipe, an empty input, and with -v */
    write_text(p, "1\n2\n");
    char *kept = path_in(dir, "kept");
    write_text(kept, "old\n");
    const char *cmds[] = {
        "sort --device=gpu in -o out",
        "merge --device=gpu in in -o out",
        "cat in | \"$GPUMERGE\" sort --device=gpu - -o out",
        "printf '' | \"$GPUMERGE\" sort --device=gpu -o out",
        "sort -v --device=gpu in -o out",
        "sort --device=gpu in -o kept",
        "merge --device=gpu in -o kept",
    };
    char *out = path_in(dir, "out");
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        char *cmd;
        /* a pipeline names its gpumerge itself */
        if (asprintf(&cmd, "%s%s", strchr(cmds[i], '|') ? "" : "\"$GPUMERGE\" ", cmds[i]) < 0)
            abort();
        r = run_sh(dir, cmd);
        cr_assert_eq(r.status, 2, "%s: status %d", cmds[i], r.status);
        const char *msg = strstr(r.err, "gpumerge: no usable CUDA device: ");
        cr_assert(msg != NULL && strstr(r.err, "gpumerge: total ") == NULL, "%s: %s", cmds[i],
                  r.err);
        cr_assert_str_eq(r.out, "", "%s", cmds[i]);
        cr_assert_neq(access(out, F_OK), 0, "%s created out", cmds[i]);
        char *text = read_file(kept, NULL);
        cr_assert_str_eq(text, "old\n", "%s changed kept", cmds[i]);
        free(text);
        cmd_free(&r);
        free(cmd);
    }
    free(out), free(kept), free(p), free(dir);
}

/* The engine line of --version: whether this binary has the CUDA engine. */
static int built_with_cuda(void)
{
    cmd_result r = run_sh(NULL, "\"$GPUMERGE\" --version");
    int cuda = strstr(r.out, "\nengine: CUDA ") != NULL;
    cmd_free(&r);
    return cuda;
}

/* The device line of --version (malloc'd, without its newline). */
static char *version_device(const char *args)
{
    char *cmd;
    if (asprintf(&cmd, "\"$GPUMERGE\" %s --version", args) < 0)
        abort();
    cmd_result r = run_sh(NULL, cmd);
    free(cmd);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *line = strstr(r.out, "\ndevice: ");
    cr_assert_not_null(line, "no device line: %s", r.out);
    line = strndup(line + 1, strcspn(line + 1, "\n"));
    cmd_free(&r);
    return line;
}

/* --gpu=N: a bad number is a usage error before anything is read; a good one
 * changes nothing on the CPU; --version names the device or why there is none,
 * and where no GPU is usable --device=gpu says so whatever N. */
Test(cli, gpu_choice_without_a_gpu)
{
    if (gpu_usable())
        cr_skip_test("a GPU is usable here: gpu_choice_on_a_gpu checks --gpu instead");
    char *dir = scratch_dir();
    char *p = path_in(dir, "in");
    write_text(p, "3\n1\n2\n");
    static const struct {
        const char *args, *err;
    } bad[] = {
        { "--gpu=one in", "gpumerge: invalid --gpu argument 'one'\n" },
        { "--gpu=-1 in", "gpumerge: invalid --gpu argument '-1'\n" },
        { "--gpu 99999999999 in", "gpumerge: --gpu argument '99999999999' too large\n" },
        { "--device=gpu --gpu=x in -o out", "gpumerge: invalid --gpu argument 'x'\n" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cmd_result r = gm(dir, "sort", bad[i].args);
        assert_result(&r, 2, "", bad[i].err);
        cmd_free(&r);
    }
    char *out = path_in(dir, "out");
    cr_assert_neq(access(out, F_OK), 0, "a bad --gpu created -o's file");
    /* a number, on the CPU or under auto: the sort as ever */
    const char *fine[] = { "--gpu=0 in", "--gpu=3 --device=cpu in", "--gpu 7 in", "--gpu=05 in" };
    for (size_t i = 0; i < sizeof fine / sizeof *fine; i++) {
        char *cmd;
        if (asprintf(&cmd, "\"$GPUMERGE\" sort %s", fine[i]) < 0)
            abort();
        cmd_result r = run_sh(dir, cmd);
        assert_result(&r, 0, "1\n2\n3\n", "");
        cmd_free(&r);
        free(cmd);
    }
    /* the GPU asked for: no usable device, whichever N */
    for (int n = 0; n < 3; n++) {
        char *cmd;
        if (asprintf(&cmd, "\"$GPUMERGE\" sort --device=gpu --gpu=%d in -o out", n) < 0)
            abort();
        cmd_result r = run_sh(dir, cmd);
        cr_assert_eq(r.status, 2, "%s", cmd);
        cr_assert(strncmp(r.err, "gpumerge: no usable CUDA device: ", 33) == 0, "%s", r.err);
        cr_assert_neq(access(out, F_OK), 0, "%s created out", cmd);
        cmd_free(&r);
        free(cmd);
    }
    /* --version: why there is no device, in the words --device=gpu uses */
    char *dev = version_device("--gpu=1");
    if (built_with_cuda())
        cr_assert(strncmp(dev, "device: no usable CUDA device: ", 31) == 0, "%s", dev);
    else
        cr_assert_str_eq(dev, "device: none: built without CUDA");
    free(dev);
    free(out), free(p), free(dir);
}

/* Without a driver, --version answers at once: nothing of CUDA is loaded (no
 * engine library, no runtime), as for small sorts under auto or on the CPU;
 * --device=gpu loads the engine, and a program copied without it says so. */
Test(cli, no_cuda_loaded_without_need)
{
    if (!built_with_cuda())
        cr_skip_test("CPU-only build: there is no CUDA engine to leave unloaded");
    if (access("/dev/nvidiactl", F_OK) == 0 || access("/proc/driver/nvidia/version", F_OK) == 0)
        cr_skip_test("an NVIDIA driver is loaded here: --version asks CUDA");
    /* standard input, then gpumerge's arguments */
    const char *cmds[][2] = { { "/dev/null", "--version" }, { "in3", "" }, { "in3", "sort -" },
                              { "in1000", "--device=cpu" }, { "in1000", "in1000" } };
    char *dir = scratch_dir(), *p;
    write_text(p = path_in(dir, "in3"), "3\n1\n2\n"), free(p);
    cmd_result r = run_sh(dir, "seq 1000 > in1000");
    cmd_free(&r);
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        char *cmd;
        if (asprintf(&cmd, "cat %s | LD_DEBUG=files \"$GPUMERGE\" %s 2>&1 >/dev/null "
                           "| grep -c 'gpumerge-cuda\\|libcuda'", cmds[i][0], cmds[i][1]) < 0)
            abort();
        r = run_sh(dir, cmd);
        cr_expect_str_eq(r.out, "0\n", "%s loaded CUDA", cmd);
        cmd_free(&r);
        free(cmd);
    }
    /* the GPU asked for: the engine is loaded, and says why it cannot run */
    r = run_sh(dir, "cat in3 | LD_DEBUG=files \"$GPUMERGE\" --device=gpu 2>&1 >/dev/null "
                    "| grep -c 'calling init: .*gpumerge-cuda.so'");
    cr_expect_str_eq(r.out, "1\n", "--device=gpu did not load the engine");
    cmd_free(&r);
    /* the program without its engine: the GPU is not usable, and says why */
    if (access("/usr/local/lib/gpumerge/gpumerge-cuda.so", F_OK) != 0) {
        r = run_sh(dir, "mkdir alone && cp \"$GPUMERGE\" alone/gpumerge && "
                        "alone/gpumerge --device=gpu in3");
        cr_expect_eq(r.status, 2, "%s", r.err);
        cr_expect(strncmp(r.err, "gpumerge: no usable CUDA device: the CUDA engine "
                                 "(gpumerge-cuda.so) is neither beside the program", 97) == 0,
                  "%s", r.err);
        cmd_free(&r);
        r = run_sh(dir, "alone/gpumerge in3");
        assert_result(&r, 0, "1\n2\n3\n", "");
        cmd_free(&r);
    }
    free(dir);
}

/* On a GPU machine: --gpu=N past the devices is an error under gpu and auto, and
 * --version names device 0 with its compute capability. */
Test(cli, gpu_choice_on_a_gpu)
{
    if (!gpu_usable())
        cr_skip_test("GPU case skipped: no usable CUDA device");
    char *dir = scratch_dir();
    char *p = path_in(dir, "in");
    write_text(p, "3\n1\n2\n");
    cmd_result r = gm(dir, "sort", "--device=gpu --gpu=2147483647 in -o out");
    cr_assert_eq(r.status, 2, "%s", r.err);
    cr_assert(strncmp(r.err, "gpumerge: --gpu=2147483647: no such CUDA device: ", 49) == 0,
              "%s", r.err);
    cmd_free(&r);
    char *out = path_in(dir, "out");
    cr_assert_neq(access(out, F_OK), 0, "a missing device created -o's file");
    r = run_sh(dir, "\"$GPUMERGE\" sort --device=gpu --gpu=0 in");
    assert_result(&r, 0, "1\n2\n3\n", "");
    cmd_free(&r);
    /* CUDA_VISIBLE_DEVICES hides them all: no device */
    r = run_sh(dir, "CUDA_VISIBLE_DEVICES= \"$GPUMERGE\" sort --device=gpu in");
    cr_assert_eq(r.status, 2, "%s", r.err);
    cr_assert(strncmp(r.err, "gpumerge: no usable CUDA device: ", 33) == 0, "%s", r.err);
    cmd_free(&r);
    char *dev = version_device("");
    cr_assert(strncmp(dev, "device: 0: ", 11) == 0 && strstr(dev, "compute capability "),
              "%s", dev);
    free(dev);
    dev = version_device("--gpu=2147483647");
    cr_assert(strncmp(dev, "device: --gpu=2147483647: no such CUDA device: ", 47) == 0, "%s",
              dev);
    free(dev);
    free(out), free(p), free(dir);
}

Test(cli, data_too_large_for_the_gpu)
{
    if (!gpu_usable())
        cr_skip_test("GPU case skipped: no usable CUDA device");
    if (!getenv("GPUMERGE_FORCED"))
        cr_skip_test("GPUMERGE_FORCED (make builds it) not set");
    char *dir = scratch_dir();
    char *p = path_in(dir, "in");
    write_text(p, "3\n1\n2\n");
    /* the test build of gpumerge (cuda/testing.h) makes the device look nearly full */
    cmd_result r =
        run_sh(dir, "\"$GPUMERGE_FORCED\" --gpu-memory-limit=1000 sort --device=gpu in");
    cr_assert_eq(r.status, 2, "%s", r.err);
    cr_assert(strncmp(r.err, "gpumerge: data does not fit in GPU memory: ", 43) == 0, "%s", r.err);
    cr_assert_str_eq(r.out, "");
    cmd_free(&r);
    r = run_sh(dir, "\"$GPUMERGE_FORCED\" --gpu-memory-limit=1000 merge --device=gpu in in -o out");
    cr_assert_eq(r.status, 2, "%s", r.err);
    char *out = path_in(dir, "out");
    cr_assert_neq(access(out, F_OK), 0, "no output file after the failure");
    cmd_free(&r);
    free(out), free(p), free(dir);
}

/* ---------------------------------------------------------------- text path */

/* --device=gpu sorts files through the GPU's text path (core/textsort.c): its output
 * is the CPU engine's, byte for byte, over several files, one without its last
 * newline, CRLF, blanks, blank lines, an int64 key in the last file, -r, -u, -z. */
Test(cli, gpu_text_path_matches_the_cpu, .timeout = 300)
{
    if (!gpu_usable())
        cr_skip_test("GPU case skipped: no usable CUDA device");
    char *dir = scratch_dir();
    rng r;
    rng_seed(&r, 90);
    random_file(&r, dir, "a", 30000, 0, 0);
    random_file(&r, dir, "b", 20000, 2, 0);
    char *c = path_in(dir, "c"), *d = path_in(dir, "d"), *e = path_in(dir, "e");
    write_text(c, " 12\r\n\n-7 \t\r\n+3\n\n007\n-0\n5");      /* no last newline */
    write_text(d, "4\n9223372036854775807\n-9223372036854775808\n1\n");
    write_file(e, "3\0-1\0 2\r\0", 9);                      /* for -z */
    const char *cases[][2] = {
        { "a b c", "" }, { "c a b d", "" }, { "a c b", "-r" }, { "b c d", "-u" },
        { "d b a c", "-r -u" }, { "c", "" }, { "e", "-z" }, { "e e", "-z -r -u" },
    };
    for (int i = 0; i < (int)(sizeof cases / sizeof *cases); i++) {
        char *gpu_cmd, *cpu_cmd;
        if (asprintf(&gpu_cmd, "\"$GPUMERGE\" sort --strict -v --device=gpu %s %s",
                     cases[i][1], cases[i][0]) < 0 ||
            asprintf(&cpu_cmd, "\"$GPUMERGE\" sort --strict --device=cpu %s %s", cases[i][1],
                     cases[i][0]) < 0)
            abort();
        cmd_result g = run_sh(dir, gpu_cmd), want = run_sh(dir, cpu_cmd);
        cr_assert_eq(g.status, 0, "%s: %s", gpu_cmd, g.err);
        cr_assert_eq(want.status, 0, "%s: %s", cpu_cmd, want.err);
        cr_assert(strstr(g.err, "gpumerge: text ") && !strstr(g.err, "not taken"),
                  "%s: the text path not taken: %s", gpu_cmd, g.err);
        cr_assert_eq(g.out_len, want.out_len, "%s: %zu bytes, the CPU %zu", gpu_cmd, g.out_len,
                     want.out_len);
        cr_assert(memcmp(g.out, want.out, g.out_len) == 0, "%s: output differs", gpu_cmd);
        cmd_free(&g), cmd_free(&want);
        free(gpu_cmd), free(cpu_cmd);
    }
    /* standard input that is a pipe: read whole, then the text path */
    const char *piped[][2] = {
        { "cat a | \"$GPUMERGE\" sort --strict -v --device=gpu c - b",
          "cat a | \"$GPUMERGE\" sort --strict --device=cpu c - b" },
        { "cat e | \"$GPUMERGE\" sort --strict -v --device=gpu -z -r -",
          "cat e | \"$GPUMERGE\" sort --strict --device=cpu -z -r -" },
    };
    for (int i = 0; i < 2; i++) {
        cmd_result g = run_sh(dir, piped[i][0]), want = run_sh(dir, piped[i][1]);
        cr_assert_eq(g.status, 0, "%s: %s", piped[i][0], g.err);
        cr_assert(strstr(g.err, "gpumerge: text ") && !strstr(g.err, "not taken"),
                  "%s: the text path not taken: %s", piped[i][0], g.err);
        cr_assert_eq(g.out_len, want.out_len, "%s", piped[i][0]);
        cr_assert(memcmp(g.out, want.out, g.out_len) == 0, "%s: output differs", piped[i][0]);
        cmd_free(&g), cmd_free(&want);
    }
    /* -o, and standard input that is a file, read from its offset */
    cmd_result g = run_sh(dir, "{ read skip; \"$GPUMERGE\" sort --strict --device=gpu - c -o out; } < d && cat out");
    assert_result(&g, 0, "-9223372036854775808\n-7\n0\n1\n3\n5\n7\n12\n9223372036854775807\n", "");
    cmd_free(&g);
    free(c), free(d), free(e), free(dir);
}

/* A line the device's parser declines sends the run to the CPU's path, which names
 * it: the same message and status as the CPU engine, and -o left as it was. */
Test(cli, gpu_text_path_bad_line_is_the_cpus_message)
{
    if (!gpu_usable())
        cr_skip_test("GPU case skipped: no usable CUDA device");
    char *dir = scratch_dir();
    char *out = path_in(dir, "out"), *a = path_in(dir, "a"), *b = path_in(dir, "b");
    write_text(out, "precious\n");
    write_text(a, "1\n2");
    write_text(b, "3\n\n4\n12abc\n99999999999999999999\n");
    const char *devices[] = { "cpu", "gpu" };
    for (int i = 0; i < 2; i++) {
        char *cmd;
        if (asprintf(&cmd, "\"$GPUMERGE\" sort --strict --device=%s a b -o out", devices[i]) < 0)
            abort();
        cmd_result r = run_sh(dir, cmd);
        assert_result(&r, 2, "", "gpumerge: b:4: not an integer: '12abc'\n");
        char *text = read_file(out, NULL);
        cr_assert_str_eq(text, "precious\n");
        free(text), free(cmd);
        cmd_free(&r);
    }
    /* through a pipe: the bytes the text path read go back to the CPU's path */
    assert_fails_keeping(dir, "cat b | \"$GPUMERGE\" sort --strict --device=gpu a - -o out",
                         "gpumerge: -:4: not an integer: '12abc'\n", out);
    write_text(b, "3\n99999999999999999999\n");
    cmd_result r = run_sh(dir, "\"$GPUMERGE\" sort --strict --device=gpu b a -o out");
    assert_result(&r, 2, "", "gpumerge: b:2: out of range: '99999999999999999999'\n");
    cmd_free(&r);
    /* outside --strict those lines are sort's: the device declines them, and the
     * records path writes what sort -n writes */
    r = run_sh(dir, "LC_ALL=C sort -n b a > sort.out; \"$GPUMERGE\" sort --device=gpu b a "
                    "| cmp - sort.out");
    cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
    cmd_free(&r);
    free(out), free(a), free(b), free(dir);
}

/* Auto reads a pipe whole for the text path where an NVIDIA driver is loaded
 * (forced here, so that it runs anywhere), and when the sort stays on the CPU the
 * bytes go back to the streaming sort: the same output, messages and status as
 * --device=cpu, with blocks small enough that the handed-back bytes and the rest
 * of the pipe meet inside lines. */
Test(cli, pipe_read_whole_then_given_back, .timeout = 120)
{
    if (!getenv("GPUMERGE_FORCED"))
        cr_skip_test("GPUMERGE_FORCED (make builds it) not set");
    char *dir = scratch_dir();
    char *a = path_in(dir, "a"), *b = path_in(dir, "b"), *out = path_in(dir, "out");
    write_text(a, "5\n-3\n12\n0");
    write_text(b, "7\n-3\n100\n");
    const char *cases[][2] = {
        { "cat a | \"$GPUMERGE_FORCED\" --driver-loaded sort -v b - a",
          "cat a | \"$GPUMERGE\" sort --device=cpu b - a" },
        { "cat a | \"$GPUMERGE_FORCED\" --driver-loaded --block-size=3 sort -r -u -",
          "cat a | \"$GPUMERGE\" sort --device=cpu -r -u -" },
        { "tr '\\n' '\\0' < b | \"$GPUMERGE_FORCED\" --driver-loaded sort -z - -",
          "tr '\\n' '\\0' < b | \"$GPUMERGE\" sort --device=cpu -z -" },
        { "seq 2000000 -1 1 | \"$GPUMERGE_FORCED\" --driver-loaded sort - | cksum",
          "seq 2000000 | cksum" },
    };
    for (int i = 0; i < (int)(sizeof cases / sizeof *cases); i++) {
        cmd_result g = run_sh(dir, cases[i][0]), want = run_sh(dir, cases[i][1]);
        cr_assert_eq(g.status, 0, "%s: %s", cases[i][0], g.err);
        if (i == 0)
            cr_assert(strstr(g.err, "gpumerge: text     not taken"), "%s: %s", cases[i][0], g.err);
        cr_assert_eq(g.out_len, want.out_len, "%s: %zu bytes, want %zu", cases[i][0],
                     g.out_len, want.out_len);
        cr_assert(memcmp(g.out, want.out, g.out_len) == 0, "%s: output differs", cases[i][0]);
        cmd_free(&g), cmd_free(&want);
    }
    write_text(out, "precious\n");
    write_text(b, "3\n\n4\n12abc\n");
    assert_fails_keeping(dir, "cat b | \"$GPUMERGE_FORCED\" --driver-loaded sort --strict a - -o out",
                         "gpumerge: -:4: not an integer: '12abc'\n", out);
    free(a), free(b), free(out), free(dir);
}

/* ---------------------------------------------------------------- pipes */

Test(cli, pipe_into_head_ends_quietly, .timeout = 120)
{
    rng r;
    rng_seed(&r, 23);
    char *dir = scratch_dir();
    random_file(&r, dir, "big", 2000000, 0, 0);
    char *cmd;
    if (asprintf(&cmd, "{ '%s' sort %s big; echo $? >status; } | head -n 1",
                 gpumerge_path(), gpumerge_device_arg()) < 0)
        abort();
    cmd_result res = run_sh(dir, cmd);
    cmd_result first = run_sh(dir, "LC_ALL=C sort -n big | head -n 1");
    cr_assert_str_eq(res.out, first.out);
    cr_assert_str_eq(res.err, "", "gpumerge said something: %s", res.err);
    char *status_path = path_in(dir, "status");
    char *status = read_file(status_path, NULL);
    /* killed by SIGPIPE (128 + 13), or exit 2 where SIGPIPE is ignored */
    cr_assert(strcmp(status, "141\n") == 0 || strcmp(status, "2\n") == 0, "status %s", status);
    cmd_free(&res);
    cmd_free(&first);
    free(status), free(status_path), free(cmd), free(dir);
}

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

/* ---------------------------------------------------------------- chunk boundaries */

/* Text blocks and the GPU's staged copies forced small (gpumerge_forced), so that
 * every boundary case falls inside a chunk: a line and a key split across blocks,
 * CRLF split, runs of equal keys across chunks, an int64 key in the last chunk,
 * external runs on the device (-S), and errors found in a late chunk with their
 * file:line and -o left as it was. Run with the device the suite is given
 * (GM_TEST_DEVICE=gpu on a GPU machine); the reference is the CPU engine with its
 * default sizes. */
Test(cli, chunk_boundaries_forced_small, .timeout = 300)
{
    if (!getenv("GPUMERGE_FORCED"))
        cr_skip_test("GPUMERGE_FORCED (make builds it) not set");
    char *dir = scratch_dir();
    char *f = path_in(dir, "f"), *a = path_in(dir, "a"), *b = path_in(dir, "b");
    rng r;
    rng_seed(&r, 61);
    size_t cap = 1 << 20, o = 0;
    char *text = malloc(cap);
    for (int i = 0; i < 6000; i++) {
        int64_t v = rng_range(&r, -40, 40); /* runs of equal keys across chunks */
        int form = (int)rng_range(&r, 0, 5);
        o += (size_t)sprintf(text + o, form == 0 ? "%lld\r\n" : form == 1 ? " %lld \n"
                                       : form == 2 && v >= 0 ? "+%lld\n" : "%lld\n",
                             (long long)v);
        if (form == 3 && v < 0)
            o += (size_t)sprintf(text + o, "\n"); /* a blank line */
    }
    o += (size_t)sprintf(text + o, "9223372036854775807\r\n-42"); /* int64 late, no newline */
    write_file(f, text, o);
    write_text(a, "-5\n-5\n0\n7\n7\n7\n100\n");
    write_text(b, "-9\n-5\n7\n8\n4294967296\n");
    const char *runs[][2] = {
        { "--block-size=7 --text-chunk=16 sort %s f", "sort --device=cpu f" },
        { "--block-size=5 --text-chunk=48 sort %s -r -u f", "sort --device=cpu -r -u f" },
        { "--block-size=11 sort %s -S 64K --batch-size=2 f", "sort --device=cpu f" },
        { "--block-size=3 merge %s a b a", "merge --device=cpu a b a" },
        { "--block-size=2 merge %s -u b a", "merge --device=cpu -u b a" },
    };
    for (int i = 0; i < (int)(sizeof runs / sizeof *runs); i++) {
        char *forced, *cmd, *ref;
        if (asprintf(&forced, runs[i][0], gpumerge_device_arg()) < 0 ||
            asprintf(&cmd, "\"$GPUMERGE_FORCED\" %s", forced) < 0 ||
            asprintf(&ref, "\"$GPUMERGE\" %s", runs[i][1]) < 0)
            abort();
        cmd_result got = run_sh(dir, cmd), want = run_sh(dir, ref);
        cr_assert_eq(got.status, 0, "%s: %s", cmd, got.err);
        cr_assert_eq(want.status, 0, "%s: %s", ref, want.err);
        cr_assert_eq(got.out_len, want.out_len, "%s: %zu bytes, expected %zu", cmd, got.out_len,
                     want.out_len);
        cr_assert(memcmp(got.out, want.out, got.out_len) == 0, "%s: output differs", cmd);
        cmd_free(&got), cmd_free(&want);
        free(forced), free(cmd), free(ref);
    }
    /* a bad line and a disorder near the end, found in a late block */
    text[o - 3] = 'x'; /* "-42" becomes "x42" on the last line, 6002 */
    write_file(f, text, o);
    char *out = path_in(dir, "out");
    write_text(out, "precious\n");
    char *cmd;
    if (asprintf(&cmd, "\"$GPUMERGE_FORCED\" --block-size=7 --text-chunk=16 sort --strict %s f -o out",
                 gpumerge_device_arg()) < 0)
        abort();
    char want[256];
    int lines = 1;
    for (size_t k = 0; k + 1 < o; k++)
        lines += text[k] == '\n';
    snprintf(want, sizeof want, "gpumerge: f:%d: not an integer: 'x42'\n", lines);
    assert_fails_keeping(dir, cmd, want, out);
    free(cmd), free(out);
    write_text(a, "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n"
                  "21\n22\n23\n24\n25\n26\n27\n28\n29\n30\n31\n32\n33\n34\n35\n36\n37\n38\n"
                  "39\n40\n41\n42\n43\n44\n45\n46\n47\n48\n49\n50\n51\n52\n53\n54\n55\n56\n"
                  "57\n58\n59\n60\n61\n62\n63\n64\n65\n66\n67\n68\n69\n70\n71\n72\n73\n74\n"
                  "75\n76\n77\n78\n79\n80\n81\n82\n83\n84\n85\n86\n87\n88\n89\n90\n91\n92\n"
                  "93\n94\n95\n96\n97\n98\n99\n100\n101\n102\n103\n104\n105\n106\n107\n108\n"
                  "109\n110\n111\n112\n113\n114\n115\n116\n117\n118\n119\n120\n111\n");
    if (asprintf(&cmd, "\"$GPUMERGE_FORCED\" --block-size=5 check %s a", gpumerge_device_arg()) < 0)
        abort();
    cmd_result dis = run_sh(dir, cmd);
    free(cmd);
    assert_result(&dis, 1, "", "gpumerge: a:121: disorder: 111\n");
    cmd_free(&dis);
    if (asprintf(&cmd, "\"$GPUMERGE_FORCED\" --block-size=5 merge %s a b -o out",
                 gpumerge_device_arg()) < 0)
        abort();
    cmd_result unsorted = run_sh(dir, cmd);
    free(cmd);
    cr_assert_eq(unsorted.status, 2, "%s", unsorted.err);
    cr_assert(strstr(unsorted.err, "a:121: disorder: 111") != NULL, "%s", unsorted.err);
    free(text), free(f), free(a), free(b), free(dir);
}
