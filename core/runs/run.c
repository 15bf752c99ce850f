/*
 * run.c - sorted runs in temporary files (see run.h). The segment layout keeps
 * the files compact (int32 keys take 4 bytes) the way sort's temporary files hold
 * only the lines; reads go straight into the merge's key buffers. A run holds a
 * descriptor only while it is written or read: it is opened again by name when a
 * merge pass reads it, as sort opens its temporary files again. Through
 * --compress-program the descriptor is a pipe, so reads take what comes until
 * the length asked for, and the run ends where the pipe does.
 */
#define _GNU_SOURCE
#include "runs/run.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/progress.h"
#include "base/util.h"

struct seg_header {
    int64_t count;   /* keys in the segment, more than 0 (gm_run_put writes keys->n) */
    int32_t width;   /* their width, 4 or 8: gm_run_read checks it */
    int32_t zero;    /* padding to 16 bytes, written as 0 */
};

int gm_run_create(gm_runfile *r, const gm_tmpspec *spec, gm_status *st)
{
    memset(r, 0, sizeof *r);
    return gm_tmpfile_create(&r->f, spec, st);
}

static int put_all(gm_runfile *r, const void *buf, size_t len, gm_status *st)
{
    int err = gm_write_all(r->f.fd, buf, len);
    if (err) /* ended here, so that a PROG that has gone tells why */
        return gm_tmpfile_end(&r->f, r->f.bytes, gm_fail(st, GM_EIO, "write failed: %s: %s",
                                                          r->f.shown, strerror(err)), st);
    r->f.bytes += (int64_t)len;
    gm_progress_run_bytes((int64_t)len);
    return GM_OK;
}

int gm_run_put(gm_runfile *r, const gm_keys *keys, gm_status *st)
{
    if (keys->n == 0)
        return GM_OK;
    struct seg_header h = { keys->n, (int32_t)keys->width, 0 };
    int rc = put_all(r, &h, sizeof h, st);
    if (!rc)
        rc = put_all(r, keys->data, (size_t)keys->n * keys->width, st);
    if (!rc)
        r->keys += keys->n;
    return rc;
}

int gm_run_rewind(gm_runfile *r, gm_status *st)
{
    int rc = gm_tmpfile_end(&r->f, r->f.bytes, GM_OK, st);
    if (rc)
        return rc;
    r->seg_left = 0;
    r->eof = r->keys == 0;
    return GM_OK;
}

static int end_of_run(gm_runfile *r, gm_status *st)
{
    r->eof = 1;
    return gm_tmpfile_close(&r->f, st);
}

/* Reads len bytes. Where the run ends before the first and *ended is given,
 * sets *ended instead; an end elsewhere is an error, PROG -d's failure first. */
static int get_all(gm_runfile *r, void *buf, size_t len, int *ended, gm_status *st)
{
    char *p = buf;
    while (len > 0) {
        ssize_t got = read(r->f.fd, p, len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got == 0 && ended && p == buf) {
            *ended = 1;
            return GM_OK;
        }
        if (got <= 0) {
            int err = got < 0 ? errno : 0, rc = gm_tmpfile_close(&r->f, st);
            return rc ? rc : gm_fail(st, GM_EIO, "read failed: %s: %s", r->f.shown,
                                     err ? strerror(err) : "file changed while reading");
        }
        p += got;
        len -= (size_t)got;
        gm_progress_run_read(got);
    }
    return GM_OK;
}

int gm_run_read(gm_runfile *r, gm_keybuf *kb, int64_t max, gm_status *st)
{
    if (r->eof)
        return GM_OK;
    if (r->f.fd < 0) {
        int rc = gm_tmpfile_reopen(&r->f, st);
        if (rc)
            return rc;
    }
    if (r->seg_left == 0) {
        struct seg_header h;
        int ended = 0, rc = get_all(r, &h, sizeof h, &ended, st);
        if (rc || ended)
            return rc ? rc : end_of_run(r, st);
        if ((h.width != 4 && h.width != 8) || h.count <= 0)
            return gm_fail(st, GM_EIO, "read failed: %s: file changed while reading",
                           r->f.shown);
        r->seg_left = h.count;
        r->seg_width = (gm_width)h.width;
    }
    int64_t n = r->seg_left < max ? r->seg_left : max;
    int rc = gm_keybuf_reserve(kb, n, r->seg_width, st);
    if (rc)
        return rc;
    char *dst = (char *)kb->data + (size_t)kb->n * kb->width;
    rc = get_all(r, dst, (size_t)n * r->seg_width, NULL, st);
    if (rc)
        return rc;
    if (kb->width == GM_I64 && r->seg_width == GM_I32) {
        /* Widen in place, from the back: key i's int64 slot covers int32 slots
         * 2i and 2i+1, which are at or after i and already read. */
        const int32_t *s = (const int32_t *)dst;
        int64_t *d = (int64_t *)dst;
        for (int64_t i = n - 1; i >= 0; i--) {
            int32_t v = s[i];
            d[i] = v;
        }
    }
    kb->n += n;
    r->seg_left -= n;
    /* a file's end is known before the next read; a pipe's only at that read */
    if (r->seg_left == 0 && !r->f.pid && lseek(r->f.fd, 0, SEEK_CUR) == r->f.bytes)
        return end_of_run(r, st);
    return GM_OK;
}

void gm_run_remove(gm_runfile *r)
{
    gm_tmpfile_remove(&r->f);
}
