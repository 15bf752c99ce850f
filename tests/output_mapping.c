/*
 * output_mapping.c - the writer (core/write/output.h) chunk by chunk through its ways
 * of writing: the mapping path writes the bytes write(2) writes (chunks of many
 * sizes, both widths, -u across chunks, -z, text after the keys, 1 to 5
 * threads, its fall-back where fallocate is not supported, text written in
 * place); int32 keys of every length through both, against printf; and the
 * writer's block buffers kept within gm_writer.mem at every thread count.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/write/output.h"
#include "helpers.h"

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
