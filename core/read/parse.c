/*
 * parse.c - the line parsers of stage 2 (see parse.h and input.h): one chunk of
 * whole lines into keys, on one thread of the pool.
 *
 * Newlines are found first, so each line's length is known before it is parsed.
 * The fast path takes "[-]digits" lines of up to 16 digits: on x86-64 processors
 * with SSE4.1 the 16 bytes ending at the newline are converted with multiply-adds
 * (and up to three digits before them by hand, for int64's 19); elsewhere eight
 * digits at a time with SWAR arithmetic (the digit test and conversion described by
 * D. Lemire, "Parsing series of integers with SIMD", 2018). Anything unusual
 * (blanks, a carriage return, more digits, the first bytes of a block) goes through
 * a plain byte loop that is the reference for what is accepted; the canonical mode
 * (for the records hand-over) declines any line the integer path would not write
 * back byte for byte. Keys land line-indexed in an int32 staging area; a chunk
 * that meets a wider value moves to an int64 buffer of its own.
 */
#include "read/parse.h"

#include <stdlib.h>
#include <string.h>

#include "keys/keyspan.h" /* gm_kp_digits8 and gm_kp_value8: eight digits by SWAR */
#ifndef GM_KP_WORDS
#error "the SWAR parser reads eight bytes at a time, little-endian"
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#if defined(__has_include) && __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h> /* glibc 2.33: the features its loader found */
#define GM_GLIBC_FEATURES 1
#else
#include <cpuid.h>
#include <stdatomic.h>
#endif
#endif

static int force_scalar;

void gm_input_test_scalar(int on) { force_scalar = on; }

static const uint64_t pow10[20] = {
    1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
    100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL,
    1000000000000ULL, 10000000000000ULL, 100000000000000ULL,
    1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
    1000000000000000000ULL, 10000000000000000000ULL,
};

static inline int is_blank(char c) { return c == ' ' || c == '\t'; }
static inline int is_digit(char c) { return (unsigned char)(c - '0') < 10; }

enum line_kind { LINE_KEY, LINE_BLANK, LINE_NOT_INT, LINE_RANGE };

/* The reference parser for one line starting at p, ending before eol (the newline
 * or the end of the text). */
static enum line_kind parse_line_slow(const char *p, const char *eol, int64_t *out)
{
    while (p < eol && is_blank(*p))
        p++;
    const char *tail = eol;
    if (tail > p && tail[-1] == '\r')
        tail--;
    while (tail > p && is_blank(tail[-1]))
        tail--;
    if (p == tail)
        return LINE_BLANK;
    int neg = 0;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (p == tail)
        return LINE_NOT_INT;
    for (const char *q = p; q < tail; q++)
        if (!is_digit(*q))
            return LINE_NOT_INT;
    while (p < tail - 1 && *p == '0')
        p++;
    if (tail - p > 19)
        return LINE_RANGE;
    uint64_t v = 0;
    for (; p < tail; p++)
        v = v * 10 + (uint64_t)(*p - '0');
    if (v > (neg ? (1ULL << 63) : (1ULL << 63) - 1))
        return LINE_RANGE;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return LINE_KEY;
}

/* Whether [s, e) is the canonical decimal form of an integer: what the integer
 * path writes back for it, byte for byte. */
static int canonical_text(const char *s, const char *e)
{
    const char *d = s + (s < e && *s == '-');
    if (d == e || (*d == '0' && (e - d > 1 || d != s)))
        return 0;
    for (; d < e; d++)
        if (!is_digit(*d))
            return 0;
    return 1;
}

/* Stores key number n of chunk ch: into the shared int32 array while every key
 * fits, else into the chunk's own int64 buffer (created on the first wide key,
 * with the keys so far widened into it). Returns 0, or -1 when out of memory. */
static inline int store_key(struct gm_chunk *ch, int32_t *d32, int64_t n, int64_t v)
{
    if (!ch->wide_used) {
        if (v >= INT32_MIN && v <= INT32_MAX) {
            d32[n] = (int32_t)v;
            return 0;
        }
        if (ch->wide_cap < ch->lines) {
            free(ch->wide);
            ch->wide = malloc((size_t)ch->lines * sizeof *ch->wide);
            ch->wide_cap = ch->wide ? ch->lines : 0;
            if (!ch->wide)
                return -1;
        }
        ch->wide_used = 1;
        for (int64_t t = 0; t < n; t++)
            ch->wide[t] = d32[t];
    }
    ch->wide[n] = v;
    return 0;
}

/* Bytes of w equal to '\n', as 0x80 in that byte (the exact zero-byte test). */
static inline uint64_t newline_bits(uint64_t w)
{
    const uint64_t low7 = 0x7F7F7F7F7F7F7F7FULL;
    uint64_t x = w ^ 0x0A0A0A0A0A0A0A0AULL;
    return ~(((x & low7) + low7) | x) & ~low7;
}

/* Parses the line [s, e) (no newline in it) on the fast path: [-]digits, at most 16
 * digits, with 16 readable bytes after the sign. Returns 1 and sets *out, or 0 when
 * the line needs parse_line_slow. */
static inline int parse_line_fast(const char *s, const char *e, const char *safe,
                                  int64_t *out)
{
    int neg = *s == '-';
    const char *q = s + neg;
    int64_t nd = e - q;
    if (nd < 1 || nd > 16 || q > safe)
        return 0;
    uint64_t w1, w2;
    memcpy(&w1, q, 8);
    memcpy(&w2, q + 8, 8);
    uint64_t mag;
    if (nd <= 8) {
        if (gm_kp_digits8(w1) != nd)
            return 0;
        mag = gm_kp_value8(w1, (int)nd);
    } else {
        if (gm_kp_digits8(w1) != 8 || gm_kp_digits8(w2) != nd - 8)
            return 0;
        mag = gm_kp_value8(w1, 8) * pow10[nd - 8] + gm_kp_value8(w2, (int)nd - 8);
    }
    *out = neg ? -(int64_t)mag : (int64_t)mag; /* below 10^16: no overflow */
    return 1;
}

#if defined(__x86_64__) && defined(__GNUC__)
#define GM_X86_SIMD 1

/* Bytes 16 - n .. 15 of a 16-byte load from tail_mask + n are 0xFF, the rest 0. */
static const uint8_t tail_mask[32] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
};

/* parse_line_fast with SSE4.1 (every x86-64 processor since 2008 has it; we ask the
 * processor before using it): the 16 bytes that end at the newline hold the digits
 * in their last nd bytes, so the number is right-aligned for free; after zeroing
 * the bytes before it, three multiply-adds and a pack turn it into two 8-digit
 * halves. Up to three digits before those 16 (int64's 17 to 19) are added by hand.
 * Same contract as parse_line_fast, but for up to 19 digits; begin is the start of
 * the text. */
__attribute__((target("sse4.1"))) static inline int
parse_line_sse41(const char *s, const char *e, const char *begin, int64_t *out)
{
    int neg = *s == '-';
    const char *q = s + neg;
    int64_t nd = e - q;
    if (nd < 1 || nd > 19 || e - 16 < begin)
        return 0;
    /* 17 to 19 digits: the leading ones by hand, then the last 16 as below. */
    uint64_t lead = 0;
    for (; nd > 16; nd--, q++) {
        if (!is_digit(*q))
            return 0;
        lead = lead * 10 + (uint64_t)(*q - '0');
    }
    __m128i v = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)(e - 16)),
                             _mm_set1_epi8('0'));
    __m128i keep = _mm_loadu_si128((const __m128i *)(const void *)(tail_mask + nd));
    __m128i digit = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(9)), v); /* 0..9 */
    if (!_mm_testc_si128(digit, keep)) /* a kept byte that is not a digit */
        return 0;
    v = _mm_and_si128(v, keep);
    v = _mm_maddubs_epi16(v, _mm_setr_epi8(10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1));
    v = _mm_madd_epi16(v, _mm_setr_epi16(100, 1, 100, 1, 100, 1, 100, 1));
    v = _mm_packus_epi32(v, v);
    v = _mm_madd_epi16(v, _mm_setr_epi16(10000, 1, 10000, 1, 10000, 1, 10000, 1));
    uint64_t mag = (uint64_t)(uint32_t)_mm_cvtsi128_si32(v) * 100000000ULL +
                   (uint32_t)_mm_extract_epi32(v, 1);
    if (lead) { /* lead < 1000: the sum stays below 10^19 < 2^64 */
        mag += lead * 10000000000000000ULL;
        if (mag > (1ULL << 63) - 1 + (uint64_t)neg)
            return 0; /* out of range: the slow path says so */
        *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
        return 1;
    }
    *out = neg ? -(int64_t)mag : (int64_t)mag;
    return 1;
}
#endif

#ifdef GM_X86_SIMD
/* The newlines among the 64 bytes at p that are before end, as bits (bit i for
 * p[i]): four 16-byte compares where the block has 64 bytes left, else a byte loop. */
__attribute__((target("sse4.1"))) static inline uint64_t
window_newlines(const char *p, const char *end, const char *text_end)
{
    uint64_t bits = 0;
    if (text_end - p >= 64) {
        const __m128i nl = _mm_set1_epi8('\n');
        for (int i = 0; i < 4; i++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));
            bits |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)) << (16 * i);
        }
    } else {
        for (int i = 0; i < text_end - p; i++)
            bits |= (uint64_t)(p[i] == '\n') << i;
    }
    return end - p >= 64 ? bits : bits & ((1ULL << (end - p)) - 1);
}
#endif

/* The end of the current line for the SWAR parser: the next newline at or after
 * *wp (*wp <= end here), found eight bytes at a time, or end; *wp moves past it. */
static inline __attribute__((always_inline)) const char *swar_line_end(const char **wp,
                                                                       const char *end)
{
    const char *w = *wp, *e;
    uint64_t bits = 0;
    while (w + 8 <= end) {
        uint64_t word;
        memcpy(&word, w, 8); /* unaligned: memcpy, which compiles to one load */
        if ((bits = newline_bits(word)) != 0)
            break;
        w += 8;
    }
    if (bits) {
        e = w + (__builtin_ctzll(bits) >> 3);
    } else {
        e = memchr(w, '\n', (size_t)(end - w));
        if (!e)
            e = end;
    }
    *wp = e + 1;
    return e;
}

/* Parses the lines of one chunk. Newlines are found eight bytes at a time (with
 * SSE, as a bit mask of 64 bytes at a time, each line's the lowest bit left) and
 * the lines between them parsed independently, so consecutive lines overlap in
 * the processor instead of waiting for each other's digit counts. use_sse is a
 * constant in each of the two callers below, and so is ordered in the SSE one's
 * two calls (the order check out of the loop that parses for a sort frees
 * registers there). */
static inline __attribute__((always_inline)) void parse_lines(void *ctx, int index,
                                                              const int use_sse,
                                                              const int ordered)
{
    struct gm_parse_job *job = ctx;
    struct gm_chunk *ch = &job->in->work.chunks[index];
    const gm_parse_opts *o = job->o;
    const char *end = ch->end, *safe = job->text_end - 16;
    int32_t *d32 = job->dest32 ? job->dest32 + ch->line0 : NULL;
    int64_t n = 0, line = 0, prev = 0;
    const int64_t mask = o->mask;
    const int canonical = o->canonical;
    const char *s = ch->begin; /* start of the current line */
    const char *w = ch->begin; /* next word to scan for newlines */
    int64_t window = -64;      /* SSE: the 64 bytes at ch->begin + window, */
    uint64_t newlines = 0;     /* whose newlines not yet passed are these bits */

    while (s < end) {
        const char *e; /* end of the current line: its newline, or the chunk's end */
        if (use_sse) {
#ifdef GM_X86_SIMD
            while (newlines == 0 && (window += 64) < end - ch->begin)
                newlines = window_newlines(ch->begin + window, end, job->text_end);
#endif
            e = newlines ? ch->begin + window + __builtin_ctzll(newlines) : end;
            newlines &= newlines - 1;
        } else {
            e = swar_line_end(&w, end);
        }
        line++;

        int64_t v;
        int fast;
#ifdef GM_X86_SIMD
        if (use_sse)
            fast = parse_line_sse41(s, e, job->text, &v);
        else
#endif
            fast = parse_line_fast(s, e, safe, &v);
        if (canonical) { /* the fast parsers take leading zeros and "-0" */
            const char *d = s + (*s == '-');
            if (fast ? *d == '0' && (e - d > 1 || d != s)
                     : parse_line_slow(s, e, &v) != LINE_KEY || !canonical_text(s, e)) {
                ch->prob = GM_PROB_DECLINE;
                ch->prob_line = line;
                ch->prob_text = s;
                break;
            }
        } else if (!fast) {
            enum line_kind kind = parse_line_slow(s, e, &v);
            if (kind == LINE_BLANK) {
                s = e + 1;
                continue;
            }
            if (kind != LINE_KEY) {
                ch->prob = kind == LINE_RANGE ? GM_PROB_RANGE : GM_PROB_NOT_INT;
                ch->prob_line = line;
                ch->prob_text = s;
                break;
            }
        }
        if (n == 0) {
            ch->first = v;
            ch->first_line = line;
            ch->first_text = s;
        } else if (ordered) {
            int64_t a = prev ^ mask, b = v ^ mask;
            if (b < a || (o->strict && b == a)) {
                ch->prob = GM_PROB_DISORDER;
                ch->prob_line = line;
                ch->prob_text = s;
                break;
            }
        }
        if (d32 && store_key(ch, d32, n, v) != 0) {
            ch->alloc_failed = 1;
            break;
        }
        n++;
        prev = v;
        s = e + 1;
    }
    ch->n = n;
    ch->last = prev;
}

static void parse_chunk(void *ctx, int index)
{
    parse_lines(ctx, index, 0, ((struct gm_parse_job *)ctx)->o->ordered);
}

#ifdef GM_X86_SIMD
__attribute__((target("sse4.1"))) static void parse_chunk_sse41(void *ctx, int index)
{
    if (((struct gm_parse_job *)ctx)->o->ordered)
        parse_lines(ctx, index, 1, 1);
    else
        parse_lines(ctx, index, 1, 0);
}
#endif

#ifdef GM_X86_SIMD
/* Whether the processor has SSE4.1: what glibc's loader found at start-up, where
 * glibc says (no cpuid of ours), else one cpuid, asked the first time a parse
 * needs to know. (__builtin_cpu_supports would link libgcc's feature probe, a
 * dozen cpuids that a virtual machine traps one by one, into a constructor that
 * every run pays, a three-line sort included.) */
static int has_sse41(void)
{
#ifdef GM_GLIBC_FEATURES
    return CPU_FEATURE_ACTIVE(SSE4_1);
#else
    static atomic_int known; /* 0: not asked yet, 1: no, 2: yes */
    int k = atomic_load_explicit(&known, memory_order_relaxed);
    if (!k) {
        unsigned a, b, c, d;
        k = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_1) ? 2 : 1;
        atomic_store_explicit(&known, k, memory_order_relaxed);
    }
    return k == 2;
#endif
}
#endif

gm_task_fn gm_parse_task(void)
{
#ifdef GM_X86_SIMD
    if (!force_scalar && has_sse41())
        return parse_chunk_sse41;
#endif
    return parse_chunk;
}

int gm_parse_report(const gm_input *in, const gm_block *b, enum gm_problem prob, int64_t line,
                    const char *text, gm_status *st)
{
    const char *end = b->text + b->len;
    const char *eol = memchr(text, '\n', (size_t)(end - text));
    size_t len = (size_t)((eol ? eol : end) - text);
    if (len > 0 && text[len - 1] == '\r')
        len--;
    char shown[256], original[GM_SHOW_BYTES];
    if (in->zero) { /* the bytes as they were read, terminators swapped back */
        size_t n = len < sizeof original ? len : sizeof original;
        memcpy(original, text, n);
        gm_input_swap_terminators(original, n);
        text = original;
    }
    gm_show_text(text, len, shown, sizeof shown);
    switch (prob) {
    case GM_PROB_NOT_INT:
        return gm_fail(st, GM_EINPUT, "%s:%lld: not an integer: '%s'", in->shown,
                       (long long)line, shown);
    case GM_PROB_RANGE:
        return gm_fail(st, GM_EINPUT, "%s:%lld: out of range: '%s'", in->shown,
                       (long long)line, shown);
    case GM_PROB_DECLINE:
        return gm_fail(st, GM_ERECORDS, "%s:%lld: not a canonical integer: '%s'", in->shown,
                       (long long)line, shown);
    default:
        return gm_fail(st, GM_DISORDER, "%s:%lld: disorder: %s", in->shown,
                       (long long)line, shown);
    }
}
