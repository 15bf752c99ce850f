/*
 * test_report.c - the shape of -v (core/plan/report.h) and of --progress
 * (core/base/progress.h) as users see them on standard error: -v's facts and stage
 * rows aligned in their columns, the plan first, the rows in the order data flows,
 * the total last and at least the rows' sum, no word of a GPU from a run that
 * never started one, for the integer path, the records path, the external sort,
 * merge and check; --progress on a pipe: plain lines, the share done never
 * falling, no line saying what the one before said, at most one line a period,
 * and a last "done 100%" line; an external sort's "sorting" and "merging runs"
 * lines with shares between its reading's and its writing's, and a time left.
 *
 * $GPUMERGE names the binary; $GPUMERGE_FORCED (--progress-tick) makes a short
 * run say many progress lines.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "helpers.h"

enum { KEY = 8, PREFIX = 10 }; /* the key's column; "gpumerge: " */

/* One line of -v: its key, and a stage row's seconds. */
struct row {
    char key[KEY + 1];
    int stage;
    double secs;
};

/* Splits err into -v lines, asserting each one's shape: "gpumerge: ", a key of
 * one word padded to its column, a space, the value; a stage row's value is its
 * seconds right-aligned in 8 characters and " s", then nothing or two spaces and
 * a note. Returns the number of lines. */
static int rows_of(const char *cmd, const char *err, struct row *rows, int max)
{
    int n = 0;
    for (const char *line = err; *line; n++) {
        const char *end = strchr(line, '\n');
        cr_assert_not_null(end, "%s: an unended line: %s", cmd, line);
        cr_assert_lt(n, max, "%s: too many lines: %s", cmd, err);
        cr_assert(strncmp(line, "gpumerge: ", PREFIX) == 0, "%s: %s", cmd, line);
        const char *t = line + PREFIX;
        size_t k = strcspn(t, " \n");
        cr_assert(k > 0 && k <= KEY && end - t > KEY + 1, "%s: the key: %.*s", cmd,
                  (int)(end - line), line);
        for (size_t i = k; i <= KEY; i++)
            cr_assert_eq(t[i], ' ', "%s: the key's column: %.*s", cmd, (int)(end - line), line);
        memcpy(rows[n].key, t, k);
        rows[n].key[k] = '\0';
        char *num_end;
        double v = strtod(t + KEY + 1, &num_end);
        rows[n].stage = num_end == t + KEY + 1 + 8 && strncmp(num_end, " s", 2) == 0 &&
                        (num_end + 2 == end || strncmp(num_end + 2, "  ", 2) == 0);
        rows[n].secs = v;
        if (!rows[n].stage)
            cr_assert_neq(t[KEY + 1], ' ', "%s: a fact's value: %.*s", cmd, (int)(end - line),
                          line);
        line = end + 1;
    }
    return n;
}

/* The -v of one command: its facts (want_facts, in this order, before any row),
 * its stage rows (want_rows exactly, in this order, total last), the total at
 * least the rows' sum, and no line of a GPU. */
/* -v says nothing twice: no line repeated, and the device's line (what the run
 * found) does not restate the engine's reason (what the plan chose). */
static void assert_said_once(const char *args, const char *err)
{
    for (const char *l = err; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
        size_t len = strcspn(l, "\n");
        for (const char *m = l + len; *m; m++)
            if (m[-1] == '\n' && strncmp(m, l, len) == 0 && (m[len] == '\n' || !m[len]))
                cr_assert_fail("%s: a line said twice: %.*s", args, (int)len, l);
    }
    const char *e = strstr(err, "gpumerge: engine   "), *d = strstr(err, "gpumerge: device   ");
    if (!e || !d)
        return;
    const char *open = strchr(e, '('), *end = strchr(e, '\n');
    if (!open || !end || open > end)
        return;
    char why[512];
    snprintf(why, sizeof why, "%.*s", (int)(end - open), open);
    size_t dl = strcspn(d, "\n");
    char dev[512];
    snprintf(dev, sizeof dev, "%.*s", (int)dl, d);
    cr_assert_null(strstr(dev, why), "%s: the device's line restates the engine's: %s", args, err);
}

static void assert_report(const char *dir, const char *args, int status,
                          const char *const *want_facts, const char *const *want_rows)
{
    char *cmd;
    if (asprintf(&cmd, "'%s' %s", gpumerge_path(), args) < 0)
        abort();
    cmd_result r = run_sh(dir, cmd);
    cr_assert_eq(r.status, status, "%s: status %d: %s", args, r.status, r.err);
    struct row rows[64];
    int n = rows_of(args, r.err, rows, 64);
    int f = 0, s = 0, first_row = -1;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        cr_assert(strcmp(rows[i].key, "gpu") && strcmp(rows[i].key, "cuda") &&
                      strcmp(rows[i].key, "text"),
                  "%s: a GPU line from a CPU run: %s", args, r.err);
        if (!rows[i].stage) {
            cr_assert_eq(first_row, -1, "%s: a fact among the rows: %s", args, r.err);
            if (want_facts[f] && strcmp(rows[i].key, want_facts[f]) == 0)
                f++;
            continue;
        }
        if (first_row < 0)
            first_row = i;
        cr_assert(want_rows[s] != NULL && strcmp(rows[i].key, want_rows[s]) == 0,
                  "%s: row %s, want %s: %s", args, rows[i].key,
                  want_rows[s] ? want_rows[s] : "none", r.err);
        s++;
        if (strcmp(rows[i].key, "total") != 0)
            sum += rows[i].secs;
        else
            cr_assert_geq(rows[i].secs + 0.0005 * s, sum, "%s: the total below the rows' sum: %s",
                          args, r.err);
    }
    cr_assert_null(want_facts[f], "%s: lacks the fact %s, or out of order: %s", args,
                   want_facts[f], r.err);
    cr_assert_null(want_rows[s], "%s: lacks the row %s: %s", args, want_rows[s], r.err);
    cr_assert_eq(strcmp(rows[n - 1].key, "total"), 0, "%s: the total is not last", args);
    cr_assert_null(strstr(r.err, "CUDA"), "%s: %s", args, r.err);
    assert_said_once(args, r.err);
    cmd_free(&r);
    free(cmd);
}

static char *data_dir(void)
{
    char *dir = scratch_dir();
    char *cmd;
    if (asprintf(&cmd, "cd '%s' && awk 'BEGIN { srand(7); for (i = 0; i < 200000; i++) "
                       "{ printf \"%%d\\n\", int(rand() * 2e9) - 1e9; printf \"r%%d %%d.%%d\\n\", "
                       "i, int(rand() * 1e6), i %% 10 > \"/dev/stderr\" } }' > ints 2> recs && "
                       "LC_ALL=C sort -n ints > sorted && LC_ALL=C sort -k2,2n recs > rsorted",
                 dir) < 0 ||
        system(cmd) != 0)
        cr_assert_fail("making the inputs: %s", cmd);
    free(cmd);
    return dir;
}

static const char *const PLAN[] = { "order", "plan", "path", "engine", "threads", "budget", "fan-in",
                                    NULL };

Test(report, verbose_integer_path, .timeout = 120)
{
    char *dir = data_dir();
    const char *const sort_rows[] = { "start-up", "open", "read", "parse", "sort", "write",
                                      "finish", "clean-up", "total", NULL };
    assert_report(dir, "sort -v ints -o out", 0, PLAN, sort_rows);
    assert_report(dir, "sort -v --device=cpu --parallel=1 ints -o out", 0, PLAN, sort_rows);
    const char *const runs_facts[] = { "order", "plan", "path", "engine", "threads", "budget", "fan-in",
                                       "keys", "runs", "device", NULL };
    const char *const ext_rows[] = { "start-up", "open", "read", "parse", "sort", "spill",
                                     "write", "finish", "clean-up", "total", NULL };
    assert_report(dir, "sort -v -S 1M ints -o out", 0, runs_facts, ext_rows);
    const char *const merge_rows[] = { "start-up", "open", "read", "parse", "merge", "write",
                                       "finish", "clean-up", "total", NULL };
    assert_report(dir, "merge -v sorted sorted -o out", 0, PLAN, merge_rows);
    const char *const check_rows[] = { "start-up", "open", "read", "parse", "clean-up",
                                       "total", NULL };
    assert_report(dir, "check -v sorted", 0, PLAN, check_rows);
    assert_report(dir, "-c -v sorted", 0, PLAN, check_rows);
    free(dir);
}

/* The records path's rows begin and end as the integer path's: start-up first,
 * clean-up and the total last; so do those of a run the integer path hands over
 * (gpumerge's default -n on lines that are not integers). */
Test(report, verbose_records_path, .timeout = 120)
{
    char *dir = data_dir();
    const char *const sort_rows[] = { "start-up", "open", "read", "parse", "sort", "write",
                                      "clean-up", "total", NULL };
    assert_report(dir, "sort -v -k2,2 recs -o out", 0, PLAN, sort_rows);
    assert_report(dir, "sort -v -n recs -o out", 0, PLAN, sort_rows);
    const char *const ext_rows[] = { "start-up", "open", "read", "parse", "sort", "spill",
                                     "merge", "clean-up", "total", NULL };
    const char *const runs_facts[] = { "order", "plan", "path", "engine", "threads", "budget", "fan-in",
                                       "runs", NULL };
    assert_report(dir, "sort -v -S 1M -k2,2 recs -o out", 0, runs_facts, ext_rows);
    const char *const merge_rows[] = { "start-up", "open", "merge", "clean-up", "total", NULL };
    assert_report(dir, "merge -v -k2,2 rsorted rsorted -o out", 0, PLAN, merge_rows);
    const char *const check_rows[] = { "start-up", "open", "check", "clean-up", "total", NULL };
    assert_report(dir, "check -v -k2,2 rsorted", 0, PLAN, check_rows);
    assert_report(dir, "-c -v -k2,2 rsorted", 0, PLAN, check_rows);
    free(dir);
}

/* ---------------------------------------------------------------- --progress */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The parts of a progress line [line, end) other than its rate ("N MB/s") and
 * its time ("S s left", "in S s"), joined into head. */
static void said_of(const char *line, const char *end, char *head, size_t size)
{
    size_t n = 0;
    head[0] = '\0';
    while (line < end) {
        const char *comma = strstr(line, ", ");
        const char *part_end = comma && comma < end ? comma : end;
        size_t len = (size_t)(part_end - line);
        int timing = (len > 5 && strncmp(part_end - 5, " MB/s", 5) == 0) ||
                     (len > 7 && strncmp(part_end - 7, " s left", 7) == 0) ||
                     strncmp(line, "in ", 3) == 0;
        if (!timing && n + len + 2 < size)
            n += (size_t)snprintf(head + n, size - n, "%.*s|", (int)len, line);
        line = part_end + (part_end < end ? 2 : 0);
    }
}

/* Runs "BINARY args" with --progress into a pipe and checks its lines: every one
 * a plain progress line (no \r), the share never falling, the bytes read never
 * above the inputs' size, none saying what the one before said (its rate and
 * time left aside), at most one a tick_ms period (and the last), the last "done
 * 100%". Returns the number of lines; *err (unless NULL) takes the lines, the
 * caller's to free. */
static int assert_progress(const char *dir, const char *binary, const char *args, int tick_ms,
                           char **err)
{
    char *cmd;
    if (asprintf(&cmd, "'%s' %s", binary, args) < 0)
        abort();
    double t0 = now_s();
    cmd_result r = run_sh(dir, cmd);
    double wall = now_s() - t0;
    cr_assert_eq(r.status, 0, "%s: %s", args, r.err);
    cr_assert_null(strchr(r.err, '\r'), "%s: \\r on a pipe", args);
    int n = 0, pct = -1;
    char before[512] = "";
    const char *last = NULL;
    for (const char *line = r.err; *line; n++) {
        const char *end = strchr(line, '\n');
        cr_assert_not_null(end, "%s: an unended line: %s", args, r.err);
        const char *p = "gpumerge: progress: ";
        cr_assert(strncmp(line, p, strlen(p)) == 0, "%s: %.*s", args, (int)(end - line), line);
        /* the share, where the inputs' size is known */
        const char *sp = line + strlen(p) + strcspn(line + strlen(p), " ,");
        int v;
        if (sp < end && sscanf(sp, " %d%%", &v) == 1) {
            cr_assert_geq(v, pct, "%s: the share fell: %s", args, r.err);
            pct = v;
        }
        /* "R of T MB read": R never above T */
        const char *of = strstr(line, " MB read");
        if (of && of < end) {
            const char *num = of;
            while (num > line && num[-1] != ',')
                num--;
            double got, total;
            if (sscanf(num, " %lf of %lf", &got, &total) == 2)
                cr_assert_leq(got, total, "%s: more read than the inputs hold: %.*s", args,
                              (int)(end - line), line);
        }
        /* what the line says, less its rate and time left */
        char head[512];
        said_of(line, end, head, sizeof head);
        cr_assert(strstr(line, " MB/s") != NULL && strstr(line, " MB/s") < end,
                  "%s: no rate: %.*s", args, (int)(end - line), line);
        cr_assert_str_neq(head, before, "%s: a line says what the one before said: %s", args,
                          r.err);
        snprintf(before, sizeof before, "%s", head);
        last = line;
        line = end + 1;
    }
    cr_assert_gt(n, 0, "%s: no progress line", args);
    cr_assert(strncmp(last, "gpumerge: progress: done 100%, ", 31) == 0, "%s: the last line: %s",
              args, last);
    cr_assert_eq(strstr(r.err, "gpumerge: progress: done"), last, "%s: done before the end: %s",
                 args, r.err);
    int most = (int)(wall * 1000 / tick_ms) + 2;
    cr_assert_leq(n, most, "%s: %d lines in %.3f s, one each %d ms at most: %s", args, n, wall,
                  tick_ms, r.err);
    if (err) {
        *err = r.err;
        r.err = NULL;
    }
    cmd_free(&r);
    free(cmd);
    return n;
}

/* The program as shipped: four lines a second at most, through every stage. */
Test(report, progress_lines_on_a_pipe, .timeout = 120)
{
    char *dir = data_dir();
    const char *g = gpumerge_path();
    assert_progress(dir, g, "sort --progress --parallel=1 -S 1M ints -o out", 250, NULL);
    assert_progress(dir, g, "sort --progress -S 1M -k2,2 recs -o out", 250, NULL);
    assert_progress(dir, g, "merge --progress sorted sorted -o out", 250, NULL);
    assert_progress(dir, g, "check --progress sorted", 250, NULL);
    assert_progress(dir, g, "check --progress -k2,2 rsorted", 250, NULL);
    /* a pipe's size is not known: no share, but the last line */
    char *cmd;
    if (asprintf(&cmd, "cat ints | '%s' sort --progress -o out", g) < 0)
        abort();
    cmd_result r = run_sh(dir, cmd);
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *done = strstr(r.err, "gpumerge: progress: done, ");
    cr_assert(done != NULL && strchr(done, '\n')[1] == '\0', "%s", r.err);
    cmd_free(&r);
    free(cmd);
    /* without --progress, nothing */
    if (asprintf(&cmd, "'%s' sort -S 1M ints -o out", g) < 0)
        abort();
    r = run_sh(dir, cmd);
    cr_assert_eq(r.status, 0);
    cr_assert_str_eq(r.err, "");
    cmd_free(&r);
    free(cmd);
    free(dir);
}

/* A short period, so that runs of a fraction of a second say many lines: the
 * external sort's runs written and merged, the records path's, a merge's. */
Test(report, progress_through_every_stage, .timeout = 120)
{
    const char *forced = getenv("GPUMERGE_FORCED");
    if (!forced)
        cr_skip_test("GPUMERGE_FORCED (make builds it) not set");
    char *dir = data_dir();
    char *f;
    if (asprintf(&f, "%s' '--progress-tick=2", forced) < 0)
        abort();
    int lines = assert_progress(dir, f, "sort --progress --parallel=1 -S 1M ints -o out", 2, NULL);
    lines += assert_progress(dir, f, "sort --progress --parallel=1 -S 1M -k2,2 recs -o out", 2,
                             NULL);
    lines += assert_progress(dir, f, "merge --progress --parallel=1 sorted sorted -o out", 2, NULL);
    /* whole lines by -n that are not integers: the integer path hands them over
     * after its first block (or more, from a larger input) */
    lines += assert_progress(dir, f, "sort --progress --parallel=1 -n recs -o out", 2, NULL);
    cmd_result c8 = run_sh(dir, "cat recs recs recs recs recs recs recs recs > recs8");
    cr_assert_eq(c8.status, 0);
    cmd_free(&c8);
    lines += assert_progress(dir, f, "sort --progress -n recs8 -o out", 2, NULL);
    cr_assert_gt(lines, 3, "too few lines to tell");
    /* the external sort of a larger input says it reads, and names its runs */
    char *cmd;
    if (asprintf(&cmd, "cat ints ints ints ints ints ints ints ints > ints8 && '%s' sort "
                       "--progress --parallel=1 -S 1M ints8 -o out", f) < 0)
        abort();
    cmd_result r = run_sh(dir, cmd);
    cr_assert(strstr(r.err, " runs written, ") != NULL, "%s", r.err);
    cr_assert(strstr(r.err, "progress: reading ") != NULL, "%s", r.err);
    cmd_free(&r);
    free(cmd);
    free(f);
    free(dir);
}

/* One progress line as the next test reads it: its stage, its share (-1: none)
 * and whether it gives the time left. */
struct said {
    char stage[16];
    int pct;
    int left;
};

/* The progress lines of err into lines (at most max). Returns their number. */
static int said_lines(const char *err, struct said *lines, int max)
{
    const char *p = "gpumerge: progress: ";
    int n = 0;
    for (const char *line = err; *line && n < max; n++) {
        const char *end = strchr(line, '\n');
        cr_assert_not_null(end, "an unended line: %s", err);
        cr_assert(strncmp(line, p, strlen(p)) == 0, "%.*s", (int)(end - line), line);
        const char *t = line + strlen(p);
        size_t k = strspn(t, "abcdefghijklmnopqrstuvwxyz ");
        size_t len = k > 0 && t[k - 1] == ' ' ? k - 1 : k;
        cr_assert_lt(len, sizeof lines[n].stage, "%.*s", (int)(end - line), line);
        memcpy(lines[n].stage, t, len);
        lines[n].stage[len] = '\0';
        if (sscanf(t + k, "%d%%", &lines[n].pct) != 1)
            lines[n].pct = -1;
        const char *left = strstr(line, " s left");
        lines[n].left = left != NULL && left < end;
        line = end + 1;
    }
    return n;
}

/* The stages between reading and writing move the share and say the time left:
 * an external sort that sorts its chunks and merges its runs in passes says a
 * "sorting" or "merging runs" line whose share is above the last "reading"
 * line's and below the first "writing" line's, and such lines give the time
 * left. */
Test(report, progress_moves_while_sorting_and_merging_runs, .timeout = 120)
{
    const char *forced = getenv("GPUMERGE_FORCED");
    if (!forced)
        cr_skip_test("GPUMERGE_FORCED (make builds it) not set");
    char *dir = data_dir();
    cmd_result c8 = run_sh(dir, "cat ints ints ints ints ints ints ints ints > ints8 && "
                                "cat recs recs recs recs recs recs recs recs > recs8");
    cr_assert_eq(c8.status, 0);
    cmd_free(&c8);
    char *f;
    if (asprintf(&f, "%s' '--progress-tick=2", forced) < 0)
        abort();
    const char *const runs[] = { "sort --progress --parallel=1 -S 1M ints8 -o out",
                                 "sort --progress --parallel=1 -S 1M -k2,2 recs8 -o out", NULL };
    for (int i = 0; runs[i]; i++) {
        char *err;
        assert_progress(dir, f, runs[i], 2, &err);
        struct said lines[4096];
        int n = said_lines(err, lines, 4096);
        int read_pct = -1, write_pct = 101, between = 0, left = 0;
        for (int j = 0; j < n; j++) {
            if (strcmp(lines[j].stage, "reading") == 0)
                read_pct = lines[j].pct;
            if (strcmp(lines[j].stage, "writing") == 0 && write_pct == 101)
                write_pct = lines[j].pct;
        }
        for (int j = 0; j < n; j++) {
            if (strcmp(lines[j].stage, "sorting") && strcmp(lines[j].stage, "merging runs"))
                continue;
            between |= lines[j].pct > read_pct && lines[j].pct < write_pct;
            left |= lines[j].left;
        }
        cr_assert(read_pct >= 0 && write_pct <= 100, "%s: no reading or writing line: %s",
                  runs[i], err);
        cr_assert(between, "%s: no sorting or merging runs line between %d%% and %d%%: %s",
                  runs[i], read_pct, write_pct, err);
        cr_assert(left, "%s: no time left while sorting or merging runs: %s", runs[i], err);
        free(err);
    }
    free(f);
    free(dir);
}
