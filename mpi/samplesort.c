/*
 * samplesort.c - sort across ranks (see gmpi.h): parallel sorting by regular
 * sampling (PSRS; Shi and Schaeffer, "Parallel sorting by regular sampling",
 * 1992), on the records path's building blocks.
 *
 *   read      rank r reads the bytes [T r / P, T (r + 1) / P) of the inputs'
 *             concatenation, both ends moved to the next line start, as blocks
 *             of lines split into records (core/lines.h)
 *   sort      the records sorted stably (core/recsort.h); with -u the first of
 *             equal keys kept
 *   sample    each rank's P regular samples (full lines, with the rank and the
 *             sorted index as their position) gathered by every rank, sorted,
 *             and every (S / P)-th taken as a splitter: every rank derives the
 *             same P - 1 splitters
 *   exchange  the records up to each splitter (compared by line, then
 *             position, so equal keys may be split but keep input order) go to
 *             that splitter's rank, their lines' bytes sent by MPI_Alltoallv in
 *             rounds of a bounded size per destination, each source's bytes
 *             kept in a spool of their own
 *   merge     the P sorted spools merged stably by source rank (the input order
 *             of equal lines) into the rank's output spool; -u drops a rank's
 *             first lines equal to the last line of the ranks before it
 *   place     the output spools placed in rank order (output.c)
 */
#define _GNU_SOURCE
#include "gmpi.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/recsort.h"
#include "../core/util.h"

enum { MIN_BLOCK = 64 << 10 };

static void local_free(gm_mpi_local *l)
{
    for (int i = 0; i < l->nblocks; i++)
        gm_lines_block_unref(l->blocks[i]);
    free(l->blocks);
    gm_recs_free(&l->recs);
    memset(l, 0, sizeof *l);
}

static int local_add(gm_mpi_local *l, gm_mpi *m, gm_lines_block *b, gm_status *st)
{
    if (l->nblocks == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        gm_lines_block **bl = realloc(l->blocks, (size_t)cap * sizeof *bl);
        if (!bl) {
            gm_lines_block_unref(b);
            return gm_fail(st, GM_ENOMEM, "out of memory sorting");
        }
        l->blocks = bl;
        l->cap = cap;
    }
    l->blocks[l->nblocks++] = b;
    return gm_lines_split(m->ks, b, &l->recs, m->nthreads, st);
}

/* Reads the rank's byte range [lo, hi) of the concatenation. */
static int read_range(gm_mpi *m, gm_mpi_input *ins, int nins, int64_t lo, int64_t hi,
                      gm_mpi_local *l, gm_status *st)
{
    size_t want = m->budget / 8 > MIN_BLOCK ? m->budget / 8 : MIN_BLOCK;
    int rc = GM_OK;
    for (int i = 0; i < nins && !rc; i++) {
        int64_t a = lo > ins[i].base ? lo : ins[i].base;
        int64_t b = hi < ins[i].base + ins[i].size ? hi : ins[i].base + ins[i].size;
        if (a >= b)
            continue;
        gm_lines_src s;
        rc = gm_mpi_src_range(&s, &ins[i], m->ks->eol, a - ins[i].base, b - a, st);
        while (!rc && !s.done) {
            gm_lines_block *blk;
            rc = gm_lines_read(&s, want, 0, m->nthreads, &blk, st);
            if (!rc && blk)
                rc = local_add(l, m, blk, st);
        }
        gm_lines_close(&s);
        m->bytes_read += (double)(b - a);
    }
    return rc;
}

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

/* Sorts the records stably; with -u keeps the first of equal keys. */
static int local_sort(gm_mpi *m, gm_mpi_local *l, gm_status *st)
{
    gm_recs *v = &l->recs;
    if (v->n > 1) {
        gm_rec *scratch = gm_buf_alloc(v->n * sizeof *scratch, "sorting", st);
        if (!scratch)
            return GM_ENOMEM;
        gm_recsort(m->ks, v->r, scratch, v->n, m->nthreads);
        gm_buf_free(scratch);
    }
    if (m->ks->unique && v->n > 1) {
        const char eol = m->ks->eol;
        size_t k = 1;
        for (size_t i = 1; i < v->n; i++)
            if (gm_line_cmp(m->ks, gm_rec_line(&v->r[k - 1]), gm_rec_len(&v->r[k - 1], eol),
                            gm_rec_line(&v->r[i]), gm_rec_len(&v->r[i], eol)) != 0)
                v->r[k++] = v->r[i];
        v->n = k;
    }
    return GM_OK;
}

/* ------------------------------------------------------------------ splitters */

struct sample {
    const unsigned char *line;
    size_t len;
    uint64_t rank, idx;
};

struct sample_head {
    uint32_t rank, len;
    uint64_t idx;
};

static int sample_cmp(const void *a, const void *b, void *ctx)
{
    const struct sample *x = a, *y = b;
    return gm_mpi_cmp_pos(ctx, x->line, x->len, x->rank, x->idx, y->line, y->len, y->rank,
                          y->idx);
}

/* The P - 1 splitters, the same on every rank; *pool holds their bytes. */
static int splitters(gm_mpi *m, const gm_mpi_local *l, struct sample *spl, char **pool,
                     gm_status *st)
{
    const int P = m->size;
    const char eol = m->ks->eol;
    size_t n = l->recs.n, ns = n < (size_t)P ? n : (size_t)P, bytes = 0;
    for (size_t j = 0; j < ns; j++)
        bytes += sizeof(struct sample_head) + (gm_rec_len(&l->recs.r[n * j / ns], eol) + 7) / 8 * 8;
    char *mine = malloc(bytes + 1);
    int *counts = calloc((size_t)P, sizeof *counts), *displs = calloc((size_t)P, sizeof *displs);
    int rc = mine && counts && displs ? GM_OK : gm_fail(st, GM_ENOMEM, "out of memory");
    if (rc)
        bytes = ns = 0;
    char *at = mine;
    for (size_t j = 0; j < ns; j++) {
        const gm_rec *r = &l->recs.r[n * j / ns];
        struct sample_head h = { (uint32_t)m->rank, (uint32_t)gm_rec_len(r, eol), n * j / ns };
        memcpy(at, &h, sizeof h);
        memcpy(at + sizeof h, gm_rec_line(r), h.len);
        at += sizeof h + (h.len + 7) / 8 * 8;
    }
    int mybytes = (int)bytes;
    int all[2] = { 0, 0 };
    MPI_Allgather(&mybytes, 1, MPI_INT, counts ? counts : all, 1, MPI_INT, m->comm);
    size_t total = 0;
    for (int r = 0; counts && displs && r < P; r++) {
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
    if (rc) {
        free(gathered);
        return rc;
    }
    size_t S = 0;
    for (char *p = gathered; p < gathered + total; S++)
        p += sizeof(struct sample_head) + (((struct sample_head *)p)->len + 7) / 8 * 8;
    struct sample *all_s = calloc(S + 1, sizeof *all_s);
    if (!all_s) {
        free(gathered);
        return gm_mpi_agree(m, gm_fail(st, GM_ENOMEM, "out of memory"), st);
    }
    char *p = gathered;
    for (size_t i = 0; i < S; i++) {
        struct sample_head h;
        memcpy(&h, p, sizeof h);
        all_s[i] = (struct sample){ (unsigned char *)p + sizeof h, h.len, h.rank, h.idx };
        p += sizeof h + (h.len + 7) / 8 * 8;
    }
    qsort_r(all_s, S, sizeof *all_s, sample_cmp, (void *)m->ks);
    for (int k = 1; k < P; k++)
        spl[k - 1] = S ? all_s[(size_t)k * S / (size_t)P] : (struct sample){ NULL, 0, 0, 0 };
    free(all_s);
    *pool = gathered;
    return gm_mpi_agree(m, GM_OK, st);
}

/* cut[d]..cut[d+1]: the sorted records that go to rank d. */
static void cuts(gm_mpi *m, const gm_mpi_local *l, const struct sample *spl, size_t *cut)
{
    const char eol = m->ks->eol;
    cut[0] = 0;
    for (int k = 1; k < m->size; k++) {
        size_t lo = cut[k - 1], hi = l->recs.n;
        while (spl[k - 1].line && lo < hi) { /* the first record after the splitter */
            size_t mid = lo + (hi - lo) / 2;
            const gm_rec *r = &l->recs.r[mid];
            if (gm_mpi_cmp_pos(m->ks, gm_rec_line(r), gm_rec_len(r, eol), (uint64_t)m->rank,
                               mid, spl[k - 1].line, spl[k - 1].len, spl[k - 1].rank,
                               spl[k - 1].idx) > 0)
                hi = mid;
            else
                lo = mid + 1;
        }
        cut[k] = spl[k - 1].line ? lo : l->recs.n;
    }
    cut[m->size] = l->recs.n;
}

int gm_mpi_sort(gm_mpi *m, gm_mpi_input *ins, int nins, gm_status *st)
{
    const int P = m->size;
    gm_mpi_local l;
    gm_mpi_exchange x;
    memset(&l, 0, sizeof l);
    memset(&x, 0, sizeof x);
    int64_t *starts = calloc((size_t)P + 1, sizeof *starts);
    struct sample *spl = calloc((size_t)P, sizeof *spl);
    size_t *cut = calloc((size_t)P + 1, sizeof *cut);
    if (!starts || !spl || !cut)
        MPI_Abort(m->comm, 2);
    char *pool = NULL;
    unsigned char *seed = NULL;
    size_t seed_len = 0;
    gm_mpi_spool out = { -1, NULL, 0 };
    double t0 = gm_now();
    int rc = range_starts(m, ins, nins, starts, st);
    if (!rc)
        rc = read_range(m, ins, nins, starts[m->rank], starts[m->rank + 1], &l, st);
    double t1 = gm_now();
    if (!rc)
        rc = local_sort(m, &l, st);
    double t2 = gm_now();
    m->t_read += t1 - t0;
    m->t_sort += t2 - t1;
    rc = gm_mpi_agree(m, rc, st);
    if (!rc)
        rc = splitters(m, &l, spl, &pool, st);
    double t3 = gm_now();
    m->t_sample += t3 - t2;
    if (!rc) {
        cuts(m, &l, spl, cut);
        rc = gm_mpi_exchange_run(m, &l, cut, &x, st);
    }
    local_free(&l);
    double t4 = gm_now();
    m->t_exchange += t4 - t3;
    if (!rc && m->ks->unique)
        rc = gm_mpi_agree(m, gm_mpi_unique_seed(m, &x, &seed, &seed_len, st), st);
    if (!rc) {
        int64_t coming = 0;
        for (int s = 0; s < P; s++)
            coming += x.from[s].bytes;
        rc = gm_mpi_spool_open(m, &out, coming, st);
        if (!rc)
            rc = gm_mpi_merge_received(m, &x, seed, seed_len, &out, st);
        gm_mpi_exchange_free(&x, P);
        m->t_merge += gm_now() - t4;
        rc = gm_mpi_place(m, &out, rc, st);
    } else {
        gm_mpi_exchange_free(&x, P);
    }
    gm_mpi_spool_close(&out);
    free(seed);
    free(pool);
    free(starts);
    free(spl);
    free(cut);
    return rc;
}
