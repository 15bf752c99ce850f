/*
 * stream_merge.c - the streaming merge: many inputs in batches past the fan-in,
 * two inputs in rounds (both widths, both orders, duplicates across rounds),
 * endless inputs through head, and a disorder found in a late block.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/gm.h"
#include "../core/stream/stream.h"
#include "helpers.h"
#include "stream_cases.h"

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
