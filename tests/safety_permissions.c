/*
 * safety_permissions.c - -o onto files the user may not write, in folders the
 * user cannot write, with other owners and hard links: a target replaced keeps
 * its owner, group and mode; one that cannot be replaced (other links, another
 * user's, an unwritable folder, a mount point) is written in place, and an error
 * before the output starts, up to the last line of the last input, leaves it
 * byte for byte as it was, with no spool left in -T's folder.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "safety_cases.h"

Test(safety, read_only_target_is_refused)
{
    char *dir = scratch_dir();
    const char *as = unprivileged(dir);
    char *cmd = fmt("%s sh -c \"printf '3\\n1\\n2\\n' > a && printf 'old\\n' > ro.txt && "
                    "chmod 444 ro.txt\"", as);
    cmd_result r = run_sh(dir, cmd);
    cr_assert_eq(r.status, 0);
    cmd_free(&r);
    r = gm_as(dir, as, "sort a -o ro.txt");
    char *want = sort_says(dir, as, "a -o ro.txt");
    cr_assert_str_eq(want, "gpumerge: open failed: ro.txt: Permission denied\n");
    expect(&r, 2, want);
    cr_assert_str_eq(slurp(dir, "ro.txt"), "old\n");
    cr_assert_str_eq(listing(dir), "a ro.txt ");
    cmd_free(&r);
    /* A folder the user cannot write: a new file is refused the same way. */
    r = gm_as(dir, as, "sort a -o /new-file-in-root");
    expect(&r, 2, "gpumerge: open failed: /new-file-in-root: Permission denied\n");
    cmd_free(&r);
    free(cmd);
    remove_tree(dir);
}

Test(safety, owner_group_and_mode_kept_when_replaced)
{
    if (!is_root())
        cr_skip_test("giving a file to another user needs root");
    char *dir = scratch_dir();
    unprivileged(dir); /* for nobody's ids */
    put(dir, "a", "3\n1\n2\n");
    put(dir, "out", "old\n");
    char *out = path_in(dir, "out");
    cr_assert_eq(chown(out, nobody_uid, nobody_gid), 0);
    cr_assert_eq(chmod(out, 0640), 0);
    struct stat before = stat_of(dir, "out");
    cmd_result r = gm(dir, "sort -v a -o out");
    expect(&r, 0, NULL);
    cr_assert_null(strstr(r.err, "in place"), "replaced by a rename: %s", r.err);
    struct stat after = stat_of(dir, "out");
    cr_assert_neq(after.st_ino, before.st_ino, "a new file took its place");
    cr_assert_eq(after.st_uid, nobody_uid);
    cr_assert_eq(after.st_gid, nobody_gid);
    cr_assert_eq(after.st_mode & 07777, 0640);
    cr_assert_str_eq(slurp(dir, "out"), sorted3);
    cmd_free(&r);
    free(out);
    remove_tree(dir);
}

Test(safety, hard_links_kept_written_in_place)
{
    char *dir = scratch_dir();
    put(dir, "f", "3\n1\n2\n");
    char *f = path_in(dir, "f"), *g = path_in(dir, "g");
    cr_assert_eq(link(f, g), 0);
    if (is_root()) { /* sort's table row: another owner too */
        unprivileged(dir);
        cr_assert_eq(chown(f, nobody_uid, nobody_gid), 0);
    }
    struct stat before = stat_of(dir, "f");
    cmd_result r = gm(dir, "sort -v f -o f");
    expect(&r, 0, NULL);
    cr_assert_not_null(strstr(r.err, "gpumerge: output   f written in place: it has other "
                                     "hard links\n"), "%s", r.err);
    struct stat after = stat_of(dir, "f");
    cr_assert_eq(after.st_ino, before.st_ino);
    cr_assert_eq(after.st_nlink, 2);
    cr_assert_eq(after.st_uid, before.st_uid);
    cr_assert_str_eq(slurp(dir, "f"), sorted3);
    cr_assert_str_eq(slurp(dir, "g"), sorted3, "the other link sees the new contents");
    cr_assert_str_eq(listing(dir), "f g ");
    cmd_free(&r);
    free(f);
    free(g);
    remove_tree(dir);
}

Test(safety, failed_in_place_run_leaves_the_target_untouched)
{
    /* In place, the target is truncated only when the output starts: an error
     * before that (a bad line) leaves it as it was. */
    char *dir = scratch_dir();
    put(dir, "f", "3\n1\n2\n");
    put(dir, "bad", "1\nx\n");
    char *f = path_in(dir, "f"), *g = path_in(dir, "g");
    cr_assert_eq(link(f, g), 0);
    cmd_result r = gm(dir, "sort --strict f bad -o f");
    expect(&r, 2, "gpumerge: bad:2: not an integer: 'x'\n");
    cr_assert_str_eq(slurp(dir, "f"), "3\n1\n2\n");
    cr_assert_str_eq(listing(dir), "bad f g ");
    cmd_free(&r);
    free(f);
    free(g);
    remove_tree(dir);
}

/* "1\n2\n...n\n" followed by tail: malloc'd. */
static char *counting(int n, const char *tail)
{
    size_t cap = (size_t)n * 8 + strlen(tail) + 1, len = 0;
    char *text = malloc(cap);
    for (int i = 1; i <= n; i++)
        len += (size_t)snprintf(text + len, cap - len, "%d\n", i);
    snprintf(text + len, cap - len, "%s", tail);
    return text;
}

/* Written in place (another hard link), every path (a merge in many rounds or in
 * one, on one thread or through the mapping on four, a merge in batches, an
 * external sort) reads, checks and merges every input before the target's first
 * byte changes: a bad line or a disorder at the end of the last input leaves the
 * target, which is also an input, byte for byte as it was, and the spool in -T's
 * folder is gone. */
Test(safety, in_place_error_at_the_last_line_leaves_the_target, .timeout = 120)
{
    enum { N = 100000 };
    char *dir = scratch_dir();
    char *seq = counting(N, ""), *bad = counting(N, "x\n"), *late = counting(N, "5\n");
    put(dir, "a", seq);
    put(dir, "b", seq);
    put(dir, "c", bad);
    put(dir, "d", late);
    char *a = path_in(dir, "a"), *l = path_in(dir, "a.link"), *t = path_in(dir, "tmp");
    cr_assert_eq(link(a, l), 0);
    cr_assert_eq(mkdir(t, 0755), 0);
    const char *const not_int = "gpumerge: c:100001: not an integer: 'x'\n";
    const char *const disorder = "gpumerge: d:100001: disorder: 5\n";
    const struct {
        const char *args, *err;
    } cases[] = {
        { "merge --strict -S64K --device=cpu -T tmp -o a a b c", not_int },
        { "merge --strict -S1M --device=cpu -T tmp -o a a b c", not_int },
        { "merge --strict --parallel=4 -S64K -T tmp -o a a b c", not_int },
        { "merge --strict -S64K -T tmp -o a a b d", disorder },
        { "merge --strict --parallel=4 -S64K -T tmp -o a a b d", disorder },
        { "merge --strict --batch-size=2 -S64K -T tmp -o a b a b c", not_int },
        { "sort --strict -S64K -T tmp -o a a b c", not_int },
        { "sort --strict --parallel=4 -T tmp -o a a b c", not_int },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cmd_result r = gm(dir, cases[i].args);
        expect(&r, 2, cases[i].err);
        char *now = slurp(dir, "a");
        cr_assert(strcmp(now, seq) == 0, "%s: the target changed (%zu bytes, was %zu)",
                  cases[i].args, strlen(now), strlen(seq));
        cr_assert_str_eq(listing(t), "", "%s: the spool is left", cases[i].args);
        cr_assert_str_eq(listing(dir), "a a.link b c d tmp ");
        free(now);
        cmd_free(&r);
    }
    /* The same merge without the bad input: written in place, both links see it. */
    cmd_result r = gm(dir, "merge -v -S64K -T tmp -o a a b");
    expect(&r, 0, NULL);
    cr_assert_not_null(strstr(r.err, "output   a written in place: it has other hard links\n"),
                       "%s", r.err);
    char *want = malloc(2 * strlen(seq) + 1), *p = want;
    for (int i = 1; i <= N; i++)
        p += sprintf(p, "%d\n%d\n", i, i);
    char *now = slurp(dir, "a.link");
    cr_assert(strcmp(now, want) == 0, "the merge, through the other link");
    cr_assert_eq(stat_of(dir, "a").st_nlink, 2);
    cr_assert_str_eq(listing(t), "");
    cmd_free(&r);
    free(now);
    free(want);
    free(seq);
    free(bad);
    free(late);
    free(a);
    free(l);
    free(t);
    remove_tree(dir);
}

Test(safety, another_users_file_is_written_in_place)
{
    if (!is_root())
        cr_skip_test("a file of another user needs root to set up");
    char *dir = scratch_dir();
    const char *as = unprivileged(dir);
    put(dir, "a", "3\n1\n2\n");
    put(dir, "out", "old\n");
    char *out = path_in(dir, "out");
    cr_assert_eq(chmod(out, 0666), 0); /* root's, writable by all */
    cmd_result r = gm_as(dir, as, "sort -v a -o out");
    expect(&r, 0, NULL);
    cr_assert_not_null(strstr(r.err, "written in place: its owner, group or mode cannot be "
                                     "given to a new file"), "%s", r.err);
    struct stat after = stat_of(dir, "out");
    cr_assert_eq(after.st_uid, 0, "still root's");
    cr_assert_str_eq(slurp(dir, "out"), sorted3);
    cr_assert_str_eq(listing(dir), "a out ");
    cmd_free(&r);
    free(out);
    remove_tree(dir);
}

Test(safety, unwritable_folder_with_a_writable_file)
{
    char *dir = scratch_dir();
    const char *as = unprivileged(dir);
    char *cmd = fmt("%s sh -c \"mkdir ro && printf '3\\n1\\n2\\n' > ro/f && chmod 666 ro/f && "
                    "chmod 555 ro\"", as);
    cmd_result r = run_sh(dir, cmd);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cmd_free(&r);
    r = gm_as(dir, as, "sort -v ro/f -o ro/f");
    expect(&r, 0, NULL);
    cr_assert_not_null(strstr(r.err, "gpumerge: output   ro/f written in place: its folder "
                                     "cannot take a temporary file\n"), "%s", r.err);
    cr_assert_str_eq(slurp(dir, "ro/f"), sorted3);
    cmd_free(&r);
    free(cmd);
    remove_tree(dir);
}

Test(safety, rename_refused_falls_back_to_a_copy)
{
    if (!is_root())
        cr_skip_test("a bind mount needs root");
    char *dir = scratch_dir();
    put(dir, "a", "3\n1\n2\n");
    put(dir, "src", "old\n");
    put(dir, "out", "old\n");
    char *src = path_in(dir, "src"), *out = path_in(dir, "out");
    if (mount(src, out, NULL, MS_BIND, NULL) != 0)
        cr_skip_test("cannot bind-mount a file: %s", strerror(errno));
    cmd_result r = gm(dir, "sort a -o out"); /* rename onto a mount point: EBUSY */
    umount(out);
    expect(&r, 0, "");
    cr_assert_str_eq(slurp(dir, "src"), sorted3, "written through the mount");
    cr_assert_str_eq(listing(dir), "a out src ");
    cmd_free(&r);
    free(src);
    free(out);
    remove_tree(dir);
}
