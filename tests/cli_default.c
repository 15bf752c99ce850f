/*
 * cli_default.c - gpumerge's default order where no order is named (-n, as
 * sort -n reads numbers): the one line it says of the first line with no number
 * (FILE:LINE, once, whichever path reads it; output and status still sort -n's),
 * and where it says nothing (an order named, gpusort beside $GPUMERGE, numbers
 * and blanks only, -C). Each case runs against LC_ALL=C sort.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_cases.h"
#include "helpers.h"

/* What gpumerge says of a line with no number where no order is named. */
#define NO_NUMBER(at, what)                                                                \
    "gpumerge: " at ": no number in this " what "; lines are ordered by -n, gpumerge's "   \
    "default (name an order such as -n, -d or -f, or use gpusort for sort's byte order)\n"
#define IN_LINE(at) NO_NUMBER(at, "line")
#define IN_KEY(at) NO_NUMBER(at, "line's key")

typedef struct {
    const char *ours;   /* after "gpumerge SUBCOMMAND" (or gpusort's arguments) */
    const char *theirs; /* LC_ALL=C sort's arguments */
    const char *err;    /* gpumerge's standard error, whole */
} default_case;

/* The inputs of the default order's cases: numbers with a line of text among
 * them (after 200000 integers, which the integer path takes before it hands the
 * rest over, or under -S 64K, which writes runs), sorted ones for -m and -c, keys
 * with and without numbers, blank lines, and the forms -n reads as numbers. */
static char *default_inputs(void)
{
    char *dir = scratch_dir();
    cmd_result t = run_sh(dir, "printf '3\\nb\\n1\\na\\n' > text && "
                               "printf '3\\n1\\n2\\n' > nums && printf '1\\n2\\n3\\n' > snums && "
                               "printf -- '-1\\nabc\\n1\\n2\\n' > stext && "
                               "printf '1\\n\\n  \\n\\t\\n-2\\n' > blank && "
                               "printf ' -.5\\n  7\\n.5\\n-0\\n0x\\n' > forms && "
                               "printf '1\\n+5\\n' > plus && "
                               "printf 'x,3\\ny,\\nz,b\\nw,1\\n' > keyed && "
                               "(seq 1 200000; echo abc; echo 5) > far && "
                               "(seq -200000 -1; echo ' .x'; seq 1 3) > sfar && "
                               "(seq 1 30000 | sed 's/^/k,/'; echo k,x; echo k,7) > farkey");
    cr_assert_eq(t.status, 0, "%s", t.err);
    cmd_free(&t);
    return dir;
}

/* Runs each case, gpumerge (through gm(), or gpusort beside it when sub is NULL)
 * against sort: the same output and exit status, and its standard error. */
static void run_default_cases(const char *dir, const char *sub, const default_case *cases,
                              size_t n)
{
    char *gpusort = strdup(gpumerge_path()), *slash = strrchr(gpusort, '/');
    char *at = slash ? (slash[1] = '\0', gpusort) : "";
    for (size_t i = 0; i < n; i++) {
        const default_case *c = &cases[i];
        cmd_result ours;
        if (sub) {
            ours = gm(dir, sub, c->ours);
        } else {
            char *cmd;
            if (asprintf(&cmd, "'%sgpusort' %s", at, c->ours) < 0)
                abort();
            ours = run_sh(dir, cmd);
            free(cmd);
        }
        char *cmd;
        if (asprintf(&cmd, "LC_ALL=C sort %s", c->theirs) < 0)
            abort();
        cmd_result theirs = run_sh(dir, cmd);
        cr_expect_eq(ours.status, theirs.status, "%s: exit %d, sort's %d: %s", c->ours,
                     ours.status, theirs.status, ours.err);
        cr_expect(ours.out_len == theirs.out_len && memcmp(ours.out, theirs.out, ours.out_len) == 0,
                  "%s: output differs from sort %s", c->ours, c->theirs);
        cr_expect_str_eq(ours.err, c->err, "%s", c->ours);
        cmd_free(&ours);
        cmd_free(&theirs);
        free(cmd);
    }
    free(gpusort);
}

/* Where no order is named, the first line whose key holds no number is named
 * once, FILE:LINE as sort names lines, whichever input it is in and however far
 * in; output and status stay sort -n's. */
Test(cli, default_order_names_a_line_without_a_number, .timeout = 120)
{
    static const default_case sorts[] = {
        { "text", "-n text", IN_LINE("text:2") },
        { "nums text", "-n nums text", IN_LINE("text:2") },
        { "< text", "-n < text", IN_LINE("-:2") },
        { "nums - < text", "-n nums - < text", IN_LINE("-:2") },
        { "text text nums", "-n text text nums", IN_LINE("text:2") },
        { "plus", "-n plus", IN_LINE("plus:2") },
        { "blank text", "-n blank text", IN_LINE("text:2") },
        { "far", "-n far", IN_LINE("far:200001") },
        { "< far", "-n far", IN_LINE("-:200001") },
        { "-S 64K far", "-n far", IN_LINE("far:200001") },
        { "-S 64K < far", "-n far", IN_LINE("-:200001") },
        { "--device=cpu text", "-n text", IN_LINE("text:2") },
        { "-t, -k2,2 keyed", "-n -t, -k2,2 keyed", IN_KEY("keyed:3") },
        { "-t, -k2,2 -S 64K farkey", "-n -t, -k2,2 farkey", IN_KEY("farkey:30001") },
        { "-t, -k2,2 -k1,1r farkey", "-t, -k2,2n -k1,1r farkey", IN_KEY("farkey:30001") },
        { "-r -u far", "-n -r -u far", IN_LINE("far:200001") },
    };
    static const default_case merges[] = {
        { "snums stext", "-m -n snums stext", IN_LINE("stext:2") },
        { "stext snums", "-m -n stext snums", IN_LINE("stext:2") },
        { "snums - < stext", "-m -n snums stext", IN_LINE("-:2") },
        { "-S 64K sfar snums", "-m -n sfar snums", IN_LINE("sfar:200001") },
    };
    static const default_case checks[] = {
        { "stext", "-c -n stext", IN_LINE("stext:2") },
        { "< sfar", "-c -n sfar", IN_LINE("-:200001") },
        { "text", "-c -n text", IN_LINE("text:2") "gpumerge: text:2: disorder: b\n" },
    };
    static const default_case options[] = { /* sort's own options for them */
        { "-m snums stext", "-m -n snums stext", IN_LINE("stext:2") },
        { "-c sfar", "-c -n sfar", IN_LINE("sfar:200001") },
    };
    char *dir = default_inputs();
    run_default_cases(dir, "sort", sorts, sizeof sorts / sizeof sorts[0]);
    run_default_cases(dir, "merge", merges, sizeof merges / sizeof merges[0]);
    run_default_cases(dir, "check", checks, sizeof checks / sizeof checks[0]);
    run_default_cases(dir, "", options, sizeof options / sizeof options[0]);
    free(dir);
}

/* Nothing is said where an order is named, by gpusort, of lines that all hold
 * numbers (in the forms -n reads) or are blank, or by -C; the same input with
 * no order named is what does. */
Test(cli, default_order_says_nothing_where_it_should_not)
{
    static const default_case sorts[] = {
        { "text", "-n text", IN_LINE("text:2") },
        { "-n text", "-n text", "" },
        { "-d text", "-d text", "" },
        { "-f text", "-f text", "" },
        { "-g text", "-g text", "" },
        { "--sort=numeric text", "-n text", "" },
        { "-k1,1n text", "-k1,1n text", "" },
        { "-t, -k2,2n keyed", "-t, -k2,2n keyed", "" },
        { "-t, -k2,2d keyed", "-t, -k2,2d keyed", "" },
        { "-t, -k2,2r keyed", "-t, -k2,2r keyed", "" }, /* 'r' alone orders by bytes */
        { "nums far", "-n nums far", IN_LINE("far:200001") },
        { "nums snums", "-n nums snums", "" },
        { "blank", "-n blank", "" },
        { "forms", "-n forms", "" },
        { "-t, -k3 keyed", "-n -t, -k3 keyed", "" }, /* no third field: blank keys */
    };
    static const default_case gpusort[] = {
        { "text", "text", "" },
        { "-t, -k2,2 keyed", "-t, -k2,2 keyed", "" },
        { "-c stext", "-c stext", "gpumerge: stext:3: disorder: 1\n" },
    };
    static const default_case checks[] = {
        { "-C stext", "-C -n stext", "" },
        { "-C text", "-C -n text", "" },
    };
    char *dir = default_inputs();
    run_default_cases(dir, "sort", sorts, sizeof sorts / sizeof sorts[0]);
    run_default_cases(dir, NULL, gpusort, sizeof gpusort / sizeof gpusort[0]);
    run_default_cases(dir, "check", checks, sizeof checks / sizeof checks[0]);
    free(dir);
}
