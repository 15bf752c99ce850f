/*
 * test_records.c - the records path (core/records.h) called directly: sort in
 * memory (small inputs on one thread, large ones on several, which take the
 * parallel radix sort and its combined keys), sort under a small budget with
 * several runs and merge passes (--batch-size 2), merge of sorted inputs, check
 * (sorted and not, its message, -u's strictness, -C), -u, -s, -r, -z, the split
 * of a block into records against a line-by-line reading (and -t, -kN,Nn's quick
 * prefix against the general one), -o onto an
 * input (replaced, and written in place through a second link), standard input,
 * a missing input, a disordered merge input, and golden edge cases in
 * testdata/records (blank lines, CR, NUL inside lines, high bytes, a line of
 * megabytes, empty inputs, several inputs, a missing final newline).
 *
 * Inputs are generated (fields separated by commas, spaces or tabs; integers,
 * signs, decimals, long numbers, units, non-numbers, empty fields and lines, many
 * ties) and every output is compared byte for byte with `LC_ALL=C sort` run with
 * the same options.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/fieldnum.h"
#include "../core/gm.h"
#include "../core/records.h"
#include "../core/lines.h"
#include "../core/recsort.h"
#include "../core/reserve.h"
#include "helpers.h"
#include "specs.h"

/* ---------------------------------------------------------------- helpers */

#define MAX_OPTS 8

/* A set of sort options: each names an order, as gpumerge would imply -n. */
typedef struct {
    const char *opt[MAX_OPTS];
} opts;

static const opts TABLE[] = {
    { { "-t,", "-k2,2n" } },
    { { "-t,", "-k2,2n", "-s" } },
    { { "-t,", "-k2,2n", "-u" } },
    { { "-t,", "-k2,2n", "-r" } },
    { { "-t,", "-k2,2n", "-k1,1r" } },
    { { "-n" } },
    { { "-n", "-r", "-u" } },
    { { "-b", "-k2,2n", "-k3" } },
    { { "-t\t", "-k3,3g", "-k1,1" } },
    { { "-k2h", "-s", "-r" } },
    { { "-t ", "-k1.2,1.4n", "-u" } },
    { { "-t,", "-k3,3", "-n", "-s" } },
};
#define NTABLE (sizeof TABLE / sizeof TABLE[0])

static char said[4096];

static void collect(void *ctx, gm_message kind, const char *text)
{
    (void)ctx;
    (void)kind;
    size_t l = strlen(said);
    snprintf(said + l, sizeof said - l, "%s\n", text);
}

static gm_keyspec spec_of(const opts *o, int zero)
{
    gm_keyspec ks;
    gm_keyspec_init(&ks);
    for (int i = 0; i < MAX_OPTS && o->opt[i]; i++)
        spec_word(&ks, o->opt[i]);
    if (zero)
        ks.eol = '\0';
    gm_keyspec_finish(&ks);
    return ks;
}

/* The options as sort's arguments for sh -c ("-t" with its byte quoted). */
static void shell_opts(const opts *o, int zero, char *buf, size_t size)
{
    size_t l = 0;
    buf[0] = '\0';
    for (int i = 0; i < MAX_OPTS && o->opt[i]; i++)
        l += (size_t)snprintf(buf + l, size - l, strncmp(o->opt[i], "-t", 2) == 0
                                                      ? " -t '%s'" : " '%s'",
                              strncmp(o->opt[i], "-t", 2) == 0 ? o->opt[i] + 2 : o->opt[i]);
    if (zero)
        snprintf(buf + l, size - l, " -z");
}

typedef struct {
    size_t budget;
    int batch;
    int threads;
    const char *output;
    const char *tmpdir;
    int quiet;
} knobs;

static int records(gm_op op, const gm_keyspec *ks, const knobs *k, char **names, int n,
                   gm_status *st)
{
    gm_config c;
    memset(&c, 0, sizeof c);
    c.device = GM_DEVICE_CPU;
    c.keyspec = ks;
    c.unique = ks->unique;
    c.reverse = ks->reverse;
    c.zero_terminated = ks->eol == '\0';
    c.buffer_size = k->budget;
    c.batch_size = k->batch;
    c.threads = k->threads ? k->threads : 2;
    c.output = k->output;
    c.tmpdir = k->tmpdir;
    c.check_quiet = k->quiet;
    c.verbose = 1;
    c.message = collect;
    said[0] = '\0';
    st->msg[0] = '\0';
    return gm_records_run(op, &c, NULL, names, n, st);
}

/* One field of a generated line. */
static void field(rng *r, char *buf, size_t size)
{
    static const char *odd[] = { "abc", "x", "-", "+1", ".", "-.5", "0.0", "-0", "1e3", "1K",
                                 "2M", " 7", "007", "1.50", "-0.0", "9999999999999999999999" };
    int64_t k = rng_range(r, 0, 99);
    if (k < 8)
        buf[0] = '\0';
    else if (k < 20)
        snprintf(buf, size, "%s", odd[rng_range(r, 0, 15)]);
    else if (k < 28)
        snprintf(buf, size, "%lld%018lld", (long long)rng_range(r, -999, 999),
                 (long long)rng_range(r, 0, 999999999999999999LL));
    else if (k < 50)
        snprintf(buf, size, "%lld.%lld", (long long)rng_range(r, -50, 50),
                 (long long)rng_range(r, 0, 999));
    else
        snprintf(buf, size, "%lld", (long long)rng_range(r, -20, 20));
}

/* n random lines into dir/name, fields split by sep; eol ends them (the last one
 * without it sometimes). Returns the path. */
static char *gen_file(rng *r, const char *dir, const char *name, int64_t n, char sep, char eol)
{
    char *path = path_in(dir, name);
    size_t cap = (size_t)n * 96 + 16, len = 0;
    char *data = malloc(cap);
    for (int64_t i = 0; i < n; i++) {
        if (rng_range(r, 0, 49) > 0) {
            int nf = (int)rng_range(r, 1, 4);
            for (int f = 0; f < nf; f++) {
                char b[40];
                field(r, b, sizeof b);
                len += (size_t)snprintf(data + len, cap - len, "%s%s", f ? (char[]){ sep, 0 } : "", b);
            }
            int64_t extra = rng_range(r, 0, 99);
            if (extra < 3)
                data[len++] = '\r';
            else if (extra < 5)
                data[len++] = eol == '\n' ? '\0' : '\n';
            else if (extra < 7)
                data[len++] = (char)0xe9;
        }
        if (i < n - 1 || rng_range(r, 0, 2) > 0)
            data[len++] = eol;
    }
    write_file(path, data, len);
    free(data);
    return path;
}

/* LC_ALL=C sort ARGS... > dir/ref, read back. */
static char *sort_ref(const char *dir, const char *args, size_t *len)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "LC_ALL=C sort %s > ref", args);
    cmd_result res = run_sh(dir, cmd);
    cr_assert_eq(res.status, 0, "%s: %s", cmd, res.err);
    cmd_free(&res);
    char *ref = path_in(dir, "ref");
    char *data = read_file(ref, len);
    free(ref);
    return data;
}

static void assert_same_file(const char *path, const char *want, size_t want_len,
                             const char *what)
{
    size_t len;
    char *got = read_file(path, &len);
    cr_assert_not_null(got, "%s: no output", what);
    size_t at = 0;
    while (at < len && at < want_len && got[at] == want[at])
        at++;
    cr_assert(len == want_len && at == len,
              "%s: %zu bytes, sort wrote %zu; first difference at byte %zu", what, len,
              want_len, at);
    free(got);
}

static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Sorts nfiles generated files of lines each with every option set of the table
 * and compares with sort. */
static void sort_table(uint64_t seed, int nfiles, int64_t lines, const knobs *k0, int zero,
                       int want_passes)
{
    char *dir = scratch_dir();
    char *tmp = path_in(dir, "tmp");
    mkdir(tmp, 0700);
    rng r;
    rng_seed(&r, seed);
    for (size_t t = 0; t < NTABLE; t++) {
        const opts *o = &TABLE[t];
        char sep = o->opt[0][1] == 't' ? o->opt[0][2] : ' ';
        char *names[4], list[1024] = "";
        for (int f = 0; f < nfiles; f++) {
            char name[16];
            snprintf(name, sizeof name, "in%d", f);
            names[f] = gen_file(&r, dir, name, lines, sep, zero ? '\0' : '\n');
            strcat(list, " ");
            strcat(list, name);
        }
        char args[2048], sh[512];
        shell_opts(o, zero, sh, sizeof sh);
        snprintf(args, sizeof args, "%s%s", sh, list);
        size_t want_len;
        char *want = sort_ref(dir, args, &want_len);
        gm_keyspec ks = spec_of(o, zero);
        knobs k = *k0;
        char *out = path_in(dir, "out");
        k.output = out;
        k.tmpdir = tmp;
        gm_status st;
        int rc = records(GM_OP_SORT, &ks, &k, names, nfiles, &st);
        cr_assert_eq(rc, GM_OK, "sort%s: %s", args, st.msg);
        assert_same_file(out, want, want_len, args);
        if (want_passes) {
            int runs = 0, passes = 0;
            const char *p = strstr(said, "runs     ");
            cr_assert_not_null(p, "-v: %s", said);
            cr_assert_eq(sscanf(p, "runs %d temporary, %d merge", &runs, &passes), 2, "-v: %s",
                         said);
            cr_assert(runs > 2 && passes >= want_passes, "%d runs, %d passes: %s", runs, passes,
                      said);
        }
        cr_assert_eq(dir_entries(tmp), 0, "temporary files left");
        for (int f = 0; f < nfiles; f++)
            free(names[f]);
        free(want);
        free(out);
    }
    free(tmp);
    free(dir);
}

/* ---------------------------------------------------------------- split */

/* gm_lines_split against a line-by-line reading of the same block: lines of
 * every length from empty to a few hundred bytes (so that terminators fall
 * anywhere in the 64-byte windows the split compares at once), '\n' and -z's
 * '\0', on one to three threads (pieces of a quarter megabyte). */
Test(records, split_finds_every_line, .timeout = 60)
{
    rng r;
    rng_seed(&r, 64);
    for (int zero = 0; zero <= 1; zero++) {
        gm_keyspec ks = spec_of(&TABLE[0], zero);
        char eol = ks.eol;
        size_t cap = 3 << 20, len = 0;
        unsigned char *data = malloc(cap);
        cr_assert_not_null(data);
        while (len < cap - 1024) {
            int n = rng_range(&r, 0, 9) == 0 ? (int)rng_range(&r, 64, 400)
                                               : (int)rng_range(&r, 0, 70);
            for (int i = 0; i < n; i++) {
                static const char chars[] = "0123456789,,,-. abc\n";
                char c = chars[rng_range(&r, 0, sizeof chars - 2)];
                data[len++] = (unsigned char)(c == eol ? 'x' : c);
            }
            data[len++] = (unsigned char)eol;
        }
        for (int threads = 1; threads <= 3; threads++) {
            gm_lines_block b = { 1, len, cap, data, NULL, 0 };
            gm_recs v = { NULL, 0, 0 };
            gm_status st;
            cr_assert_eq(gm_lines_split(&ks, &b, &v, threads, &st), GM_OK);
            size_t at = 0, i = 0;
            for (; at < len; i++) {
                const unsigned char *e = memchr(data + at, eol, len - at);
                size_t n = (size_t)(e - (data + at));
                cr_assert_lt(i, v.n, "too few records");
                cr_assert_eq(gm_rec_line(&v.r[i]), data + at, "record %zu's line", i);
                cr_assert_eq(gm_rec_len(&v.r[i], eol), n, "record %zu's length", i);
                int exact;
                cr_assert_eq(v.r[i].prefix, gm_line_prefix(&ks, data + at, n, &exact),
                             "record %zu's prefix", i);
                cr_assert_eq(gm_rec_is_exact(&v.r[i]), exact, "record %zu's exactness", i);
                at += n + 1;
            }
            cr_assert_eq(v.n, i, "%zu records for %zu lines", v.n, i);
            gm_recs_free(&v);
        }
        free(data);
    }
}

/* One random field for the quick prefix's cases: digits of every length up to
 * 20 with leading zeros, signs, blanks before them, '.', a letter or a CR after
 * them, other separators inside, or nothing. */
static size_t quick_field(rng *r, unsigned char *o)
{
    static const char *const pieces[] = { "", " ", "\t", "  ", "-", "+", "0", "00", ".",
                                          "-0", "x", "\r", ",", ".5", "-.", "\n" };
    size_t n = 0;
    if (rng_range(r, 0, 2) == 0) {
        const char *pre = pieces[rng_range(r, 0, 15)];
        memcpy(o, pre, strlen(pre));
        n += strlen(pre);
    }
    int digits = (int)rng_range(r, 0, 3) == 0 ? (int)rng_range(r, 0, 20) : (int)rng_range(r, 1, 12);
    for (int i = 0; i < digits; i++)
        o[n++] = (unsigned char)('0' + rng_range(r, i == 0 && rng_range(r, 0, 3) ? 1 : 0, 9));
    if (rng_range(r, 0, 3) == 0) {
        const char *post = pieces[rng_range(r, 0, 15)];
        memcpy(o + n, post, strlen(post));
        n += strlen(post);
    }
    return n;
}

/* The quick prefix of a whole -t field under -n (fieldnum.h) against the general
 * gm_line_prefix, line by line with room to read after each line, and through
 * gm_lines_split, where the lines near the block's end take the general path:
 * separators that are blanks, digits, '-' and '.', fields first to 32nd, 'b' and
 * 'r', -z, lines shorter and longer than the 32 bytes looked at, fields missing,
 * empty or past the look; the specs it must not take are refused. */
Test(records, split_quick_field_prefix_matches_the_general, .timeout = 60)
{
    static const struct {
        const char *args;
        int quick;
    } specs[] = {
        { "-t, -k2,2n", 1 }, { "-t, -k1,1n -s", 1 }, { "-t, -k3,3nr", 1 },
        { "-t, -k2b,2n", 1 }, { "-t, -b -n -k2,2 -k1,1", 1 }, { "-t' ' -k2,2n", 1 },
        { "-t' ' -k2b,2n", 0 }, { "-t. -k2,2n", 1 }, { "-t- -k1,1n", 1 },
        { "-t0 -k2,2n", 1 }, { "-t, -k2,2n -z", 1 }, { "-t, -k9,9n", 1 },
        { "-t, -k32,32n", 1 }, { "-t, -k33,33n", 0 }, { "-t, -k2,3n", 0 },
        { "-t, -k2.2,2n", 0 }, { "-t, -k2,2.3n", 0 }, { "-t, -k2,2 -k1,1n", 0 }, { "-t, -k2", 0 },
        { "-k2,2n", 0 }, { "-t, -k2,2h", 0 }, { "-n", 0 },
    };
    rng r;
    rng_seed(&r, 65);
    for (size_t c = 0; c < sizeof specs / sizeof specs[0]; c++) {
        gm_keyspec ks = spec_from(specs[c].args, NULL);
        gm_fieldnum f;
        gm_fieldnum_init(&f, &ks);
        cr_assert_eq(f.on, specs[c].quick, "%s: quick %d", specs[c].args, f.on);
        unsigned char tab = ks.tab >= 0 ? (unsigned char)ks.tab : ',';
        size_t cap = 1 << 20, len = 0;
        unsigned char *data = malloc(cap + GM_FIELDNUM_READ);
        cr_assert_not_null(data);
        while (len < cap - 2048) {
            int fields = (int)rng_range(&r, 0, 10) == 0 ? (int)rng_range(&r, 0, 40)
                                                         : (int)rng_range(&r, 0, 5);
            for (int i = 0; i < fields; i++) {
                if (i)
                    data[len++] = tab;
                len += quick_field(&r, data + len);
            }
            data[len++] = (unsigned char)ks.eol;
        }
        memset(data + len, tab, GM_FIELDNUM_READ); /* readable after the last line */
        for (size_t at = 0, i = 0; f.on && at < len; i++) {
            const unsigned char *e = memchr(data + at, ks.eol, len - at);
            size_t n = (size_t)(e - (data + at));
            int ex1, ex2;
            uint64_t want = gm_line_prefix(&ks, data + at, n, &ex1);
            uint64_t got = gm_fieldnum_prefix(&f, &ks, data + at, n, data + len + GM_FIELDNUM_READ,
                                              &ex2);
            cr_assert_eq(got, want, "%s: line %zu '%.*s': %016llx, not %016llx",
                         specs[c].args, i, (int)n, data + at, (unsigned long long)got,
                         (unsigned long long)want);
            cr_assert_eq(ex2, ex1, "%s: line %zu '%.*s''s exactness", specs[c].args, i, (int)n,
                         data + at);
            at += n + 1;
        }
        gm_lines_block b = { 1, len, cap, data, NULL, 0 };
        gm_recs v = { NULL, 0, 0 };
        gm_status st;
        cr_assert_eq(gm_lines_split(&ks, &b, &v, 2, &st), GM_OK);
        size_t at = 0, i = 0;
        for (; at < len; i++) {
            const unsigned char *e = memchr(data + at, ks.eol, len - at);
            size_t n = (size_t)(e - (data + at));
            int exact;
            cr_assert_lt(i, v.n, "too few records");
            cr_assert_eq(v.r[i].prefix, gm_line_prefix(&ks, data + at, n, &exact),
                         "%s: record %zu's prefix", specs[c].args, i);
            cr_assert_eq(gm_rec_is_exact(&v.r[i]), exact, "%s: record %zu's exactness",
                         specs[c].args, i);
            at += n + 1;
        }
        cr_assert_eq(v.n, i, "%zu records for %zu lines", v.n, i);
        gm_recs_free(&v);
        free(data);
    }
}

/* ---------------------------------------------------------------- sort */

Test(records, sort_in_memory_small)
{
    knobs k = { .threads = 1 };
    sort_table(1, 1, 300, &k, 0, 0);
    sort_table(2, 3, 40, &k, 0, 0);
}

Test(records, sort_in_memory_parallel, .timeout = 120)
{
    knobs k = { .threads = 2 };
    sort_table(3, 1, 90000, &k, 0, 0);
    k.threads = 4;
    sort_table(4, 2, 40000, &k, 0, 0);
}

Test(records, sort_in_place_parallel, .timeout = 120)
{
    /* buckets of a thousand records at most per task: the distribution in
     * place runs on small inputs, nested (without -s and -u) */
    gm_recsort_test_task_max(1000);
    knobs k = { .threads = 2 };
    sort_table(8, 1, 90000, &k, 0, 0);
    k.threads = 3;
    sort_table(9, 2, 30000, &k, 0, 0);
}

Test(records, sort_output_reserved_or_refused, .timeout = 120)
{
    /* on two threads the output's space is reserved while the sort runs (the
     * file cut back to the output, shorter under -u); a file system that
     * refuses fallocate leaves the output as right */
    knobs k = { .threads = 2 };
    sort_table(10, 1, 3000, &k, 0, 0);
    gm_reserve_test_refuse(1);
    sort_table(11, 1, 3000, &k, 0, 0);
    gm_reserve_test_refuse(0);
}

Test(records, sort_external_runs_and_passes, .timeout = 120)
{
    knobs k = { .budget = 96 << 10, .batch = 2, .threads = 2 };
    sort_table(5, 2, 12000, &k, 0, 2);
}

Test(records, sort_zero_terminated)
{
    knobs k = { .threads = 2 };
    sort_table(6, 2, 500, &k, 1, 0);
    k.budget = 64 << 10;
    k.batch = 2;
    sort_table(7, 1, 12000, &k, 1, 2);
}

Test(records, sort_long_lines_under_a_small_budget)
{
    /* lines of megabytes: a block grows past the budget's block size */
    char *dir = scratch_dir();
    char *in = path_in(dir, "in"), *out = path_in(dir, "out");
    size_t big = 3 << 20, len = 0;
    char *data = malloc(3 * big + 64);
    for (int i = 0; i < 3; i++) {
        len += (size_t)sprintf(data + len, "%d,", 3 - i);
        memset(data + len, 'a' + i, big);
        len += big;
        data[len++] = '\n';
        len += (size_t)sprintf(data + len, "x,%d\n", i);
    }
    write_file(in, data, len - 1); /* no final newline */
    free(data);
    opts o = { { "-t,", "-k1,1n" } };
    gm_keyspec ks = spec_of(&o, 0);
    knobs k = { .budget = 64 << 10, .batch = 2, .output = out };
    gm_status st;
    char *names[] = { in };
    cr_assert_eq(records(GM_OP_SORT, &ks, &k, names, 1, &st), GM_OK, "%s", st.msg);
    size_t want_len;
    char *want = sort_ref(dir, "-t, -k1,1n in", &want_len);
    assert_same_file(out, want, want_len, "long lines");
    free(want);
    free(in);
    free(out);
    free(dir);
}

/* ---------------------------------------------------------------- golden */

Test(records, golden_cases)
{
    const char *td = getenv("TESTDATA");
    char dirname[2048];
    snprintf(dirname, sizeof dirname, "%s/records", td ? td : "testdata");
    DIR *d = opendir(dirname);
    cr_assert_not_null(d, "%s", dirname);
    char *scratch = scratch_dir();
    char *out = path_in(scratch, "out");
    int cases = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".args") != 0)
            continue;
        char base[4096], path[4200];
        e->d_name[n - 5] = '\0';
        snprintf(base, sizeof base, "%s/%s", dirname, e->d_name);
        snprintf(path, sizeof path, "%s.args", base);
        size_t alen;
        char *args = read_file(path, &alen);
        cr_assert_not_null(args);
        opts o;
        memset(&o, 0, sizeof o);
        int no = 0;
        for (char *line = strtok(args, "\n"); line && no < MAX_OPTS; line = strtok(NULL, "\n"))
            o.opt[no++] = line;
        gm_keyspec ks = spec_of(&o, 0);
        snprintf(path, sizeof path, "%s.in", base);
        char *names[] = { path };
        knobs k = { .output = out };
        for (int threads = 1; threads <= 2; threads++) {
            k.threads = threads;
            gm_status st;
            cr_assert_eq(records(GM_OP_SORT, &ks, &k, names, 1, &st), GM_OK, "%s: %s", base,
                         st.msg);
            char want[4200];
            snprintf(want, sizeof want, "%s.out", base);
            size_t wlen;
            char *w = read_file(want, &wlen);
            cr_assert_not_null(w, "%s", want);
            assert_same_file(out, w, wlen, base);
            free(w);
        }
        free(args);
        cases++;
    }
    closedir(d);
    cr_assert_gt(cases, 10);
    free(out);
    free(scratch);
}

/* ---------------------------------------------------------------- merge */

/* nfiles generated files, each sorted by sort with o; names and list filled. */
static void sorted_files(rng *r, const char *dir, const opts *o, int nfiles, int64_t lines,
                         char **names, char *list, size_t size)
{
    char sep = o->opt[0][1] == 't' ? o->opt[0][2] : ' ', sh[512];
    shell_opts(o, 0, sh, sizeof sh);
    list[0] = '\0';
    for (int f = 0; f < nfiles; f++) {
        char name[16], cmd[1024];
        snprintf(name, sizeof name, "m%d", f);
        names[f] = gen_file(r, dir, name, lines, sep, '\n');
        snprintf(cmd, sizeof cmd, "LC_ALL=C sort %s -o %s %s", sh, name, name);
        cmd_result res = run_sh(dir, cmd);
        cr_assert_eq(res.status, 0, "%s: %s", cmd, res.err);
        cmd_free(&res);
        snprintf(list + strlen(list), size - strlen(list), " %s", name);
    }
}

Test(records, merge_sorted_inputs, .timeout = 60)
{
    char *dir = scratch_dir();
    char *out = path_in(dir, "out"), *tmp = path_in(dir, "tmp");
    mkdir(tmp, 0700);
    rng r;
    rng_seed(&r, 11);
    for (size_t t = 0; t < NTABLE; t++) {
        const opts *o = &TABLE[t];
        char *names[5], list[256], sh[512], args[1024];
        int nfiles = t % 2 ? 5 : 3;
        sorted_files(&r, dir, o, nfiles, t % 3 ? 400 : 5000, names, list, sizeof list);
        shell_opts(o, 0, sh, sizeof sh);
        snprintf(args, sizeof args, "-m %s%s", sh, list);
        size_t want_len;
        char *want = sort_ref(dir, args, &want_len);
        gm_keyspec ks = spec_of(o, 0);
        /* all at once, and in batches of two through runs */
        for (int batch = 0; batch <= 2; batch += 2) {
            knobs k = { .output = out, .tmpdir = tmp, .batch = batch, .budget = 1 << 20 };
            gm_status st;
            cr_assert_eq(records(GM_OP_MERGE, &ks, &k, names, nfiles, &st), GM_OK, "%s: %s",
                         args, st.msg);
            assert_same_file(out, want, want_len, args);
            cr_assert_eq(dir_entries(tmp), 0, "temporary files left");
        }
        for (int f = 0; f < nfiles; f++)
            free(names[f]);
        free(want);
    }
    free(out);
    free(tmp);
    free(dir);
}

Test(records, merge_input_out_of_order_is_an_error)
{
    char *dir = scratch_dir();
    char *a = path_in(dir, "a"), *b = path_in(dir, "b"), *out = path_in(dir, "out");
    write_text(a, "1,x\n2,y\n");
    /* the disorder lies in a later block of b: blocks are at least 4 KiB */
    size_t cap = 64 << 10, len = 0;
    char *data = malloc(cap);
    for (int i = 0; i < 2000; i++)
        len += (size_t)sprintf(data + len, "%d,%d\n", i, i % 7);
    len += (size_t)sprintf(data + len, "5,late\n");
    write_file(b, data, len);
    free(data);
    write_text(out, "keep\n");
    opts o = { { "-t,", "-k1,1n" } };
    gm_keyspec ks = spec_of(&o, 0);
    knobs k = { .output = out, .budget = 64 << 10 };
    char *names[] = { a, b };
    gm_status st;
    cr_assert_eq(records(GM_OP_MERGE, &ks, &k, names, 2, &st), GM_EINPUT);
    char want[4200];
    snprintf(want, sizeof want, "%s:2001: disorder: 5,late", b);
    cr_assert_str_eq(st.msg, want);
    size_t l;
    char *kept = read_file(out, &l);
    cr_assert_str_eq(kept, "keep\n", "a failed run leaves -o's file as it was");
    free(kept);
    free(a);
    free(b);
    free(out);
    free(dir);
}

Test(records, merge_unique_keeps_the_first_input)
{
    char *dir = scratch_dir();
    char *a = path_in(dir, "a"), *b = path_in(dir, "b"), *out = path_in(dir, "out");
    write_text(a, "x,1\nb,2\na,3\n");
    write_text(b, "a,1\na,2\nz,2\nc,3\n");
    opts o = { { "-t,", "-k2,2n", "-u" } };
    gm_keyspec ks = spec_of(&o, 0);
    knobs k = { .output = out };
    char *names[] = { a, b };
    gm_status st;
    cr_assert_eq(records(GM_OP_MERGE, &ks, &k, names, 2, &st), GM_OK, "%s", st.msg);
    size_t want_len;
    char *want = sort_ref(dir, "-m -t, -k2,2n -u a b", &want_len);
    assert_same_file(out, want, want_len, "merge -u");
    free(want);
    free(a);
    free(b);
    free(out);
    free(dir);
}

/* ---------------------------------------------------------------- check */

/* sort -c's message for file, without "sort: ", or "" when sorted. */
static char *sort_check(const char *dir, const char *args, int *status)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "LC_ALL=C sort -c %s", args);
    cmd_result res = run_sh(dir, cmd);
    *status = res.status;
    char *msg = strdup(strncmp(res.err, "sort: ", 6) == 0 ? res.err + 6 : res.err);
    char *nl = strchr(msg, '\n');
    if (nl)
        *nl = '\0';
    cmd_free(&res);
    return msg;
}

Test(records, check_against_sort_c)
{
    char *dir = scratch_dir();
    rng r;
    rng_seed(&r, 21);
    for (size_t t = 0; t < NTABLE; t++) {
        const opts *o = &TABLE[t];
        char *names[1], list[64], sh[512], args[1024];
        for (int sorted = 0; sorted <= 1; sorted++) {
            if (sorted) {
                sorted_files(&r, dir, o, 1, 300, names, list, sizeof list);
            } else {
                char sep = o->opt[0][1] == 't' ? o->opt[0][2] : ' ';
                names[0] = gen_file(&r, dir, "m0", 300, sep, '\n');
            }
            shell_opts(o, 0, sh, sizeof sh);
            snprintf(args, sizeof args, "%s m0", sh);
            int status;
            char *want = sort_check(dir, args, &status);
            gm_keyspec ks = spec_of(o, 0);
            knobs k = { .threads = 2 };
            gm_status st;
            int rc = records(GM_OP_CHECK, &ks, &k, names, 1, &st);
            cr_assert_eq(rc, status ? GM_DISORDER : GM_OK, "check%s: %d against sort's %d (%s)",
                         args, rc, status, st.msg);
            if (status) {
                /* the same file and line; the text shown as the integer path shows it */
                const char *colon = strstr(want, ": disorder: ");
                cr_assert_not_null(colon, "%s", want);
                char where[4200];
                snprintf(where, sizeof where, "m0%.*s", (int)(colon - strchr(want, ':')),
                         strchr(want, ':'));
                char *mine = strstr(st.msg, "/m0:");
                cr_assert_not_null(mine, "%s", st.msg);
                cr_assert(strncmp(mine + 1, where, strlen(where)) == 0, "%s against sort's %s",
                          st.msg, want);
            }
            free(want);
            free(names[0]);
        }
    }
    free(dir);
}

Test(records, check_message_unique_and_quiet)
{
    char *dir = scratch_dir();
    char *a = path_in(dir, "a"), *b = path_in(dir, "b");
    write_text(a, "1 x\n2 y\n2 z\n");
    write_text(b, "1\n3\n2\n");
    opts o = { { "-k1,1n" } };
    gm_keyspec ks = spec_of(&o, 0);
    knobs k = { 0 };
    gm_status st;
    char *names[] = { a, b };
    cr_assert_eq(records(GM_OP_CHECK, &ks, &k, names, 2, &st), GM_DISORDER);
    char want[4200];
    snprintf(want, sizeof want, "%s:3: disorder: 2", b);
    cr_assert_str_eq(st.msg, want, "every input is checked, in order");
    /* -u: equal keys are a disorder */
    opts ou = { { "-k1,1n", "-u" } };
    gm_keyspec ksu = spec_of(&ou, 0);
    cr_assert_eq(records(GM_OP_CHECK, &ksu, &k, names, 1, &st), GM_DISORDER);
    snprintf(want, sizeof want, "%s:3: disorder: 2 z", a);
    cr_assert_str_eq(st.msg, want);
    /* -C: the status alone decides */
    k.quiet = 1;
    cr_assert_eq(records(GM_OP_CHECK, &ksu, &k, names, 1, &st), GM_DISORDER);
    cr_assert_eq(records(GM_OP_CHECK, &ks, &k, names, 1, &st), GM_OK);
    free(a);
    free(b);
    free(dir);
}

/* ---------------------------------------------------------------- files */

Test(records, output_onto_an_input)
{
    char *dir = scratch_dir();
    char *a = path_in(dir, "a"), *b = path_in(dir, "b"), *link2 = path_in(dir, "link");
    rng r;
    rng_seed(&r, 31);
    opts o = { { "-t,", "-k2,2n" } };
    gm_keyspec ks = spec_of(&o, 0);
    for (int in_place = 0; in_place <= 1; in_place++) {
        for (gm_op op = GM_OP_MERGE; op <= GM_OP_SORT; op++) {
            char *names[2], list[64];
            sorted_files(&r, dir, &o, 2, 3000, names, list, sizeof list);
            size_t want_len;
            char *want = sort_ref(dir, op == GM_OP_MERGE ? "-m -t, -k2,2n m0 m1" : "-t, -k2,2n m0 m1",
                                  &want_len);
            unlink(link2);
            if (in_place) /* a second link: the output is written in place */
                cr_assert_eq(link(names[1], link2), 0);
            knobs k = { .output = names[1], .budget = 64 << 10 };
            gm_status st;
            cr_assert_eq(records(op, &ks, &k, names, 2, &st), GM_OK, "%s", st.msg);
            assert_same_file(names[1], want, want_len, in_place ? "in place" : "replaced");
            free(want);
            free(names[0]);
            free(names[1]);
        }
    }
    free(a);
    free(b);
    free(link2);
    free(dir);
}

Test(records, standard_input)
{
    char *dir = scratch_dir();
    char *a = path_in(dir, "a"), *in = path_in(dir, "in"), *out = path_in(dir, "out");
    write_text(a, "b 2\na 9\n");
    write_text(in, "c 3\nd 1\ne 2");
    int fd = open(in, O_RDONLY);
    cr_assert(fd >= 0);
    cr_assert_eq(dup2(fd, STDIN_FILENO), STDIN_FILENO);
    close(fd);
    opts o = { { "-k2,2n" } };
    gm_keyspec ks = spec_of(&o, 0);
    knobs k = { .output = out };
    char *names[] = { "-", a, "-" }; /* a second "-" reads what the first left: nothing */
    gm_status st;
    cr_assert_eq(records(GM_OP_SORT, &ks, &k, names, 3, &st), GM_OK, "%s", st.msg);
    size_t len;
    char *got = read_file(out, &len);
    cr_assert_str_eq(got, "d 1\nb 2\ne 2\nc 3\na 9\n");
    free(got);
    free(a);
    free(in);
    free(out);
    free(dir);
}

Test(records, missing_input_leaves_the_output)
{
    char *dir = scratch_dir();
    char *a = path_in(dir, "a"), *missing = path_in(dir, "missing"), *out = path_in(dir, "out");
    write_text(a, "1\n");
    write_text(out, "keep\n");
    opts o = { { "-n" } };
    gm_keyspec ks = spec_of(&o, 0);
    knobs k = { .output = out };
    char *names[] = { a, missing };
    for (gm_op op = GM_OP_MERGE; op <= GM_OP_CHECK; op++) {
        gm_status st;
        cr_assert_eq(records(op, &ks, &k, names, 2, &st), GM_EIO);
        char want[4200];
        snprintf(want, sizeof want, "cannot read: %s: No such file or directory", missing);
        cr_assert_str_eq(st.msg, want);
        size_t len;
        char *kept = read_file(out, &len);
        cr_assert_str_eq(kept, "keep\n");
        free(kept);
    }
    free(a);
    free(missing);
    free(out);
    free(dir);
}

/* ---------------------------------------------------------------- streaming */

Test(records, merge_output_begins_before_the_input_ends, .timeout = 60)
{
    /* 16 MB of sorted lines through a pipe that then stays open a while: the
     * merge's output has begun (standard output is a file, written as it goes)
     * before the pipe ends */
    char *dir = scratch_dir();
    char *in = path_in(dir, "in");
    size_t cap = 17 << 20, len = 0;
    char *data = malloc(cap);
    for (int i = 0; len < (16u << 20); i++)
        len += (size_t)sprintf(data + len, "%08d,%d,xxxxxxxxxxxxxxxx\n", i, i / 4);
    write_file(in, data, len);
    free(data);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "(cat in; sleep 2; wc -c < out > seen) | %s -m -t, -k2,2n - > out; wc -c < out",
             gpumerge_path());
    cmd_result res = run_sh(dir, cmd);
    cr_assert_eq(res.status, 0, "%s", res.err);
    cr_assert_eq(strtoull(res.out, NULL, 10), len, "the whole output: %s", res.out);
    char *seen_path = path_in(dir, "seen");
    size_t l;
    char *seen = read_file(seen_path, &l);
    cr_assert_not_null(seen);
    cr_assert_gt(strtoull(seen, NULL, 10), 0, "nothing was written before the input ended");
    free(seen);
    free(seen_path);
    cmd_free(&res);
    free(in);
    free(dir);
}

/* ---------------------------------------------------------------- descriptors */

Test(records, any_number_of_inputs_and_runs_under_a_small_descriptor_limit, .timeout = 60)
{
    /* 200 inputs and more runs than descriptors: inputs beyond a pass and every
     * run not being written or read are closed, and opened again by name */
    char *dir = scratch_dir();
    char *out = path_in(dir, "out"), *tmp = path_in(dir, "tmp");
    mkdir(tmp, 0700);
    rng r;
    rng_seed(&r, 61);
    opts o = { { "-t,", "-k2,2n" } };
    char *names[200], list[200 * 8];
    list[0] = '\0';
    for (int f = 0; f < 200; f++) {
        char name[16];
        snprintf(name, sizeof name, "s%03d", f);
        names[f] = gen_file(&r, dir, name, 40, ',', '\n');
        snprintf(list + strlen(list), sizeof list - strlen(list), " %s", name);
    }
    size_t want_len, merged_len;
    char args[2048];
    snprintf(args, sizeof args, "-t, -k2,2n%s", list);
    char *want = sort_ref(dir, args, &want_len);
    for (int f = 0; f < 200; f++) { /* each input sorted, for the merge */
        char cmd[256];
        snprintf(cmd, sizeof cmd, "LC_ALL=C sort -t, -k2,2n -o s%03d s%03d", f, f);
        cmd_result res = run_sh(dir, cmd);
        cmd_free(&res);
    }
    snprintf(args, sizeof args, "-m -t, -k2,2n%s", list);
    char *merged = sort_ref(dir, args, &merged_len);
    struct rlimit rl = { 16, 16 };
    cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
    gm_keyspec ks = spec_of(&o, 0);
    knobs k = { .output = out, .tmpdir = tmp, .budget = 64 << 10 };
    gm_status st;
    cr_assert_eq(records(GM_OP_MERGE, &ks, &k, names, 200, &st), GM_OK, "%s", st.msg);
    assert_same_file(out, merged, merged_len, "merge under ulimit -n 16");
    cr_assert_eq(records(GM_OP_SORT, &ks, &k, names, 200, &st), GM_OK, "%s", st.msg);
    assert_same_file(out, want, want_len, "sort under ulimit -n 16");
    cr_assert_eq(records(GM_OP_CHECK, &ks, &k, names, 200, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(dir_entries(tmp), 0, "temporary files left");
    for (int f = 0; f < 200; f++)
        free(names[f]);
    free(want);
    free(merged);
    free(out);
    free(tmp);
    free(dir);
}
