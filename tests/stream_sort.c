/*
 * stream_sort.c - the external sort: run counts and merge passes around the
 * fan-in (1, fan-in, fan-in + 1, fan-in squared + 1 runs) with -r, -u, int64
 * extremes, duplicates across runs and an int64 key first met in the last block;
 * its temporary files gone after success, after an error and on SIGINT and
 * SIGTERM (the -o file left as it was), and a full temporary directory.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/gm.h"
#include "../core/stream/stream.h"
#include "helpers.h"
#include "stream_cases.h"

/* Sorts n keys of the shape with a budget giving `runs` runs of int32 (or int64)
 * keys, fan-in 4, and checks the output and the counts. */
static void external_sort(int want_runs, int want_passes, enum shape sh, int reverse, int unique)
{
    const int fan_in = 4;
    size_t budget = 64 << 10;
    gm_width w = sh == EXTREMES ? GM_I64 : GM_I32;
    int64_t chunk = gm_sort_chunk_keys(budget, w);
    int64_t n = chunk * (want_runs - 1) + 1 + (want_runs > 1 ? chunk / 2 : 0);
    if (sh == LATE_WIDE && want_runs > 1)
        n = chunk * (want_runs - 1) + 1; /* the last run holds the wide key alone */
    int64_t *v = keys_of(sh, n, (uint64_t)want_runs * 7 + sh);
    char *dir = scratch_dir(), *tmp = path_in(dir, "tmp"), *in = path_in(dir, "in");
    mkdir(tmp, 0700);
    write_keys(in, v, n);
    gm_config c = config();
    c.buffer_size = budget;
    c.batch_size = fan_in;
    c.tmpdir = tmp;
    c.reverse = reverse;
    c.unique = unique;
    char *out;
    gm_status st;
    int rc = run_op(GM_OP_SORT, &c, dir, &in, 1, &out, &st);
    cr_assert_eq(rc, GM_OK, "%s", st.msg);
    char *want = expected(v, n, reverse ? -1 : 1, unique);
    cr_assert(strcmp(out, want) == 0, "output differs (runs %d, shape %d)", want_runs, sh);
    int runs, passes;
    runs_and_passes(&runs, &passes);
    if (sh != LATE_WIDE) {
        cr_assert_eq(runs, want_runs == 1 ? 0 : want_runs, "runs: %s", said);
        cr_assert_eq(passes, want_passes, "passes: %s", said);
    }
    cr_assert_eq(entries(tmp), 0, "temporary files left behind");
    free(want);
    free(out);
    free(v);
    rm_rf(dir);
    free(dir);
    free(tmp);
    free(in);
}

Test(stream, external_sort_run_counts_around_the_fan_in, .timeout = 120)
{
    external_sort(1, 0, UNIFORM, 0, 0);          /* in memory: no runs */
    external_sort(2, 1, UNIFORM, 0, 0);
    external_sort(4, 1, UNIFORM, 0, 0);          /* fan-in */
    external_sort(5, 2, UNIFORM, 1, 0);          /* fan-in + 1 */
    external_sort(17, 3, UNIFORM, 0, 1);         /* fan-in squared + 1 */
}

Test(stream, external_sort_reverse_unique_extremes_duplicates, .timeout = 120)
{
    external_sort(5, 2, DUPLICATES, 0, 1);
    external_sort(5, 2, DUPLICATES, 1, 0);
    external_sort(6, 2, EXTREMES, 1, 1);
    external_sort(6, 2, EXTREMES, 0, 0);
}

Test(stream, int64_key_in_the_last_block, .timeout = 60)
{
    external_sort(1, 0, LATE_WIDE, 0, 0);
    external_sort(3, 1, LATE_WIDE, 1, 0);
    /* in memory with small blocks, and a merge */
    gm_input_test_block_size(4096);
    int64_t n = 20000;
    int64_t *v = keys_of(LATE_WIDE, n, 3);
    char *dir = scratch_dir(), *in = path_in(dir, "in");
    write_keys(in, v, n);
    gm_config c = config();
    char *out;
    gm_status st;
    cr_assert_eq(run_op(GM_OP_SORT, &c, dir, &in, 1, &out, &st), GM_OK, "%s", st.msg);
    char *want = expected(v, n, 1, 0);
    cr_assert(strcmp(out, want) == 0);
    cr_assert(strstr(said, "int64"), "%s", said);
    free(out);
    /* the sorted keys as a merge input, beside a narrow one */
    char *names[2] = { in, path_in(dir, "small") };
    write_keys(in, v, n);
    write_text(names[1], "-7\n0\n3\n");
    cr_assert_eq(run_op(GM_OP_MERGE, &c, dir, names, 2, &out, &st), GM_OK, "%s", st.msg);
    int64_t *all = malloc((size_t)(n + 3) * sizeof *all);
    memcpy(all, v, (size_t)n * sizeof *v);
    all[n] = -7;
    all[n + 1] = 0;
    all[n + 2] = 3;
    char *want2 = expected(all, n + 3, 1, 0);
    cr_assert(strcmp(out, want2) == 0);
    free(out);
    free(want);
    free(want2);
    free(all);
    free(v);
    free(names[1]);
    rm_rf(dir);
    free(dir);
    free(in);
}

Test(stream, temporary_files_removed_after_an_error, .timeout = 60)
{
    size_t budget = 64 << 10;
    int64_t n = gm_sort_chunk_keys(budget, GM_I32) * 5;
    int64_t *v = keys_of(UNIFORM, n, 9);
    char *dir = scratch_dir(), *tmp = path_in(dir, "tmp"), *in = path_in(dir, "in");
    mkdir(tmp, 0700);
    write_keys(in, v, n);
    FILE *f = fopen(in, "a");
    fputs("12x\n", f);
    fclose(f);
    gm_config c = config();
    c.buffer_size = budget;
    c.tmpdir = tmp;
    char *out;
    gm_status st;
    int rc = run_op(GM_OP_SORT, &c, dir, &in, 1, &out, &st);
    cr_assert_eq(rc, GM_EINPUT);
    char want[1024];
    snprintf(want, sizeof want, "%s:%lld: not an integer: '12x'", in, (long long)n + 1);
    cr_assert_str_eq(st.msg, want);
    cr_assert_null(out, "no output file");
    cr_assert_eq(entries(tmp), 0, "temporary files left behind");
    free(v);
    rm_rf(dir);
    free(dir);
    free(tmp);
    free(in);
}

/* A child sorts a pipe with a tiny budget; once runs exist the parent signals it. */
static void killed_while_spilling(int sig)
{
    char *dir = scratch_dir(), *tmp = path_in(dir, "tmp"), *out = path_in(dir, "out");
    mkdir(tmp, 0700);
    write_text(out, "precious\n");
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(fds[1]);
        dup2(fds[0], STDIN_FILENO);
        gm_config c = config();
        c.verbose = 0;
        c.buffer_size = 64 << 10;
        c.tmpdir = tmp;
        c.output = out;
        gm_status st;
        _exit(gm_run(GM_OP_SORT, &c, NULL, 0, &st));
    }
    close(fds[0]);
    feed_until_runs(fds[1], tmp, 2);
    cr_assert_geq(entries(tmp), 2, "no runs were spilled");
    kill(pid, sig);
    int status;
    waitpid(pid, &status, 0);
    close(fds[1]);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == sig, "status %d", status);
    cr_assert_eq(entries(tmp), 0, "temporary files left behind after signal %d", sig);
    cr_assert_eq(entries(dir), 2, "the -o temporary file is left behind");
    char *text = read_file(out, NULL);
    cr_assert_str_eq(text, "precious\n");
    free(text);
    free(out);
    rm_rf(dir);
    free(dir);
    free(tmp);
}

Test(stream, temporary_files_removed_on_sigint, .timeout = 60)
{
    killed_while_spilling(SIGINT);
}

Test(stream, temporary_files_removed_on_sigterm, .timeout = 60)
{
    killed_while_spilling(SIGTERM);
}

Test(stream, full_temporary_directory, .timeout = 60)
{
    if (geteuid() != 0)
        cr_skip_test("not root: cannot mount a small tmpfs");
    char *dir = scratch_dir(), *tmp = path_in(dir, "tmp"), *in = path_in(dir, "in");
    mkdir(tmp, 0700);
    if (mount("tmpfs", tmp, "tmpfs", 0, "size=128k") != 0)
        cr_skip_test("cannot mount a tmpfs here");
    size_t budget = 256 << 10;
    int64_t n = gm_sort_chunk_keys(budget, GM_I32) * 8; /* 512 KB of runs */
    int64_t *v = keys_of(UNIFORM, n, 11);
    write_keys(in, v, n);
    gm_config c = config();
    c.buffer_size = budget;
    c.tmpdir = tmp;
    char *out;
    gm_status st;
    int rc = run_op(GM_OP_SORT, &c, dir, &in, 1, &out, &st);
    int left = entries(tmp);
    umount(tmp);
    cr_assert_eq(rc, GM_EIO);
    cr_assert(strncmp(st.msg, "write failed: ", 14) == 0 && strstr(st.msg, tmp) &&
                  strstr(st.msg, ": No space left on device"),
              "%s", st.msg);
    cr_assert_null(out, "no output file");
    cr_assert_eq(left, 0, "temporary files left behind");
    free(v);
    rm_rf(dir);
    free(dir);
    free(tmp);
    free(in);
}
