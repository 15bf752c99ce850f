/*
 * outfile.h - the file named by -o: how it is opened, written and put in place
 * so that nothing is destroyed that should not be. The rules are coreutils'
 * sort's (open the target before reading), with sort's weaknesses, a failed run
 * or a full disk leaving a truncated file, avoided.
 *
 * gm_outfile_plan opens the target for writing, creating it when it is missing,
 * before any input is read, exactly as sort does: a target the user may not
 * write is refused with open's own error ("open failed: FILE: Permission
 * denied"), symbolic links are followed (a dangling one too: the file is created
 * where it points), and the kernel's protection of links in shared folders
 * applies. Nothing is truncated. A regular target is closed again once it is
 * known (its device, inode, owner, group and mode kept), so that it takes no
 * descriptor while the inputs are merged: sort keeps its output on standard
 * output's descriptor, and a merge's passes have every other one. Only a target
 * that is not a regular file stays open, as the file written.
 *
 * A regular target is then replaced where that is safe: the output goes to a
 * temporary file ".gpumerge-XXXXXX" in the target's real folder (links
 * followed), given the target's owner, group and mode, and renamed over the
 * target by gm_outfile_commit, so a failed run leaves the old file as it was (and
 * removes a file it created). Where that is not safe, the output is written in
 * place, into the target itself:
 *   - the target has other hard links (a rename would cut them off);
 *   - its owner, group or mode cannot be given to a new file (another user's
 *     file that we may write);
 *   - its folder cannot take the temporary file (not writable by us), or has less
 *     free space than the output may need (a second copy might not fit);
 *   - the name leads through /proc (/dev/stdout, /dev/fd/N): it names an open
 *     descriptor, whose holder goes on using the file; or it does not lead to the
 *     file itself;
 *   - the rename fails (a bind-mounted file): the finished temporary file is then
 *     copied into the target.
 * An output written in place is spooled first: it goes whole to a temporary file
 * "gpumerge-out.XXXXXX" in -T's folder, and only gm_outfile_commit, after every
 * input has been read, checked and merged, writes the target, so an error of the
 * run (a bad line in the last input, a disorder, a full spool) leaves it as it
 * was, and an input that is the target is read before any of its bytes changes.
 * The commit opens the target again by its name (refusing another file found
 * there: "open failed: FILE: file replaced during the run") and reserves the
 * output's length in it before writing it
 * (fallocate keeping the size; else a look at the free space): an output that
 * does not fit is "write failed: FILE: No space left on device" with the target
 * unchanged. A target that is not a regular file (a terminal, /dev/null, a fifo)
 * is written as it is and never truncated.
 *
 * The temporary files are registered with core/cleanup, so a catchable signal
 * removes them; their names never match the target's, so a file left by a killed
 * process is never taken for the output.
 */
#ifndef GM_OUTFILE_H
#define GM_OUTFILE_H

#include <stdint.h>
#include <sys/types.h>

#include "base/types.h"

typedef enum gm_outfile_kind {
    GM_OUTFILE_STDOUT,   /* no -o */
    GM_OUTFILE_REPLACE,  /* a temporary file renamed over the target */
    GM_OUTFILE_IN_PLACE, /* the regular target itself, from a spool at the commit */
    GM_OUTFILE_STREAM    /* a target that is not a regular file, written as it is */
} gm_outfile_kind;

typedef struct gm_outfile {
    char shown[512];      /* "standard output" or the quoted name */
    char written[512];    /* the quoted name of the file fd writes: the spool, or shown */
    gm_outfile_kind kind; /* how the output is written (gm_outfile_plan, plan_open, in_place) */
    int fd;               /* where the output is written: the replacement, the spool,
                           * or the target (standard output, a stream) */
    int target_fd;        /* the target, open for writing: a stream's (fd), or a
                           * regular target's while planned and committed; else -1 */
    char *name;           /* -o's name as given: an output written in place opens it
                           * again at the commit */
    uid_t uid;            /* a regular target's owner, group and mode, for the */
    gid_t gid;            /* replacement */
    mode_t mode;
    int have_id;          /* dev and ino name the target (or standard output) */
    dev_t dev;
    ino_t ino;
    char *path;           /* the target's name with links followed */
    char *tmp;            /* the temporary file: the replacement or the spool */
    int created;          /* the target did not exist: we created it */
    const char *why;      /* GM_OUTFILE_IN_PLACE: why not replaced (for -v) */
    int pending;          /* the replacement or the spool is still to be created */
    uint64_t expect_bytes;/* gm_outfile_open's arguments, kept while pending */
    const char *tmpdir;
} gm_outfile;

/* Opens the target (standard output when name is NULL) as described above and
 * chooses between replacing it and writing in place. Returns GM_OK, or GM_EIO
 * with "open failed: FILE: REASON" (nothing created), or GM_ENOMEM. */
int gm_outfile_plan(gm_outfile *of, const char *name, gm_status *st);

/* Creates the temporary file of a replacement; falls back to writing in place
 * when it cannot be made safely (see above), and then creates the spool in
 * tmpdir (NULL: $TMPDIR, else /tmp). expect_bytes bounds the output's size (0:
 * unknown, no space check). Returns GM_OK, GM_EIO ("cannot create a temporary
 * file in DIR: REASON") or GM_ENOMEM; on failure call gm_outfile_abort. */
int gm_outfile_open(gm_outfile *of, uint64_t expect_bytes, const char *tmpdir,
                    gm_status *st);

/* Puts gm_outfile_open off: of->pending is set (for a replacement or an output
 * written in place; nothing is pending for the others) until gm_outfile_ready
 * opens it, when the first byte is due, or the commit does. tmpdir must outlive
 * of. */
void gm_outfile_open_late(gm_outfile *of, uint64_t expect_bytes, const char *tmpdir);

/* gm_outfile_open with the arguments of gm_outfile_open_late where it is
 * pending; GM_OK at once where it is not. Returns as gm_outfile_open. */
int gm_outfile_ready(gm_outfile *of, gm_status *st);

/* Whether the open file fd is the output's file itself (same device and inode),
 * as when -o names an input. Standard output counts when it is a regular file. */
int gm_outfile_is_input(const gm_outfile *of, int fd);

/* Finishes the output: creates it where it is still pending (an output with no
 * line), closes it, and renames the replacement over the target, or copies the
 * spool into it (an empty output empties the target). Returns GM_OK, GM_EIO
 * ("write failed: FILE: REASON", FILE the target; for an output that does not
 * fit, the target unchanged; "open failed: FILE: REASON" where it cannot be
 * opened again) or an error of gm_outfile_ready; after a failure the temporary
 * file is gone. */
int gm_outfile_commit(gm_outfile *of, gm_status *st);

/* Abandons the output: removes the temporary file, and the target when this run
 * created it; an existing target is left as it was. Safe after commit and after a
 * failed plan. */
void gm_outfile_abort(gm_outfile *of);

#endif
