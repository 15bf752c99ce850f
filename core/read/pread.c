/*
 * pread.c - the parallel pread (see pread.h). Every span is cut into pieces from
 * its buffer's start; the pieces of all spans are numbered one after another and
 * handed to gm_parallel_for, each task finding its span by a binary search over the
 * spans' first piece numbers. Each piece is read by pread(2)s, retried when short or
 * interrupted. The first failure is kept and reported with its file's name.
 */
#define _GNU_SOURCE
#include "read/pread.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

struct pread_job {
    const gm_pread_span *spans; /* the caller's spans (gm_pread_parallel) */
    const int *first;      /* first piece number of each span, and the total after */
    int nspans;            /* spans' entries */
    size_t piece;          /* bytes a task reads, from its span buf's start */
    gm_pread_piece_fn done; /* called per piece read, or NULL (the caller's) */
    void *ctx;             /* done's argument (the caller's) */
    int failed;            /* atomic: err and bad are set */
    int err;               /* an errno, or -1: the file ended first */
    int bad;               /* the span it happened to */
};

int gm_pread_all(int fd, void *to, size_t len, int64_t off)
{
    char *buf = to;
    while (len > 0) {
        ssize_t got = pread(fd, buf, len, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return got < 0 ? errno : -1;
        buf += got;
        off += got;
        len -= (size_t)got;
    }
    return 0;
}

static void pread_task(void *ctx, int task)
{
    struct pread_job *j = ctx;
    int lo = 0, hi = j->nspans - 1; /* the span whose pieces hold task */
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (j->first[mid] <= task)
            lo = mid;
        else
            hi = mid - 1;
    }
    const gm_pread_span *s = &j->spans[lo];
    int k = task - j->first[lo];
    size_t a = (size_t)k * j->piece, b = a + j->piece < s->end ? a + j->piece : s->end;
    size_t from = a > s->at ? a : s->at;
    if (from < b) {
        int err = gm_pread_all(s->fd, s->buf + from, b - from, s->off + (int64_t)(from - s->at));
        if (err) {
            if (!__atomic_exchange_n(&j->failed, 1, __ATOMIC_RELAXED)) {
                j->err = err;
                j->bad = lo;
            }
            return;
        }
    }
    if (j->done)
        j->done(j->ctx, lo, k, a, b);
}

int gm_pread_parallel(const gm_pread_span *spans, int nspans, size_t piece, int nthreads,
                      gm_pread_piece_fn done, void *ctx, gm_status *st)
{
    if (nspans <= 0)
        return GM_OK;
    if (piece == 0)
        piece = 1;
    int one[2], *first = nspans == 1 ? one : malloc(((size_t)nspans + 1) * sizeof *first);
    if (!first)
        return gm_fail(st, GM_ENOMEM, "out of memory reading");
    first[0] = 0;
    for (int i = 0; i < nspans; i++)
        first[i + 1] = first[i] + (int)((spans[i].end + piece - 1) / piece);
    struct pread_job job = { spans, first, nspans, piece, done, ctx, 0, 0, 0 };
    gm_parallel_for(nthreads, first[nspans], pread_task, &job);
    if (first != one)
        free(first);
    if (!job.failed)
        return GM_OK;
    if (job.err > 0)
        return gm_fail(st, GM_EIO, "read failed: %s: %s", spans[job.bad].shown, strerror(job.err));
    return gm_fail(st, GM_EIO, "%s: file changed while reading", spans[job.bad].shown);
}

int gm_pread_error(int err, const char *shown, gm_status *st)
{
    if (err < 0)
        return gm_fail(st, GM_EIO, "%s: file changed while reading", shown);
    return gm_fail(st, GM_EIO, "cannot read: %s: %s", shown, strerror(err));
}

int gm_pread_check_size(int fd, int64_t end, const char *shown, gm_status *st)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0)
        return gm_fail(st, GM_EIO, "cannot read: %s: %s", shown, strerror(errno));
    if ((int64_t)sb.st_size != end)
        return gm_fail(st, GM_EIO, "%s: file changed while reading", shown);
    return GM_OK;
}
