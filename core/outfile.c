/*
 * outfile.c - opening, replacing or writing in place the file named by -o (see
 * outfile.h for the rules; they follow coreutils' sort: check_output opens the
 * target with O_CREAT and no O_TRUNC before reading, stream_open truncates it
 * only when the output starts).
 */
#define _GNU_SOURCE
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cleanup.h"
#include "util.h"

enum { MAX_LINKS = 40 }; /* as the kernel's limit on links followed in a path */

/* The folder part of path: "." when it has none. malloc'd, or NULL. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* Follows the symbolic links of name's last component as open does, a dangling
 * last link included, without touching the folders on the way (they stay as
 * named: renaming within them works the same). *via_proc is set when a step is
 * under /proc (/dev/stdout, /dev/fd/N: the name of an open descriptor). Returns
 * a malloc'd path, or NULL with errno set (ELOOP, ENOMEM, or readlink's error). */
static char *follow_links(const char *name, int *via_proc)
{
    char *p = strdup(name);
    *via_proc = 0;
    for (int hops = 0; p; hops++) {
        struct stat sb;
        *via_proc |= strncmp(p, "/proc/", 6) == 0;
        if (lstat(p, &sb) != 0 || !S_ISLNK(sb.st_mode))
            return p;
        char target[PATH_MAX];
        ssize_t n = hops < MAX_LINKS ? readlink(p, target, sizeof target - 1) : -1;
        if (n < 0) {
            int err = hops < MAX_LINKS ? errno : ELOOP;
            free(p);
            errno = err;
            return NULL;
        }
        target[n] = '\0';
        char *next = NULL, *dir = NULL;
        if (target[0] == '/' || !strchr(p, '/')) /* absolute, or p is in "." */
            next = strdup(target);
        else if ((dir = dir_of(p)) && asprintf(&next, "%s/%s", dir, target) < 0)
            next = NULL;
        free(dir);
        free(p);
        p = next;
        if (!p)
            errno = ENOMEM;
    }
    return NULL;
}

static void set_id(gm_outfile *of, const struct stat *sb)
{
    of->have_id = 1;
    of->dev = sb->st_dev;
    of->ino = sb->st_ino;
}

/* The target opened again for reading and writing (through /proc/self/fd, so the
 * very same file), for the writer's mapping (output.c), which needs both; where
 * that is refused (a file we may write but not read), the write-only descriptor
 * stays and the writer uses write(2). */
static void reopen_read_write(gm_outfile *of)
{
    char name[64];
    snprintf(name, sizeof name, "/proc/self/fd/%d", of->target_fd);
    int fd = open(name, O_RDWR | O_CLOEXEC | O_NOCTTY);
    struct stat a, b;
    if (fd >= 0 && fstat(fd, &a) == 0 && fstat(of->target_fd, &b) == 0 &&
        S_ISREG(a.st_mode) && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
        close(of->target_fd);
        of->target_fd = fd;
    } else if (fd >= 0) {
        close(fd);
    }
}

static void in_place(gm_outfile *of, const char *why)
{
    reopen_read_write(of);
    of->kind = GM_OUTFILE_IN_PLACE;
    of->fd = of->target_fd;
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
        if (fstat(STDOUT_FILENO, &sb) == 0 && S_ISREG(sb.st_mode))
            set_id(of, &sb);
        return GM_OK;
    }
    gm_quote(name, of->shown, sizeof of->shown);
    of->fd = -1;

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
    of->path = follow_links(name, &via_proc);
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
    return GM_OK;
}

int gm_outfile_open(gm_outfile *of, uint64_t expect_bytes, gm_status *st)
{
    if (of->kind != GM_OUTFILE_REPLACE)
        return GM_OK;
    struct stat sb;
    if (fstat(of->target_fd, &sb) != 0) {
        in_place(of, "it cannot be examined");
        return GM_OK;
    }
    char *dir = dir_of(of->path);
    if (!dir)
        return gm_fail(st, GM_ENOMEM, "out of memory opening %s", of->shown);
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
        return gm_fail(st, GM_ENOMEM, "out of memory opening %s", of->shown);
    if (rc) {
        in_place(of, "its folder cannot take a temporary file");
        return GM_OK;
    }
    /* Owner first: changing it may clear the set-user and set-group bits. */
    struct stat tb;
    int ok = fstat(fd, &tb) == 0 &&
             ((tb.st_uid == sb.st_uid && tb.st_gid == sb.st_gid) ||
              fchown(fd, sb.st_uid, sb.st_gid) == 0) &&
             fchmod(fd, sb.st_mode & 07777) == 0 && fstat(fd, &tb) == 0 &&
             tb.st_uid == sb.st_uid && tb.st_gid == sb.st_gid &&
             (tb.st_mode & 07777) == (sb.st_mode & 07777);
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

int gm_outfile_begin(gm_outfile *of, gm_status *st)
{
    if (of->begun)
        return GM_OK;
    of->begun = 1;
    if (of->kind == GM_OUTFILE_IN_PLACE &&
        (ftruncate(of->fd, 0) != 0 || lseek(of->fd, 0, SEEK_SET) != 0))
        return gm_fail(st, GM_EIO, "write failed: %s: %s", of->shown, strerror(errno));
    return GM_OK;
}

int gm_outfile_is_input(const gm_outfile *of, int fd)
{
    struct stat sb;
    return of->have_id && fstat(fd, &sb) == 0 && sb.st_dev == of->dev &&
           sb.st_ino == of->ino;
}

/* When the rename fails: copies the finished temporary file into the target,
 * which is then truncated and written in place. Returns 0 or an errno value. */
static int copy_into_target(gm_outfile *of)
{
    int in = open(of->tmp, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return errno;
    int err = 0;
    if (ftruncate(of->target_fd, 0) != 0 || lseek(of->target_fd, 0, SEEK_SET) != 0)
        err = errno;
    static char buf[1 << 16];
    while (!err) {
        ssize_t got = read(in, buf, sizeof buf);
        if (got == 0)
            break;
        if (got < 0 && errno != EINTR)
            err = errno;
        else if (got > 0)
            err = gm_write_all(of->target_fd, buf, (size_t)got);
    }
    close(in);
    return err;
}

int gm_outfile_commit(gm_outfile *of, gm_status *st)
{
    int rc = gm_outfile_begin(of, st);
    if (rc) {
        gm_outfile_abort(of);
        return rc;
    }
    int err = 0;
    if (of->kind == GM_OUTFILE_REPLACE) {
        int fd = of->fd;
        of->fd = -1;
        if (close(fd) != 0) {
            err = errno;
        } else if (rename(of->tmp, of->path) == 0) {
            gm_temp_forget(of->tmp);
            /* the old file's last reference: its pages are freed as we finish */
            gm_close_later(of->target_fd);
            of->target_fd = -1;
        } else {
            err = copy_into_target(of);
            if (!err)
                gm_temp_remove(of->tmp);
        }
        if (!err) {
            free(of->tmp);
            of->tmp = NULL;
        }
    }
    if (!err && of->target_fd >= 0) {
        if (close(of->target_fd) != 0)
            err = errno;
        of->target_fd = -1;
        of->fd = -1;
    }
    if (err) {
        gm_outfile_abort(of);
        return gm_fail(st, GM_EIO, "write failed: %s: %s", of->shown, strerror(err));
    }
    if (of->created)
        gm_temp_forget(of->path);
    of->created = 0;
    free(of->path);
    of->path = NULL;
    return GM_OK;
}

void gm_outfile_abort(gm_outfile *of)
{
    if (of->tmp) {
        if (of->fd >= 0 && of->fd != of->target_fd)
            close(of->fd);
        gm_temp_remove(of->tmp);
        free(of->tmp);
        of->tmp = NULL;
    }
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
    free(of->path);
    of->path = NULL;
}
