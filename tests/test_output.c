/*
 * test_output.c - the output stage (core/output.h): canonical formatting at the
 * edges of both widths, -u's filter across block boundaries, the write queue's
 * order across chunks, the mapping writer and reserving ahead against write(2),
 * the atomic -o (temporary file, rename, what is left after a failure, modes and
 * symbolic links), and write errors.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/output.h"
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

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
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

/* Writes keys (n of them, width w) chunk by chunk, the chunks' sizes taken from
 * sizes in turn, then text, through a writer of the given mapping mode
 * (gm_output_test_map) and thread count into path. Returns the file's text. */
static char *write_chunks(const char *path, const void *k, int64_t n, gm_width w,
                          const int64_t *sizes, int nsizes, int unique, char eol,
                          const char *text, int map, int threads, int64_t *bytes)
{
    gm_output out;
    gm_status st;
    gm_writer wr;
    gm_output_test_map(map);
    cr_assert_eq(gm_output_open(&out, path, &st), GM_OK, "%s", st.msg);
    gm_writer_init(&wr, &out, unique, threads);
    wr.eol = eol;
    for (int64_t at = 0, i = 0; at < n; i++) {
        int64_t step = sizes[i % nsizes];
        gm_keys part = { (char *)k + at * w, at + step < n ? step : n - at, w };
        cr_assert_eq(gm_writer_put(&wr, &part, &st), GM_OK, "%s", st.msg);
        at += part.n;
    }
    if (text)
        cr_assert_eq(gm_writer_put_text(&wr, text, strlen(text), &st), GM_OK, "%s", st.msg);
    cr_assert_eq(gm_writer_finish(&wr, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(wr.map, map == 1 && wr.bytes > 0, "the way of writing asked for");
    *bytes = wr.bytes;
    cr_assert_eq(gm_output_commit(&out, &st), GM_OK, "%s", st.msg);
    gm_output_test_map(0);
    size_t len;
    char *got = read_file(path, &len);
    cr_assert_eq((int64_t)len, *bytes, "the file is as long as what was written");
    return got;
}

/* The mapping path writes the bytes write(2) writes: chunks of many sizes (empty,
 * one key, block-sized and larger), both widths, -u across chunks, -z's eol, text
 * after the keys, at 1 to 5 threads; and so does its fall-back when fallocate is
 * not supported. */
Test(output, mapping_matches_write)
{
    char *dir = scratch_dir(), *path = path_in(dir, "out");
    rng r;
    rng_seed(&r, 41);
    int64_t n = 400000;
    int32_t *k32 = malloc((size_t)n * sizeof *k32);
    int64_t *k64 = malloc((size_t)n * sizeof *k64);
    int64_t v = -1000000;
    for (int64_t i = 0; i < n; i++) {
        v += rng_range(&r, 0, 2); /* runs of equal keys, some across chunk ends */
        k32[i] = (int32_t)v;
        k64[i] = v * 4000000000000LL;
    }
    const int64_t sizes[][5] = { { 1, 0, 2, 7, 65535 }, { 65536, 65537, 3, 131072, 1 },
                                 { 400000, 1, 1, 1, 1 }, { 99991, 5, 77777, 12345, 2 } };
    for (int s = 0; s < 4; s++)
        for (int wide = 0; wide < 2; wide++)
            for (int unique = 0; unique < 2; unique++) {
                const void *k = wide ? (const void *)k64 : (const void *)k32;
                gm_width w = wide ? GM_I64 : GM_I32;
                char eol = s == 3 ? '\0' : '\n';
                const char *text = s == 1 ? NULL : "123\n456\n";
                int64_t want_bytes, got_bytes;
                char *want = write_chunks(path, k, n, w, sizes[s], 5, unique, eol, text, -1, 2,
                                          &want_bytes);
                for (int threads = 1; threads <= 5; threads += 2)
                    for (int map = 1; map <= 2; map++) {
                        char *got = write_chunks(path, k, n, w, sizes[s], 5, unique, eol, text,
                                                 map, threads, &got_bytes);
                        cr_assert_eq(got_bytes, want_bytes, "sizes %d wide %d -u %d map %d", s,
                                     wide, unique, map);
                        cr_assert(memcmp(got, want, (size_t)want_bytes) == 0,
                                  "sizes %d wide %d -u %d threads %d map %d", s, wide, unique,
                                  threads, map);
                        free(got);
                    }
                free(want);
            }
    /* Text alone, larger than a copy piece, and written in place (-o f of an
     * existing file with another hard link). */
    size_t big = (3 << 20) + 5;
    char *text = malloc(big + 1);
    for (size_t i = 0; i < big; i++)
        text[i] = (char)('0' + i % 10);
    text[big] = '\0';
    char *other = path_in(dir, "link");
    write_text(path, "old contents, longer than nothing\n");
    cr_assert_eq(link(path, other), 0);
    int64_t got_bytes;
    char *got = write_chunks(path, k32, 0, GM_I32, sizes[0], 5, 0, '\n', text, 1, 4, &got_bytes);
    cr_assert_eq(got_bytes, (int64_t)big);
    cr_assert(memcmp(got, text, big) == 0);
    free(got);
    got = read_file(other, NULL);
    cr_assert(memcmp(got, text, big) == 0, "written in place: the other link sees it");
    free(got);
    unlink(other);
    unlink(path);
    free(other);
    free(text);
    free(k32);
    free(k64);
    rmdir(dir);
    free(dir);
    free(path);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* int32 keys of every length and both signs (the word-at-a-time formatting and the
 * exact one near a block's end), through write(2) and through the mapping, whose
 * blocks have exactly their text's room, against printf. */
Test(output, int32_every_length)
{
    char *dir = scratch_dir(), *path = path_in(dir, "out");
    rng r;
    rng_seed(&r, 42);
    int64_t n = 200000, len = 0;
    int32_t *k = malloc((size_t)n * sizeof *k);
    for (int64_t i = 0; i < n; i++) {
        int64_t p10 = 1;
        for (int e = (int)rng_range(&r, 0, 9); e > 0; e--)
            p10 *= 10;
        int64_t v = rng_range(&r, 0, 3) == 0 ? p10 + rng_range(&r, -1, 1)
                                             : rng_range(&r, p10 / 10, p10 * 10 - 1);
        if (v > INT32_MAX)
            v = INT32_MAX;
        k[i] = (int32_t)(rng_range(&r, 0, 1) ? -v : v);
    }
    k[0] = INT32_MIN;
    k[1] = 0;
    qsort(k, (size_t)n, sizeof *k, cmp_i32);
    char *want = malloc((size_t)n * 12 + 1);
    for (int64_t i = 0; i < n; i++)
        len += sprintf(want + len, "%d\n", k[i]);
    const int64_t sizes[] = { 65536, 1, 99999, 7, 34457 };
    for (int threads = 1; threads <= 4; threads += 3)
        for (int map = -1; map <= 1; map += 2) {
            int64_t got_bytes;
            char *got = write_chunks(path, k, n, GM_I32, sizes, 5, 0, '\n', NULL, map, threads,
                                     &got_bytes);
            cr_assert_eq(got_bytes, len, "threads %d map %d", threads, map);
            cr_assert(memcmp(got, want, (size_t)len) == 0, "threads %d map %d", threads, map);
            free(got);
        }
    unlink(path);
    free(want);
    free(k);
    rmdir(dir);
    free(dir);
    free(path);
}

/* The writer's block buffers kept within gm_writer.mem, down to less than one
 * block's worth (fewer blocks formatted ahead, on fewer threads): the same bytes
 * at every thread count, chunks of many blocks and of a few keys, -u across them,
 * through write(2) with and without the writer thread. */
Test(output, buffers_within_their_memory, .timeout = 120)
{
    static const size_t mems[] = { 0, 1, 3 << 20, 8 << 20 };
    static const int threads[] = { 1, 2, 4, 16, 64 };
    static const int64_t sizes[] = { 300000, 1, 70000, 5 };
    char *dir = scratch_dir(), *path = path_in(dir, "out");
    enum { N = 1000000 };
    int32_t *k = malloc(N * sizeof *k);
    rng g;
    rng_seed(&g, 91);
    for (int64_t i = 0; i < N; i++)
        k[i] = (int32_t)rng_range(&g, -3000, 3000) * 100000;
    qsort(k, N, sizeof *k, cmp_i32);
    for (int unique = 0; unique < 2; unique++) {
        char *want = malloc((size_t)N * 13);
        size_t o = 0;
        for (int64_t i = 0; i < N; i++)
            if (!unique || i == 0 || k[i] != k[i - 1])
                o += (size_t)sprintf(want + o, "%d\n", k[i]);
        for (size_t m = 0; m < sizeof mems / sizeof mems[0]; m++) {
            for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
                gm_output out;
                gm_status st;
                gm_writer w;
                gm_output_test_map(-1);
                cr_assert_eq(gm_output_open(&out, path, &st), GM_OK, "%s", st.msg);
                gm_writer_init(&w, &out, unique, threads[t]);
                w.mem = mems[m];
                for (int64_t at = 0, i = 0; at < N; i++) {
                    int64_t step = sizes[i % 4];
                    gm_keys part = { k + at, at + step < N ? step : N - at, GM_I32 };
                    cr_assert_eq(gm_writer_put(&w, &part, &st), GM_OK, "%s", st.msg);
                    at += part.n;
                }
                cr_assert_eq(gm_writer_finish(&w, &st), GM_OK, "%s", st.msg);
                cr_assert_eq(gm_output_commit(&out, &st), GM_OK, "%s", st.msg);
                gm_output_test_map(0);
                char *text = read_file(path, NULL);
                cr_assert(strcmp(text, want) == 0, "mem %zu, %d threads, -u %d: wrong bytes",
                          mems[m], threads[t], unique);
                free(text);
                unlink(path);
            }
        }
        free(want);
    }
    free(k);
    rmdir(dir);
    free(dir);
    free(path);
}

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
