/*
 * reserve.h - the output file's space reserved with fallocate before its pages are
 * written through a mapping (reserve.c): a reservation (one region's, or one
 * running ahead of the whole output) and the ahead object, which maps the space
 * to come and has threads fault its pages in behind the reservation.
 */
#ifndef GM_RESERVE_H
#define GM_RESERVE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A reservation: len bytes of the file from at on, reserved with fallocate piece
 * by piece by one thread (gm_reservation_run) while other threads fill the pieces
 * already reserved (gm_reservation_wait first). */
typedef struct gm_reservation {
    int fd;           /* the file reserved in (gm_reservation_init) */
    off_t at;         /* the file offset the reservation starts at (gm_reservation_init) */
    size_t len;       /* the bytes to reserve: grows until final (under lock) */
    int final;        /* len grows no more (under lock) */
    pthread_mutex_t lock; /* guards the fields marked under lock (gm_reservation_init) */
    pthread_cond_t grew;  /* len, reserved or the end changed (signalled in reserve.c) */
    size_t reserved;  /* bytes reserved from at on (atomic; changed under lock) */
    int err;          /* fallocate's errno: the reserving stopped (under lock) */
    int over;         /* the reserving has ended, whatever it reached (under lock) */
    int stop;         /* asked to end early (atomic; set under lock) */
    int waiting;      /* threads waiting for a piece (under lock) */
    double time;      /* inside fallocate */
} gm_reservation;

/* A final reservation of len bytes from at, of which the first reserved are
 * reserved already. Can't fail. */
void gm_reservation_init(gm_reservation *v, int fd, off_t at, size_t len, size_t reserved);
void gm_reservation_destroy(gm_reservation *v);

/* Reserves up to len (waiting for it to grow until it is final), an error, or a
 * stop, on the calling thread. */
void gm_reservation_run(gm_reservation *v);

/* Waits until the first end bytes are reserved: 1, or 0 when the reserving ended
 * short of them. */
int gm_reservation_wait(gm_reservation *v, size_t end);

/* For the tests: with on, fallocate answers EOPNOTSUPP. */
void gm_reserve_test_refuse(int on);

/* Reserving ahead: a mapping of at most most bytes of fd from at on, a thread
 * reserving its space as far as gm_ahead_grow lets it, and touchers faulting the
 * reserved pages in, piece by piece. */
struct gm_ahead;

/* Starts reserving ahead with touchers threads (none reserved yet, the length
 * not final). Returns NULL where the mapping or the thread cannot be had: the
 * writing then reserves and maps as it goes. */
struct gm_ahead *gm_ahead_start(int fd, off_t at, uint64_t most, int touchers);

/* Reserving ahead without a mapping, for an output written with write(2): the
 * thread only, so that the writes find the file's pages allocated (on tmpfs the
 * allocation is most of a write's cost). gm_ahead_find finds nothing in it and
 * it takes no touchers. Returns NULL where the thread cannot be had. */
struct gm_ahead *gm_ahead_start_unmapped(int fd, off_t at, uint64_t most);

/* Starts touchers until there are n (at most eight; none without a mapping). */
void gm_ahead_touchers(struct gm_ahead *a, int n);

/* Lets the reservation reach bytes from its start (no further than the mapping),
 * and with final no further at all. */
void gm_ahead_grow(struct gm_ahead *a, uint64_t bytes, int final);

/* Where bytes [at, at + len) of the file lie within the length the reservation
 * may reach, and it has not failed: their address in the mapping, with the
 * reservation in *v. NULL otherwise. */
char *gm_ahead_find(struct gm_ahead *a, off_t at, size_t len, gm_reservation **v);

/* Takes the pieces that hold bytes [lo, hi) from the reservation's start away from
 * the touchers: after it, only the caller writes there. */
void gm_ahead_take(struct gm_ahead *a, size_t lo, size_t hi);

/* What reserving ahead came to. */
typedef struct gm_ahead_report {
    double unmap;         /* seconds in munmap */
    double reserve;       /* seconds in fallocate */
    int touchers;         /* toucher threads started (gm_ahead_end, from ntouchers) */
    int64_t reserved_end; /* the file is reserved up to here (0: nothing reserved) */
} gm_ahead_report;

/* Ends reserving ahead: the threads stopped and joined, the mapping gone, a freed.
 * What was reserved stays reserved. */
void gm_ahead_end(struct gm_ahead *a, gm_ahead_report *r);

#endif
