/*
 * outfile.h - the file named by -o: how it is opened, written and put in place
 * so that nothing is destroyed that should not be. The rules are coreutils'
 * sort's (open the target before reading, truncate it only when writing begins),
 * with sort's one weakness, a failed run leaving a truncated file, avoided where
 * that can be done safely.
 *
 * gm_outfile_plan opens the target for writing, creating it when it is missing,
 * before any input is read, exactly as sort does: a target the user may not
 * write is refused with open's own error ("open failed: FILE: Permission
 * denied"), symbolic links are followed (a dangling one too: the file is created
 * where it points), and the kernel's protection of links in shared folders
 * applies. Nothing is truncated.
 *
 * A regular target is then replaced where that is safe: the output goes to a
 * temporary file ".gpumerge-XXXXXX" in the target's real folder (links
 * followed), given the target's owner, group and mode, and renamed over the
 * target by gm_outfile_commit, so a failed run leaves the old file as it was (and
 * removes a file it created). Where that is not safe, the output is written in
 * place, into the target itself (opened again for reading and writing where we
 * may, for the writer's mapping), truncated by gm_outfile_begin when the first
 * byte is about to be written (after every input has been read, as sort does):
 *   - the target has other hard links (a rename would cut them off);
 *   - its owner, group or mode cannot be given to a new file (another user's
 *     file that we may write);
 *   - its folder cannot take the temporary file (not writable by us), or has less
 *     free space than the output needs (a second copy would not fit);
 *   - the name leads through /proc (/dev/stdout, /dev/fd/N): it names an open
 *     descriptor, whose holder goes on using the file; or it does not lead to the
 *     file itself;
 *   - the rename fails (a bind-mounted file): the finished temporary file is then
 *     copied into the target.
 * A target that is not a regular file (a terminal, /dev/null, a fifo) is written
 * as it is and never truncated.
 *
 * The temporary file is registered with core/cleanup, so a catchable signal
 * removes it; its name never matches the target's, so a file left by a killed
 * process is never taken for the output.
 */
#ifndef GM_OUTFILE_H
#define GM_OUTFILE_H

#include <stdint.h>
#include <sys/types.h>

#include "types.h"

typedef enum gm_outfile_kind {
    GM_OUTFILE_STDOUT,   /* no -o */
    GM_OUTFILE_REPLACE,  /* a temporary file renamed over the target */
    GM_OUTFILE_IN_PLACE, /* the regular target itself, truncated at the first byte */
    GM_OUTFILE_STREAM    /* a target that is not a regular file, written as it is */
} gm_outfile_kind;

typedef struct gm_outfile {
    char shown[512];      /* "standard output" or the quoted name */
    gm_outfile_kind kind;
    int fd;               /* where the output is written */
    int target_fd;        /* the target, open for writing; -1 without -o */
    int have_id;          /* dev and ino name the target (or standard output) */
    dev_t dev;
    ino_t ino;
    char *path;           /* the target's name with links followed */
    char *tmp;            /* the temporary file (GM_OUTFILE_REPLACE) */
    int created;          /* the target did not exist: we created it */
    int begun;            /* gm_outfile_begin has run */
    const char *why;      /* GM_OUTFILE_IN_PLACE: why not replaced (for -v) */
} gm_outfile;

/* Opens the target (standard output when name is NULL) as described above and
 * chooses between replacing it and writing in place. Returns GM_OK, or GM_EIO
 * with "open failed: FILE: REASON" (nothing created), or GM_ENOMEM. */
int gm_outfile_plan(gm_outfile *of, const char *name, gm_status *st);

/* Creates the temporary file of a replacement; falls back to writing in place
 * when it cannot be made safely (see above). expect_bytes bounds the output's
 * size (0: unknown, no space check). Returns GM_OK or GM_ENOMEM; on failure call
 * gm_outfile_abort. */
int gm_outfile_open(gm_outfile *of, uint64_t expect_bytes, gm_status *st);

/* To be called when the first byte is about to be written (later calls do
 * nothing): truncates an in-place target. Every input that is the same file as
 * the target (gm_outfile_is_input) must have been read in full by then. Returns
 * GM_OK or GM_EIO ("write failed: FILE: REASON"). */
int gm_outfile_begin(gm_outfile *of, gm_status *st);

/* Whether the open file fd is the output's file itself (same device and inode),
 * as when -o names an input: then that input must be read before
 * gm_outfile_begin. Standard output counts when it is a regular file. */
int gm_outfile_is_input(const gm_outfile *of, int fd);

/* Finishes the output: runs gm_outfile_begin if it has not run (an empty output
 * still empties the target), closes, and renames the temporary file over the
 * target. Returns GM_OK or GM_EIO ("write failed: FILE: REASON"); after a
 * failure the temporary file is gone. */
int gm_outfile_commit(gm_outfile *of, gm_status *st);

/* Abandons the output: removes the temporary file, and the target when this run
 * created it; an existing target is left as it was unless gm_outfile_begin has
 * truncated it in place. Safe after commit and after a failed plan. */
void gm_outfile_abort(gm_outfile *of);

#endif
