/*
 * recgpu_ties.c - the host's half of the records' sort on the GPU without a GPU:
 * gm_recgpu_ties, fed what the device hands back by a CPU twin of it (each line's
 * prefix, a stable sort by the sort keys, the tie flags; cuda/records.cu's
 * contract in gpu.h), must give gm_recsort's order: the same lines, and under -s
 * and -u the very same records; on one thread and several, with runs large
 * enough to be sorted alone, the lines in one block or several. In a build with
 * CUDA the kernels' per-line steps (cuda/records.cuh), run on the host, must give
 * the twin's records and tie flags bit for bit.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../core/keys/keyprefix.h"
#include "../core/device/recgpu.h"
#include "../core/sort/recsort.h"
#include "../cuda/testing.h"
#include "helpers.h"
#include "recgpu_cases.h"
#include "specs.h"

typedef struct {
    uint64_t key;
    size_t at;
} keyed;

static int by_key(const void *x, const void *y)
{
    const keyed *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->at > b->at) - (a->at < b->at); /* stable */
}

/* The device's refinement rounds (cuda/records.cuh), restated: while more than
 * one record in 1024 is tied (six rounds at most), each run of tied records is
 * ordered stably by its next 32 bits, and a record stays tied where they equal
 * the record's before it. The bits: where every prefix is exact, the lines'
 * bytes from the ninth on (zeros past a line's end; complemented under -r); where
 * the one key is in byte order, the bytes it shows from the ninth on (folded by
 * -f, those -d and -i skip left out, zeros past its end); where it is -V, the
 * version stream after the prefix; these two complemented under the key's -r. */
enum { W_NONE, W_LINE, W_KEY, W_VERSION };

static int round_words(const gm_keyspec *ks, int inexact)
{
    if (!inexact)
        return W_LINE;
    if (ks->nkeys != 1)
        return W_NONE;
    return ks->keys[0].order == GM_ORDER_BYTES     ? W_KEY
           : ks->keys[0].order == GM_ORDER_VERSION ? W_VERSION
                                                   : W_NONE;
}

static uint32_t word_at(const gm_keyspec *ks, int words, const gm_rec *x, int r)
{
    const gm_keydef *k = &ks->keys[0];
    const unsigned char *line = gm_rec_line(x);
    size_t len = gm_rec_len(x, ks->eol), kl;
    const unsigned char *kt = gm_kp_key_span(ks->tab, k, line, len, &kl);
    uint32_t w = 0;
    if (words == W_VERSION) {
        int ex;
        w = (uint32_t)gm_vp_window(kt, kl, 64 + 32 * (size_t)r, 32, &ex);
        return k->reverse ? ~w : w;
    }
    unsigned char shown[64];
    size_t n = 0;
    if (words == W_LINE) {
        for (size_t i = 0; i < len && n < sizeof shown; i++)
            shown[n++] = line[i];
    } else {
        for (size_t i = 0; i < kl && n < sizeof shown; i++)
            if (!gm_kp_skipped(k, kt[i]))
                shown[n++] = k->fold && kt[i] >= 'a' && kt[i] <= 'z' ? kt[i] - 'a' + 'A' : kt[i];
    }
    for (size_t b = 8 + 4 * (size_t)r; b < 12 + 4 * (size_t)r; b++)
        w = w << 8 | (b < n ? shown[b] : 0u);
    return (words == W_LINE ? ks->reverse : k->reverse) ? ~w : w;
}

static void twin_refine(const gm_keyspec *ks, int words, gm_rec *out, unsigned char *tied,
                        size_t n)
{
    for (int r = 0; words != W_NONE && r < 6; r++) {
        size_t ties = 0;
        for (size_t i = 0; i < n; i++)
            ties += tied[i];
        if (ties == 0 || ties < n / 1024)
            return;
        for (size_t a = 0; a < n;) {
            size_t e = a + 1;
            while (e < n && tied[e])
                e++;
            for (size_t i = a + 1; i < e; i++) { /* insertion: stable */
                gm_rec x = out[i];
                uint32_t w = word_at(ks, words, &x, r);
                size_t k = i;
                for (; k > a && word_at(ks, words, &out[k - 1], r) > w; k--)
                    out[k] = out[k - 1];
                out[k] = x;
            }
            for (size_t i = a + 1; i < e; i++)
                tied[i] = word_at(ks, words, &out[i], r) == word_at(ks, words, &out[i - 1], r);
            a = e;
        }
    }
}

/* What the device hands back for the records of in (input order): the records
 * in order of their sort keys, equal ones in input order, and the tie flags. */
static void device_twin(const gm_keyspec *ks, const gm_rec *in, size_t n, gm_rec *out,
                        unsigned char *tied)
{
    int refine = ks->nkeys == 1 && !ks->stable && !ks->unique, inexact = 0;
    keyed *k = malloc(n * sizeof *k);
    for (size_t i = 0; i < n; i++) {
        inexact |= !gm_rec_is_exact(&in[i]);
        k[i].key = refine ? gm_kp_head8(gm_rec_line(&in[i]), gm_rec_len(&in[i], ks->eol),
                                        ks->reverse)
                          : in[i].prefix;
        k[i].at = i;
    }
    qsort(k, n, sizeof *k, by_key);
    if (refine) {
        for (size_t i = 0; i < n; i++) {
            k[i].key = in[k[i].at].prefix;
            k[i].at = k[i].at | (i << 32); /* the first sort's place breaks ties */
        }
        qsort(k, n, sizeof *k, by_key);
        for (size_t i = 0; i < n; i++)
            k[i].at &= 0xFFFFFFFFu;
    }
    for (size_t i = 0; i < n; i++) {
        out[i] = in[k[i].at];
        int tie = i > 0 && out[i].prefix == out[i - 1].prefix;
        if (tie && refine && !inexact)
            tie = gm_kp_head8(gm_rec_line(&out[i]), gm_rec_len(&out[i], ks->eol), ks->reverse) ==
                  gm_kp_head8(gm_rec_line(&out[i - 1]), gm_rec_len(&out[i - 1], ks->eol),
                              ks->reverse);
        tied[i] = (unsigned char)tie;
    }
    if (refine)
        twin_refine(ks, round_words(ks, inexact), out, tied, n);
    free(k);
}

/* The generated text cut at line ends into nb blocks of their own. */
static int cut_blocks(const text *t, char eol, int nb, gm_lines_block *blocks)
{
    size_t at = 0;
    int k = 0;
    for (int b = 0; b < nb && at < t->n; b++) {
        size_t end = b == nb - 1 ? t->n : t->n * (size_t)(b + 1) / (size_t)nb;
        while (end < t->n && (end == 0 || t->buf[end - 1] != eol))
            end++;
        if (end <= at)
            continue;
        unsigned char *data = malloc(end - at);
        memcpy(data, t->buf + at, end - at);
        blocks[k++] = (gm_lines_block){ .refs = 1, .len = end - at, .cap = end - at,
                                        .data = data };
        at = end;
    }
    return k;
}

/* The host's half (gm_recgpu_ties) on what the device twin gives for a case's
 * lines in nb blocks, against gm_recsort; and, in a build with CUDA, the
 * kernels' own per-line steps run on the host (testing.h) against the twin. */
static void ties_case(const rec_case *c, int n, int threads, uint64_t seed, int nb,
                      int kernels)
{
    gm_keyspec ks = spec_from_as(c->args, c->bytes, NULL);
    rng r;
    rng_seed(&r, seed);
    text t = { NULL, 0, 0 };
    c->gen(&r, &t, n, ks.eol);
    gm_lines_block b[4];
    nb = cut_blocks(&t, ks.eol, nb, b);
    gm_recs in = { NULL, 0, 0, 0 };
    gm_status st;
    size_t counted = 0;
    for (int k = 0; k < nb; k++) {
        cr_assert_eq(gm_lines_split(&ks, &b[k], &in, threads, &st), GM_OK, "%s", st.msg);
        counted += gm_lines_count(&b[k], ks.eol, threads);
    }
    cr_assert_eq(in.n, counted, "%s: lines counted", c->args);
    size_t m = in.n;
    gm_rec *want = malloc(m * sizeof *want + 1), *got = malloc(m * sizeof *got + 1);
    unsigned char *tied = malloc(m + 1);
    memcpy(want, in.r, m * sizeof *want);
    cr_assert_eq(gm_recsort(&ks, want, m, threads, SIZE_MAX, &st), GM_OK, "%s", st.msg);
    device_twin(&ks, in.r, m, got, tied);

    const unsigned char *texts[4];
    size_t lens[4];
    for (int k = 0; k < nb; k++) {
        texts[k] = b[k].data;
        lens[k] = b[k].len;
    }
    gm_rec *host = malloc(m * sizeof *host + 1);
    unsigned char *host_tied = malloc(m + 1);
    gm_gpu_rec_job job = { .ks = &ks, .text = texts, .len = lens, .nblocks = nb, .lines = m,
                           .refine = ks.nkeys == 1 && !ks.stable && !ks.unique,
                           .recs = (uint64_t *)host, .tied = host_tied };
    if (kernels)
        cr_assert_eq(gm_gpu_test_records_host(&job, &st), GM_OK, "%s: %s", c->args, st.msg);
    for (size_t i = 0; kernels && i < m; i++) {
        cr_assert(host[i].prefix == got[i].prefix && host[i].ref == got[i].ref,
                  "%s: the kernels' steps give record %zu as %016llx %016llx, the twin %016llx "
                  "%016llx", c->args, i, (unsigned long long)host[i].prefix,
                  (unsigned long long)host[i].ref, (unsigned long long)got[i].prefix,
                  (unsigned long long)got[i].ref);
        cr_assert_eq(host_tied[i], tied[i], "%s: record %zu's tie flag", c->args, i);
    }

    cr_assert_eq(gm_recgpu_ties(&ks, got, tied, m, threads, &st), GM_OK, "%s", st.msg);
    int same_records = ks.stable || ks.unique;
    for (size_t i = 0; i < m; i++) {
        size_t wl = gm_rec_len(&want[i], ks.eol), gl = gm_rec_len(&got[i], ks.eol);
        cr_assert(wl == gl && memcmp(gm_rec_line(&want[i]), gm_rec_line(&got[i]), wl) == 0,
                  "%s, %d threads: line %zu differs from gm_recsort's: '%.40s' for '%.40s'",
                  c->args, threads, i, gm_rec_line(&got[i]), gm_rec_line(&want[i]));
        if (same_records)
            cr_assert_eq(gm_rec_line(&want[i]), gm_rec_line(&got[i]),
                         "%s: line %zu is another of equal keys", c->args, i);
    }
    free(host);
    free(host_tied);
    free(want);
    free(got);
    free(tied);
    gm_recs_free(&in);
    for (int k = 0; k < nb; k++)
        free(b[k].data);
    free(t.buf);
}

Test(recgpu, ties_as_the_cpu_sort_orders_them, .timeout = 120)
{
    for (size_t i = 0; i < NCASES; i++) {
        if (strstr(CASES[i].args, "-g"))
            continue; /* the device declines -g */
        int n = CASES[i].lines < 3000 ? CASES[i].lines : 3000;
        ties_case(&CASES[i], n, 1, 100 + i, 1, 0);
        ties_case(&CASES[i], n, 3, 200 + i, 3, 0);
    }
}

Test(recgpu, ties_in_runs_too_large_for_one_task, .timeout = 120)
{
    /* more records than a parallel pass's minimum, a few keys for all: runs
     * larger than a task among the rest, sorted alone on all threads */
    static const rec_case big[] = {
        { gen_equal, 0, "-t, -k2,2n", 0, 0 },
        { gen_equal, 0, "-t, -k1,1n", 0, 0 },
        { gen_events, 0, "-t, -k2,2n -k1,1", 0, 0 },
        { gen_equal, 0, "-t, -k2,2n -s", 0, 0 },
        { gen_equal, 0, "-t, -k2,2n -k1,1n", 0, 0 },
        { gen_equal_heads, 0, "-t, -k2,2n", 0, 0 },
        { gen_equal_heads, 0, "-t, -k2,2nr -k3,3n -s", 0, 0 },
    };
    for (size_t i = 0; i < sizeof big / sizeof *big; i++)
        ties_case(&big[i], 150000, 4, 300 + i, 2, 0);
}

Test(recgpu, kernels_steps_on_the_host, .timeout = 120)
{
    gm_status st;
    gm_gpu_rec_job none = { 0 };
    if (gm_gpu_test_records_host(&none, &st) == GM_ENODEV)
        cr_skip_test("kernels' steps skipped: %s", st.msg);
    for (size_t i = 0; i < NCASES; i++) {
        if (strstr(CASES[i].args, "-g"))
            continue;
        int n = CASES[i].lines < 3000 ? CASES[i].lines : 3000;
        ties_case(&CASES[i], n, 2, 400 + i, 3, 1);
    }
}
