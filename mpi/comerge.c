/*
 * comerge.c - merge and check across ranks without exchanging lines (see
 * gmpi.h).
 *
 * merge: sorted inputs are searchable by byte offset. Every rank takes the same
 * regular samples of every input (16 P line starts each, weighted by the bytes
 * up to the next), sorts them by line and position (input, offset) and picks as
 * boundary k the sample at which the weights reach T k / P. Rank r then finds,
 * in every input, the first line after boundaries r and r + 1 by a binary search
 * over byte offsets (gm_mpi_corank), and merges its slices into its spool: by
 * gm_run on copies of them where gm_mpi_use_gm_run says so (the integer merge,
 * the GPU), else by core/recmerge. The positions are gathered so that slices tile every input even
 * when one is out of order; each slice's first line is checked against the line
 * before it, so a disorder at a slice boundary is found as one inside is. With
 * -u the greatest line before the rank's slices seeds the sink.
 *
 * check: an input is cut into P ranges at line starts; rank r checks its range
 * and its first line against the line before it; the lowest rank's disorder is
 * the input's first.
 */
#define _GNU_SOURCE
#include "gmpi.h"

#include <stdlib.h>
#include <string.h>

#include "../core/merge/recmerge.h"
#include "../core/base/util.h"

enum { OVERSAMPLE = 16, MAX_BLOCK = 4 << 20 };

/* One sampled line start of an input; all fields set by take_samples. */
struct msample {
    unsigned char *line;  /* a copy of the line, from gm_mpi_line_at */
    size_t len;           /* its length */
    uint64_t input, off;  /* which input and the byte offset: ties break by position */
    int64_t weight;       /* bytes from it to the next sample (or the input's end) */
};

static int msample_cmp(const void *a, const void *b, void *ctx)
{
    const struct msample *x = a, *y = b;
    return gm_mpi_cmp_pos(ctx, x->line, x->len, x->input, x->off, y->line, y->len, y->input,
                          y->off);
}

/* The samples of every input, sorted; *n of them. */
static int take_samples(gm_mpi *m, gm_mpi_input *ins, int nins, struct msample **out,
                        size_t *n, gm_status *st)
{
    const int64_t per = (int64_t)OVERSAMPLE * m->size;
    struct msample *s = calloc((size_t)(per * nins) + 1, sizeof *s);
    size_t k = 0;
    int rc = s ? GM_OK : gm_fail(st, GM_ENOMEM, "out of memory");
    for (int i = 0; i < nins && !rc; i++) {
        int64_t prev = -1;
        for (int64_t j = 0; j < per && !rc; j++) {
            int64_t at;
            rc = gm_mpi_line_start(&ins[i], m->ks->eol,
                                   (int64_t)((__int128)ins[i].size * j / per), &at, st);
            if (rc || at >= ins[i].size)
                break;
            if (at == prev)
                continue;
            if (prev >= 0)
                s[k - 1].weight = at - prev;
            rc = gm_mpi_line_at(&ins[i], m->ks->eol, at, &s[k].line, &s[k].len, st);
            s[k].input = (uint64_t)i;
            s[k].off = (uint64_t)at;
            s[k].weight = ins[i].size - at;
            k += !rc;
            prev = at;
        }
    }
    if (!rc)
        qsort_r(s, k, sizeof *s, msample_cmp, (void *)m->ks);
    *out = s;
    *n = k;
    return rc;
}

/* pos[k * nins + i]: where rank k's slice of input i begins (k = 0..P). */
static int slices(gm_mpi *m, gm_mpi_input *ins, int nins, int64_t *pos, gm_status *st)
{
    struct msample *s = NULL;
    size_t n = 0;
    int64_t total = nins ? ins[nins - 1].base + ins[nins - 1].size : 0;
    int rc = take_samples(m, ins, nins, &s, &n, st);
    int64_t *mine = pos + (size_t)m->rank * nins; /* boundary r */
    if (!rc && m->rank > 0) {
        int64_t target = (int64_t)((__int128)total * m->rank / m->size), cum = 0;
        size_t b = 0;
        while (b + 1 < n && (cum += s[b].weight) < target)
            b++;
        for (int i = 0; i < nins && !rc; i++)
            rc = n ? gm_mpi_corank(&ins[i], m->ks, (uint64_t)i, 0, s[b].line, s[b].len,
                                   s[b].input, s[b].off, &mine[i], st)
                   : GM_OK;
    }
    for (size_t j = 0; s && j < n; j++)
        free(s[j].line);
    free(s);
    rc = gm_mpi_agree(m, rc, st);
    if (rc)
        return rc;
    if (m->rank == 0)
        memset(mine, 0, (size_t)nins * sizeof *mine);
    MPI_Allgather(MPI_IN_PLACE, nins, MPI_INT64_T, pos, nins, MPI_INT64_T, m->comm);
    for (int i = 0; i < nins; i++) {
        pos[(size_t)m->size * nins + i] = ins[i].size;
        for (int k = 1; k <= m->size; k++) /* slices tile the input, whatever its order */
            if (pos[(size_t)k * nins + i] < pos[(size_t)(k - 1) * nins + i])
                pos[(size_t)k * nins + i] = pos[(size_t)(k - 1) * nins + i];
    }
    return GM_OK;
}

/* The line before a slice against the slice's first (a disorder is code), and
 * with keep the greatest line before the slices in *seed. */
static int boundaries(gm_mpi *m, gm_mpi_input *ins, int nins, const int64_t *lo,
                      const int64_t *hi, int strict, gm_code code, unsigned char **seed,
                      size_t *seed_len, gm_status *st)
{
    int rc = GM_OK;
    for (int i = 0; i < nins && !rc; i++) {
        if (lo[i] == 0 || (lo[i] == hi[i] && !seed))
            continue;
        unsigned char *prev, *first = NULL;
        size_t plen, flen;
        rc = gm_mpi_line_before(&ins[i], m->ks->eol, lo[i], &prev, &plen, st);
        if (rc)
            break;
        if (lo[i] < hi[i])
            rc = gm_mpi_line_at(&ins[i], m->ks->eol, lo[i], &first, &flen, st);
        int d = !rc && first ? gm_line_cmp(m->ks, prev, plen, first, flen) : -1;
        if (d > 0 || (strict && d == 0))
            rc = gm_mpi_disorder(st, code, &ins[i], m->ks->eol, lo[i], first, flen);
        if (!rc && seed && (!*seed || gm_line_cmp(m->ks, prev, plen, *seed, *seed_len) > 0)) {
            free(*seed);
            *seed = prev;
            *seed_len = plen;
            prev = NULL;
        }
        free(prev);
        free(first);
    }
    return rc;
}

/* Merges the rank's slices into out. */
static int merge_slices(gm_mpi *m, gm_mpi_input *ins, int nins, const int64_t *lo,
                        const int64_t *hi, const unsigned char *seed, size_t seed_len,
                        gm_mpi_spool *out, gm_status *st)
{
    gm_lines_src *srcs = calloc((size_t)nins + 1, sizeof *srcs);
    gm_lines_src **ptr = calloc((size_t)nins + 1, sizeof *ptr);
    int *which = calloc((size_t)nins + 1, sizeof *which);
    int rc = srcs && ptr && which ? GM_OK : gm_fail(st, GM_ENOMEM, "out of memory merging");
    int k = 0;
    for (int i = 0; i < nins && !rc; i++) {
        if (lo[i] == hi[i])
            continue;
        rc = gm_mpi_src_range(&srcs[k], &ins[i], m->ks->eol, lo[i], hi[i] - lo[i], st);
        ptr[k] = &srcs[k];
        which[k] = i;
        k += !rc;
        m->bytes_read += (double)(hi[i] - lo[i]);
    }
    if (!rc)
        rc = gm_mpi_merge_into(m, ptr, k, 1, seed, seed_len, out, st);
    if (rc == GM_EINPUT) /* its line number counted from the slice's start */
        for (int j = 0; j < k; j++)
            if (strncmp(st->msg, ins[which[j]].shown, strlen(ins[which[j]].shown)) == 0) {
                gm_mpi_renumber(st, &ins[which[j]], m->ks->eol, lo[which[j]]);
                break;
            }
    for (int j = 0; j < k; j++)
        gm_lines_close(&srcs[j]);
    free(srcs);
    free(ptr);
    free(which);
    return rc;
}

int gm_mpi_merge(gm_mpi *m, gm_mpi_input *ins, int nins, gm_status *st)
{
    int64_t *pos = calloc((size_t)(m->size + 1) * nins + 1, sizeof *pos);
    if (!pos)
        MPI_Abort(m->comm, 2);
    double t0 = gm_now();
    int rc = slices(m, ins, nins, pos, st);
    m->t_sample += gm_now() - t0;
    if (rc) {
        free(pos);
        return rc;
    }
    const int64_t *lo = pos + (size_t)m->rank * nins, *hi = lo + nins;
    unsigned char *seed = NULL;
    size_t seed_len = 0;
    gm_mpi_spool out = { -1, NULL, 0, 0 };
    int64_t expect = 0;
    for (int i = 0; i < nins; i++)
        expect += hi[i] - lo[i];
    double t1 = gm_now();
    rc = boundaries(m, ins, nins, lo, hi, 0, GM_EINPUT, m->ks->unique ? &seed : NULL,
                    &seed_len, st);
    if (!rc && gm_mpi_use_gm_run(m)) {
        rc = gm_mpi_run_ranges(m, GM_OP_MERGE, ins, nins, lo, hi, &out, st);
        if (!rc)
            rc = gm_mpi_skip_seed(m, &out, seed, seed_len, st);
    } else if (!rc) {
        rc = gm_mpi_spool_open(m, &out, expect, st);
        if (!rc)
            rc = merge_slices(m, ins, nins, lo, hi, seed, seed_len, &out, st);
    }
    m->t_merge += gm_now() - t1;
    rc = gm_mpi_place(m, &out, rc, st);
    gm_mpi_spool_close(&out);
    free(seed);
    free(pos);
    return rc;
}

int gm_mpi_check(gm_mpi *m, gm_mpi_input *in, gm_status *st)
{
    int64_t *starts = calloc((size_t)m->size + 1, sizeof *starts), mine;
    if (!starts)
        MPI_Abort(m->comm, 2);
    double t0 = gm_now();
    int rc = gm_mpi_line_start(in, m->ks->eol,
                               (int64_t)((__int128)in->size * m->rank / m->size), &mine, st);
    rc = gm_mpi_agree(m, rc, st);
    if (rc) {
        free(starts);
        return rc;
    }
    MPI_Allgather(&mine, 1, MPI_INT64_T, starts, 1, MPI_INT64_T, m->comm);
    starts[m->size] = in->size;
    int64_t lo = starts[m->rank], hi = starts[m->rank + 1];
    const int strict = m->ks->unique;
    rc = boundaries(m, in, 1, &lo, &hi, strict, GM_DISORDER, NULL, NULL, st);
    if (!rc && lo < hi && m->cfg->strict) { /* its integers checked as gpumerge checks */
        gm_mpi_spool none = { -1, NULL, 0, 0 };
        rc = gm_mpi_run_ranges(m, GM_OP_CHECK, in, 1, &lo, &hi, &none, st);
        gm_mpi_spool_close(&none);
    } else if (!rc && lo < hi) {
        gm_lines_src s;
        gm_recmerge_opts o = { m->ks, MAX_BLOCK, 1, m->nthreads };
        rc = gm_mpi_src_range(&s, in, m->ks->eol, lo, hi - lo, st);
        if (!rc) {
            rc = gm_reccheck(&o, &s, strict, st);
            gm_lines_close(&s);
        }
        if (rc == GM_DISORDER)
            gm_mpi_renumber(st, in, m->ks->eol, lo);
        m->bytes_read += (double)(hi - lo);
    }
    m->t_merge += gm_now() - t0;
    free(starts);
    return gm_mpi_agree(m, rc, st);
}
