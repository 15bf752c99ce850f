/*
 * records_files.c - the records path's inputs and output as files: -o naming an
 * input (the file replaced, or written in place where a second link holds it),
 * standard input named once and twice, a missing input that leaves -o's file as
 * it was, and 200 inputs with more runs than descriptors under ulimit -n 16.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/records/records.h"
#include "helpers.h"
#include "records_cases.h"

Test(records, output_onto_an_input)
{
    char *dir = scratch_dir();
    char *a = path_in(dir, "a"), *b = path_in(dir, "b"), *link2 = path_in(dir, "link");
    rng r;
    rng_seed(&r, 31);
    opts o = { { "-t,", "-k2,2n" } };
    gm_keyspec ks = spec_of(&o, 0);
    for (int in_place = 0; in_place <= 1; in_place++) {
        for (gm_op op = GM_OP_MERGE; op <= GM_OP_SORT; op++) {
            char *names[2], list[64];
            sorted_files(&r, dir, &o, 2, 3000, names, list, sizeof list);
            size_t want_len;
            char *want = sort_ref(dir, op == GM_OP_MERGE ? "-m -t, -k2,2n m0 m1" : "-t, -k2,2n m0 m1",
                                  &want_len);
            unlink(link2);
            if (in_place) /* a second link: the output is written in place */
                cr_assert_eq(link(names[1], link2), 0);
            knobs k = { .output = names[1], .budget = 64 << 10 };
            gm_status st;
            cr_assert_eq(records(op, &ks, &k, names, 2, &st), GM_OK, "%s", st.msg);
            assert_same_file(names[1], want, want_len, in_place ? "in place" : "replaced");
            free(want);
            free(names[0]);
            free(names[1]);
        }
    }
    free(a);
    free(b);
    free(link2);
    free(dir);
}

Test(records, standard_input)
{
    char *dir = scratch_dir();
    char *a = path_in(dir, "a"), *in = path_in(dir, "in"), *out = path_in(dir, "out");
    write_text(a, "b 2\na 9\n");
    write_text(in, "c 3\nd 1\ne 2");
    int fd = open(in, O_RDONLY);
    cr_assert(fd >= 0);
    cr_assert_eq(dup2(fd, STDIN_FILENO), STDIN_FILENO);
    close(fd);
    opts o = { { "-k2,2n" } };
    gm_keyspec ks = spec_of(&o, 0);
    knobs k = { .output = out };
    char *names[] = { "-", a, "-" }; /* a second "-" reads what the first left: nothing */
    gm_status st;
    cr_assert_eq(records(GM_OP_SORT, &ks, &k, names, 3, &st), GM_OK, "%s", st.msg);
    size_t len;
    char *got = read_file(out, &len);
    cr_assert_str_eq(got, "d 1\nb 2\ne 2\nc 3\na 9\n");
    free(got);
    free(a);
    free(in);
    free(out);
    free(dir);
}

Test(records, missing_input_leaves_the_output)
{
    char *dir = scratch_dir();
    char *a = path_in(dir, "a"), *missing = path_in(dir, "missing"), *out = path_in(dir, "out");
    write_text(a, "1\n");
    write_text(out, "keep\n");
    opts o = { { "-n" } };
    gm_keyspec ks = spec_of(&o, 0);
    knobs k = { .output = out };
    char *names[] = { a, missing };
    for (gm_op op = GM_OP_MERGE; op <= GM_OP_CHECK; op++) {
        gm_status st;
        cr_assert_eq(records(op, &ks, &k, names, 2, &st), GM_EIO);
        char want[4200];
        snprintf(want, sizeof want, "cannot read: %s: No such file or directory", missing);
        cr_assert_str_eq(st.msg, want);
        size_t len;
        char *kept = read_file(out, &len);
        cr_assert_str_eq(kept, "keep\n");
        free(kept);
    }
    free(a);
    free(missing);
    free(out);
    free(dir);
}

/* ---------------------------------------------------------------- descriptors */

/* In this process (a child of one thread), under a limit of nofile descriptors:
 * the merge of names, then their sort and their check, each output compared;
 * exits 0, or 1 with what failed written to fd. */
static _Noreturn void limited_steps(int fd, int nofile, const gm_keyspec *ks, const knobs *k,
                                    char **names, int n, const char *merged, size_t merged_len,
                                    const char *sorted, size_t sorted_len)
{
    static const gm_op ops[] = { GM_OP_MERGE, GM_OP_SORT, GM_OP_CHECK };
    static const char *what[] = { "merge", "sort", "check" };
    const char *wants[] = { merged, sorted, NULL };
    size_t lens[] = { merged_len, sorted_len, 0 };
    if (limit_descriptors(nofile, fd) != 0) {
        dprintf(fd, "setrlimit: %s", strerror(errno));
        _exit(1);
    }
    for (int i = 0; i < 3; i++) {
        gm_status st;
        if (records(ops[i], ks, k, names, n, &st) != GM_OK) {
            dprintf(fd, "%s: %s", what[i], st.msg);
            _exit(1);
        }
        if (!wants[i])
            continue;
        size_t len;
        char *got = read_file(k->output, &len);
        if (!got || len != lens[i] || memcmp(got, wants[i], len) != 0) {
            dprintf(fd, "%s: the output differs from sort's", what[i]);
            _exit(1);
        }
        free(got);
    }
    _exit(0);
}

Test(records, any_number_of_inputs_and_runs_under_a_small_descriptor_limit, .timeout = 60)
{
    /* 200 inputs and more runs than descriptors: inputs beyond a pass and every
     * run not being written or read are closed, and opened again by name */
    char *dir = scratch_dir();
    char *out = path_in(dir, "out"), *tmp = path_in(dir, "tmp");
    mkdir(tmp, 0700);
    rng r;
    rng_seed(&r, 61);
    opts o = { { "-t,", "-k2,2n" } };
    char *names[200], list[200 * 8];
    list[0] = '\0';
    for (int f = 0; f < 200; f++) {
        char name[16];
        snprintf(name, sizeof name, "s%03d", f);
        names[f] = gen_file(&r, dir, name, 40, ',', '\n');
        snprintf(list + strlen(list), sizeof list - strlen(list), " %s", name);
    }
    size_t want_len, merged_len;
    char args[2048];
    snprintf(args, sizeof args, "-t, -k2,2n%s", list);
    char *want = sort_ref(dir, args, &want_len);
    for (int f = 0; f < 200; f++) { /* each input sorted, for the merge */
        char cmd[256];
        snprintf(cmd, sizeof cmd, "LC_ALL=C sort -t, -k2,2n -o s%03d s%03d", f, f);
        cmd_result res = run_sh(dir, cmd);
        cmd_free(&res);
    }
    snprintf(args, sizeof args, "-m -t, -k2,2n%s", list);
    char *merged = sort_ref(dir, args, &merged_len);
    /* The limit holds in a child of one thread that closes what it inherits: the
     * test runner's threads open descriptors of theirs at moments of their own */
    gm_keyspec ks = spec_of(&o, 0);
    knobs k = { .output = out, .tmpdir = tmp, .budget = 64 << 10 };
    int err[2];
    cr_assert_eq(pipe(err), 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0)
        limited_steps(err[1], 16, &ks, &k, names, 200, merged, merged_len, want, want_len);
    close(err[1]);
    char why[512] = "";
    ssize_t got = read(err[0], why, sizeof why - 1);
    why[got > 0 ? got : 0] = '\0';
    close(err[0]);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "under ulimit -n 16: %s", why);
    cr_assert_eq(dir_entries(tmp), 0, "temporary files left");
    for (int f = 0; f < 200; f++)
        free(names[f]);
    free(want);
    free(merged);
    free(out);
    free(tmp);
    free(dir);
}
