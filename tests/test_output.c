/*
 * test_output.c - the output stage (core/write/output.h): canonical formatting at the
 * edges of both widths, -u's filter across block boundaries, the atomic -o
 * (temporary file, rename, what is left after a failure, modes and symbolic
 * links), write errors, and the writer's order across chunks, with its thread
 * and with text after the keys.
 *
 * The other files: output_mapping.c (the mapping writer against write(2), int32
 * keys of every length, the writer's buffers within their memory) and
 * output_reserve.c (reserving ahead, then writing or aborting, and not under an
 * address space limit).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/write/output.h"
#include "helpers.h"

static void check_format(int64_t v, const char *want)
{
    char buf[32];
    char *end = gm_format_i64(buf, v);
    *end = '\0';
    cr_assert_str_eq(buf, want);
}

Test(output, canonical_decimal)
{
    check_format(0, "0");
    check_format(-1, "-1");
    check_format(9, "9");
    check_format(10, "10");
    check_format(99, "99");
    check_format(100, "100");
    check_format(2147483647, "2147483647");
    check_format(-2147483647 - 1, "-2147483648");
    check_format(4294967295LL, "4294967295");
    check_format(4294967296LL, "4294967296");
    check_format(9999999999LL, "9999999999");
    check_format(10000000000LL, "10000000000");
    check_format(INT64_MAX, "9223372036854775807");
    check_format(INT64_MIN, "-9223372036854775808");
    rng r;
    rng_seed(&r, 5);
    for (int i = 0; i < 100000; i++) {
        int64_t v = (int64_t)rng_next(&r) >> rng_range(&r, 0, 63);
        char want[32];
        snprintf(want, sizeof want, "%lld", (long long)v);
        check_format(v, want);
    }
}

/* Writes keys through gm_output to dir/out and returns the text. */
static char *write_through(const char *dir, gm_keys *keys, int unique, int nthreads, int *rc)
{
    char *path = path_in(dir, "out");
    gm_output out;
    gm_status st;
    gm_output_stats stats;
    *rc = gm_output_open(&out, path, &st);
    cr_assert_eq(*rc, GM_OK, "%s", st.msg);
    *rc = gm_output_write(&out, keys, unique, nthreads, &stats, &st);
    if (!*rc)
        *rc = gm_output_commit(&out, &st);
    else
        gm_output_abort(&out);
    char *text = read_file(path, NULL);
    unlink(path);
    free(path);
    return text;
}

Test(output, both_widths_and_unique_across_blocks)
{
    char *dir = scratch_dir();
    int64_t n = 300000; /* several formatting blocks */
    int32_t *k32 = malloc((size_t)n * sizeof *k32);
    int64_t *k64 = malloc((size_t)n * sizeof *k64);
    char *want = malloc((size_t)n * 24), *want_u = malloc((size_t)n * 24);
    size_t o = 0, ou = 0;
    for (int64_t i = 0; i < n; i++) {
        k32[i] = (int32_t)(i / 3) - 1000; /* runs of three equal keys */
        k64[i] = (int64_t)k32[i] * 5000000000LL;
        o += (size_t)sprintf(want + o, "%d\n", k32[i]);
        if (i % 3 == 0)
            ou += (size_t)sprintf(want_u + ou, "%d\n", k32[i]);
    }
    for (int threads = 1; threads <= 4; threads += 3) {
        int rc;
        gm_keys keys = { k32, n, GM_I32 };
        char *text = write_through(dir, &keys, 0, threads, &rc);
        cr_assert_eq(rc, GM_OK);
        cr_assert_str_eq(text, want);
        free(text);
        text = write_through(dir, &keys, 1, threads, &rc);
        cr_assert_str_eq(text, want_u, "-u with %d threads", threads);
        free(text);
        gm_keys wide = { k64, n, GM_I64 };
        text = write_through(dir, &wide, 1, threads, &rc);
        cr_assert_eq(rc, GM_OK);
        char *line = text;
        for (int64_t i = 0; i < n; i += 3) {
            char expect[32];
            int len = sprintf(expect, "%lld\n", (long long)k64[i]);
            cr_assert(strncmp(line, expect, (size_t)len) == 0, "key %lld", (long long)i);
            line += len;
        }
        cr_assert_eq(*line, '\0');
        free(text);
    }
    free(k32);
    free(k64);
    free(want);
    free(want_u);
    rmdir(dir);
    free(dir);
}

Test(output, abort_leaves_an_existing_file_untouched)
{
    char *dir = scratch_dir();
    char *path = path_in(dir, "out");
    write_text(path, "precious\n");
    gm_output out;
    gm_status st;
    gm_output_stats stats;
    int32_t k[3] = { 1, 2, 3 };
    gm_keys keys = { k, 3, GM_I32 };
    cr_assert_eq(gm_output_open(&out, path, &st), GM_OK);
    cr_assert_eq(entries(dir), 2, "the temporary file sits beside the target");
    cr_assert_eq(gm_output_write(&out, &keys, 0, 2, &stats, &st), GM_OK);
    gm_output_abort(&out);
    char *text = read_file(path, NULL);
    cr_assert_str_eq(text, "precious\n");
    cr_assert_eq(entries(dir), 1, "no temporary file is left behind");
    free(text);
    unlink(path);
    rmdir(dir);
    free(path);
    free(dir);
}

Test(output, commit_keeps_mode_and_follows_symlinks)
{
    char *dir = scratch_dir();
    char *target = path_in(dir, "target"), *link = path_in(dir, "link");
    write_text(target, "old\n");
    chmod(target, 0640);
    cr_assert_eq(symlink("target", link), 0);
    gm_output out;
    gm_status st;
    gm_output_stats stats;
    int64_t k[2] = { -5, 5 };
    gm_keys keys = { k, 2, GM_I64 };
    cr_assert_eq(gm_output_open(&out, link, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(gm_output_write(&out, &keys, 0, 1, &stats, &st), GM_OK);
    cr_assert_eq(gm_output_commit(&out, &st), GM_OK);
    struct stat sb;
    cr_assert_eq(lstat(link, &sb), 0);
    cr_assert(S_ISLNK(sb.st_mode), "the link is still a link");
    cr_assert_eq(stat(target, &sb), 0);
    cr_assert_eq(sb.st_mode & 07777, 0640);
    char *text = read_file(target, NULL);
    cr_assert_str_eq(text, "-5\n5\n");
    free(text);
    unlink(link);
    unlink(target);
    rmdir(dir);
    free(link);
    free(target);
    free(dir);
}

Test(output, full_device_is_a_write_error)
{
    if (access("/dev/full", W_OK) != 0)
        cr_skip_test("no /dev/full here");
    for (int threads = 1; threads <= 4; threads += 3) { /* 4: the writer thread */
        gm_output out;
        gm_status st;
        gm_output_stats stats;
        int32_t k[1] = { 1 };
        gm_keys keys = { k, 1, GM_I32 };
        cr_assert_eq(gm_output_open(&out, "/dev/full", &st), GM_OK, "written in place");
        cr_assert_eq(gm_output_write(&out, &keys, 0, threads, &stats, &st), GM_EIO);
        cr_assert_str_eq(st.msg, "write failed: /dev/full: No space left on device");
        gm_output_abort(&out);
    }
}

/* The streaming writer with its thread: chunk after chunk in order, -u across
 * chunks, and a write error of an earlier chunk reported by a later call. */
Test(output, writer_thread_chunks_in_order)
{
    char *dir = scratch_dir(), *path = path_in(dir, "out");
    int64_t n = 200000;
    int32_t *k = malloc((size_t)n * sizeof *k);
    char *want = malloc((size_t)n * 16);
    size_t o = 0;
    for (int64_t i = 0; i < n; i++) {
        k[i] = (int32_t)(i / 2);
        if (i % 2 == 0)
            o += (size_t)sprintf(want + o, "%d\n", k[i]);
    }
    gm_output out;
    gm_status st;
    gm_writer w;
    cr_assert_eq(gm_output_open(&out, path, &st), GM_OK, "%s", st.msg);
    gm_writer_init(&w, &out, 1, 4);
    for (int64_t at = 0, step = 1; at < n; at += step, step = step * 3 + 1) {
        gm_keys part = { k + at, at + step < n ? step : n - at, GM_I32 };
        cr_assert_eq(gm_writer_put(&w, &part, &st), GM_OK, "%s", st.msg);
    }
    cr_assert_eq(gm_writer_finish(&w, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(gm_output_commit(&out, &st), GM_OK, "%s", st.msg);
    char *text = read_file(path, NULL);
    cr_assert(strcmp(text, want) == 0);
    free(text);
    unlink(path);
    if (access("/dev/full", W_OK) == 0) {
        cr_assert_eq(gm_output_open(&out, "/dev/full", &st), GM_OK);
        gm_writer_init(&w, &out, 0, 4);
        int rc = GM_OK;
        for (int i = 0; i < 50 && rc == GM_OK; i++) {
            gm_keys part = { k, n, GM_I32 };
            rc = gm_writer_put(&w, &part, &st);
        }
        if (rc == GM_OK)
            rc = gm_writer_finish(&w, &st);
        else
            gm_writer_finish(&w, &(gm_status){ 0 });
        cr_assert_eq(rc, GM_EIO);
        cr_assert_str_eq(st.msg, "write failed: /dev/full: No space left on device");
        gm_output_abort(&out);
    }
    free(k);
    free(want);
    rmdir(dir);
    free(dir);
    free(path);
}

Test(output, unwritable_directory)
{
    gm_output out;
    gm_status st;
    cr_assert_eq(gm_output_open(&out, "/nonexistent/dir/out", &st), GM_EIO);
    cr_assert_str_eq(st.msg, "open failed: /nonexistent/dir/out: No such file or directory");
}

Test(output, text_after_keys_in_order)
{
    char *dir = scratch_dir(), *path = path_in(dir, "out");
    int32_t k[3] = { -5, 0, 7 };
    gm_keys keys = { k, 3, GM_I32 };
    const char *text = "8\n9\n10\n";
    gm_output out;
    gm_status st;
    gm_writer w;
    for (int threads = 1; threads <= 8; threads *= 8) {
        cr_assert_eq(gm_output_open(&out, path, &st), GM_OK, "%s", st.msg);
        gm_writer_init(&w, &out, 0, threads);
        cr_assert_eq(gm_writer_put(&w, &keys, &st), GM_OK, "%s", st.msg);
        cr_assert_eq(gm_writer_put_text(&w, text, strlen(text), &st), GM_OK, "%s", st.msg);
        cr_assert_eq(gm_writer_put_text(&w, "11\n", 3, &st), GM_OK, "%s", st.msg);
        cr_assert_eq(gm_writer_finish(&w, &st), GM_OK, "%s", st.msg);
        cr_assert_eq(gm_output_commit(&out, &st), GM_OK, "%s", st.msg);
        char *got = read_file(path, NULL);
        cr_assert_str_eq(got, "-5\n0\n7\n8\n9\n10\n11\n", "threads %d", threads);
        free(got);
    }
    if (access("/dev/full", W_OK) == 0) {
        cr_assert_eq(gm_output_open(&out, "/dev/full", &st), GM_OK);
        gm_writer_init(&w, &out, 0, 2);
        cr_assert_eq(gm_writer_put_text(&w, text, strlen(text), &st), GM_EIO);
        cr_assert_str_eq(st.msg, "write failed: /dev/full: No space left on device");
        gm_writer_finish(&w, &st);
        gm_output_abort(&out);
    }
    unlink(path);
    rmdir(dir);
    free(dir);
    free(path);
}
