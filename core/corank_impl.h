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
 * search written as a lower bound over i in [max(0, k-n), min(k, m)]: "i is too big"
 * (a[i-1] > b[k-i]) is false, then true, as i grows. O(log min(m, n)) probes.
 */
GM_HD GM_IDX GM_FN(gm_corank)(GM_IDX k, const GM_KEY *a, GM_IDX m,
                               const GM_KEY *b, GM_IDX n, GM_KEY mask)
{
    GM_IDX lo = k > n ? k - n : 0;
    GM_IDX hi = k < m ? k : m;
    while (lo < hi) {
        GM_IDX mid = lo + (hi - lo + 1) / 2; /* lo < mid <= hi */
        if ((GM_KEY)(a[mid - 1] ^ mask) > (GM_KEY)(b[k - mid] ^ mask))
            hi = mid - 1;
        else
            lo = mid;
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
