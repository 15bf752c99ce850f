/*
 * pages.c - bulk work on memory (see pages.h): the one parallel copy, the one page
 * toucher and the one mapping of a file at an offset, shared by the mapping
 * writer, the reserving ahead and the text path.
 *
 * The copy cuts its bytes into equal pieces of a megabyte or more, as many as
 * there are threads at most, and runs them on the persistent pool (pool.c). The
 * toucher asks the kernel to populate the pages writable in one call, which
 * spares a trap per page; where it cannot, a locked add of zero to each page's
 * first byte faults the page in without changing a byte.
 */
#define _GNU_SOURCE
#include "base/pages.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/util.h"

void gm_pages_copy_plan(gm_pages_copy_job *c, void *dst, const void *src, size_t len, int most)
{
    c->dst = dst;
    c->src = src;
    c->len = len;
    c->pieces = (int)(len / GM_PAGES_COPY_PIECE) + 1;
    if (most >= 1 && c->pieces > most)
        c->pieces = most;
}

void gm_pages_copy_range(const gm_pages_copy_job *c, int p, size_t *lo, size_t *hi)
{
    *lo = c->len * (size_t)p / (size_t)c->pieces;
    *hi = c->len * (size_t)(p + 1) / (size_t)c->pieces;
}

void gm_pages_copy_piece(const gm_pages_copy_job *c, int p)
{
    size_t lo, hi;
    gm_pages_copy_range(c, p, &lo, &hi);
    memcpy(c->dst + lo, c->src + lo, hi - lo);
}

static void copy_task(void *ctx, int p)
{
    gm_pages_copy_piece(ctx, p);
}

void gm_pages_copy(void *dst, const void *src, size_t len, int nthreads)
{
    gm_pages_copy_job c;
    gm_pages_copy_plan(&c, dst, src, len, nthreads);
    gm_parallel_for(c.pieces, c.pieces, copy_task, &c);
}

void gm_pages_touch(void *from, void *to, int populate)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)from + page - 1) / page * page;
    uintptr_t hi = ((uintptr_t)to + page - 1) / page * page;
#ifdef MADV_POPULATE_WRITE
    if (populate && hi > lo && madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) == 0)
        return;
#endif
    for (uintptr_t a = lo; a < hi; a += page)
        __atomic_fetch_add((unsigned char *)a, 0, __ATOMIC_RELAXED);
}

char *gm_pages_map(int fd, off_t at, size_t len, char **base, size_t *size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t skip = (size_t)at % page;
    char *b = mmap(NULL, skip + len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, at - (off_t)skip);
    if (b == MAP_FAILED)
        return NULL;
    *base = b;
    *size = skip + len;
    return b + skip;
}
