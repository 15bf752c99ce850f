/*
 * test_recgpu.c - the records path's sort on the GPU (core/recgpu.c,
 * cuda/records.cu).
 *
 * Without a GPU: the host's half, gm_recgpu_ties, fed what the device hands back
 * by a CPU twin of it (each line's prefix, a stable sort by the sort keys, the
 * tie flags; cuda/records.cu's contract in gpu.h), must give gm_recsort's order:
 * the same lines, and under -s and -u the very same records; on one thread and
 * several, with runs large enough to be sorted alone, the lines in one block or
 * several. In a build with CUDA the kernels' per-line steps (cuda/records.cuh),
 * run on the host, must give the twin's records and tie flags bit for bit.
 *
 * The CLI cases run gpumerge on generated inputs (id,ts,payload lines whose
 * timestamps many lines share, fields of numbers, units and words, CRLF and blank
 * lines, a line of a megabyte among short ones, a single key for every line,
 * NUL-terminated lines) and compare with LC_ALL=C sort given the same options:
 * with --device=cpu always, and with --device=gpu where a GPU is usable (else the
 * case is skipped, and says so), once as they come and once through
 * gpumerge_forced with small blocks, staging pieces and budget, so that a chunk
 * on the device holds many blocks and several chunks become runs; -v must say
 * that the GPU sorted them (but a first key by -g, which the CPU sorts). A
 * chunk too large for the device's memory (a limit forced) is sorted on the CPU.
 * gm_lines_count, which tells the device how many lines a chunk holds, agrees
 * with the split on blocks read from files (with the counts made while reading)
 * and pipes. The sort with the text in device memory (core/recdev.c,
 * cuda/resident.cu) runs every case over several files, with small pieces in
 * both directions, in place, and declined for the host's share of ties; and
 * range by range of its keys where a memory limit forced on the device is below
 * the whole text's needs (core/recrange.c).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/keyprefix.h"
#include "../core/recgpu.h"
#include "../core/recsort.h"
#include "../cuda/testing.h"
#include "helpers.h"
#include "specs.h"

/* ---------------------------------------------------------------- inputs */

/* bench/records.sh's lines: id,ts,payload, a timestamp shared by about fifty. */
static void gen_events(rng *r, text *t, int n, char eol)
{
    for (int i = 0; i < n; i++) {
        text_putf(t, "%lld,%lld,", (long long)rng_range(r, 0, 10 * (int64_t)n),
             1700000000LL + rng_range(r, 0, n / 50));
        int len = (int)rng_range(r, 0, 12);
        for (int k = 0; k < len; k++)
            text_putf(t, "%c", (char)('a' + rng_range(r, 0, 25)));
        text_put(t, &eol, 1);
    }
}

/* Fields of numbers (signs, decimals, long ones, units, zeros) and words, blank
 * or comma separated; blank lines, CRs and lines equal to an earlier one. */
static void gen_fields(rng *r, text *t, int n, char eol)
{
    static const char *odd[] = { "abc", "x", "-", "+1", ".", "-.5", "0.0", "-0", "1e3", "1K",
                                 "2M", "007", "1.50", "-0.0", "9999999999999999999999",
                                 "12345678901234567.5", "-3G", "" };
    size_t *starts = malloc((size_t)n * sizeof *starts);
    for (int i = 0; i < n; i++) {
        starts[i] = t->n;
        if (i > 0 && rng_range(r, 0, 9) == 0) { /* a copy of an earlier line */
            size_t s = starts[rng_range(r, 0, i - 1)];
            size_t e = s;
            while (t->buf[e] != eol)
                e++;
            char *copy = strndup(t->buf + s, e - s);
            text_put(t, copy, e - s);
            free(copy);
        } else if (rng_range(r, 0, 30) > 0) {
            int nf = (int)rng_range(r, 1, 4);
            for (int f = 0; f < nf; f++) {
                if (f)
                    text_put(t, rng_range(r, 0, 2) ? "," : " ", 1);
                int64_t k = rng_range(r, 0, 9);
                if (k < 2)
                    text_putf(t, "%s", odd[rng_range(r, 0, 17)]);
                else if (k < 4)
                    text_putf(t, "%lld.%lld", (long long)rng_range(r, -50, 50),
                         (long long)rng_range(r, 0, 999));
                else
                    text_putf(t, "%lld", (long long)rng_range(r, -30, 30));
            }
            if (rng_range(r, 0, 20) == 0)
                text_put(t, "\r", 1);
        }
        text_put(t, &eol, 1);
    }
    free(starts);
}

/* Short lines, and a line of a megabyte (its key first) now and then. */
static void gen_long(rng *r, text *t, int n, char eol)
{
    for (int i = 0; i < n; i++) {
        text_putf(t, "%lld,", (long long)rng_range(r, -100, 100));
        int big = i % (n / 3 + 1) == 1;
        size_t len = big ? (size_t)1 << 20 : (size_t)rng_range(r, 0, 20);
        for (size_t k = 0; k < len; k++)
            text_putf(t, "%c", (char)('a' + (k * 7 + (size_t)i) % 26));
        text_put(t, &eol, 1);
    }
}

/* One key for every line, the rest of the line telling them apart or not. */
static void gen_equal(rng *r, text *t, int n, char eol)
{
    for (int i = 0; i < n; i++) {
        text_putf(t, "%lld,42,%lld", (long long)rng_range(r, 0, 20), (long long)rng_range(r, 0, 3));
        text_put(t, &eol, 1);
    }
}

/* One key for every line, and the lines' first eight bytes shared by thousands. */
static void gen_equal_heads(rng *r, text *t, int n, char eol)
{
    for (int i = 0; i < n; i++) {
        text_putf(t, "row-%06lld,42,%lld", (long long)rng_range(r, 0, 30000),
             (long long)rng_range(r, 0, 99));
        text_put(t, &eol, 1);
    }
}

/* Lines whose ids many share, with more bytes in common after the id (a
 * timestamp, or a constant middle that only bytes past the 32nd tell apart). */
static void gen_long_heads(rng *r, text *t, int n, char eol)
{
    for (int i = 0; i < n; i++) {
        long long id = rng_range(r, 0, 150);
        if (rng_range(r, 0, 1))
            text_putf(t, "%08lld,1700%06lld,", id, (long long)rng_range(r, 0, 2000));
        else
            text_putf(t, "%08lld,the same twenty-six bytes,%lld", id, (long long)rng_range(r, 0, 9));
        int len = (int)rng_range(r, 0, 3);
        for (int k = 0; k < len; k++)
            text_putf(t, "%c", (char)('a' + rng_range(r, 0, 2)));
        text_put(t, &eol, 1);
    }
}

typedef void (*gen_fn)(rng *, text *, int, char);

typedef struct {
    gen_fn gen;
    int lines;
    const char *args;  /* sort's options, as the shell takes them */
    int zero;          /* -z */
} rec_case;

static const rec_case CASES[] = {
    { gen_events, 20000, "-t, -k2,2n", 0 },
    { gen_events, 20000, "-t, -k2,2nr -s", 0 },
    { gen_events, 20000, "-t, -k2,2n -u", 0 },
    { gen_events, 20000, "-t, -k1,1 -k2,2n", 0 },
    { gen_events, 5000, "-t, -k3 -k9,9n -r", 0 },
    { gen_events, 5000, "-t, -k2,2n -k1,1nr", 0 },
    { gen_fields, 8000, "-n", 0 },
    { gen_fields, 8000, "-n -u", 0 },
    { gen_fields, 8000, "-h -s", 0 },
    { gen_fields, 8000, "-h -r", 0 },
    { gen_fields, 8000, "-k2,2 -k1,1n", 0 },
    { gen_fields, 8000, "-b -k2,2n -k3", 0 },
    { gen_fields, 8000, "-t, -k1.2,1.4n -u", 0 },
    { gen_fields, 4000, "-g", 0 },
    { gen_long, 40, "-t, -k1,1n", 0 },
    { gen_long, 40, "-t, -k2 -k9,9n", 0 },
    { gen_equal, 20000, "-t, -k2,2n", 0 },
    { gen_equal, 20000, "-t, -k2,2n -s", 0 },
    { gen_equal, 20000, "-t, -k2,2n -u", 0 },
    { gen_equal_heads, 20000, "-t, -k2,2n", 0 },
    { gen_long_heads, 20000, "-n", 0 },
    { gen_long_heads, 20000, "-n -r", 0 },
    { gen_long_heads, 20000, "-t, -k1,1n", 0 },
    { gen_fields, 8000, "-z -n", 1 },
    { gen_events, 8000, "-z -t, -k2,2n -s", 1 },
};
#define NCASES (sizeof CASES / sizeof CASES[0])

/* ---------------------------------------------------------------- the host's half */

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
 * ordered stably by the next four bytes of its lines (from the ninth on; zeros
 * past a line's end; complemented under -r), and a record stays tied where those
 * bytes equal the record's before it. */
static uint32_t word_at(const gm_keyspec *ks, const gm_rec *x, size_t off)
{
    const unsigned char *line = gm_rec_line(x);
    size_t len = gm_rec_len(x, ks->eol);
    uint32_t w = 0;
    for (size_t b = off; b < off + 4; b++)
        w = w << 8 | (b < len ? line[b] : 0u);
    return ks->reverse ? ~w : w;
}

static void twin_refine(const gm_keyspec *ks, gm_rec *out, unsigned char *tied, size_t n)
{
    for (size_t off = 8; off < 8 + 4 * 6; off += 4) {
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
                uint32_t w = word_at(ks, &x, off);
                size_t k = i;
                for (; k > a && word_at(ks, &out[k - 1], off) > w; k--)
                    out[k] = out[k - 1];
                out[k] = x;
            }
            for (size_t i = a + 1; i < e; i++)
                tied[i] = word_at(ks, &out[i], off) == word_at(ks, &out[i - 1], off);
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
    if (refine && !inexact)
        twin_refine(ks, out, tied, n);
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
    gm_keyspec ks = spec_from(c->args, NULL);
    rng r;
    rng_seed(&r, seed);
    text t = { NULL, 0, 0 };
    c->gen(&r, &t, n, ks.eol);
    gm_lines_block b[4];
    nb = cut_blocks(&t, ks.eol, nb, b);
    gm_recs in = { NULL, 0, 0 };
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
    cr_assert_eq(gm_recsort(&ks, want, m, threads, 1, &st), GM_OK, "%s", st.msg);
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
        { gen_equal, 0, "-t, -k2,2n", 0 },
        { gen_equal, 0, "-t, -k1,1n", 0 },
        { gen_events, 0, "-t, -k2,2n -k1,1", 0 },
        { gen_equal, 0, "-t, -k2,2n -s", 0 },
        { gen_equal, 0, "-t, -k2,2n -k1,1n", 0 },
        { gen_equal_heads, 0, "-t, -k2,2n", 0 },
        { gen_equal_heads, 0, "-t, -k2,2nr -k3,3n -s", 0 },
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

/* gm_lines_count on blocks as a sort reads them (the counts made while a regular
 * file is read, and a pipe's counted after), against the records split makes. */
Test(recgpu, lines_counted_as_split)
{
    char *dir = scratch_dir();
    static const size_t wants[] = { 1000, 64 << 10, 3 << 20 };
    for (int zero = 0; zero <= 1; zero++)
        for (int last_eol = 0; last_eol <= 1; last_eol++) {
            rng r;
            rng_seed(&r, 500 + 2 * (uint64_t)zero + (uint64_t)last_eol);
            text t = { NULL, 0, 0 };
            char eol = zero ? '\0' : '\n';
            gen_fields(&r, &t, 150000, eol);
            gen_long(&r, &t, 6, eol);
            if (!last_eol)
                t.n--; /* no terminator after the last line */
            char *in = path_in(dir, "in");
            write_file(in, t.buf, t.n);
            gm_keyspec ks = spec_from(zero ? "-z -n" : "-n", NULL);
            for (size_t w = 0; w < sizeof wants / sizeof *wants; w++)
                for (int pipe = 0; pipe <= 1; pipe++) {
                    gm_lines_src src;
                    gm_status st;
                    char cmd[4200];
                    snprintf(cmd, sizeof cmd, "cat '%s'", in);
                    FILE *p = pipe ? popen(cmd, "r") : NULL;
                    if (pipe)
                        gm_lines_open_fd(&src, fileno(p), 0, "pipe", eol);
                    else
                        cr_assert_eq(gm_lines_open(&src, in, eol, 0, &st), GM_OK, "%s", st.msg);
                    size_t lines = 0;
                    int with_counts = 0;
                    for (;;) {
                        gm_lines_block *b;
                        cr_assert_eq(gm_lines_read(&src, wants[w], 0, 2, &b, &st), GM_OK, "%s",
                                     st.msg);
                        if (!b)
                            break;
                        gm_recs v = { NULL, 0, 0 };
                        cr_assert_eq(gm_lines_split(&ks, b, &v, 2, &st), GM_OK, "%s", st.msg);
                        size_t c = gm_lines_count(b, eol, 2);
                        with_counts |= b->counts != NULL;
                        cr_assert_eq(c, v.n, "block of %zu bytes (pipe %d): %zu lines counted, "
                                     "%zu split", b->len, pipe, c, v.n);
                        lines += c;
                        gm_recs_free(&v);
                        gm_lines_block_unref(b);
                    }
                    cr_assert_eq(lines, 150006u);
                    cr_assert(pipe || wants[w] < (1 << 20) || with_counts,
                              "no block of %zu bytes came with its counts", wants[w]);
                    gm_lines_close(&src);
                    if (p)
                        pclose(p);
                }
            free(in);
            free(t.buf);
        }
    free(dir);
}

/* ---------------------------------------------------------------- the CLI */

static int gpu_usable(void)
{
    cmd_result r = run_sh(NULL, "echo 1 | \"$GPUMERGE\" sort --device=gpu");
    int usable = r.status == 0;
    cmd_free(&r);
    return usable;
}

/* Skips the test without a usable GPU or gpumerge_forced. */
static void need_gpu_and_forced(void)
{
    if (!gpu_usable())
        cr_skip_test("GPU case skipped: no usable CUDA device");
    if (!getenv("GPUMERGE_FORCED"))
        cr_skip_test("GPUMERGE_FORCED (make builds it) not set");
}

/* Runs cmd in dir and compares file out with file want there. */
static void same_as_sort(const char *dir, const char *cmd, cmd_result *res)
{
    *res = run_sh(dir, cmd);
    cr_assert_eq(res->status, 0, "%s: %s", cmd, res->err);
    size_t wl, gl;
    char *want_path = path_in(dir, "want"), *out_path = path_in(dir, "out");
    char *want = read_file(want_path, &wl), *got = read_file(out_path, &gl);
    cr_assert(got && wl == gl && memcmp(want, got, wl) == 0,
              "%s: differs from sort (%zu bytes, sort %zu)", cmd, gl, wl);
    free(want);
    free(got);
    free(want_path);
    free(out_path);
}

/* Each case through gpumerge (prog and its leading arguments) with device, against
 * LC_ALL=C sort; gpu_said: -v must say the GPU sorted chunks (but for -g). */
static void cli_cases(const char *prog, const char *device, int gpu_said)
{
    char *dir = scratch_dir();
    for (size_t i = 0; i < NCASES; i++) {
        const rec_case *c = &CASES[i];
        rng r;
        rng_seed(&r, 1000 + i);
        text t = { NULL, 0, 0 };
        c->gen(&r, &t, c->lines, c->zero ? '\0' : '\n');
        char *in = path_in(dir, "in");
        write_file(in, t.buf, t.n);
        char *cmd;
        cr_assert(asprintf(&cmd, "LC_ALL=C sort %s in > want && %s %s -v %s in -o out",
                           c->args, prog, device, c->args) > 0);
        cmd_result res;
        same_as_sort(dir, cmd, &res);
        if (gpu_said && !strstr(c->args, "-g"))
            cr_assert(strstr(res.err, "sorted on the GPU"), "%s: -v says %s", cmd, res.err);
        cmd_free(&res);
        free(cmd);
        free(in);
        free(t.buf);
    }
    free(dir);
}

/* Small blocks, staging pieces and budget: many blocks a chunk, several chunks. */
#define FORCED "\"$GPUMERGE_FORCED\" --records-block=3000 --text-chunk=1000"
#define SMALL "-S 256K --batch-size=3"

Test(recgpu, cli_cpu_against_sort, .timeout = 240)
{
    cli_cases("\"$GPUMERGE\"", "sort --device=cpu", 0);
    if (!getenv("GPUMERGE_FORCED"))
        cr_skip_test("GPUMERGE_FORCED (make builds it) not set");
    cli_cases(FORCED, "sort --device=cpu " SMALL, 0);
}

Test(recgpu, cli_gpu_against_sort, .timeout = 240)
{
    if (!gpu_usable())
        cr_skip_test("GPU case skipped: no usable CUDA device");
    cli_cases("\"$GPUMERGE\"", "sort --device=gpu", 1);
    if (!getenv("GPUMERGE_FORCED"))
        cr_skip_test("GPUMERGE_FORCED (make builds it) not set");
    cli_cases(FORCED, "sort --device=gpu " SMALL, 1);
}

/* Case c's lines cut into three files in dir: a, an empty b, and c, which lacks
 * its last end of line. */
static void three_files(const rec_case *c, uint64_t seed, const char *dir)
{
    rng r;
    rng_seed(&r, seed);
    text t = { NULL, 0, 0 };
    char eol = c->zero ? '\0' : '\n';
    c->gen(&r, &t, c->lines, eol);
    size_t cut = t.n / 3;
    while (cut < t.n && t.buf[cut - 1] != eol)
        cut++;
    char *a = path_in(dir, "a"), *b = path_in(dir, "b"), *cc = path_in(dir, "c");
    write_file(a, t.buf, cut);
    write_file(b, "", 0);
    write_file(cc, t.buf + cut, t.n - cut - (t.n > cut));
    free(a);
    free(b);
    free(cc);
    free(t.buf);
}

/* Every case with the text in device memory (recdev.c, cuda/resident.cu): three
 * files, one empty and one without its last end of line, sorted together, with
 * staging pieces of 1000 bytes and output pieces of 4096 gathered on the device
 * (lines cut between pieces, a megabyte line longer than one), against sort of
 * the same files; -v says the device's memory held them, but for -g (the CPU's)
 * and -u, which the device declines where it cannot compare keys whole. */
Test(recgpu, cli_gpu_in_device_memory, .timeout = 300)
{
    need_gpu_and_forced();
    char *dir = scratch_dir();
    for (size_t i = 0; i < NCASES; i++) {
        const rec_case *c = &CASES[i];
        three_files(c, 2000 + i, dir);
        char *cmd;
        cr_assert(asprintf(&cmd, "LC_ALL=C sort %s a b c > want && \"$GPUMERGE_FORCED\" "
                           "--lines-piece=4096 --text-chunk=1000 sort --device=gpu -v %s "
                           "a b c -o out", c->args, c->args) > 0);
        cmd_result res;
        same_as_sort(dir, cmd, &res);
        if (!strstr(c->args, "-g") && !strstr(c->args, "-u"))
            cr_assert(strstr(res.err, "sorted on the GPU in its memory"), "%s: -v says %s",
                      cmd, res.err);
        cmd_free(&res);
        free(cmd);
    }
    free(dir);
}

/* The bytes of files a, b and c in dir. */
static size_t three_sizes(const char *dir)
{
    size_t all = 0;
    for (const char *name = "abc"; *name; name++) {
        char leaf[2] = { *name, 0 };
        char *p = path_in(dir, leaf);
        struct stat sb;
        cr_assert_eq(stat(p, &sb), 0, "%s", p);
        all += (size_t)sb.st_size;
        free(p);
    }
    return all;
}

/* A text larger than the device's memory (a limit forced on it) sorted range by
 * range of its keys' prefixes (recrange.c): every case over three files, read in
 * windows of 4096 bytes (lines across windows, the megabyte lines longer than
 * one), under limits of two, three and four times the text's bytes and a budget
 * of the text's bytes (the host could not sort it in memory), against sort. The
 * events (but -u's) must go by two ranges or more under some limit; one key for
 * every line cannot be split, and the chunks sort it. Where the host's budget
 * holds the text, the chunks sort it. */
Test(recgpu, cli_gpu_in_device_memory_by_ranges, .timeout = 600)
{
    need_gpu_and_forced();
    char *dir = scratch_dir();
    for (size_t i = 0; i < NCASES; i++) {
        const rec_case *c = &CASES[i];
        three_files(c, 3000 + i, dir);
        size_t text = three_sizes(dir);
        int ranged = 0, split = 0;
        for (size_t m = 2; m <= 4; m++) {
            char *cmd;
            cr_assert(asprintf(&cmd, "LC_ALL=C sort %s a b c > want && \"$GPUMERGE_FORCED\" "
                               "--records-window=4096 --gpu-memory-limit=%zu --lines-piece=4096 "
                               "--text-chunk=1000 sort --device=gpu -v -S %zub %s a b c "
                               "-o out", c->args, m * text + (64 << 10), text, c->args) > 0);
            cmd_result res;
            same_as_sort(dir, cmd, &res);
            ranged |= strstr(res.err, " of their first key's prefix") != NULL;
            split |= strstr(res.err, " ranges of their first key's prefix") != NULL;
            if (c->gen == gen_equal && m == 2 && !strstr(c->args, "-u"))
                cr_assert(strstr(res.err, "bytes of lines whose keys the sample cannot split"),
                          "%s: -v says %s", cmd, res.err);
            cmd_free(&res);
            free(cmd);
        }
        if (c->gen == gen_events && !strstr(c->args, "-u"))
            cr_assert(ranged && split, "%s: never sorted in two ranges or more", c->args);
    }
    three_files(&CASES[0], 3000, dir);
    char *cmd;
    cr_assert(asprintf(&cmd, "LC_ALL=C sort %s a b c > want && \"$GPUMERGE_FORCED\" "
                       "--gpu-memory-limit=%zu sort --device=gpu -v %s a b c -o out",
                       CASES[0].args, 2 * three_sizes(dir), CASES[0].args) > 0);
    cmd_result res;
    same_as_sort(dir, cmd, &res);
    cr_assert(strstr(res.err, "too large for the device, small enough for the host's memory"),
              "%s: -v says %s", cmd, res.err);
    cmd_free(&res);
    free(cmd);
    free(dir);
}

/* -o naming an input: every input is in device memory before the first byte is
 * written. A budget too small for the tied lines the host must order declines the
 * device's sort, as does -u over keys longer than their prefixes, and the chunks
 * are sorted as before. */
Test(recgpu, cli_gpu_in_device_memory_in_place_and_declined, .timeout = 120)
{
    if (!gpu_usable())
        cr_skip_test("GPU case skipped: no usable CUDA device");
    char *dir = scratch_dir();
    const rec_case events = { gen_events, 20000, "-t, -k2,2n", 0 };
    three_files(&events, 31, dir);
    cmd_result res;
    same_as_sort(dir, "LC_ALL=C sort -t, -k2,2n a b c > want && \"$GPUMERGE\" sort "
                      "--device=gpu -t, -k2,2n a b c -o c && cp c out", &res);
    cmd_free(&res);
    const rec_case heads = { gen_long_heads, 20000, "-n", 0 };
    three_files(&heads, 32, dir);
    same_as_sort(dir, "LC_ALL=C sort -n a b c > want && \"$GPUMERGE\" sort --device=gpu -v "
                      "-S 4K -n a b c -o out", &res);
    cr_assert(strstr(res.err, "not sorted in device memory (lines: ") &&
              strstr(res.err, "bytes of tied lines for the host"), "-v says %s", res.err);
    cmd_free(&res);
    const rec_case fields = { gen_fields, 8000, "-n -u", 0 }; /* numbers past 8 bytes */
    three_files(&fields, 33, dir);
    same_as_sort(dir, "LC_ALL=C sort -n -u a b c > want && \"$GPUMERGE\" sort --device=gpu -v "
                      "-n -u a b c -o out", &res);
    cr_assert(strstr(res.err, "not sorted in device memory (lines: -u with keys the device "
                              "cannot compare whole)"), "-v says %s", res.err);
    cmd_free(&res);
    free(dir);
}

Test(recgpu, cli_gpu_declines_a_chunk_too_large_for_its_memory)
{
    need_gpu_and_forced();
    char *dir = scratch_dir();
    rng r;
    rng_seed(&r, 77);
    text t = { NULL, 0, 0 };
    gen_events(&r, &t, 5000, '\n');
    char *in = path_in(dir, "in");
    write_file(in, t.buf, t.n);
    cmd_result res = run_sh(dir, "LC_ALL=C sort -t, -k2,2n in > want && \"$GPUMERGE_FORCED\" "
                                 "--gpu-memory-limit=100000 sort --device=gpu -v -t, -k2,2n "
                                 "in -o out && cmp want out");
    cr_assert_eq(res.status, 0, "%s%s", res.out, res.err);
    cr_assert(strstr(res.err, "not sorted in device memory ("), "-v says %s", res.err);
    cr_assert(strstr(res.err, "a chunk sorted on the CPU (text path: data does not fit in GPU "
                              "memory"), "-v says %s", res.err);
    cr_assert(!strstr(res.err, "sorted on the GPU"), "-v says %s", res.err);
    cmd_free(&res);
    free(in);
    free(t.buf);
    free(dir);
}

Test(recgpu, cli_gpu_without_a_device_fails)
{
    if (gpu_usable())
        cr_skip_test("a GPU is usable here: the no-GPU message cannot be produced");
    char *dir = scratch_dir();
    char *in = path_in(dir, "in");
    write_text(in, "a,2\nb,1\n");
    cmd_result r = run_sh(dir, "\"$GPUMERGE\" sort --device=gpu -t, -k2,2n in -o out; "
                               "echo $?; test -e out && echo written");
    cr_assert_str_eq(r.out, "2\n", "%s", r.err);
    cr_assert(strstr(r.err, "no usable CUDA device"), "%s", r.err);
    cmd_free(&r);
    r = run_sh(dir, "\"$GPUMERGE\" sort --device=auto -t, -k2,2n in");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, "b,1\na,2\n");
    cmd_free(&r);
    free(in);
    free(dir);
}
