/*
 * ranges.c - the inputs as every rank sees them (see gmpi.h): regular files on a
 * shared file system, read by byte ranges that begin and end at line starts.
 * A line start is offset 0 or the byte after a terminator; the first line start
 * at or after an offset is found by reading forward from the byte before it,
 * the line before a line start by reading backward, in small preads, so that a
 * rank touches only the bytes it needs (the co-rank's probes and the boundary
 * lines). Line numbers in messages are counted only when a message needs them.
 */
#define _GNU_SOURCE
#include "gmpi.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/read/input.h"
#include "../core/read/pread.h"
#include "../core/base/util.h"

enum { PROBE = 4096, COUNT_PIECE = 1 << 20 };

int gm_mpi_inputs(gm_mpi *m, char *const *names, int nnames, gm_mpi_input **out,
                  int *regular, gm_status *st)
{
    gm_mpi_input *ins = calloc((size_t)nnames + 1, sizeof *ins);
    int64_t *sizes = calloc((size_t)nnames + 1, sizeof *sizes);
    int rc = ins && sizes ? GM_OK : gm_fail(st, GM_ENOMEM, "out of memory");
    int all_regular = 1;
    for (int i = 0; i < nnames && ins; i++)
        ins[i].fd = -1;
    for (int i = 0; i < nnames && !rc; i++) {
        ins[i].name = names[i];
        if (strcmp(names[i], "-") == 0) { /* standard input is rank 0's alone */
            gm_quote("-", ins[i].shown, sizeof ins[i].shown);
            all_regular = 0;
            continue;
        }
        gm_input in;
        rc = gm_input_open(&in, names[i], st);
        snprintf(ins[i].shown, sizeof ins[i].shown, "%s", in.shown);
        if (rc)
            break;
        ins[i].fd = in.fd;
        struct stat sb;
        if (fstat(in.fd, &sb) != 0 || !S_ISREG(sb.st_mode))
            all_regular = 0;
        else
            sizes[i] = (int64_t)sb.st_size;
    }
    rc = gm_mpi_agree(m, rc, st);
    MPI_Allreduce(MPI_IN_PLACE, &all_regular, 1, MPI_INT, MPI_MIN, m->comm);
    if (!rc)
        MPI_Bcast(sizes, nnames, MPI_INT64_T, 0, m->comm);
    int64_t base = 0;
    for (int i = 0; i < nnames && !rc; i++) {
        ins[i].size = sizes[i];
        ins[i].base = base;
        base += sizes[i];
    }
    free(sizes);
    *regular = all_regular;
    if (rc) {
        gm_mpi_inputs_close(ins, nnames);
        ins = NULL;
    }
    *out = ins;
    return rc;
}

void gm_mpi_inputs_close(gm_mpi_input *ins, int n)
{
    for (int i = 0; ins && i < n; i++)
        if (ins[i].fd > STDIN_FILENO)
            close(ins[i].fd);
    free(ins);
}

static int read_fail(gm_status *st, const gm_mpi_input *in, int err)
{
    if (err < 0)
        return gm_fail(st, GM_EIO, "%s: file changed while reading", in->shown);
    return gm_fail(st, GM_EIO, "read failed: %s: %s", in->shown, strerror(err));
}

int gm_mpi_line_start(const gm_mpi_input *in, char eol, int64_t off, int64_t *start,
                      gm_status *st)
{
    unsigned char buf[PROBE];
    if (off <= 0 || off >= in->size) {
        *start = off <= 0 ? 0 : in->size;
        return GM_OK;
    }
    for (int64_t at = off - 1; at < in->size; at += PROBE) {
        size_t n = in->size - at < PROBE ? (size_t)(in->size - at) : PROBE;
        int err = gm_pread_all(in->fd, buf, n, at);
        if (err)
            return read_fail(st, in, err);
        const unsigned char *e = memchr(buf, (unsigned char)eol, n);
        if (e) {
            *start = at + (e - buf) + 1;
            return GM_OK;
        }
    }
    *start = in->size;
    return GM_OK;
}

int gm_mpi_line_at(const gm_mpi_input *in, char eol, int64_t off, unsigned char **line,
                   size_t *len, gm_status *st)
{
    size_t cap = PROBE, have = 0;
    unsigned char *buf = malloc(cap);
    if (!buf)
        return gm_fail(st, GM_ENOMEM, "out of memory");
    for (;;) {
        int64_t left = in->size - off - (int64_t)have;
        size_t n = left < PROBE ? (size_t)(left > 0 ? left : 0) : PROBE;
        if (have + n > cap) {
            unsigned char *b = realloc(buf, 2 * cap + n);
            if (!b) {
                free(buf);
                return gm_fail(st, GM_ENOMEM, "out of memory");
            }
            buf = b;
            cap = 2 * cap + n;
        }
        int err = n ? gm_pread_all(in->fd, buf + have, n, off + (int64_t)have) : 0;
        if (err) {
            free(buf);
            return read_fail(st, in, err);
        }
        const unsigned char *e = memchr(buf + have, (unsigned char)eol, n);
        if (e || n == 0) { /* a line's end, or the file's (its last line unended) */
            *len = e ? (size_t)(e - buf) : have;
            *line = buf;
            return GM_OK;
        }
        have += n;
    }
}

int gm_mpi_line_before(const gm_mpi_input *in, char eol, int64_t off, unsigned char **line,
                       size_t *len, gm_status *st)
{
    unsigned char buf[PROBE];
    int64_t end = off - 1, start = 0; /* the terminator at end ends the line */
    for (int64_t hi = end; hi > 0;) {
        int64_t lo = hi - PROBE > 0 ? hi - PROBE : 0;
        int err = gm_pread_all(in->fd, buf, (size_t)(hi - lo), lo);
        if (err)
            return read_fail(st, in, err);
        const unsigned char *e = memrchr(buf, (unsigned char)eol, (size_t)(hi - lo));
        if (e) {
            start = lo + (e - buf) + 1;
            break;
        }
        hi = lo;
    }
    return gm_mpi_line_at(in, eol, start, line, len, st);
}

int gm_mpi_src_range(gm_lines_src *s, const gm_mpi_input *in, char eol, int64_t off,
                     int64_t len, gm_status *st)
{
    int fd = dup(in->fd);
    if (fd < 0)
        return gm_fail(st, GM_EIO, "cannot read: %s: %s", in->shown, strerror(errno));
    if (lseek(fd, (off_t)off, SEEK_SET) < 0) {
        int err = errno;
        close(fd);
        return gm_fail(st, GM_EIO, "read failed: %s: %s", in->shown, strerror(err));
    }
    gm_lines_open_fd(s, fd, 1, in->shown, eol);
    gm_lines_limit(s, off + len); /* a line start or the file's end */
    return GM_OK;
}

/* Lines of in before off (off a line start). -1 when it cannot be read. */
static int64_t lines_before(const gm_mpi_input *in, char eol, int64_t off)
{
    unsigned char *buf = malloc(COUNT_PIECE);
    if (!buf)
        return -1;
    int64_t n = 0;
    for (int64_t at = 0; at < off && n >= 0; at += COUNT_PIECE) {
        size_t len = off - at < COUNT_PIECE ? (size_t)(off - at) : COUNT_PIECE;
        if (gm_pread_all(in->fd, buf, len, at) != 0) {
            n = -1;
            break;
        }
        for (const unsigned char *p = buf, *end = buf + len;
             (p = memchr(p, (unsigned char)eol, (size_t)(end - p))) != NULL; p++)
            n++;
    }
    free(buf);
    return n;
}

void gm_mpi_renumber(gm_status *st, const gm_mpi_input *in, char eol, int64_t off)
{
    size_t sl = strlen(in->shown);
    if (off <= 0 || strncmp(st->msg, in->shown, sl) != 0 || st->msg[sl] != ':')
        return;
    char *end;
    long long line = strtoll(st->msg + sl + 1, &end, 10);
    int64_t before = lines_before(in, eol, off);
    if (end == st->msg + sl + 1 || before < 0)
        return;
    size_t total = st->len ? st->len : strlen(st->msg);
    size_t rest = total - (size_t)(end - st->msg);
    char num[32];
    int nl = snprintf(num, sizeof num, "%lld", line + (long long)before);
    size_t at = sl + 1, room = sizeof st->msg - 1 - at - (size_t)nl;
    if (rest > room)
        rest = room;
    memmove(st->msg + at + nl, end, rest);
    memcpy(st->msg + at, num, (size_t)nl);
    st->msg[at + (size_t)nl + rest] = '\0';
    if (st->len)
        st->len = at + (size_t)nl + rest;
}

void gm_mpi_rename(gm_status *st, const char *name, const gm_mpi_input *in, char eol,
                   int64_t off)
{
    size_t nl = strlen(name), sl = strlen(in->shown);
    size_t total = st->len ? st->len : strlen(st->msg);
    if (strncmp(st->msg, name, nl) != 0 || st->msg[nl] != ':' || total - nl + sl >= sizeof st->msg)
        return;
    memmove(st->msg + sl, st->msg + nl, total - nl + 1);
    memcpy(st->msg, in->shown, sl);
    if (st->len)
        st->len = total - nl + sl;
    gm_mpi_renumber(st, in, eol, off);
}

int gm_mpi_disorder(gm_status *st, gm_code code, const gm_mpi_input *in, char eol,
                    int64_t off, const unsigned char *line, size_t len)
{
    int64_t before = lines_before(in, eol, off);
    gm_fail(st, code, "%s:%lld: disorder: ", in->shown, (long long)(before + 1));
    size_t at = strlen(st->msg), room = sizeof st->msg - 1 - at;
    if (len > room)
        len = room;
    memcpy(st->msg + at, line, len);
    st->msg[at + len] = '\0';
    st->len = at + len;
    return code;
}

int gm_mpi_corank(const gm_mpi_input *in, const gm_keyspec *ks, uint64_t p0, int64_t lo,
                  const unsigned char *b, size_t blen, uint64_t b0, uint64_t b1, int64_t *pos,
                  gm_status *st)
{
    int64_t hi = in->size;
    while (lo < hi) { /* the least x whose next line start comes after b */
        int64_t mid = lo + (hi - lo) / 2, at;
        unsigned char *line;
        size_t len;
        int rc = gm_mpi_line_start(in, ks->eol, mid, &at, st);
        if (!rc && at < in->size)
            rc = gm_mpi_line_at(in, ks->eol, at, &line, &len, st);
        if (rc)
            return rc;
        int after = at >= in->size;
        if (!after) {
            after = gm_mpi_cmp_pos(ks, line, len, p0, (uint64_t)at, b, blen, b0, b1) > 0;
            free(line);
        }
        if (after)
            hi = mid;
        else
            lo = mid + 1;
    }
    return gm_mpi_line_start(in, ks->eol, lo, pos, st);
}

int gm_mpi_cmp_pos(const gm_keyspec *ks, const unsigned char *a, size_t alen, uint64_t pa0,
                   uint64_t pa1, const unsigned char *b, size_t blen, uint64_t pb0, uint64_t pb1)
{
    int d = gm_line_cmp(ks, a, alen, b, blen);
    if (d)
        return d;
    if (pa0 != pb0)
        return pa0 < pb0 ? -1 : 1;
    return pa1 < pb1 ? -1 : pa1 > pb1;
}
