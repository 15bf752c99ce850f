/*
 * format.c - keys as canonical decimal text (see format.h), block by block, for
 * the write queue's buffers and the mapping writer's pages alike.
 *
 * Eight digits at a time come from multiplications in the lanes of a 64-bit word,
 * stored as one word where the room allows; elsewhere two digits per step come
 * from a 200-byte table, written backwards from the digit count (the pair-table
 * conversion, as {fmt}'s format_decimal does it). A block's length is counted by
 * the same rules, so that a block can be given exactly its share of a mapped file
 * before it is formatted.
 */
#include "write/format.h"

#include <stdint.h>
#include <string.h>

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Writes the decimal digits of v so that they end just before end, two at a time. */
static inline void put_digits(char *end, uint32_t v)
{
    while (v >= 100) {
        end -= 2;
        memcpy(end, digit_pairs + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10)
        memcpy(end - 2, digit_pairs + 2 * v, 2);
    else
        end[-1] = (char)('0' + v);
}

/* The eight decimal digits of v (< 10^8), zero-filled, as byte values 0..9 of a
 * little-endian word whose lowest byte is the most significant digit: v is cut
 * into two halves of four digits, each half into two pairs, each pair into two
 * digits, every cut in all the word's lanes at once with a multiplication by a
 * reciprocal (x * 10486 >> 20 is x / 100 for x < 10^4, x * 103 >> 10 is x / 10
 * for x < 100), so that no division waits for another. */
static inline uint64_t eight_digits(uint32_t v)
{
    uint64_t x = (v / 10000) | (uint64_t)(v % 10000) << 32;      /* 2 x 32-bit lanes */
    uint64_t hundreds = ((x * 10486) >> 20) & 0x0000007F0000007FULL;
    x = (x - hundreds * 100) << 16 | hundreds;                      /* 4 x 16-bit lanes */
    uint64_t tens = ((x * 103) >> 10) & 0x000F000F000F000FULL;
    return tens | (x - tens * 10) << 8;                             /* 8 bytes */
}

static const uint64_t ASCII_ZEROS = 0x3030303030303030ULL; /* eight '0' bytes */

/* Writes exactly eight digits of v (< 10^8), zero-filled, ending before end. */
static inline void put_8_digits(char *end, uint32_t v)
{
    uint64_t w = eight_digits(v) + ASCII_ZEROS;
    memcpy(end - 8, &w, 8);
}

static inline int digits_u32(uint32_t v)
{
    return v >= 100000 ? (v >= 10000000 ? (v >= 1000000000 ? 10 : v >= 100000000 ? 9 : 8)
                                        : (v >= 1000000 ? 7 : 6))
                       : (v >= 1000 ? (v >= 10000 ? 5 : 4) : (v >= 100 ? 3 : v >= 10 ? 2 : 1));
}

/* The length of v's canonical decimal, as format_u64 writes it. */
static inline int digits_u64(uint64_t v)
{
    if (v <= UINT32_MAX)
        return digits_u32((uint32_t)v);
    v /= 100000000;
    if (v <= UINT32_MAX)
        return digits_u32((uint32_t)v) + 8;
    return digits_u32((uint32_t)(v / 100000000)) + 16;
}

static inline char *format_u32(char *p, uint32_t v)
{
    int n = digits_u32(v);
    put_digits(p + n, v);
    return p + n;
}

/* 64-bit values: eight digits at a time come off the bottom with one 64-bit
 * division, and the rest with 32-bit arithmetic. */
static inline char *format_u64(char *p, uint64_t v)
{
    if (v <= UINT32_MAX)
        return format_u32(p, (uint32_t)v);
    uint32_t low = (uint32_t)(v % 100000000);
    v /= 100000000;
    if (v <= UINT32_MAX) {
        p = format_u32(p, (uint32_t)v);
    } else {
        uint32_t mid = (uint32_t)(v % 100000000);
        p = format_u32(p, (uint32_t)(v / 100000000)); /* at most 4 digits */
        put_8_digits(p + 8, mid);
        p += 8;
    }
    put_8_digits(p + 8, low);
    return p + 8;
}

char *gm_format_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return format_u64(p, 0 - (uint64_t)v);
    }
    return format_u64(p, (uint64_t)v);
}

static inline char *format_i32(char *p, int32_t v)
{
    if (v < 0) {
        *p++ = '-';
        return format_u32(p, 0u - (uint32_t)v);
    }
    return format_u32(p, (uint32_t)v);
}

/* format_i32 for a p with at least WIDE_ROOM bytes of room: the digits go out
 * in whole 8-byte words, and up to 7 bytes after the number's end may be
 * overwritten. A number below 10^8 is its eight-digit word shifted past its
 * leading zeros. */
enum { WIDE_ROOM = 1 + 2 + 8 };

static inline char *format_i32_wide(char *p, int32_t key)
{
    *p = '-';
    p += key < 0;
    uint32_t v = key < 0 ? 0u - (uint32_t)key : (uint32_t)key;
    if (v >= 100000000) {
        uint32_t top = v / 100000000;
        v -= top * 100000000;
        if (top >= 10) {
            memcpy(p, digit_pairs + 2 * top, 2);
            p += 2;
        } else {
            *p++ = (char)('0' + top);
        }
        uint64_t w = eight_digits(v) + ASCII_ZEROS;
        memcpy(p, &w, 8);
        return p + 8;
    }
    uint64_t d = eight_digits(v);
    int zeros = d ? __builtin_ctzll(d) >> 3 : 7; /* leading zeros; "0" keeps one */
    uint64_t w = (d + ASCII_ZEROS) >> (8 * zeros);
    memcpy(p, &w, 8);
    return p + 8 - zeros;
}


int64_t gm_format_block_keys(gm_width w)
{
    return w == GM_I32 ? GM_FORMAT_BLOCK_BYTES / 12 : GM_FORMAT_BLOCK_BYTES / 21;
}

/* Where a block's keys start: with -u, the chunk's first key is dropped when the
 * last chunk ended with it. */
static int64_t first_kept(const gm_keys *keys, int unique, const int64_t *before, int64_t lo,
                          int64_t hi)
{
    if (unique && lo == 0 && before && hi > 0) {
        int64_t first = keys->width == GM_I32 ? ((const int32_t *)keys->data)[0]
                                              : ((const int64_t *)keys->data)[0];
        if (first == *before)
            return 1;
    }
    return lo;
}

size_t gm_format_length(const gm_keys *keys, int unique, const int64_t *before,
                        int64_t lo, int64_t hi)
{
    size_t len = 0;
    lo = first_kept(keys, unique, before, lo, hi);
    if (keys->width == GM_I32) {
        const int32_t *k = keys->data;
        for (int64_t i = lo; i < hi; i++) {
            if (unique && i > 0 && k[i] == k[i - 1])
                continue;
            uint32_t u = k[i] < 0 ? 0u - (uint32_t)k[i] : (uint32_t)k[i];
            len += (size_t)(k[i] < 0) + (size_t)digits_u32(u) + 1;
        }
    } else {
        const int64_t *k = keys->data;
        for (int64_t i = lo; i < hi; i++) {
            if (unique && i > 0 && k[i] == k[i - 1])
                continue;
            uint64_t u = k[i] < 0 ? 0 - (uint64_t)k[i] : (uint64_t)k[i];
            len += (size_t)(k[i] < 0) + (size_t)digits_u64(u) + 1;
        }
    }
    return len;
}

size_t gm_format_block(const gm_keys *keys, int unique, const int64_t *before,
                       int64_t lo, int64_t hi, char eol, char *out, const char *end)
{
    char *p = out;
    lo = first_kept(keys, unique, before, lo, hi);
    if (keys->width == GM_I32) {
        const int32_t *k = keys->data;
        /* A line takes at most 12 bytes, so the first keys surely have a word's room
         * and need no check: key lo + j starts at most 12 j bytes in. */
        int64_t room = end - out, sure = room >= WIDE_ROOM ? (room - WIDE_ROOM) / 12 + 1 : 0;
        int64_t i = lo, mid = hi - lo > sure ? lo + sure : hi;
        if (!unique) {
            for (; i < mid; i++) {
                p = format_i32_wide(p, k[i]);
                *p++ = eol;
            }
        }
        for (; i < hi; i++) {
            if (unique && i > 0 && k[i] == k[i - 1])
                continue;
            p = end - p >= WIDE_ROOM ? format_i32_wide(p, k[i]) : format_i32(p, k[i]);
            *p++ = eol;
        }
    } else {
        const int64_t *k = keys->data;
        for (int64_t i = lo; i < hi; i++) {
            if (unique && i > 0 && k[i] == k[i - 1])
                continue;
            p = gm_format_i64(p, k[i]);
            *p++ = eol;
        }
    }
    return (size_t)(p - out);
}

