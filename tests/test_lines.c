/*
 * test_lines.c - gpumerge on any lines, against GNU sort: the everyday commands
 * (du, ls -l, wc -l, uniq -c, CSV keys, decimals, human sizes, blank lines), random
 * lines under every key form and order, sorted in memory and through runs, merged
 * and checked; the integer path handing a run over to the records path at a late
 * line (from a file, a pipe, after spilled runs, in a merge, in a check); and
 * --strict keeping the integer checking.
 *
 * Every case runs `gpumerge ARGS` and `LC_ALL=C sort ARGS` on the same files and
 * compares standard output and exit status byte for byte, and standard error with
 * "sort: " read as "gpumerge: ". $GPUMERGE names the binary, $GPUMERGE_FORCED the
 * one whose --block-size puts block boundaries where a test wants them.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

/* sort's standard error with its program name read as gpumerge's. */
static char *as_ours(const char *err)
{
    size_t n = strlen(err);
    char *out = malloc(n * 2 + 1), *o = out;
    for (const char *p = err; *p;) {
        if (strncmp(p, "sort: ", 6) == 0 && (p == err || p[-1] == '\n')) {
            o += sprintf(o, "gpumerge: ");
            p += 6;
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    return out;
}

/* Whether the options in args name an order (-n, -g, -h, or a key's n, g, h):
 * when none does, gpumerge implies -n, as it is sort -n. */
static int names_order(const char *args)
{
    char *copy = strdup(args), *save = NULL;
    int named = 0, skip = 0;
    for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (skip || t[0] != '-' || !t[1] || t[1] == '-') {
            skip = 0;
            continue;
        }
        if (t[1] == 't' || t[1] == 'S' || t[1] == 'T' || t[1] == 'o') {
            skip = !t[2];
            continue;
        }
        named |= strpbrk(t[1] == 'k' ? t + 2 : t + 1, "ngh") != NULL;
    }
    free(copy);
    return named;
}

/* err without gpumerge's one line about a line with no number (said where no
 * order is named; tests/cli_gnusort.c checks it), which must come once at most. */
static void drop_no_number(char *err, const char *args)
{
    char *at = strstr(err, ": no number in this line");
    if (!at)
        return;
    char *start = at, *end = strchr(at, '\n');
    while (start > err && start[-1] != '\n')
        start--;
    end = end ? end + 1 : at + strlen(at);
    memmove(start, end, strlen(end) + 1);
    cr_assert(!names_order(args), "%s: an order is named, and gpumerge says %s", args, err);
    cr_assert_null(strstr(err, ": no number in this line"), "%s: said twice: %s", args, err);
}

/* Runs `PROG ARGS` with gpumerge (or prog, when not NULL) and with LC_ALL=C sort
 * in dir and asserts that they agree. */
static void agree_with(const char *dir, const char *prog, const char *args)
{
    char *ours, *theirs;
    if (asprintf(&ours, "'%s' %s %s", prog ? prog : gpumerge_path(), gpumerge_device_arg(),
                 args) < 0 ||
        asprintf(&theirs, "LC_ALL=C sort %s%s", names_order(args) ? "" : "-n ", args) < 0)
        abort();
    cmd_result a = run_sh(dir, ours), b = run_sh(dir, theirs);
    char *err = as_ours(b.err);
    drop_no_number(a.err, args);
    if (a.status != b.status || a.out_len != b.out_len || memcmp(a.out, b.out, a.out_len) ||
        strcmp(a.err, err)) { /* the case's files stay for a look */
        cmd_result keep = run_sh(dir, "rm -rf \"${TMPDIR:-/tmp}/gpumerge-failed-case\"; "
                                      "cp -r . \"${TMPDIR:-/tmp}/gpumerge-failed-case\"");
        cmd_free(&keep);
    }
    cr_assert_eq(a.status, b.status, "%s: status %d, sort's %d; stderr: %s", args, a.status,
                 b.status, a.err);
    cr_assert(a.out_len == b.out_len && memcmp(a.out, b.out, a.out_len) == 0,
              "%s: output differs from sort's (%zu bytes, sort's %zu)", args, a.out_len,
              b.out_len);
    cr_assert_str_eq(a.err, err, "%s: stderr differs", args);
    free(err);
    cmd_free(&a);
    cmd_free(&b);
    free(ours);
    free(theirs);
}

static void agree(const char *dir, const char *args)
{
    agree_with(dir, NULL, args);
}

/* ---------------------------------------------------------------- everyday */

static const char du_out[] = "4\t./a.txt\n120\t./big\n16\t./c\n8\t./b.txt\n0\t./empty\n";
static const char ls_out[] =
    "total 12\n"
    "-rw-r--r-- 1 root root  1200 Nov 26 08:27 b.txt\n"
    "-rw-r--r-- 1 root root     5 Nov 26 08:27 a.txt\n"
    "drwxr-xr-x 2 root root  4096 Nov 26 08:27 dir\n"
    "-rw-r--r-- 1 root root 88000 Nov 26 08:27 c.bin\n";
static const char wc_out[] = "  12 a.txt\n   3 b.txt\n 120 c.txt\n 135 total\n";
static const char uniq_out[] = "      3 apple\n     12 pear\n      1 fig\n      3 kiwi\n";
static const char csv[] = "id,ts,payload\n7,1700000300,x\n3,1700000100,yy\n9,1700000100,a\n"
                          "1,1700000200,zz\n5,1699999999,q\n";
static const char human[] = "1.5K\tx\n2M\ty\n512\tz\n1G\tw\n0\tv\n3k\tu\n1.0K\tt\n";
static const char odd[] = "3 apples\n1.5\n1,000\n12345678901234567890\n\n-0\n+5\n007\n"
                          "2\r\n \t4\n.5\n-.5\n1e3\nx\n0\n-1\n";

Test(lines, everyday_commands)
{
    char *dir = scratch_dir();
    struct { const char *name, *text; } files[] = {
        { "du", du_out }, { "ls", ls_out }, { "wc", wc_out }, { "uniq", uniq_out },
        { "data.csv", csv }, { "human", human }, { "odd", odd },
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        write_text(path_in(dir, files[i].name), files[i].text);
    static const char *const cases[] = {
        "-n du", "-n < du", "-nr du", "-n -k5 ls", "-k5,5n ls", "-n wc", "-nr uniq",
        "-n -k2 uniq", "-t, -k2,2n data.csv", "-t, -k2,2n -s data.csv",
        "-t, -k2,2nr -s data.csv", "-t, -k2,2n -u data.csv", "-t, -k1,1 -k2,2n data.csv",
        "-t, -k3,3 data.csv", "-h human", "-hr human", "-h -k1,1 -s human", "-n odd",
        "-nr odd", "-n -u odd", "-n -s odd", "-g odd", "-g -r odd", "-n odd du wc",
        "-n -c odd", "-n -C odd", "-k1,1 odd", "-b -k1,1 odd", "-n -k1.2 odd",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        agree(dir, cases[i]);
    free(dir);
}

Test(lines, subcommands_are_sort_n)
{
    char *dir = scratch_dir();
    write_text(path_in(dir, "odd"), odd);
    write_text(path_in(dir, "du"), du_out);
    char *cmd;
    /* gpumerge sort X is sort -n X; with no order named, -n is implied */
    const char *pairs[][2] = {
        { "sort odd", "-n odd" }, { "odd", "-n odd" }, { "-k2 du", "-n -k2 du" },
        { "-r du", "-n -r du" },
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        if (asprintf(&cmd, "'%s' %s > a; LC_ALL=C sort %s > b; cmp a b", gpumerge_path(),
                     pairs[i][0], pairs[i][1]) < 0)
            abort();
        cmd_result r = run_sh(dir, cmd);
        cr_assert_eq(r.status, 0, "gpumerge %s differs from sort %s: %s", pairs[i][0],
                     pairs[i][1], r.out);
        cmd_free(&r);
        free(cmd);
    }
    free(dir);
}

Test(lines, zero_terminated_records)
{
    char *dir = scratch_dir();
    static const char z[] = "10\0a\nb\0-2\0\0" "3 x\0" "1.5\0";
    write_file(path_in(dir, "z"), z, sizeof z - 1);
    agree(dir, "-z -n z");
    agree(dir, "-z -nr z");
    agree(dir, "-z -k1,1 z");
    agree(dir, "-z -c -n z");
    free(dir);
}

/* ---------------------------------------------------------------- random */

/* One random field: numbers of every form, words, blanks, sizes, high bytes. No
 * NaN: coreutils 9.1 orders two NaNs by their memory bytes, padding included (9.2
 * and gpumerge make NaNs of one sign equal); test_keys places NaNs. */
static void random_field(rng *r, FILE *f)
{
    static const char *const words[] = { "apple", "Zed", "x", "", "inf", "-inf",
                                          "0x1p3", "1e3", "\xe9t\xe9", "-", ".", "+5" };
    static const char *const units = "KkMGTPE";
    switch (rng_range(r, 0, 9)) {
    case 0:
    case 1:
        fprintf(f, "%lld", (long long)rng_range(r, -50, 50));
        break;
    case 2:
        fprintf(f, "%lld", (long long)rng_range(r, 1000000000, 1000000020));
        break;
    case 3:
        fprintf(f, "%s%lld.%0*lld", rng_range(r, 0, 3) ? "" : "-",
                (long long)rng_range(r, 0, 99), (int)rng_range(r, 1, 3),
                (long long)rng_range(r, 0, 99));
        break;
    case 4:
        for (int i = (int)rng_range(r, 18, 30); i > 0; i--)
            fputc('0' + (int)rng_range(r, 0, 9), f);
        break;
    case 5:
        fprintf(f, "%s", words[rng_range(r, 0, sizeof words / sizeof words[0] - 1)]);
        break;
    case 6:
        fprintf(f, "%*s%lld", (int)rng_range(r, 0, 3), "", (long long)rng_range(r, -9, 9));
        break;
    case 7:
        fprintf(f, "%lld%c", (long long)rng_range(r, 0, 20), units[rng_range(r, 0, 6)]);
        break;
    case 8:
        fprintf(f, "0%lld", (long long)rng_range(r, 0, 9));
        break;
    default:
        fprintf(f, "\t%lld", (long long)rng_range(r, 0, 5));
        break;
    }
}

/* n random lines of 1 to 4 fields joined by sep (' ' or ','), some blank, some
 * with CR, into dir/name. */
static void random_lines(rng *r, const char *dir, const char *name, int n, char sep)
{
    char *path = path_in(dir, name);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    for (int i = 0; i < n; i++) {
        int fields = (int)rng_range(r, 0, 4);
        for (int k = 0; k < fields; k++) {
            if (k)
                fputc(sep, f);
            random_field(r, f);
        }
        if (rng_range(r, 0, 40) == 0)
            fputc('\r', f);
        fputc('\n', f);
    }
    fclose(f);
    free(path);
}

static const char *const orders[] = {
    "-n", "-nr", "-n -s", "-n -u", "-n -k2", "-n -k2,2", "-k2,2n -k1,1", "-k2n -k1",
    "-b -k2,2", "-k1,1", "-g", "-g -k2,2", "-h", "-hr -s", "-k1.2,1.4n", "-u -k2,2n",
    "-k2,2 -u", "-r -k1,1", "-s -k3,3nr", "-k2,2g -k1,1nr", "-k2bn,2", "-k1.3b -s",
    "-t, -k2,2n", "-t, -k2,2n -s", "-t, -k2,2nr -s", "-t, -k1,1 -k2,2n", "-t, -k3 -u",
    "-t, -k2.2,2.3n",
};

Test(lines, random_sort_merge_check, .timeout = 600)
{
    char *dir = scratch_dir();
    rng r;
    rng_seed(&r, 27);
    char args[256];
    for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++) {
        const char *ord = orders[o];
        char sep = strstr(ord, "-t,") ? ',' : ' ';
        random_lines(&r, dir, "in", 3000, sep);
        random_lines(&r, dir, "b", 700, sep);
        snprintf(args, sizeof args, "%s in b", ord);
        agree(dir, args);
        snprintf(args, sizeof args, "%s -S 64K --batch-size=2 in", ord);
        agree(dir, args);
        snprintf(args, sizeof args, "%s --parallel=5 in b", ord); /* the sort with scratch */
        agree(dir, args);
        /* merge: inputs sorted by sort itself */
        char *cmd;
        const char *n = names_order(ord) ? "" : "-n ";
        if (asprintf(&cmd, "LC_ALL=C sort %s%s in > s1; LC_ALL=C sort %s%s b > s2; : > s3", n,
                     ord, n, ord) < 0)
            abort();
        cmd_result c = run_sh(dir, cmd);
        cr_assert_eq(c.status, 0);
        cmd_free(&c);
        free(cmd);
        snprintf(args, sizeof args, "%s -m s1 s2 s3", ord);
        agree(dir, args);
        snprintf(args, sizeof args, "%s -c s1", ord);
        agree(dir, args);
        snprintf(args, sizeof args, "%s -c in", ord);
        agree(dir, args);
    }
    free(dir);
}

/* ---------------------------------------------------------------- hand-over */

/* A file of n random integers, canonical, with the line `odd` placed at line
 * at (1-based) when at > 0. */
static void ints_with(rng *r, const char *dir, const char *name, int n, int at,
                      const char *odd_line)
{
    char *path = path_in(dir, name);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    for (int i = 1; i <= n; i++) {
        if (i == at)
            fprintf(f, "%s\n", odd_line);
        else
            fprintf(f, "%lld\n", (long long)rng_range(r, -100000, 100000));
    }
    fclose(f);
    free(path);
}

Test(lines, integer_path_hands_over_late, .timeout = 300)
{
    const char *forced = getenv("GPUMERGE_FORCED");
    if (!forced || !*forced)
        cr_skip_test("GPUMERGE_FORCED is not set");
    char *dir = scratch_dir();
    rng r;
    rng_seed(&r, 9);
    static const char *const odds[] = { "", "007", "-0", "+5", "1.5", "5 apples", " 12",
                                        "99999999999999999999999", "3\r" };
    char prog[512], args[256];
    /* gpumerge_forced takes gpumerge's arguments after its own */
    snprintf(prog, sizeof prog, "%s' '--block-size=256", forced);
    for (size_t i = 0; i < sizeof odds / sizeof odds[0]; i++) {
        ints_with(&r, dir, "f", 20000, 15000 + (int)i, odds[i]);
        ints_with(&r, dir, "g", 3000, 0, NULL);
        agree_with(dir, prog, "-n f g");
        agree_with(dir, prog, "-n -S 64K g f");   /* runs spilled before the line */
        agree_with(dir, prog, "-nu f");
        agree_with(dir, prog, "-nr -s f g");
        agree_with(dir, prog, "-n - g < f");      /* a pipe's bytes handed over */
        char *cmd;
        if (asprintf(&cmd, "LC_ALL=C sort -n f > sf; LC_ALL=C sort -n g > sg; "
                           "LC_ALL=C sort -nr f > rf; LC_ALL=C sort -nr g > rg") < 0)
            abort();
        cmd_result c = run_sh(dir, cmd);
        cmd_free(&c);
        free(cmd);
        agree_with(dir, prog, "-n -m sg sf");
        agree_with(dir, prog, "-n -m sf - < sg");
        agree_with(dir, prog, "-nr -m -u rf rg");
        /* sixteen threads: the inputs read ahead by reader threads */
        agree_with(dir, prog, "--parallel=16 -n -m sg sf");
        agree_with(dir, prog, "--parallel=16 -nr -m -u rf rg");
        agree_with(dir, prog, "--parallel=16 -n sf g");
        agree_with(dir, prog, "-n -c sf");
        agree_with(dir, prog, "-n -c f");
        snprintf(args, sizeof args, "-n -c -u sf");
        agree_with(dir, prog, args);
    }
    free(dir);
}

Test(lines, strict_keeps_the_integer_checking)
{
    char *dir = scratch_dir();
    write_text(path_in(dir, "in"), "3\n\n 007\n+2\n-0\n");
    write_text(path_in(dir, "bad"), "1\n2\nthree\n");
    char *cmd;
    if (asprintf(&cmd, "'%s' --strict in; '%s' --strict bad", gpumerge_path(),
                 gpumerge_path()) < 0)
        abort();
    cmd_result r = run_sh(dir, cmd);
    cr_assert_eq(r.status, 2);
    cr_assert_str_eq(r.out, "0\n2\n3\n7\n");
    cr_assert_str_eq(r.err, "gpumerge: bad:3: not an integer: 'three'\n");
    cmd_free(&r);
    free(cmd);
    if (asprintf(&cmd, "'%s' --strict -k2 in", gpumerge_path()) < 0)
        abort();
    r = run_sh(dir, cmd);
    cr_assert_eq(r.status, 2);
    cr_assert_str_eq(r.err, "gpumerge: options '--strict' and '-k' are incompatible: --strict "
                            "takes lines of one integer each\n");
    cmd_free(&r);
    free(cmd);
    free(dir);
}

Test(lines, option_errors_are_sorts)
{
    char *dir = scratch_dir();
    write_text(path_in(dir, "in"), "1\n");
    static const char *const bad[] = {
        "-k0 in", "-k1.0 in", "-k2,1x in", "-t '' in", "-t ab in", "-t, -t: in", "-n -g in",
        "-ghn in",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        agree(dir, bad[i]);
    free(dir);
}

Test(lines, text_orders_as_sort_orders_them)
{
    /* orders named on lines that hold no integers: sort's bytes, no refusal */
    static const char *const cases[] = { "-M", "-t, -k1,1 -k2n -f", "--sort=version" };
    char *dir = scratch_dir();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *cmd;
        if (asprintf(&cmd, "printf 'feb,2\\nJan,1\\nb-1.10,3\\nb-1.9,3\\nx,0\\n' > in && "
                           "LC_ALL=C sort %s in > want && '%s' %s in > out && cmp want out",
                     cases[i], gpumerge_path(), cases[i]) < 0)
            abort();
        cmd_result r = run_sh(dir, cmd);
        cr_assert_eq(r.status, 0, "%s: %s", cases[i], r.err);
        cmd_free(&r);
        free(cmd);
    }
    free(dir);
}

/* -o through the writer's mapping (a regular file, four threads or more): the
 * records' lines are gathered straight into the file's pages, windows after
 * windows, -u carried across them. */
Test(lines, output_gathered_into_the_mapping, .timeout = 300)
{
    char *dir = scratch_dir();
    rng r;
    rng_seed(&r, 41);
    random_lines(&r, dir, "in", 300000, ',');
    static const char *const ords[] = { "-t, -k2,2n", "-u -t, -k2,2n", "-t, -k1,1 -k2,2nr -s",
                                        "-n", "-u -k1,1" };
    for (size_t i = 0; i < sizeof ords / sizeof ords[0]; i++) {
        char *cmd;
        const char *n = names_order(ords[i]) ? "" : "-n ";
        if (asprintf(&cmd, "'%s' --parallel=6 %s in -o o1 && LC_ALL=C sort %s%s in > o2 && "
                           "cmp o1 o2", gpumerge_path(), ords[i], n, ords[i]) < 0)
            abort();
        cmd_result c = run_sh(dir, cmd);
        cr_assert_eq(c.status, 0, "%s: %s%s", ords[i], c.out, c.err);
        cmd_free(&c);
        free(cmd);
    }
    free(dir);
}
