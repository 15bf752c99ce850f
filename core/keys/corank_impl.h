/*
 * corank_impl.h - body of corank.h, included once per key type and position type
 * with GM_KEY (the key type), GM_IDX (the type of positions and lengths) and GM_SUF
 * (the name suffix) defined. Not a header to include directly.
 */
#define GM_FN(name) GM_CAT(name, GM_SUF)

/*
 * co-rank (PMPP 12.4): for output position k of the stable merge of a[0..m) and
 * b[0..n), returns the unique i (with j = k - i) such that
 *     i == 0 || j == n || a[i-1] <= b[j]     (a[i-1] is not after b[j]), and
 *     j == 0 || i == m || b[j-1] <  a[i]     (b[j-1] is strictly before a[i]),
 * i.e. c[0..k) is the merge of a[0..i) and b[0..j). Requires 0 <= k <= m + n.
 *
 * The book searches with two moving windows (i_low, j_low, delta); this is the same
 * search written over an interval: the answer lies in [lo, hi], starting from
 * [max(0, k-n), min(k, m)], and "i is past it" (a[i-1] > b[k-i]) is false, then
 * true, as i grows through (lo, hi]. Each round probes `lanes` points of (lo, hi]
 * and keeps the piece between the last probe not past and the first one past. With
 * one lane that is a binary search, O(log min(m, n)) probes in a chain; the GPU's
 * partition kernel runs the same rounds with a group of lanes probing side by side
 * (cuda/merge_tiled.cu), log base lanes + 1 rounds, since each round waits for a
 * load from global memory. The pieces below are that search; gm_corank runs it.
 */

/* Where the co-rank of output k can lie: [*lo, *hi]. */
GM_HD void GM_FN(gm_corank_bounds)(GM_IDX k, GM_IDX m, GM_IDX n, GM_IDX *lo, GM_IDX *hi)
{
    *lo = k > n ? k - n : 0;
    *hi = k < m ? k : m;
}

/* The probe of lane l (0 <= l < lanes) in a round over [lo, hi], lo < hi: the lanes
 * split it into lanes + 1 steps. A probe beyond hi counts as past. */
GM_HD GM_IDX GM_FN(gm_corank_probe)(GM_IDX lo, GM_IDX hi, int lanes, int l)
{
    GM_IDX step = (hi - lo + lanes) / (lanes + 1);
    return lo + step * (l + 1);
}

/* Whether probe i (lo < i <= hi) is past the co-rank of output k. */
GM_HD int GM_FN(gm_corank_past)(GM_IDX i, GM_IDX k, const GM_KEY *a, const GM_KEY *b,
                                 GM_KEY mask)
{
    return (GM_KEY)(a[i - 1] ^ mask) > (GM_KEY)(b[k - i] ^ mask);
}

/* After a round whose first f probes (of lanes) were not past: the new interval. */
GM_HD void GM_FN(gm_corank_narrow)(GM_IDX *lo, GM_IDX *hi, int lanes, int f)
{
    GM_IDX step = (*hi - *lo + lanes) / (lanes + 1);
    GM_IDX below = *lo + step * (f + 1) - 1; /* just below probe f */
    if (f < lanes && below < *hi) /* probe f was past (or beyond hi) */
        *hi = below;
    *lo += step * f;
}

/* The search with one lane: a binary search. Its rounds are gm_corank_probe and
 * gm_corank_narrow's with lanes = 1 (probe lo + step, step = (hi - lo + 1) / 2;
 * past: hi = probe - 1, else lo = probe) written out, because the GPU's tiles run
 * this loop more than any other: written out, a round needs no division and no
 * product, only a shift, which shortens the block sort's inner loop. */
GM_HD GM_IDX GM_FN(gm_corank)(GM_IDX k, const GM_KEY *a, GM_IDX m,
                               const GM_KEY *b, GM_IDX n, GM_KEY mask)
{
    GM_IDX lo, hi;
    GM_FN(gm_corank_bounds)(k, m, n, &lo, &hi);
    while (lo < hi) {
        GM_IDX i = lo + ((hi - lo + 1) >> 1); /* hi - lo + 1 > 0: the shift halves it */
        if (GM_FN(gm_corank_past)(i, k, a, b, mask))
            hi = i - 1;
        else
            lo = i;
    }
    return lo;
}

/*
 * Sequential merge (PMPP 12.2), resumable: writes the next `count` outputs of the
 * stable merge of a[0..m) and b[0..n), starting from a[i] and b[j], to c[0..count).
 * (i, j) is normally a co-rank pair. The caller guarantees count <= (m-i) + (n-j).
 * The inner loop has no branch on the data: the choice is a select.
 */
GM_HD void GM_FN(gm_merge_seq)(const GM_KEY *a, GM_IDX m, const GM_KEY *b, GM_IDX n,
                               GM_IDX i, GM_IDX j, GM_KEY *c, GM_IDX count, GM_KEY mask)
{
    GM_IDX t = 0;
    while (t < count && i < m && j < n) {
        GM_KEY x = a[i], y = b[j];
        int take_b = (GM_KEY)(y ^ mask) < (GM_KEY)(x ^ mask);
        c[t++] = take_b ? y : x;
        j += take_b;
        i += !take_b;
    }
    while (t < count && i < m)
        c[t++] = a[i++];
    while (t < count && j < n)
        c[t++] = b[j++];
}

#undef GM_FN
