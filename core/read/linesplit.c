/*
 * linesplit.c - a block of lines split into records (gm_lines_split) and its
 * lines counted (gm_lines_count), see lines.h: each piece's lines are counted
 * first so that every piece knows where its records go, then the prefixes of
 * all the pieces are made in parallel on the pool; a first key that is one
 * whole -t field under -n takes fieldnum.h's quick prefix. A split of an input
 * whose default -n is checked (numwarn.h) looks again at the lines whose prefix
 * is zero's, and at every line where the key checked is not the first.
 */
#define _GNU_SOURCE
#include "read/lines.h"

#include <stdlib.h>
#include <string.h>

#include "read/eolscan.h"
#include "read/fieldnum.h"
#include "keys/keyprefix.h"
#include "base/util.h"
#include "read/numwarn.h"

enum { SPLIT_PIECE = 256 << 10 }; /* a block not counted is split this much a task */

struct split_job {
    const gm_keyspec *ks;  /* the keys whose prefixes are made (split) */
    const unsigned char *data; /* the block's lines (split, from b->data) */
    size_t len;        /* the block's bytes */
    unsigned char eol; /* the line terminator (the keyspec's) */
    int pieces;        /* tasks the block is cut into (split: a unit counted, or by size) */
    size_t *bound;  /* pieces + 1 line starts */
    size_t *count;  /* lines per piece, then the first record's index */
    gm_rec *out;       /* where the records go: v's free tail (split) */
    gm_fieldnum quick; /* the first key's quick prefix, where it applies */
    int check;         /* the key checked for a number (numwarn.h), or -1 */
    uint64_t zero;     /* the prefix of a first key that holds no number or zero */
    size_t bad;        /* the first record whose line holds no number (atomic) */
};

static void split_count(void *ctx, int i)
{
    struct split_job *j = ctx;
    j->count[i] = count_eol(j->data + j->bound[i], j->data + j->bound[i + 1], j->eol);
}

/* The record of the line [p, e) (e: its terminator). */
static inline void split_line(struct split_job *j, gm_rec *r, const unsigned char *p,
                              const unsigned char *e)
{
    size_t len = (size_t)(e - p);
    int exact = 0;
    r->prefix = j->quick.on ? gm_fieldnum_prefix(&j->quick, j->ks, p, len, j->data + j->len, &exact)
                            : gm_line_prefix(j->ks, p, len, &exact);
    r->ref = gm_rec_make_ref(p, len, exact);
    if (j->check >= 0 && (j->check > 0 || r->prefix == j->zero) &&
        !gm_numwarn_holds(j->ks, j->check, p, len)) {
        size_t i = (size_t)(r - j->out);
        for (size_t b = __atomic_load_n(&j->bad, __ATOMIC_RELAXED);
             i < b && !__atomic_compare_exchange_n(&j->bad, &b, i, 0, __ATOMIC_RELAXED,
                                                   __ATOMIC_RELAXED);)
            ;
    }
}

/* Piece i's records: its terminators found 64 bytes a compare, the tail by memchr. */
static void split_fill(void *ctx, int i)
{
    struct split_job *j = ctx;
    const unsigned char *p = j->data + j->bound[i], *end = j->data + j->bound[i + 1];
    gm_rec *r = j->out + j->count[i];
    for (const unsigned char *w = p; end - w >= 64; w += 64) {
        for (uint64_t bits = eol_bits(w, j->eol); bits; bits &= bits - 1) {
            const unsigned char *e = w + __builtin_ctzll(bits);
            split_line(j, r++, p, e);
            p = e + 1;
        }
    }
    while (p < end) {
        const unsigned char *e = memchr(p, j->eol, (size_t)(end - p));
        split_line(j, r++, p, e);
        p = e + 1;
    }
}

/* gm_lines_split, the lines checked for a number where check >= 0: the first
 * record of b whose line holds none in *bad, else SIZE_MAX. */
static int split(const gm_keyspec *ks, const gm_lines_block *b, gm_recs *v, int nthreads,
                 int check, size_t *bad, gm_status *st)
{
    int pieces = (int)(b->len / SPLIT_PIECE) + 1;
    if (pieces > nthreads * 16)
        pieces = nthreads * 16;
    if (b->counts)
        pieces = (int)b->ncounts; /* a piece per unit counted */
    size_t *mem = malloc(sizeof(size_t) * (2 * (size_t)pieces + 1));
    if (!mem)
        return gm_fail(st, GM_ENOMEM, "out of memory splitting lines");
    struct split_job j = { ks, b->data, b->len, (unsigned char)ks->eol, pieces, mem,
                           mem + pieces + 1, NULL, { 0, 0, 0, 0 }, check,
                           check >= 0 ? gm_numwarn_zero(ks) : 0, SIZE_MAX };
    gm_fieldnum_init(&j.quick, ks);
    j.bound[0] = 0;
    j.bound[pieces] = b->len;
    if (b->counts) {
        /* piece i: the lines that end in unit i, from the end of the last line
         * before it */
        for (int i = 1; i < pieces; i++) {
            const unsigned char *e = memrchr(b->data, j.eol, (size_t)i * GM_LINES_UNIT);
            j.bound[i] = e ? (size_t)(e - b->data) + 1 : 0;
            j.count[i - 1] = b->counts[i - 1];
        }
        j.count[pieces - 1] = b->counts[pieces - 1];
    } else {
        /* each boundary is moved to the start of the line it falls in */
        for (int i = 1; i < pieces; i++) {
            size_t raw = b->len * (size_t)i / (size_t)pieces;
            size_t at = j.bound[i - 1] > raw ? j.bound[i - 1] : raw;
            const unsigned char *e = at > 0 ? memchr(b->data + at - 1, j.eol, b->len - at + 1)
                                            : NULL;
            j.bound[i] = at == 0 ? 0 : (size_t)(e - b->data) + 1;
        }
        gm_parallel_for(nthreads, pieces, split_count, &j);
    }
    size_t total = 0;
    for (int i = 0; i < pieces; i++) {
        size_t c = j.count[i];
        j.count[i] = total;
        total += c;
    }
    int rc = gm_recs_reserve(v, total, st);
    if (!rc) {
        j.out = v->r + v->n;
        gm_parallel_for(nthreads, pieces, split_fill, &j);
        v->n += total;
    }
    *bad = j.bad;
    free(mem);
    return rc;
}

int gm_lines_split(const gm_keyspec *ks, const gm_lines_block *b, gm_recs *v, int nthreads,
                   gm_status *st)
{
    size_t bad;
    return split(ks, b, v, nthreads, -1, &bad, st);
}

int gm_lines_split_checked(const gm_lines_src *s, const gm_keyspec *ks, const gm_lines_block *b,
                           gm_recs *v, int nthreads, gm_status *st)
{
    int check = s->watch && !gm_numwarn_said() ? s->watch_key : -1;
    size_t bad;
    int rc = split(ks, b, v, nthreads, check, &bad, st);
    if (!rc && bad != SIZE_MAX)
        gm_numwarn_say(s->watch, check, s->shown, s->block_line + (int64_t)bad + 1);
    return rc;
}

struct count_all {
    const unsigned char *data; /* the block's lines (gm_lines_count) */
    size_t len;                /* their bytes */
    unsigned char eol;         /* the line terminator counted */
    int pieces;                /* tasks, each an equal share of the bytes (gm_lines_count) */
    size_t count[GM_LINES_COUNT_PIECES]; /* terminators per piece (count_piece) */
};

static void count_piece(void *ctx, int i)
{
    struct count_all *j = ctx;
    const unsigned char *p = j->data + j->len * (size_t)i / (size_t)j->pieces;
    const unsigned char *end = j->data + j->len * (size_t)(i + 1) / (size_t)j->pieces;
    size_t n = 0;
    while (p < end && (p = memchr(p, j->eol, (size_t)(end - p))) != NULL) {
        n++;
        p++;
    }
    j->count[i] = n;
}

size_t gm_lines_count(const gm_lines_block *b, char eol, int nthreads)
{
    size_t n = 0;
    if (b->counts) {
        for (size_t i = 0; i < b->ncounts; i++)
            n += b->counts[i];
        return n;
    }
    struct count_all j = { b->data, b->len, (unsigned char)eol, 1, { 0 } };
    size_t want = b->len / SPLIT_PIECE + 1;
    j.pieces = want < (size_t)nthreads * 4 ? (int)want : nthreads * 4;
    if (j.pieces > GM_LINES_COUNT_PIECES)
        j.pieces = GM_LINES_COUNT_PIECES;
    if (j.pieces < 1)
        j.pieces = 1;
    gm_parallel_for(nthreads, j.pieces, count_piece, &j);
    for (int i = 0; i < j.pieces; i++)
        n += j.count[i];
    return n;
}
