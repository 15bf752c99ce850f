/*
 * direct.c - the exchange between ranks of one host without messages (see
 * gmpi.h): a rank opens the sorted spool of a source on its own host through
 * /proc/PID/fd/N (a memfd or a file in -T alike), and its merge reads the
 * bytes the source sends it there, where they lie (gm_config's ranges), with
 * no copy between the two. Open MPI's shared-memory transport copies a large
 * message twice through small fragments when its single copy (CMA) is not
 * permitted, as in containers; opening another process's descriptor needs
 * less (the same user, a read check). A source that cannot be opened this way
 * (another PID namespace: the file opened must be the source's own, by
 * device, inode and size), or sends less than a megabyte, sends by messages:
 * each receiver says which sources it reads itself, so that their senders
 * skip them.
 */
#define _GNU_SOURCE
#include "gmpi.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/base/util.h"

/* A source sending less goes by messages, whose fixed costs are smaller than
 * an open and a merge's input of its own. */
enum { DIRECT_MIN = 1 << 20 };

int *gm_mpi_hosts(gm_mpi *m)
{
    MPI_Comm node;
    int leader = m->rank;
    if (MPI_Comm_split_type(m->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        MPI_Allreduce(&m->rank, &leader, 1, MPI_INT, MPI_MIN, node);
        MPI_Comm_free(&node);
    }
    int *all = calloc((size_t)m->size, sizeof *all);
    if (!all)
        MPI_Abort(m->comm, 2);
    MPI_Allgather(&leader, 1, MPI_INT, all, 1, MPI_INT, m->comm);
    return all;
}

int gm_mpi_direct_plan(gm_mpi *m, const int *host, const gm_mpi_input *local,
                       const int64_t *cut, const int64_t *expect, gm_mpi_direct *d)
{
    const int P = m->size;
    d->fd = calloc((size_t)P, sizeof *d->fd);
    d->from = calloc((size_t)P, sizeof *d->from);
    d->reads = calloc((size_t)P, sizeof *d->reads);
    d->read_by = calloc((size_t)P, sizeof *d->read_by);
    int *where = calloc(2 * (size_t)P, sizeof *where);
    int64_t *start = calloc((size_t)P, sizeof *start);
    if (!d->fd || !d->from || !d->reads || !d->read_by || !where || !start)
        MPI_Abort(m->comm, 2); /* a few words per rank */
    int mine[2] = { (int)getpid(), local->fd };
    MPI_Allgather(mine, 2, MPI_INT, where, 2, MPI_INT, m->comm);
    /* the spool's identity: a process of another PID namespace (a container)
     * may have the same PID here, and its descriptor must not be read */
    struct stat sb;
    int64_t id[3] = { -1, -1, -1 };
    if (fstat(local->fd, &sb) == 0) {
        id[0] = (int64_t)sb.st_dev;
        id[1] = (int64_t)sb.st_ino;
        id[2] = (int64_t)sb.st_size;
    }
    int64_t *ids = calloc(3 * (size_t)P, sizeof *ids);
    if (!ids)
        MPI_Abort(m->comm, 2);
    MPI_Allgather(id, 3, MPI_INT64_T, ids, 3, MPI_INT64_T, m->comm);
    for (int r = 0; r < P; r++)
        start[r] = cut[r];
    MPI_Alltoall(start, 1, MPI_INT64_T, d->from, 1, MPI_INT64_T, m->comm);
    int n = 0;
    for (int s = 0; s < P; s++) {
        d->fd[s] = -1;
        if (s == m->rank || host[s] != host[m->rank] || expect[s] < DIRECT_MIN)
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/fd/%d", where[2 * s], where[2 * s + 1]);
        d->fd[s] = open(path, O_RDONLY | O_CLOEXEC);
        if (d->fd[s] >= 0 && (fstat(d->fd[s], &sb) != 0 || ids[3 * s] < 0 ||
                              (int64_t)sb.st_dev != ids[3 * s] ||
                              (int64_t)sb.st_ino != ids[3 * s + 1] ||
                              (int64_t)sb.st_size != ids[3 * s + 2])) {
            close(d->fd[s]); /* not the source's spool */
            d->fd[s] = -1;
        }
        d->reads[s] = d->fd[s] >= 0;
        n += d->reads[s];
    }
    MPI_Alltoall(d->reads, 1, MPI_INT, d->read_by, 1, MPI_INT, m->comm);
    free(ids);
    free(where);
    free(start);
    return n;
}

void gm_mpi_direct_free(gm_mpi_direct *d, int P)
{
    for (int s = 0; d->fd && s < P; s++)
        if (d->fd[s] >= 0)
            close(d->fd[s]);
    free(d->fd);
    free(d->from);
    free(d->reads);
    free(d->read_by);
    memset(d, 0, sizeof *d);
}
