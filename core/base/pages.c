/*
 * pages.c - bulk work on memory (see pages.h): the one parallel copy, the one page
 * toucher and the one mapping of a file at an offset, shared by the mapping
 * writer, the reserving ahead and the text path.
 *
 * The copy cuts its bytes into equal pieces of a megabyte or more, as many as
 * there are threads at most, and runs them on the persistent pool (pool.c). The
 * toucher (gm_pages_touch) asks the kernel to populate the pages writable in one call, which
 * spares a trap per page; where it cannot, a locked add of zero to each page's
 * first byte faults the page in without changing a byte; gm_toucher runs it on
 * a thread of its own a little ahead of a buffer's filler.
 */
#define _GNU_SOURCE
#include "base/pages.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
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

static void *toucher_main(void *arg)
{
    gm_toucher *t = arg;
    uint64_t done = 0;
    while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE) && done < t->end) {
        uint64_t at = __atomic_load_n(&t->at, __ATOMIC_ACQUIRE);
        uint64_t goal = at + (at + GM_TOUCH_STEP < GM_TOUCH_AHEAD ? at + GM_TOUCH_STEP
                                                                  : GM_TOUCH_AHEAD);
        goal = goal < t->end ? goal : t->end;
        if (done >= goal) {
            nanosleep(&(struct timespec){ 0, 100000 }, NULL);
            continue;
        }
        uint64_t n = goal - done < GM_TOUCH_STEP ? goal - done : GM_TOUCH_STEP;
        gm_pages_touch(t->base + done, t->base + done + n, 1); /* the filler may be writing there */
        done += n;
    }
    return NULL;
}

void gm_toucher_start(gm_toucher *t, char *base, uint64_t end)
{
    *t = (gm_toucher){ .base = base, .end = end };
    t->running = gm_thread_start(&t->tid, toucher_main, t) == 0;
}

void gm_toucher_at(gm_toucher *t, uint64_t at) { __atomic_store_n(&t->at, at, __ATOMIC_RELEASE); }

void gm_toucher_stop(gm_toucher *t)
{
    __atomic_store_n(&t->stop, 1, __ATOMIC_RELEASE);
    if (t->running)
        pthread_join(t->tid, NULL);
    t->running = 0;
}
