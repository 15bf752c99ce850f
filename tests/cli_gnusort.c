/*
 * cli_gnusort.c - gpumerge against GNU sort on random inputs, byte for byte:
 * sort (-r, -u, several files, standard input), merge (-r, -u, many inputs,
 * some empty), check's disorder message (also where the integer path hands a
 * check over), -o files written through the shared mapping on four threads, the
 * text orders, and where no order is named the one line said of a line with no
 * number (FILE:LINE, once, output and status still sort -n's) and where it is not
 * said (an order named, gpusort beside $GPUMERGE, numbers and blanks only, -C).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
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

/* ------------------------------------------------------ the default order */

/* What gpumerge says of a line with no number where no order is named. */
#define NO_NUMBER(at, what)                                                                \
    "gpumerge: " at ": no number in this " what "; lines are ordered by -n, gpumerge's "   \
    "default (name an order such as -n, -d or -f, or use gpusort for sort's byte order)\n"
#define IN_LINE(at) NO_NUMBER(at, "line")
#define IN_KEY(at) NO_NUMBER(at, "line's key")

typedef struct {
    const char *ours;   /* after "gpumerge SUBCOMMAND" (or gpusort's arguments) */
    const char *theirs; /* LC_ALL=C sort's arguments */
    const char *err;    /* gpumerge's standard error, whole */
} default_case;

/* The inputs of the default order's cases: numbers with a line of text among
 * them (after 200000 integers, which the integer path takes before it hands the
 * rest over, or under -S 64K, which writes runs), sorted ones for -m and -c, keys
 * with and without numbers, blank lines, and the forms -n reads as numbers. */
static char *default_inputs(void)
{
    char *dir = scratch_dir();
    cmd_result t = run_sh(dir, "printf '3\\nb\\n1\\na\\n' > text && "
                               "printf '3\\n1\\n2\\n' > nums && printf '1\\n2\\n3\\n' > snums && "
                               "printf -- '-1\\nabc\\n1\\n2\\n' > stext && "
                               "printf '1\\n\\n  \\n\\t\\n-2\\n' > blank && "
                               "printf ' -.5\\n  7\\n.5\\n-0\\n0x\\n' > forms && "
                               "printf '1\\n+5\\n' > plus && "
                               "printf 'x,3\\ny,\\nz,b\\nw,1\\n' > keyed && "
                               "(seq 1 200000; echo abc; echo 5) > far && "
                               "(seq -200000 -1; echo ' .x'; seq 1 3) > sfar && "
                               "(seq 1 30000 | sed 's/^/k,/'; echo k,x; echo k,7) > farkey");
    cr_assert_eq(t.status, 0, "%s", t.err);
    cmd_free(&t);
    return dir;
}

/* Runs each case, gpumerge (through gm(), or gpusort beside it when sub is NULL)
 * against sort: the same output and exit status, and its standard error. */
static void run_default_cases(const char *dir, const char *sub, const default_case *cases,
                              size_t n)
{
    char *gpusort = strdup(gpumerge_path()), *slash = strrchr(gpusort, '/');
    char *at = slash ? (slash[1] = '\0', gpusort) : "";
    for (size_t i = 0; i < n; i++) {
        const default_case *c = &cases[i];
        cmd_result ours;
        if (sub) {
            ours = gm(dir, sub, c->ours);
        } else {
            char *cmd;
            if (asprintf(&cmd, "'%sgpusort' %s", at, c->ours) < 0)
                abort();
            ours = run_sh(dir, cmd);
            free(cmd);
        }
        char *cmd;
        if (asprintf(&cmd, "LC_ALL=C sort %s", c->theirs) < 0)
            abort();
        cmd_result theirs = run_sh(dir, cmd);
        cr_expect_eq(ours.status, theirs.status, "%s: exit %d, sort's %d: %s", c->ours,
                     ours.status, theirs.status, ours.err);
        cr_expect(ours.out_len == theirs.out_len && memcmp(ours.out, theirs.out, ours.out_len) == 0,
                  "%s: output differs from sort %s", c->ours, c->theirs);
        cr_expect_str_eq(ours.err, c->err, "%s", c->ours);
        cmd_free(&ours);
        cmd_free(&theirs);
        free(cmd);
    }
    free(gpusort);
}

/* Where no order is named, the first line whose key holds no number is named
 * once, FILE:LINE as sort names lines, whichever input it is in and however far
 * in; output and status stay sort -n's. */
Test(cli, default_order_names_a_line_without_a_number, .timeout = 120)
{
    static const default_case sorts[] = {
        { "text", "-n text", IN_LINE("text:2") },
        { "nums text", "-n nums text", IN_LINE("text:2") },
        { "< text", "-n < text", IN_LINE("-:2") },
        { "nums - < text", "-n nums - < text", IN_LINE("-:2") },
        { "text text nums", "-n text text nums", IN_LINE("text:2") },
        { "plus", "-n plus", IN_LINE("plus:2") },
        { "blank text", "-n blank text", IN_LINE("text:2") },
        { "far", "-n far", IN_LINE("far:200001") },
        { "< far", "-n far", IN_LINE("-:200001") },
        { "-S 64K far", "-n far", IN_LINE("far:200001") },
        { "-S 64K < far", "-n far", IN_LINE("-:200001") },
        { "--device=cpu text", "-n text", IN_LINE("text:2") },
        { "-t, -k2,2 keyed", "-n -t, -k2,2 keyed", IN_KEY("keyed:3") },
        { "-t, -k2,2 -S 64K farkey", "-n -t, -k2,2 farkey", IN_KEY("farkey:30001") },
        { "-t, -k2,2 -k1,1r farkey", "-t, -k2,2n -k1,1r farkey", IN_KEY("farkey:30001") },
        { "-r -u far", "-n -r -u far", IN_LINE("far:200001") },
    };
    static const default_case merges[] = {
        { "snums stext", "-m -n snums stext", IN_LINE("stext:2") },
        { "stext snums", "-m -n stext snums", IN_LINE("stext:2") },
        { "snums - < stext", "-m -n snums stext", IN_LINE("-:2") },
        { "-S 64K sfar snums", "-m -n sfar snums", IN_LINE("sfar:200001") },
    };
    static const default_case checks[] = {
        { "stext", "-c -n stext", IN_LINE("stext:2") },
        { "< sfar", "-c -n sfar", IN_LINE("-:200001") },
        { "text", "-c -n text", IN_LINE("text:2") "gpumerge: text:2: disorder: b\n" },
    };
    static const default_case options[] = { /* sort's own options for them */
        { "-m snums stext", "-m -n snums stext", IN_LINE("stext:2") },
        { "-c sfar", "-c -n sfar", IN_LINE("sfar:200001") },
    };
    char *dir = default_inputs();
    run_default_cases(dir, "sort", sorts, sizeof sorts / sizeof sorts[0]);
    run_default_cases(dir, "merge", merges, sizeof merges / sizeof merges[0]);
    run_default_cases(dir, "check", checks, sizeof checks / sizeof checks[0]);
    run_default_cases(dir, "", options, sizeof options / sizeof options[0]);
    free(dir);
}

/* Nothing is said where an order is named, by gpusort, of lines that all hold
 * numbers (in the forms -n reads) or are blank, or by -C; the same input with
 * no order named is what does. */
Test(cli, default_order_says_nothing_where_it_should_not)
{
    static const default_case sorts[] = {
        { "text", "-n text", IN_LINE("text:2") },
        { "-n text", "-n text", "" },
        { "-d text", "-d text", "" },
        { "-f text", "-f text", "" },
        { "-g text", "-g text", "" },
        { "--sort=numeric text", "-n text", "" },
        { "-k1,1n text", "-k1,1n text", "" },
        { "-t, -k2,2n keyed", "-t, -k2,2n keyed", "" },
        { "-t, -k2,2d keyed", "-t, -k2,2d keyed", "" },
        { "-t, -k2,2r keyed", "-t, -k2,2r keyed", "" }, /* 'r' alone orders by bytes */
        { "nums far", "-n nums far", IN_LINE("far:200001") },
        { "nums snums", "-n nums snums", "" },
        { "blank", "-n blank", "" },
        { "forms", "-n forms", "" },
        { "-t, -k3 keyed", "-n -t, -k3 keyed", "" }, /* no third field: blank keys */
    };
    static const default_case gpusort[] = {
        { "text", "text", "" },
        { "-t, -k2,2 keyed", "-t, -k2,2 keyed", "" },
        { "-c stext", "-c stext", "gpumerge: stext:3: disorder: 1\n" },
    };
    static const default_case checks[] = {
        { "-C stext", "-C -n stext", "" },
        { "-C text", "-C -n text", "" },
    };
    char *dir = default_inputs();
    run_default_cases(dir, "sort", sorts, sizeof sorts / sizeof sorts[0]);
    run_default_cases(dir, NULL, gpusort, sizeof gpusort / sizeof gpusort[0]);
    run_default_cases(dir, "check", checks, sizeof checks / sizeof checks[0]);
    free(dir);
}
