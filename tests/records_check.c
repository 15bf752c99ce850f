/*
 * records_check.c - the records path's check (-c) against LC_ALL=C sort -c:
 * sorted and unsorted inputs under every option set of the table, the status and
 * the file and line the message names; every input checked in order, -u's
 * equal keys as a disorder, and -C, where the status alone decides.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/records/records.h"
#include "helpers.h"
#include "records_cases.h"

/* sort -c's message for file, without "sort: ", or "" when sorted. */
static char *sort_check(const char *dir, const char *args, int *status)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "LC_ALL=C sort -c %s", args);
    cmd_result res = run_sh(dir, cmd);
    *status = res.status;
    char *msg = strdup(strncmp(res.err, "sort: ", 6) == 0 ? res.err + 6 : res.err);
    char *nl = strchr(msg, '\n');
    if (nl)
        *nl = '\0';
    cmd_free(&res);
    return msg;
}

Test(records, check_against_sort_c)
{
    char *dir = scratch_dir();
    rng r;
    rng_seed(&r, 21);
    for (size_t t = 0; t < NTABLE; t++) {
        const opts *o = &TABLE[t];
        char *names[1], list[64], sh[512], args[1024];
        for (int sorted = 0; sorted <= 1; sorted++) {
            if (sorted) {
                sorted_files(&r, dir, o, 1, 300, names, list, sizeof list);
            } else {
                char sep = o->opt[0][1] == 't' ? o->opt[0][2] : ' ';
                names[0] = gen_file(&r, dir, "m0", 300, sep, '\n');
            }
            shell_opts(o, 0, sh, sizeof sh);
            snprintf(args, sizeof args, "%s m0", sh);
            int status;
            char *want = sort_check(dir, args, &status);
            gm_keyspec ks = spec_of(o, 0);
            knobs k = { .threads = 2 };
            gm_status st;
            int rc = records(GM_OP_CHECK, &ks, &k, names, 1, &st);
            cr_assert_eq(rc, status ? GM_DISORDER : GM_OK, "check%s: %d against sort's %d (%s)",
                         args, rc, status, st.msg);
            if (status) {
                /* the same file and line; the text shown as the integer path shows it */
                const char *colon = strstr(want, ": disorder: ");
                cr_assert_not_null(colon, "%s", want);
                char where[4200];
                snprintf(where, sizeof where, "m0%.*s", (int)(colon - strchr(want, ':')),
                         strchr(want, ':'));
                char *mine = strstr(st.msg, "/m0:");
                cr_assert_not_null(mine, "%s", st.msg);
                cr_assert(strncmp(mine + 1, where, strlen(where)) == 0, "%s against sort's %s",
                          st.msg, want);
            }
            free(want);
            free(names[0]);
        }
    }
    free(dir);
}

Test(records, check_message_unique_and_quiet)
{
    char *dir = scratch_dir();
    char *a = path_in(dir, "a"), *b = path_in(dir, "b");
    write_text(a, "1 x\n2 y\n2 z\n");
    write_text(b, "1\n3\n2\n");
    opts o = { { "-k1,1n" } };
    gm_keyspec ks = spec_of(&o, 0);
    knobs k = { 0 };
    gm_status st;
    char *names[] = { a, b };
    cr_assert_eq(records(GM_OP_CHECK, &ks, &k, names, 2, &st), GM_DISORDER);
    char want[4200];
    snprintf(want, sizeof want, "%s:3: disorder: 2", b);
    cr_assert_str_eq(st.msg, want, "every input is checked, in order");
    /* -u: equal keys are a disorder */
    opts ou = { { "-k1,1n", "-u" } };
    gm_keyspec ksu = spec_of(&ou, 0);
    cr_assert_eq(records(GM_OP_CHECK, &ksu, &k, names, 1, &st), GM_DISORDER);
    snprintf(want, sizeof want, "%s:3: disorder: 2 z", a);
    cr_assert_str_eq(st.msg, want);
    /* -C: the status alone decides */
    k.quiet = 1;
    cr_assert_eq(records(GM_OP_CHECK, &ksu, &k, names, 1, &st), GM_DISORDER);
    cr_assert_eq(records(GM_OP_CHECK, &ks, &k, names, 1, &st), GM_OK);
    free(a);
    free(b);
    free(dir);
}
