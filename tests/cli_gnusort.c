/*
 * cli_gnusort.c - gpumerge against GNU sort on random inputs, byte for byte:
 * sort (-r, -u, several files, standard input), merge (-r, -u, many inputs,
 * some empty), check's disorder message (also where the integer path hands a
 * check over), -o files written through the shared mapping on four threads, the
 * text orders and -V on names built for its prefix, and a reader that goes away
 * (SIGPIPE, or a write error where SIGPIPE is ignored).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_cases.h"
#include "helpers.h"

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

/* A check whose input turns from integers to other numbers after many of them:
 * the records path checks the rest from the last line the integer path took,
 * whether a block of several chunks was declined or not, as sort -c -n does. */
Test(cli, check_goes_on_from_the_integer_path)
{
    static const char *const tails[] = { "20000.5", "20000.5\n3", "19999.5" };
    char *dir = scratch_dir();
    for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
        char *make;
        if (asprintf(&make, "(seq 1 20000; printf '%s\n') > in", tails[i]) < 0)
            abort();
        cmd_result t = run_sh(dir, make);
        cr_assert_eq(t.status, 0, "%s", t.err);
        cmd_free(&t);
        free(make);
        cmd_result ours = gm(dir, "check", "--parallel=4 in");
        cmd_result theirs = run_sh(dir, "LC_ALL=C sort -c -n in");
        cr_assert_eq(ours.status, theirs.status, "tail %s: exit %d, sort's %d: %s", tails[i],
                     ours.status, theirs.status, ours.err);
        cr_assert_str_eq(ours.err + (*ours.err ? strlen("gpumerge") : 0),
                         theirs.err + (*theirs.err ? strlen("sort") : 0), "tail %s", tails[i]);
        cmd_free(&ours);
        cmd_free(&theirs);
    }
    free(dir);
}

/* sort's obsolete -y is taken and ignored, as sort takes it. */
Test(cli, obsolete_y_is_ignored)
{
    char *dir = scratch_dir(), *in = path_in(dir, "in"), *nums = path_in(dir, "nums");
    write_text(in, "b,3\na,1\nc,2\n10\n");
    write_text(nums, "3\n1.5\n2\n10\n");
    same_as_sort(dir, "sort", "-y -t, -k2,2n in", "-y -t, -k2,2n in");
    same_as_sort(dir, "sort", "-y nums", "-y -n nums");
    free(in);
    free(nums);
    free(dir);
}

/* Every order of sort on lines built to trip them (cases, blanks, control
 * bytes, month names, versions, numbers with suffixes), in one chunk and in
 * runs of -S 64K, byte for byte as LC_ALL=C sort. */
Test(cli, text_orders_match_gnu_sort, .timeout = 300)
{
    static const char *const atoms[] = { "a", "B", "c", "Z", "1", "9", "0", " ", "\t", "-", ".",
                                         "~", "_", "\xe9", "\x01", "\x7f", ",", ":", "jan",
                                         "FEB", "Mar", "dec", "x1.10", "x1.9", "1.2~rc", "10K",
                                         "2M", "e5" };
    rng g;
    rng_seed(&g, 43);
    text t = { 0 };
    for (int i = 0; i < 20000; i++) {
        for (int n = (int)rng_range(&g, 0, 6); n > 0; n--)
            text_puts(&t, atoms[rng_range(&g, 0, 27)]);
        text_puts(&t, ",");
        for (int n = (int)rng_range(&g, 0, 4); n > 0; n--)
            text_puts(&t, atoms[rng_range(&g, 0, 27)]);
        text_puts(&t, "\n");
    }
    char *dir = scratch_dir(), *in = path_in(dir, "in"), *seed = path_in(dir, "seed");
    write_file(in, t.buf, t.n);
    write_text(seed, "sixteen bytes or more of seed");
    static const char *const orders[] = {
        "-f", "-d", "-i", "-M", "-V", "-fd", "-fi", "-r -f", "-b -f", "-R --random-source=seed",
        "-k2 -f", "-t, -k2,2f -k1,1", "-t, -k1,1M -k2,2V", "-t, -k2,2d -s", "-t, -k1,1fr -u",
        "-f -u", "-M -u", "-V -u", "-fM", "-fV", "-dR --random-source=seed", "-iV",
        "-k1.2,1.4f", "-t, -k2b,2dr", "--sort=version", "--sort=month -r", "-s -M", "-fn",
    };
    for (size_t i = 0; i < sizeof orders / sizeof orders[0]; i++)
        for (int small = 0; small < 2; small++) {
            char *args, *sort_args;
            if (asprintf(&args, "%s%s in", orders[i], small ? " -S 64K" : "") < 0 ||
                asprintf(&sort_args, "%s in", orders[i]) < 0)
                abort();
            same_as_sort(dir, "sort", args, sort_args);
            free(args);
            free(sort_args);
        }
    free(t.buf);
    free(in);
    free(seed);
    free(dir);
}

/* -V on names built to trip its prefix (leading zeros, digit runs past 15
 * digits, '~', file suffixes, hidden and special names, high bytes), whole and
 * as keys of fields, in one chunk and in runs of -S 64K, as LC_ALL=C sort. */
Test(cli, version_names_match_gnu_sort, .timeout = 300)
{
    static const char *const atoms[] = { "pkg-", "1", "2", "10", "007", "0", ".", "..", "~",
                                         "~rc1", ".tar.gz", ".txt", ".a~", "-", "_", "x",
                                         "Z", "12345678901234567", "123456789012345",
                                         "99999999999999", "\xe9", "a.", ".1" };
    enum { NATOMS = sizeof atoms / sizeof atoms[0] };
    rng g;
    rng_seed(&g, 47);
    text t = { 0 };
    for (int i = 0; i < 20000; i++) {
        for (int f = 0; f < 3; f++) {
            if (f)
                text_puts(&t, rng_range(&g, 0, 3) ? "," : " ");
            if (rng_range(&g, 0, 8) == 0)
                text_puts(&t, rng_range(&g, 0, 2) ? "." : "..");
            else
                for (int n = (int)rng_range(&g, 0, 6); n > 0; n--)
                    text_puts(&t, atoms[rng_range(&g, 0, NATOMS - 1)]);
        }
        text_puts(&t, "\n");
    }
    char *dir = scratch_dir(), *in = path_in(dir, "in");
    write_file(in, t.buf, t.n);
    static const char *const orders[] = {
        "-V", "-V -r", "-V -u", "-k2,2V", "-t, -k3V", "-t, -k2,2V -k1,1", "-t, -k3Vr -k1,1V",
        "-s -t, -k2,2V", "-b -k2V -u",
    };
    for (size_t i = 0; i < sizeof orders / sizeof orders[0]; i++)
        for (int small = 0; small < 2; small++) {
            char *args, *sort_args;
            if (asprintf(&args, "%s%s in", orders[i], small ? " -S 64K" : "") < 0 ||
                asprintf(&sort_args, "%s in", orders[i]) < 0)
                abort();
            same_as_sort(dir, "sort", args, sort_args);
            free(args);
            free(sort_args);
        }
    free(t.buf);
    free(in);
    free(dir);
}

/* ---------------------------------------------------------------- pipes */

/* "{ CMD; echo $? >status; } | head -n 1" in dir: CMD's status, its standard
 * error in *err (malloc'd). */
static int into_head(const char *dir, const char *cmd, char **err)
{
    char *line;
    if (asprintf(&line, "{ %s 2>err; echo $? >status; } | head -n 1 >/dev/null", cmd) < 0)
        abort();
    cmd_result r = run_sh(dir, line);
    cr_assert_eq(r.status, 0, "%s: %s", line, r.err);
    char *status_path = path_in(dir, "status"), *err_path = path_in(dir, "err");
    char *status = read_file(status_path, NULL);
    *err = read_file(err_path, NULL);
    int code = atoi(status);
    cmd_free(&r);
    free(status), free(status_path), free(err_path), free(line);
    return code;
}

/* Inputs big enough to fill a pipe many times over in a new folder (returned,
 * malloc'd), and in cmds (NULL-ended) the commands that write them into head:
 * sort and merge of integers and of records by a key, -u, -o /dev/stdout,
 * standard input, under both names (gpusort a link in the folder). */
static char *pipe_cases(const char *cmds[8])
{
    static const char *const rest[] = {
        "sort big", "merge sorted sorted", "-t, -k2 rec", "-u -o /dev/stdout big",
        "sort - < big",
    };
    static char lines[7][PATH_MAX + 64];
    rng r;
    rng_seed(&r, 23);
    char *dir = scratch_dir(), *bin = realpath(gpumerge_path(), NULL), *link;
    cr_assert_not_null(bin, "no %s", gpumerge_path());
    random_file(&r, dir, "big", 2000000, 0, 0);
    random_file(&r, dir, "sorted", 1000000, 0, 1);
    if (asprintf(&link, "awk '{ print \"x,\" $1 }' big > rec && "
                       "awk '{ print \"x,\" $1 }' sorted > recs && ln -s '%s' gpusort", bin) < 0)
        abort();
    cmd_result t = run_sh(dir, link);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cmd_free(&t);
    for (int i = 0; i < 5; i++)
        snprintf(lines[i], sizeof lines[i], "'%s' %s %s", bin, gpumerge_device_arg(), rest[i]);
    snprintf(lines[5], sizeof lines[5], "./gpusort %s -t, -k2 rec", gpumerge_device_arg());
    snprintf(lines[6], sizeof lines[6], "./gpusort %s -m -t, -k2n recs recs", gpumerge_device_arg());
    for (int i = 0; i < 7; i++)
        cmds[i] = lines[i];
    cmds[7] = NULL;
    free(link), free(bin);
    return dir;
}

/* A reader that goes away kills gpumerge by SIGPIPE, silently, as it kills sort
 * (status 128 + 13), whichever the path. */
Test(cli, closed_pipe_ends_by_sigpipe, .timeout = 300)
{
    signal(SIGPIPE, SIG_DFL); /* what the commands inherit */
    const char *cmds[8];
    char *err, *dir = pipe_cases(cmds);
    cr_assert_eq(into_head(dir, "LC_ALL=C sort big", &err), 141, "sort: %s", err);
    free(err);
    for (int i = 0; cmds[i]; i++) {
        int status = into_head(dir, cmds[i], &err);
        cr_expect_eq(status, 141, "%s: status %d", cmds[i], status);
        cr_expect_str_eq(err, "", "%s said something", cmds[i]);
        free(err);
    }
    free(dir);
}

/* Where SIGPIPE is ignored (trap '' PIPE), the closed pipe is a write error, as
 * for sort: the message and status 2. sort 9.1 quotes 'standard output' and adds
 * a "write error" line; gpumerge words it as its other write errors. */
Test(cli, closed_pipe_with_sigpipe_ignored_is_a_write_error, .timeout = 300)
{
    signal(SIGPIPE, SIG_IGN);
    const char *cmds[8];
    char *err, *dir = pipe_cases(cmds);
    cr_assert_eq(into_head(dir, "LC_ALL=C sort big", &err), 2, "sort: %s", err);
    cr_assert(strncmp(err, "sort: write failed: 'standard output': Broken pipe\n", 51) == 0,
              "sort said %s", err);
    free(err);
    for (int i = 0; cmds[i]; i++) {
        int status = into_head(dir, cmds[i], &err);
        const char *shown = strstr(cmds[i], "/dev/stdout") ? "/dev/stdout" : "standard output";
        char want[128];
        snprintf(want, sizeof want, "gpumerge: write failed: %s: Broken pipe\n", shown);
        cr_expect_eq(status, 2, "%s: status %d", cmds[i], status);
        cr_expect_str_eq(err, want, "%s", cmds[i]);
        free(err);
    }
    signal(SIGPIPE, SIG_DFL);
    free(dir);
}
