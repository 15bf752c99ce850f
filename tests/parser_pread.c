/*
 * parser_pread.c - the parallel pread (core/read/pread.h) under the reader: spans read
 * in pieces on several threads, every byte in place and each piece's callback
 * once with its bounds; no more threads than the caller gives; its messages,
 * which name the file, and the size rule.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/read/pread.h"
#include "helpers.h"

/* What the pieces' callback saw: each piece's bounds once, and on which thread. */
enum { MAX_PIECES = 64 };
struct seen {
    size_t lo[3][MAX_PIECES], hi[3][MAX_PIECES];
    int calls[3][MAX_PIECES];
    int foreign;          /* pieces done on a thread other than the caller's (atomic) */
    pthread_t caller;
};

static void note_piece(void *ctx, int span, int piece, size_t lo, size_t hi)
{
    struct seen *s = ctx;
    cr_assert(span >= 0 && span < 3 && piece >= 0 && piece < MAX_PIECES);
    s->lo[span][piece] = lo;
    s->hi[span][piece] = hi;
    __atomic_add_fetch(&s->calls[span][piece], 1, __ATOMIC_RELAXED);
    if (!pthread_equal(pthread_self(), s->caller))
        __atomic_store_n(&s->foreign, 1, __ATOMIC_RELAXED);
}

static char *random_bytes(rng *r, size_t n)
{
    char *p = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        p[i] = (char)rng_next(r);
    return p;
}

/* Three spans (one from a file offset into the middle of its buffer, one empty, one
 * whole) read in pieces on several threads: every byte in place, nothing before a
 * span's at touched, and the callback once per piece with its bounds. */
Test(parser, pread_reads_spans_in_pieces)
{
    rng r;
    rng_seed(&r, 11);
    char *dir = scratch_dir(), *fa = path_in(dir, "a"), *fb = path_in(dir, "b");
    size_t na = 1000003, nb = 300001, piece = 64 << 10, at = 200000;
    char *a = random_bytes(&r, na), *b = random_bytes(&r, nb);
    write_file(fa, a, na);
    write_file(fb, b, nb);
    int da = open(fa, O_RDONLY), db = open(fb, O_RDONLY);
    size_t len0 = at + (na - 4096); /* a's bytes from offset 4096, placed at buf0 + at */
    char *buf0 = malloc(len0), *buf2 = malloc(nb);
    memset(buf0, 'x', len0);
    gm_pread_span spans[3] = {
        { da, "a", buf0, at, len0, 4096 },
        { db, "b", buf2, 0, 0, 0 },
        { db, "b", buf2, 0, nb, 0 },
    };
    struct seen seen;
    memset(&seen, 0, sizeof seen);
    seen.caller = pthread_self();
    gm_status st;
    cr_assert_eq(gm_pread_parallel(spans, 3, piece, 4, note_piece, &seen, &st), GM_OK, "%s",
                 st.msg);
    for (size_t i = 0; i < at; i++)
        cr_assert_eq(buf0[i], 'x', "byte %zu before at is left alone", i);
    cr_assert_arr_eq(buf0 + at, a + 4096, na - 4096);
    cr_assert_arr_eq(buf2, b, nb);
    size_t ends[3] = { len0, 0, nb };
    for (int sp = 0; sp < 3; sp++) {
        int pieces = (int)((ends[sp] + piece - 1) / piece);
        cr_assert_lt(pieces, MAX_PIECES);
        for (int k = 0; k < MAX_PIECES; k++) {
            cr_assert_eq(seen.calls[sp][k], k < pieces, "span %d piece %d", sp, k);
            if (k < pieces) {
                cr_assert_eq(seen.lo[sp][k], (size_t)k * piece);
                cr_assert_eq(seen.hi[sp][k], k + 1 < pieces ? (size_t)(k + 1) * piece : ends[sp]);
            }
        }
    }
    close(da);
    close(db);
    free(a), free(b), free(buf0), free(buf2);
    unlink(fa), unlink(fb), rmdir(dir);
    free(dir), free(fa), free(fb);
}

/* The pieces run on no more threads than the caller gives (--parallel): one thread
 * is the caller's alone. */
Test(parser, pread_keeps_to_its_threads)
{
    rng r;
    rng_seed(&r, 12);
    char *dir = scratch_dir(), *f = path_in(dir, "f");
    size_t n = 4 << 20;
    char *want = random_bytes(&r, n), *buf = malloc(n);
    write_file(f, want, n);
    int fd = open(f, O_RDONLY);
    gm_pread_span span = { fd, "f", buf, 0, n, 0 };
    struct seen seen;
    memset(&seen, 0, sizeof seen);
    seen.caller = pthread_self();
    gm_status st;
    cr_assert_eq(gm_pread_parallel(&span, 1, n / 48, 1, note_piece, &seen, &st), GM_OK);
    cr_assert_eq(seen.foreign, 0, "one thread: every piece on the caller's");
    cr_assert_arr_eq(buf, want, n);
    close(fd);
    free(want), free(buf);
    unlink(f), rmdir(dir);
    free(dir), free(f);
}

/* A file shorter than its span, and a descriptor that cannot be read: the message
 * names the file, and the size rule names a file whose size is not the one read. */
Test(parser, pread_errors_name_the_file)
{
    char *dir = scratch_dir(), *f = path_in(dir, "f");
    write_text(f, "12\n34\n");
    int fd = open(f, O_RDONLY);
    char buf[64];
    gm_status st;
    gm_pread_span ok = { fd, "f", buf, 0, 6, 0 };
    gm_pread_span longer[2] = { ok, { fd, "'g h'", buf, 0, 20, 0 } };
    cr_assert_eq(gm_pread_parallel(longer, 2, 4, 2, NULL, NULL, &st), GM_EIO);
    cr_assert_str_eq(st.msg, "'g h': file changed while reading");
    gm_pread_span bad = { -1, "b", buf, 0, 6, 0 };
    cr_assert_eq(gm_pread_parallel(&bad, 1, 4, 2, NULL, NULL, &st), GM_EIO);
    cr_assert_str_eq(st.msg, "read failed: b: Bad file descriptor"); /* sort's words for a read */
    cr_assert_eq(gm_pread_check_size(fd, 6, "f", &st), GM_OK);
    cr_assert_eq(gm_pread_check_size(fd, 5, "f", &st), GM_EIO);
    cr_assert_str_eq(st.msg, "f: file changed while reading");
    close(fd);
    unlink(f), rmdir(dir);
    free(dir), free(f);
}
