/*
 * safety_space.c - -o on a nearly full file system (a small tmpfs, as root): a
 * full file system under the writer's mapping, too little space for a second
 * copy (written in place), and an output that fits nowhere; each a message and
 * status 2, never a signal, with the target byte for byte as it was and nothing
 * left beside it or in -T's folder; and keyed runs that fill -T's file system.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "safety_cases.h"

/* dir/small, made and with a tmpfs of 1 MB mounted on it (malloc'd); skips the
 * test where that cannot be done (not root, or no tmpfs). */
static char *small_tmpfs(const char *dir)
{
    if (!is_root())
        cr_skip_test("mounting a small tmpfs needs root");
    char *small = path_in(dir, "small");
    cr_assert_eq(mkdir(small, 0755), 0);
    if (mount("tmpfs", small, "tmpfs", 0, "size=1m") != 0)
        cr_skip_test("cannot mount a tmpfs: %s", strerror(errno));
    return small;
}

/* A full file system under the writer's mapping (four threads: the mapping path
 * whatever the cores): fallocate's ENOSPC is a message and status 2, never a
 * SIGBUS, and neither the temporary file nor the new target is left; written in
 * place (another hard link), the target is left as it was. */
Test(safety, full_file_system_under_the_mapping, .timeout = 60)
{
    char *dir = scratch_dir();
    char *small = small_tmpfs(dir);
    rng g;
    rng_seed(&g, 19);
    enum { N = 300000 }; /* about 3 MB of output */
    int64_t *k = malloc(N * sizeof *k);
    for (int i = 0; i < N; i++)
        k[i] = rng_range(&g, 100000000, 999999999);
    char *f = path_in(dir, "f");
    write_keys(f, k, N);
    put(dir, "g", "3\n1\n2\n");
    cmd_result r = gm(dir, "sort -v --parallel=4 g -o small/out");
    expect(&r, 0, NULL);
    cr_assert_not_null(strstr(r.err, "output   small/out written through a shared mapping\n"),
                       "%s", r.err);
    cr_assert_str_eq(slurp(dir, "small/out"), "1\n2\n3\n");
    cmd_free(&r);
    unlink(path_in(dir, "small/out"));
    r = gm(dir, "sort --parallel=4 f -o small/out");
    expect(&r, 2, "gpumerge: write failed: small/out: No space left on device\n");
    cr_assert_str_eq(listing(small), "", "nothing is left");
    cmd_free(&r);
    put(dir, "small/out", "old\n");
    cr_assert_eq(link(path_in(dir, "small/out"), path_in(dir, "small/link")), 0);
    r = gm(dir, "sort --parallel=4 f -o small/out");
    expect(&r, 2, "gpumerge: write failed: small/out: No space left on device\n");
    cr_assert_str_eq(listing(small), "link out ", "no temporary file");
    cr_assert_str_eq(slurp(dir, "small/link"), "old\n");
    cmd_free(&r);
    /* A merge fills the file system round by round. */
    ref_sort_i64(k, N, 1);
    char *sorted = path_in(dir, "s");
    write_keys(sorted, k, N);
    r = gm(dir, "merge --parallel=4 s s -o small/m");
    expect(&r, 2, "gpumerge: write failed: small/m: No space left on device\n");
    cr_assert_str_eq(listing(small), "link out ", "nothing new is left");
    cmd_free(&r);
    free(sorted);
    free(k);
    free(f);
    umount(small);
    free(small);
    remove_tree(dir);
}

Test(safety, too_little_space_for_a_second_copy, .timeout = 60)
{
    if (!is_root())
        cr_skip_test("mounting a small tmpfs needs root");
    char *dir = scratch_dir();
    if (mount("tmpfs", dir, "tmpfs", 0, "size=1m") != 0)
        cr_skip_test("cannot mount a tmpfs: %s", strerror(errno));
    /* About 600 kB of keys in a 1 MB file system: one copy fits, two do not. */
    char *f = path_in(dir, "f");
    rng g;
    rng_seed(&g, 18);
    enum { N = 60000 };
    int64_t *k = malloc(N * sizeof *k);
    for (int i = 0; i < N; i++)
        k[i] = rng_range(&g, 100000000, 999999999);
    write_keys(f, k, N);
    cmd_result r = gm(dir, "sort -v f -o f");
    expect(&r, 0, NULL);
    cr_assert_not_null(strstr(r.err, "written in place: its file system has too little free "
                                     "space for a second copy"), "%s", r.err);
    ref_sort_i64(k, N, 1);
    size_t len;
    char *text = read_file(f, &len);
    cr_assert_eq(len, (size_t)N * 10);
    for (int i = 0; i < N; i++) {
        char line[16];
        snprintf(line, sizeof line, "%lld\n", (long long)k[i]);
        cr_assert(memcmp(text + 10 * i, line, 10) == 0, "line %d", i + 1);
    }
    cr_assert_str_eq(listing(dir), "f ");
    cmd_free(&r);
    free(text);
    free(k);
    free(f);
    umount(dir);
    remove_tree(dir);
}

/* An output that fits nowhere (neither beside the target nor in its place) on
 * a small file system: "write failed: FILE: No space left on device", status 2,
 * the target byte for byte as it was, nothing left in its folder or in -T's;
 * replaced or written in place (another hard link), from files or a pipe, sorted
 * on one thread or four, merged. A spool that fills its own folder is named. */
Test(safety, output_that_fits_nowhere_leaves_the_target, .timeout = 120)
{
    char *dir = scratch_dir();
    char *small = small_tmpfs(dir), *t = path_in(dir, "tmp");
    cr_assert_eq(mkdir(t, 0755), 0);
    rng g;
    rng_seed(&g, 27);
    enum { N = 300000 }; /* about 3 MB of output */
    int64_t *k = malloc(N * sizeof *k);
    for (int i = 0; i < N; i++)
        k[i] = rng_range(&g, 100000000, 999999999);
    char *f = path_in(dir, "f"), *s = path_in(dir, "s");
    write_keys(f, k, N);
    ref_sort_i64(k, N, 1);
    write_keys(s, k, N);
    static const struct {
        const char *before, *args;
    } runs[] = {
        { "", "sort -T tmp f -o small/out" },
        { "", "sort -T tmp --parallel=4 f -o small/out" },
        { "", "sort -T tmp -S 1M f -o small/out" },
        { "cat f |", "sort -T tmp - -o small/out" },
        { "", "merge -T tmp s s -o small/out" },
        { "cat s |", "merge -T tmp --parallel=4 s - -o small/out" },
    };
    const char *const old = "original contents\n";
    for (int linked = 0; linked <= 1; linked++) {
        put(dir, "small/out", old);
        if (linked)
            cr_assert_eq(link(path_in(dir, "small/out"), path_in(dir, "small/link")), 0);
        for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
            cmd_result r = gm_as(dir, runs[i].before, runs[i].args);
            expect(&r, 2, "gpumerge: write failed: small/out: No space left on device\n");
            cr_assert_str_eq(slurp(dir, "small/out"), old, "%s %s (linked %d)", runs[i].before,
                             runs[i].args, linked);
            cr_assert_str_eq(listing(small), linked ? "link out " : "out ");
            cr_assert_str_eq(listing(t), "");
            cmd_free(&r);
        }
    }
    /* -T on the full file system: the spool is what does not fit. */
    put(dir, "g", "old\n");
    cr_assert_eq(link(path_in(dir, "g"), path_in(dir, "g.link")), 0);
    cmd_result r = gm(dir, "sort -T small f -o g");
    cr_assert_eq(r.status, 2, "%s", r.err);
    cr_assert(strncmp(r.err, "gpumerge: write failed: small/gpumerge-out.", 43) == 0 &&
              strstr(r.err, ": No space left on device\n"), "%s", r.err);
    cr_assert_str_eq(slurp(dir, "g"), "old\n");
    cr_assert_str_eq(listing(small), "link out ");
    cmd_free(&r);
    free(k);
    free(f);
    free(s);
    free(t);
    umount(small);
    free(small);
    remove_tree(dir);
}

/* Keyed runs that fill -T's file system, written by one thread's write(2) or on
 * four threads through a mapping of the run's file: the run is named with "No
 * space left on device", status 2, no run is left, and the target is as it was. */
Test(safety, keyed_runs_that_fill_the_temporary_folder, .timeout = 60)
{
    char *dir = scratch_dir();
    char *small = small_tmpfs(dir);
    enum { N = 100000 }; /* about 3 MB of lines "id,key,payload" */
    char *text = malloc((size_t)N * 32), *p = text;
    rng g;
    rng_seed(&g, 31);
    for (int i = 0; i < N; i++)
        p += sprintf(p, "%d,%lld,abcdefghij\n", i, (long long)rng_range(&g, 0, 999999999));
    put(dir, "f", text);
    put(dir, "out", "old\n");
    for (int threads = 1; threads <= 4; threads += 3) {
        char *args = fmt("sort -T small -S 64K --parallel=%d -t, -k2,2n f -o out", threads);
        cmd_result r = gm(dir, args);
        cr_assert_eq(r.status, 2, "%s: %s", args, r.err);
        cr_assert(strncmp(r.err, "gpumerge: write failed: small/gpumerge-run.", 43) == 0 &&
                      strstr(r.err, ": No space left on device\n"),
                  "%s: %s", args, r.err);
        cr_assert_str_eq(listing(small), "", "%s", args);
        cr_assert_str_eq(slurp(dir, "out"), "old\n", "%s", args);
        cmd_free(&r);
        free(args);
    }
    free(text);
    umount(small);
    free(small);
    remove_tree(dir);
}
