/*
 * stream_compress.c - --compress-program=PROG, run through the binary against
 * LC_ALL=C sort with the same options: runs written through PROG and read back
 * through PROG -d (a script in the test folder counts both, then runs gzip) on
 * the integer path's external sort and merge of more inputs than the fan-in
 * (--strict), the records path's sort (-t, -k2,2, gpusort's byte order) and its
 * merge under a low ulimit -n; the children that fail as sort 9.1 reports them
 * (a PROG that cannot be executed, that fails, that fails only with -d), and
 * the temporary folder empty after each, also when SIGTERM ends the sort or
 * its reader goes away (SIGPIPE, as without PROG).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/plan/plan.h"
#include "helpers.h"
#include "stream_cases.h"

/* A folder with tmp/ (the runs' folder), the counting PROG ./zip, gpusort (a
 * link to the binary) and the input "in" of n keys (csv: "KEY,KEY*7%1000"). */
static char *folder(int64_t n, int csv, uint64_t seed)
{
    char *dir = scratch_dir(), *p;
    mkdir(p = path_in(dir, "tmp"), 0700), free(p);
    write_text(p = path_in(dir, "zip"), "#!/bin/sh\n"
                                        "case \"$1\" in -d) echo d >>\"$0.calls\";; "
                                        "*) echo c >>\"$0.calls\";; esac\n"
                                        "exec gzip \"$@\"\n");
    chmod(p, 0755), free(p);
    char *bin = realpath(gpumerge_path(), NULL);
    cr_assert_not_null(bin, "no binary at %s", gpumerge_path());
    cr_assert_eq(symlink(bin, p = path_in(dir, "gpusort")), 0);
    free(p);
    free(bin);
    int64_t *v = keys_of(UNIFORM, n, seed);
    text t = { 0 };
    for (int64_t i = 0; i < n; i++)
        if (csv)
            text_putf(&t, "%lld,%lld\n", (long long)v[i], (long long)((v[i] % 1000) * 7 % 1000));
        else
            text_putf(&t, "%lld\n", (long long)v[i]);
    write_file(p = path_in(dir, "in"), t.buf ? t.buf : "", t.n), free(p);
    free(t.buf);
    free(v);
    return dir;
}

/* How often ./zip ran, to compress and with -d; the count starts again. */
static void calls(const char *dir, int *compress, int *decompress)
{
    char *p = path_in(dir, "zip.calls");
    char *text = read_file(p, NULL);
    *compress = *decompress = 0;
    for (char *c = text; c && *c; c++) {
        *compress += *c == 'c';
        *decompress += *c == 'd';
    }
    free(text);
    unlink(p);
    free(p);
}

/* "PRE PROG -T tmp --compress-program=./zip ARGS" and "PRE LC_ALL=C sort ARGS" in
 * dir (PROG: the binary, or gpusort): status 0 both, the same output, runs made
 * through ./zip (at least min of them) and read back through ./zip -d as often,
 * and tmp left empty. */
static void like_sort(const char *dir, const char *pre, const char *prog, const char *args,
                      const char *sort_args, int min)
{
    char *ours, *theirs, *tmp = path_in(dir, "tmp");
    if (asprintf(&ours, "%s '%s' -T tmp --compress-program=./zip %s", pre,
                 strcmp(prog, "gpusort") == 0 ? "./gpusort" : gpumerge_path(), args) < 0 ||
        asprintf(&theirs, "%s LC_ALL=C sort %s", pre, sort_args) < 0)
        abort();
    cmd_result r = run_sh(dir, ours), s = run_sh(dir, theirs);
    cr_assert_eq(s.status, 0, "%s: %s", theirs, s.err);
    cr_assert_eq(r.status, 0, "%s: %s", ours, r.err);
    cr_assert_str_eq(r.err, "", "%s", ours);
    cr_assert(r.out_len == s.out_len && memcmp(r.out, s.out, r.out_len) == 0,
              "%s: output differs from sort's", ours);
    int c, d;
    calls(dir, &c, &d);
    cr_assert_geq(c, min, "%s: PROG ran %d times, want %d or more", ours, c, min);
    cr_assert_eq(d, c, "%s: %d runs written, %d read back", ours, c, d);
    cr_assert_eq(entries(tmp), 0, "%s: temporary files left behind", ours);
    cmd_free(&r);
    cmd_free(&s);
    free(ours);
    free(theirs);
    free(tmp);
}

Test(stream, compressed_runs_of_the_integer_path, .timeout = 120)
{
    int64_t chunk = gm_sort_chunk_keys(64 << 10, GM_I32);
    char *dir = folder(chunk * 20 + 7, 0, 31);
    like_sort(dir, "", "gpumerge", "-S 64K in", "-n -S 64K in", 20);
    like_sort(dir, "", "gpumerge", "-S 64K -r -u --batch-size=3 in", "-n -S 64K -r -u in", 20);
    /* a merge of more inputs than the fan-in, in batches into runs (--strict) */
    const char *split = "split -l 500 in part. && for f in part.*; do sort -n -o $f $f; done && ";
    like_sort(dir, split, "gpumerge", "merge --strict --batch-size=4 part.*", "-m -n part.*", 4);
    rm_rf(dir);
    free(dir);
}

Test(stream, compressed_runs_of_the_records_path, .timeout = 120)
{
    char *dir = folder(60000, 1, 32);
    like_sort(dir, "", "gpumerge", "-S 64K -t, -k2,2 in", "-n -S 64K -t, -k2,2 in", 5);
    like_sort(dir, "", "gpusort", "-S 64K -t, -k2,2 in", "-S 64K -t, -k2,2 in", 5);
    like_sort(dir, "", "gpusort", "-S 64K -u in", "-S 64K -u in", 5);
    /* more inputs than descriptors: merged in batches into runs */
    const char *bytes = "split -l 500 in b. && for f in b.*; do sort -o $f $f; done && "
                        "ulimit -n 16 && ";
    like_sort(dir, bytes, "gpusort", "-m b.*", "-m b.*", 2);
    const char *numbers = "split -l 500 in n. && for f in n.*; do sort -n -t, -k1,1 -o $f $f; "
                          "done && ulimit -n 16 && ";
    like_sort(dir, numbers, "gpumerge", "merge -t, -k1,1 n.*", "-m -n -t, -k1,1 n.*", 2);
    rm_rf(dir);
    free(dir);
}

/* PROG's failures in sort 9.1's words and status, nothing left in tmp. */
Test(stream, compress_program_failures_as_sort_reports_them, .timeout = 120)
{
    int64_t chunk = gm_sort_chunk_keys(64 << 10, GM_I32);
    char *dir = folder(chunk * 6, 0, 33), *tmp = path_in(dir, "tmp"), *p;
    write_text(p = path_in(dir, "nod"), "#!/bin/sh\ncase \"$1\" in -d) exit 3;; esac\n"
                                        "exec cat\n");
    chmod(p, 0755), free(p);
    static const struct {
        const char *args, *err;
    } cases[] = {
        { "--compress-program=nonexistent -S 64K in",
          "couldn't execute compress program: errno 2\n"
          "gpumerge: 'nonexistent' [-d] terminated abnormally\n" },
        { "--compress-program=false -S 64K in", "gpumerge: 'false' [-d] terminated abnormally\n" },
        { "--compress-program=./nod -S 64K in", "gpumerge: './nod' [-d] terminated abnormally\n" },
        { "--compress-program=./nod -S 64K -t, -k1,1 in",
          "gpumerge: './nod' [-d] terminated abnormally\n" },
        { "--compress-program=a --compress-program=b in",
          "gpumerge: multiple compress programs specified\n" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *cmd;
        if (asprintf(&cmd, "'%s' -T tmp %s", gpumerge_path(), cases[i].args) < 0)
            abort();
        cmd_result r = run_sh(dir, cmd);
        cr_expect_eq(r.status, 2, "%s: status %d (%s)", cmd, r.status, r.err);
        cr_expect_str_eq(r.err, cases[i].err, "%s", cmd);
        cr_expect_eq(entries(tmp), 0, "%s: temporary files left behind", cmd);
        cmd_free(&r);
        free(cmd);
    }
    rm_rf(dir);
    free(dir);
    free(tmp);
}

/* SIGTERM while runs are written through gzip: the runs go, the status is the
 * signal's. */
Test(stream, compressed_runs_removed_on_sigterm, .timeout = 60)
{
    char *dir = folder(0, 0, 34), *tmp = path_in(dir, "tmp");
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(fds[1]);
        dup2(fds[0], STDIN_FILENO);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, STDOUT_FILENO);
        execl(gpumerge_path(), "gpumerge", "-S", "64K", "-T", tmp, "--compress-program=gzip",
              (char *)NULL);
        _exit(127);
    }
    close(fds[0]);
    feed_until_runs(fds[1], tmp, 3);
    cr_assert_geq(entries(tmp), 3, "no runs were written");
    kill(pid, SIGTERM);
    int status;
    waitpid(pid, &status, 0);
    close(fds[1]);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "status %d", status);
    cr_assert_eq(entries(tmp), 0, "temporary files left behind");
    rm_rf(dir);
    free(dir);
    free(tmp);
}

/* A reader that goes away ends the sort by SIGPIPE, as without PROG (the core
 * ignores SIGPIPE while PROG's children run), and the runs go. */
Test(stream, compressed_sort_ends_by_sigpipe_when_its_reader_goes, .timeout = 60)
{
    int64_t chunk = gm_sort_chunk_keys(64 << 10, GM_I32);
    char *dir = folder(chunk * 100, 0, 35), *tmp = path_in(dir, "tmp"), *cmd;
    if (asprintf(&cmd, "{ '%s' -S 64K -T tmp --compress-program=./zip in; echo $? >status; } "
                 "| head -1 >/dev/null", gpumerge_path()) < 0)
        abort();
    cmd_result r = run_sh(dir, cmd);
    char *p = path_in(dir, "status"), *status = read_file(p, NULL);
    cr_assert_str_eq(status, "141\n", "%s (%s)", cmd, r.err);
    cr_assert_str_eq(r.err, "", "%s", cmd);
    cr_assert_eq(entries(tmp), 0, "temporary files left behind");
    cmd_free(&r);
    free(status);
    free(p);
    free(cmd);
    rm_rf(dir);
    free(dir);
    free(tmp);
}
