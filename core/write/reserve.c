/*
 * reserve.c - the output's space reserved ahead of its writing (see reserve.h).
 *
 * A page of a shared mapping that the file system cannot back is a SIGBUS at the
 * write; space reserved first with fallocate turns a full file system into
 * ENOSPC, an error that can be reported. fallocate holds the file's lock and runs
 * on one thread, so a reservation goes piece by piece while other threads fill
 * the pieces already reserved: it overlaps the filling instead of preceding it.
 *
 * Reserving ahead: a run knows how long its output can be before it has a byte of
 * it (no longer than the regular inputs, or than the text a pipe has given so
 * far), so the output's space is reserved from the start on a thread of its own
 * and, on the GPU's text path, a few threads fault its pages into one mapping
 * behind the reservation: the allocation and zeroing of the file's pages, most of
 * the cost of writing a tmpfs file, then overlap the read, the parse and the sort
 * (or CUDA's start-up and the device's work) instead of following them. Touching
 * is done piece by piece: a piece is taken either by a toucher (gm_pages_touch) or
 * by the writing (gm_ahead_take), never by both at once. Without a mapping (an
 * output written with write(2)) reserving ahead is the reserving thread alone.
 */
#define _GNU_SOURCE
#include "write/reserve.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/pages.h"
#include "base/util.h"

enum { RESERVE_PIECE = 4 << 20 };

/* ------------------------------------------------------------------ reservation */

static int refuse;

void gm_reserve_test_refuse(int on) { refuse = on; }

/* Reserves len bytes of fd's space at at (fallocate, retried when interrupted):
 * 0 or its errno; EOPNOTSUPP when the tests have the file system refuse. */
static int reserve_space(int fd, off_t at, off_t len)
{
    if (refuse)
        return EOPNOTSUPP;
    while (fallocate(fd, 0, at, len) != 0)
        if (errno != EINTR)
            return errno;
    return 0;
}

void gm_reservation_init(gm_reservation *v, int fd, off_t at, size_t len, size_t reserved)
{
    memset(v, 0, sizeof *v);
    v->fd = fd;
    v->at = at;
    v->len = len;
    v->final = 1;
    v->reserved = reserved;
    pthread_mutex_init(&v->lock, NULL);
    pthread_cond_init(&v->grew, NULL);
}

void gm_reservation_destroy(gm_reservation *v)
{
    pthread_cond_destroy(&v->grew);
    pthread_mutex_destroy(&v->lock);
}

/* Reserves up to len (waiting for it to grow until it is final), an error, or a
 * stop. A piece refused for want of space is tried again in halves down to a
 * page, so that a full file system ends the reservation within a page of the
 * space there was. */
void gm_reservation_run(gm_reservation *v)
{
    double t0 = gm_now(), waited = 0;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), piece = RESERVE_PIECE;
    for (size_t done = v->reserved;;) {
        pthread_mutex_lock(&v->lock);
        if (done >= v->len && !v->final && !__atomic_load_n(&v->stop, __ATOMIC_RELAXED)) {
            double w0 = gm_now();
            while (done >= v->len && !v->final && !__atomic_load_n(&v->stop, __ATOMIC_RELAXED))
                pthread_cond_wait(&v->grew, &v->lock);
            waited += gm_now() - w0;
        }
        size_t len = v->len;
        int stop = __atomic_load_n(&v->stop, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&v->lock);
        if (stop || done >= len)
            break;
        size_t n = len - done < piece ? len - done : piece;
        int e = reserve_space(v->fd, v->at + (off_t)done, (off_t)n);
        if (e == ENOSPC && n > page) {
            piece = (n / 2 + page - 1) / page * page;
            continue;
        }
        pthread_mutex_lock(&v->lock);
        if (e)
            v->err = e;
        else
            __atomic_store_n(&v->reserved, done += n, __ATOMIC_RELEASE);
        if (v->waiting)
            pthread_cond_broadcast(&v->grew);
        pthread_mutex_unlock(&v->lock);
        if (e)
            break;
    }
    pthread_mutex_lock(&v->lock);
    v->over = 1;
    pthread_cond_broadcast(&v->grew);
    pthread_mutex_unlock(&v->lock);
    v->time = gm_now() - t0 - waited;
}

/* Lets the reservation reach bytes (no further than cap), and with final no
 * further at all. */
static void reservation_grow(gm_reservation *v, size_t bytes, size_t cap, int final)
{
    pthread_mutex_lock(&v->lock);
    bytes = bytes < cap ? bytes : cap;
    if (bytes > v->len && !v->final)
        v->len = bytes;
    if (final)
        v->final = 1;
    pthread_cond_broadcast(&v->grew);
    pthread_mutex_unlock(&v->lock);
}

/* Asks the reserving to end early, waking it where it waits for len to grow. */
static void reservation_stop(gm_reservation *v)
{
    pthread_mutex_lock(&v->lock);
    __atomic_store_n(&v->stop, 1, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&v->grew);
    pthread_mutex_unlock(&v->lock);
}

/* Waits until the first end bytes are reserved: 1, or 0 when the reserving ended
 * short of them. */
int gm_reservation_wait(gm_reservation *v, size_t end)
{
    if (__atomic_load_n(&v->reserved, __ATOMIC_ACQUIRE) >= end)
        return 1;
    pthread_mutex_lock(&v->lock);
    v->waiting++;
    while (v->reserved < end && !v->err && !v->over)
        pthread_cond_wait(&v->grew, &v->lock);
    v->waiting--;
    int ok = v->reserved >= end;
    pthread_mutex_unlock(&v->lock);
    return ok;
}

/* ------------------------------------------------------------------ ahead */

enum { TOUCH_PIECE = 1 << 20, MAX_TOUCHERS = 8 };
enum { PIECE_FREE = 0, PIECE_TOUCHING = 1, PIECE_TAKEN = 2 }; /* a piece's state */

struct gm_ahead {
    gm_reservation v; /* the space reserved ahead (ahead_reserver_start, reservation_grow) */
    char *base;       /* the mapping, from the page holding v.at */
    size_t size;      /* base's mapped bytes, for munmap (gm_ahead_start, gm_pages_map) */
    char *dst;        /* v.at's byte in it */
    size_t cap;       /* the most the reservation may reach: the mapping's bytes from dst */
    pthread_t reserver; /* the thread running gm_reservation_run on v (ahead_reserver_start) */
    pthread_t touchers[MAX_TOUCHERS]; /* threads faulting pages in (gm_ahead_touchers) */
    int ntouchers;    /* touchers started (gm_ahead_touchers) */
    int npieces;      /* TOUCH_PIECE pieces of the mapping, 0 when unmapped (gm_ahead_start) */
    int next;         /* the next piece a toucher takes (atomic) */
    int *piece;       /* PIECE_FREE, PIECE_TOUCHING or PIECE_TAKEN (atomic) */
};

static void *ahead_reserve(void *arg)
{
    gm_reservation_run(&((struct gm_ahead *)arg)->v);
    return NULL;
}

static void *ahead_touch(void *arg)
{
    struct gm_ahead *a = arg;
    for (;;) {
        int k = __atomic_fetch_add(&a->next, 1, __ATOMIC_RELAXED);
        if (k >= a->npieces || __atomic_load_n(&a->v.stop, __ATOMIC_RELAXED))
            break;
        size_t lo = (size_t)k * TOUCH_PIECE;
        size_t hi = lo + TOUCH_PIECE < a->cap ? lo + TOUCH_PIECE : a->cap;
        if (!gm_reservation_wait(&a->v, hi)) { /* the reserving ended short of it */
            size_t got = __atomic_load_n(&a->v.reserved, __ATOMIC_ACQUIRE);
            if (got <= lo)
                break;
            hi = got;
        }
        int free_piece = PIECE_FREE;
        if (!__atomic_compare_exchange_n(&a->piece[k], &free_piece, PIECE_TOUCHING, 0,
                                         __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            continue; /* the writing got there first */
        gm_pages_touch(a->dst + lo, a->dst + hi, 0);
        __atomic_store_n(&a->piece[k], PIECE_TAKEN, __ATOMIC_RELEASE);
    }
    return NULL;
}

void gm_ahead_take(struct gm_ahead *a, size_t lo, size_t hi)
{
    for (int k = (int)(lo / TOUCH_PIECE); k < a->npieces && (size_t)k * TOUCH_PIECE < hi; k++) {
        int seen = PIECE_FREE;
        if (__atomic_compare_exchange_n(&a->piece[k], &seen, PIECE_TAKEN, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_ACQUIRE))
            continue;
        while (seen == PIECE_TOUCHING) { /* a millisecond at most */
            sched_yield();
            seen = __atomic_load_n(&a->piece[k], __ATOMIC_ACQUIRE);
        }
    }
}

void gm_ahead_touchers(struct gm_ahead *a, int n)
{
    while (a->dst && a->ntouchers < n && a->ntouchers < MAX_TOUCHERS &&
           gm_thread_start(&a->touchers[a->ntouchers], ahead_touch, a) == 0)
        a->ntouchers++;
}

/* Starts a's reserving thread (a->cap set, the length 0 and not final).
 * Returns 0, or -1 when the thread cannot be had. */
static int ahead_reserver_start(struct gm_ahead *a, int fd, off_t at)
{
    gm_reservation_init(&a->v, fd, at, 0, 0);
    a->v.final = 0;
    if (gm_thread_start(&a->reserver, ahead_reserve, a) == 0)
        return 0;
    gm_reservation_destroy(&a->v);
    return -1;
}

struct gm_ahead *gm_ahead_start_unmapped(int fd, off_t at, uint64_t most)
{
    struct gm_ahead *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->cap = (size_t)most;
    if (ahead_reserver_start(a, fd, at) != 0) {
        free(a);
        return NULL;
    }
    return a;
}

struct gm_ahead *gm_ahead_start(int fd, off_t at, uint64_t most, int touchers)
{
    struct gm_ahead *a = calloc(1, sizeof *a);
    int npieces = (int)((most + TOUCH_PIECE - 1) / TOUCH_PIECE);
    int *piece = calloc((size_t)npieces, sizeof *piece);
    char *dst = a && piece ? gm_pages_map(fd, at, (size_t)most, &a->base, &a->size) : NULL;
    if (!dst) { /* the writing reserves and maps as it goes */
        free(piece);
        free(a);
        return NULL;
    }
    a->dst = dst;
    a->cap = (size_t)most;
    a->piece = piece;
    a->npieces = npieces;
    if (ahead_reserver_start(a, fd, at) != 0) {
        munmap(a->base, a->size);
        free(piece);
        free(a);
        return NULL;
    }
    gm_ahead_touchers(a, touchers);
    return a;
}

void gm_ahead_grow(struct gm_ahead *a, uint64_t bytes, int final)
{
    reservation_grow(&a->v, (size_t)bytes, a->cap, final);
}

char *gm_ahead_find(struct gm_ahead *a, off_t at, size_t len, gm_reservation **v)
{
    pthread_mutex_lock(&a->v.lock);
    int fits = a->dst && !a->v.err && at >= a->v.at && (size_t)(at - a->v.at) + len <= a->v.len;
    pthread_mutex_unlock(&a->v.lock);
    *v = &a->v;
    return fits ? a->dst + (at - a->v.at) : NULL;
}

void gm_ahead_end(struct gm_ahead *a, gm_ahead_report *r)
{
    reservation_stop(&a->v);
    pthread_join(a->reserver, NULL);
    for (int i = 0; i < a->ntouchers; i++)
        pthread_join(a->touchers[i], NULL);
    double t0 = gm_now();
    if (a->base)
        munmap(a->base, a->size);
    r->unmap = gm_now() - t0;
    r->reserve = a->v.time;
    r->touchers = a->ntouchers;
    r->reserved_end = a->v.reserved > 0 ? (int64_t)a->v.at + (int64_t)a->v.reserved : 0;
    gm_reservation_destroy(&a->v);
    free(a->piece);
    free(a);
}
