/*
 * cli_errors.c - every error with its message, exit status and nothing on
 * standard output (missing and unreadable inputs, bad lines, disorders, usage
 * errors), and -z's messages, which show a line's bytes as they were read and
 * end -c's disorder with NUL as sort does.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_cases.h"
#include "helpers.h"

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
