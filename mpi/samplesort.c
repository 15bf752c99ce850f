/*
 * samplesort.c - sort across ranks (see gmpi.h): parallel sorting by regular
 * sampling (PSRS; Shi and Schaeffer, "Parallel sorting by regular sampling",
 * 1992), on the records path's building blocks.
 *
 *   read      rank r reads the bytes [T r / P, T (r + 1) / P) of the inputs'
 *             concatenation, both ends moved to the next line start, as blocks
 *             of lines split into records (core/lines.h)
 *   sort      the records sorted stably (core/recsort.h) into the rank's sorted
 *             spool (-u applied); past the budget, sorted runs in -T merged
 *             into it (core/recrun.h), the external sort of one process
 *   sample    each rank's P regular samples (full lines, with the rank and their
 *             offset in its spool as their position) gathered by every rank,
 *             sorted, and every (S / P)-th taken as a splitter: every rank
 *             derives the same P - 1 splitters
 *   exchange  the spool's lines up to each splitter (compared by line, then
 *             position, so equal keys may be split but keep input order; found
 *             by gm_mpi_corank) go to that splitter's rank, by MPI_Alltoallv in
 *             rounds of a bounded size per destination (exchange.c), each
 *             source's bytes kept in a spool of their own
 *   merge     the P sorted spools merged stably by source rank (the input order
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

#include "../core/recrun.h"
#include "../core/recsort.h"
#include "../core/util.h"

enum { MIN_BLOCK = 64 << 10, OUT_BUFFER = 4 << 20, DEFAULT_FAN_IN = 16 };

/* The rank's lines while they are read and sorted. */
struct sorter {
    gm_mpi *m;
    gm_lines_block **blocks;
    int nblocks, cap;
    size_t bytes;
    gm_recs recs;
    gm_recrun *runs;
    int nruns, runs_cap;
};

static void chunk_drop(struct sorter *so)
{
    for (int i = 0; i < so->nblocks; i++)
        gm_lines_block_unref(so->blocks[i]);
    so->nblocks = 0;
    so->bytes = 0;
    so->recs.n = 0;
}

static void sorter_free(struct sorter *so)
{
    chunk_drop(so);
    free(so->blocks);
    gm_recs_free(&so->recs);
    for (int i = 0; i < so->nruns; i++)
        gm_recrun_remove(&so->runs[i]);
    free(so->runs);
}

static int chunk_add(struct sorter *so, gm_lines_block *b, gm_status *st)
{
    if (so->nblocks == so->cap) {
        int cap = so->cap ? 2 * so->cap : 16;
        gm_lines_block **bl = realloc(so->blocks, (size_t)cap * sizeof *bl);
        if (!bl) {
            gm_lines_block_unref(b);
            return gm_fail(st, GM_ENOMEM, "out of memory sorting");
        }
        so->blocks = bl;
        so->cap = cap;
    }
    so->blocks[so->nblocks++] = b;
    so->bytes += b->len;
    return gm_lines_split(so->m->ks, b, &so->recs, so->m->nthreads, st);
}

static int chunk_sort(struct sorter *so, gm_status *st)
{
    gm_recs *v = &so->recs;
    if (v->n < 2)
        return GM_OK;
    gm_rec *scratch = gm_buf_alloc(v->n * sizeof *scratch, "sorting", st);
    if (!scratch)
        return GM_ENOMEM;
    gm_recsort(so->m->ks, v->r, scratch, v->n, so->m->nthreads);
    gm_buf_free(scratch);
    return GM_OK;
}

/* The chunk sorted into a new run. */
static int spill(struct sorter *so, gm_status *st)
{
    gm_mpi *m = so->m;
    if (so->nruns == so->runs_cap) {
        int n = so->runs_cap ? 2 * so->runs_cap : 16;
        gm_recrun *more = realloc(so->runs, (size_t)n * sizeof *more);
        if (!more)
            return gm_fail(st, GM_ENOMEM, "out of memory sorting");
        so->runs = more;
        so->runs_cap = n;
    }
    int rc = chunk_sort(so, st);
    if (!rc) {
        rc = gm_recrun_write(m->ks, so->recs.r, so->recs.n, m->ks->unique, m->cfg->tmpdir,
                             m->nthreads, &so->runs[so->nruns], st);
        so->nruns++; /* removed later, also when writing failed */
        m->runs++;
    }
    chunk_drop(so);
    return rc;
}

/* Reads the rank's byte range [lo, hi) of the concatenation, spilling runs
 * past the budget. */
static int read_range(struct sorter *so, gm_mpi_input *ins, int nins, int64_t lo, int64_t hi,
                      gm_status *st)
{
    gm_mpi *m = so->m;
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
                rc = chunk_add(so, blk, st);
            if (!rc && so->bytes + 2 * so->recs.n * sizeof(gm_rec) > m->budget)
                rc = spill(so, st);
        }
        gm_lines_close(&s);
        m->bytes_read += (double)(b - a);
    }
    return rc;
}

/* The rank's lines, sorted (-u applied), into the spool out. */
static int sort_into(struct sorter *so, gm_mpi_spool *out, gm_status *st)
{
    gm_mpi *m = so->m;
    gm_recsink sink;
    gm_recsink_init(&sink, m->ks, NULL, out->fd, "a temporary file", m->ks->unique,
                    m->nthreads, OUT_BUFFER);
    int rc = GM_OK;
    if (so->nruns == 0) {
        rc = chunk_sort(so, st);
        if (!rc)
            rc = gm_recsink_put_all(&sink, so->recs.r, so->recs.n, st);
    } else {
        if (so->recs.n > 0)
            rc = spill(so, st);
        int fan_in = m->cfg->batch_size >= 2 ? m->cfg->batch_size : DEFAULT_FAN_IN, passes = 0;
        size_t block = m->budget / (4 * (size_t)(fan_in + 1));
        gm_recmerge_opts o = { m->ks, block < MIN_BLOCK ? MIN_BLOCK : block, 0, m->nthreads };
        if (!rc)
            rc = gm_recrun_merge(&o, so->runs, so->nruns, fan_in, m->cfg->tmpdir, m->ks->unique,
                                 &sink, &passes, st);
        so->nruns = 0; /* gm_recrun_merge removed them */
    }
    if (!rc)
        rc = gm_recsink_flush(&sink, st);
    out->bytes = sink.bytes;
    gm_recsink_free(&sink);
    chunk_drop(so);
    gm_recs_free(&so->recs);
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

/* ------------------------------------------------------------------ splitters */

struct sample {
    const unsigned char *line;
    size_t len;
    uint64_t rank, off;
};

struct sample_head {
    uint32_t rank, len;
    uint64_t off;
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

/* The rank's P regular samples of its sorted lines, packed. */
static int pack_samples(gm_mpi *m, const gm_mpi_input *local, char **out, int *bytes,
                        gm_status *st)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    int rc = buf ? GM_OK : gm_fail(st, GM_ENOMEM, "out of memory");
    for (int64_t j = 0, prev = -1; local->size > 0 && j < m->size && !rc; j++) {
        int64_t at;
        unsigned char *line;
        size_t n;
        rc = gm_mpi_line_start(local, m->ks->eol,
                               (int64_t)((__int128)local->size * j / m->size), &at, st);
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
    struct sorter so;
    gm_mpi_exchange x;
    memset(&so, 0, sizeof so);
    memset(&x, 0, sizeof x);
    so.m = m;
    int64_t *starts = calloc((size_t)P + 1, sizeof *starts), *cut = calloc((size_t)P + 1, sizeof *cut);
    struct sample *spl = calloc((size_t)P, sizeof *spl);
    if (!starts || !spl || !cut)
        MPI_Abort(m->comm, 2);
    char *pool = NULL;
    unsigned char *seed = NULL;
    size_t seed_len = 0;
    gm_mpi_spool sorted = { -1, NULL, 0 }, out = { -1, NULL, 0 };
    double t0 = gm_now();
    int rc = range_starts(m, ins, nins, starts, st);
    if (!rc)
        rc = read_range(&so, ins, nins, starts[m->rank], starts[m->rank + 1], st);
    double t1 = gm_now();
    if (!rc)
        rc = gm_mpi_spool_open(m, &sorted, starts[m->rank + 1] - starts[m->rank], st);
    if (!rc)
        rc = sort_into(&so, &sorted, st);
    sorter_free(&so);
    double t2 = gm_now();
    m->t_read += t1 - t0;
    m->t_sort += t2 - t1;
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
