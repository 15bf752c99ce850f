/*
 * test_plan.c - the run's plan (core/plan/plan.h): the threads the budget's share pays
 * for, the fan-in within --batch-size and the descriptors free, the budget's
 * splits, what opening the inputs adds, and -v saying the plan before the work.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/gm.h"
#include "../core/plan/plan.h"
#include "../core/base/util.h"
#include "helpers.h"

static char said[8192];

static void collect(void *ctx, gm_message kind, const char *text)
{
    (void)kind;
    (void)ctx;
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
    c.strict = 1;
    return c;
}

Test(plan, the_budget_pays_for_the_threads_stacks)
{
    gm_config c = config();
    gm_plan p;
    for (int t = 1; t <= 64; t *= 4) {
        for (size_t mb = 1; mb <= 64; mb *= 4) {
            c.threads = t;
            c.buffer_size = mb << 20;
            gm_plan_make(&p, GM_OP_SORT, &c, 1);
            size_t pays = c.buffer_size / 8 / GM_THREAD_STACK;
            int want = (size_t)t <= pays ? t : pays > 1 ? (int)pays : 1;
            cr_assert_eq(p.threads, want, "--parallel=%d -S %zuM: %d threads", t, mb, p.threads);
            cr_assert_eq(p.records.threads, t); /* the records path's: as asked */
            cr_assert_eq(p.budget, c.buffer_size);
            cr_assert_eq(p.writer_mem, c.buffer_size / 8);
            cr_assert_eq(p.text_limit, c.buffer_size / 2);
            cr_assert_eq(p.chunk_keys[0], gm_sort_chunk_keys(c.buffer_size, GM_I32));
            cr_assert_eq(p.chunk_keys[1], gm_sort_chunk_keys(c.buffer_size, GM_I64));
            cr_assert(p.sort_block >= 4096 && p.sort_block <= c.buffer_size / 16 + 4096);
        }
    }
    /* no -S: the default budget; below the least, the least */
    c.buffer_size = 0;
    gm_plan_make(&p, GM_OP_SORT, &c, 1);
    cr_assert_eq(p.budget, gm_default_budget());
    c.buffer_size = 1000;
    gm_plan_make(&p, GM_OP_SORT, &c, 1);
    cr_assert_eq(p.budget, 64 << 10);
}

Test(plan, the_fan_in_is_the_batch_size_within_the_descriptors_free)
{
    gm_config c = config();
    c.buffer_size = 64 << 20;
    gm_plan p;
    c.batch_size = 5;
    gm_plan_make(&p, GM_OP_MERGE, &c, 100);
    cr_assert_eq(p.fan_in, 5);
    cr_assert_eq(p.records.fan_in, 5);
    /* without --batch-size, as many as the memory holds at 64 KiB a source (six
     * buffers each on the integer path, four on the records path), within the
     * descriptors free; at least sort's NMERGE */
    c.batch_size = 0;
    gm_plan_make(&p, GM_OP_MERGE, &c, 100);
    int most = (int)(p.merge_mem / (6 << 16));
    cr_assert_eq(p.fan_in, most < p.fds ? most : p.fds, "%d of %d", p.fan_in, p.fds);
    cr_assert_gt(p.fan_in, 16);
    cr_assert_eq(p.records.fan_in, (int)((64 << 20) / (4 << 16)) < p.records.fds
                                       ? (int)((64 << 20) / (4 << 16)) : p.records.fds);
    c.buffer_size = 1 << 20;
    gm_plan_make(&p, GM_OP_MERGE, &c, 100);
    cr_assert_eq(p.fan_in, 16);
    cr_assert_eq(p.records.fan_in, 16);
    c.buffer_size = 64 << 20;
    /* under ulimit -n the descriptors free bound it, less the run or output a
     * pass writes to */
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit rl = { 24, 24 };
        setrlimit(RLIMIT_NOFILE, &rl);
        c.batch_size = 1000;
        gm_plan_make(&p, GM_OP_MERGE, &c, 100);
        int room = gm_fd_room();
        _exit(p.fan_in < room && p.fan_in >= 2 && p.fds == room - 1 &&
                      p.fan_in == (room - 1 > 2 ? room - 1 : 2) &&
                      p.records.fan_in == p.fan_in && !p.output_late
                  ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fan-in beyond the descriptors");
    /* the records merge's limit */
    c.batch_size = 1 << 20;
    gm_plan_make(&p, GM_OP_MERGE, &c, 100);
    cr_assert_leq(p.records.fan_in, 1024);
}

/* What a pass writes to beside its fan-in, as (descriptors free for inputs and
 * runs, whether -o's file is created late) for -o's kinds under ulimit -n 24, the
 * fan-in wanted 1000 (short) or 4 (plenty): a regular file takes its descriptor
 * from the start where they are plenty, and only at the last pass (late) where
 * they are short; a stream named by -o always; standard output none; a
 * compressing child's pipe two. */
Test(plan, a_pass_counts_what_it_writes_to)
{
    char *dir = scratch_dir(), *file = path_in(dir, "out");
    const struct {
        const char *output;
        const char *compress;
        int batch, less, late;
    } cases[] = {
        { NULL, NULL, 1000, 1, 0 },
        { NULL, NULL, 4, 1, 0 },
        { file, NULL, 1000, 1, 1 },
        { file, NULL, 4, 2, 0 },
        { "/dev/null", NULL, 1000, 2, 0 },
        { "/dev/null", NULL, 4, 2, 0 },
        { NULL, "gzip", 1000, 3, 0 },
        { file, "gzip", 1000, 3, 1 },
        { file, "gzip", 4, 4, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            struct rlimit rl = { 24, 24 };
            setrlimit(RLIMIT_NOFILE, &rl);
            gm_config c = config();
            c.device = GM_DEVICE_CPU;
            c.output = cases[i].output;
            c.compress_program = cases[i].compress;
            c.batch_size = cases[i].batch;
            gm_plan p;
            gm_plan_make(&p, GM_OP_MERGE, &c, 100);
            int room = gm_fd_room();
            _exit(p.fds == room - cases[i].less && p.output_late == cases[i].late &&
                          p.records.fds == p.fds
                      ? 0 : 1);
        }
        int status;
        waitpid(pid, &status, 0);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "case %zu: -o %s, fan-in wanted %d", i,
                  cases[i].output ? cases[i].output : "(none)", cases[i].batch);
    }
    rmdir(dir); /* the plan does not create -o's file */
    free(file);
    free(dir);
}

Test(plan, the_inputs_pipes_take_descriptors_from_every_pass)
{
    gm_config c = config();
    c.buffer_size = 64 << 20;
    c.batch_size = 8;
    gm_plan p;
    gm_plan_make(&p, GM_OP_MERGE, &c, 100);
    cr_assert_eq(p.total_bytes, -1);
    gm_plan_inputs(&p, 1234, 1334, 3);
    cr_assert_eq(p.fan_in, 5);
    cr_assert_eq(p.total_bytes, 1234);
    cr_assert_eq(p.regular_bytes, 1334);
    gm_plan_inputs(&p, -1, 0, 10);
    cr_assert_eq(p.fan_in, 2);
}

Test(plan, merge_rounds_share_the_budget_among_the_inputs)
{
    gm_config c = config();
    c.threads = 2;
    c.buffer_size = 1 << 30;
    gm_plan a, b;
    gm_plan_make(&a, GM_OP_MERGE, &c, 2);
    gm_plan_make(&b, GM_OP_MERGE, &c, 16);
    cr_assert_gt(a.merge_block, b.merge_block);
    cr_assert_leq(b.merge_block * 16, b.merge_mem);
    c.buffer_size = 1 << 20; /* a small budget bounds the round */
    gm_plan_make(&a, GM_OP_MERGE, &c, 2);
    cr_assert_eq(a.merge_mem, (size_t)1 << 20);
}

/* -v says the plan first, one fact a line, before the stages' lines. */
Test(plan, verbose_says_the_plan_before_the_work)
{
    char *dir = scratch_dir();
    char *a = path_in(dir, "a"), *b = path_in(dir, "b"), *out = path_in(dir, "out");
    write_text(a, "1\n3\n");
    write_text(b, "2\n4\n");
    gm_config c = config();
    c.threads = 2;
    c.buffer_size = 8 << 20;
    c.batch_size = 3;
    c.output = out;
    char *names[] = { a, b };
    gm_status st;
    said[0] = '\0';
    cr_assert_eq(gm_run(GM_OP_MERGE, &c, names, 2, &st), GM_OK, "%s", st.msg);
    /* the order first, then the plan */
    const char *first = strstr(said, "order    -n on whole lines (no order named: gpumerge's "
                                     "default)\nplan     merge of 2 inputs, 0.0 MB\n");
    cr_assert_eq(first, said, "%s", said);
    cr_assert(strstr(said, "\nengine   cpu (--device=cpu)\n") != NULL, "%s", said);
    cr_assert(strstr(said, "\nthreads  2\n") != NULL, "%s", said);
    cr_assert(strstr(said, "\nbudget   8.0 MiB: merge rounds ") != NULL, "%s", said);
    cr_assert(strstr(said, "\nfan-in   3 (of ") != NULL, "%s", said);
    const char *ran = strstr(said, "\nkeys     4, int32");
    cr_assert(ran != NULL && ran > strstr(said, "\nfan-in"), "%s", said);
    size_t len;
    char *got = read_file(out, &len);
    cr_assert_str_eq(got, "1\n2\n3\n4\n");
    free(got);
    free(a);
    free(b);
    free(out);
    free(dir);
}

/* The descriptors free: every number below the limit that is not open (asked one
 * by one here), and under a limit above the window only those below it, so that
 * an open far up neither counts nor could be reached. */
static int free_below(int limit)
{
    int n = 0;
    for (int fd = 0; fd < limit; fd++)
        n += fcntl(fd, F_GETFD) < 0;
    return n;
}

Test(plan, fd_room_counts_the_free_numbers_below_the_limit)
{
    pid_t pid = fork();
    if (pid == 0) {
        int bad = 0;
        struct rlimit rl = { 40, 40 };
        bad |= setrlimit(RLIMIT_NOFILE, &rl) != 0;
        int room = gm_fd_room();
        bad |= (room != free_below(40)) << 1;
        bad |= (dup2(0, 39) != 39 || gm_fd_room() != room - 1) << 2;
        _exit(bad);
    }
    int status;
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "gm_fd_room under ulimit -n 40: failed check mask %d", WEXITSTATUS(status));

    /* a limit above the window */
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_max < 2100)
        cr_skip_test("the hard limit on descriptors (%llu) is below 2100",
                     (unsigned long long)rl.rlim_max);
    pid = fork();
    if (pid == 0) {
        int bad = 0;
        struct rlimit up = { 2100, rl.rlim_max };
        bad |= setrlimit(RLIMIT_NOFILE, &up) != 0;
        int room = gm_fd_room();
        bad |= (room != free_below(GM_FD_WINDOW)) << 1;
        bad |= (dup2(0, 2000) != 2000 || gm_fd_room() != room) << 2;
        bad |= (dup2(0, GM_FD_WINDOW - 1) != GM_FD_WINDOW - 1 || gm_fd_room() != room - 1) << 3;
        _exit(bad);
    }
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "gm_fd_room under ulimit -n 2100: failed check mask %d", WEXITSTATUS(status));
}
