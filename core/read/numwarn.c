/*
 * numwarn.c - the default -n's one warning (numwarn.h): which key is checked, the
 * warning said once in the process, and the scan of text that is not split into
 * records on the host. The scan cuts the text into pieces at line starts, each
 * scanned on the pool; where the key starts at the line's start, 64 bytes are
 * looked at a time (eolscan.h's terminator bits beside SSE2's digit bits) and only
 * a line that does not begin with a digit is read further; where it is a whole -t
 * field, fieldnum.h's look at a line's first 32 bytes finds the field's first.
 */
#define _GNU_SOURCE
#include "read/numwarn.h"

#include <stdlib.h>
#include <string.h>

#include "read/eolscan.h"
#include "read/fieldnum.h"
#include "base/util.h"

enum { PIECE = 1 << 20 }; /* the scan's text per task */

static int said; /* set once, atomically, by the thread that says it */

int gm_numwarn_key(const gm_config *cfg)
{
    const gm_keyspec *ks = cfg->keyspec;
    if (!ks || !ks->order_implied || cfg->check_quiet || !cfg->message || cfg->strict)
        return -1;
    for (int i = 0; i < ks->nkeys; i++) /* a key with flags of its own keeps its order */
        if (ks->keys[i].order == GM_ORDER_NUMERIC)
            return i;
    return -1;
}

void gm_numwarn_watch(gm_lines_src *s, const gm_config *cfg)
{
    s->watch_key = gm_numwarn_key(cfg);
    s->watch = s->watch_key >= 0 ? cfg : NULL;
}

int gm_numwarn_said(void)
{
    return __atomic_load_n(&said, __ATOMIC_RELAXED);
}

void gm_numwarn_say(const gm_config *cfg, int key, const char *shown, int64_t line)
{
    if (__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
        return;
    const gm_keydef *k = &cfg->keyspec->keys[key];
    int whole = cfg->keyspec->nkeys == 1 && k->sword == 0 && k->schar == 0 &&
                k->eword == SIZE_MAX;
    gm_say(cfg, GM_MSG_NOTICE,
           "%s:%lld: no number in this line%s; lines are ordered by -n, gpumerge's default "
           "(name an order such as -n, -d or -f, or use gpusort for sort's byte order)",
           shown, (long long)line, whole ? "" : "'s key");
}

/* ------------------------------------------------------------------ scan */

struct scan_job {
    const gm_keyspec *ks;  /* the keys of the lines scanned (gm_numwarn_scan) */
    int key;             /* the key checked for a number (gm_numwarn_scan's caller) */
    int at_start;        /* the key begins at the line's start */
    gm_fieldnum quick;   /* the key is a whole -t field: its look (fieldnum.h) */
    const unsigned char *data, *data_end; /* the bytes scanned (gm_numwarn_scan) */
    unsigned char eol;   /* the line terminator (the keyspec's) */
    size_t *bound;       /* pieces + 1 line starts */
    size_t *lines;       /* per piece: its lines, or those before its bad line */
    size_t *bad;         /* per piece: the bad line's index in it, or SIZE_MAX */
    int first_bad;       /* the first piece known to hold one (atomic) */
};

/* The digits among the 64 bytes at p, as bits. */
static inline uint64_t digit_bits(const unsigned char *p)
{
    uint64_t bits = 0;
#ifdef GM_LINES_SSE2
    const __m128i zero = _mm_set1_epi8('0'), nine = _mm_set1_epi8(9);
    for (int i = 0; i < 4; i++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));
        __m128i d = _mm_sub_epi8(v, zero);
        bits |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(d, nine), d))
                << (16 * i);
    }
#else
    for (int i = 0; i < 64; i++)
        bits |= (uint64_t)gm_kp_digit(p[i]) << i;
#endif
    return bits;
}

/* Whether the line [s, e) holds no number in its key. Where the key is a whole
 * -t field, one look at the line's first 32 bytes answers for a field that
 * begins with a digit or is empty (or absent from a line shorter than the
 * look); anything else is read by gm_numwarn_holds. */
static inline int line_bad(const struct scan_job *j, const unsigned char *s,
                           const unsigned char *e)
{
    size_t len = (size_t)(e - s);
#if defined(GM_LINES_SSE2) && defined(GM_KP_WORDS)
    if (j->quick.on && j->data_end - s >= GM_FIELDNUM_LOOK) {
        uint32_t tabs, digits = gm_fieldnum_look(s, j->quick.tab, &tabs);
        tabs &= len >= GM_FIELDNUM_LOOK ? ~0u : (1u << len) - 1; /* the line's own */
        unsigned k = j->quick.sword, at = 0;
        for (; k > 1 && tabs; k--)
            tabs &= tabs - 1;
        if (k == 1 && tabs)
            at = (unsigned)__builtin_ctz(tabs) + 1, k = 0;
        if (k != 0 ? len < GM_FIELDNUM_LOOK /* no such field: a blank key */
                   : at >= len || (at < GM_FIELDNUM_LOOK &&
                                   (digits >> at & 1 || s[at] == j->quick.tab)))
            return 0;
    }
#endif
    return !gm_numwarn_holds(j->ks, j->key, s, len);
}

/* The lines that begin with no digit among [*from, end) (the key begins at the
 * line's start: a digit there holds a number), 64 bytes a look: the first that
 * holds none (its index from *n), else SIZE_MAX with *n counting the lines and
 * *from moved to the first line not looked at. */
static size_t scan_starts(const struct scan_job *j, const unsigned char **from,
                          const unsigned char *end, size_t *n)
{
    const unsigned char *w = *from;
    uint64_t starts_next = 1; /* the piece begins a line */
    for (; end - w >= 64; w += 64) {
        uint64_t eols = eol_bits(w, j->eol), starts = eols << 1 | starts_next;
        starts_next = eols >> 63;
        for (uint64_t odd = starts & ~digit_bits(w); odd; odd &= odd - 1) {
            int at = __builtin_ctzll(odd);
            const unsigned char *s = w + at;
            if (line_bad(j, s, memchr(s, j->eol, (size_t)(end - s))))
                return *n + (size_t)__builtin_popcountll(eols & ((UINT64_C(1) << at) - 1));
        }
        *n += (size_t)__builtin_popcountll(eols);
    }
    if (!starts_next) { /* past the line that began before w, looked at already */
        const unsigned char *e = w < end ? memchr(w, j->eol, (size_t)(end - w)) : NULL;
        w = e ? e + 1 : end;
        *n += e != NULL;
    }
    *from = w;
    return SIZE_MAX;
}

/* Every line of [p, end), its terminators found 64 bytes a compare: the first
 * that holds no number (its index from *n), else SIZE_MAX with *n counting. */
static size_t scan_lines(const struct scan_job *j, const unsigned char *p,
                         const unsigned char *end, size_t *n)
{
    for (const unsigned char *w = p; end - w >= 64; w += 64)
        for (uint64_t bits = eol_bits(w, j->eol); bits; bits &= bits - 1, ++*n) {
            const unsigned char *e = w + __builtin_ctzll(bits);
            if (line_bad(j, p, e))
                return *n;
            p = e + 1;
        }
    for (; p < end; p++, ++*n) {
        const unsigned char *e = memchr(p, j->eol, (size_t)(end - p));
        if (line_bad(j, p, e))
            return *n;
        p = e;
    }
    return SIZE_MAX;
}

/* Piece i: its lines counted up to the first that holds no number. */
static void scan_piece(void *ctx, int i)
{
    struct scan_job *j = ctx;
    const unsigned char *p = j->data + j->bound[i], *end = j->data + j->bound[i + 1];
    size_t n = 0, bad = SIZE_MAX;
    j->bad[i] = SIZE_MAX;
    if (__atomic_load_n(&j->first_bad, __ATOMIC_RELAXED) < i)
        return; /* a piece before has one */
    if (j->at_start)
        bad = scan_starts(j, &p, end, &n);
    if (bad == SIZE_MAX)
        bad = scan_lines(j, p, end, &n);
    j->bad[i] = bad;
    j->lines[i] = bad == SIZE_MAX ? n : bad;
    if (bad == SIZE_MAX)
        return;
    for (int k = __atomic_load_n(&j->first_bad, __ATOMIC_RELAXED);
         i < k && !__atomic_compare_exchange_n(&j->first_bad, &k, i, 0, __ATOMIC_RELAXED,
                                               __ATOMIC_RELAXED);)
        ;
}

size_t gm_numwarn_scan(const gm_keyspec *ks, int key, const unsigned char *p, size_t len,
                       int nthreads, size_t *lines)
{
    *lines = 0;
    if (len == 0)
        return SIZE_MAX;
    int pieces = (int)(len / PIECE) + 1;
    if (pieces > nthreads * 16)
        pieces = nthreads * 16;
    size_t *mem = malloc(sizeof(size_t) * (3 * (size_t)pieces + 1));
    size_t one[4];
    if (!mem) /* one piece, on this thread */
        pieces = 1, nthreads = 1;
    const gm_keydef *k = &ks->keys[key];
    struct scan_job j = { ks, key, k->sword == 0 && k->schar == 0, { 0, 0, 0, 0 }, p, p + len,
                          (unsigned char)ks->eol, mem ? mem : one, NULL, NULL, pieces };
    if (key == 0)
        gm_fieldnum_init(&j.quick, ks);
    j.lines = j.bound + pieces + 1;
    j.bad = j.lines + pieces;
    j.bound[0] = 0;
    j.bound[pieces] = len;
    for (int i = 1; i < pieces; i++) { /* each boundary moved to the start of a line */
        size_t at = len * (size_t)i / (size_t)pieces;
        if (at < j.bound[i - 1])
            at = j.bound[i - 1];
        const unsigned char *e = at > 0 ? memchr(p + at - 1, j.eol, len - at + 1) : NULL;
        j.bound[i] = at == 0 ? 0 : (size_t)(e - p) + 1;
    }
    gm_parallel_for(nthreads, pieces, scan_piece, &j);
    size_t before = 0, found = SIZE_MAX;
    for (int i = 0; i < pieces && found == SIZE_MAX; i++) {
        if (j.bad[i] != SIZE_MAX)
            found = before + j.bad[i];
        before += j.lines[i];
    }
    free(mem);
    *lines = found == SIZE_MAX ? before : found;
    return found;
}

void gm_numwarn_block(const gm_lines_src *s, const gm_lines_block *b, int nthreads)
{
    if (!s->watch || !b || gm_numwarn_said())
        return;
    size_t lines;
    size_t bad = gm_numwarn_scan(s->watch->keyspec, s->watch_key, b->data, b->len, nthreads,
                                 &lines);
    if (bad != SIZE_MAX)
        gm_numwarn_say(s->watch, s->watch_key, s->shown, s->block_line + (int64_t)bad + 1);
}
