/*
 * stream_descriptors.c - file descriptors: more inputs than open files, any
 * number of inputs and runs under ulimit -n 12 (against sort's output, "-" and a
 * pipe among the files), CUDA's start-up descriptors left free beside a merge's
 * fan-in, a run that holds a descriptor only while it is read, and merges under
 * ulimit -n 6 (sort's least: the standard three, two inputs and a run or the
 * output), -o's file and an input that is it among them, --compress-program's
 * pipes failing there as sort's do.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/gm.h"
#include "../core/runs/run.h"
#include "../core/stream/stream.h"
#include "../core/base/util.h"
#include "helpers.h"
#include "stream_cases.h"

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
    gm_tmpspec spec = { dir, NULL };
    cr_assert_eq(gm_run_create(&run, &spec, &st), GM_OK, "%s", st.msg);
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
    cr_assert_eq(gm_run_create(&run, &spec, &st), GM_OK, "%s", st.msg);
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

/* ------------------------------------------------------------------ ulimit -n 6 */

enum { SMALL_INPUTS = 200, NOFILE = 6 };

/* Writes SMALL_INPUTS sorted files of a few lines each into dir: "k%03d" of
 * "k:N" lines sorted by -t: -k2,2n, and "n%03d" of integers, overlapping. */
static void small_inputs(const char *dir)
{
    for (int i = 0; i < SMALL_INPUTS; i++) {
        char name[16], k[128] = "", n[128] = "";
        for (int j = 0; j < 3; j++) {
            snprintf(k + strlen(k), sizeof k - strlen(k), "k:%d\n", j * 1000 + i * 3);
            snprintf(n + strlen(n), sizeof n - strlen(n), "%d\n", i + 7 * j);
        }
        snprintf(name, sizeof name, "k%03d", i);
        char *path = path_in(dir, name);
        write_text(path, k);
        free(path);
        snprintf(name, sizeof name, "n%03d", i);
        path = path_in(dir, name);
        write_text(path, n);
        free(path);
    }
}

/* argv of prog (NULL: gpumerge), the words of opts, then the inputs of the
 * prefix ('k' or 'n'); malloc'd, words in words. */
static char **small_argv(const char *prog, const char *opts, char prefix, char *words)
{
    char **argv = calloc(SMALL_INPUTS + 32, sizeof *argv);
    int n = 0;
    argv[n++] = (char *)(prog ? prog : "gpumerge");
    strcpy(words, opts);
    for (char *w = strtok(words, " "); w; w = strtok(NULL, " "))
        argv[n++] = w;
    for (int i = 0; i < SMALL_INPUTS; i++) {
        char *name = words + 1024 + 8 * i;
        snprintf(name, 8, "%c%03d", prefix, i);
        argv[n++] = name;
    }
    return argv;
}

/* The merge of every input of prefix under opts, as LC_ALL=C sort writes it
 * with no limit. */
static char *sort_merged(const char *dir, const char *opts, char prefix, size_t *len)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "LC_ALL=C sort -m %s %c*", opts, prefix);
    cmd_result r = run_sh(dir, cmd);
    cr_assert_eq(r.status, 0, "sort: %s", r.err);
    free(r.err);
    *len = r.out_len;
    return r.out;
}

/* Merges under ulimit -n 6 as sort does (it merges two at a time through
 * temporary runs): the records path (-t: -k2,2n), the integer path (--strict)
 * and the default's handing over to records, each to standard output, to -o's
 * file, and to -o naming the first input; output against sort's, no temporary
 * file left, and sort itself managing under the same limit. */
Test(stream, merges_under_ulimit_6_as_sort_does, .timeout = 120)
{
    char *dir = scratch_dir(), *tmp = path_in(dir, "tmp");
    mkdir(tmp, 0700);
    small_inputs(dir);
    const struct {
        const char *opts, *sort_opts;
        char prefix;
    } paths[] = {
        { "-m -t: -k2,2n -S 64K -T tmp", "-t: -k2,2n", 'k' },
        { "-m -S 64K -T tmp", "-n", 'n' },
        { "-m --strict -S 64K -T tmp", "-n", 'n' },
    };
    char *words = malloc(1024 + 8 * SMALL_INPUTS);
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
        size_t want_len;
        char *want = sort_merged(dir, paths[p].sort_opts, paths[p].prefix, &want_len);
        char first[16], sort_opts[512];
        snprintf(first, sizeof first, "%c000", paths[p].prefix);
        char *first_path = path_in(dir, first), *keep = read_file(first_path, NULL);
        for (int o = 0; o < 3; o++) {
            char opts[256], target[16];
            snprintf(target, sizeof target, o == 2 ? "%c000" : "out", paths[p].prefix);
            snprintf(opts, sizeof opts, "%s%s%s", paths[p].opts, o ? " -o " : "", o ? target : "");
            char **argv = small_argv(NULL, opts, paths[p].prefix, words);
            cmd_result g = run_limited(dir, NOFILE, argv);
            cr_assert_eq(g.status, 0, "%s: %s", opts, g.err);
            size_t got_len = g.out_len;
            char *got = g.out, *path = NULL;
            if (o) {
                free(g.out);
                path = path_in(dir, target);
                got = read_file(path, &got_len);
            }
            cr_assert(got_len == want_len && memcmp(got, want, want_len) == 0,
                      "%s under ulimit -n %d: output differs from sort's", opts, NOFILE);
            cr_assert_eq(entries(tmp), 0, "%s: temporary files left behind", opts);
            if (o == 2) { /* the input again, and sort under the same limit */
                write_text(first_path, keep);
                snprintf(sort_opts, sizeof sort_opts, "%s %s -o %s", "-m -S 64K -T tmp",
                         paths[p].sort_opts, first);
                char **sargv = small_argv("sort", sort_opts, paths[p].prefix, words);
                cmd_result s = run_limited(dir, NOFILE, sargv);
                cr_assert_eq(s.status, 0, "sort %s: %s", sort_opts, s.err);
                cmd_free(&s);
                free(sargv);
                write_text(first_path, keep);
            }
            free(got);
            free(g.err);
            free(path);
            free(argv);
        }
        free(first_path);
        free(keep);
        free(want);
    }
    free(words);
    rm_rf(dir);
    free(dir);
    free(tmp);
}

/* --compress-program's children take a pipe beside each run: under ulimit -n 6 a
 * run cannot be read back through PROG -d, and the merge fails as sort's does
 * ("open failed: RUN: Too many open files", exit 2) with -o's file as it was and
 * no temporary file left; with two descriptors more it merges as sort does
 * without a limit. */
Test(stream, compressed_runs_under_ulimit_6_fail_as_sort_does, .timeout = 120)
{
    char *dir = scratch_dir(), *tmp = path_in(dir, "tmp"), *out = path_in(dir, "out");
    mkdir(tmp, 0700);
    small_inputs(dir);
    const char *opts[] = { "-m -t: -k2,2n -S 64K -T tmp --compress-program=gzip -o out",
                           "-m --strict -S 64K -T tmp --compress-program=gzip -o out" };
    const char *sort_opts[] = { "-t: -k2,2n", "-n" };
    char *words = malloc(1024 + 8 * SMALL_INPUTS);
    for (int p = 0; p < 2; p++) {
        char prefix = p ? 'n' : 'k';
        write_text(out, "old\n");
        char **argv = small_argv(NULL, opts[p], prefix, words);
        cmd_result g = run_limited(dir, NOFILE, argv);
        cr_assert_eq(g.status, 2, "%s: %s", opts[p], g.err);
        cr_assert(strncmp(g.err, "gpumerge: open failed: tmp/gpumerge-run.", 40) == 0 &&
                      strstr(g.err, ": Too many open files\n"),
                  "%s: %s", opts[p], g.err);
        char *kept = read_file(out, NULL);
        cr_assert_str_eq(kept, "old\n", "%s: -o's file changed", opts[p]);
        free(kept);
        cr_assert_eq(entries(tmp), 0, "%s: temporary files left behind", opts[p]);
        cmd_free(&g);
        free(argv);

        char sopts[256];
        snprintf(sopts, sizeof sopts, "-m -S 64K -T tmp --compress-program=gzip %s -o out",
                 sort_opts[p]);
        argv = small_argv("sort", sopts, prefix, words);
        cmd_result s = run_limited(dir, NOFILE, argv);
        cr_assert_eq(s.status, 2, "sort %s: %s", sopts, s.err);
        cr_assert(strncmp(s.err, "sort: open failed: ", 19) == 0 &&
                      strstr(s.err, ": Too many open files\n"),
                  "sort %s: %s", sopts, s.err);
        cmd_free(&s);
        free(argv);
        rm_rf(tmp);
        mkdir(tmp, 0700);

        argv = small_argv(NULL, opts[p], prefix, words);
        g = run_limited(dir, NOFILE + 2, argv);
        cr_assert_eq(g.status, 0, "%s under ulimit -n %d: %s", opts[p], NOFILE + 2, g.err);
        size_t want_len, got_len;
        char *want = sort_merged(dir, sort_opts[p], prefix, &want_len);
        char *got = read_file(out, &got_len);
        cr_assert(got_len == want_len && memcmp(got, want, want_len) == 0,
                  "%s under ulimit -n %d: output differs from sort's", opts[p], NOFILE + 2);
        cr_assert_eq(entries(tmp), 0, "%s: temporary files left behind", opts[p]);
        free(got);
        free(want);
        cmd_free(&g);
        free(argv);
    }
    free(words);
    rm_rf(dir);
    free(dir);
    free(tmp);
    free(out);
}
