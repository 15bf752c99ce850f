/*
 * test_records.c - the records path (core/records/records.h) called directly, and the
 * helpers its suite's files share (records_cases.h): the table of option sets,
 * runs of gm_records_run with a few knobs, generated inputs and LC_ALL=C sort's
 * answers. Here: the golden edge cases in testdata/records (blank lines, CR, NUL
 * inside lines, high bytes, a line of megabytes, empty inputs, several inputs, a
 * missing final newline), sorted on one thread and on two.
 *
 * The other files: records_sort.c (sort in memory, small inputs on one thread and
 * large ones on several, which take the parallel radix sort and its combined
 * keys; under a small budget with several runs and merge passes; -z; lines of
 * megabytes), records_split.c (the split of a block into records against a
 * line-by-line reading, and -t -kN,Nn's quick prefix against the general one),
 * records_merge.c (merge of sorted inputs, a disordered merge input, -u, output
 * begun before the input ends), records_check.c (check, sorted and not, its
 * message, -u's strictness, -C) and records_files.c (-o onto an input, replaced
 * and written in place through a second link; standard input; a missing input;
 * many inputs and runs under a small descriptor limit).
 *
 * Inputs are generated (fields separated by commas, spaces or tabs; integers,
 * signs, decimals, long numbers, units, non-numbers, empty fields and lines, many
 * ties) and every output is compared byte for byte with `LC_ALL=C sort` run with
 * the same options.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/device/engine.h"
#include "../core/records/records.h"
#include "../core/base/util.h"
#include "helpers.h"
#include "records_cases.h"
#include "specs.h"

/* ---------------------------------------------------------------- helpers */

const opts TABLE[] = {
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
const size_t NTABLE = sizeof TABLE / sizeof TABLE[0];

char said[4096];

static void collect(void *ctx, gm_message kind, const char *text)
{
    (void)ctx;
    (void)kind;
    size_t l = strlen(said);
    snprintf(said + l, sizeof said - l, "%s\n", text);
}

gm_keyspec spec_of(const opts *o, int zero)
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
void shell_opts(const opts *o, int zero, char *buf, size_t size)
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

int records(gm_op op, const gm_keyspec *ks, const knobs *k, char **names, int n,
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
    int rc = gm_records_run(op, &c, NULL, names, n, NULL, st);
    gm_close_later_join(); /* a replaced output's release, as gm_run ends */
    return rc;
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
char *gen_file(rng *r, const char *dir, const char *name, int64_t n, char sep, char eol)
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
char *sort_ref(const char *dir, const char *args, size_t *len)
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

void assert_same_file(const char *path, const char *want, size_t want_len,
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

int dir_entries(const char *dir)
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

/* nfiles generated files, each sorted by sort with o; names and list filled. */
void sorted_files(rng *r, const char *dir, const opts *o, int nfiles, int64_t lines,
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

/* ---------------------------------------------------------------- golden */

/* The device makes the prefixes of bytes, -f -d -i, -M, -n, -h and -V on a key's
 * own bytes; -g, -R and the numbers and versions of a folded or skipping copy
 * stay on the CPU, and so does every merge and check. */
Test(records, gpu_takes)
{
    static const struct { const char *args; int gpu; } cases[] = {
        { "", 1 }, { "-V", 1 }, { "-t, -k2V", 1 }, { "-V -r", 1 }, { "-M", 1 }, { "-h", 1 },
        { "-d", 1 }, { "-n", 1 }, { "-Vf", 0 }, { "-t, -k2Vd", 0 }, { "-k1R", 0 }, { "-g", 0 },
        { "-Mi", 0 }, { "-nf", 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gm_keyspec ks = spec_from_as(cases[i].args, 1, NULL);
        cr_expect_eq(gm_records_gpu_takes(GM_OP_SORT, &ks), cases[i].gpu, "gpusort %s",
                     cases[i].args);
        cr_expect_not(gm_records_gpu_takes(GM_OP_MERGE, &ks), "gpusort -m %s", cases[i].args);
    }
}

/* --device=auto leaves to the CPU a first key by -V behind which other keys
 * follow, and gives the GPU the rest of what it takes. */
Test(records, auto_device_choice)
{
    static const struct { const char *args; int gpu; } cases[] = {
        { "", 1 }, { "-r", 1 }, { "-u", 1 }, { "-M", 1 }, { "-k3,3f", 1 }, { "-t, -k2f", 1 },
        { "-b", 1 }, { "-f", 1 }, { "-f -r", 1 }, { "-f -k1", 1 }, { "-t, -k1f", 1 },
        { "-d", 1 }, { "-i -r", 1 }, { "-df", 1 }, { "-t, -k1d", 1 }, { "-V", 1 },
        { "-V -r", 1 }, { "-t, -k2V -s", 1 }, { "-t, -k3V -k1,1", 0 }, { "-t, -k2,2V -k1n", 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gm_keyspec ks = spec_from_as(cases[i].args, 1, NULL);
        cr_expect_eq(gm_records_gpu_auto(&ks), cases[i].gpu, "gpusort %s", cases[i].args);
    }
}

/* --device=auto's records sizes come from the cost model's rates: the estimates
 * meet where the H100's runs met the CPU's 16 cores (near 1.7 GB of regular
 * files, -t, -k2,2n); fewer threads give the GPU smaller sorts, more than the
 * memory's bandwidth pays change nothing, and chunks staged through the host
 * need more bytes than a sort in device memory. */
Test(records, auto_sizes_from_the_cost_model)
{
    uint64_t r16 = gm_engine_records_least(16, 1), c16 = gm_engine_records_least(16, 0);
    cr_expect(r16 > 1400000000u && r16 < 1800000000u, "16 threads, regular files: %llu",
              (unsigned long long)r16);
    cr_expect(c16 > r16 && c16 < 3500000000u, "16 threads, chunks: %llu",
              (unsigned long long)c16);
    cr_expect_eq(gm_engine_records_least(64, 1), r16);
    uint64_t prev = 0;
    for (int t = 1; t <= 16; t++) {
        uint64_t r = gm_engine_records_least(t, 1);
        cr_expect(r >= prev, "%d threads: %llu after %llu", t, (unsigned long long)r,
                  (unsigned long long)prev);
        cr_expect(gm_engine_records_least(t, 0) >= r, "%d threads", t);
        prev = r;
    }
    cr_expect_lt(gm_engine_records_least(2, 1), 500000000u);
}

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
