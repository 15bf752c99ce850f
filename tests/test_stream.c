/*
 * test_stream.c - the streaming data plane: what the suite's files share
 * (stream_cases.h: gm_run in-process with a gm_config filled in, its -v lines
 * kept, outputs checked against qsort), and the run as a whole: the default
 * budget under the limits, when CUDA's start-up begins (never for auto on small
 * inputs), -v's device line and stages, --progress. The cases are in
 *   stream_sort.c         the external sort around the fan-in (1, fan-in, fan-in
 *                         + 1, fan-in squared + 1 runs) with -r, -u, int64
 *                         extremes, duplicates across runs and int64 keys first
 *                         met in a late block; temporary files gone after
 *                         success, error and signals; a full temporary directory;
 *   stream_merge.c        merges in batches past the fan-in and in rounds, of
 *                         endless inputs, a disorder in a late block;
 *   stream_descriptors.c  any number of inputs and runs under ulimit -n 12
 *                         (against sort), CUDA's start-up descriptors kept free,
 *                         a run's descriptor held only while it is read;
 *   stream_input.c        standard input read from its offset, "- -", a file
 *                         truncated while read, block boundaries (a block ending
 *                         mid-line, CRLF split, errors in a late block with their
 *                         file:line), a pipe's prefix read by someone else.
 *   stream_compress.c     --compress-program against sort: runs of both paths
 *                         through PROG and back through PROG -d, PROG's failures
 *                         in sort's words, nothing left behind, also on SIGTERM.
 *
 * Most cases run in-process through gm_run with a gm_config filled in (the -S,
 * -T and --batch-size fields), checked against qsort; the pipe and signal cases
 * run the binary ($GPUMERGE) or a forked child.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include "../core/gm.h"
#include "../core/stream/stream.h"
#include "../cuda/testing.h"
#include "helpers.h"
#include "stream_cases.h"

/* ---------------------------------------------------------------- helpers */

/* The -v lines of the last run, joined. */
char said[8192];
/* The --progress lines of the last run: how many, and the last one. */
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

gm_config config(void)
{
    gm_config c;
    memset(&c, 0, sizeof c);
    c.device = GM_DEVICE_CPU;
    c.verbose = 1;
    c.message = collect;
    c.strict = 1; /* the integer path's own checking (test_lines: the records path) */
    return c;
}

void feed_until_runs(int fd, const char *tmp, int runs)
{
    signal(SIGPIPE, SIG_IGN);
    char line[32];
    for (int i = 0; i < 2000000 && entries(tmp) < runs; i++) {
        int len = snprintf(line, sizeof line, "%d\n", (i * 7919) % 100003);
        if (write(fd, line, (size_t)len) != len)
            break;
    }
}

void rm_rf(const char *dir)
{
    char *cmd;
    if (asprintf(&cmd, "rm -rf '%s'", dir) < 0)
        abort();
    if (system(cmd) != 0)
        abort();
    free(cmd);
}

/* The expected text of sorting v (n keys): order +1/-1, unique. Sorts v. */
char *expected(int64_t *v, int64_t n, int order, int unique)
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
int run_op(gm_op op, gm_config *c, const char *dir, char **names, int n, char **out,
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
void runs_and_passes(int *runs, int *passes)
{
    const char *p = strstr(said, "runs     ");
    cr_assert_not_null(p, "no runs line in: %s", said);
    cr_assert_eq(sscanf(p, "runs %d temporary, %d merge pass", runs, passes), 2, "%s", said);
}

int64_t *keys_of(enum shape sh, int64_t n, uint64_t seed)
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

void write_sorted(const char *path, int64_t n, uint64_t seed, int64_t **all, int64_t *at)
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

/* ---------------------------------------------------------------- budget */

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
