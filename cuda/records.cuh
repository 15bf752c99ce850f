/*
 * records.cuh - the per-line steps of the records sort on the device
 * (records.cu), host and device functions (GM_HD), so that the kernels run them
 * per thread and the tests' host twin (testing.cu) per loop turn: a line's place
 * from the terminators' offsets, its prefix and first sort key, a text offset's
 * host address, and a sorted record with its tie flag.
 */
#ifndef GM_CUDA_RECORDS_CUH
#define GM_CUDA_RECORDS_CUH

#include <stdint.h>

#include "../core/keyprefix.h"

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

/* Record i of the sorted order (key: the sorted prefixes, val: their lines) as
 * core/lines.h's gm_rec, and whether its sort key equals record i - 1's: the
 * prefix, and with by_head the lines' first eight bytes too. */
GM_HD void rec_build_one(const gm_keyspec *ks, const unsigned char *text, const u64 *ends,
                         const u64 *key, const uint32_t *val, const unsigned char *exact, u64 i,
                         const u64 *bstart, const u64 *hbase, int nblocks, int by_head,
                         u64 *recs, unsigned char *tied)
{
    u64 j = val[i], s, len;
    rec_line(ends, j, &s, &len);
    recs[2 * i] = key[i];
    recs[2 * i + 1] = gm_kp_ref(rec_host_address(bstart, hbase, nblocks, s), (size_t)len,
                                exact[j]);
    int tie = i > 0 && key[i - 1] == key[i];
    if (tie && by_head) {
        u64 ps, plen;
        rec_line(ends, val[i - 1], &ps, &plen);
        tie = gm_kp_head8(text + ps, (size_t)plen, ks->reverse) ==
              gm_kp_head8(text + s, (size_t)len, ks->reverse);
    }
    tied[i] = (unsigned char)tie;
}

#endif
