/*
 * test_recrange.c - the sort by ranges of keys (core/records/recrange.c, recwalk.c,
 * recspan.c), its host's side run where no GPU is: gpumerge_fakegpu (make builds
 * it; tests/fakegpu.c) stands in a device whose memory is GM_FAKE_DEVICE_BYTES
 * and sorts what it is handed on the CPU. Every case is three files (one empty,
 * one without its last end of line) under a budget (-S) of their bytes, so that
 * the CPU would write runs, against LC_ALL=C sort of the same files; -v must say
 * how many ranges. Windows of 4096 bytes put lines across windows and a line
 * longer than one; one key on every line cannot be split and is declined, as is
 * a text that would need more than four ranges, or more than two where it is over
 * half the host's memory (GM_FAKE_HOST_MEMORY); an input changed between two
 * passes is an error that leaves no output. Where no order is named, the line
 * with no number that gpumerge names is found in the text read for the device.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "helpers.h"

/* id,ts,payload lines (bench/records.sh's), a timestamp shared by about fifty,
 * and now and then a line of big bytes. */
static void gen_events(rng *r, text *t, int n, size_t big, char eol)
{
    for (int i = 0; i < n; i++) {
        text_putf(t, "%lld,%lld,", (long long)rng_range(r, 0, 10 * (int64_t)n),
                  1700000000LL + rng_range(r, 0, n / 50));
        size_t len = big && i % 997 == 5 ? big : (size_t)rng_range(r, 0, 12);
        for (size_t k = 0; k < len; k++)
            text_putf(t, "%c", (char)('a' + (k + (size_t)i) % 26));
        text_put(t, &eol, 1);
    }
}

/* The text cut into a, an empty b, and c without its last terminator; returns
 * its bytes. */
static size_t three_files(const text *t, char eol, const char *dir)
{
    size_t cut = t->n / 2;
    while (cut < t->n && t->buf[cut - 1] != eol)
        cut++;
    char *a = path_in(dir, "a"), *b = path_in(dir, "b"), *c = path_in(dir, "c");
    write_file(a, t->buf, cut);
    write_file(b, "", 0);
    write_file(c, t->buf + cut, t->n - cut - (t->n > cut));
    free(a);
    free(b);
    free(c);
    return t->n - (t->n > cut);
}

/* Runs the fake device's gpumerge on a b c with args (and env before it) against
 * sort; returns its -v. */
static char *against_sort(const char *dir, const char *env, const char *args, size_t budget)
{
    char *cmd;
    cr_assert(asprintf(&cmd, "LC_ALL=C sort %s a b c > want && %s \"$GPUMERGE_FAKEGPU\" sort "
                       "--device=gpu -v -S %zub %s a b c -o out", args, env, budget, args) > 0);
    cmd_result res = run_sh(dir, cmd);
    cr_assert_eq(res.status, 0, "%s: %s", cmd, res.err);
    size_t wl, gl;
    char *wp = path_in(dir, "want"), *op = path_in(dir, "out");
    char *want = read_file(wp, &wl), *got = read_file(op, &gl);
    cr_assert(got && wl == gl && memcmp(want, got, wl) == 0, "%s: differs from sort", cmd);
    char *err = strdup(res.err);
    free(want);
    free(got);
    free(wp);
    free(op);
    cmd_free(&res);
    free(cmd);
    return err;
}

static void need_fake(void)
{
    if (!getenv("GPUMERGE_FAKEGPU"))
        cr_skip_test("GPUMERGE_FAKEGPU (make builds it) not set");
}

/* -v of the fake device's gpumerge of a b c under -t, -k2,2n, its memory device
 * bytes, with -S budget bytes (0: no -S) and the host's memory host bytes (0: the
 * machine's); its output is not checked. */
static char *verbose_of(const char *dir, size_t device, size_t budget, size_t host)
{
    char *cmd, opt[64] = "";
    if (budget)
        snprintf(opt, sizeof opt, "-S %zub ", budget);
    cr_assert(asprintf(&cmd, "GM_FAKE_DEVICE_BYTES=%zu GM_FAKE_HOST_MEMORY=%zu "
                       "\"$GPUMERGE_FAKEGPU\" sort --device=gpu -v %s-t, -k2,2n a b c -o out",
                       device, host, opt) > 0);
    cmd_result res = run_sh(dir, cmd);
    char *err = strdup(res.err);
    cmd_free(&res);
    free(cmd);
    return err;
}

/* The ranges in -v's line, 0 where it has none. */
static int ranges_said(const char *err)
{
    const char *p = strstr(err, "sorted in device memory in ");
    return p ? atoi(p + strlen("sorted in device memory in ")) : 0;
}

Test(recrange, orders_against_sort, .timeout = 120)
{
    need_fake();
    static const char *ARGS[] = { "-t, -k2,2n", "-t, -k2,2nr -s", "-t, -k2,2n -u",
                                  "-t, -k1,1 -k2,2n", "-t, -k2,2n -k1,1nr", "-n -r",
                                  "-t, -k3 -k1,1n" };
    char *dir = scratch_dir();
    for (size_t i = 0; i < sizeof ARGS / sizeof ARGS[0]; i++) {
        rng r;
        rng_seed(&r, 70 + i);
        text t = { NULL, 0, 0 };
        gen_events(&r, &t, 6000, 0, '\n');
        size_t bytes = three_files(&t, '\n', dir);
        /* a device two fifths of the whole's needs: three ranges, or two */
        char env[128];
        snprintf(env, sizeof env, "GM_FAKE_DEVICE_BYTES=%zu GM_FAKE_WINDOW=4096",
                 (2 * bytes + 64 * 6000) / 5 * 2);
        char *err = against_sort(dir, env, ARGS[i], bytes);
        cr_assert(ranges_said(err) >= 2, "%s: -v says %s", ARGS[i], err);
        free(err);
        free(t.buf);
    }
    free(dir);
}

Test(recrange, zero_terminated_and_long_lines, .timeout = 120)
{
    need_fake();
    char *dir = scratch_dir();
    rng r;
    rng_seed(&r, 91);
    text t = { NULL, 0, 0 };
    gen_events(&r, &t, 3000, 20000, '\0'); /* lines of 20000 bytes: five windows each */
    size_t bytes = three_files(&t, '\0', dir);
    char env[128];
    snprintf(env, sizeof env, "GM_FAKE_DEVICE_BYTES=%zu GM_FAKE_WINDOW=4096 GM_FAKE_PIECE=777",
             (2 * bytes + 64 * 3000) / 2);
    char *err = against_sort(dir, env, "-z -t, -k2,2n -s", bytes);
    cr_assert(ranges_said(err) >= 2, "-v says %s", err);
    free(err);
    free(t.buf);
    free(dir);
}

/* One key on every line: no range can split it, and the sort is declined with
 * the reason. A budget that holds the text: no ranges are taken (the chunks then
 * sort it; the fake device has no chunk sort, so that run's output is not
 * checked). */
Test(recrange, declined, .timeout = 60)
{
    need_fake();
    char *dir = scratch_dir();
    text t = { NULL, 0, 0 };
    for (int i = 0; i < 4000; i++)
        text_putf(&t, "%d,42,%d\n", i % 97, i % 13);
    size_t bytes = three_files(&t, '\n', dir);
    char *err = verbose_of(dir, bytes, bytes, 0);
    cr_assert(strstr(err, "not sorted in device memory (text path: data does not fit in "
                          "GPU memory") &&
                  strstr(err, "bytes of lines whose keys the sample cannot split"),
              "-v says %s", err);
    free(err);
    err = verbose_of(dir, bytes, 0, 0);
    cr_assert(strstr(err, "too large for the device, small enough for the host's memory"),
              "-v says %s", err);
    free(err);
    free(t.buf);
    free(dir);
}

/* A device an eighth of the whole's needs: more ranges than are worth the reads;
 * fewer are worth them where the inputs would not stay in memory. */
Test(recrange, declined_for_too_many_ranges, .timeout = 60)
{
    need_fake();
    char *dir = scratch_dir();
    rng r;
    rng_seed(&r, 93);
    text t = { NULL, 0, 0 };
    gen_events(&r, &t, 6000, 0, '\n');
    size_t bytes = three_files(&t, '\n', dir);
    char *err = verbose_of(dir, (2 * bytes + 64 * 6000) / 8, bytes, 0);
    cr_assert(strstr(err, "not sorted in device memory (more than 4 ranges of keys)"),
              "-v says %s", err);
    free(err);
    /* inputs over half the host's memory, read from disk each pass: two ranges
     * at most; the three or four a device of two sevenths takes are declined */
    size_t device = (2 * bytes + 64 * 6000) / 7 * 2;
    err = verbose_of(dir, device, bytes, 4 * bytes);
    cr_assert(ranges_said(err) >= 3, "-v says %s", err);
    free(err);
    err = verbose_of(dir, device, bytes, bytes);
    cr_assert(strstr(err, "not sorted in device memory (more than 2 ranges of keys for inputs "
                          "over half the host's memory)"),
              "-v says %s", err);
    free(err);
    err = verbose_of(dir, (2 * bytes + 64 * 6000) / 3 * 2, bytes, bytes);
    cr_assert(ranges_said(err) == 2, "-v says %s", err);
    free(err);
    free(t.buf);
    free(dir);
}

/* An input changed between two passes (a key moved from the first range to the
 * last once the first range was read): an error naming the file, exit 2, and no
 * output file. */
Test(recrange, input_changed_between_passes, .timeout = 60)
{
    need_fake();
    char *dir = scratch_dir();
    text t = { NULL, 0, 0 };
    for (int i = 0; i < 6000; i++)
        text_putf(&t, "%04d,x\n", 1000 + (i * 7919) % 8000); /* keys 1000-8999 */
    char *in = path_in(dir, "in");
    write_file(in, t.buf, t.n);
    /* the first line's key 1000 + 0 becomes 9000: from the first range to the last */
    char *cmd;
    cr_assert(asprintf(&cmd, "GM_FAKE_DEVICE_BYTES=%zu GM_FAKE_CHANGE=in:0:57 "
                       "\"$GPUMERGE_FAKEGPU\" sort --device=gpu -S %zub -t, -k1,1n in -o out; "
                       "echo $?; test -e out && echo written",
                       (2 * t.n + 64 * 6000) / 3, t.n) > 0);
    cmd_result res = run_sh(dir, cmd);
    cr_assert_str_eq(res.out, "2\n", "%s", res.err);
    cr_assert(strstr(res.err, "in: file changed while reading"), "%s", res.err);
    cmd_free(&res);
    free(cmd);
    free(in);
    free(t.buf);
    free(dir);
}

/* No order named: the text goes to the device whole (read in pieces of 777
 * bytes, so that lines cross reads) or by ranges (its count pass reads every
 * byte once), and the line of c whose key holds no number, in the middle or the
 * last (c lacks its end of line), is named once; the output is sort -n's. */
Test(recrange, default_order_names_a_line_without_a_number, .timeout = 120)
{
    need_fake();
    char *dir = scratch_dir();
    rng r;
    rng_seed(&r, 95);
    text t = { NULL, 0, 0 };
    gen_events(&r, &t, 6000, 0, '\n');
    size_t bytes = three_files(&t, '\n', dir);
    char env[160];
    snprintf(env, sizeof env, "GM_FAKE_DEVICE_BYTES=%zu GM_FAKE_WINDOW=4096",
             (2 * bytes + 64 * 6000) / 5 * 2);
    static const struct {
        const char *plant; /* sh: the lines of c made so */
        int line;          /* c's line named */
        int ranges;        /* by ranges, else whole */
    } cases[] = {
        { "(head -n 1700 c0; echo 'x,y,z'; tail -n +1701 c0) > c", 1701, 0 },
        { "(head -n 1700 c0; echo 'x,y,z'; tail -n +1701 c0) > c", 1701, 1 },
        { "(cat c0; echo; printf 'x,-,z') > c", 0, 0 }, /* line: c0's, and one */
    };
    cmd_result keep = run_sh(dir, "mv c c0");
    cr_assert_eq(keep.status, 0);
    cmd_free(&keep);
    char *c0 = path_in(dir, "c0");
    size_t c0_len;
    char *c0_text = read_file(c0, &c0_len);
    int c0_lines = 1; /* its last lacks its end of line */
    for (size_t k = 0; k < c0_len; k++)
        c0_lines += c0_text[k] == '\n';
    free(c0_text);
    free(c0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *cmd;
        cr_assert(asprintf(&cmd, "%s && LC_ALL=C sort -n -t, -k2,2 "
                           "a b c > want && %s \"$GPUMERGE_FAKEGPU\" sort --device=gpu -v "
                           "-S %zub -t, -k2,2 a b c > out && cmp want out", cases[i].plant,
                           cases[i].ranges ? env : "GM_FAKE_PIECE=777", bytes) > 0);
        cmd_result res = run_sh(dir, cmd);
        cr_assert_eq(res.status, 0, "%s: %s", cmd, res.err);
        char want[96];
        snprintf(want, sizeof want, "gpumerge: c:%d: no number in this line's key; ",
                 cases[i].line ? cases[i].line : c0_lines + 1);
        const char *said = strstr(res.err, want);
        cr_assert(said, "%s: says %s", cmd, res.err);
        cr_assert_null(strstr(said + strlen(want), "no number"), "said twice: %s", res.err);
        cr_assert(cases[i].ranges ? ranges_said(res.err) >= 2
                                  : strstr(res.err, "sorted in device memory") != NULL,
                  "%s: -v says %s", cmd, res.err);
        cmd_free(&res);
        free(cmd);
    }
    free(t.buf);
    free(dir);
}
