/*
 * records_merge.c - the records path's merge against LC_ALL=C sort -m: sorted
 * inputs under every option set of the table, all at once and in batches of two
 * through runs; an input out of order (the message names its line, -o's file is
 * left as it was); -u keeping the first input's line; and output that begins
 * before the input ends (a pipe kept open, through the binary).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/records/records.h"
#include "helpers.h"
#include "records_cases.h"

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
