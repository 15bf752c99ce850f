/*
 * stream_input.c - how inputs are read: standard input from its offset and
 * twice, a file truncated while read (an error, not a signal), block boundaries
 * (a block ending mid-line, CRLF split, from a file, a pipe and read ahead),
 * errors in a late block naming their file:line, and a pipe whose first bytes
 * were read by someone else.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/gm.h"
#include "../core/read/input.h"
#include "../core/stream/stream.h"
#include "../core/base/util.h"
#include "helpers.h"
#include "stream_cases.h"

/* ---------------------------------------------------------------- stdin */

Test(stream, stdin_from_its_offset_and_twice)
{
    char *dir = scratch_dir(), *f = path_in(dir, "f");
    write_text(f, "header\n3\n1\n2\n");
    char *cmd;
    if (asprintf(&cmd, "{ read h; '%s' sort -; } < f", gpumerge_path()) < 0)
        abort();
    cmd_result r = run_sh(dir, cmd);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, "1\n2\n3\n");
    cmd_free(&r);
    free(cmd);
    if (asprintf(&cmd, "'%s' sort - - < f2", gpumerge_path()) < 0)
        abort();
    char *f2 = path_in(dir, "f2");
    write_text(f2, "3\n1\n2\n");
    r = run_sh(dir, cmd);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, "1\n2\n3\n", "the second - reads nothing");
    cmd_free(&r);
    free(cmd);
    if (asprintf(&cmd, "cat f2 | '%s' merge - f2 -", gpumerge_path()) < 0)
        abort();
    write_text(f2, "1\n2\n3\n");
    r = run_sh(dir, cmd);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, "1\n1\n2\n2\n3\n3\n");
    cmd_free(&r);
    free(cmd);
    /* in-process: standard input left at an offset */
    int fd = open(f, O_RDONLY);
    lseek(fd, 7, SEEK_SET);
    dup2(fd, STDIN_FILENO);
    close(fd);
    gm_config c = config();
    char *out;
    gm_status st;
    char *dash = "-";
    cr_assert_eq(run_op(GM_OP_SORT, &c, dir, &dash, 1, &out, &st), GM_OK, "%s", st.msg);
    cr_assert_str_eq(out, "1\n2\n3\n");
    free(out);
    rm_rf(dir);
    free(dir);
    free(f);
    free(f2);
}

/* ---------------------------------------------------------------- changes */

/* Read when asked for (ahead 0) or by the reader thread (ahead 1). */
static void file_truncated_while_read(int ahead)
{
    char *dir = scratch_dir(), *f = path_in(dir, "f");
    int64_t n = 100000;
    int64_t *v = keys_of(UNIFORM, n, 5);
    write_keys(f, v, n);
    gm_input in;
    gm_status st;
    gm_input_test_read_ahead(ahead);
    cr_assert_eq(gm_input_open(&in, f, &st), GM_OK);
    cr_assert_eq(gm_input_start(&in, 4096, &st), GM_OK);
    gm_input_test_read_ahead(0);
    gm_block b;
    cr_assert_eq(gm_input_next(&in, &b, &st), GM_OK);
    cr_assert_eq(truncate(f, 20000), 0);
    int rc;
    do
        rc = gm_input_next(&in, &b, &st);
    while (rc == GM_OK && !b.eof);
    cr_assert_eq(rc, GM_EIO);
    char want[1024];
    snprintf(want, sizeof want, "%s: file changed while reading", f);
    cr_assert_str_eq(st.msg, want);
    gm_input_close(&in);
    free(v);
    rm_rf(dir);
    free(dir);
    free(f);
}

Test(stream, file_truncated_while_read) { file_truncated_while_read(0); }
Test(stream, file_truncated_while_read_ahead) { file_truncated_while_read(1); }

/* The binary, merging a file that is truncated once the output has started: exit
 * 2 with the message, not a signal. Two threads keep the blocks (and so what is
 * read ahead) small whatever the machine, so the file is still being read. */
Test(stream, truncation_is_an_error_not_a_signal, .timeout = 60)
{
    char *dir = scratch_dir();
    char *cmd;
    if (asprintf(&cmd, "seq 1 6000000 > f && echo 7 > g && "
                       "('%s' merge --parallel=2 f g; echo \"rc=$?\" >&2) | "
                       "{ head -c 10 > /dev/null; : > f; cat > /dev/null; }",
                 gpumerge_path()) < 0)
        abort();
    cmd_result r = run_sh(dir, cmd);
    cr_assert_str_eq(r.err, "gpumerge: f: file changed while reading\nrc=2\n");
    cmd_free(&r);
    free(cmd);
    rm_rf(dir);
    free(dir);
}

/* ---------------------------------------------------------------- blocks */

/* Keys of text parsed with blocks of block bytes (0: default). */
static int parse_blocks(const char *path, size_t block, int ordered, gm_keybuf *kb,
                        gm_status *st, int64_t *blocks)
{
    gm_input_test_block_size(block);
    gm_input in;
    memset(kb, 0, sizeof *kb);
    int rc = gm_input_open(&in, path, st);
    gm_parse_opts o = { 2, ordered, 0, 0, 0 };
    *blocks = 0;
    while (!rc && !in.eof) {
        rc = gm_input_read_keys(&in, &o, kb, st);
        (*blocks)++;
    }
    gm_input_close(&in);
    gm_input_test_block_size(0);
    return rc;
}

Test(stream, block_boundaries_mid_line_and_crlf, .timeout = 60)
{
    char *dir = scratch_dir(), *f = path_in(dir, "f");
    rng r;
    rng_seed(&r, 17);
    char *text = malloc(1 << 20), *p = text;
    for (int i = 0; i < 20000; i++) {
        int kind = (int)rng_range(&r, 0, 9);
        int64_t v = kind == 0 ? (int64_t)rng_next(&r) : rng_range(&r, -99999, 99999);
        p += sprintf(p, kind == 1 ? " %lld \r\n" : kind == 2 ? "\n%lld\r\n" : "%lld\n", (long long)v);
        if (kind == 3)
            p += sprintf(p, "%0200lld\n", (long long)(v < 0 ? -v : v)); /* longer than a block */
    }
    write_file(f, text, (size_t)(p - text));
    gm_keybuf ref, got;
    gm_status st;
    int64_t blocks;
    cr_assert_eq(parse_blocks(f, 0, 0, &ref, &st, &blocks), GM_OK, "%s", st.msg);
    cr_assert_eq(blocks, 1);
    size_t sizes[] = { 16, 17, 64, 100, 1000, 4096 };
    for (int through_pipe = 0; through_pipe < 3; through_pipe++) {
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            /* a file (parallel preads), a pipe fed in odd pieces (the reader thread),
             * or a file read ahead by the reader thread */
            gm_input_test_read_ahead(through_pipe == 2);
            char path[64];
            snprintf(path, sizeof path, "%s", f);
            pid_t pid = -1;
            int fds[2] = { -1, -1 };
            if (through_pipe == 1) {
                cr_assert_eq(pipe(fds), 0);
                pid = fork();
                if (pid == 0) {
                    close(fds[0]);
                    size_t len = (size_t)(p - text);
                    for (size_t at = 0, piece = 1; at < len; at += piece, piece = piece * 7 % 5003 + 1)
                        if (write(fds[1], text + at, at + piece < len ? piece : len - at) < 0)
                            _exit(1);
                    _exit(0);
                }
                close(fds[1]);
                snprintf(path, sizeof path, "/proc/self/fd/%d", fds[0]);
            }
            cr_assert_eq(parse_blocks(path, sizes[s], 0, &got, &st, &blocks), GM_OK, "%s", st.msg);
            gm_input_test_read_ahead(0);
            if (through_pipe == 1) {
                close(fds[0]);
                waitpid(pid, NULL, 0);
            }
            cr_assert_gt(blocks, 1);
            cr_assert_eq(got.n, ref.n, "block %zu, pipe %d", sizes[s], through_pipe);
            cr_assert_eq(got.width, ref.width);
            for (int64_t i = 0; i < ref.n; i++)
                cr_assert_eq(gm_keybuf_get(&got, i), gm_keybuf_get(&ref, i),
                             "block %zu pipe %d key %lld", sizes[s], through_pipe, (long long)i);
            gm_keybuf_free(&got);
        }
    }
    gm_keybuf_free(&ref);
    free(text);
    rm_rf(dir);
    free(dir);
    free(f);
}

Test(stream, errors_in_a_late_block_name_their_line)
{
    char *dir = scratch_dir(), *f = path_in(dir, "f");
    for (int bad = 1; bad <= 400; bad += 37) {
        char text[8192], *p = text;
        for (int i = 1; i <= 400; i++)
            p += sprintf(p, i == bad ? "1x\r\n" : i % 5 == 0 ? "\r\n" : "%d\r\n", i);
        write_text(f, text);
        for (size_t block = 16; block <= 256; block *= 4) {
            gm_keybuf kb;
            gm_status st;
            int64_t blocks;
            cr_assert_eq(parse_blocks(f, block, 0, &kb, &st, &blocks), GM_EINPUT);
            char want[1024];
            snprintf(want, sizeof want, "%s:%d: not an integer: '1x'", f, bad);
            cr_assert_str_eq(st.msg, want, "block %zu", block);
            gm_keybuf_free(&kb);
            /* and a disorder */
            p = text;
            for (int i = 1; i <= 400; i++)
                p += sprintf(p, "%d\n", i == bad + 1 ? 0 : i);
            write_text(f, text);
            cr_assert_eq(parse_blocks(f, block, 1, &kb, &st, &blocks), GM_DISORDER);
            snprintf(want, sizeof want, "%s:%d: disorder: 0", f, bad + 1);
            cr_assert_str_eq(st.msg, want, "block %zu", block);
            gm_keybuf_free(&kb);
            p = text;
            for (int i = 1; i <= 400; i++)
                p += sprintf(p, i == bad ? "1x\r\n" : i % 5 == 0 ? "\r\n" : "%d\r\n", i);
            write_text(f, text);
        }
    }
    rm_rf(dir);
    free(dir);
    free(f);
}

/* A pipe whose first bytes were read by someone else (the GPU's text path reads a
 * pipe whole, then may leave the sort to the streaming path): the prefix comes
 * first, a line split between it and the pipe stays one line, with small blocks
 * and with -z. */
Test(stream, pipe_prefix_handed_out_first, .timeout = 60)
{
    for (int zero = 0; zero < 2; zero++) {
        char eol = zero ? '\0' : '\n';
        char head[] = "5\n-7\n12", tail[] = "34\n8\n";
        const size_t hlen = sizeof head - 1, tlen = sizeof tail - 1;
        for (size_t c = 0; c < hlen; c++)
            head[c] = head[c] == '\n' ? eol : head[c];
        for (size_t c = 0; c < tlen; c++)
            tail[c] = tail[c] == '\n' ? eol : tail[c];
        int p[2];
        cr_assert_eq(pipe(p), 0);
        cr_assert_eq(write(p[1], tail, tlen), (ssize_t)tlen);
        close(p[1]);
        int saved = dup(STDIN_FILENO);
        dup2(p[0], STDIN_FILENO);
        close(p[0]);
        gm_input in;
        gm_status st;
        cr_assert_eq(gm_input_open(&in, "-", &st), GM_OK);
        char *pre = gm_buf_alloc(hlen, "test", &st);
        memcpy(pre, head, hlen);
        gm_input_set_prefix(&in, pre, 0, hlen);
        in.zero = zero;
        gm_input_test_block_size(4);
        cr_assert_eq(gm_input_start(&in, 4, &st), GM_OK);
        gm_keybuf kb;
        memset(&kb, 0, sizeof kb);
        gm_parse_opts o = { 2, 0, 0, 0, 0 };
        while (!in.eof)
            cr_assert_eq(gm_input_read_keys(&in, &o, &kb, &st), GM_OK, "%s", st.msg);
        gm_input_test_block_size(0);
        gm_input_close(&in);
        dup2(saved, STDIN_FILENO);
        close(saved);
        const int64_t want[] = { 5, -7, 1234, 8 };
        cr_assert_eq(kb.n, 4, "-z %d: %lld keys", zero, (long long)kb.n);
        for (int i = 0; i < 4; i++)
            cr_assert_eq(gm_keybuf_get(&kb, i), want[i], "-z %d key %d", zero, i);
        gm_keybuf_free(&kb);
    }
}
