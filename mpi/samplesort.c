/*
 * samplesort.c - sort across ranks (see gmpi.h): parallel sorting by regular
 * sampling (PSRS; Shi and Schaeffer, "Parallel sorting by regular sampling",
 * 1992), on the records path's building blocks.
 *
 *   read      rank r reads the bytes [T r / P, T (r + 1) / P) of the inputs'
 *             concatenation, both ends moved to the next line start, as blocks
 *             of lines split into records (core/read/lines.h)
 *   sort      the records sorted stably (core/sort/recsort.h) into the rank's sorted
 *             spool (-u applied); past the budget, sorted runs in -T merged
 *             into it (core/runs/recrun.h), the external sort of one process
 *   sample    each rank's 8 P regular samples, evenly spaced by bytes (full
 *             lines, with the rank and their offset in its spool as their
 *             position), gathered by every rank, sorted, and every (S / P)-th
 *             taken as a splitter: every rank derives the same P - 1 splitters;
 *             oversampling eight times narrows PSRS's bound on what a rank
 *             receives from 2 T / P to about (1 + 1/8) T / P
 *   exchange  the spool's lines up to each splitter (compared by line, then
 *             position, so equal keys may be split but keep input order; found
 *             by gm_mpi_corank) go to that splitter's rank, by nonblocking
 *             messages in rounds of a bounded size per destination into a
 *             spool per source, or, from a source on the same host and from
 *             the rank itself, are read where they lie in the source's spool
 *             (exchange.c, direct.c)
 *   merge     the P sorted parts merged stably by source rank (the input order
 *             of equal lines) into the rank's output spool; -u drops a rank's
 *             first lines equal to the last line of the ranks before it
 *   place     the output spools placed in rank order (output.c)
 */
#define _GNU_SOURCE
#include "gmpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/base/util.h"

/* Where each rank's range begins: T r / P moved to the next line start. */
static int range_starts(gm_mpi *m, gm_mpi_input *ins, int nins, int64_t *starts,
                        gm_status *st)
{
    int64_t total = nins ? ins[nins - 1].base + ins[nins - 1].size : 0;
    int64_t g = (int64_t)((__int128)total * m->rank / m->size), mine = total;
    int rc = GM_OK;
    for (int i = 0; i < nins; i++) {
        if (g < ins[i].base + ins[i].size) {
            int64_t s;
            rc = gm_mpi_line_start(&ins[i], m->ks->eol, g - ins[i].base, &s, st);
            mine = ins[i].base + s;
            break;
        }
    }
    rc = gm_mpi_agree(m, rc, st);
    MPI_Allgather(&mine, 1, MPI_INT64_T, starts, 1, MPI_INT64_T, m->comm);
    starts[m->size] = total;
    return rc;
}

/* ------------------------------------------------------------------ splitters */

enum { OVERSAMPLE = 8 }; /* samples a rank gives, per rank */

/* A sample (and a splitter) as every rank sorts them; unpacked by splitters. */
struct sample {
    const unsigned char *line;  /* its bytes, in the gathered pool */
    size_t len;                 /* their length */
    uint64_t rank, off;         /* the rank that took it and the offset in its sorted lines:
                                 * the position that breaks ties */
};

/* A sample's header in the gathered bytes, its line following, padded to 8 bytes;
 * written by pack_samples. */
struct sample_head {
    uint32_t rank, len;         /* the sampling rank, and the line's length */
    uint64_t off;               /* the line's offset in that rank's sorted lines */
};

static int sample_cmp(const void *a, const void *b, void *ctx)
{
    const struct sample *x = a, *y = b;
    return gm_mpi_cmp_pos(ctx, x->line, x->len, x->rank, x->off, y->line, y->len, y->rank,
                          y->off);
}

static size_t padded(size_t len)
{
    return sizeof(struct sample_head) + (len + 7) / 8 * 8;
}

/* The rank's OVERSAMPLE P regular samples of its sorted lines, packed. */
static int pack_samples(gm_mpi *m, const gm_mpi_input *local, char **out, int *bytes,
                        gm_status *st)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    int rc = buf ? GM_OK : gm_fail(st, GM_ENOMEM, "out of memory");
    const int64_t ns = (int64_t)OVERSAMPLE * m->size;
    for (int64_t j = 0, prev = -1; local->size > 0 && j < ns && !rc; j++) {
        int64_t at;
        unsigned char *line;
        size_t n;
        rc = gm_mpi_line_start(local, m->ks->eol, (int64_t)((__int128)local->size * j / ns), &at,
                               st);
        if (rc || at >= local->size || at == prev)
            continue;
        prev = at;
        rc = gm_mpi_line_at(local, m->ks->eol, at, &line, &n, st);
        if (rc)
            break;
        if (len + padded(n) > cap) {
            char *b = realloc(buf, 2 * cap + padded(n));
            if (!b) {
                free(line);
                rc = gm_fail(st, GM_ENOMEM, "out of memory");
                break;
            }
            buf = b;
            cap = 2 * cap + padded(n);
        }
        struct sample_head h = { (uint32_t)m->rank, (uint32_t)n, (uint64_t)at };
        memcpy(buf + len, &h, sizeof h);
        memcpy(buf + len + sizeof h, line, n);
        len += padded(n);
        free(line);
    }
    *out = buf;
    *bytes = rc ? 0 : (int)len;
    return rc;
}

/* The P - 1 splitters, the same on every rank; *pool holds their bytes. */
static int splitters(gm_mpi *m, const gm_mpi_input *local, struct sample *spl, char **pool,
                     gm_status *st)
{
    const int P = m->size;
    char *mine;
    int mybytes;
    int rc = pack_samples(m, local, &mine, &mybytes, st);
    int *counts = calloc((size_t)P, sizeof *counts), *displs = calloc((size_t)P, sizeof *displs);
    if (!counts || !displs)
        MPI_Abort(m->comm, 2); /* a few words per rank */
    MPI_Allgather(&mybytes, 1, MPI_INT, counts, 1, MPI_INT, m->comm);
    size_t total = 0;
    for (int r = 0; r < P; r++) {
        displs[r] = (int)total;
        total += (size_t)counts[r];
    }
    char *gathered = malloc(total + 1);
    if (!rc && !gathered)
        rc = gm_fail(st, GM_ENOMEM, "out of memory");
    rc = gm_mpi_agree(m, rc, st);
    if (!rc)
        MPI_Allgatherv(mine, mybytes, MPI_BYTE, gathered, counts, displs, MPI_BYTE, m->comm);
    free(mine);
    free(counts);
    free(displs);
    size_t S = 0;
    for (char *p = gathered; !rc && p < gathered + total; S++)
        p += padded(((struct sample_head *)p)->len);
    struct sample *all = rc ? NULL : calloc(S + 1, sizeof *all);
    if (!rc && !all)
        rc = gm_fail(st, GM_ENOMEM, "out of memory");
    char *p = gathered;
    for (size_t i = 0; all && i < S; i++) {
        struct sample_head h;
        memcpy(&h, p, sizeof h);
        all[i] = (struct sample){ (unsigned char *)p + sizeof h, h.len, h.rank, h.off };
        p += padded(h.len);
    }
    if (all) {
        qsort_r(all, S, sizeof *all, sample_cmp, (void *)m->ks);
        for (int k = 1; k < P; k++)
            spl[k - 1] = S ? all[(size_t)k * S / (size_t)P] : (struct sample){ NULL, 0, 0, 0 };
    }
    free(all);
    *pool = gathered;
    return gm_mpi_agree(m, rc, st);
}

/* cut[d]..cut[d+1]: the bytes of the rank's sorted lines that go to rank d. */
static int cuts(gm_mpi *m, const gm_mpi_input *local, const struct sample *spl, int64_t *cut,
                gm_status *st)
{
    int rc = GM_OK;
    cut[0] = 0;
    for (int k = 1; k < m->size; k++) {
        cut[k] = local->size;
        if (!rc && spl[k - 1].line)
            rc = gm_mpi_corank(local, m->ks, (uint64_t)m->rank, cut[k - 1], spl[k - 1].line,
                               spl[k - 1].len, spl[k - 1].rank, spl[k - 1].off, &cut[k], st);
    }
    cut[m->size] = local->size;
    return gm_mpi_agree(m, rc, st);
}

int gm_mpi_sort(gm_mpi *m, gm_mpi_input *ins, int nins, gm_status *st)
{
    const int P = m->size;
    gm_mpi_exchange x;
    memset(&x, 0, sizeof x);
    int64_t *starts = calloc((size_t)P + 1, sizeof *starts), *cut = calloc((size_t)P + 1, sizeof *cut);
    struct sample *spl = calloc((size_t)P, sizeof *spl);
    if (!starts || !spl || !cut)
        MPI_Abort(m->comm, 2);
    char *pool = NULL;
    unsigned char *seed = NULL;
    size_t seed_len = 0;
    gm_mpi_spool sorted = { -1, NULL, 0, 0 }, out = { -1, NULL, 0, 0 };
    double t0 = gm_now();
    int rc = range_starts(m, ins, nins, starts, st);
    if (!rc)
        gm_mpi_output_ahead(m, starts[P]);
    if (!rc)
        rc = gm_mpi_exchange_ahead(m, &x, starts[m->rank + 1] - starts[m->rank], st);
    if (!rc)
        rc = gm_mpi_local_sort(m, ins, nins, starts[m->rank], starts[m->rank + 1], &sorted, st);
    double t2 = gm_now();
    m->t_sort += t2 - t0 - m->t_read;
    rc = gm_mpi_agree(m, rc, st);
    gm_mpi_input local = { .fd = sorted.fd, .size = sorted.bytes };
    snprintf(local.shown, sizeof local.shown, "a temporary file");
    if (!rc)
        rc = splitters(m, &local, spl, &pool, st);
    if (!rc)
        rc = cuts(m, &local, spl, cut, st);
    double t3 = gm_now();
    m->t_sample += t3 - t2;
    if (!rc)
        rc = gm_mpi_exchange_run(m, &local, cut, &x, st);
    gm_mpi_spool_close(&sorted);
    double t4 = gm_now();
    m->t_exchange += t4 - t3;
    if (!rc && m->ks->unique)
        rc = gm_mpi_agree(m, gm_mpi_unique_seed(m, &x, &seed, &seed_len, st), st);
    if (!rc) {
        rc = gm_mpi_merge_received(m, &x, seed, seed_len, &out, st);
        gm_mpi_exchange_free(&x, P);
        m->t_merge += gm_now() - t4;
        rc = gm_mpi_place(m, &out, rc, st);
    } else {
        gm_mpi_exchange_free(&x, P);
    }
    gm_mpi_spool_close(&out);
    gm_mpi_output_ahead_drop(m); /* made ahead but not taken: the run failed */
    free(seed);
    free(pool);
    free(starts);
    free(spl);
    free(cut);
    return rc;
}
