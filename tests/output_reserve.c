/*
 * output_reserve.c - space reserved ahead of the output (gm_writer_ahead, as the
 * GPU's text path does while it reads and CUDA starts): more than the output
 * needs, less, refused, or grown as a pipe is read, then text and keys written,
 * the file holding exactly the output; nothing reserved under an address space
 * limit; and an output that never comes, dropped with nothing left behind.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../core/write/output.h"
#include "helpers.h"

/* Space reserved ahead (gm_writer_ahead, as the GPU's text path does while it
 * reads and CUDA starts): more than the output needs, less, or refused by the file
 * system (forced), or grown as a pipe is read; at 4 and 16 threads (one and four
 * threads faulting pages in);
 * text in chunks of odd sizes, so that they start and end inside a page and a
 * piece; and keys after it, with the reserving ended first (the text path's
 * fall-back to the CPU) or not. The file holds exactly the output. */
Test(output, reserve_ahead_then_write)
{
    char *dir = scratch_dir(), *path = path_in(dir, "out");
    size_t len = (6u << 20) + 123;
    char *text = malloc(len);
    for (size_t i = 0; i < len; i++)
        text[i] = (i % 8 == 7) ? '\n' : (char)('1' + i % 7);
    const uint64_t ahead[] = { 0, 100, len, 5 * len };
    const size_t steps[] = { (1u << 20) + 7, 3, 2u << 20, 4095, 5u << 20 };
    int32_t k[3] = { -5, 0, 42 };
    gm_keys keys = { k, 3, GM_I32 };
    const char *tail = "-5\n0\n42\n";
    for (int map = 1; map <= 2; map++)
        for (int threads = 4; threads <= 16; threads += 12)
            for (int a = 0; a < 5; a++)
                for (int then = 0; then < 3; then++) { /* text; keys; end, keys */
                    gm_output_test_map(map);
                    gm_output out;
                    gm_status st;
                    gm_writer w;
                    cr_assert_eq(gm_output_open(&out, path, &st), GM_OK, "%s", st.msg);
                    gm_writer_init(&w, &out, 0, threads);
                    if (a < 4) {
                        cr_assert_eq(gm_writer_ahead(&w, ahead[a], threads / 4, &st), GM_OK, "%s", st.msg);
                    } else { /* room for more than comes, grown a piece at a time */
                        cr_assert_eq(gm_writer_ahead_open(&w, 5 * len, threads / 4, &st), GM_OK, "%s",
                                     st.msg);
                        for (size_t got = 0; got < len; got += 999999)
                            gm_writer_ahead_grow(&w, got, 0);
                        gm_writer_ahead_grow(&w, len, 1);
                    }
                    for (size_t at = 0, i = 0; at < len; i++) {
                        size_t n = steps[i % 5] < len - at ? steps[i % 5] : len - at;
                        cr_assert_eq(gm_writer_put_text(&w, text + at, n, &st), GM_OK, "%s",
                                     st.msg);
                        at += n;
                    }
                    if (then == 2)
                        gm_writer_ahead_end(&w);
                    if (then > 0)
                        cr_assert_eq(gm_writer_put(&w, &keys, &st), GM_OK, "%s", st.msg);
                    cr_assert_eq(gm_writer_finish(&w, &st), GM_OK, "%s", st.msg);
                    cr_assert_eq(gm_output_commit(&out, &st), GM_OK, "%s", st.msg);
                    gm_output_test_map(0);
                    size_t got_len, want = len + (then ? strlen(tail) : 0);
                    char *got = read_file(path, &got_len);
                    cr_assert_eq(got_len, want, "map %d threads %d ahead %d then %d", map,
                                 threads, a, then);
                    cr_assert(memcmp(got, text, len) == 0, "map %d threads %d ahead %d", map,
                              threads, a);
                    if (then)
                        cr_assert(memcmp(got + len, tail, strlen(tail)) == 0);
                    free(got);
                }
    unlink(path);
    rmdir(dir);
    free(text);
    free(dir);
    free(path);
}

/* Under a limit on the address space (ulimit -v) nothing is reserved ahead: the
 * mapping, as large as the output, would take room the budget counts on (a limit
 * just below infinity here, so that nothing else is limited). */
Test(output, no_reserving_ahead_under_an_address_space_limit)
{
    struct rlimit rl;
    cr_assert_eq(getrlimit(RLIMIT_AS, &rl), 0);
    if (rl.rlim_max != RLIM_INFINITY)
        cr_skip_test("an address space limit is set already");
    rl.rlim_cur = RLIM_INFINITY - 1;
    cr_assert_eq(setrlimit(RLIMIT_AS, &rl), 0);
    char *dir = scratch_dir(), *path = path_in(dir, "out");
    gm_output out;
    gm_status st;
    gm_writer w;
    gm_output_test_map(1);
    cr_assert_eq(gm_output_open(&out, path, &st), GM_OK, "%s", st.msg);
    gm_writer_init(&w, &out, 0, 16);
    cr_assert_eq(gm_writer_ahead(&w, 1u << 20, 4, &st), GM_OK, "%s", st.msg);
    cr_assert_null(w.ahead, "nothing reserved ahead");
    cr_assert_eq(gm_writer_put_text(&w, "1\n2\n", 4, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(gm_writer_finish(&w, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(gm_output_commit(&out, &st), GM_OK, "%s", st.msg);
    gm_output_test_map(0);
    size_t len;
    char *got = read_file(path, &len);
    cr_assert_eq(len, 4);
    cr_assert(memcmp(got, "1\n2\n", 4) == 0);
    free(got);
    unlink(path);
    rmdir(dir);
    free(dir);
    free(path);
}

/* Reserving ahead for an output that never comes (the run fails before its first
 * byte): the file is dropped, nothing is left behind. */
Test(output, reserve_ahead_then_abort)
{
    char *dir = scratch_dir(), *path = path_in(dir, "out");
    gm_output out;
    gm_status st;
    gm_writer w;
    cr_assert_eq(gm_output_open(&out, path, &st), GM_OK, "%s", st.msg);
    gm_writer_init(&w, &out, 0, 16);
    cr_assert_eq(gm_writer_ahead(&w, 64u << 20, 4, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(gm_writer_finish(&w, &st), GM_OK, "%s", st.msg);
    gm_output_abort(&out);
    cr_assert(access(path, F_OK) != 0, "no output file");
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int entries = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        entries += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    cr_assert_eq(entries, 0, "no temporary file left");
    rmdir(dir);
    free(dir);
    free(path);
}
