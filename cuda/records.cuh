/*
 * records.cuh - the per-line steps of the records sort on the device
 * (records.cu), host and device functions (GM_HD), so that the kernels run them
 * per thread and the tests' host twin (testing.cu) per loop turn: a line's place
 * from the terminators' offsets, its prefix and first sort key, a text offset's
 * host address, a sorted record with its tie flag, the rounds that order tied
 * records further by the next bits of their keys, and the predicates of cub's
 * passes over the text and the tie flags (device only).
 */
#ifndef GM_CUDA_RECORDS_CUH
#define GM_CUDA_RECORDS_CUH

#include <stdint.h>

#include "../core/keys/keyprefix.h"

typedef unsigned long long u64;

/* Line j's first byte and length: it ends at the j-th terminator (ends[j]). */
GM_HD void rec_line(const u64 *ends, u64 j, u64 *start, u64 *len)
{
    u64 s = j ? ends[j - 1] + 1 : 0;
    *start = s;
    *len = ends[j] - s;
}

/* Line j's prefix (into pfx[j] with head8, else into key[j]), exactness and
 * index; with head8 its first eight bytes are the first sort's key. Returns
 * whether the prefix is exact. */
GM_HD int rec_prefix_one(const gm_keyspec *ks, const unsigned char *text, const u64 *ends, u64 j,
                         int head8, u64 *pfx, u64 *key, uint32_t *val, unsigned char *exact)
{
    u64 s, len;
    rec_line(ends, j, &s, &len);
    int ex;
    u64 p = gm_kp_line_prefix(ks, text + s, (size_t)len, &ex);
    exact[j] = (unsigned char)ex;
    val[j] = (uint32_t)j;
    if (head8) {
        pfx[j] = p;
        key[j] = gm_kp_head8(text + s, (size_t)len, ks->reverse);
    } else {
        key[j] = p;
    }
    return ex;
}

/* The host's address of the byte at text offset off: block b holds offsets
 * [bstart[b], bstart[b + 1]) and lies at hbase[b] on the host; an empty block
 * shares its start with the next, which the search takes. */
GM_HD u64 rec_host_address(const u64 *bstart, const u64 *hbase, int nblocks, u64 off)
{
    int lo = 0, hi = nblocks - 1; /* the last block starting at or before off */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (bstart[mid] <= off)
            lo = mid;
        else
            hi = mid - 1;
    }
    return hbase[lo] + (off - bstart[lo]);
}

/* The record of line j: its host address, length and exactness (core/read/lines.h's
 * second word). */
GM_HD u64 rec_ref(const u64 *ends, const unsigned char *exact, u64 j, const u64 *bstart,
                  const u64 *hbase, int nblocks)
{
    u64 s, len;
    rec_line(ends, j, &s, &len);
    return gm_kp_ref(rec_host_address(bstart, hbase, nblocks, s), (size_t)len, exact[j]);
}

/* Record i of the sorted order (key: the sorted prefixes, val: their lines) as
 * core/read/lines.h's gm_rec, and whether its sort key equals record i - 1's: the
 * prefix, and with by_head the lines' first eight bytes too. */
GM_HD void rec_build_one(const gm_keyspec *ks, const unsigned char *text, const u64 *ends,
                         const u64 *key, const uint32_t *val, const unsigned char *exact, u64 i,
                         const u64 *bstart, const u64 *hbase, int nblocks, int by_head,
                         u64 *recs, unsigned char *tied)
{
    u64 j = val[i], s, len;
    rec_line(ends, j, &s, &len);
    recs[2 * i] = key[i];
    recs[2 * i + 1] = rec_ref(ends, exact, j, bstart, hbase, nblocks);
    int tie = i > 0 && key[i - 1] == key[i];
    if (tie && by_head) {
        u64 ps, plen;
        rec_line(ends, val[i - 1], &ps, &plen);
        tie = gm_kp_head8(text + ps, (size_t)plen, ks->reverse) ==
              gm_kp_head8(text + s, (size_t)len, ks->reverse);
    }
    tied[i] = (unsigned char)tie;
}

/* ---------------------------------------------------------------- refinement
 *
 * Records tied after the first sort are ordered further on the device, 32 bits
 * of their keys a round: each tied record's key is the index of the first
 * record of its run of ties (its group) above the round's word, and a stable
 * sort of those keys orders every run by the word while runs and untied
 * records keep their places. The words (rec_round_words): where every prefix is
 * exact, equal prefixes are equal keys and the words are the lines' bytes from
 * the ninth on, the last resort's; where the one key is in byte order, its bytes
 * from the ninth on as it shows them (folded by -f, skipped by -d and -i); where
 * it is -V, its version stream after the prefix (core/keys/verprefix.h's
 * windows), whose order is the key's. Rounds stop when few ties are left; the
 * host orders what remains as before. */

enum { REC_WORDS_NONE, REC_WORDS_LINE, REC_WORDS_KEY, REC_WORDS_VERSION };

/* The rounds' words for the one key of ks (inexact: some prefix is not). */
GM_HD int rec_round_words(const gm_keyspec *ks, int inexact)
{
    if (!inexact)
        return REC_WORDS_LINE;
    if (ks->nkeys != 1)
        return REC_WORDS_NONE;
    switch (ks->keys[0].order) {
    case GM_ORDER_BYTES: return REC_WORDS_KEY;
    case GM_ORDER_VERSION: return REC_WORDS_VERSION;
    default: return REC_WORDS_NONE;
    }
}

/* Rounds at most (a key's bytes 8 to 31, or -V stream bits 64 to 255), and
 * whether another is worth its sort: more than one record in 1024 still tied. */
#define REC_REFINE_ROUNDS 6
GM_HD int rec_refine_wanted(u64 ties, u64 n)
{
    return ties > 0 && ties >= n / 1024;
}

/* Sorted record i's start of its group's scan: its own index where it is not tied
 * to the record before, else 0 (a running maximum gives the group). */
GM_HD uint32_t rec_group_mark(const unsigned char *tied, u64 i)
{
    return tied[i] ? 0u : (uint32_t)i;
}

/* Bytes [off, off + 4) of a line as a big-endian word (zeros past its end, as the
 * last resort orders a shorter line first), complemented under -r. */
GM_HD uint32_t rec_word(const unsigned char *line, u64 len, u64 off, int reverse)
{
    uint32_t w = 0;
    for (u64 b = off; b < off + 4; b++)
        w = w << 8 | (b < len ? line[b] : 0u);
    return reverse ? ~w : w;
}

/* Bytes [8 + 4 r, 12 + 4 r) of what a line's byte-order key shows (folded by
 * -f, without the bytes -d and -i skip; zeros past its end), complemented under
 * the key's -r. Keys that differ only past their ends stay tied for the host. */
GM_HD uint32_t rec_key_word(const gm_keyspec *ks, const unsigned char *line, u64 len, int r)
{
    const gm_keydef *k = &ks->keys[0];
    size_t kl;
    const unsigned char *kt = gm_kp_key_span(ks->tab, k, line, (size_t)len, &kl);
    const size_t off = 8 + 4 * (size_t)r;
    if (!k->fold && !k->ignore)
        return rec_word(kt, kl, off, k->reverse);
    uint32_t w = 0;
    size_t shown = 0, i = 0;
    for (; i < kl && shown < off + 4; i++)
        if (!gm_kp_skipped(k, kt[i])) {
            if (shown >= off)
                w = w << 8 | gm_kp_shown_byte(k, kt[i]);
            shown++;
        }
    const size_t taken = shown > off ? shown - off : 0;
    w = taken ? w << 8 * (unsigned)(4 - taken) : 0u;
    return k->reverse ? ~w : w;
}

/* Bits [64 + 32 r, 96 + 32 r) of a line's -V key's stream, complemented under
 * the key's -r: after equal prefixes, the word of round r orders the keys. */
GM_HD uint32_t rec_version_word(const gm_keyspec *ks, const unsigned char *line, u64 len, int r)
{
    const gm_keydef *k = &ks->keys[0];
    size_t kl;
    const unsigned char *kt = gm_kp_key_span(ks->tab, k, line, (size_t)len, &kl);
    int ex;
    uint32_t w = (uint32_t)gm_vp_window(kt, kl, 64 + 32 * (size_t)r, 32, &ex);
    return k->reverse ? ~w : w;
}

/* Round r's key of sorted record i (group[i] its group), words as rec_round_words
 * chose them. */
GM_HD u64 rec_refine_key(const gm_keyspec *ks, int words, const unsigned char *text,
                         const u64 *ends, const uint32_t *group, const uint32_t *val, u64 i,
                         int r)
{
    u64 s, len;
    rec_line(ends, val[i], &s, &len);
    const unsigned char *line = text + s;
    uint32_t w = words == REC_WORDS_VERSION ? rec_version_word(ks, line, len, r)
                 : words == REC_WORDS_KEY   ? rec_key_word(ks, line, len, r)
                                            : rec_word(line, len, 8 + 4 * (u64)r, ks->reverse);
    return (u64)group[i] << 32 | w;
}

/* Record i after a round's sort: its line's prefix (pfx by line) and reference,
 * and whether it is still tied (the same group and word as record i - 1). */
GM_HD void rec_refine_one(const u64 *ends, const u64 *pfx, const u64 *key, const uint32_t *val,
                          const unsigned char *exact, u64 i, const u64 *bstart, const u64 *hbase,
                          int nblocks, u64 *recs, unsigned char *tied)
{
    u64 j = val[i];
    recs[2 * i] = pfx[j];
    recs[2 * i + 1] = rec_ref(ends, exact, j, bstart, hbase, nblocks);
    tied[i] = (unsigned char)(i > 0 && key[i - 1] == key[i]);
}

/* cub::DeviceSelect's predicate over byte offsets: the byte is a terminator;
 * and the same as a count, for cub::DeviceReduce. */
struct rec_is_eol {
    const unsigned char *text; /* the job's text on the device (rec_find_lines) */
    unsigned char eol;         /* the line terminator (rec_find_lines) */
    __device__ bool operator()(u64 i) const { return text[i] == eol; }
};
struct rec_eol_count {
    const unsigned char *text; /* the job's text on the device (rec_count_lines) */
    unsigned char eol;         /* the line terminator (rec_count_lines) */
    __device__ u64 operator()(u64 i) const { return text[i] == eol; }
};
/* A tie flag as a count, for cub::DeviceReduce. */
struct rec_tie_count {
    __device__ u64 operator()(unsigned char t) const { return t; }
};

#endif
