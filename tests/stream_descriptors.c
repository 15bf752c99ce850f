/*
 * stream_descriptors.c - file descriptors: more inputs than open files, any
 * number of inputs and runs under ulimit -n 12 (against sort's output, "-" and a
 * pipe among the files), CUDA's start-up descriptors left free beside a merge's
 * fan-in, and a run that holds a descriptor only while it is read.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/gm.h"
#include "../core/run.h"
#include "../core/stream.h"
#include "../core/util.h"
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
