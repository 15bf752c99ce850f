/*
 * cpusort.c - the CPU engine's sort (see cpu.h): a radix sort of 8-bit digits, most
 * significant digit first once, then least significant first within each bucket
 * (the hybrid of, e.g., Polychroniou and Ross, "A comprehensive study of
 * main-memory partitioning and its application to large-scale comparison- and
 * radix-sort", SIGMOD 2014). One parallel pass counts every digit; the most
 * significant digit on which keys differ is scattered on all threads into 256
 * buckets (per-part offsets keep it stable), and each bucket, usually small enough
 * to stay in a core's cache, is sorted on its own thread by its lower digits,
 * skipping those on which its keys agree. So the whole array crosses memory about
 * three times instead of twice per digit. A bucket too large for one thread
 * (skewed keys) is sorted by LSD passes on all threads instead. Digits are taken
 * from the key XOR a flip (the sign bit; for descending, every other bit too), an
 * unsigned integer whose order is the requested one; the keys themselves are
 * moved, never changed. Equal keys are indistinguishable, so stability cannot be
 * observed.
 */
#include "sort/cpu.h"

#include <stdlib.h>
#include <string.h>

#include "base/pages.h"
#include "base/util.h"

enum {
    RADIX_BITS = 8,
    RADIX = 1 << RADIX_BITS,
    MAX_DIGITS = 8, /* of an int64 */
    BUCKET_BITS = 12, /* the widest digit within a bucket */
    /* room for the histograms of a bucket's digits: 56 bits cut into 5 digits */
    BUCKET_HIST = ((MAX_DIGITS - 1) * RADIX_BITS + BUCKET_BITS - 1) / BUCKET_BITS << BUCKET_BITS,
    SMALL_BUCKET = 32, /* buckets of at most this many keys are sorted by insertion */
};

/* Key i of p, of width 4 or 8 (a constant after inlining). */
static inline uint64_t load_key(const void *p, int64_t i, const int width)
{
    return width == 4 ? ((const uint32_t *)p)[i] : ((const uint64_t *)p)[i];
}

static inline void store_key(void *p, int64_t i, uint64_t k, const int width)
{
    if (width == 4)
        ((uint32_t *)p)[i] = (uint32_t)k;
    else
        ((uint64_t *)p)[i] = k;
}

/* Digit d of key k in the sort's order: the key XOR flip is an unsigned integer
 * whose order is the requested one. The keys themselves are never changed. */
static inline unsigned digit_of(uint64_t k, uint64_t flip, int d)
{
    return (unsigned)(((k ^ flip) >> (d * RADIX_BITS)) & (RADIX - 1));
}

/* One parallel pass over the keys [lo, hi) of src, cut into nparts parts. */
struct radix_job {
    int width;          /* 4 or 8 */
    uint64_t flip;      /* XOR that maps keys to unsigned order (sign, reverse); gm_cpu_sort */
    const void *src;    /* keys read by the pass; gm_cpu_sort, lsd_parallel per pass */
    void *dst;          /* where scatter writes; gm_cpu_sort (scratch), lsd_parallel */
    int64_t lo, hi;     /* key range of this job; gm_cpu_sort, sort_big_buckets per bucket */
    int nparts;         /* parts the range is cut into, one per task; gm_cpu_sort,
                         * sort_big_buckets (capped by the parent's) */
    int digit;          /* count_one and scatter: the digit of the pass; sort_bucket:
                         * the first pass's, whose buckets these are */
    int64_t *hist;      /* count_all: per part, a histogram of every digit; count_one:
                         * per part, one histogram; scatter: per part, the offsets */
    int64_t stride;     /* from one part's histogram (or offsets) to the next one's */
    /* the buckets of the first pass (sort_bucket) */
    const int64_t *start; /* RADIX + 1 bounds, in dst */
    const unsigned char *skip; /* buckets sorted already */
    void *tmp;          /* the other buffer, for the buckets' passes */
};

static inline void part_range(const struct radix_job *job, int part, int64_t *lo, int64_t *hi)
{
    int64_t n = job->hi - job->lo;
    *lo = job->lo + n * part / job->nparts;
    *hi = job->lo + n * (part + 1) / job->nparts;
}

/* Adds key k's digits 0 .. ndigits-1 (a constant after inlining) to the
 * histograms c[0 .. ndigits-1]. */
static inline __attribute__((always_inline)) void count_digits(int64_t (*c)[RADIX], uint64_t k,
                                                               const int ndigits)
{
#pragma GCC unroll 8
    for (int d = 0; d < ndigits; d++)
        c[d][(k >> (d * RADIX_BITS)) & (RADIX - 1)]++;
}

/* Counts every digit of the part's keys at once (histogram d at hist + d * RADIX),
 * into a local array that nothing else can alias. */
static inline __attribute__((always_inline)) void count_all_body(struct radix_job *job,
                                                                 int part, const int width)
{
    int64_t lo, hi, c[MAX_DIGITS][RADIX];
    part_range(job, part, &lo, &hi);
    memset(c, 0, (size_t)width * sizeof c[0]);
    const void *src = job->src;
    const uint64_t flip = job->flip;
    for (int64_t i = lo; i < hi; i++)
        count_digits(c, load_key(src, i, width) ^ flip, width);
    memcpy(job->hist + part * job->stride, c, (size_t)width * sizeof c[0]);
}

static void count_all(void *ctx, int part)
{
    struct radix_job *job = ctx;
    if (job->width == 4)
        count_all_body(job, part, 4);
    else
        count_all_body(job, part, 8);
}

static inline __attribute__((always_inline)) void count_one_body(struct radix_job *job,
                                                                 int part, const int width)
{
    int64_t lo, hi, c[1][RADIX];
    part_range(job, part, &lo, &hi);
    memset(c, 0, sizeof c);
    const void *src = job->src;
    const uint64_t flip = job->flip >> (job->digit * RADIX_BITS);
    const int shift = job->digit * RADIX_BITS;
    for (int64_t i = lo; i < hi; i++)
        count_digits(c, (load_key(src, i, width) >> shift) ^ flip, 1);
    memcpy(job->hist + part * job->stride, c, sizeof c);
}

static void count_one(void *ctx, int part)
{
    struct radix_job *job = ctx;
    if (job->width == 4)
        count_one_body(job, part, 4);
    else
        count_one_body(job, part, 8);
}

static inline __attribute__((always_inline)) void scatter_body(struct radix_job *job, int part,
                                                               const int width)
{
    int64_t lo, hi, off[RADIX];
    part_range(job, part, &lo, &hi);
    memcpy(off, job->hist + part * job->stride, sizeof off);
    const void *src = job->src;
    void *dst = job->dst;
    const uint64_t flip = job->flip;
    const int d = job->digit;
    for (int64_t i = lo; i < hi; i++) {
        uint64_t k = load_key(src, i, width);
        store_key(dst, off[digit_of(k, flip, d)]++, k, width);
    }
}

static void scatter(void *ctx, int part)
{
    struct radix_job *job = ctx;
    if (job->width == 4)
        scatter_body(job, part, 4);
    else
        scatter_body(job, part, 8);
}

/* Turns the parts' counts of one digit (part p's at hist + p * stride) into the
 * parts' scatter offsets: by digit, then by part, from lo. Returns whether every
 * key has the same digit (a pass that would move nothing). */
static int counts_to_offsets(int64_t *hist, int64_t stride, int nparts, int64_t lo, int64_t hi)
{
    int64_t sum = lo;
    int same = 0;
    for (int d = 0; d < RADIX; d++) {
        int64_t before = sum;
        for (int p = 0; p < nparts; p++) {
            int64_t c = hist[p * stride + d];
            hist[p * stride + d] = sum;
            sum += c;
        }
        same |= sum - before == hi - lo;
    }
    return same;
}

/* Least-significant-digit passes over the keys [lo, hi) of *in on all threads,
 * the digits below top, each pass counting its digit per part and then
 * scattering stably by part; a digit on which every key agrees moves nothing and
 * is skipped. The keys end in *in (the buffers swap with each pass, and the
 * result is copied back after an odd number). */
static void lsd_parallel(struct radix_job *job, void *in, void *out, int top, int nthreads)
{
    int64_t n = job->hi - job->lo;
    size_t w = (size_t)job->width;
    job->stride = RADIX;
    void *a = in, *b = out;
    for (job->digit = 0; job->digit < top; job->digit++) {
        job->src = a;
        gm_parallel_for(nthreads, job->nparts, count_one, job);
        if (counts_to_offsets(job->hist, RADIX, job->nparts, job->lo, job->hi))
            continue;
        job->dst = b;
        gm_parallel_for(nthreads, job->nparts, scatter, job);
        void *t = a;
        a = b;
        b = t;
    }
    if (a != in)
        gm_pages_copy((char *)in + (size_t)job->lo * w, (char *)a + (size_t)job->lo * w,
                      (size_t)n * w, nthreads);
}

/* Sorts the n keys at p by insertion (for the smallest buckets). */
static inline __attribute__((always_inline)) void insertion_sort(char *p, int64_t n,
                                                                 uint64_t flip, const int width)
{
    for (int64_t i = 1; i < n; i++) {
        uint64_t k = load_key(p, i, width), kf = k ^ flip;
        int64_t j = i;
        for (; j > 0 && (load_key(p, j - 1, width) ^ flip) > kf; j--)
            store_key(p, j, load_key(p, j - 1, width), width);
        store_key(p, j, k, width);
    }
}

/* Adds the nd digits of bits bits each of key kf (nd a constant after inlining) to
 * the histograms at h, digit d's at h + (d << bits). */
static inline __attribute__((always_inline)) void count_bucket_digits(uint32_t *h, uint64_t kf,
                                                                      int bits, const int nd)
{
    const uint64_t mask = (1u << bits) - 1;
#pragma GCC unroll 8
    for (int d = 0; d < nd; d++)
        h[((uint32_t)d << bits) + ((kf >> (d * bits)) & mask)]++;
}

/* One bucket of the first pass, on one thread: the bits below the first pass's
 * digit are cut into nd digits of at most BUCKET_BITS bits (fewer, wider digits
 * than the first pass's: the bucket is in the cache, where a larger histogram
 * costs little and a pass saved is a pass), all counted in one pass over the
 * bucket, and the bucket is sorted by them from the least significant, skipping
 * those on which its keys agree. The keys end where they are, in job->dst. */
static inline __attribute__((always_inline)) void bucket_body(struct radix_job *job, int b,
                                                              const int width)
{
    int64_t lo = job->start[b], hi = job->start[b + 1], n = hi - lo;
    int below = job->digit * RADIX_BITS;
    if (job->skip[b] || n < 2 || below == 0)
        return;
    char *keys = (char *)job->dst + lo * width, *tmp = (char *)job->tmp + lo * width;
    const uint64_t flip = job->flip;
    if (n <= SMALL_BUCKET) {
        insertion_sort(keys, n, flip, width);
        return;
    }
    int most = n < (1 << BUCKET_BITS) ? RADIX_BITS : BUCKET_BITS;
    int nd = (below + most - 1) / most;
    int bits = (below + nd - 1) / nd;
    uint32_t h[BUCKET_HIST];
    memset(h, 0, ((size_t)nd << bits) * sizeof *h);
    switch (nd) { /* nd is at most (MAX_DIGITS - 1) * RADIX_BITS / RADIX_BITS = 7 */
#define COUNT(k)                                                                   \
    case k:                                                                        \
        for (int64_t i = 0; i < n; i++)                                            \
            count_bucket_digits(h, load_key(keys, i, width) ^ flip, bits, k);      \
        break;
    COUNT(1) COUNT(2) COUNT(3) COUNT(4) COUNT(5) COUNT(6) COUNT(7)
#undef COUNT
    }
    const uint64_t mask = (1u << bits) - 1;
    char *src = keys, *dst = tmp;
    for (int d = 0; d < nd; d++) {
        uint32_t *off = h + ((uint32_t)d << bits), sum = 0;
        int same = 0;
        for (uint32_t v = 0; v <= mask; v++) {
            uint32_t c = off[v];
            off[v] = sum;
            sum += c;
            same |= c == (uint32_t)n;
        }
        if (same)
            continue; /* every key has the same digit here */
        int shift = d * bits;
        for (int64_t i = 0; i < n; i++) {
            uint64_t k = load_key(src, i, width);
            store_key(dst, off[((k ^ flip) >> shift) & mask]++, k, width);
        }
        char *t = src;
        src = dst;
        dst = t;
    }
    if (src != keys)
        memcpy(keys, src, (size_t)n * width);
}

static void sort_bucket(void *ctx, int b)
{
    struct radix_job *job = ctx;
    if (job->width == 4)
        bucket_body(job, b, 4);
    else
        bucket_body(job, b, 8);
}

/* The first pass's digit: the most significant digit on which some of the n keys
 * differ, from the parts' histograms of every digit (count_all's); start[0 ..
 * RADIX] gets its buckets' bounds. Returns -1 when all keys are equal. */
static int first_digit(const struct radix_job *job, int64_t n, int64_t start[RADIX + 1])
{
    const int64_t *hist = job->hist;
    int top = -1;
    for (int d = job->width - 1; d >= 0 && top < 0; d--) {
        int64_t sum = 0;
        for (int b = 0; b < RADIX; b++) {
            start[b] = sum;
            for (int p = 0; p < job->nparts; p++)
                sum += hist[p * job->stride + d * RADIX + b];
            if (sum - start[b] == n)
                break; /* every key has digit b here */
            if (b == RADIX - 1)
                top = d;
        }
    }
    start[RADIX] = n;
    return top;
}

/* The buckets of the first pass (in job->dst, bounds start) larger than a share of
 * the threads' work, which would keep one thread busy while the others wait: each
 * is sorted by passes on all threads (lsd_parallel), with tmp as the other buffer,
 * and marked in skip. */
static void sort_big_buckets(const struct radix_job *job, const int64_t *start, int top,
                             void *tmp, unsigned char *skip, int nthreads)
{
    int64_t n = job->hi - job->lo;
    int64_t big = nthreads > 1 ? n / (2 * (int64_t)nthreads) : n + 1;
    if (big < 2 * GM_CPU_MIN_KEYS)
        big = 2 * GM_CPU_MIN_KEYS;
    if (big > UINT32_MAX)
        big = UINT32_MAX; /* a bucket's histograms count in 32 bits */
    for (int b = 0; b < RADIX && top > 0; b++) {
        int64_t size = start[b + 1] - start[b];
        if (size <= big)
            continue;
        struct radix_job bj = *job;
        bj.lo = start[b];
        bj.hi = start[b + 1];
        bj.nparts = (int)(size / GM_CPU_MIN_KEYS) + 1;
        if (bj.nparts > job->nparts)
            bj.nparts = job->nparts;
        lsd_parallel(&bj, job->dst, tmp, top, nthreads);
        skip[b] = 1;
    }
}

void gm_cpu_sort(gm_keys *keys, void **scratch, int reverse, int nthreads)
{
    if (keys->n < 2)
        return;
    int width = (int)keys->width;
    int64_t n = keys->n;
    uint64_t sign = 1ULL << (width * 8 - 1);
    uint64_t all = width == 4 ? 0xFFFFFFFFULL : ~0ULL;
    uint64_t flip = reverse ? all ^ sign : sign;
    if (n <= SMALL_BUCKET) {
        if (width == 4)
            insertion_sort(keys->data, n, flip, 4);
        else
            insertion_sort(keys->data, n, flip, 8);
        return;
    }
    int nparts = (int)(n / GM_CPU_MIN_KEYS) + 1;
    if (nparts > nthreads)
        nparts = nthreads;
    int64_t one[MAX_DIGITS * RADIX]; /* the histograms when there is one part */
    int64_t *hist = one;
    if (nparts > 1) {
        hist = malloc((size_t)nparts * MAX_DIGITS * RADIX * sizeof *hist);
        if (!hist) { /* no room for the parts' histograms: one part */
            hist = one;
            nparts = 1;
        }
    }
    struct radix_job job = {
        .width = width,
        .flip = flip,
        .src = keys->data,
        .lo = 0,
        .hi = n,
        .nparts = nparts,
        .hist = hist,
        .stride = MAX_DIGITS * RADIX,
    };
    /* Every digit's histogram in one pass; the most significant digit on which
     * some keys differ is the first pass's. */
    gm_parallel_for(nthreads, nparts, count_all, &job);
    int64_t start[RADIX + 1];
    int top = first_digit(&job, n, start);
    if (top < 0) { /* all keys are equal */
        if (hist != one)
            free(hist);
        return;
    }

    /* First pass: most significant digit first, from the keys into the scratch,
     * which leaves the keys in RADIX buckets of that digit. */
    job.digit = top;
    job.hist = hist + top * RADIX;
    counts_to_offsets(job.hist, job.stride, nparts, 0, n);
    job.dst = *scratch;
    gm_parallel_for(nthreads, nparts, scatter, &job);
    job.hist = hist;

    /* The buckets, sorted by the digits below: the large ones by passes on all
     * threads first, the others one bucket a task. */
    unsigned char skip[RADIX] = { 0 };
    sort_big_buckets(&job, start, top, keys->data, skip, nthreads);
    job.start = start;
    job.skip = skip;
    job.tmp = keys->data;
    gm_parallel_for(nparts, RADIX, sort_bucket, &job); /* a small sort stays on this thread */

    void *t = keys->data;
    keys->data = *scratch;
    *scratch = t;
    if (hist != one)
        free(hist);
}
