/*
 * test_pages.c - core/pages: the parallel copy against memcpy over sizes around
 * its piece boundaries and thread counts, the page toucher leaving every byte as
 * it was (anonymous memory and a file's shared mapping), and a file mapped at
 * offsets that are not page-aligned.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../core/base/pages.h"
#include "helpers.h"

static void fill(rng *r, char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (char)rng_next(r);
}

Test(pages, copy_matches_memcpy)
{
    rng r;
    rng_seed(&r, 11);
    const size_t piece = GM_PAGES_COPY_PIECE;
    size_t sizes[] = { 0, 1, 7, 4096, piece - 1, piece, piece + 1, 3 * piece + 12345,
                       (size_t)rng_range(&r, 1, 8 * piece) };
    size_t most = 8 * piece + 64;
    char *src = malloc(most), *dst = malloc(most), *want = malloc(most);
    cr_assert(src && dst && want);
    fill(&r, src, most);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        for (int threads = 1; threads <= 9; threads += 4) {
            size_t off = (size_t)rng_range(&r, 0, 63), len = sizes[s];
            fill(&r, dst, most);
            memcpy(want, dst, most);
            memcpy(want + off, src + off, len);
            gm_pages_copy(dst + off, src + off, len, threads);
            cr_assert(memcmp(dst, want, most) == 0, "len %zu, %d threads", len, threads);
        }
    }
    free(src);
    free(dst);
    free(want);
}

Test(pages, copy_pieces_cover_the_bytes_once)
{
    for (size_t len = 0; len < (5u << 20); len += (len >> 1) + 4093) {
        for (int most = 1; most <= 16; most *= 2) {
            gm_pages_copy_job c;
            gm_pages_copy_plan(&c, NULL, NULL, len, most);
            cr_assert(c.pieces >= 1 && c.pieces <= most, "%d pieces", c.pieces);
            size_t at = 0;
            for (int p = 0; p < c.pieces; p++) {
                size_t lo, hi;
                gm_pages_copy_range(&c, p, &lo, &hi);
                cr_assert_eq(lo, at);
                cr_assert(hi >= lo);
                at = hi;
            }
            cr_assert_eq(at, len);
        }
    }
}

Test(pages, touch_changes_no_byte)
{
    rng r;
    rng_seed(&r, 12);
    size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 64 * page;
    char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(p != MAP_FAILED);
    fill(&r, p, n / 2); /* half written, half never touched */
    char *want = malloc(n);
    memcpy(want, p, n);
    gm_pages_touch(p + 3, p + n - 5, 1);
    gm_pages_touch(p, p, 0); /* empty */
    cr_assert(memcmp(p, want, n) == 0);
    free(want);
    munmap(p, n);
}

Test(pages, map_at_unaligned_offsets)
{
    rng r;
    rng_seed(&r, 13);
    char *dir = scratch_dir();
    char *path = path_in(dir, "f");
    size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 10 * page + 123;
    char *data = malloc(n);
    fill(&r, data, n);
    write_file(path, data, n);
    int fd = open(path, O_RDWR);
    cr_assert(fd >= 0);
    off_t offs[] = { 0, 1, (off_t)page - 1, (off_t)page, (off_t)(3 * page + 77) };
    for (size_t i = 0; i < sizeof offs / sizeof *offs; i++) {
        size_t len = n - (size_t)offs[i];
        char *base, *at;
        size_t size;
        at = gm_pages_map(fd, offs[i], len, &base, &size);
        cr_assert(at != NULL, "offset %lld", (long long)offs[i]);
        cr_assert((size_t)(at - base) < page && size == (size_t)(at - base) + len);
        cr_assert(memcmp(at, data + offs[i], len) == 0, "offset %lld", (long long)offs[i]);
        gm_pages_touch(at, at + len, 0);
        cr_assert(memcmp(at, data + offs[i], len) == 0);
        at[0] ^= 0x5a; /* shared: the write reaches the file */
        data[offs[i]] ^= 0x5a;
        munmap(base, size);
    }
    size_t got_len;
    char *got = read_file(path, &got_len);
    cr_assert_eq(got_len, n);
    cr_assert(memcmp(got, data, n) == 0);
    char *none_base;
    size_t none_size;
    cr_assert_null(gm_pages_map(-1, 0, page, &none_base, &none_size));
    close(fd);
    free(got);
    free(data);
}
