/*
 * outfile.c - opening, replacing or writing in place the file named by -o (see
 * outfile.h for the rules; the opening follows coreutils' sort: check_output
 * opens the target with O_CREAT and no O_TRUNC before reading). A regular
 * target is closed once planned and opened again only to be written in place
 * or, by O_PATH, to outlive its replacement's rename. An output written in place
 * is spooled whole and copied into the target at the commit, its space reserved
 * there first, where sort truncates the target when its output starts.
 */
#define _GNU_SOURCE
#include "write/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/util.h"

static void set_id(gm_outfile *of, const struct stat *sb)
{
    of->have_id = 1;
    of->dev = sb->st_dev;
    of->ino = sb->st_ino;
}

static void in_place(gm_outfile *of, const char *why)
{
    of->kind = GM_OUTFILE_IN_PLACE;
    of->why = why;
}

static int plan_open(gm_outfile *of, const char *name, int existed, gm_status *st);

int gm_outfile_plan(gm_outfile *of, const char *name, gm_status *st)
{
    memset(of, 0, sizeof *of);
    of->target_fd = -1;
    struct stat sb;
    if (!name) {
        of->kind = GM_OUTFILE_STDOUT;
        of->fd = STDOUT_FILENO;
        snprintf(of->shown, sizeof of->shown, "standard output");
        memcpy(of->written, of->shown, sizeof of->written);
        if (fstat(STDOUT_FILENO, &sb) == 0 && S_ISREG(sb.st_mode))
            set_id(of, &sb);
        return GM_OK;
    }
    gm_quote(name, of->shown, sizeof of->shown);
    memcpy(of->written, of->shown, sizeof of->written);
    of->fd = -1;
    of->name = strdup(name);
    if (!of->name)
        return gm_fail(st, GM_ENOMEM, "out of memory opening %s", of->shown);

    /* sort's check_output: the kernel decides what we may write, with its own
     * error, and follows links (refusing those it protects). */
    int existed = stat(name, &sb) == 0;
    /* A file we create is registered before a signal can end us (signals held:
     * creating a regular file does not block; opening a fifo could, so not then). */
    sigset_t held;
    sigemptyset(&held);
    if (!existed)
        held = gm_cleanup_block();
    int rc = plan_open(of, name, existed, st);
    if (!existed)
        gm_cleanup_unblock(held);
    return rc;
}

/* The rest of gm_outfile_plan, from the opening on. */
static int plan_open(gm_outfile *of, const char *name, int existed, gm_status *st)
{
    struct stat sb;
    of->target_fd = open(name, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, 0666);
    if (of->target_fd < 0)
        return gm_fail(st, GM_EIO, "open failed: %s: %s", of->shown, strerror(errno));
    if (fstat(of->target_fd, &sb) != 0) {
        int err = errno;
        gm_outfile_abort(of);
        return gm_fail(st, GM_EIO, "open failed: %s: %s", of->shown, strerror(err));
    }
    set_id(of, &sb);
    if (!S_ISREG(sb.st_mode)) {
        of->kind = GM_OUTFILE_STREAM;
        of->fd = of->target_fd;
        return GM_OK;
    }

    int via_proc;
    of->path = gm_follow_links(name, &via_proc);
    if (!of->path && errno == ENOMEM) {
        gm_outfile_abort(of);
        return gm_fail(st, GM_ENOMEM, "out of memory opening %s", of->shown);
    }
    struct stat at;
    int same = of->path && lstat(of->path, &at) == 0 && S_ISREG(at.st_mode) &&
               at.st_dev == sb.st_dev && at.st_ino == sb.st_ino;
    if (!existed && same && sb.st_size == 0) {
        /* A failed run must not leave the file it created; a signal removes it. */
        int rc = gm_temp_register(of->path, st);
        if (rc) {
            unlink(of->path); /* ours, empty: a signal is ending the process */
            gm_outfile_abort(of);
            return rc;
        }
        of->created = 1;
    }
    if (via_proc)
        in_place(of, "it is named through an open descriptor");
    else if (!same)
        in_place(of, "the name does not lead to the file itself");
    else if (sb.st_nlink > 1)
        in_place(of, "it has other hard links");
    else
        of->kind = GM_OUTFILE_REPLACE;
    /* Known by its device and inode now: closed until the commit. */
    of->uid = sb.st_uid;
    of->gid = sb.st_gid;
    of->mode = sb.st_mode;
    close(of->target_fd);
    of->target_fd = -1;
    return GM_OK;
}

/* Opens the regular target again for writing, by the name it was planned by
 * (which leads to it however -o named it). Returns 0, an errno value, or -1
 * where the name now leads to another file. */
static int reopen_target(gm_outfile *of)
{
    if (of->target_fd >= 0)
        return 0;
    int fd = open(of->name, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return errno;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || sb.st_dev != of->dev || sb.st_ino != of->ino) {
        close(fd);
        return -1;
    }
    of->target_fd = fd;
    return 0;
}

/* The temporary file of a replacement, in the target's folder with the target's
 * owner, group and mode; where that cannot be had, the kind turns in place.
 * Returns GM_OK or GM_ENOMEM. */
static int open_replacement(gm_outfile *of, uint64_t expect_bytes)
{
    char *dir = gm_dir_of(of->path);
    if (!dir)
        return GM_ENOMEM;
    struct statvfs vfs;
    if (expect_bytes > 0 && !of->created && statvfs(dir, &vfs) == 0 &&
        (uint64_t)vfs.f_bavail * vfs.f_frsize < expect_bytes) {
        free(dir);
        in_place(of, "its file system has too little free space for a second copy");
        return GM_OK;
    }
    int fd;
    gm_status ignored;
    int rc = gm_temp_create(dir, ".gpumerge-", &fd, &of->tmp, &ignored);
    free(dir);
    if (rc == GM_ENOMEM)
        return GM_ENOMEM;
    if (rc) {
        in_place(of, "its folder cannot take a temporary file");
        return GM_OK;
    }
    /* Owner first: changing it may clear the set-user and set-group bits. */
    struct stat tb;
    int ok = fstat(fd, &tb) == 0 &&
             ((tb.st_uid == of->uid && tb.st_gid == of->gid) ||
              fchown(fd, of->uid, of->gid) == 0) &&
             fchmod(fd, of->mode & 07777) == 0 && fstat(fd, &tb) == 0 &&
             tb.st_uid == of->uid && tb.st_gid == of->gid &&
             (tb.st_mode & 07777) == (of->mode & 07777);
    if (!ok) {
        close(fd);
        gm_temp_remove(of->tmp);
        free(of->tmp);
        of->tmp = NULL;
        in_place(of, "its owner, group or mode cannot be given to a new file");
        return GM_OK;
    }
    of->fd = fd;
    return GM_OK;
}

int gm_outfile_open(gm_outfile *of, uint64_t expect_bytes, const char *tmpdir,
                    gm_status *st)
{
    if (of->kind == GM_OUTFILE_REPLACE && open_replacement(of, expect_bytes) != GM_OK)
        return gm_fail(st, GM_ENOMEM, "out of memory opening %s", of->shown);
    if (of->kind != GM_OUTFILE_IN_PLACE)
        return GM_OK;
    /* The spool: the whole output is written here first, read back by commit. */
    int rc = gm_temp_create(tmpdir, "gpumerge-out.", &of->fd, &of->tmp, st);
    if (rc) {
        of->fd = -1;
        return rc;
    }
    gm_quote(of->tmp, of->written, sizeof of->written);
    return GM_OK;
}

void gm_outfile_open_late(gm_outfile *of, uint64_t expect_bytes, const char *tmpdir)
{
    of->pending = of->kind == GM_OUTFILE_REPLACE || of->kind == GM_OUTFILE_IN_PLACE;
    of->expect_bytes = expect_bytes;
    of->tmpdir = tmpdir;
}

int gm_outfile_ready(gm_outfile *of, gm_status *st)
{
    if (!of->pending)
        return GM_OK;
    of->pending = 0;
    return gm_outfile_open(of, of->expect_bytes, of->tmpdir, st);
}

int gm_outfile_is_input(const gm_outfile *of, int fd)
{
    struct stat sb;
    return of->have_id && fstat(fd, &sb) == 0 && sb.st_dev == of->dev &&
           sb.st_ino == of->ino;
}

/* Makes sure the target has room for len bytes before any of its bytes changes:
 * its blocks are allocated beyond its end (fallocate with FALLOC_FL_KEEP_SIZE:
 * contents and size stay as they are); where the file system cannot allocate
 * ahead, its free space is compared with what the target lacks. Returns 0 or an
 * errno value (ENOSPC, EDQUOT, EFBIG, ...). */
static int reserve_target(int fd, off_t len)
{
    int err = 0;
    if (len > 0) {
        do
            err = fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, len) == 0 ? 0 : errno;
        while (err == EINTR);
    }
    if (err != EOPNOTSUPP && err != ENOSYS)
        return err;
    struct stat sb;
    struct statvfs vfs;
    if (fstat(fd, &sb) != 0 || fstatvfs(fd, &vfs) != 0)
        return 0; /* nothing to measure with: the writing reports a full disk */
    uint64_t have = (uint64_t)sb.st_blocks * 512;
    uint64_t free_bytes = (uint64_t)(geteuid() == 0 ? vfs.f_bfree : vfs.f_bavail) * vfs.f_frsize;
    return (uint64_t)len > have && (uint64_t)len - have > free_bytes ? ENOSPC : 0;
}

/* Copies len bytes from the start of in to the start of out: 0 or an errno
 * value. In the kernel where it can (copy_file_range), else through a buffer. */
static int copy_bytes(int in, int out, off_t len)
{
    off_t from = 0, to = 0;
    while (from < len) {
        ssize_t n = copy_file_range(in, &from, out, &to, (size_t)(len - from), 0);
        if (n > 0)
            continue;
        if (n == 0)
            return EIO; /* the spool is shorter than it was */
        if (errno == EINTR)
            continue;
        if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP &&
            errno != EBADF)
            return errno;
        break; /* not between these files: the rest through a buffer */
    }
    static char buf[1 << 16];
    while (from < len) {
        size_t want = (size_t)(len - from) < sizeof buf ? (size_t)(len - from) : sizeof buf;
        ssize_t got = pread(in, buf, want, from);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return got < 0 ? errno : EIO;
        if (lseek(out, to, SEEK_SET) != to)
            return errno;
        int err = gm_write_all(out, buf, (size_t)got);
        if (err)
            return err;
        from += got;
        to += got;
    }
    return 0;
}

/* Writes the finished output held in the file in (the spool, or a replacement
 * that could not be renamed) into the target itself. The target's space is
 * reserved first, so a file system without room for it fails here with the
 * target as it was; then the output is copied over the old contents and the
 * target cut to its length. Returns 0 or an errno value. */
static int copy_into_target(gm_outfile *of, int in)
{
    struct stat sb;
    if (fstat(in, &sb) != 0)
        return errno;
    int err = reopen_target(of);
    if (err)
        return err;
    err = reserve_target(of->target_fd, sb.st_size);
    if (!err)
        err = copy_bytes(in, of->target_fd, sb.st_size);
    if (!err && ftruncate(of->target_fd, sb.st_size) != 0)
        err = errno;
    return err;
}

/* Removes the temporary file (the replacement or the spool), closing it. */
static void drop_tmp(gm_outfile *of)
{
    if (of->fd >= 0 && of->fd != of->target_fd)
        close(of->fd);
    of->fd = -1;
    gm_temp_remove(of->tmp);
    free(of->tmp);
    of->tmp = NULL;
}

/* Puts the replacement in place: renamed over the target, or, where the rename
 * is refused (a bind-mounted target), copied into it. 0 or an errno value. */
static int commit_replacement(gm_outfile *of)
{
    int fd = of->fd;
    of->fd = -1;
    if (close(fd) != 0)
        return errno;
    /* The old file's last reference, held across the rename where a descriptor
     * is free: its pages are freed as we finish, not in rename(2). */
    of->target_fd = open(of->path, O_PATH | O_CLOEXEC);
    if (rename(of->tmp, of->path) == 0) {
        gm_temp_forget(of->tmp);
        free(of->tmp);
        of->tmp = NULL;
        /* the old file's last reference: its pages are freed as we finish */
        if (of->target_fd >= 0)
            gm_close_later(of->target_fd);
        of->target_fd = -1;
        return 0;
    }
    if (of->target_fd >= 0)
        close(of->target_fd); /* an O_PATH one: reopen_target opens it to write */
    of->target_fd = -1;
    int in = open(of->tmp, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return errno;
    int err = copy_into_target(of, in);
    close(in);
    if (!err)
        drop_tmp(of);
    return err;
}

int gm_outfile_commit(gm_outfile *of, gm_status *st)
{
    int err = gm_outfile_ready(of, st);
    if (err) {
        gm_outfile_abort(of);
        return err;
    }
    if (of->kind == GM_OUTFILE_REPLACE) {
        err = commit_replacement(of);
    } else if (of->kind == GM_OUTFILE_IN_PLACE) {
        err = copy_into_target(of, of->fd);
        if (!err)
            drop_tmp(of);
    }
    if (!err && of->target_fd >= 0) {
        if (close(of->target_fd) != 0)
            err = errno;
        of->target_fd = -1;
        of->fd = -1;
    }
    if (err) {
        gm_outfile_abort(of);
        if (err < 0)
            return gm_fail(st, GM_EIO, "open failed: %s: file replaced during the run",
                           of->shown);
        if (err == EMFILE || err == ENFILE)
            return gm_fail(st, GM_EIO, "open failed: %s: %s", of->shown, strerror(err));
        return gm_fail(st, GM_EIO, "write failed: %s: %s", of->shown, strerror(err));
    }
    if (of->created)
        gm_temp_forget(of->path);
    of->created = 0;
    free(of->path);
    of->path = NULL;
    free(of->name);
    of->name = NULL;
    return GM_OK;
}

void gm_outfile_abort(gm_outfile *of)
{
    if (of->tmp)
        drop_tmp(of);
    if (of->created) {
        /* Remove what we created, unless the name now holds another file. */
        struct stat at;
        if (lstat(of->path, &at) == 0 && of->have_id && at.st_dev == of->dev &&
            at.st_ino == of->ino)
            gm_temp_remove(of->path);
        else
            gm_temp_forget(of->path);
        of->created = 0;
    }
    if (of->target_fd >= 0)
        close(of->target_fd);
    of->target_fd = -1;
    of->fd = -1;
    of->pending = 0;
    free(of->path);
    of->path = NULL;
    free(of->name);
    of->name = NULL;
}
