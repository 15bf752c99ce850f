/*
 * test_mpi.c - gpumerge-mpi under `mpirun --oversubscribe -np 1..4` with CPU
 * ranks, differential against `LC_ALL=C sort`: sort, merge and check of
 * generated inputs (fields, numbers, ties) with -u, -r, -s and keys; skewed keys
 * (all equal, one hot key, sorted, reversed) under -s and -u, where equal keys
 * are split across ranks; a budget that sends every rank's share through
 * temporary runs and the exchange through many rounds; inputs smaller than the number of ranks and empty
 * ones (ranks with nothing); standard input (rank 0 alone); errors on one rank
 * (a missing input, a disorder in a merge input on the last rank's slice, a
 * disorder found by check in a later rank's range with its FILE:LINE, a full
 * device), each reported once, exit 2 (1 for check's disorder) and -o left as
 * it was; -v's summary; --strict as one process has it (canonical output, the
 * bad line's FILE:LINE); --device=gpu as one process has it
 * (an error on a machine without a GPU, the same bytes on one with).
 *
 * $GPUMERGE_MPI names the binary (the Makefile sets it when mpicc was found);
 * without it, or without mpirun, every test is skipped and says why.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

#define MPIRUN "mpirun --allow-run-as-root --oversubscribe -q --bind-to none"

/* The binary under test, or a skip when there is none to run. */
static const char *mpi_bin(void)
{
    const char *b = getenv("GPUMERGE_MPI");
    if (!b || !*b)
        cr_skip_test("gpumerge-mpi not built (no mpicc): make openmpi installs Open MPI");
    cmd_result r = run_sh(NULL, "command -v mpirun");
    int have = r.status == 0;
    cmd_free(&r);
    if (!have)
        cr_skip_test("no mpirun: make openmpi installs Open MPI");
    return b;
}

/* Runs `mpirun -np N gpumerge-mpi ARGS` in dir. */
static cmd_result mpi_run(const char *dir, int np, const char *args)
{
    char *cmd;
    /* Open MPI's session directory in dir: concurrent mpiruns of one user race
     * on a shared one in /tmp */
    cr_assert(asprintf(&cmd, "OMPI_MCA_orte_tmpdir_base=\"$PWD\" " MPIRUN " -np %d %s %s %s", np,
                       mpi_bin(), strstr(args, "--device") ? "" : "--device=cpu", args) > 0);
    cmd_result r = run_sh(dir, cmd);
    free(cmd);
    return r;
}

/* The reference's bytes: `LC_ALL=C sort ARGS` in dir. */
static cmd_result ref_run(const char *dir, const char *args)
{
    char *cmd;
    cr_assert(asprintf(&cmd, "LC_ALL=C sort %s", args) > 0);
    cmd_result r = run_sh(dir, cmd);
    free(cmd);
    return r;
}

static void same_output(const char *dir, int np, const char *gm_args, const char *sort_args)
{
    cmd_result g = mpi_run(dir, np, gm_args), s = ref_run(dir, sort_args);
    cr_assert_eq(g.status, 0, "np %d %s: status %d: %s", np, gm_args, g.status, g.err);
    cr_assert_eq(s.status, 0, "sort %s: %s", sort_args, s.err);
    cr_assert(g.out_len == s.out_len && memcmp(g.out, s.out, s.out_len) == 0,
              "np %d %s: %zu bytes, sort %s: %zu bytes", np, gm_args, g.out_len, sort_args,
              s.out_len);
    cmd_free(&g);
    cmd_free(&s);
}

/* Lines of "KEY,WORD,NUMBER" with many ties and some odd numbers. */
static void fields_file(const char *dir, const char *name, int n, uint64_t seed)
{
    static const char *const words[] = { "a", "b", "", "zz", "-", "1e3", "x y" };
    static const char *const nums[] = { "-0", "+1", "1.50", "007", ".5", "-.5", "2K", "abc" };
    rng r;
    rng_seed(&r, seed);
    char *path = path_in(dir, name);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    for (int i = 0; i < n; i++) {
        uint64_t c = rng_next(&r);
        if (c % 11 == 0)
            fprintf(f, "%s,%s,%lld\n", nums[c % 8], words[(c >> 8) % 7],
                    (long long)rng_range(&r, -50, 50));
        else
            fprintf(f, "%lld,%s,%lld\n", (long long)rng_range(&r, -30, 30), words[(c >> 8) % 7],
                    (long long)rng_range(&r, -1000000, 1000000));
    }
    fclose(f);
    free(path);
}

static void shell(const char *dir, const char *cmd)
{
    cmd_result r = run_sh(dir, cmd);
    cr_assert_eq(r.status, 0, "%s: %s", cmd, r.err);
    cmd_free(&r);
}

/* How many times text occurs in s. */
static int count(const char *s, const char *text)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, text)) != NULL; p++)
        n++;
    return n;
}

/* ---------------------------------------------------------------- sort */

Test(mpi, sort_like_sort, .timeout = 120)
{
    mpi_bin();
    char *dir = scratch_dir();
    fields_file(dir, "a", 3000, 1);
    fields_file(dir, "b", 1000, 2);
    shell(dir, "cut -d, -f1,2 a | tr '\\n' '\\0' > z");
    static const char *const cases[][2] = {
        { "sort a b", "-n a b" },
        { "sort -u a b", "-n -u a b" },
        { "sort -r -t, -k2,2 -k1,1n a b", "-r -t, -k2,2 -k1,1n a b" },
        { "sort -s -t, -k1,1n a b", "-s -t, -k1,1n a b" },
        { "sort -u -t, -k1,1n b a", "-u -t, -k1,1n b a" },
        { "-g -r -s -t, -k3,3 a", "-g -r -s -t, -k3,3 a" },
        { "sort -z -u z", "-z -n -u z" },
        { "sort -z -t, -k2,2 -k1,1n z", "-z -t, -k2,2 -k1,1n z" },
    };
    for (int np = 1; np <= 4; np++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            if (np != 1 || c < 2)
                same_output(dir, np, cases[c][0], cases[c][1]);
}

Test(mpi, sort_skewed_keys, .timeout = 120)
{
    mpi_bin();
    char *dir = scratch_dir();
    /* all equal keys, one hot key among others, sorted, reversed: each line
     * carries its input position after the key, so that -s shows stability */
    shell(dir, "awk 'BEGIN{for(i=0;i<2000;i++) print 5, i}' > equal;"
               "awk 'BEGIN{srand(7); for(i=0;i<2000;i++) print (rand()<0.7 ? 42 : int(rand()*100)), i}' > hot;"
               "seq 1 2000 | awk '{print $1, NR}' > sorted;"
               "seq 2000 -1 1 | awk '{print $1, NR}' > reversed");
    static const char *const files[] = { "equal", "hot", "sorted", "reversed" };
    for (int np = 2; np <= 4; np += 2)
        for (int f = 0; f < 4; f++) {
            char gm[128], ref[128];
            snprintf(gm, sizeof gm, "sort -s -k1,1n %s", files[f]);
            snprintf(ref, sizeof ref, "-s -k1,1n %s", files[f]);
            same_output(dir, np, gm, ref);
            snprintf(gm, sizeof gm, "sort -u -k1,1n %s", files[f]);
            snprintf(ref, sizeof ref, "-u -k1,1n %s", files[f]);
            same_output(dir, np, gm, ref);
        }
}

Test(mpi, sort_external_bounded_rounds_and_output_file, .timeout = 120)
{
    mpi_bin();
    char *dir = scratch_dir();
    fields_file(dir, "a", 150000, 3);
    /* -S 1M: each rank's share sorted in temporary runs, exchanged 64 KiB per
     * destination in many rounds of messages */
    cmd_result g = mpi_run(dir, 3, "sort -S 1M -v -t, -k2,2 -k3,3n -o out a");
    cr_assert_eq(g.status, 0, "%s", g.err);
    cr_assert(strstr(g.err, "gpumerge: mpi      sort on 3 ranks"), "%s", g.err);
    cr_assert(strstr(g.err, "gpumerge: exchange "), "%s", g.err);
    /* under a megabyte a source: by messages */
    cr_assert(strstr(g.err, "0 of 6 sources read in place by the merge"), "%s", g.err);
    cr_assert(!strstr(g.err, "by messages 0 bytes"), "%s", g.err);
    cr_assert(strstr(g.err, "gpumerge: total "), "%s", g.err);
    cr_assert_eq(count(g.err, "gpumerge: rank "), 3, "%s", g.err);
    cr_assert_eq(count(g.err, "(0 temporary runs)"), 0, "%s", g.err);
    cr_assert_eq(count(g.err, "(1 rounds)"), 0, "%s", g.err);
    cmd_free(&g);
    shell(dir, "LC_ALL=C sort -t, -k2,2 -k3,3n a | cmp - out");
    /* an existing -o keeps its mode */
    shell(dir, "chmod 640 out");
    cmd_result m = mpi_run(dir, 2, "sort -r -o out out");
    cr_assert_eq(m.status, 0, "%s", m.err);
    cmd_free(&m);
    shell(dir, "test \"$(stat -c %a out)\" = 640 && LC_ALL=C sort -t, -k2,2 -k3,3n a | "
               "LC_ALL=C sort -n -r | cmp - out");
    shell(dir, "test -z \"$(ls -A | grep gpumerge-mpi)\""); /* no temporary file left */
}

Test(mpi, sort_reads_sources_on_its_host_in_place, .timeout = 120)
{
    mpi_bin();
    char *dir = scratch_dir();
    fields_file(dir, "a", 1500000, 5); /* about 19 MB: over a megabyte from every source */
    for (int np = 2; np <= 3; np++) {
        cmd_result g = mpi_run(dir, np, "sort -v -t, -k2,2 -k1,1n -o out a");
        cr_assert_eq(g.status, 0, "%s", g.err);
        char want[80];
        snprintf(want, sizeof want, "%d of %d sources read in place by the merge",
                 np * (np - 1), np * (np - 1));
        cr_assert(strstr(g.err, want), "%s", g.err);
        cr_assert(strstr(g.err, "by messages 0 bytes a rank in 0 rounds") &&
                      strstr(g.err, "; waiting for the spools' pages "),
                  "%s", g.err);
        cmd_free(&g);
        shell(dir, "LC_ALL=C sort -t, -k2,2 -k1,1n a | cmp - out");
        /* spools in -T rather than in memory (no pages made ahead): the same */
        cmd_result t = mpi_run(dir, np, "sort -S 8M -T . -v -t, -k2,2 -k1,1n -o tout a");
        cr_assert_eq(t.status, 0, "%s", t.err);
        cr_assert(strstr(t.err, want), "%s", t.err);
        cmd_free(&t);
        shell(dir, "cmp out tout && test -z \"$(ls -A | grep gpumerge-mpi)\"");
        /* the integer path's ranges too (a GPU rank's way, here on the cores) */
        shell(dir, "cut -d, -f1 a | grep -E '^-?[1-9][0-9]*$|^0$' > ints");
        cmd_result i = mpi_run(dir, np, "sort -o iout ints");
        cr_assert_eq(i.status, 0, "%s", i.err);
        cmd_free(&i);
        shell(dir, "LC_ALL=C sort -n ints | cmp - iout");
        /* -u's seed, the last line of the ranks before, read in place too */
        same_output(dir, np, "sort -u -t, -k2,2 -k1,1n a", "-u -t, -k2,2 -k1,1n a");
        same_output(dir, np, "sort -u -r ints", "-u -n -r ints");
    }
}

Test(mpi, sort_tiny_and_empty_inputs, .timeout = 120)
{
    mpi_bin();
    char *dir = scratch_dir();
    shell(dir, ": > empty; printf '3\\n1\\n2' > tiny");
    for (int np = 2; np <= 4; np++) {
        same_output(dir, np, "sort tiny empty tiny", "-n tiny empty tiny");
        same_output(dir, np, "sort empty", "-n empty");
        same_output(dir, np, "sort -u empty tiny", "-n -u empty tiny");
    }
}

Test(mpi, standard_input_on_rank_zero, .timeout = 60)
{
    mpi_bin();
    char *dir = scratch_dir();
    fields_file(dir, "a", 500, 4);
    same_output(dir, 3, "sort -t, -k3,3n - < a", "-t, -k3,3n a");
}

/* ---------------------------------------------------------------- merge */

Test(mpi, merge_like_sort, .timeout = 120)
{
    mpi_bin();
    char *dir = scratch_dir();
    fields_file(dir, "a", 3000, 5);
    fields_file(dir, "b", 2000, 6);
    shell(dir, "LC_ALL=C sort -t, -k1,1n a > sa; LC_ALL=C sort -t, -k1,1n b > sb;"
               "yes 3,x | head -500 > sc; : > empty");
    for (int np = 1; np <= 4; np++) {
        same_output(dir, np, "merge -t, -k1,1n sa sb sc empty", "-m -t, -k1,1n sa sb sc empty");
        if (np > 1) {
            same_output(dir, np, "merge -s -t, -k1,1n sb sc sa", "-m -s -t, -k1,1n sb sc sa");
            same_output(dir, np, "merge -u -t, -k1,1n sa sc sb", "-m -u -t, -k1,1n sa sc sb");
        }
    }
}

Test(mpi, merge_disorder_on_one_rank, .timeout = 60)
{
    mpi_bin();
    char *dir = scratch_dir();
    /* line 4000 of 5000 breaks the order: the last rank's slice holds it */
    shell(dir, "seq 1 5000 | sed '4000s/.*/1/' > bad; seq 1 100 > good; echo keep > out");
    cmd_result g = mpi_run(dir, 3, "merge -o out good bad");
    cr_assert_eq(g.status, 2);
    cr_assert(strstr(g.err, "gpumerge: bad:4000: disorder: 1\n"), "%s", g.err);
    cr_assert_eq(count(g.err, "gpumerge:"), 1, "%s", g.err);
    cmd_free(&g);
    shell(dir, "test \"$(cat out)\" = keep");
}

/* ---------------------------------------------------------------- check */

Test(mpi, check_like_sort, .timeout = 120)
{
    mpi_bin();
    char *dir = scratch_dir();
    shell(dir, "seq 1 3000 > ok; seq 1 3000 | sed '2500s/.*/7/' > bad;"
               "seq 1 3000 | sed '1500s/.*/1499/' > dup");
    for (int np = 2; np <= 4; np++) {
        cmd_result g = mpi_run(dir, np, "check ok");
        cr_assert_eq(g.status, 0, "%s", g.err);
        cmd_free(&g);
        g = mpi_run(dir, np, "check ok bad");
        cr_assert_eq(g.status, 1);
        cr_assert_str_eq(g.err, "gpumerge: bad:2500: disorder: 7\n");
        cmd_free(&g);
        g = mpi_run(dir, np, "check dup");
        cr_assert_eq(g.status, 0, "%s", g.err);
        cmd_free(&g);
        g = mpi_run(dir, np, "check -u dup");
        cr_assert_eq(g.status, 1);
        cr_assert_str_eq(g.err, "gpumerge: dup:1500: disorder: 1499\n");
        cmd_free(&g);
        cmd_result s = ref_run(dir, "-c -u -n dup");
        cr_assert_str_eq(s.err, "sort: dup:1500: disorder: 1499\n");
        cmd_free(&s);
    }
}

/* ---------------------------------------------------------------- errors */

Test(mpi, errors_reported_once, .timeout = 60)
{
    mpi_bin();
    char *dir = scratch_dir();
    shell(dir, "seq 1 100 > a; echo keep > out");
    cmd_result g = mpi_run(dir, 3, "sort -o out a missing");
    cr_assert_eq(g.status, 2);
    cr_assert_str_eq(g.err, "gpumerge: cannot read: missing: No such file or directory\n");
    cmd_free(&g);
    shell(dir, "test \"$(cat out)\" = keep");
    g = mpi_run(dir, 3, "sort -o no/such/dir/out a");
    cr_assert_eq(g.status, 2);
    cr_assert_str_eq(g.err, "gpumerge: open failed: no/such/dir/out: No such file or directory\n");
    cmd_free(&g);
    g = mpi_run(dir, 2, "sort -o /dev/full a");
    cr_assert_eq(g.status, 2);
    cr_assert_str_eq(g.err, "gpumerge: write failed: /dev/full: No space left on device\n");
    cmd_free(&g);
    g = mpi_run(dir, 2, "sort --no-such-option a");
    cr_assert_eq(g.status, 2);
    cr_assert_eq(count(g.err, "unrecognized option"), 1, "%s", g.err);
    cmd_free(&g);
}

Test(mpi, device_gpu_as_one_process, .timeout = 60)
{
    mpi_bin();
    char *dir = scratch_dir();
    shell(dir, "seq 100 -1 1 > a");
    /* whatever this machine has: the status and message one process gives */
    char *cmd;
    cr_assert(asprintf(&cmd, "%s sort --device=gpu a", gpumerge_path()) > 0);
    cmd_result one = run_sh(dir, cmd), g = mpi_run(dir, 2, "sort --device=gpu a");
    free(cmd);
    cr_assert_eq(g.status, one.status, "%s / %s", g.err, one.err);
    if (one.status != 0)
        cr_assert_str_eq(g.err, one.err);
    else
        cr_assert(g.out_len == one.out_len && memcmp(g.out, one.out, one.out_len) == 0);
    cmd_free(&one);
    cmd_free(&g);
}

/* ---------------------------------------------------------------- --strict */

Test(mpi, strict_as_one_process, .timeout = 120)
{
    mpi_bin();
    char *dir = scratch_dir();
    /* canonical output from other spellings; a bad line in the last rank's share */
    shell(dir, "for i in $(seq 300); do printf '3\\n007\\n+5\\n-0\\n2\\n'; done > odd;"
               "seq 1 5000 > sq; sed '4000s/.*/x1/' sq > bad; echo keep > out");
    static const char *const cmds[] = { "sort --strict odd sq", "sort --strict -u -r sq odd",
                                         "merge --strict sq sq", "check --strict sq",
                                         "sort --strict -o out sq odd bad",
                                         "merge --strict -o out sq bad", "check --strict bad" };
    for (int np = 2; np <= 3; np++)
        for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
            char *one;
            cr_assert(asprintf(&one, "%s --device=cpu %s", gpumerge_path(), cmds[c]) > 0);
            cmd_result g = mpi_run(dir, np, cmds[c]), r = run_sh(dir, one);
            free(one);
            cr_assert_eq(g.status, r.status, "np %d %s: %s / %s", np, cmds[c], g.err, r.err);
            cr_assert_str_eq(g.err, r.err, "np %d %s", np, cmds[c]);
            cr_assert(g.out_len == r.out_len && memcmp(g.out, r.out, r.out_len) == 0,
                      "np %d %s", np, cmds[c]);
            cmd_free(&g);
            cmd_free(&r);
        }
    /* -o's file made at the start of the sort is gone with the failed run */
    shell(dir, "test \"$(cat out)\" = keep && test -z \"$(ls -A | grep gpumerge-mpi)\"");
}
