/*
 * cli_textpath.c - the GPU's text path (core/stream/textsort.c) against the CPU engine,
 * byte for byte, and its bad lines named as the CPU names them; a pipe read whole
 * for the text path and given back to the streaming sort; and boundaries falling
 * inside text blocks and staged copies forced small (gpumerge_forced).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_cases.h"
#include "helpers.h"

/* Runs cmd in dir, which must fail with status 2, nothing on standard output and
 * err on standard error, leaving the -o file out with the "precious\n" it held. */
static void assert_fails_keeping(const char *dir, const char *cmd, const char *err,
                                 const char *out)
{
    cmd_result r = run_sh(dir, cmd);
    assert_result(&r, 2, "", err);
    cmd_free(&r);
    char *kept = read_file(out, NULL);
    cr_assert_str_eq(kept, "precious\n", "%s: the -o file changed", cmd);
    free(kept);
}

/* ---------------------------------------------------------------- text path */

/* --device=gpu sorts files through the GPU's text path (core/stream/textsort.c): its output
 * is the CPU engine's, byte for byte, over several files, one without its last
 * newline, CRLF, blanks, blank lines, an int64 key in the last file, -r, -u, -z. */
Test(cli, gpu_text_path_matches_the_cpu, .timeout = 300)
{
    if (!gpu_usable())
        cr_skip_test("GPU case skipped: no usable CUDA device");
    char *dir = scratch_dir();
    rng r;
    rng_seed(&r, 90);
    random_file(&r, dir, "a", 30000, 0, 0);
    random_file(&r, dir, "b", 20000, 2, 0);
    char *c = path_in(dir, "c"), *d = path_in(dir, "d"), *e = path_in(dir, "e");
    write_text(c, " 12\r\n\n-7 \t\r\n+3\n\n007\n-0\n5");      /* no last newline */
    write_text(d, "4\n9223372036854775807\n-9223372036854775808\n1\n");
    write_file(e, "3\0-1\0 2\r\0", 9);                      /* for -z */
    const char *cases[][2] = {
        { "a b c", "" }, { "c a b d", "" }, { "a c b", "-r" }, { "b c d", "-u" },
        { "d b a c", "-r -u" }, { "c", "" }, { "e", "-z" }, { "e e", "-z -r -u" },
    };
    for (int i = 0; i < (int)(sizeof cases / sizeof *cases); i++) {
        char *gpu_cmd, *cpu_cmd;
        if (asprintf(&gpu_cmd, "\"$GPUMERGE\" sort --strict -v --device=gpu %s %s",
                     cases[i][1], cases[i][0]) < 0 ||
            asprintf(&cpu_cmd, "\"$GPUMERGE\" sort --strict --device=cpu %s %s", cases[i][1],
                     cases[i][0]) < 0)
            abort();
        cmd_result g = run_sh(dir, gpu_cmd), want = run_sh(dir, cpu_cmd);
        cr_assert_eq(g.status, 0, "%s: %s", gpu_cmd, g.err);
        cr_assert_eq(want.status, 0, "%s: %s", cpu_cmd, want.err);
        cr_assert(strstr(g.err, "gpumerge: text ") && !strstr(g.err, "not taken"),
                  "%s: the text path not taken: %s", gpu_cmd, g.err);
        cr_assert_eq(g.out_len, want.out_len, "%s: %zu bytes, the CPU %zu", gpu_cmd, g.out_len,
                     want.out_len);
        cr_assert(memcmp(g.out, want.out, g.out_len) == 0, "%s: output differs", gpu_cmd);
        cmd_free(&g), cmd_free(&want);
        free(gpu_cmd), free(cpu_cmd);
    }
    /* standard input that is a pipe: read whole, then the text path */
    const char *piped[][2] = {
        { "cat a | \"$GPUMERGE\" sort --strict -v --device=gpu c - b",
          "cat a | \"$GPUMERGE\" sort --strict --device=cpu c - b" },
        { "cat e | \"$GPUMERGE\" sort --strict -v --device=gpu -z -r -",
          "cat e | \"$GPUMERGE\" sort --strict --device=cpu -z -r -" },
    };
    for (int i = 0; i < 2; i++) {
        cmd_result g = run_sh(dir, piped[i][0]), want = run_sh(dir, piped[i][1]);
        cr_assert_eq(g.status, 0, "%s: %s", piped[i][0], g.err);
        cr_assert(strstr(g.err, "gpumerge: text ") && !strstr(g.err, "not taken"),
                  "%s: the text path not taken: %s", piped[i][0], g.err);
        cr_assert_eq(g.out_len, want.out_len, "%s", piped[i][0]);
        cr_assert(memcmp(g.out, want.out, g.out_len) == 0, "%s: output differs", piped[i][0]);
        cmd_free(&g), cmd_free(&want);
    }
    /* -o, and standard input that is a file, read from its offset */
    cmd_result g = run_sh(dir, "{ read skip; \"$GPUMERGE\" sort --strict --device=gpu - c -o out; } < d && cat out");
    assert_result(&g, 0, "-9223372036854775808\n-7\n0\n1\n3\n5\n7\n12\n9223372036854775807\n", "");
    cmd_free(&g);
    free(c), free(d), free(e), free(dir);
}

/* A line the device's parser declines sends the run to the CPU's path, which names
 * it: the same message and status as the CPU engine, and -o left as it was. */
Test(cli, gpu_text_path_bad_line_is_the_cpus_message)
{
    if (!gpu_usable())
        cr_skip_test("GPU case skipped: no usable CUDA device");
    char *dir = scratch_dir();
    char *out = path_in(dir, "out"), *a = path_in(dir, "a"), *b = path_in(dir, "b");
    write_text(out, "precious\n");
    write_text(a, "1\n2");
    write_text(b, "3\n\n4\n12abc\n99999999999999999999\n");
    const char *devices[] = { "cpu", "gpu" };
    for (int i = 0; i < 2; i++) {
        char *cmd;
        if (asprintf(&cmd, "\"$GPUMERGE\" sort --strict --device=%s a b -o out", devices[i]) < 0)
            abort();
        cmd_result r = run_sh(dir, cmd);
        assert_result(&r, 2, "", "gpumerge: b:4: not an integer: '12abc'\n");
        char *text = read_file(out, NULL);
        cr_assert_str_eq(text, "precious\n");
        free(text), free(cmd);
        cmd_free(&r);
    }
    /* through a pipe: the bytes the text path read go back to the CPU's path */
    assert_fails_keeping(dir, "cat b | \"$GPUMERGE\" sort --strict --device=gpu a - -o out",
                         "gpumerge: -:4: not an integer: '12abc'\n", out);
    write_text(b, "3\n99999999999999999999\n");
    cmd_result r = run_sh(dir, "\"$GPUMERGE\" sort --strict --device=gpu b a -o out");
    assert_result(&r, 2, "", "gpumerge: b:2: out of range: '99999999999999999999'\n");
    cmd_free(&r);
    /* outside --strict those lines are sort's: the device declines them, and the
     * records path writes what sort -n writes */
    r = run_sh(dir, "LC_ALL=C sort -n b a > sort.out; \"$GPUMERGE\" sort --device=gpu b a "
                    "| cmp - sort.out");
    cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
    cmd_free(&r);
    free(out), free(a), free(b), free(dir);
}

/* Auto reads a pipe whole for the text path where an NVIDIA driver is loaded
 * (forced here, so that it runs anywhere), and when the sort stays on the CPU the
 * bytes go back to the streaming sort: the same output, messages and status as
 * --device=cpu, with blocks small enough that the handed-back bytes and the rest
 * of the pipe meet inside lines. */
Test(cli, pipe_read_whole_then_given_back, .timeout = 120)
{
    if (!getenv("GPUMERGE_FORCED"))
        cr_skip_test("GPUMERGE_FORCED (make builds it) not set");
    char *dir = scratch_dir();
    char *a = path_in(dir, "a"), *b = path_in(dir, "b"), *out = path_in(dir, "out");
    write_text(a, "5\n-3\n12\n0");
    write_text(b, "7\n-3\n100\n");
    const char *cases[][2] = {
        { "cat a | \"$GPUMERGE_FORCED\" --driver-loaded sort -v b - a",
          "cat a | \"$GPUMERGE\" sort --device=cpu b - a" },
        { "cat a | \"$GPUMERGE_FORCED\" --driver-loaded --block-size=3 sort -r -u -",
          "cat a | \"$GPUMERGE\" sort --device=cpu -r -u -" },
        { "tr '\\n' '\\0' < b | \"$GPUMERGE_FORCED\" --driver-loaded sort -z - -",
          "tr '\\n' '\\0' < b | \"$GPUMERGE\" sort --device=cpu -z -" },
        { "seq 2000000 -1 1 | \"$GPUMERGE_FORCED\" --driver-loaded sort - | cksum",
          "seq 2000000 | cksum" },
    };
    for (int i = 0; i < (int)(sizeof cases / sizeof *cases); i++) {
        cmd_result g = run_sh(dir, cases[i][0]), want = run_sh(dir, cases[i][1]);
        cr_assert_eq(g.status, 0, "%s: %s", cases[i][0], g.err);
        if (i == 0)
            cr_assert(strstr(g.err, "gpumerge: text     not taken"), "%s: %s", cases[i][0], g.err);
        cr_assert_eq(g.out_len, want.out_len, "%s: %zu bytes, want %zu", cases[i][0],
                     g.out_len, want.out_len);
        cr_assert(memcmp(g.out, want.out, g.out_len) == 0, "%s: output differs", cases[i][0]);
        cmd_free(&g), cmd_free(&want);
    }
    write_text(out, "precious\n");
    write_text(b, "3\n\n4\n12abc\n");
    assert_fails_keeping(dir, "cat b | \"$GPUMERGE_FORCED\" --driver-loaded sort --strict a - -o out",
                         "gpumerge: -:4: not an integer: '12abc'\n", out);
    free(a), free(b), free(out), free(dir);
}

/* ---------------------------------------------------------------- chunk boundaries */

/* Text blocks and the GPU's staged copies forced small (gpumerge_forced), so that
 * every boundary case falls inside a chunk: a line and a key split across blocks,
 * CRLF split, runs of equal keys across chunks, an int64 key in the last chunk,
 * external runs on the device (-S), and errors found in a late chunk with their
 * file:line and -o left as it was. Run with the device the suite is given
 * (GM_TEST_DEVICE=gpu on a GPU machine); the reference is the CPU engine with its
 * default sizes. */
Test(cli, chunk_boundaries_forced_small, .timeout = 300)
{
    if (!getenv("GPUMERGE_FORCED"))
        cr_skip_test("GPUMERGE_FORCED (make builds it) not set");
    char *dir = scratch_dir();
    char *f = path_in(dir, "f"), *a = path_in(dir, "a"), *b = path_in(dir, "b");
    rng r;
    rng_seed(&r, 61);
    size_t cap = 1 << 20, o = 0;
    char *text = malloc(cap);
    for (int i = 0; i < 6000; i++) {
        int64_t v = rng_range(&r, -40, 40); /* runs of equal keys across chunks */
        int form = (int)rng_range(&r, 0, 5);
        o += (size_t)sprintf(text + o, form == 0 ? "%lld\r\n" : form == 1 ? " %lld \n"
                                       : form == 2 && v >= 0 ? "+%lld\n" : "%lld\n",
                             (long long)v);
        if (form == 3 && v < 0)
            o += (size_t)sprintf(text + o, "\n"); /* a blank line */
    }
    o += (size_t)sprintf(text + o, "9223372036854775807\r\n-42"); /* int64 late, no newline */
    write_file(f, text, o);
    write_text(a, "-5\n-5\n0\n7\n7\n7\n100\n");
    write_text(b, "-9\n-5\n7\n8\n4294967296\n");
    const char *runs[][2] = {
        { "--block-size=7 --text-chunk=16 sort %s f", "sort --device=cpu f" },
        { "--block-size=5 --text-chunk=48 sort %s -r -u f", "sort --device=cpu -r -u f" },
        { "--block-size=11 sort %s -S 64K --batch-size=2 f", "sort --device=cpu f" },
        { "--block-size=3 merge %s a b a", "merge --device=cpu a b a" },
        { "--block-size=2 merge %s -u b a", "merge --device=cpu -u b a" },
    };
    for (int i = 0; i < (int)(sizeof runs / sizeof *runs); i++) {
        char *forced, *cmd, *ref;
        if (asprintf(&forced, runs[i][0], gpumerge_device_arg()) < 0 ||
            asprintf(&cmd, "\"$GPUMERGE_FORCED\" %s", forced) < 0 ||
            asprintf(&ref, "\"$GPUMERGE\" %s", runs[i][1]) < 0)
            abort();
        cmd_result got = run_sh(dir, cmd), want = run_sh(dir, ref);
        cr_assert_eq(got.status, 0, "%s: %s", cmd, got.err);
        cr_assert_eq(want.status, 0, "%s: %s", ref, want.err);
        cr_assert_eq(got.out_len, want.out_len, "%s: %zu bytes, expected %zu", cmd, got.out_len,
                     want.out_len);
        cr_assert(memcmp(got.out, want.out, got.out_len) == 0, "%s: output differs", cmd);
        cmd_free(&got), cmd_free(&want);
        free(forced), free(cmd), free(ref);
    }
    /* a bad line and a disorder near the end, found in a late block */
    text[o - 3] = 'x'; /* "-42" becomes "x42" on the last line, 6002 */
    write_file(f, text, o);
    char *out = path_in(dir, "out");
    write_text(out, "precious\n");
    char *cmd;
    if (asprintf(&cmd, "\"$GPUMERGE_FORCED\" --block-size=7 --text-chunk=16 sort --strict %s f -o out",
                 gpumerge_device_arg()) < 0)
        abort();
    char want[256];
    int lines = 1;
    for (size_t k = 0; k + 1 < o; k++)
        lines += text[k] == '\n';
    snprintf(want, sizeof want, "gpumerge: f:%d: not an integer: 'x42'\n", lines);
    assert_fails_keeping(dir, cmd, want, out);
    free(cmd), free(out);
    write_text(a, "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n"
                  "21\n22\n23\n24\n25\n26\n27\n28\n29\n30\n31\n32\n33\n34\n35\n36\n37\n38\n"
                  "39\n40\n41\n42\n43\n44\n45\n46\n47\n48\n49\n50\n51\n52\n53\n54\n55\n56\n"
                  "57\n58\n59\n60\n61\n62\n63\n64\n65\n66\n67\n68\n69\n70\n71\n72\n73\n74\n"
                  "75\n76\n77\n78\n79\n80\n81\n82\n83\n84\n85\n86\n87\n88\n89\n90\n91\n92\n"
                  "93\n94\n95\n96\n97\n98\n99\n100\n101\n102\n103\n104\n105\n106\n107\n108\n"
                  "109\n110\n111\n112\n113\n114\n115\n116\n117\n118\n119\n120\n111\n");
    if (asprintf(&cmd, "\"$GPUMERGE_FORCED\" --block-size=5 check %s a", gpumerge_device_arg()) < 0)
        abort();
    cmd_result dis = run_sh(dir, cmd);
    free(cmd);
    assert_result(&dis, 1, "", "gpumerge: a:121: disorder: 111\n");
    cmd_free(&dis);
    if (asprintf(&cmd, "\"$GPUMERGE_FORCED\" --block-size=5 merge %s a b -o out",
                 gpumerge_device_arg()) < 0)
        abort();
    cmd_result unsorted = run_sh(dir, cmd);
    free(cmd);
    cr_assert_eq(unsorted.status, 2, "%s", unsorted.err);
    cr_assert(strstr(unsorted.err, "a:121: disorder: 111") != NULL, "%s", unsorted.err);
    free(text), free(f), free(a), free(b), free(dir);
}
