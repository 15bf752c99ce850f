/*
 * bulk.c - the ranks' bulk copies between files (see gmpi.h): a range of one
 * file into another at any offset, read by the parallel pread straight into
 * the target's mapping on the pool's threads, after a look at the target's
 * free space so that a full file system is an error before the copy rather
 * than a fault in it; on few threads, or where the target cannot be mapped,
 * in the kernel (copy_file_range) or by pread and pwrite through a buffer.
 * The copies are each rank's output spool into -o at its offset.
 */
#define _GNU_SOURCE
#include "gmpi.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "../core/base/pages.h"
#include "../core/read/pread.h"

enum { PLAIN_CHUNK = 4 << 20, PIECE = 8 << 20 };

int gm_mpi_room_for(int fd, int64_t len)
{
    struct statvfs v;
    if (fstatvfs(fd, &v) != 0 || v.f_blocks == 0)
        return 1;
    return (uint64_t)v.f_bavail * v.f_frsize >= (uint64_t)len;
}

int gm_mpi_copy_plain(int from, int64_t from_off, int to, int64_t to_off, int64_t len)
{
    /* in the kernel where the file systems allow it */
    loff_t in = from_off, out = to_off;
    while (len > 0) {
        ssize_t n = copy_file_range(from, &in, to, &out, (size_t)len, 0);
        if (n <= 0)
            break;
        len -= n;
    }
    if (len == 0)
        return 0;
    from_off = in;
    to_off = out;
    unsigned char *buf = malloc(PLAIN_CHUNK);
    if (!buf)
        return ENOMEM;
    int err = 0;
    for (int64_t at = 0; at < len && !err;) {
        size_t n = len - at < PLAIN_CHUNK ? (size_t)(len - at) : PLAIN_CHUNK;
        err = gm_pread_all(from, buf, n, from_off + at);
        for (size_t put = 0; !err && put < n;) {
            ssize_t w = pwrite(to, buf + put, n - put, (off_t)(to_off + at + (int64_t)put));
            if (w < 0 && errno != EINTR)
                err = errno;
            else if (w > 0)
                put += (size_t)w;
        }
        at += (int64_t)n;
    }
    free(buf);
    return err;
}

int gm_mpi_copy_bytes(int from, int64_t from_off, int to, int64_t to_off, int64_t len,
                      int reserved, int nthreads)
{
    if (len <= 0)
        return 0;
    struct stat sb;
    if (nthreads < GM_MPI_MAPPED_FROM)
        return gm_mpi_copy_plain(from, from_off, to, to_off, len);
    if (fstat(from, &sb) != 0)
        return errno;
    if (from_off + len > (int64_t)sb.st_size)
        return -1;
    if (!reserved && !gm_mpi_room_for(to, len))
        return ENOSPC;
    struct stat tb;
    if (fstat(to, &tb) != 0)
        return errno;
    if ((int64_t)tb.st_size < to_off + len && ftruncate(to, (off_t)(to_off + len)) != 0)
        return errno;
    char *dbase = NULL;
    size_t dsize = 0;
    char *dst = gm_pages_map(to, (off_t)to_off, (size_t)len, &dbase, &dsize);
    if (!dst)
        return gm_mpi_copy_plain(from, from_off, to, to_off, len);
    /* read straight into the target's mapping: preads into one mapping scale
     * with the threads, where faulting in the source's mapping too does not */
    gm_pread_span span = { from, "a temporary file", dst, 0, (size_t)len, from_off };
    gm_status st;
    int rc = gm_pread_parallel(&span, 1, PIECE, nthreads, NULL, NULL, &st);
    munmap(dbase, dsize);
    return rc == GM_OK ? 0 : rc == GM_ENOMEM ? ENOMEM : EIO;
}
