/*
 * tmpfile.c - a run's temporary file (see tmpfile.h).
 */
#define _GNU_SOURCE
#include "tmpfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "util.h"

int gm_tmpfile_create(gm_tmpfile *t, const char *dir, gm_status *st)
{
    memset(t, 0, sizeof *t);
    t->fd = -1;
    int rc = gm_temp_create(dir, "gpumerge-run.", &t->fd, &t->path, st);
    if (rc)
        return rc;
    gm_quote(t->path, t->shown, sizeof t->shown);
    struct stat sb;
    if (fstat(t->fd, &sb) != 0)
        return gm_fail(st, GM_EIO, "write failed: %s: %s", t->shown, strerror(errno));
    t->dev = sb.st_dev;
    t->ino = sb.st_ino;
    return GM_OK;
}

int gm_tmpfile_end(gm_tmpfile *t, int64_t bytes, gm_status *st)
{
    int err = t->fd >= 0 && close(t->fd) != 0 ? errno : 0;
    t->fd = -1;
    t->bytes = bytes;
    return err ? gm_fail(st, GM_EIO, "write failed: %s: %s", t->shown, strerror(err)) : GM_OK;
}

int gm_tmpfile_reopen(gm_tmpfile *t, gm_status *st)
{
    t->fd = open(t->path, O_RDONLY | O_CLOEXEC);
    if (t->fd < 0)
        return gm_fail(st, GM_EIO, "cannot read: %s: %s", t->shown, strerror(errno));
    struct stat sb;
    if (fstat(t->fd, &sb) != 0)
        return gm_fail(st, GM_EIO, "cannot read: %s: %s", t->shown, strerror(errno));
    if (sb.st_dev != t->dev || sb.st_ino != t->ino || sb.st_size != t->bytes)
        return gm_fail(st, GM_EIO, "%s: file changed while reading", t->shown);
    return GM_OK;
}

void gm_tmpfile_remove(gm_tmpfile *t)
{
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
    if (t->path) {
        gm_temp_remove(t->path);
        free(t->path);
        t->path = NULL;
    }
}
