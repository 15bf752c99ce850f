/*
 * agree.c - the ranks agreeing on a phase's outcome (gmpi.h), the ground floor of
 * gpumerge-mpi: every rank passes its status; the lowest rank that failed sends
 * its status, message and all, to every other, so that an error is reported
 * once, with its FILE:LINE, and every rank stops.
 */
#include "gmpi.h"

int gm_mpi_agree(gm_mpi *m, int rc, gm_status *st)
{
    int mine = rc ? m->rank : m->size, first;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, m->comm);
    if (first == m->size)
        return GM_OK;
    MPI_Bcast(st, (int)sizeof *st, MPI_BYTE, first, m->comm);
    return st->code;
}
