/*
 * safety_names.c - hostile file names (quotes, blanks, escapes, control bytes,
 * invalid UTF-8, random ones) in every message: quoted as GNU sort quotes them,
 * byte for byte, and never a raw unprintable byte; gm_quote by example.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/base/util.h"
#include "helpers.h"
#include "safety_cases.h"

/* Runs gpumerge (or sort) with argv in dir; returns its standard error. */
static char *stderr_of(const char *dir, char *const argv[], int *status)
{
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = fork();
    if (pid == 0) {
        if (chdir(dir) != 0)
            _exit(127);
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(p[1], 2);
        close(p[0]);
        setenv("LC_ALL", "C", 1);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(p[1]);
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    ssize_t got;
    while ((got = read(p[0], buf + len, cap - len - 1)) > 0) {
        len += (size_t)got;
        if (cap - len < 2)
            buf = realloc(buf, cap *= 2);
    }
    buf[len] = '\0';
    close(p[0]);
    waitpid(pid, status, 0);
    return buf;
}

/* Every byte of a message is printable, but its final newline. */
static void assert_printable(const char *msg)
{
    size_t n = strlen(msg);
    for (size_t i = 0; i + 1 < n; i++)
        cr_assert(msg[i] >= 0x20 && msg[i] < 0x7f, "raw byte %#x in: %s",
                  (unsigned char)msg[i], msg);
}

/* name as GNU sort shows it in "cannot read: NAME: ..." (or NULL when sort takes
 * it for something else), and our message for it, compared. */
static void compare_with_sort(const char *dir, const char *name)
{
    int st_sort, st_gm;
    char *sort_argv[] = { "sort", "--", (char *)name, NULL };
    char *gm_argv[] = { (char *)gpumerge_path(), "sort", "--", (char *)name, NULL };
    char *want = stderr_of(dir, sort_argv, &st_sort);
    char *got = stderr_of(dir, gm_argv, &st_gm);
    cr_assert_eq(WEXITSTATUS(st_gm), 2);
    assert_printable(got);
    if (strncmp(want, "sort: ", 6) == 0)
        cr_assert_str_eq(got + strlen("gpumerge: "), want + strlen("sort: "),
                         "name of %zu bytes", strlen(name));
    free(want);
    free(got);
}

Test(safety, hostile_names_quoted_as_sort_quotes_them, .timeout = 120)
{
    char *dir = scratch_dir();
    const char *names[] = {
        "plain.txt", "a b", "it's", "it's $HOME", "a:b", "{", "a{b", "#a", "a#", "~a",
        "a=b", "a?b", "a\\b", "a\nb", "x\ty", "\033[31mred\033[0m", "\033]0;title\007",
        "caf\xc3\xa9", "\x7f", "\x01\x02", "-dash", "*", "$(reboot)", "`id`", "\r",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        compare_with_sort(dir, names[i]);

    /* Random names. coreutils 9.1 differs on names that hold both a single quote
     * and an unprintable byte: its second pass starts inside a $'...' escape and
     * writes \ooo in plain quotes ('\001\a'\''x'), which a shell reads back wrong;
     * we write the valid form (''$'\001\a'\''x'), so those are checked for
     * printable bytes only. */
    rng g;
    rng_seed(&g, 1818);
    static const char pool[] = " '#~{}:a\n\t\\\"$!?=*%@]\x01\x1b\x7f\xc3\xa9Z9.-_";
    for (int t = 0; t < 300; t++) {
        char name[16];
        int n = (int)rng_range(&g, 1, 12), quote = 0, unprintable = 0;
        for (int i = 0; i < n; i++) {
            char c = pool[rng_range(&g, 0, (int64_t)sizeof pool - 2)];
            name[i] = c;
            quote |= c == '\'';
            unprintable |= (unsigned char)c < 0x20 || (unsigned char)c >= 0x7f;
        }
        name[n] = '\0';
        if (strcmp(name, "-") == 0)
            continue;
        if (quote && unprintable) {
            int st;
            char *argv[] = { (char *)gpumerge_path(), "sort", "--", name, NULL };
            char *got = stderr_of(dir, argv, &st);
            assert_printable(got);
            free(got);
        } else {
            compare_with_sort(dir, name);
        }
    }
    remove_tree(dir);
}

Test(safety, quoting_by_example)
{
    static const char *const cases[][2] = {
        { "plain-1.txt", "plain-1.txt" },
        { "", "''" },
        { "a b", "'a b'" },
        { "it's", "\"it's\"" },
        { "it's $x", "'it'\\''s $x'" },
        { "a:b", "'a:b'" },
        { "a\nb", "'a'$'\\n''b'" },
        { "\033[2J", "''$'\\033''[2J'" },
        { "\xc3\xa9t\xc3\xa9", "''$'\\303\\251''t'$'\\303\\251'" },
        /* a quote after an escape: valid shell, where coreutils 9.1 is not */
        { "\x01\a'x", "''$'\\001\\a'\\''x'" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[128];
        cr_assert_str_eq(gm_quote(cases[i][0], buf, sizeof buf), cases[i][1]);
    }
    /* Cut to fit, never inside an escape. */
    char small[12];
    cr_assert_str_eq(gm_quote("ab\ncdefgh", small, sizeof small), "'ab'$'\\n''c");
}

Test(safety, hostile_names_in_every_message)
{
    char *dir = scratch_dir();
    const char *name = "bad\033[2J\nname";
    char *p = path_in(dir, name);
    write_text(p, "1\nxyz\n");
    int st;
    char *argv1[] = { (char *)gpumerge_path(), "sort", "--strict", (char *)name, NULL };
    char *err = stderr_of(dir, argv1, &st);
    cr_assert_eq(WEXITSTATUS(st), 2);
    assert_printable(err);
    cr_assert_not_null(strstr(err, "'bad'$'\\033''[2J'$'\\n''name':2: not an integer: 'xyz'"),
                       "%s", err);
    free(err);
    char *argv2[] = { (char *)gpumerge_path(), "check", (char *)name, NULL };
    write_text(p, "2\n1\n");
    err = stderr_of(dir, argv2, &st);
    cr_assert_eq(WEXITSTATUS(st), 1);
    cr_assert_str_eq(err, "gpumerge: 'bad'$'\\033''[2J'$'\\n''name':2: disorder: 1\n");
    free(err);
    char *target = fmt("no\nfolder/%s", name);
    char *argv3[] = { (char *)gpumerge_path(), "sort", (char *)name, "-o", target, NULL };
    err = stderr_of(dir, argv3, &st);
    cr_assert_eq(WEXITSTATUS(st), 2);
    assert_printable(err);
    char *argv4[] = { "sort", (char *)name, "-o", target, NULL };
    char *want = stderr_of(dir, argv4, &st);
    cr_assert_str_eq(err + strlen("gpumerge: "), want + strlen("sort: "));
    free(want);
    free(err);
    free(target);
    free(p);
    remove_tree(dir);
}
