/*
 * compat_gnusort.c - random inputs through the sort-style invocation compared
 * byte for byte with LC_ALL=C sort: sort (-n, -r, -u, -s, -b, -f, standard
 * input, -o), merge (-m, --batch-size), check (-c, -C, --check's forms), -z,
 * the obsolete keys +POS1 [-POS2] (as gpumerge and as gpusort), and --files0-from.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat_cases.h"
#include "helpers.h"

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

/* ---------------------------------------------------------------- +POS1 */

/* "./gpusort ARGS" (a link to gpumerge in dir) and "sort ARGS": the same
 * status, output and error output (gpusort's messages begin "gpumerge:"). */
static void gpusort_as_sort(const char *dir, const char *args)
{
    char *cmd;
    if (asprintf(&cmd, "./gpusort </dev/null %s %s", gpumerge_device_arg(), args) < 0)
        abort();
    cmd_result ours = run_sh(dir, cmd), theirs = sort_sh(dir, args);
    char *want_err = as_ours(theirs.err);
    cr_assert_eq(ours.status, theirs.status, "gpusort %s: exit %d, sort: %d (%s | %s)", args,
                 ours.status, theirs.status, ours.err, theirs.err);
    cr_assert_eq(ours.out_len, theirs.out_len, "gpusort %s: %zu bytes, sort: %zu", args,
                 ours.out_len, theirs.out_len);
    cr_assert(memcmp(ours.out, theirs.out, ours.out_len) == 0, "gpusort %s differs", args);
    cr_assert_str_eq(ours.err, want_err, "gpusort %s: standard error", args);
    free(want_err), free(cmd);
    cmd_free(&ours), cmd_free(&theirs);
}

/* What gpumerge says of in:1 where it orders the obsolete key by its default -n
 * (a key with flags of its own keeps its order). */
#define NOTE_IN1(what)                                                                     \
    "gpumerge: in:1: no number in this " what "; lines are ordered by -n, gpumerge's "     \
    "default (name an order such as -n, -d or -f, or use gpusort for sort's byte order)\n"

/* sort's obsolete keys, +POS1 [-POS2] (fields and characters from 0), on lines
 * of blank- and colon-separated fields, under both names: the key, its flags and
 * the global options it inherits; a word that is no +POS1 is a file; a bad -POS2
 * in sort's words; _POSIX2_VERSION=200112 (no +POS1 without a -POS2) and
 * POSIXLY_CORRECT (no key after a file). The first line holds words in every
 * field, so gpumerge names it where its default -n orders the key. */
Test(compat, obsolete_keys_match_gnu_sort, .timeout = 120)
{
    static const char *const words[] = { "a", "B", "ab", "10", "9", " 2", "-3", "x1", "", "  z" };
    rng r;
    rng_seed(&r, 34);
    text t = { 0 };
    text_puts(&t, "abc:abc abc abc abc\n");
    for (int i = 0; i < 3000; i++) {
        for (int f = (int)rng_range(&r, 0, 4); f >= 0; f--)
            text_putf(&t, "%s%s", words[rng_range(&r, 0, 9)], rng_range(&r, 0, 3) ? " " : ":");
        text_puts(&t, "\n");
    }
    char *dir = scratch_dir(), *in = path_in(dir, "in"), *link;
    write_file(in, t.buf, t.n);
    if (asprintf(&link, "ln -s '%s' gpusort", gpumerge_path()) < 0)
        abort();
    cmd_result l = run_sh(dir, link);
    cr_assert_eq(l.status, 0, "%s", l.err);
    cmd_free(&l);
    enum { QUIET, LINE, KEY }; /* what gpumerge says of in:1 */
    static const struct {
        const char *args;
        int said;
    } keys[] = {
        { "+0", LINE }, { "+1 -2", KEY }, { "+1.2 -3", KEY }, { "+2n", QUIET },
        { "+1 -2 -r", KEY }, { "+0.1b -0.3", QUIET }, { "-t: +1 -2", KEY },
        { "+1 -0", QUIET }, /* an empty key */
        { "+1.0 -2.0", KEY }, { "+1n -2r", QUIET }, { "-s +1 -2.3", KEY },
        { "+1b -2b -f", QUIET }, { "-b +2 -3 +0 -1r", KEY }, { "-u +1 -2", KEY },
        { "+1 -2 -k1,1r", KEY }, { "-t: +0.1 -1.2n -s", QUIET }, { "++1", KEY },
        { "+1 -2x", QUIET }, { "+1 -2.", QUIET }, { "+1 -2.x", QUIET }, { "+1nM", QUIET },
        { "+x -2", QUIET }, { "+ in", QUIET }, { "+x in", QUIET }, { "+1x", QUIET },
        { "-- +1", QUIET }, { "-c +1 -2", KEY },
    };
    static const char *const notes[] = { "", NOTE_IN1("line"), NOTE_IN1("line's key") };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char args[128], sort_args[128];
        snprintf(args, sizeof args, "%s in", keys[i].args);
        gpusort_as_sort(dir, args);
        snprintf(sort_args, sizeof sort_args, "-n %s in", keys[i].args);
        same_as_sort_noting(dir, args, sort_args, notes[keys[i].said]);
    }
    same_as_sort_noting(dir, "sort +1 -2 in", "-n +1 -2 in", notes[KEY]);
    gpusort_as_sort(dir, "+1 -2 -o out in && cat out");
    cr_assert_eq(setenv("_POSIX2_VERSION", "200112", 1), 0);
    gpusort_as_sort(dir, "+1 in");
    gpusort_as_sort(dir, "+1 -2 in");
    gpusort_as_sort(dir, "+1 -2 +2 in"); /* a -POS2 makes the usage traditional */
    gpusort_as_sort(dir, "+2 +1 -2 in");
    cr_assert_eq(setenv("POSIXLY_CORRECT", "1", 1), 0);
    gpusort_as_sort(dir, "+1 -2 in");
    cr_assert_eq(unsetenv("_POSIX2_VERSION"), 0);
    gpusort_as_sort(dir, "+1 -2 in");
    gpusort_as_sort(dir, "+1 in");
    gpusort_as_sort(dir, "in +1 -2");
    cr_assert_eq(unsetenv("POSIXLY_CORRECT"), 0);
    gpusort_as_sort(dir, "in +1 -2");
    free(t.buf), free(link), free(in), free(dir);
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
