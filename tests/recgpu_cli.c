/*
 * recgpu_cli.c - gpumerge's records sort through the binary on the suite's
 * generated cases, against LC_ALL=C sort given the same options: with
 * --device=cpu always, and with --device=gpu where a GPU is usable (else the case
 * is skipped, and says so), once as they come and once through gpumerge_forced
 * with small blocks, staging pieces and budget, so that a chunk on the device
 * holds many blocks and several chunks become runs; -v must say that the GPU
 * sorted them (but a first key by -g, -R or -V, which the CPU sorts). The sort with the
 * text in device memory (core/records/recdev.c, cuda/resident.cu) runs every case over
 * several files, with small pieces in both directions, in place, and declined
 * for the host's share of ties; and range by range of its keys where a memory
 * limit forced on the device is below the whole text's needs (core/records/recrange.c).
 * A chunk too large for the device's memory (a limit forced) is sorted on the
 * CPU; without a device --device=gpu fails and auto sorts.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "helpers.h"
#include "recgpu_cases.h"

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

/* The command that sorts case c with program bin (a shell word) and its leading
 * options lead: `bin lead sort`, or for a case in byte order bin linked as
 * gpusort (its name decides) and run as `./gpusort lead`. Freed by the caller. */
static char *sorter(const rec_case *c, const char *bin, const char *lead)
{
    char *s;
    if (c->bytes)
        cr_assert(asprintf(&s, "ln -sf %s gpusort && ./gpusort %s", bin, lead) > 0);
    else
        cr_assert(asprintf(&s, "%s %s sort", bin, lead) > 0);
    return s;
}

/* Whether the device sorts case c's chunks: not a first key by -g, -R or -V. */
static int device_sorts(const rec_case *c)
{
    return !strstr(c->args, "-g") && !strstr(c->args, "R") && !strstr(c->args, "V");
}

/* Each case through gpumerge (bin and its leading options) with device's options,
 * against LC_ALL=C sort; gpu_said: -v must say the GPU sorted chunks (where
 * device_sorts). */
static void cli_cases(const char *bin, const char *lead, const char *device, int gpu_said)
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
        char *cmd, *prog = sorter(c, bin, lead);
        cr_assert(asprintf(&cmd, "LC_ALL=C sort %s in > want && %s %s -v %s in -o out",
                           c->args, prog, device, c->args) > 0);
        free(prog);
        cmd_result res;
        same_as_sort(dir, cmd, &res);
        if (gpu_said && device_sorts(c))
            cr_assert(strstr(res.err, "sorted on the GPU"), "%s: -v says %s", cmd, res.err);
        cmd_free(&res);
        free(cmd);
        free(in);
        free(t.buf);
    }
    free(dir);
}

/* Small blocks, staging pieces and budget: many blocks a chunk, several chunks;
 * the budget holds gen_long's lines of 1 MiB (a longer line is refused). */
#define PLAIN "\"$GPUMERGE\""
#define FORCED "\"$GPUMERGE_FORCED\""
#define FORCED_LEAD "--records-block=3000 --text-chunk=1000"
#define SMALL "-S 2M --batch-size=3"

Test(recgpu, cli_cpu_against_sort, .timeout = 240)
{
    cli_cases(PLAIN, "", "--device=cpu", 0);
    if (!getenv("GPUMERGE_FORCED"))
        cr_skip_test("GPUMERGE_FORCED (make builds it) not set");
    cli_cases(FORCED, FORCED_LEAD, "--device=cpu " SMALL, 0);
}

Test(recgpu, cli_gpu_against_sort, .timeout = 240)
{
    if (!gpu_usable())
        cr_skip_test("GPU case skipped: no usable CUDA device");
    cli_cases(PLAIN, "", "--device=gpu", 1);
    if (!getenv("GPUMERGE_FORCED"))
        cr_skip_test("GPUMERGE_FORCED (make builds it) not set");
    cli_cases(FORCED, FORCED_LEAD, "--device=gpu " SMALL, 1);
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
        char *cmd, *prog = sorter(c, FORCED, "--lines-piece=4096 --text-chunk=1000");
        cr_assert(asprintf(&cmd, "LC_ALL=C sort %s a b c > want && %s --device=gpu -v %s "
                           "a b c -o out", c->args, prog, c->args) > 0);
        free(prog);
        cmd_result res;
        same_as_sort(dir, cmd, &res);
        if (device_sorts(c) && !strstr(c->args, "-u"))
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
            char *cmd, *lead, *prog;
            cr_assert(asprintf(&lead, "--records-window=4096 --gpu-memory-limit=%zu "
                               "--lines-piece=4096 --text-chunk=1000", m * text + (64 << 10)) > 0);
            prog = sorter(c, FORCED, lead);
            cr_assert(asprintf(&cmd, "LC_ALL=C sort %s a b c > want && %s --device=gpu -v "
                               "-S %zub %s a b c -o out", c->args, prog, text, c->args) > 0);
            free(lead);
            free(prog);
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
    const rec_case events = { gen_events, 20000, "-t, -k2,2n", 0, 0 };
    three_files(&events, 31, dir);
    cmd_result res;
    same_as_sort(dir, "LC_ALL=C sort -t, -k2,2n a b c > want && \"$GPUMERGE\" sort "
                      "--device=gpu -t, -k2,2n a b c -o c && cp c out", &res);
    cmd_free(&res);
    const rec_case heads = { gen_long_heads, 20000, "-n", 0, 0 };
    three_files(&heads, 32, dir);
    same_as_sort(dir, "LC_ALL=C sort -n a b c > want && \"$GPUMERGE\" sort --device=gpu -v "
                      "-S 4K -n a b c -o out", &res);
    cr_assert(strstr(res.err, "not sorted in device memory (lines: ") &&
              strstr(res.err, "bytes of tied lines for the host"), "-v says %s", res.err);
    cmd_free(&res);
    const rec_case fields = { gen_fields, 8000, "-n -u", 0, 0 }; /* numbers past 8 bytes */
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
