/*
 * test_stream.c - the streaming data plane: merge of endless inputs, standard input
 * read from its offset, "- -", the external sort around the fan-in (1, fan-in,
 * fan-in + 1, fan-in squared + 1 runs) with -r, -u, int64 extremes, duplicates
 * across runs and int64 keys first met in a late block; temporary files gone after
 * success, error and signals; a full temporary directory; any number of inputs
 * and runs under ulimit -n 12 (against sort), a run's descriptor held only while
 * it is read; a file truncated while read; block boundaries (a block ending
 * mid-line, CRLF split, errors in a late block with their file:line); when CUDA's
 * start-up begins (never for auto on small inputs); -v's device line and stages.
 *
 * Most cases run in-process through gm_run with a gm_config filled in (the -S,
 * -T and --batch-size fields), checked against qsort; the pipe and signal cases
 * run the binary ($GPUMERGE) or a forked child.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/gm.h"
#include "../core/input.h"
#include "../core/run.h"
#include "../core/stream.h"
#include "../core/util.h"
#include "../cuda/testing.h"
#include "helpers.h"

/* ---------------------------------------------------------------- helpers */

/* The -v lines of the last run, joined. */
static char said[8192];
static int progress_lines;
static char last_progress[512];

static void collect(void *ctx, gm_message kind, const char *text)
{
    (void)ctx;
    if (kind == GM_MSG_PROGRESS) {
        progress_lines++;
        snprintf(last_progress, sizeof last_progress, "%s", text);
        return;
    }
    size_t l = strlen(said);
    snprintf(said + l, sizeof said - l, "%s\n", text);
}

static gm_config config(void)
{
    gm_config c;
    memset(&c, 0, sizeof c);
    c.device = GM_DEVICE_CPU;
    c.verbose = 1;
    c.message = collect;
    c.strict = 1; /* the integer path's own checking (test_lines: the records path) */
    return c;
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static void rm_rf(const char *dir)
{
    char *cmd;
    if (asprintf(&cmd, "rm -rf '%s'", dir) < 0)
        abort();
    if (system(cmd) != 0)
        abort();
    free(cmd);
}

/* The expected text of sorting v (n keys): order +1/-1, unique. Sorts v. */
static char *expected(int64_t *v, int64_t n, int order, int unique)
{
    ref_sort_i64(v, n, order);
    char *t = malloc((size_t)n * 21 + 1), *p = t;
    for (int64_t i = 0; i < n; i++) {
        if (unique && i > 0 && v[i] == v[i - 1])
            continue;
        p += sprintf(p, "%lld\n", (long long)v[i]);
    }
    *p = '\0';
    return t;
}

/* Runs op in-process on the files, output to dir/out; returns gm_run's code and
 * the output in *out (malloc'd). */
static int run_op(gm_op op, gm_config *c, const char *dir, char **names, int n, char **out,
                  gm_status *st)
{
    char *path = path_in(dir, "out");
    c->output = path;
    said[0] = '\0';
    int rc = gm_run(op, c, names, n, st);
    *out = read_file(path, NULL);
    unlink(path);
    free(path);
    c->output = NULL;
    return rc;
}

/* Numbers from the -v line "runs     R temporary, P merge passes over them". */
static void runs_and_passes(int *runs, int *passes)
{
    const char *p = strstr(said, "runs     ");
    cr_assert_not_null(p, "no runs line in: %s", said);
    cr_assert_eq(sscanf(p, "runs %d temporary, %d merge pass", runs, passes), 2, "%s", said);
}

/* ---------------------------------------------------------------- external sort */

enum shape { UNIFORM, DUPLICATES, EXTREMES, LATE_WIDE };

static int64_t *keys_of(enum shape sh, int64_t n, uint64_t seed)
{
    rng r;
    rng_seed(&r, seed);
    int64_t *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++) {
        switch (sh) {
        case UNIFORM: v[i] = rng_range(&r, INT32_MIN, INT32_MAX); break;
        case DUPLICATES: v[i] = rng_range(&r, -20, 20); break;
        case EXTREMES: {
            int k = (int)rng_range(&r, 0, 3);
            v[i] = k == 0 ? INT64_MIN : k == 1 ? INT64_MAX : rng_range(&r, INT64_MIN / 2, INT64_MAX / 2);
            break;
        }
        case LATE_WIDE: v[i] = i == n - 1 ? 5000000000LL : rng_range(&r, -1000000, 1000000); break;
        }
    }
    return v;
}

/* Sorts n keys of the shape with a budget giving `runs` runs of int32 (or int64)
 * keys, fan-in 4, and checks the output and the counts. */
static void external_sort(int want_runs, int want_passes, enum shape sh, int reverse, int unique)
{
    const int fan_in = 4;
    size_t budget = 64 << 10;
    gm_width w = sh == EXTREMES ? GM_I64 : GM_I32;
    int64_t chunk = gm_sort_chunk_keys(budget, w);
    int64_t n = chunk * (want_runs - 1) + 1 + (want_runs > 1 ? chunk / 2 : 0);
    if (sh == LATE_WIDE && want_runs > 1)
        n = chunk * (want_runs - 1) + 1; /* the last run holds the wide key alone */
    int64_t *v = keys_of(sh, n, (uint64_t)want_runs * 7 + sh);
    char *dir = scratch_dir(), *tmp = path_in(dir, "tmp"), *in = path_in(dir, "in");
    mkdir(tmp, 0700);
    write_keys(in, v, n);
    gm_config c = config();
    c.buffer_size = budget;
    c.batch_size = fan_in;
    c.tmpdir = tmp;
    c.reverse = reverse;
    c.unique = unique;
    char *out;
    gm_status st;
    int rc = run_op(GM_OP_SORT, &c, dir, &in, 1, &out, &st);
    cr_assert_eq(rc, GM_OK, "%s", st.msg);
    char *want = expected(v, n, reverse ? -1 : 1, unique);
    cr_assert(strcmp(out, want) == 0, "output differs (runs %d, shape %d)", want_runs, sh);
    int runs, passes;
    runs_and_passes(&runs, &passes);
    if (sh != LATE_WIDE) {
        cr_assert_eq(runs, want_runs == 1 ? 0 : want_runs, "runs: %s", said);
        cr_assert_eq(passes, want_passes, "passes: %s", said);
    }
    cr_assert_eq(entries(tmp), 0, "temporary files left behind");
    free(want);
    free(out);
    free(v);
    rm_rf(dir);
    free(dir);
    free(tmp);
    free(in);
}

Test(stream, external_sort_run_counts_around_the_fan_in, .timeout = 120)
{
    external_sort(1, 0, UNIFORM, 0, 0);          /* in memory: no runs */
    external_sort(2, 1, UNIFORM, 0, 0);
    external_sort(4, 1, UNIFORM, 0, 0);          /* fan-in */
    external_sort(5, 2, UNIFORM, 1, 0);          /* fan-in + 1 */
    external_sort(17, 3, UNIFORM, 0, 1);         /* fan-in squared + 1 */
}

Test(stream, external_sort_reverse_unique_extremes_duplicates, .timeout = 120)
{
    external_sort(5, 2, DUPLICATES, 0, 1);
    external_sort(5, 2, DUPLICATES, 1, 0);
    external_sort(6, 2, EXTREMES, 1, 1);
    external_sort(6, 2, EXTREMES, 0, 0);
}

Test(stream, int64_key_in_the_last_block, .timeout = 60)
{
    external_sort(1, 0, LATE_WIDE, 0, 0);
    external_sort(3, 1, LATE_WIDE, 1, 0);
    /* in memory with small blocks, and a merge */
    gm_input_test_block_size(4096);
    int64_t n = 20000;
    int64_t *v = keys_of(LATE_WIDE, n, 3);
    char *dir = scratch_dir(), *in = path_in(dir, "in");
    write_keys(in, v, n);
    gm_config c = config();
    char *out;
    gm_status st;
    cr_assert_eq(run_op(GM_OP_SORT, &c, dir, &in, 1, &out, &st), GM_OK, "%s", st.msg);
    char *want = expected(v, n, 1, 0);
    cr_assert(strcmp(out, want) == 0);
    cr_assert(strstr(said, "int64"), "%s", said);
    free(out);
    /* the sorted keys as a merge input, beside a narrow one */
    char *names[2] = { in, path_in(dir, "small") };
    write_keys(in, v, n);
    write_text(names[1], "-7\n0\n3\n");
    cr_assert_eq(run_op(GM_OP_MERGE, &c, dir, names, 2, &out, &st), GM_OK, "%s", st.msg);
    int64_t *all = malloc((size_t)(n + 3) * sizeof *all);
    memcpy(all, v, (size_t)n * sizeof *v);
    all[n] = -7;
    all[n + 1] = 0;
    all[n + 2] = 3;
    char *want2 = expected(all, n + 3, 1, 0);
    cr_assert(strcmp(out, want2) == 0);
    free(out);
    free(want);
    free(want2);
    free(all);
    free(v);
    free(names[1]);
    rm_rf(dir);
    free(dir);
    free(in);
}

Test(stream, temporary_files_removed_after_an_error, .timeout = 60)
{
    size_t budget = 64 << 10;
    int64_t n = gm_sort_chunk_keys(budget, GM_I32) * 5;
    int64_t *v = keys_of(UNIFORM, n, 9);
    char *dir = scratch_dir(), *tmp = path_in(dir, "tmp"), *in = path_in(dir, "in");
    mkdir(tmp, 0700);
    write_keys(in, v, n);
    FILE *f = fopen(in, "a");
    fputs("12x\n", f);
    fclose(f);
    gm_config c = config();
    c.buffer_size = budget;
    c.tmpdir = tmp;
    char *out;
    gm_status st;
    int rc = run_op(GM_OP_SORT, &c, dir, &in, 1, &out, &st);
    cr_assert_eq(rc, GM_EINPUT);
    char want[1024];
    snprintf(want, sizeof want, "%s:%lld: not an integer: '12x'", in, (long long)n + 1);
    cr_assert_str_eq(st.msg, want);
    cr_assert_null(out, "no output file");
    cr_assert_eq(entries(tmp), 0, "temporary files left behind");
    free(v);
    rm_rf(dir);
    free(dir);
    free(tmp);
    free(in);
}

/* A child sorts a pipe with a tiny budget; once runs exist the parent signals it. */
static void killed_while_spilling(int sig)
{
    char *dir = scratch_dir(), *tmp = path_in(dir, "tmp"), *out = path_in(dir, "out");
    mkdir(tmp, 0700);
    write_text(out, "precious\n");
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(fds[1]);
        dup2(fds[0], STDIN_FILENO);
        gm_config c = config();
        c.verbose = 0;
        c.buffer_size = 64 << 10;
        c.tmpdir = tmp;
        c.output = out;
        gm_status st;
        _exit(gm_run(GM_OP_SORT, &c, NULL, 0, &st));
    }
    close(fds[0]);
    signal(SIGPIPE, SIG_IGN);
    char line[32];
    int sent = 0;
    for (int i = 0; i < 2000000 && entries(tmp) < 2; i++) {
        int len = snprintf(line, sizeof line, "%d\n", (i * 7919) % 100003);
        if (write(fds[1], line, (size_t)len) != len)
            break;
        sent++;
    }
    cr_assert_geq(entries(tmp), 2, "no runs were spilled");
    kill(pid, sig);
    int status;
    waitpid(pid, &status, 0);
    close(fds[1]);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == sig, "status %d", status);
    cr_assert_eq(entries(tmp), 0, "temporary files left behind after signal %d", sig);
    cr_assert_eq(entries(dir), 2, "the -o temporary file is left behind");
    char *text = read_file(out, NULL);
    cr_assert_str_eq(text, "precious\n");
    free(text);
    free(out);
    rm_rf(dir);
    free(dir);
    free(tmp);
}

Test(stream, temporary_files_removed_on_sigint, .timeout = 60)
{
    killed_while_spilling(SIGINT);
}

Test(stream, temporary_files_removed_on_sigterm, .timeout = 60)
{
    killed_while_spilling(SIGTERM);
}

Test(stream, full_temporary_directory, .timeout = 60)
{
    if (geteuid() != 0)
        cr_skip_test("not root: cannot mount a small tmpfs");
    char *dir = scratch_dir(), *tmp = path_in(dir, "tmp"), *in = path_in(dir, "in");
    mkdir(tmp, 0700);
    if (mount("tmpfs", tmp, "tmpfs", 0, "size=128k") != 0)
        cr_skip_test("cannot mount a tmpfs here");
    size_t budget = 256 << 10;
    int64_t n = gm_sort_chunk_keys(budget, GM_I32) * 8; /* 512 KB of runs */
    int64_t *v = keys_of(UNIFORM, n, 11);
    write_keys(in, v, n);
    gm_config c = config();
    c.buffer_size = budget;
    c.tmpdir = tmp;
    char *out;
    gm_status st;
    int rc = run_op(GM_OP_SORT, &c, dir, &in, 1, &out, &st);
    int left = entries(tmp);
    umount(tmp);
    cr_assert_eq(rc, GM_EIO);
    cr_assert(strncmp(st.msg, "write failed: ", 14) == 0 && strstr(st.msg, tmp) &&
                  strstr(st.msg, ": No space left on device"),
              "%s", st.msg);
    cr_assert_null(out, "no output file");
    cr_assert_eq(left, 0, "temporary files left behind");
    free(v);
    rm_rf(dir);
    free(dir);
    free(tmp);
    free(in);
}

/* ---------------------------------------------------------------- merge */

static void write_sorted(const char *path, int64_t n, uint64_t seed, int64_t **all, int64_t *at)
{
    int64_t *v = keys_of(DUPLICATES, n, seed);
    for (int64_t i = 0; i < n; i++)
        v[i] *= 1000 + (int64_t)seed;
    ref_sort_i64(v, n, 1);
    write_keys(path, v, n);
    memcpy(*all + *at, v, (size_t)n * sizeof *v);
    *at += n;
    free(v);
}

Test(stream, merge_batches_past_the_fan_in, .timeout = 60)
{
    gm_input_test_block_size(1024);
    char *dir = scratch_dir(), *tmp = path_in(dir, "tmp");
    mkdir(tmp, 0700);
    enum { K = 37 };
    char *names[K];
    int64_t *all = malloc(K * 3000 * sizeof *all), at = 0;
    for (int i = 0; i < K; i++) {
        char name[16];
        snprintf(name, sizeof name, "in%d", i);
        names[i] = path_in(dir, name);
        write_sorted(names[i], i * 80, (uint64_t)i, &all, &at);
    }
    for (int unique = 0; unique < 2; unique++) {
        gm_config c = config();
        c.batch_size = 4;
        c.tmpdir = tmp;
        c.unique = unique;
        char *out;
        gm_status st;
        cr_assert_eq(run_op(GM_OP_MERGE, &c, dir, names, K, &out, &st), GM_OK, "%s", st.msg);
        char *want = expected(all, at, 1, unique);
        cr_assert(strcmp(out, want) == 0, "unique %d", unique);
        int runs, passes;
        runs_and_passes(&runs, &passes);
        cr_assert_eq(runs, 10, "%s", said);  /* 37 inputs in batches of 4 */
        cr_assert_eq(passes, 3, "%s", said); /* 10 runs -> 3 -> output */
        cr_assert_eq(entries(tmp), 0);
        free(want);
        free(out);
    }
    for (int i = 0; i < K; i++)
        free(names[i]);
    free(all);
    rm_rf(dir);
    free(dir);
    free(tmp);
}

/* More inputs than file descriptors: the binary under ulimit -n. */
Test(stream, more_inputs_than_open_files, .timeout = 120)
{
    char *dir = scratch_dir();
    enum { K = 300 };
    int64_t *all = malloc(K * 200 * sizeof *all), at = 0;
    char *args = malloc(K * 16), *p = args;
    for (int i = 0; i < K; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%d", i);
        char *path = path_in(dir, name);
        write_sorted(path, 1 + i % 50, (uint64_t)i, &all, &at);
        p += sprintf(p, " %s", name);
        free(path);
    }
    char *want = expected(all, at, 1, 0);
    const char *ops[] = { "merge", "sort", "check" };
    for (int o = 0; o < 3; o++) {
        char *cmd;
        if (asprintf(&cmd, "ulimit -n 12 && TMPDIR=. '%s' %s%s", gpumerge_path(), ops[o], args) < 0)
            abort();
        cmd_result r = run_sh(dir, cmd);
        if (o < 2) {
            cr_assert_eq(r.status, 0, "%s: %s", ops[o], r.err);
            cr_assert(strcmp(r.out, want) == 0, "%s output differs", ops[o]);
        } else {
            cr_assert_eq(r.status, 0, "check: %s", r.err);
        }
        cmd_free(&r);
        free(cmd);
    }
    cr_assert_eq(entries(dir), K, "temporary files left behind");
    free(want);
    free(all);
    free(args);
    rm_rf(dir);
    free(dir);
}

/* The cases of the descriptor limit: under ulimit -n 12, 5000 inputs merged, a
 * sort spilling hundreds of runs, both with --batch-size=2 too, and "-" or a pipe
 * among files (a pipe is not closed before its turn: it would lose what it holds);
 * each output against sort's under the same limit. */
Test(stream, any_number_of_inputs_and_runs_under_ulimit_12, .timeout = 240)
{
    char *dir = scratch_dir(), *tmp = path_in(dir, "tmp");
    mkdir(tmp, 0700);
    rng r;
    rng_seed(&r, 12);
    for (int i = 0; i < 5000; i++) {
        char name[16];
        snprintf(name, sizeof name, "in%04d", i);
        random_file(&r, dir, name, rng_range(&r, 0, 3), 0, 1);
    }
    /* 300 chunks of 64K's sort (gm_sort_chunk_keys), less a few keys */
    random_file(&r, dir, "big", 300 * gm_sort_chunk_keys(64 << 10, GM_I32) - 7, 0, 0);
    /* a pipe among the files, fed by a writer that waits for its reader */
    const char *fifo = "rm -f p; mkfifo p; (seq 1 7 7000 >p &) && ";
    const struct {
        const char *pre, *gpumerge, *sort;
        int min_runs; /* the runs -v must report */
    } cases[] = {
        { "", "merge in*", "-m -n in*", 5000 / 16 },
        { "", "merge --batch-size=2 in*", "-m -n --batch-size=2 in*", 2500 },
        { "", "merge in0* - in4* <in2000", "-m -n in0* - in4* <in2000", 2000 / 16 },
        { fifo, "merge in0* p in1*", "-m -n in0* p in1*", 2000 / 16 },
        { "", "-n -S 64K big", "-n big", 300 },
        { "", "-n -S 64K --batch-size=2 big", "-n big", 300 },
        { "", "-n -S 64K in1* - big <in2000", "-n in1* - big <in2000", 300 },
        { fifo, "-n -S 64K in1* p big", "-n in1* p big", 300 },
    };
    /* the integer path (--strict), then the default, whose merges in batches are
     * the records path's */
    for (size_t k = 0; k < 2 * (sizeof cases / sizeof cases[0]); k++) {
        size_t c = k / 2;
        int strict = k % 2 == 0;
        char *cmd;
        if (asprintf(&cmd, "%sulimit -n 12 && TMPDIR=tmp '%s' -v %s %s", cases[c].pre,
                     gpumerge_path(), strict ? "--strict" : "", cases[c].gpumerge) < 0)
            abort();
        cmd_result g = run_sh(dir, cmd);
        free(cmd);
        if (asprintf(&cmd, "%sulimit -n 12 && LC_ALL=C TMPDIR=tmp sort %s", cases[c].pre,
                     cases[c].sort) < 0)
            abort();
        cmd_result want = run_sh(dir, cmd);
        free(cmd);
        cr_assert_eq(want.status, 0, "sort %s: %s", cases[c].sort, want.err);
        cr_assert_eq(g.status, 0, "%s: %s", cases[c].gpumerge, g.err);
        cr_assert(g.out_len == want.out_len && memcmp(g.out, want.out, g.out_len) == 0,
                  "%s: output differs from sort's", cases[c].gpumerge);
        const char *runs = strstr(g.err, "gpumerge: runs ");
        cr_assert(!strict || (runs && atoi(runs + 15) >= cases[c].min_runs),
                  "%s: fewer runs than %d: %s", cases[c].gpumerge, cases[c].min_runs, g.err);
        cr_assert_eq(entries(tmp), 0, "%s: temporary files left behind", cases[c].gpumerge);
        cmd_free(&g);
        cmd_free(&want);
    }
    rm_rf(dir);
    free(dir);
    free(tmp);
}

/* Where CUDA may start (a driver loaded), a merge keeps CUDA's start-up
 * descriptors (GM_GPU_START_FDS) free beside its fan-in: under ulimit -n 50, 300
 * inputs go through smaller batches, so more runs, than without a driver. */
Test(stream, a_merge_leaves_cuda_its_descriptors, .timeout = 60)
{
    if (!getenv("GPUMERGE_FORCED"))
        cr_skip_test("GPUMERGE_FORCED (make builds it) not set");
    if (access("/dev/nvidiactl", F_OK) == 0) /* both runs would see a driver */
        cr_skip_test("an NVIDIA driver is loaded here: no run without one to compare");
    char *dir = scratch_dir();
    rng r;
    rng_seed(&r, 50);
    for (int i = 0; i < 300; i++) {
        char name[16];
        snprintf(name, sizeof name, "in%03d", i);
        random_file(&r, dir, name, 2, 0, 1);
    }
    int runs[2];
    char *out[2];
    for (int driver = 0; driver < 2; driver++) {
        char *cmd;
        if (asprintf(&cmd, "ulimit -n 50 && TMPDIR=. \"$GPUMERGE_FORCED\" %s merge --strict -v in*",
                     driver ? "--driver-loaded" : "") < 0)
            abort();
        cmd_result g = run_sh(dir, cmd);
        free(cmd);
        cr_assert_eq(g.status, 0, "%s", g.err);
        const char *p = strstr(g.err, "gpumerge: runs ");
        cr_assert_not_null(p, "%s", g.err);
        runs[driver] = atoi(p + 15);
        out[driver] = strdup(g.out);
        cmd_free(&g);
    }
    cr_assert_gt(runs[1], runs[0], "runs with a driver %d, without %d", runs[1], runs[0]);
    cr_assert_str_eq(out[1], out[0]);
    free(out[0]);
    free(out[1]);
    rm_rf(dir);
    free(dir);
}

/* A run holds a descriptor only while it is written or read: none once written,
 * one from its first read to its end; a run replaced between passes is an error. */
Test(stream, a_run_holds_a_descriptor_only_while_read)
{
    char *dir = scratch_dir();
    int64_t v[3000];
    for (int i = 0; i < 3000; i++)
        v[i] = i * 3;
    gm_keys keys = { v, 3000, GM_I64 };
    gm_status st;
    gm_runfile run;
    cr_assert_eq(gm_run_create(&run, dir, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(gm_run_put(&run, &keys, &st), GM_OK, "%s", st.msg);
    int room = gm_fd_room();
    cr_assert_eq(gm_run_rewind(&run, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(run.f.fd, -1);
    cr_assert_eq(gm_fd_room(), room + 1, "the written run keeps its descriptor");
    gm_keybuf kb = { NULL, 0, 0, 0, GM_I64 };
    cr_assert_eq(gm_run_read(&run, &kb, 1000, &st), GM_OK, "%s", st.msg);
    cr_assert_geq(run.f.fd, 0);
    cr_assert_eq(gm_fd_room(), room, "a run being read holds one descriptor");
    while (!run.eof)
        cr_assert_eq(gm_run_read(&run, &kb, 1000, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(run.f.fd, -1, "a run read to its end keeps its descriptor");
    cr_assert_eq(kb.n, 3000);
    for (int64_t i = 0; i < kb.n; i++)
        cr_assert_eq(gm_keybuf_get(&kb, i), v[i]);
    char *path = strdup(run.f.path);
    gm_run_remove(&run);

    /* the same name, another file: refused by name */
    cr_assert_eq(gm_run_create(&run, dir, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(gm_run_put(&run, &keys, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(gm_run_rewind(&run, &st), GM_OK, "%s", st.msg);
    char *other = path_in(dir, "other");
    write_file(other, (const char *)v, sizeof v);
    cr_assert_eq(rename(other, run.f.path), 0);
    kb.n = 0;
    cr_assert_eq(gm_run_read(&run, &kb, 1000, &st), GM_EIO);
    char want[600];
    snprintf(want, sizeof want, "%s: file changed while reading", run.f.shown);
    cr_assert_str_eq(st.msg, want);
    gm_run_remove(&run);
    gm_keybuf_free(&kb);
    cr_assert_eq(entries(dir), 0, "%s left behind", path);
    free(path);
    free(other);
    rm_rf(dir);
    free(dir);
}

Test(stream, endless_input_through_head, .timeout = 60)
{
    char *cmd;
    if (asprintf(&cmd, "yes 5 | (timeout 30 '%s' merge -; echo \"rc=$?\" >&2) | head -n 3",
                 gpumerge_path()) < 0)
        abort();
    cmd_result r = run_sh(NULL, cmd);
    cr_assert_str_eq(r.out, "5\n5\n5\n");
    cr_assert(strstr(r.err, "rc=124") == NULL, "gpumerge did not stop: %s", r.err);
    cmd_free(&r);
    free(cmd);
    /* a merge of a finite file with an endless pipe: the file's keys first */
    char *dir = scratch_dir(), *f = path_in(dir, "f");
    write_text(f, "1\n2\n9\n");
    if (asprintf(&cmd, "yes 7 | (timeout 30 '%s' merge %s -; echo \"rc=$?\" >&2) | head -n 4",
                 gpumerge_path(), f) < 0)
        abort();
    r = run_sh(NULL, cmd);
    cr_assert_str_eq(r.out, "1\n2\n7\n7\n");
    cr_assert(strstr(r.err, "rc=124") == NULL, "%s", r.err);
    cmd_free(&r);
    free(cmd);
    rm_rf(dir);
    free(dir);
    free(f);
}

Test(stream, merge_disorder_in_a_late_block)
{
    gm_input_test_block_size(64);
    char *dir = scratch_dir(), *names[2] = { path_in(dir, "a"), path_in(dir, "b") };
    char text[4096], *p = text;
    for (int i = 0; i < 300; i++)
        p += sprintf(p, "%d\n", i == 250 ? 3 : i);
    write_text(names[0], text);
    write_text(names[1], "5\n");
    gm_config c = config();
    char *out;
    gm_status st;
    cr_assert_eq(run_op(GM_OP_MERGE, &c, dir, names, 2, &out, &st), GM_EINPUT);
    char want[1024];
    snprintf(want, sizeof want, "%s:251: disorder: 3", names[0]);
    cr_assert_str_eq(st.msg, want);
    cr_assert_null(out);
    free(names[0]);
    free(names[1]);
    rm_rf(dir);
    free(dir);
}

/* ---------------------------------------------------------------- stdin */

Test(stream, stdin_from_its_offset_and_twice)
{
    char *dir = scratch_dir(), *f = path_in(dir, "f");
    write_text(f, "header\n3\n1\n2\n");
    char *cmd;
    if (asprintf(&cmd, "{ read h; '%s' sort -; } < f", gpumerge_path()) < 0)
        abort();
    cmd_result r = run_sh(dir, cmd);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, "1\n2\n3\n");
    cmd_free(&r);
    free(cmd);
    if (asprintf(&cmd, "'%s' sort - - < f2", gpumerge_path()) < 0)
        abort();
    char *f2 = path_in(dir, "f2");
    write_text(f2, "3\n1\n2\n");
    r = run_sh(dir, cmd);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, "1\n2\n3\n", "the second - reads nothing");
    cmd_free(&r);
    free(cmd);
    if (asprintf(&cmd, "cat f2 | '%s' merge - f2 -", gpumerge_path()) < 0)
        abort();
    write_text(f2, "1\n2\n3\n");
    r = run_sh(dir, cmd);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, "1\n1\n2\n2\n3\n3\n");
    cmd_free(&r);
    free(cmd);
    /* in-process: standard input left at an offset */
    int fd = open(f, O_RDONLY);
    lseek(fd, 7, SEEK_SET);
    dup2(fd, STDIN_FILENO);
    close(fd);
    gm_config c = config();
    char *out;
    gm_status st;
    char *dash = "-";
    cr_assert_eq(run_op(GM_OP_SORT, &c, dir, &dash, 1, &out, &st), GM_OK, "%s", st.msg);
    cr_assert_str_eq(out, "1\n2\n3\n");
    free(out);
    rm_rf(dir);
    free(dir);
    free(f);
    free(f2);
}

/* ---------------------------------------------------------------- changes */

/* Read when asked for (ahead 0) or by the reader thread (ahead 1). */
static void file_truncated_while_read(int ahead)
{
    char *dir = scratch_dir(), *f = path_in(dir, "f");
    int64_t n = 100000;
    int64_t *v = keys_of(UNIFORM, n, 5);
    write_keys(f, v, n);
    gm_input in;
    gm_status st;
    gm_input_test_read_ahead(ahead);
    cr_assert_eq(gm_input_open(&in, f, &st), GM_OK);
    cr_assert_eq(gm_input_start(&in, 4096, &st), GM_OK);
    gm_input_test_read_ahead(0);
    gm_block b;
    cr_assert_eq(gm_input_next(&in, &b, &st), GM_OK);
    cr_assert_eq(truncate(f, 20000), 0);
    int rc;
    do
        rc = gm_input_next(&in, &b, &st);
    while (rc == GM_OK && !b.eof);
    cr_assert_eq(rc, GM_EIO);
    char want[1024];
    snprintf(want, sizeof want, "%s: file changed while reading", f);
    cr_assert_str_eq(st.msg, want);
    gm_input_close(&in);
    free(v);
    rm_rf(dir);
    free(dir);
    free(f);
}

Test(stream, file_truncated_while_read) { file_truncated_while_read(0); }
Test(stream, file_truncated_while_read_ahead) { file_truncated_while_read(1); }

/* The binary, merging a file that is truncated once the output has started: exit
 * 2 with the message, not a signal. Two threads keep the blocks (and so what is
 * read ahead) small whatever the machine, so the file is still being read. */
Test(stream, truncation_is_an_error_not_a_signal, .timeout = 60)
{
    char *dir = scratch_dir();
    char *cmd;
    if (asprintf(&cmd, "seq 1 6000000 > f && echo 7 > g && "
                       "('%s' merge --parallel=2 f g; echo \"rc=$?\" >&2) | "
                       "{ head -c 10 > /dev/null; : > f; cat > /dev/null; }",
                 gpumerge_path()) < 0)
        abort();
    cmd_result r = run_sh(dir, cmd);
    cr_assert_str_eq(r.err, "gpumerge: f: file changed while reading\nrc=2\n");
    cmd_free(&r);
    free(cmd);
    rm_rf(dir);
    free(dir);
}

/* ---------------------------------------------------------------- blocks */

/* Keys of text parsed with blocks of block bytes (0: default). */
static int parse_blocks(const char *path, size_t block, int ordered, gm_keybuf *kb,
                        gm_status *st, int64_t *blocks)
{
    gm_input_test_block_size(block);
    gm_input in;
    memset(kb, 0, sizeof *kb);
    int rc = gm_input_open(&in, path, st);
    gm_parse_opts o = { 2, ordered, 0, 0, 0 };
    *blocks = 0;
    while (!rc && !in.eof) {
        rc = gm_input_read_keys(&in, &o, kb, st);
        (*blocks)++;
    }
    gm_input_close(&in);
    gm_input_test_block_size(0);
    return rc;
}

Test(stream, block_boundaries_mid_line_and_crlf, .timeout = 60)
{
    char *dir = scratch_dir(), *f = path_in(dir, "f");
    rng r;
    rng_seed(&r, 17);
    char *text = malloc(1 << 20), *p = text;
    for (int i = 0; i < 20000; i++) {
        int kind = (int)rng_range(&r, 0, 9);
        int64_t v = kind == 0 ? (int64_t)rng_next(&r) : rng_range(&r, -99999, 99999);
        p += sprintf(p, kind == 1 ? " %lld \r\n" : kind == 2 ? "\n%lld\r\n" : "%lld\n", (long long)v);
        if (kind == 3)
            p += sprintf(p, "%0200lld\n", (long long)(v < 0 ? -v : v)); /* longer than a block */
    }
    write_file(f, text, (size_t)(p - text));
    gm_keybuf ref, got;
    gm_status st;
    int64_t blocks;
    cr_assert_eq(parse_blocks(f, 0, 0, &ref, &st, &blocks), GM_OK, "%s", st.msg);
    cr_assert_eq(blocks, 1);
    size_t sizes[] = { 16, 17, 64, 100, 1000, 4096 };
    for (int through_pipe = 0; through_pipe < 3; through_pipe++) {
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            /* a file (parallel preads), a pipe fed in odd pieces (the reader thread),
             * or a file read ahead by the reader thread */
            gm_input_test_read_ahead(through_pipe == 2);
            char path[64];
            snprintf(path, sizeof path, "%s", f);
            pid_t pid = -1;
            int fds[2] = { -1, -1 };
            if (through_pipe == 1) {
                cr_assert_eq(pipe(fds), 0);
                pid = fork();
                if (pid == 0) {
                    close(fds[0]);
                    size_t len = (size_t)(p - text);
                    for (size_t at = 0, piece = 1; at < len; at += piece, piece = piece * 7 % 5003 + 1)
                        if (write(fds[1], text + at, at + piece < len ? piece : len - at) < 0)
                            _exit(1);
                    _exit(0);
                }
                close(fds[1]);
                snprintf(path, sizeof path, "/proc/self/fd/%d", fds[0]);
            }
            cr_assert_eq(parse_blocks(path, sizes[s], 0, &got, &st, &blocks), GM_OK, "%s", st.msg);
            gm_input_test_read_ahead(0);
            if (through_pipe == 1) {
                close(fds[0]);
                waitpid(pid, NULL, 0);
            }
            cr_assert_gt(blocks, 1);
            cr_assert_eq(got.n, ref.n, "block %zu, pipe %d", sizes[s], through_pipe);
            cr_assert_eq(got.width, ref.width);
            for (int64_t i = 0; i < ref.n; i++)
                cr_assert_eq(gm_keybuf_get(&got, i), gm_keybuf_get(&ref, i),
                             "block %zu pipe %d key %lld", sizes[s], through_pipe, (long long)i);
            gm_keybuf_free(&got);
        }
    }
    gm_keybuf_free(&ref);
    free(text);
    rm_rf(dir);
    free(dir);
    free(f);
}

Test(stream, errors_in_a_late_block_name_their_line)
{
    char *dir = scratch_dir(), *f = path_in(dir, "f");
    for (int bad = 1; bad <= 400; bad += 37) {
        char text[8192], *p = text;
        for (int i = 1; i <= 400; i++)
            p += sprintf(p, i == bad ? "1x\r\n" : i % 5 == 0 ? "\r\n" : "%d\r\n", i);
        write_text(f, text);
        for (size_t block = 16; block <= 256; block *= 4) {
            gm_keybuf kb;
            gm_status st;
            int64_t blocks;
            cr_assert_eq(parse_blocks(f, block, 0, &kb, &st, &blocks), GM_EINPUT);
            char want[1024];
            snprintf(want, sizeof want, "%s:%d: not an integer: '1x'", f, bad);
            cr_assert_str_eq(st.msg, want, "block %zu", block);
            gm_keybuf_free(&kb);
            /* and a disorder */
            p = text;
            for (int i = 1; i <= 400; i++)
                p += sprintf(p, "%d\n", i == bad + 1 ? 0 : i);
            write_text(f, text);
            cr_assert_eq(parse_blocks(f, block, 1, &kb, &st, &blocks), GM_DISORDER);
            snprintf(want, sizeof want, "%s:%d: disorder: 0", f, bad + 1);
            cr_assert_str_eq(st.msg, want, "block %zu", block);
            gm_keybuf_free(&kb);
            p = text;
            for (int i = 1; i <= 400; i++)
                p += sprintf(p, i == bad ? "1x\r\n" : i % 5 == 0 ? "\r\n" : "%d\r\n", i);
            write_text(f, text);
        }
    }
    rm_rf(dir);
    free(dir);
    free(f);
}

Test(stream, default_budget_follows_the_limits)
{
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit rl = { 256 << 20, 256 << 20 };
        setrlimit(RLIMIT_AS, &rl);
        size_t b = gm_default_budget();
        _exit(b == 128 << 20 ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "budget under RLIMIT_AS is not half of it");
    cr_assert_gt(gm_default_budget(), 0);
    /* sort's quarter of the physical memory left to everything else */
    double total = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    cr_assert_leq((double)gm_default_budget(), total * 0.75 + 1);
}

/* ---------------------------------------------------------------- CUDA's start-up */

Test(stream, auto_leaves_cuda_alone_on_small_inputs)
{
    char *dir = scratch_dir(), *in = path_in(dir, "in");
    write_text(in, "1\n2\n3\n");
    gm_config c = config();
    c.device = GM_DEVICE_AUTO;
    char *out;
    gm_status st;
    gm_op ops[] = { GM_OP_SORT, GM_OP_MERGE, GM_OP_CHECK };
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(run_op(ops[i], &c, dir, &in, 1, &out, &st), GM_OK, "%s", st.msg);
        free(out);
    }
    /* a pipe: the keys read so far stay far below the threshold */
    int p[2];
    cr_assert_eq(pipe(p), 0);
    cr_assert_eq(write(p[1], "5\n4\n", 4), 4);
    close(p[1]);
    dup2(p[0], STDIN_FILENO);
    close(p[0]);
    cr_assert_eq(run_op(GM_OP_SORT, &c, dir, NULL, 0, &out, &st), GM_OK, "%s", st.msg);
    cr_assert_str_eq(out, "4\n5\n");
    free(out);
    cr_assert_eq(gm_gpu_test_cuda_touched(), 0, "auto touched CUDA on a 3-line input");
    cr_assert(strstr(said, "CUDA's start-up") == NULL, "%s", said);
    rm_rf(dir);
    free(in), free(dir);
}

Test(stream, auto_begins_cuda_for_a_large_sort_only)
{
    gm_config c = config();
    c.device = GM_DEVICE_AUTO;
    cr_assert_eq(gm_engine_warm(&c, GM_OP_SORT, 1000, 2), 0);
    cr_assert_eq(gm_engine_warm(&c, GM_OP_CHECK, (int64_t)1 << 40, 2), 0);
    c.device = GM_DEVICE_CPU;
    cr_assert_eq(gm_engine_warm(&c, GM_OP_SORT, (int64_t)1 << 40, 2), 0);
    cr_assert_eq(gm_gpu_test_cuda_touched(), 0);
    c.device = GM_DEVICE_AUTO;
    cr_assert_eq(gm_engine_warm(&c, GM_OP_SORT, (int64_t)1 << 40, 2), 1);
    cr_assert_eq(gm_gpu_test_cuda_touched(), 1);
}

Test(stream, device_gpu_begins_cuda_and_fails_before_writing)
{
    char *dir = scratch_dir(), *in = path_in(dir, "in");
    write_text(in, "3\n1\n2\n");
    gm_config c = config();
    c.device = GM_DEVICE_GPU;
    char *out;
    gm_status st;
    int rc = run_op(GM_OP_SORT, &c, dir, &in, 1, &out, &st);
    cr_assert_eq(gm_gpu_test_cuda_touched(), 1);
    if (rc == GM_OK) {
        cr_assert_str_eq(out, "1\n2\n3\n");
        cr_assert(strstr(said, "cuda     ") != NULL, "%s", said);
    } else {
        cr_assert_eq(rc, GM_ENODEV, "%s", st.msg);
        cr_assert(strncmp(st.msg, "no usable CUDA device: ", 23) == 0, "%s", st.msg);
        cr_assert_null(out, "an output file after the failure");
        /* an empty input too, where no engine runs */
        char *empty = path_in(dir, "empty");
        write_text(empty, "");
        cr_assert_eq(run_op(GM_OP_SORT, &c, dir, &empty, 1, &out, &st), GM_ENODEV);
        cr_assert_null(out);
        free(empty);
    }
    free(out);
    rm_rf(dir);
    free(in), free(dir);
}

/* ---------------------------------------------------------------- -v */

Test(stream, verbose_accounts_for_every_stage, .timeout = 60)
{
    size_t budget = 64 << 10;
    int64_t n = gm_sort_chunk_keys(budget, GM_I32) * 3;
    int64_t *v = keys_of(UNIFORM, n, 31);
    char *dir = scratch_dir(), *in = path_in(dir, "in");
    write_keys(in, v, n);
    gm_config c = config();
    c.device = GM_DEVICE_AUTO;
    c.buffer_size = budget;
    c.tmpdir = dir;
    char *out;
    gm_status st;
    cr_assert_eq(run_op(GM_OP_SORT, &c, dir, &in, 1, &out, &st), GM_OK, "%s", st.msg);
    free(out);
    const char *lines[] = { "\nstart-up ", "\nopen     ", "\nread     ", "\nparse    ",
                            "\nsort     ", "\nspill    ", "\nwrite    ", "\nfinish   ",
                            "\nclean-up ", "\ntotal    " };
    const char *at = said;
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        const char *row = strstr(at, lines[i]);
        cr_assert(row != NULL, "-v lacks '%s' after the rows before it: %s", lines[i] + 1, said);
        at = row + 1;
    }
    /* the external sort's device line names the largest call, and counts them all */
    cr_assert(strstr(said, "\ndevice   cpu (auto: ") != NULL, "%s", said);
    cr_assert(strstr(said, "; the largest of ") != NULL, "%s", said);
    cr_assert(strstr(said, "; sort: 3 on the cpu; merge: ") != NULL, "%s", said);
    /* the total is the stages and the rest */
    double total, stages, rest;
    const char *t = strstr(said, "\ntotal    ") + 1;
    cr_assert_eq(sscanf(t, "total %lf s  the stages %lf s, the rest %lf s", &total, &stages,
                        &rest),
                 3, "%s", t);
    cr_assert_leq(stages, total + 0.0015, "%s", t);
    cr_assert(fabs(total - stages - rest) <= 0.0015, "%s", t);
    rm_rf(dir);
    free(v), free(in), free(dir);
}


Test(stream, progress_lines_only_when_asked)
{
    size_t budget = 64 << 10;
    int64_t n = gm_sort_chunk_keys(budget, GM_I32) * 3;
    int64_t *v = keys_of(UNIFORM, n, 21);
    char *dir = scratch_dir(), *in = path_in(dir, "in");
    write_keys(in, v, n);
    gm_config c = config();
    c.buffer_size = budget;
    c.tmpdir = dir;
    char *out;
    gm_status st;
    progress_lines = 0;
    cr_assert_eq(run_op(GM_OP_SORT, &c, dir, &in, 1, &out, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(progress_lines, 0, "no --progress, no progress lines");
    free(out);
    c.progress = 1;
    cr_assert_eq(run_op(GM_OP_SORT, &c, dir, &in, 1, &out, &st), GM_OK, "%s", st.msg);
    cr_assert_geq(progress_lines, 1);
    struct stat sb;
    stat(in, &sb);
    char want[128];
    snprintf(want, sizeof want, " MB/s, %.1f MB read, %.1f MB written, 3 runs written, 3 merged",
             (double)sb.st_size / 1e6, (double)sb.st_size / 1e6);
    const char *counts = strstr(last_progress, want);
    cr_assert(strncmp(last_progress, "progress: done 100%, in ", 24) == 0 && counts != NULL &&
                  counts[strlen(want)] == '\0',
              "%s", last_progress);
    free(out);
    free(v);
    rm_rf(dir);
    free(dir);
    free(in);
}

/* Two inputs (merged straight from their buffers), both widths, both orders,
 * duplicates across rounds, with blocks small enough for many rounds. */
Test(stream, merge_two_inputs_in_rounds, .timeout = 60)
{
    gm_input_test_block_size(2048);
    char *dir = scratch_dir(), *names[2] = { path_in(dir, "a"), path_in(dir, "b") };
    for (int wide = 0; wide < 4; wide++) { /* 2, 3: the files read ahead */
        gm_input_test_read_ahead(wide >= 2);
        for (int reverse = 0; reverse < 2; reverse++) {
            for (int unique = 0; unique < 2; unique++) {
                int64_t n[2] = { 20000, 7000 }, *all = malloc(27000 * sizeof *all), at = 0;
                for (int f = 0; f < 2; f++) {
                    int64_t *v = keys_of(DUPLICATES, n[f], (uint64_t)(f + 4 * wide));
                    for (int64_t i = 0; i < n[f]; i++)
                        v[i] = v[i] * (wide % 2 ? 4000000000LL : 1000) + (f ? 1 : 0);
                    ref_sort_i64(v, n[f], reverse ? -1 : 1);
                    write_keys(names[f], v, n[f]);
                    memcpy(all + at, v, (size_t)n[f] * sizeof *v);
                    at += n[f];
                    free(v);
                }
                gm_config c = config();
                c.reverse = reverse;
                c.unique = unique;
                if (wide >= 2)
                    c.threads = 4; /* the writer thread */
                char *out;
                gm_status st;
                cr_assert_eq(run_op(GM_OP_MERGE, &c, dir, names, 2, &out, &st), GM_OK, "%s", st.msg);
                char *want = expected(all, at, reverse ? -1 : 1, unique);
                cr_assert(strcmp(out, want) == 0, "wide %d reverse %d unique %d", wide, reverse, unique);
                free(want);
                free(out);
                free(all);
            }
        }
    }
    gm_input_test_read_ahead(0);
    free(names[0]);
    free(names[1]);
    rm_rf(dir);
    free(dir);
}

/* A pipe whose first bytes were read by someone else (the GPU's text path reads a
 * pipe whole, then may leave the sort to the streaming path): the prefix comes
 * first, a line split between it and the pipe stays one line, with small blocks
 * and with -z. */
Test(stream, pipe_prefix_handed_out_first, .timeout = 60)
{
    for (int zero = 0; zero < 2; zero++) {
        char eol = zero ? '\0' : '\n';
        char head[] = "5\n-7\n12", tail[] = "34\n8\n";
        const size_t hlen = sizeof head - 1, tlen = sizeof tail - 1;
        for (size_t c = 0; c < hlen; c++)
            head[c] = head[c] == '\n' ? eol : head[c];
        for (size_t c = 0; c < tlen; c++)
            tail[c] = tail[c] == '\n' ? eol : tail[c];
        int p[2];
        cr_assert_eq(pipe(p), 0);
        cr_assert_eq(write(p[1], tail, tlen), (ssize_t)tlen);
        close(p[1]);
        int saved = dup(STDIN_FILENO);
        dup2(p[0], STDIN_FILENO);
        close(p[0]);
        gm_input in;
        gm_status st;
        cr_assert_eq(gm_input_open(&in, "-", &st), GM_OK);
        char *pre = gm_buf_alloc(hlen, "test", &st);
        memcpy(pre, head, hlen);
        gm_input_set_prefix(&in, pre, 0, hlen);
        in.zero = zero;
        gm_input_test_block_size(4);
        cr_assert_eq(gm_input_start(&in, 4, &st), GM_OK);
        gm_keybuf kb;
        memset(&kb, 0, sizeof kb);
        gm_parse_opts o = { 2, 0, 0, 0, 0 };
        while (!in.eof)
            cr_assert_eq(gm_input_read_keys(&in, &o, &kb, &st), GM_OK, "%s", st.msg);
        gm_input_test_block_size(0);
        gm_input_close(&in);
        dup2(saved, STDIN_FILENO);
        close(saved);
        const int64_t want[] = { 5, -7, 1234, 8 };
        cr_assert_eq(kb.n, 4, "-z %d: %lld keys", zero, (long long)kb.n);
        for (int i = 0; i < 4; i++)
            cr_assert_eq(gm_keybuf_get(&kb, i), want[i], "-z %d key %d", zero, i);
        gm_keybuf_free(&kb);
    }
}
