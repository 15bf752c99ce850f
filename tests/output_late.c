/*
 * output_late.c - the descriptors of -o's file (core/write/outfile.h): a regular
 * target holds none once planned, its replacement one from its opening, and
 * opened late (gm_output_open_sized with late) none until the writer's first
 * byte; a late output with no line still replaces the target at the commit; an
 * output written in place opens its target again at the commit and refuses
 * another file found under its name; a stream named by -o keeps its one.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/write/output.h"
#include "../core/base/util.h"
#include "helpers.h"

Test(output, a_regular_target_holds_no_descriptor_until_its_first_byte)
{
    char *dir = scratch_dir(), *path = path_in(dir, "target");
    write_text(path, "old\n");
    gm_output out;
    gm_status st;
    int room = gm_fd_room();
    cr_assert_eq(gm_output_open_sized(&out, path, 0, NULL, 0, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(gm_fd_room(), room - 1, "an opened output holds its replacement only");
    gm_output_abort(&out);
    cr_assert_eq(gm_fd_room(), room);

    cr_assert_eq(gm_output_open_sized(&out, path, 0, NULL, 1, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(out.fd, -1);
    cr_assert_eq(gm_fd_room(), room, "a late output holds no descriptor");
    cr_assert_eq(entries(dir), 1, "the replacement is made at the first byte");
    gm_writer w;
    gm_writer_init(&w, &out, 0, 1);
    int32_t k[3] = { 1, 2, 3 };
    gm_keys keys = { k, 3, GM_I32 };
    cr_assert_eq(gm_writer_put(&w, &keys, &st), GM_OK, "%s", st.msg);
    cr_assert_geq(w.fd, 0);
    cr_assert_eq(entries(dir), 2, "the replacement sits beside the target");
    cr_assert_eq(gm_writer_finish(&w, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(gm_output_commit(&out, &st), GM_OK, "%s", st.msg);
    char *text = read_file(path, NULL);
    cr_assert_str_eq(text, "1\n2\n3\n");
    cr_assert_eq(entries(dir), 1);
    gm_close_later_join(); /* the old file's last reference, closed on a thread */
    cr_assert_eq(gm_fd_room(), room);
    free(text);
    unlink(path);
    rmdir(dir);
    free(path);
    free(dir);
}

Test(output, a_late_output_with_no_line_empties_the_target)
{
    char *dir = scratch_dir(), *path = path_in(dir, "target");
    write_text(path, "old\n");
    chmod(path, 0640);
    gm_output out;
    gm_status st;
    cr_assert_eq(gm_output_open_sized(&out, path, 0, NULL, 1, &st), GM_OK, "%s", st.msg);
    gm_writer w;
    gm_writer_init(&w, &out, 0, 1);
    cr_assert_eq(gm_writer_finish(&w, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(gm_output_commit(&out, &st), GM_OK, "%s", st.msg);
    struct stat sb;
    cr_assert_eq(stat(path, &sb), 0);
    cr_assert_eq(sb.st_size, 0);
    cr_assert_eq(sb.st_mode & 07777, 0640, "the mode is kept");
    cr_assert_eq(entries(dir), 1);
    unlink(path);
    rmdir(dir);
    free(path);
    free(dir);
}

/* A hard-linked target is written in place: its name opened again at the
 * commit, where another file now under it is refused and left as it is. */
Test(output, in_place_refuses_a_target_replaced_during_the_run)
{
    char *dir = scratch_dir(), *path = path_in(dir, "target"), *other = path_in(dir, "link");
    write_text(path, "old\n");
    cr_assert_eq(link(path, other), 0);
    gm_output out;
    gm_status st;
    int room = gm_fd_room();
    cr_assert_eq(gm_output_open_sized(&out, path, 0, dir, 1, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(out.file.kind, GM_OUTFILE_IN_PLACE);
    cr_assert_eq(gm_fd_room(), room, "an output written in place holds nothing yet");
    gm_writer w;
    gm_writer_init(&w, &out, 0, 1);
    int32_t k[2] = { 4, 5 };
    gm_keys keys = { k, 2, GM_I32 };
    cr_assert_eq(gm_writer_put(&w, &keys, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(gm_fd_room(), room - 1, "the spool only");
    cr_assert_eq(gm_writer_finish(&w, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(unlink(path), 0);
    write_text(path, "new\n");
    cr_assert_eq(gm_output_commit(&out, &st), GM_EIO);
    char want[600];
    snprintf(want, sizeof want, "open failed: %s: file replaced during the run", out.shown);
    cr_assert_str_eq(st.msg, want);
    char *a = read_file(path, NULL), *b = read_file(other, NULL);
    cr_assert_str_eq(a, "new\n");
    cr_assert_str_eq(b, "old\n");
    cr_assert_eq(entries(dir), 2, "the spool is gone");
    cr_assert_eq(gm_fd_room(), room);
    free(a);
    free(b);
    unlink(path);
    unlink(other);
    rmdir(dir);
    free(path);
    free(other);
    free(dir);
}

Test(output, a_stream_named_by_o_keeps_its_descriptor)
{
    gm_output out;
    gm_status st;
    int room = gm_fd_room();
    cr_assert_eq(gm_output_open_sized(&out, "/dev/null", 0, NULL, 1, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(out.file.kind, GM_OUTFILE_STREAM);
    cr_assert_geq(out.fd, 0);
    cr_assert_eq(gm_fd_room(), room - 1);
    cr_assert_eq(gm_output_commit(&out, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(gm_fd_room(), room);
}
