/*
 * records_sort.c - the records path's sort against LC_ALL=C sort, every option
 * set of the table: in memory (small inputs on one thread, large ones on several,
 * which take the parallel radix sort and its combined keys, and its distribution
 * in place), the output's space reserved or refused, under a small budget with
 * several runs and merge passes (--batch-size 2), -z, and lines of megabytes
 * under a small budget.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/records/records.h"
#include "../core/sort/recsort.h"
#include "../core/write/reserve.h"
#include "helpers.h"
#include "records_cases.h"

/* Sorts nfiles generated files of lines each with every option set of the table
 * and compares with sort. */
static void sort_table(uint64_t seed, int nfiles, int64_t lines, const knobs *k0, int zero,
                       int want_passes)
{
    char *dir = scratch_dir();
    char *tmp = path_in(dir, "tmp");
    mkdir(tmp, 0700);
    rng r;
    rng_seed(&r, seed);
    for (size_t t = 0; t < NTABLE; t++) {
        const opts *o = &TABLE[t];
        char sep = o->opt[0][1] == 't' ? o->opt[0][2] : ' ';
        char *names[4], list[1024] = "";
        for (int f = 0; f < nfiles; f++) {
            char name[16];
            snprintf(name, sizeof name, "in%d", f);
            names[f] = gen_file(&r, dir, name, lines, sep, zero ? '\0' : '\n');
            strcat(list, " ");
            strcat(list, name);
        }
        char args[2048], sh[512];
        shell_opts(o, zero, sh, sizeof sh);
        snprintf(args, sizeof args, "%s%s", sh, list);
        size_t want_len;
        char *want = sort_ref(dir, args, &want_len);
        gm_keyspec ks = spec_of(o, zero);
        knobs k = *k0;
        char *out = path_in(dir, "out");
        k.output = out;
        k.tmpdir = tmp;
        gm_status st;
        int rc = records(GM_OP_SORT, &ks, &k, names, nfiles, &st);
        cr_assert_eq(rc, GM_OK, "sort%s: %s", args, st.msg);
        assert_same_file(out, want, want_len, args);
        if (want_passes) {
            int runs = 0, passes = 0;
            const char *p = strstr(said, "runs     ");
            cr_assert_not_null(p, "-v: %s", said);
            cr_assert_eq(sscanf(p, "runs %d temporary, %d merge", &runs, &passes), 2, "-v: %s",
                         said);
            cr_assert(runs > 2 && passes >= want_passes, "%d runs, %d passes: %s", runs, passes,
                      said);
        }
        cr_assert_eq(dir_entries(tmp), 0, "temporary files left");
        for (int f = 0; f < nfiles; f++)
            free(names[f]);
        free(want);
        free(out);
    }
    free(tmp);
    free(dir);
}

Test(records, sort_in_memory_small)
{
    knobs k = { .threads = 1 };
    sort_table(1, 1, 300, &k, 0, 0);
    sort_table(2, 3, 40, &k, 0, 0);
}

Test(records, sort_in_memory_parallel, .timeout = 120)
{
    knobs k = { .threads = 2 };
    sort_table(3, 1, 90000, &k, 0, 0);
    k.threads = 4;
    sort_table(4, 2, 40000, &k, 0, 0);
}

Test(records, sort_in_place_parallel, .timeout = 120)
{
    /* buckets of a thousand records at most per task: the distribution in
     * place runs on small inputs, nested (without -s and -u) */
    gm_recsort_test_task_max(1000);
    knobs k = { .threads = 2 };
    sort_table(8, 1, 90000, &k, 0, 0);
    k.threads = 3;
    sort_table(9, 2, 30000, &k, 0, 0);
}

Test(records, sort_output_reserved_or_refused, .timeout = 120)
{
    /* on two threads the output's space is reserved while the sort runs (the
     * file cut back to the output, shorter under -u); a file system that
     * refuses fallocate leaves the output as right */
    knobs k = { .threads = 2 };
    sort_table(10, 1, 3000, &k, 0, 0);
    gm_reserve_test_refuse(1);
    sort_table(11, 1, 3000, &k, 0, 0);
    gm_reserve_test_refuse(0);
}

Test(records, sort_external_runs_and_passes, .timeout = 120)
{
    knobs k = { .budget = 96 << 10, .batch = 2, .threads = 2 };
    sort_table(5, 2, 12000, &k, 0, 2);
}

Test(records, sort_external_runs_on_four_threads, .timeout = 120)
{
    /* four threads or more write each run through a mapping of its file */
    knobs k = { .budget = 96 << 10, .threads = 4 };
    sort_table(12, 2, 12000, &k, 0, 1);
}

Test(records, sort_zero_terminated)
{
    knobs k = { .threads = 2 };
    sort_table(6, 2, 500, &k, 1, 0);
    k.budget = 64 << 10;
    k.batch = 2;
    sort_table(7, 1, 12000, &k, 1, 2);
}

Test(records, sort_long_lines_under_a_small_budget)
{
    /* lines of megabytes within the budget: a block grows past the budget's block
     * size (an eighth), and the chunks spill (a line longer than the budget is
     * refused: safety_memory.c) */
    char *dir = scratch_dir();
    char *in = path_in(dir, "in"), *out = path_in(dir, "out");
    size_t big = 3 << 20, len = 0;
    char *data = malloc(3 * big + 64);
    for (int i = 0; i < 3; i++) {
        len += (size_t)sprintf(data + len, "%d,", 3 - i);
        memset(data + len, 'a' + i, big);
        len += big;
        data[len++] = '\n';
        len += (size_t)sprintf(data + len, "x,%d\n", i);
    }
    write_file(in, data, len - 1); /* no final newline */
    free(data);
    opts o = { { "-t,", "-k1,1n" } };
    gm_keyspec ks = spec_of(&o, 0);
    knobs k = { .budget = 8 << 20, .batch = 2, .output = out };
    gm_status st;
    char *names[] = { in };
    cr_assert_eq(records(GM_OP_SORT, &ks, &k, names, 1, &st), GM_OK, "%s", st.msg);
    size_t want_len;
    char *want = sort_ref(dir, "-t, -k1,1n in", &want_len);
    assert_same_file(out, want, want_len, "long lines");
    free(want);
    free(in);
    free(out);
    free(dir);
}
