/*
 * output.c - where the ranks' output goes (see gmpi.h). A rank's lines are
 * written first into its spool (a memfd when they fit a quarter of the budget,
 * else a temporary file in -T); once every rank has its spool, an exclusive
 * prefix sum of their sizes gives each its offset. With -o, rank 0 creates a
 * temporary file beside the target (the target's mode, or 0666 less the umask;
 * for a sort at the start, its pages made meanwhile on a thread of its own),
 * sizes it to the total, every rank copies its slice to its offset (bulk.c:
 * through mappings on the rank's threads), and rank 0 renames it over the
 * target only after an MPI_Allreduce says every rank succeeded (removes it
 * otherwise), so that an error anywhere leaves -o as it was. Without -o, rank 0
 * writes the slices to its standard output in rank order, received in bounded
 * chunks.
 */
#define _GNU_SOURCE
#include "gmpi.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/base/cleanup.h"
#include "../core/read/pread.h"
#include "../core/merge/recmerge.h"
#include "../core/base/util.h"

enum { CHUNK = 4 << 20, MIN_BLOCK = 64 << 10, TAG_GATHER = 17 };

int gm_mpi_spool_open(gm_mpi *m, gm_mpi_spool *sp, int64_t expect, gm_status *st)
{
    memset(sp, 0, sizeof *sp);
    sp->fd = -1;
    if (expect <= (int64_t)(m->budget / 4)) {
        sp->fd = memfd_create("gpumerge-mpi", MFD_CLOEXEC);
        if (sp->fd >= 0)
            return GM_OK;
    }
    return gm_temp_create(m->cfg->tmpdir, "gpumerge-mpi.", &sp->fd, &sp->path, st);
}

void gm_mpi_spool_close(gm_mpi_spool *sp)
{
    if (sp->fd >= 0)
        close(sp->fd);
    sp->fd = -1;
    if (sp->path)
        gm_temp_remove(sp->path);
    free(sp->path);
    sp->path = NULL;
}

int gm_mpi_seed_last(gm_recsink *k, const unsigned char *line, size_t len, gm_status *st)
{
    free(k->last);
    k->last = malloc(len + 1);
    if (!k->last)
        return gm_fail(st, GM_ENOMEM, "out of memory");
    memcpy(k->last, line, len);
    k->last[len] = (unsigned char)k->ks->eol;
    k->last_cap = len + 1;
    int exact = 0;
    k->last_rec.prefix = gm_line_prefix(k->ks, k->last, len, &exact);
    k->last_rec.ref = gm_rec_make_ref(k->last, len, exact);
    k->have_last = 1;
    return GM_OK;
}

int gm_mpi_merge_into(gm_mpi *m, gm_lines_src **srcs, int k, int check,
                      const unsigned char *seed, size_t seed_len, gm_mpi_spool *out,
                      gm_status *st)
{
    size_t block = m->budget / (4 * (size_t)(k + 1));
    block = block < MIN_BLOCK ? MIN_BLOCK : block > CHUNK ? CHUNK : block;
    gm_recmerge_opts o = { m->ks, block, check, m->nthreads };
    gm_recsink sink;
    gm_recsink_init(&sink, m->ks, NULL, out->fd, "a temporary file", m->ks->unique,
                    m->nthreads, CHUNK);
    int rc = seed ? gm_mpi_seed_last(&sink, seed, seed_len, st) : GM_OK;
    if (!rc)
        rc = gm_recmerge(&o, srcs, k, &sink, st);
    if (!rc)
        rc = gm_recsink_flush(&sink, st);
    out->bytes = sink.bytes;
    gm_recsink_free(&sink);
    return rc;
}

int gm_mpi_skip_seed(gm_mpi *m, gm_mpi_spool *sp, const unsigned char *seed, size_t seed_len,
                     gm_status *st)
{
    if (!seed || sp->bytes == 0)
        return GM_OK;
    gm_mpi_input in = { .fd = sp->fd, .size = sp->bytes };
    snprintf(in.shown, sizeof in.shown, "a temporary file");
    unsigned char *line;
    size_t len;
    int rc = gm_mpi_line_at(&in, m->ks->eol, 0, &line, &len, st);
    if (rc)
        return rc;
    if (gm_line_cmp(m->ks, line, len, seed, seed_len) == 0)
        sp->skip = (int64_t)len + 1 > sp->bytes ? sp->bytes : (int64_t)len + 1;
    free(line);
    return GM_OK;
}


/* Rank 0: the temporary file beside the target, sized to total. */
static int create_beside(const char *target, int64_t total, char **tmp,
                         gm_status *st)
{
    char shown[512];
    gm_quote(target, shown, sizeof shown);
    char *real = realpath(target, NULL); /* -o follows a symlink */
    const char *path = real ? real : target;
    struct stat sb;
    int exists = stat(path, &sb) == 0;
    if (exists && (!S_ISREG(sb.st_mode) || access(path, W_OK) != 0)) {
        int err = S_ISREG(sb.st_mode) ? errno : EINVAL;
        free(real);
        return gm_fail(st, GM_EIO, "open failed: %s: %s", shown, strerror(err));
    }
    char *copy = strdup(path), *name = NULL;
    if (copy && asprintf(&name, "%s/.gpumerge-mpi.XXXXXX", dirname(copy)) < 0)
        name = NULL;
    free(copy);
    free(real);
    if (!name)
        return gm_fail(st, GM_ENOMEM, "out of memory");
    sigset_t old = gm_cleanup_block();
    int fd = mkostemp(name, O_CLOEXEC), err = errno;
    int rc = fd >= 0 ? gm_temp_register(name, st) : GM_OK;
    gm_cleanup_unblock(old);
    if (fd < 0) {
        free(name);
        return gm_fail(st, GM_EIO, "open failed: %s: %s", shown, strerror(err));
    }
    mode_t mask = umask(0);
    umask(mask);
    if (!rc && (fchmod(fd, exists ? sb.st_mode & 07777 : 0666 & ~mask) != 0 ||
                ftruncate(fd, (off_t)total) != 0))
        rc = gm_fail(st, GM_EIO, "write failed: %s: %s", shown, strerror(errno));
    close(fd);
    if (rc) {
        gm_temp_remove(name);
        free(name);
        return rc;
    }
    *tmp = name;
    return GM_OK;
}

/* The thread of gm_mpi_output_ahead: the file's pages, total bytes of them. */
static void *output_pages(void *arg)
{
    gm_mpi *m = arg;
    int fd = open(m->out_tmp, O_RDWR | O_CLOEXEC);
    m->out_reserved = fd >= 0 && fallocate(fd, 0, 0, (off_t)m->out_bytes) == 0;
    if (fd >= 0)
        close(fd);
    return NULL;
}

void gm_mpi_output_ahead(gm_mpi *m, int64_t total)
{
    const char *target = m->cfg->output;
    struct stat sb;
    gm_status ignored;
    if (m->rank != 0 || !target || (stat(target, &sb) == 0 && !S_ISREG(sb.st_mode)) ||
        create_beside(target, 0, &m->out_tmp, &ignored) != GM_OK) {
        m->out_tmp = NULL;
        return;
    }
    m->out_bytes = total;
    m->out_thread_on = total > 0 && pthread_create(&m->out_thread, NULL, output_pages, m) == 0;
}

static void output_pages_wait(gm_mpi *m)
{
    if (m->out_thread_on)
        pthread_join(m->out_thread, NULL);
    m->out_thread_on = 0;
}

void gm_mpi_output_ahead_drop(gm_mpi *m)
{
    output_pages_wait(m);
    if (m->out_tmp)
        gm_temp_remove(m->out_tmp);
    free(m->out_tmp);
    m->out_tmp = NULL;
}

/* Rank 0: the file made ahead, sized to total now (its pages made past total
 * freed), as *tmp. */
static int take_ahead(gm_mpi *m, int64_t total, char **tmp, gm_status *st)
{
    output_pages_wait(m);
    char shown[512];
    gm_quote(m->cfg->output, shown, sizeof shown);
    int fd = open(m->out_tmp, O_RDWR | O_CLOEXEC);
    int err = fd < 0 || ftruncate(fd, (off_t)total) != 0 ? errno : 0;
    if (fd >= 0)
        close(fd);
    if (err) {
        gm_mpi_output_ahead_drop(m);
        return gm_fail(st, GM_EIO, "write failed: %s: %s", shown, strerror(err));
    }
    m->out_reserved &= total <= m->out_bytes;
    *tmp = m->out_tmp;
    m->out_tmp = NULL;
    return GM_OK;
}

/* Every rank's slice into -o; collective. */
static int place_file(gm_mpi *m, gm_mpi_spool *sp, int64_t off, int64_t total, gm_status *st)
{
    const char *target = m->cfg->output;
    char *tmp = NULL;
    int rc = m->rank != 0 ? GM_OK
             : m->out_tmp ? take_ahead(m, total, &tmp, st)
                          : create_beside(target, total, &tmp, st);
    rc = gm_mpi_agree(m, rc, st);
    if (rc)
        return rc;
    char path[PATH_MAX];
    if (m->rank == 0)
        snprintf(path, sizeof path, "%s", tmp);
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, m->comm);
    int reserved = m->out_reserved;
    MPI_Bcast(&reserved, 1, MPI_INT, 0, m->comm);
    char shown[512];
    gm_quote(target, shown, sizeof shown);
    const int64_t len = sp->bytes - sp->skip;
    int fd = len ? open(path, O_RDWR | O_CLOEXEC) : -1;
    if (len) {
        int err = fd < 0 ? errno : gm_mpi_copy_bytes(sp->fd, sp->skip, fd, off, len, reserved,
                                                          m->nthreads);
        if (fd >= 0 && close(fd) != 0 && !err)
            err = errno;
        if (err)
            rc = gm_fail(st, GM_EIO, "write failed: %s: %s", shown,
                         strerror(err < 0 ? EIO : err));
    }
    rc = gm_mpi_agree(m, rc, st);
    if (m->rank == 0) {
        char *real = realpath(target, NULL);
        if (!rc && rename(tmp, real ? real : target) != 0)
            rc = gm_fail(st, GM_EIO, "write failed: %s: %s", shown, strerror(errno));
        if (rc)
            gm_temp_remove(tmp);
        else
            gm_temp_forget(tmp);
        free(real);
        free(tmp);
    }
    return gm_mpi_agree(m, rc, st);
}

/* Every rank's slice onto rank 0's descriptor out (shown: its name), in rank
 * order; collective. */
static int place_gather(gm_mpi *m, gm_mpi_spool *sp, int out, const char *shown, int rc,
                        gm_status *st)
{
    unsigned char *buf = malloc(CHUNK);
    if (!rc && !buf)
        rc = gm_fail(st, GM_ENOMEM, "out of memory writing");
    if (m->rank != 0) {
        for (int64_t at = sp->skip; !rc && at < sp->bytes;) {
            int n = sp->bytes - at < CHUNK ? (int)(sp->bytes - at) : CHUNK;
            int err = gm_pread_all(sp->fd, buf, (size_t)n, at);
            if (err) {
                rc = gm_fail(st, GM_EIO, "cannot read a temporary file: %s",
                             strerror(err < 0 ? EIO : err));
                break;
            }
            MPI_Send(buf, n, MPI_BYTE, 0, TAG_GATHER, m->comm);
            at += n;
        }
        MPI_Send(buf, 0, MPI_BYTE, 0, TAG_GATHER, m->comm); /* the end */
        free(buf);
        return gm_mpi_agree(m, rc, st);
    }
    int err = 0;
    for (int64_t at = sp->skip; !rc && !err && at < sp->bytes;) {
        size_t n = sp->bytes - at < CHUNK ? (size_t)(sp->bytes - at) : CHUNK;
        err = gm_pread_all(sp->fd, buf, n, at);
        if (!err)
            err = gm_write_all(out, buf, n);
        at += (int64_t)n;
    }
    for (int r = 1; r < m->size; r++) {
        for (;;) {
            MPI_Status ms;
            int n;
            MPI_Recv(buf ? buf : (unsigned char *)&n, buf ? CHUNK : 0, MPI_BYTE, r, TAG_GATHER,
                     m->comm, &ms);
            MPI_Get_count(&ms, MPI_BYTE, &n);
            if (n == 0)
                break;
            if (!err && !rc)
                err = gm_write_all(out, buf, (size_t)n);
        }
    }
    free(buf);
    if (!rc && err == EPIPE)
        rc = gm_fail(st, GM_EPIPE, "write failed: %s: %s", shown, strerror(EPIPE));
    else if (!rc && err)
        rc = gm_fail(st, GM_EIO, "write failed: %s: %s", shown, strerror(err < 0 ? EIO : err));
    return gm_mpi_agree(m, rc, st);
}

int gm_mpi_place(gm_mpi *m, gm_mpi_spool *sp, int rc, gm_status *st)
{
    rc = gm_mpi_agree(m, rc, st);
    if (rc)
        return rc;
    double t0 = gm_now();
    int64_t mine = sp->bytes - sp->skip, off = 0, total = 0;
    MPI_Exscan(&mine, &off, 1, MPI_INT64_T, MPI_SUM, m->comm);
    if (m->rank == 0)
        off = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_INT64_T, MPI_SUM, m->comm);
    /* -o naming something other than a regular file (a device, a pipe) is
     * written as standard output is */
    struct stat sb;
    const char *target = m->cfg->output;
    int direct = target && stat(target, &sb) == 0 && !S_ISREG(sb.st_mode);
    MPI_Bcast(&direct, 1, MPI_INT, 0, m->comm);
    if (target && !direct) {
        rc = place_file(m, sp, off, total, st);
    } else {
        char shown[512] = "standard output";
        int fd = STDOUT_FILENO;
        if (target && m->rank == 0) {
            gm_quote(target, shown, sizeof shown);
            fd = open(target, O_WRONLY | O_CLOEXEC);
            if (fd < 0)
                rc = gm_fail(st, GM_EIO, "open failed: %s: %s", shown, strerror(errno));
        }
        rc = place_gather(m, sp, fd, shown, rc, st);
        if (fd > STDOUT_FILENO)
            close(fd);
    }
    m->bytes_out = (double)mine;
    m->t_write += gm_now() - t0;
    return rc;
}
