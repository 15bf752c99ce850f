/*
 * exchange.c - the sample sort's exchange and merge (see gmpi.h): every rank's
 * sorted lines, cut by the splitters, go to their ranks as bytes, by
 * MPI_Alltoall of the counts and MPI_Alltoallv of the bytes, in rounds of at
 * most a quarter of the budget over the ranks per destination (a longer line
 * goes alone), so that the send and receive buffers stay bounded whatever the
 * input's size; what each source sends lands in a spool of its own, in the
 * source's sorted order. The spools are then merged stably by source rank
 * (core/recmerge), which is the input order of equal lines; with -u the merge's
 * sink begins with the last line of the ranks before (the greatest line any of
 * them received), so that a key split across ranks is kept once, first.
 */
#define _GNU_SOURCE
#include "gmpi.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/recmerge.h"
#include "../core/pread.h"
#include "../core/util.h"

enum { MIN_ROUND = 64 << 10, MAX_ROUND = 64 << 20, MIN_BLOCK = 64 << 10, OUT_BUFFER = 4 << 20 };

void gm_mpi_exchange_free(gm_mpi_exchange *x, int P)
{
    for (int r = 0; x->from && r < P; r++)
        gm_mpi_spool_close(&x->from[r]);
    free(x->from);
    free(x->expect);
    free(x->cursor);
    free(x->scount);
    free(x->sdispl);
    free(x->rcount);
    free(x->rdispl);
    free(x->sbuf);
    free(x->rbuf);
}

static int grow(unsigned char **buf, size_t *cap, size_t need, gm_status *st)
{
    if (need <= *cap)
        return GM_OK;
    unsigned char *b = realloc(*buf, need);
    if (!b)
        return gm_fail(st, GM_ENOMEM, "out of memory exchanging");
    *buf = b;
    *cap = need;
    return GM_OK;
}

/* Packs the next lines for every rank: about round bytes each, to the end of
 * the line that crosses round. Returns GM_OK or an error; *more: lines are left
 * after these. */
static int pack(gm_mpi *m, const gm_mpi_input *local, const int64_t *cut, gm_mpi_exchange *x,
                int64_t round, int *more, gm_status *st)
{
    size_t total = 0;
    int rc = GM_OK;
    *more = 0;
    for (int d = 0; d < m->size && !rc; d++) {
        int64_t from = x->cursor[d], to = cut[d + 1];
        if (to - from > round)
            rc = gm_mpi_line_start(local, m->ks->eol, from + round, &to, st);
        x->sdispl[d] = (int)total;
        x->scount[d] = (int)(to - from);
        total += (size_t)(to - from);
    }
    if (!rc)
        rc = grow(&x->sbuf, &x->scap, total + 1, st);
    for (int d = 0; d < m->size && !rc; d++) {
        int err = gm_pread_all(local->fd, x->sbuf + x->sdispl[d], (size_t)x->scount[d],
                               x->cursor[d]);
        if (err)
            rc = gm_fail(st, GM_EIO, "cannot read a temporary file: %s",
                         strerror(err < 0 ? EIO : err));
        x->cursor[d] += x->scount[d];
        *more |= x->cursor[d] < cut[d + 1];
        if (d != m->rank)
            m->bytes_sent += x->scount[d];
    }
    return rc;
}

int gm_mpi_exchange_run(gm_mpi *m, const gm_mpi_input *local, const int64_t *cut,
                        gm_mpi_exchange *x, gm_status *st)
{
    const int P = m->size;
    int64_t *send = calloc((size_t)P, sizeof *send);
    x->from = calloc((size_t)P, sizeof *x->from);
    x->expect = calloc((size_t)P, sizeof *x->expect);
    x->cursor = calloc((size_t)P, sizeof *x->cursor);
    x->scount = calloc((size_t)P, sizeof(int));
    x->sdispl = calloc((size_t)P, sizeof(int));
    x->rcount = calloc((size_t)P, sizeof(int));
    x->rdispl = calloc((size_t)P, sizeof(int));
    if (!send || !x->from || !x->expect || !x->cursor || !x->scount || !x->sdispl ||
        !x->rcount || !x->rdispl)
        MPI_Abort(m->comm, 2); /* a few words per rank */
    for (int d = 0; d < P; d++) {
        x->from[d].fd = -1;
        x->cursor[d] = cut[d];
        send[d] = cut[d + 1] - cut[d];
    }
    MPI_Alltoall(send, 1, MPI_INT64_T, x->expect, 1, MPI_INT64_T, m->comm);
    free(send);
    int64_t coming = 0;
    for (int s = 0; s < P; s++)
        coming += x->expect[s];
    int rc = GM_OK;
    for (int s = 0; s < P && !rc; s++)
        rc = gm_mpi_spool_open(m, &x->from[s], coming, st);
    rc = gm_mpi_agree(m, rc, st); /* every rank enters the rounds, or none */
    if (rc)
        return rc;
    int64_t round = (int64_t)(m->budget / (4 * (size_t)P));
    round = round < MIN_ROUND ? MIN_ROUND : round > MAX_ROUND ? MAX_ROUND : round;
    if (round > (INT_MAX / 2) / P) /* MPI's counts and displacements are ints */
        round = (INT_MAX / 2) / P;
    for (int go[2] = { 1, 0 }; go[0] && !go[1];) {
        int more = 0;
        if (!rc)
            rc = pack(m, local, cut, x, round, &more, st);
        if (rc) /* nothing sent from here on */
            for (int d = 0; d < P; d++)
                x->scount[d] = 0;
        MPI_Alltoall(x->scount, 1, MPI_INT, x->rcount, 1, MPI_INT, m->comm);
        size_t total = 0;
        for (int s = 0; s < P; s++) {
            x->rdispl[s] = (int)total;
            total += (size_t)x->rcount[s];
        }
        if (grow(&x->rbuf, &x->rcap, total + 1, st) != GM_OK)
            MPI_Abort(m->comm, 2); /* the round's bytes are on their way */
        MPI_Alltoallv(x->sbuf, x->scount, x->sdispl, MPI_BYTE, x->rbuf, x->rcount, x->rdispl,
                      MPI_BYTE, m->comm);
        for (int s = 0; s < P && !rc; s++) {
            int err = gm_write_all(x->from[s].fd, x->rbuf + x->rdispl[s], (size_t)x->rcount[s]);
            if (err)
                rc = gm_fail(st, GM_EIO, "write failed: a temporary file: %s", strerror(err));
            x->from[s].bytes += x->rcount[s];
            if (s != m->rank)
                m->bytes_recv += x->rcount[s];
        }
        m->rounds++;
        int mine[2] = { more, rc != GM_OK };
        MPI_Allreduce(mine, go, 2, MPI_INT, MPI_MAX, m->comm);
    }
    return gm_mpi_agree(m, rc, st);
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
        gm_mpi_input in = { .fd = x->from[s].fd, .size = x->from[s].bytes };
        snprintf(in.shown, sizeof in.shown, "a temporary file");
        if (in.size == 0 || (rc = gm_mpi_line_before(&in, m->ks->eol, in.size, &line, &len, st)))
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
        lseek(x->from[s].fd, 0, SEEK_SET);
        gm_lines_open_fd(&srcs[k], x->from[s].fd, 0, "a temporary file", m->ks->eol);
        ptr[k] = &srcs[k];
        k++;
    }
    size_t block = m->budget / (4 * (size_t)(P + 1));
    block = block < MIN_BLOCK ? MIN_BLOCK : block > OUT_BUFFER ? OUT_BUFFER : block;
    gm_recmerge_opts o = { m->ks, block, 0, m->nthreads };
    gm_recsink sink;
    gm_recsink_init(&sink, m->ks, NULL, out->fd, "a temporary file", m->ks->unique,
                    m->nthreads, OUT_BUFFER);
    if (!rc && seed)
        rc = gm_mpi_seed_last(&sink, seed, seed_len, st);
    if (!rc)
        rc = gm_recmerge(&o, ptr, k, &sink, st);
    if (!rc)
        rc = gm_recsink_flush(&sink, st);
    out->bytes = sink.bytes;
    gm_recsink_free(&sink);
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
    if (!fds)
        return gm_fail(st, GM_ENOMEM, "out of memory merging");
    for (int s = 0; s < m->size; s++)
        if (x->from[s].bytes > 0 && lseek(x->from[s].fd, 0, SEEK_SET) == 0)
            fds[k++] = x->from[s].fd;
    int rc = gm_mpi_by_gm_run(m, GM_OP_MERGE, fds, k, out, st);
    free(fds);
    if (rc)
        return rc;
    return gm_mpi_skip_seed(m, out, seed, seed_len, st);
}
