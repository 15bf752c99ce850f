/*
 * safety_links.c - where -o leads: through symbolic links (a dangling chain
 * creates its target, a link to a file stays a link), through names of open
 * descriptors (written in place, never onto an input when standard output is
 * closed), onto an input (through a link too, and as the core sees it), and
 * targets that cannot be opened (a folder, a missing folder), worded as sort
 * words them.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/write/output.h"
#include "helpers.h"
#include "safety_cases.h"

/* ---------------------------------------------------------------- links */

Test(safety, dangling_symlink_creates_its_target)
{
    char *dir = scratch_dir();
    put(dir, "a", "3\n1\n2\n");
    char *link = path_in(dir, "link.txt"), *sub = path_in(dir, "sub");
    cr_assert_eq(mkdir(sub, 0755), 0);
    cr_assert_eq(symlink("sub/chain", link), 0);
    char *chain = path_in(sub, "chain");
    cr_assert_eq(symlink("../target.txt", chain), 0); /* relative to sub/ */
    cmd_result r = gm(dir, "sort a -o link.txt");
    expect(&r, 0, "");
    cr_assert(S_ISLNK(stat_of(dir, "link.txt").st_mode), "the link is still a link");
    cr_assert(S_ISLNK(stat_of(dir, "sub/chain").st_mode), "so is the second one");
    char *text = slurp(dir, "target.txt");
    cr_assert_str_eq(text, sorted3);
    cr_assert_str_eq(listing(dir), "a link.txt sub target.txt ");
    free(text);
    cmd_free(&r);
    remove_tree(dir);
}

Test(safety, symlink_to_an_existing_file_is_kept)
{
    char *dir = scratch_dir();
    put(dir, "a", "3\n1\n2\n");
    put(dir, "target", "old\n");
    char *link = path_in(dir, "link");
    cr_assert_eq(symlink("target", link), 0);
    struct stat before = stat_of(dir, "target");
    cmd_result r = gm(dir, "sort a -o link");
    expect(&r, 0, "");
    cr_assert(S_ISLNK(stat_of(dir, "link").st_mode));
    struct stat after = stat_of(dir, "target");
    cr_assert_eq(after.st_mode, before.st_mode);
    cr_assert_str_eq(slurp(dir, "target"), sorted3);
    cr_assert_str_eq(listing(dir), "a link target ", "no temporary file is left");
    cmd_free(&r);
    remove_tree(dir);
}

Test(safety, stdout_closed_never_names_an_input)
{
    /* With descriptor 1 closed, an input would take its number and /dev/stdout
     * would lead to it. */
    char *dir = scratch_dir();
    put(dir, "a", "3\n1\n2\n");
    cmd_result r = gm(dir, "sort a -o /dev/stdout >&-");
    cr_assert_str_eq(slurp(dir, "a"), "3\n1\n2\n", "the input is untouched");
    cmd_free(&r);
    r = gm(dir, "sort a >&-");
    expect(&r, 2, "gpumerge: write failed: standard output: Bad file descriptor\n");
    cmd_free(&r);
    remove_tree(dir);
}

Test(safety, open_descriptor_names_are_written_in_place)
{
    /* /dev/stdout names the descriptor the shell opened: written through, not
     * replaced (the shell's later writes still reach the same file). */
    char *dir = scratch_dir();
    put(dir, "a", "3\n1\n2\n");
    put(dir, "f", "old contents\n");
    struct stat before = stat_of(dir, "f");
    cmd_result r = gm(dir, "sort -v a -o /dev/stdout 1<>f");
    expect(&r, 0, NULL);
    cr_assert_not_null(strstr(r.err, "gpumerge: output   /dev/stdout written in place: it is "
                                     "named through an open descriptor\n"), "%s", r.err);
    cr_assert_eq(stat_of(dir, "f").st_ino, before.st_ino);
    cr_assert_str_eq(slurp(dir, "f"), sorted3);
    cr_assert_str_eq(listing(dir), "a f ");
    cmd_free(&r);
    remove_tree(dir);
}

Test(safety, output_onto_an_input)
{
    char *dir = scratch_dir();
    put(dir, "a", "1\n4\n");
    put(dir, "b", "2\n3\n");
    char *link = path_in(dir, "l");
    cr_assert_eq(symlink("b", link), 0);
    cmd_result r = gm(dir, "merge a b -o l");
    expect(&r, 0, "");
    cr_assert_str_eq(slurp(dir, "b"), "1\n2\n3\n4\n");
    cmd_free(&r);
    r = gm(dir, "sort -r a -o a");
    expect(&r, 0, "");
    cr_assert_str_eq(slurp(dir, "a"), "4\n1\n");
    cr_assert_str_eq(listing(dir), "a b l ");
    cmd_free(&r);
    free(link);
    remove_tree(dir);
}

Test(safety, output_is_input_in_the_core)
{
    char *dir = scratch_dir();
    char *a = path_in(dir, "a"), *b = path_in(dir, "b"), *l = path_in(dir, "l");
    write_text(a, "1\n");
    write_text(b, "2\n");
    cr_assert_eq(symlink("a", l), 0);
    gm_output out;
    gm_status st;
    cr_assert_eq(gm_output_open(&out, l, &st), GM_OK, "%s", st.msg);
    int fa = open(a, O_RDONLY), fb = open(b, O_RDONLY);
    cr_assert(gm_output_is_input(&out, fa), "a, through the link");
    cr_assert(!gm_output_is_input(&out, fb));
    gm_output_abort(&out);
    cr_assert_str_eq(listing(dir), "a b l ", "abort leaves no temporary file");
    close(fa);
    close(fb);
    free(a);
    free(b);
    free(l);
    remove_tree(dir);
}

Test(safety, targets_that_cannot_be_opened)
{
    char *dir = scratch_dir();
    put(dir, "a", "1\n");
    char *d = path_in(dir, "d");
    cr_assert_eq(mkdir(d, 0755), 0);
    const char *cases[] = { "a -o d", "a -o nofolder/out", "a -o 'x y/z'", "a -o 'q:x/y'" };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cmd_result r = gm(dir, fmt("sort %s", cases[i]));
        char *want = sort_says(dir, "", cases[i]);
        cr_assert_not_null(strstr(want, "gpumerge: open failed: "), "%s", want);
        expect(&r, 2, want);
        cmd_free(&r);
        free(want);
    }
    cr_assert_str_eq(listing(dir), "a d ");
    free(d);
    remove_tree(dir);
}
