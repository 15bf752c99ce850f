/*
 * run.c - gm_mpi_run (gmpi.h): the job's numbers from the configuration, the
 * inputs opened on every rank, the operation, the agreement on a status, and
 * -v's report: each rank's bytes and phase times, gathered to rank 0, then a
 * row per phase in the shape of core/plan/report.h, the load imbalance among them.
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

#include "../core/base/cleanup.h"
#include "../core/device/engine.h"
#include "../core/plan/report.h"
#include "../core/stream/stream.h"
#include "../core/base/util.h"

enum { MIN_BUDGET = 1 << 20 };

enum { NSTAT = 16 };

/* Rank 0 says the run, every rank's bytes and phases, then a row per phase
 * (the slowest rank's time, as the ranks wait for each other between phases)
 * and the total, in -v's shape (core/plan/report.h). */
static void report(gm_mpi *m, gm_op op, double took)
{
    double mine[NSTAT] = { m->bytes_read, m->bytes_sent, m->bytes_recv, m->bytes_out,
                           m->t_read, m->t_sort, m->t_sample, m->t_exchange, m->t_merge,
                           m->t_write, (double)m->rounds, (double)m->runs, (double)m->direct,
                           m->t_copy, m->t_pages, m->bytes_msg };
    double *all = m->rank == 0 ? calloc((size_t)m->size * NSTAT, sizeof *all) : NULL;
    MPI_Gather(mine, NSTAT, MPI_DOUBLE, all, NSTAT, MPI_DOUBLE, 0, m->comm);
    if (m->rank != 0 || !all)
        return;
    const gm_config *cfg = m->cfg;
    double sum[NSTAT] = { 0 }, max[NSTAT] = { 0 };
    for (int r = 0; r < m->size; r++)
        for (int i = 0; i < NSTAT; i++) {
            sum[i] += all[(size_t)r * NSTAT + i];
            if (all[(size_t)r * NSTAT + i] > max[i])
                max[i] = all[(size_t)r * NSTAT + i];
        }
    gm_report_fact(cfg, "mpi", "%s on %d ranks, %d thread%s each",
                   op == GM_OP_SORT ? "sort" : op == GM_OP_MERGE ? "merge" : "check", m->size,
                   m->nthreads, m->nthreads == 1 ? "" : "s");
    gm_report_fact(cfg, "bytes", "read %.0f, exchanged %.0f, wrote %.0f", sum[0], sum[1], sum[3]);
    double mean_read = sum[0] / m->size, mean_out = sum[3] / m->size;
    gm_report_fact(cfg, "balance", "read %.2f, output %.2f (the largest rank over the mean)",
                   mean_read > 0 ? max[0] / mean_read : 1.0, mean_out > 0 ? max[3] / mean_out : 1.0);
    for (int r = 0; r < m->size; r++) {
        const double *v = all + (size_t)r * NSTAT;
        char key[16];
        snprintf(key, sizeof key, "rank %d", r);
        gm_report_fact(cfg, key, "read %.0f bytes, sent %.0f, received %.0f, wrote %.0f; "
                       "read %.3f s, sort %.3f s (%.0f temporary runs), sample %.3f s, "
                       "exchange %.3f s (%.0f rounds), merge %.3f s, write %.3f s",
                       v[0], v[1], v[2], v[3], v[4], v[5], v[11], v[6], v[7], v[10], v[8], v[9]);
    }
    gm_report_row(cfg, "read", max[4], "the slowest rank's, as for every phase");
    gm_report_row(cfg, "sort", max[5], "%s", "");
    gm_report_row(cfg, "sample", max[6], "%s", "");
    gm_report_row(cfg, "exchange", max[7], "%.0f of %d sources read in place by the merge "
                  "(on their host); by messages %.0f bytes a rank in %.0f rounds, %.3f s "
                  "(%.2f GB/s); waiting for the spools' pages %.3f s", sum[12],
                  m->size * (m->size - 1), sum[15] / m->size, max[10], max[13],
                  max[13] > 0 ? sum[15] / m->size / max[13] / 1e9 : 0.0, max[14]);
    gm_report_row(cfg, "merge", max[8], "%s", "");
    gm_report_row(cfg, "write", max[9], "%s", "");
    gm_report_row(cfg, "total", took, "%s", "");
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
