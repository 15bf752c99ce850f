/*
 * exchange.c - the sample sort's exchange and merge (see gmpi.h): every rank's
 * sorted lines, cut by the splitters, go to their ranks as bytes. The rank's
 * own share, and what a source on the same host sends, stay where they lie:
 * the merge reads them from the source's sorted spool (direct.c), through a
 * descriptor of the rank's own, with no copy. What sources on other hosts send
 * lands in a spool per source, sized to what comes (MPI_Alltoall of the
 * counts) and mapped, in rounds of nonblocking sends and receives straight
 * from the mapping of the rank's sorted lines into those of the spools, with
 * no buffer between. Those spools, in memory, have their pages made ahead, on
 * a thread of their own during the rank's own sort (gm_mpi_exchange_ahead), so
 * that the exchange only copies. The parts, each in its source's sorted order,
 * are then merged stably by source rank (core/recmerge, or gm_run with
 * gm_config's ranges), which is the input order of equal lines; with -u the
 * merge's sink begins with the last line of the ranks before (the greatest
 * line any of them received), so that a key split across ranks is kept once,
 * first.
 */
#define _GNU_SOURCE
#include "gmpi.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/merge/recmerge.h"
#include "../core/base/util.h"

enum { MIN_ROUND = 64 << 10, MAX_ROUND = 1 << 30 };

/* The spools, the counts, the cursors and the hosts, once an exchange.
 * Collective. */
static void exchange_alloc(gm_mpi *m, gm_mpi_exchange *x)
{
    const int P = m->size;
    if (x->from)
        return;
    x->host = gm_mpi_hosts(m);
    x->from = calloc((size_t)P, sizeof *x->from);
    x->view_fd = calloc((size_t)P, sizeof *x->view_fd);
    x->view_off = calloc((size_t)P, sizeof *x->view_off);
    x->expect = calloc((size_t)P, sizeof *x->expect);
    x->cursor = calloc((size_t)P, sizeof *x->cursor);
    if (!x->from || !x->view_fd || !x->view_off || !x->expect || !x->cursor)
        MPI_Abort(m->comm, 2); /* a few words per rank */
    for (int s = 0; s < P; s++)
        x->from[s].fd = x->view_fd[s] = -1;
}

/* Whether source s is on another host: its bytes come by messages. */
static int far(const gm_mpi_exchange *x, int me, int s)
{
    return x->host[s] != x->host[me];
}

static void *ahead_main(void *arg)
{
    gm_mpi_exchange *x = arg;
    /* a failure leaves the pages to the copies, which report what fails */
    for (int s = 0; s < x->ahead_spools; s++)
        if (far(x, x->ahead_me, s) && fallocate(x->from[s].fd, 0, 0, (off_t)x->ahead_each) != 0)
            break;
    return NULL;
}

static void ahead_wait(gm_mpi_exchange *x)
{
    if (x->ahead_on)
        pthread_join(x->ahead, NULL);
    x->ahead_on = 0;
}

int gm_mpi_exchange_ahead(gm_mpi *m, gm_mpi_exchange *x, int64_t range, gm_status *st)
{
    const int P = m->size;
    exchange_alloc(m, x);
    int rc = GM_OK;
    for (int s = 0; s < P && !rc; s++)
        rc = gm_mpi_spool_open(m, &x->from[s], range, st);
    int in_memory = 1, nfar = 0;
    for (int s = 0; s < P && !rc; s++) {
        in_memory &= x->from[s].path == NULL;
        nfar += far(x, m->rank, s);
    }
    x->ahead_each = range / P;
    x->ahead_spools = P;
    x->ahead_me = m->rank;
    if (rc || !in_memory || nfar == 0 || x->ahead_each < (1 << 20))
        return rc;
    x->ahead_on = pthread_create(&x->ahead, NULL, ahead_main, x) == 0;
    return GM_OK;
}

void gm_mpi_exchange_free(gm_mpi_exchange *x, int P)
{
    ahead_wait(x);
    for (int r = 0; x->from && r < P; r++) {
        gm_mpi_spool_close(&x->from[r]);
        if (x->view_fd[r] >= 0)
            close(x->view_fd[r]);
    }
    free(x->host);
    free(x->from);
    free(x->view_fd);
    free(x->view_off);
    free(x->expect);
    free(x->cursor);
}

/* Where source s's bytes lie: the descriptor, and *off, where they begin. */
static int source_fd(const gm_mpi_exchange *x, int s, int64_t *off)
{
    *off = x->view_fd[s] >= 0 ? x->view_off[s] : 0;
    return x->view_fd[s] >= 0 ? x->view_fd[s] : x->from[s].fd;
}

/* A spool of len bytes mapped shared and writable (NULL for none), its space
 * looked for first; *size for munmap. */
static unsigned char *map_spool(gm_mpi_spool *sp, int64_t len, gm_status *st)
{
    if (len == 0)
        return NULL;
    int err = !gm_mpi_room_for(sp->fd, len) ? ENOSPC
              : ftruncate(sp->fd, (off_t)len) != 0 ? errno : 0;
    if (err) {
        gm_fail(st, GM_EIO, "write failed: a temporary file: %s", strerror(err));
        return MAP_FAILED;
    }
    void *p = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED, sp->fd, 0);
    if (p == MAP_FAILED)
        gm_fail(st, GM_ENOMEM, "out of memory exchanging: %s", strerror(errno));
    return p;
}

/* The mappings of one exchange: the rank's sorted lines, read; one spool per
 * source, written. */
struct maps {
    unsigned char *local, **to; /* the local lines, and per source its spool (NULL where
                                 * a view is read instead); maps_open */
    int64_t local_len;          /* bytes mapped at local, for munmap; maps_open */
};

static int maps_open(gm_mpi *m, const gm_mpi_input *local, gm_mpi_exchange *x, struct maps *mp,
                     gm_status *st)
{
    const int P = m->size;
    mp->local_len = local->size;
    mp->local = NULL;
    mp->to = calloc((size_t)P, sizeof *mp->to);
    if (!mp->to)
        return gm_fail(st, GM_ENOMEM, "out of memory exchanging");
    if (local->size > 0) {
        mp->local = mmap(NULL, (size_t)local->size, PROT_READ, MAP_SHARED, local->fd, 0);
        if (mp->local == MAP_FAILED) {
            mp->local = NULL;
            return gm_fail(st, GM_ENOMEM, "out of memory exchanging: %s", strerror(errno));
        }
        madvise(mp->local, (size_t)local->size, MADV_SEQUENTIAL);
    }
    for (int s = 0; s < P; s++) {
        if (x->view_fd[s] >= 0)
            continue;
        mp->to[s] = map_spool(&x->from[s], x->expect[s], st);
        if (mp->to[s] == MAP_FAILED) {
            mp->to[s] = NULL;
            return GM_EIO;
        }
    }
    return GM_OK;
}

static void maps_close(const gm_mpi_exchange *x, struct maps *mp, int P)
{
    if (mp->local)
        munmap(mp->local, (size_t)mp->local_len);
    for (int s = 0; mp->to && s < P; s++)
        if (mp->to[s])
            munmap(mp->to[s], (size_t)x->expect[s]);
    free(mp->to);
}

/* Whether bytes are left to send or receive by messages. */
static int pending(const gm_mpi *m, const int64_t *cut, const gm_mpi_exchange *x,
                   const int64_t *got)
{
    for (int r = 0; r < m->size; r++)
        if (got[r] < x->expect[r] || x->cursor[r] < cut[r + 1])
            return 1;
    return 0;
}

/* One round: up to round bytes to and from every other rank by nonblocking
 * sends and receives straight between the mappings. Both sides cut a pair's
 * bytes into the same rounds, so that the messages match without counts
 * exchanged. Returns whether bytes are left. */
static int round_run(gm_mpi *m, const int64_t *cut, gm_mpi_exchange *x, struct maps *mp,
                     int64_t round, MPI_Request *req, int64_t *got)
{
    const int P = m->size;
    int nreq = 0;
    for (int s = 0; s < P; s++) {
        int64_t n = x->expect[s] - got[s];
        n = n < round ? n : round;
        if (s == m->rank || n == 0)
            continue;
        MPI_Irecv(mp->to[s] + got[s], (int)n, MPI_BYTE, s, 0, m->comm, &req[nreq++]);
        got[s] += n;
        m->bytes_recv += (double)n;
        m->bytes_msg += (double)n;
    }
    for (int d = 0; d < P; d++) {
        int64_t n = cut[d + 1] - x->cursor[d];
        n = n < round ? n : round;
        if (d == m->rank || n == 0)
            continue;
        MPI_Isend(mp->local + x->cursor[d], (int)n, MPI_BYTE, d, 0, m->comm, &req[nreq++]);
        x->cursor[d] += n;
        m->bytes_sent += (double)n;
    }
    MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
    return pending(m, cut, x, got);
}

/* The sources whose bytes are read where they lie: the rank's own share of
 * its sorted spool, and what sources on this host that it can open send it
 * (direct.c); their senders skip them. Collective. */
static int read_in_place(gm_mpi *m, const gm_mpi_input *local, const int64_t *cut,
                         gm_mpi_exchange *x, int64_t *got, gm_status *st)
{
    const int P = m->size, me = m->rank;
    gm_mpi_direct direct = { 0 };
    m->direct = gm_mpi_direct_plan(m, x->host, local, cut, x->expect, &direct);
    for (int d = 0; d < P; d++)
        if (direct.read_by[d]) {
            m->bytes_sent += (double)(cut[d + 1] - x->cursor[d]);
            x->cursor[d] = cut[d + 1];
        }
    for (int s = 0; s < P; s++)
        if (direct.reads[s]) {
            x->view_fd[s] = direct.fd[s];
            x->view_off[s] = direct.from[s];
            direct.fd[s] = -1;
            got[s] = x->expect[s];
            m->bytes_recv += (double)x->expect[s];
        }
    gm_mpi_direct_free(&direct, P);
    x->cursor[me] = cut[me + 1];
    got[me] = x->expect[me];
    if (x->expect[me] == 0)
        return GM_OK;
    x->view_fd[me] = fcntl(local->fd, F_DUPFD_CLOEXEC, 0);
    x->view_off[me] = cut[me];
    if (x->view_fd[me] < 0)
        return gm_fail(st, GM_EIO, "cannot read: a temporary file: %s", strerror(errno));
    return GM_OK;
}

int gm_mpi_exchange_run(gm_mpi *m, const gm_mpi_input *local, const int64_t *cut,
                        gm_mpi_exchange *x, gm_status *st)
{
    const int P = m->size;
    int64_t *send = calloc((size_t)P, sizeof *send), *got = calloc((size_t)P, sizeof *got);
    MPI_Request *req = calloc(2 * (size_t)P, sizeof *req);
    if (!send || !got || !req)
        MPI_Abort(m->comm, 2); /* a few words per rank */
    int opened = x->from != NULL; /* by gm_mpi_exchange_ahead */
    exchange_alloc(m, x);
    for (int d = 0; d < P; d++) {
        x->cursor[d] = cut[d];
        send[d] = cut[d + 1] - cut[d];
    }
    MPI_Alltoall(send, 1, MPI_INT64_T, x->expect, 1, MPI_INT64_T, m->comm);
    free(send);
    int64_t coming = 0;
    for (int s = 0; s < P; s++)
        coming += x->expect[s];
    int rc = GM_OK;
    for (int s = 0; s < P && !rc && !opened; s++)
        rc = gm_mpi_spool_open(m, &x->from[s], coming, st);
    double t0 = gm_now();
    ahead_wait(x);
    m->t_pages += gm_now() - t0;
    rc = gm_mpi_agree(m, rc, st);
    if (!rc)
        rc = read_in_place(m, local, cut, x, got, st);
    struct maps mp = { 0 };
    if (!rc)
        rc = maps_open(m, local, x, &mp, st);
    rc = gm_mpi_agree(m, rc, st); /* every rank enters the rounds, or none */
    int64_t round = (int64_t)(m->budget / (4 * (size_t)P));
    round = round < MIN_ROUND ? MIN_ROUND : round > MAX_ROUND ? MAX_ROUND : round;
    /* a rank with no messages left is in no other's */
    int more = !rc && pending(m, cut, x, got);
    double t2 = gm_now();
    for (; more; m->rounds++)
        more = round_run(m, cut, x, &mp, round, req, got);
    m->t_copy += gm_now() - t2;
    for (int s = 0; s < P; s++)
        x->from[s].bytes = rc ? 0 : x->expect[s];
    maps_close(x, &mp, P);
    free(got);
    free(req);
    return gm_mpi_agree(m, rc, st); /* no spool goes before every reader is done */
}

/* ------------------------------------------------------------------ merge */

/* With -u: the last line of the ranks before this one (the greatest line any
 * of them received), as *seed (NULL: none). Collective. */
int gm_mpi_unique_seed(gm_mpi *m, const gm_mpi_exchange *x, unsigned char **seed,
                       size_t *seed_len, gm_status *st)
{
    unsigned char *best = NULL, *line;
    size_t best_len = 0, len;
    int rc = GM_OK;
    for (int s = 0; s < m->size && !rc; s++) {
        int64_t off;
        gm_mpi_input in = { .fd = source_fd(x, s, &off) };
        in.size = off + x->from[s].bytes;
        snprintf(in.shown, sizeof in.shown, "a temporary file");
        if (x->from[s].bytes == 0 ||
            (rc = gm_mpi_line_before(&in, m->ks->eol, in.size, &line, &len, st)))
            continue;
        if (!best || gm_line_cmp(m->ks, line, len, best, best_len) > 0) {
            free(best);
            best = line;
            best_len = len;
        } else {
            free(line);
        }
    }
    int mine = best ? (int)best_len : -1;
    int *lens = calloc((size_t)m->size, sizeof *lens), *displs = calloc((size_t)m->size, sizeof *displs);
    if (!lens || !displs)
        MPI_Abort(m->comm, 2);
    MPI_Allgather(&mine, 1, MPI_INT, lens, 1, MPI_INT, m->comm);
    size_t total = 0;
    int *counts = calloc((size_t)m->size, sizeof *counts);
    for (int r = 0; counts && r < m->size; r++) {
        displs[r] = (int)total;
        counts[r] = lens[r] > 0 ? lens[r] : 0;
        total += (size_t)counts[r];
    }
    unsigned char *all = malloc(total + 1);
    if (!all || !counts)
        MPI_Abort(m->comm, 2);
    MPI_Allgatherv(best, mine > 0 ? mine : 0, MPI_BYTE, all, counts, displs, MPI_BYTE, m->comm);
    *seed = NULL;
    for (int q = m->rank - 1; q >= 0 && !*seed; q--) {
        if (lens[q] < 0)
            continue;
        *seed = malloc((size_t)lens[q] + 1);
        if (*seed)
            memcpy(*seed, all + displs[q], (size_t)lens[q]);
        else if (!rc)
            rc = gm_fail(st, GM_ENOMEM, "out of memory");
        *seed_len = (size_t)lens[q];
    }
    free(best);
    free(all);
    free(lens);
    free(displs);
    free(counts);
    return rc;
}

/* Merges the spools received, stably by source rank, into out. */
/* The records way of gm_mpi_merge_received. */
static int merge_records(gm_mpi *m, gm_mpi_exchange *x, const unsigned char *seed,
                         size_t seed_len, gm_mpi_spool *out, gm_status *st)
{
    const int P = m->size;
    int64_t coming = 0;
    for (int s = 0; s < P; s++)
        coming += x->from[s].bytes;
    gm_lines_src *srcs = calloc((size_t)P, sizeof *srcs);
    gm_lines_src **ptr = calloc((size_t)P, sizeof *ptr);
    int rc = srcs && ptr ? gm_mpi_spool_open(m, out, coming, st)
                         : gm_fail(st, GM_ENOMEM, "out of memory merging");
    int k = 0;
    for (int s = 0; s < P && !rc; s++) {
        if (x->from[s].bytes == 0)
            continue;
        int64_t off;
        int fd = source_fd(x, s, &off);
        gm_lines_open_fd(&srcs[k], fd, 0, "a temporary file", m->ks->eol);
        ptr[k] = &srcs[k];
        rc = gm_lines_range(&srcs[k++], off, off + x->from[s].bytes, st);
    }
    if (!rc)
        rc = gm_mpi_merge_into(m, ptr, k, 0, seed, seed_len, out, st);
    for (int i = 0; i < k; i++)
        gm_lines_close(&srcs[i]);
    free(srcs);
    free(ptr);
    return rc;
}

int gm_mpi_merge_received(gm_mpi *m, gm_mpi_exchange *x, const unsigned char *seed,
                          size_t seed_len, gm_mpi_spool *out, gm_status *st)
{
    if (!gm_mpi_use_gm_run(m))
        return merge_records(m, x, seed, seed_len, out, st);
    int *fds = calloc((size_t)m->size + 1, sizeof *fds), k = 0;
    int64_t *ranges = calloc(2 * (size_t)m->size + 1, sizeof *ranges);
    if (!fds || !ranges) {
        free(fds);
        free(ranges);
        return gm_fail(st, GM_ENOMEM, "out of memory merging");
    }
    for (int s = 0; s < m->size; s++) {
        if (x->from[s].bytes == 0)
            continue;
        int64_t off;
        fds[k] = source_fd(x, s, &off);
        ranges[2 * k] = off;
        ranges[2 * k + 1] = off + x->from[s].bytes;
        k++;
    }
    /* A stable sort of the spools in source order is their stable merge; on a
     * GPU the integer path sorts text at the speed of its copies, where the
     * host's merge parses and formats every line on the CPU. */
    int gpu = m->cfg->device == GM_DEVICE_GPU ||
              (m->cfg->device == GM_DEVICE_AUTO && access("/dev/nvidiactl", F_OK) == 0);
    gm_op op = gpu && (m->cfg->strict || m->ks->whole_line_numeric) ? GM_OP_SORT : GM_OP_MERGE;
    int rc = gm_mpi_by_gm_run(m, op, fds, ranges, k, out, st);
    free(fds);
    free(ranges);
    if (rc)
        return rc;
    return gm_mpi_skip_seed(m, out, seed, seed_len, st);
}
