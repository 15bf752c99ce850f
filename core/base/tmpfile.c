/*
 * tmpfile.c - a run's temporary file (see tmpfile.h). Through PROG, the writer's
 * descriptor is a pipe to PROG, whose standard output is the file; the file's
 * size is known once PROG has ended, so PROG is waited for when writing ends (a
 * written run holds no process and no descriptor, and a failure is reported
 * where it happened). The reader's descriptor is a pipe from PROG -d, whose
 * standard input is the file opened again by name.
 */
#define _GNU_SOURCE
#include "base/tmpfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/compress.h"
#include "base/util.h"

int gm_tmpfile_create(gm_tmpfile *t, const gm_tmpspec *spec, gm_status *st)
{
    memset(t, 0, sizeof *t);
    t->fd = -1;
    int rc = gm_temp_create(spec->dir, "gpumerge-run.", &t->fd, &t->path, st);
    if (rc)
        return rc;
    gm_quote(t->path, t->shown, sizeof t->shown);
    struct stat sb;
    if (fstat(t->fd, &sb) != 0)
        return gm_fail(st, GM_EIO, "write failed: %s: %s", t->shown, strerror(errno));
    t->dev = sb.st_dev;
    t->ino = sb.st_ino;
    if (spec->compress) {
        int to;
        gm_compress_start(spec->compress, 0, t->fd, &to, &t->pid, st); /* cannot fail */
        if (t->pid > 0) {
            close(t->fd);
            t->fd = to;
            t->prog = spec->compress;
        }
    }
    return GM_OK;
}

/* The file's size once PROG has written it, by name: it must be the file made. */
static int written_size(gm_tmpfile *t, gm_status *st)
{
    struct stat sb;
    if (stat(t->path, &sb) != 0)
        return gm_fail(st, GM_EIO, "write failed: %s: %s", t->shown, strerror(errno));
    if (sb.st_dev != t->dev || sb.st_ino != t->ino)
        return gm_fail(st, GM_EIO, "%s: file changed while reading", t->shown);
    t->bytes = (int64_t)sb.st_size;
    return GM_OK;
}

int gm_tmpfile_end(gm_tmpfile *t, int64_t bytes, int rc, gm_status *st)
{
    int err = t->fd >= 0 && close(t->fd) != 0 ? errno : 0;
    t->fd = -1;
    if (!t->pid) {
        if (t->prog == NULL)
            t->bytes = bytes;
        if (!rc && err)
            rc = gm_fail(st, GM_EIO, "write failed: %s: %s", t->shown, strerror(err));
        return rc;
    }
    gm_status why;
    int prc = gm_compress_wait(t->prog, t->pid, &why);
    t->pid = 0;
    if (prc && (rc == GM_OK || rc == GM_EIO || rc == GM_EPIPE)) {
        *st = why;
        return prc;
    }
    if (rc == GM_EPIPE)
        rc = st->code = GM_EIO;
    if (!rc && err)
        rc = gm_fail(st, GM_EIO, "write failed: %s: %s", t->shown, strerror(err));
    return rc ? rc : written_size(t, st);
}

int gm_tmpfile_reopen(gm_tmpfile *t, gm_status *st)
{
    int fd = open(t->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE)) /* sort's open_temp */
        return gm_fail(st, GM_EIO, "open failed: %s: %s", t->shown, strerror(errno));
    if (fd < 0)
        return gm_fail(st, GM_EIO, "cannot read: %s: %s", t->shown, strerror(errno));
    struct stat sb;
    int rc = GM_OK;
    if (fstat(fd, &sb) != 0)
        rc = gm_fail(st, GM_EIO, "cannot read: %s: %s", t->shown, strerror(errno));
    else if (sb.st_dev != t->dev || sb.st_ino != t->ino || sb.st_size != t->bytes)
        rc = gm_fail(st, GM_EIO, "%s: file changed while reading", t->shown);
    else if (t->prog && (rc = gm_compress_start(t->prog, 1, fd, &t->fd, &t->pid, st)) &&
             (errno == EMFILE || errno == ENFILE)) /* sort's open_temp: no pipe */
        rc = gm_fail(st, GM_EIO, "open failed: %s: %s", t->shown, strerror(errno));
    if (rc || t->prog)
        close(fd);
    else
        t->fd = fd;
    return rc;
}

int gm_tmpfile_close(gm_tmpfile *t, gm_status *st)
{
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
    pid_t pid = t->pid;
    t->pid = 0;
    return pid ? gm_compress_wait(t->prog, pid, st) : GM_OK;
}

void gm_tmpfile_remove(gm_tmpfile *t)
{
    gm_status ignored;
    gm_tmpfile_close(t, &ignored);
    if (t->path) {
        gm_temp_remove(t->path);
        free(t->path);
        t->path = NULL;
    }
}
