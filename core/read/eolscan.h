/*
 * eolscan.h - finding line terminators 64 bytes at a time, as a bit mask from
 * SSE2 compares (the way simdjson finds its structural characters), where a
 * memchr per line would cost a call and a start-up per 50-byte line. Shared by
 * the reading of blocks (lines.c) and their split into records (linesplit.c).
 */
#ifndef GM_EOLSCAN_H
#define GM_EOLSCAN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <emmintrin.h>
#define GM_LINES_SSE2 1
#endif

/* The terminators among the 64 bytes at p, as bits (bit i for p[i]): four
 * 16-byte compares (SSE2 is part of x86-64), else a byte loop. */
static inline uint64_t eol_bits(const unsigned char *p, unsigned char eol)
{
    uint64_t bits = 0;
#ifdef GM_LINES_SSE2
    const __m128i k = _mm_set1_epi8((char)eol);
    for (int i = 0; i < 4; i++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));
        bits |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, k)) << (16 * i);
    }
#else
    for (int i = 0; i < 64; i++)
        bits |= (uint64_t)(p[i] == eol) << i;
#endif
    return bits;
}

/* The terminators in [p, e): 64 bytes a compare, the tail by memchr. */
static inline size_t count_eol(const unsigned char *p, const unsigned char *e, unsigned char eol)
{
    size_t n = 0;
    for (; e - p >= 64; p += 64)
        for (uint64_t bits = eol_bits(p, eol); bits; bits &= bits - 1)
            n++;
    while (p < e && (p = memchr(p, eol, (size_t)(e - p))) != NULL) {
        n++;
        p++;
    }
    return n;
}

#endif
