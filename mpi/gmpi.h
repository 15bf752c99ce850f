/*
 * gmpi.h - gpumerge across the ranks of an MPI job (gpumerge-mpi): the same
 * merge, sort and check as one process, the same bytes out, every rank reading
 * its share of the inputs from a shared file system.
 *
 *   sort   a sample sort (PSRS, Shi and Schaeffer 1992): byte ranges cut at
 *          line boundaries, a stable local sort of records (core/recsort),
 *          splitters from regular samples, an exchange in bounded rounds,
 *          a stable k-way merge of what came (core/recmerge), each rank's
 *          slice written at its byte offset (mpi/samplesort.c)
 *   merge  no exchange: each rank co-ranks every sorted input by byte offset
 *          and merges its slices (mpi/comerge.c)
 *   check  each rank checks its byte range and the line before it
 *          (mpi/comerge.c)
 *
 * Ties between equal lines are broken by input position everywhere (a splitter
 * is a line and a position), so -s, -u and stability hold across ranks. A
 * status is agreed by every rank after each phase (gm_mpi_agree): the first
 * failing rank's message is the one reported, once, by rank 0.
 */
#ifndef GM_MPI_H
#define GM_MPI_H

#include <mpi.h>
#include <pthread.h>
#include <stdint.h>

#include "../core/gm.h"
#include "../core/read/lines.h"
#include "../core/write/recsink.h"

/* One job over the ranks, and what -v reports of it per rank. */
typedef struct gm_mpi {
    MPI_Comm comm;          /* the job's communicator; gm_mpi_run (run.c) */
    int rank, size;         /* this rank, and how many; gm_mpi_run */
    const gm_config *cfg;   /* the command line's options; gm_mpi_run */
    const gm_keyspec *ks;   /* cfg's keys, the order every phase compares by; gm_mpi_run */
    int nthreads;           /* threads per rank (cfg's or the CPUs'); gm_mpi_run */
    size_t budget;          /* memory per rank: -S or the default, at least MIN_BUDGET (run.c) */
    /* -v */
    /* bytes read (localsort.c, comerge.c), sent and received (exchange.c), written
     * (output.c) */
    double bytes_read, bytes_sent, bytes_recv, bytes_out;
    double bytes_msg;       /* of bytes_recv, those that came by messages */
    /* seconds per phase, added by samplesort.c and comerge.c; t_read by localsort.c,
     * t_write by output.c */
    double t_read, t_sort, t_sample, t_exchange, t_merge, t_write;
    double t_copy, t_pages; /* of the exchange: messages, waiting for spools' pages */
    int rounds;             /* of the exchange */
    int direct;             /* sources read in place from their spools */
    int runs;               /* temporary runs of the local sort */
    /* rank 0: -o's file beside the target, made ahead (gm_mpi_output_ahead) */
    char *out_tmp;
    pthread_t out_thread;   /* makes its pages (out_thread_on) */
    int out_thread_on;      /* out_thread was started; gm_mpi_output_ahead (output.c) */
    int out_reserved;       /* the thread made them all */
    int64_t out_bytes;      /* how many it makes */
} gm_mpi;

/* One input seen by every rank: a regular file and its size (rank 0's). */
typedef struct gm_mpi_input {
    const char *name;   /* as given on the command line; gm_mpi_inputs (ranges.c) */
    char shown[512];    /* the name as messages quote it; gm_mpi_inputs */
    int fd;             /* open for reading, or -1; gm_mpi_inputs (or a spool's, for a view) */
    int64_t size;       /* bytes, rank 0's size broadcast to all; gm_mpi_inputs */
    int64_t base;   /* its first byte's offset in the inputs' concatenation */
} gm_mpi_input;

/* Runs op over names across comm; every rank calls it with the same arguments.
 * Returns the agreed status (the same on every rank; st filled on every rank). */
int gm_mpi_run(gm_op op, const gm_config *cfg, char *const *names, int nnames, MPI_Comm comm,
               gm_status *st);

/* ---- agreement (run.c) */

/* Every rank's rc agreed: GM_OK when all are; else the lowest failing rank's
 * status, copied into st on every rank. Collective. */
int gm_mpi_agree(gm_mpi *m, int rc, gm_status *st);

/* ---- ranges of files (ranges.c) */

/* Opens every input on every rank and agrees on their sizes. *regular: every
 * input is a regular file (else only rank 0 can read them all). Returns the
 * agreed status; on success *ins has nnames entries (gm_mpi_inputs_close). */
int gm_mpi_inputs(gm_mpi *m, char *const *names, int nnames, gm_mpi_input **ins,
                  int *regular, gm_status *st);
void gm_mpi_inputs_close(gm_mpi_input *ins, int n);

/* The first line start at or after off in in (in->size when none). */
int gm_mpi_line_start(const gm_mpi_input *in, char eol, int64_t off, int64_t *start,
                      gm_status *st);

/* The line that starts at off (*len bytes, without its terminator; malloc'd). */
int gm_mpi_line_at(const gm_mpi_input *in, char eol, int64_t off, unsigned char **line,
                   size_t *len, gm_status *st);

/* The line that ends just before off (off > 0, a line start; malloc'd). */
int gm_mpi_line_before(const gm_mpi_input *in, char eol, int64_t off, unsigned char **line,
                       size_t *len, gm_status *st);

/* Opens a source reading in's bytes [off, off + len). */
int gm_mpi_src_range(gm_lines_src *s, const gm_mpi_input *in, char eol, int64_t off,
                     int64_t len, gm_status *st);

/* Adds the lines of in before off to the line number of a "FILE:LINE: ..."
 * message about in (a message of a source opened at off). */
void gm_mpi_renumber(gm_status *st, const gm_mpi_input *in, char eol, int64_t off);

/* A "NAME:LINE: ..." message about a copy of in's bytes from off on, named
 * name, made one about in (its name, its line number). */
void gm_mpi_rename(gm_status *st, const char *name, const gm_mpi_input *in, char eol,
                   int64_t off);

/* "FILE:LINE: disorder: TEXT" for the line at off of in. Returns code. */
int gm_mpi_disorder(gm_status *st, gm_code code, const gm_mpi_input *in, char eol,
                    int64_t off, const unsigned char *line, size_t len);

/* ---- output (output.c) */

/* Where a rank's output goes before it is placed: a spool file (in memory when
 * a quarter of the budget, else in -T), written through a gm_recsink. */
typedef struct gm_mpi_spool {
    int fd;              /* a memfd or a temporary file; gm_mpi_spool_open, gm_mpi_by_gm_run */
    char *path;          /* a temporary file's, or NULL (in memory) */
    int64_t bytes;       /* bytes written; the sink's writer (gm_mpi_merge_into, sort_into,
                          * the exchange) */
    int64_t skip;        /* bytes at its start that are not output */
} gm_mpi_spool;

int gm_mpi_spool_open(gm_mpi *m, gm_mpi_spool *sp, int64_t expect, gm_status *st);
void gm_mpi_spool_close(gm_mpi_spool *sp);

/* Places every rank's spool, in rank order, into -o (a temporary file beside
 * it, sized to the total, each slice written at its offset, renamed by rank 0
 * once every rank succeeded) or onto rank 0's standard output (gathered in
 * bounded chunks). rc is this rank's status so far: an error on any rank leaves
 * -o untouched. Collective; returns the agreed status. */
int gm_mpi_place(gm_mpi *m, gm_mpi_spool *sp, int rc, gm_status *st);

/* Rank 0, before a sort into a regular -o: makes -o's file beside the target
 * now, and its pages (total bytes, the inputs' size) on a thread of its own
 * while the ranks sort, as the one-process program reserves its output ahead;
 * gm_mpi_place takes the file, and each rank's slice is copied into pages
 * already made. What fails here is left to gm_mpi_place, which makes the file
 * then. gm_mpi_output_ahead_drop removes a file gm_mpi_place did not take. */
void gm_mpi_output_ahead(gm_mpi *m, int64_t total);
void gm_mpi_output_ahead_drop(gm_mpi *m);

/* -u after a merge that could not be seeded: a first line of sp equal to seed
 * (the last line of the ranks before) is skipped. */
int gm_mpi_skip_seed(gm_mpi *m, gm_mpi_spool *sp, const unsigned char *seed, size_t seed_len,
                     gm_status *st);

/* Merges the k sources (check: each must be in order) into the spool out
 * through a records sink, seeded with -u's last line of the ranks before
 * (seed; NULL: none); out->bytes gets what was written. */
int gm_mpi_merge_into(gm_mpi *m, gm_lines_src **srcs, int k, int check,
                      const unsigned char *seed, size_t seed_len, gm_mpi_spool *out,
                      gm_status *st);

/* A -u sink's last line, as if line (len bytes) had been put last. */
int gm_mpi_seed_last(gm_recsink *k, const unsigned char *line, size_t len, gm_status *st);

/* ---- the sample sort (samplesort.c, exchange.c) */

/* The exchange's state: what came from each rank. */
typedef struct gm_mpi_exchange {
    int *host;              /* every rank's host, as its lowest rank (gm_mpi_hosts) */
    gm_mpi_spool *from;     /* one spool per source rank */
    int *view_fd;           /* per source: a descriptor its bytes are read from where
                               they lie (the rank's own sorted spool, or the
                               source's on this host), -1: from[source] */
    int64_t *view_off;      /* per source: where its bytes begin there */
    int64_t *expect;        /* bytes each source sends here */
    int64_t *cursor;        /* the next byte to send to each rank */
    pthread_t ahead;        /* makes the spools' pages ahead (ahead_on) */
    int ahead_on;           /* ahead was started; gm_mpi_exchange_ahead (exchange.c) */
    int64_t ahead_each;     /* the bytes it makes in each spool */
    int ahead_spools;       /* in the first this many spools */
    int ahead_me;           /* the rank, for the thread */
} gm_mpi_exchange;

/* Opens the exchange's spools before the rank's own sort of range bytes and,
 * where they are in memory, makes the pages of those of sources on other hosts
 * (range / ranks each) on a thread of its own meanwhile: making a spool's pages
 * costs as much as copying into them, and the own sort leaves the host's memory
 * bandwidth to spare. gm_mpi_exchange_run waits for it; gm_mpi_exchange_free
 * too. Collective. */
int gm_mpi_exchange_ahead(gm_mpi *m, gm_mpi_exchange *x, int64_t range, gm_status *st);

/* Every rank's host, as the lowest world rank on it (malloc'd; direct.c).
 * Collective. */
int *gm_mpi_hosts(gm_mpi *m);

/* The exchange's reads between ranks of one host (direct.c). */
typedef struct gm_mpi_direct {
    int *fd;          /* per source: its sorted spool, opened here, or -1 */
    int64_t *from;    /* per source: where this rank's bytes begin in it */
    int *reads;       /* per source: this rank reads them itself */
    int *read_by;     /* per destination: it reads this rank's bytes itself */
} gm_mpi_direct;

/* Opens the sorted spool (local, cut at cut) of every other source on this
 * rank's host (host: gm_mpi_hosts) that sends it bytes (expect), and tells
 * every source which of its destinations read for themselves. Collective;
 * returns the sources read here. */
int gm_mpi_direct_plan(gm_mpi *m, const int *host, const gm_mpi_input *local,
                       const int64_t *cut, const int64_t *expect, gm_mpi_direct *d);
void gm_mpi_direct_free(gm_mpi_direct *d, int P);

/* Sends the bytes [cut[d], cut[d + 1]) of the rank's sorted lines (local, its
 * cuts at line starts) to rank d, for every d: what a rank on the same host
 * can open it reads where they lie (x->view_fd), as it does its own share;
 * the rest goes by messages in bounded rounds into x->from[source].
 * Collective; agreed status. */
int gm_mpi_exchange_run(gm_mpi *m, const gm_mpi_input *local, const int64_t *cut,
                        gm_mpi_exchange *x, gm_status *st);
void gm_mpi_exchange_free(gm_mpi_exchange *x, int P);

/* With -u: the last line of the ranks before this one, malloc'd (NULL: none).
 * Collective. */
int gm_mpi_unique_seed(gm_mpi *m, const gm_mpi_exchange *x, unsigned char **seed,
                       size_t *seed_len, gm_status *st);

/* Merges what came, stably by source rank, into a new spool out (seed: -u's
 * last line, which out skips when it begins with an equal one). */
int gm_mpi_merge_received(gm_mpi *m, gm_mpi_exchange *x, const unsigned char *seed,
                          size_t seed_len, gm_mpi_spool *out, gm_status *st);

/* The rank's byte range [lo, hi) of the concatenation, sorted (-u applied)
 * into a new spool (localsort.c). */
int gm_mpi_local_sort(gm_mpi *m, gm_mpi_input *ins, int nins, int64_t lo, int64_t hi,
                      gm_mpi_spool *sorted, gm_status *st);

/* Whether the one-process program does a rank's own sort and merge: when its
 * integer path may serve the order (whole lines by -n) or the rank has a GPU to
 * use (localsort.c). */
int gm_mpi_use_gm_run(const gm_mpi *m);

/* op by gm_run over the inputs' bytes [lo[i], hi[i]) (those not empty), read
 * where they lie (gm_config's ranges), into a new spool out; a message about a
 * range is made one about its input, its line counted in the input. */
int gm_mpi_run_ranges(gm_mpi *m, gm_op op, const gm_mpi_input *ins, int nins,
                      const int64_t *lo, const int64_t *hi, gm_mpi_spool *out, gm_status *st);
/* Below this many threads a bulk copy goes in the kernel or through a buffer
 * by pread and pwrite: on one or two threads the target mapping's page faults
 * cost more than the copy into the buffer. */
enum { GM_MPI_MAPPED_FROM = 4 };

/* Copies len bytes of from at from_off to to at to_off (bulk.c): read by the
 * parallel pread on nthreads threads of the pool into a mapping of the
 * target, else in the kernel or by pread and pwrite. Returns 0, an errno value
 * (ENOSPC when the target's file system lacks the room: not asked when
 * reserved says the target's pages are made; EIO for a read that failed), or
 * -1 when from ends first. */
int gm_mpi_copy_bytes(int from, int64_t from_off, int to, int64_t to_off, int64_t len,
                      int reserved, int nthreads);
/* The same by pread and pwrite through a buffer on the calling thread; safe
 * for any file (one that ends early: -1). */
int gm_mpi_copy_plain(int from, int64_t from_off, int to, int64_t to_off, int64_t len);
/* Whether fd's file system has room for len more bytes (or does not say). */
int gm_mpi_room_for(int fd, int64_t len);

/* op by gm_run over the n descriptors into a new spool, a temporary file: each
 * descriptor's file whole, or the bytes [ranges[2 i], ranges[2 i + 1]) of it
 * (ranges not NULL). */
int gm_mpi_by_gm_run(gm_mpi *m, gm_op op, const int *fds, const int64_t *ranges, int n,
                     gm_mpi_spool *out, gm_status *st);

/* ---- the operations */

int gm_mpi_sort(gm_mpi *m, gm_mpi_input *ins, int nins, gm_status *st);
int gm_mpi_merge(gm_mpi *m, gm_mpi_input *ins, int nins, gm_status *st);
int gm_mpi_check(gm_mpi *m, gm_mpi_input *in, gm_status *st);

/* The co-rank of a merge lifted from arrays to files: in the sorted input in,
 * from the line start lo on, the first line start whose line, at position
 * (p0, its offset), comes after the line b at position (b0, b1); in->size when
 * none does. A binary search over byte offsets: "the line starting at or after
 * x comes after b" is monotone in x when in is sorted. */
int gm_mpi_corank(const gm_mpi_input *in, const gm_keyspec *ks, uint64_t p0, int64_t lo,
                  const unsigned char *b, size_t blen, uint64_t b0, uint64_t b1, int64_t *pos,
                  gm_status *st);

/* Compares lines a and b by ks, then by their positions (pa, pb: any order
 * that is the input order). */
int gm_mpi_cmp_pos(const gm_keyspec *ks, const unsigned char *a, size_t alen, uint64_t pa0,
                   uint64_t pa1, const unsigned char *b, size_t blen, uint64_t pb0, uint64_t pb1);

#endif
