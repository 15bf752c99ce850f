/*
 * run.c - gm_mpi_run (gmpi.h): the job's numbers from the configuration, the
 * inputs opened on every rank, the operation, the agreement on a status, and
 * -v's report: each rank's bytes and phase times, gathered to rank 0, and a
 * summary with the load imbalance (the largest rank's output over the mean).
 *
 * Inputs that are not all regular files (standard input, a pipe) cannot be cut
 * into byte ranges that every rank reads: rank 0 then runs the operation alone
 * through gm_run, and the other ranks wait for its status.
 */
#define _GNU_SOURCE
#include "gmpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/cleanup.h"
#include "../core/engine.h"
#include "../core/stream.h"
#include "../core/util.h"

enum { MIN_BUDGET = 1 << 20 };

enum { NSTAT = 12 };

/* Rank 0 says every rank's numbers, then the summary. */
static void report(gm_mpi *m, gm_op op, double took)
{
    double mine[NSTAT] = { m->bytes_read, m->bytes_sent, m->bytes_recv, m->bytes_out,
                           m->t_read, m->t_sort, m->t_sample, m->t_exchange, m->t_merge,
                           m->t_write, (double)m->rounds, (double)m->runs };
    double *all = m->rank == 0 ? calloc((size_t)m->size * NSTAT, sizeof *all) : NULL;
    MPI_Gather(mine, NSTAT, MPI_DOUBLE, all, NSTAT, MPI_DOUBLE, 0, m->comm);
    if (m->rank != 0 || !all)
        return;
    const gm_config *cfg = m->cfg;
    double sum[NSTAT] = { 0 }, max_out = 0, max_read = 0;
    for (int r = 0; r < m->size; r++) {
        const double *v = all + (size_t)r * NSTAT;
        gm_say(cfg, GM_MSG_VERBOSE,
               "rank %d: read %.0f bytes, sent %.0f, received %.0f, wrote %.0f; read %.3f s, "
               "sort %.3f s (%.0f temporary runs), sample %.3f s, exchange %.3f s (%.0f rounds), "
               "merge %.3f s, write %.3f s",
               r, v[0], v[1], v[2], v[3], v[4], v[5], v[11], v[6], v[7], v[10], v[8], v[9]);
        for (int i = 0; i < NSTAT; i++)
            sum[i] += v[i];
        max_out = v[3] > max_out ? v[3] : max_out;
        max_read = v[0] > max_read ? v[0] : max_read;
    }
    double mean_out = sum[3] / m->size, mean_read = sum[0] / m->size;
    gm_say(cfg, GM_MSG_VERBOSE,
           "mpi: %s on %d ranks, %d thread%s each: read %.0f bytes, exchanged %.0f, wrote %.0f; "
           "imbalance (largest over mean) read %.2f, output %.2f; %.3f s",
           op == GM_OP_SORT ? "sort" : op == GM_OP_MERGE ? "merge" : "check", m->size,
           m->nthreads, m->nthreads == 1 ? "" : "s", sum[0], sum[1], sum[3],
           mean_read > 0 ? max_read / mean_read : 1.0, mean_out > 0 ? max_out / mean_out : 1.0,
           took);
    free(all);
}

/* Rank 0 alone, through the one-process program; the others wait for it
 * asleep (a blocking collective would spin on the cores rank 0 sorts on). */
static int run_solo(gm_mpi *m, gm_op op, char *const *names, int nnames, gm_status *st)
{
    int rc = GM_OK;
    if (m->rank == 0) {
        gm_say(m->cfg, GM_MSG_VERBOSE, "mpi: an input is not a regular file: rank 0 runs "
                                       "alone");
        rc = gm_run(op, m->cfg, names, nnames, st);
    }
    MPI_Request done;
    MPI_Ibarrier(m->comm, &done);
    for (int flag = 0; MPI_Test(&done, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && !flag;)
        nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
    return gm_mpi_agree(m, rc, st);
}

int gm_mpi_run(gm_op op, const gm_config *cfg, char *const *names, int nnames, MPI_Comm comm,
               gm_status *st)
{
    static char *const stdin_name[] = { "-" };
    if (nnames == 0) {
        names = stdin_name;
        nnames = 1;
    }
    double t0 = gm_now();
    gm_mpi m;
    memset(&m, 0, sizeof m);
    m.comm = comm;
    MPI_Comm_rank(comm, &m.rank);
    MPI_Comm_size(comm, &m.size);
    m.cfg = cfg;
    m.ks = cfg->keyspec;
    m.nthreads = cfg->threads > 0 ? cfg->threads : gm_cpu_count();
    m.budget = cfg->buffer_size ? cfg->buffer_size : gm_default_budget();
    if (m.budget < MIN_BUDGET)
        m.budget = MIN_BUDGET;
    int rc = gm_mpi_agree(&m, gm_cleanup_install(st), st);
    if (rc)
        return rc;
    int done = 1; /* --device=gpu without a usable GPU on any rank fails first */
    rc = gm_mpi_agree(&m, gm_engine_prepare(cfg, 1, &done, st), st);
    if (rc)
        return rc;
    gm_mpi_input *ins = NULL;
    int regular = 0;
    rc = gm_mpi_inputs(&m, names, nnames, &ins, &regular, st);
    if (rc)
        return rc;
    if (!regular) {
        gm_mpi_inputs_close(ins, nnames);
        return run_solo(&m, op, names, nnames, st);
    }
    if (op == GM_OP_SORT) {
        rc = gm_mpi_sort(&m, ins, nnames, st);
    } else if (op == GM_OP_MERGE) {
        rc = gm_mpi_merge(&m, ins, nnames, st);
    } else { /* each input on its own, the first disorder of each */
        for (int i = 0; i < nnames && !rc; i++)
            rc = gm_mpi_check(&m, &ins[i], st);
    }
    gm_mpi_inputs_close(ins, nnames);
    if (!rc && cfg->verbose)
        report(&m, op, gm_now() - t0);
    return rc;
}
