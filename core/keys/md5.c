/*
 * md5.c - MD5 message digest, written from the description in RFC 1321
 * (R. Rivest, 1992): 64-byte blocks, four rounds of sixteen steps over the
 * little-endian words of each block, padding with 0x80, zeros and the bit
 * length. Used for sort -R's random hash of keys.
 */
#include "keys/md5.h"

#include <string.h>

static uint32_t rotl(uint32_t x, unsigned s)
{
    return (x << s) | (x >> (32 - s));
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static void put_le32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

/* T[i] = floor(2^32 * |sin(i + 1)|), RFC 1321 3.4. */
static const uint32_t md5_t[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a,
    0xa8304613, 0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be,
    0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340,
    0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8,
    0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c,
    0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
    0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92,
    0xffeff47d, 0x85845dd1, 0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1,
    0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};

/* The shift amounts of each round's four steps. */
static const unsigned char md5_s[4][4] = {
    {7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21},
};

/* Processes one 64-byte block into the state. */
static void md5_block(gm_md5 *m, const unsigned char *p)
{
    uint32_t x[16];
    for (int i = 0; i < 16; i++)
        x[i] = le32(p + 4 * i);

    uint32_t a = m->a, b = m->b, c = m->c, d = m->d;
    for (int i = 0; i < 64; i++) {
        int round = i / 16;
        uint32_t f;
        int k;
        switch (round) {
        case 0: f = (b & c) | (~b & d); k = i; break;
        case 1: f = (b & d) | (c & ~d); k = (5 * i + 1) & 15; break;
        case 2: f = b ^ c ^ d; k = (3 * i + 5) & 15; break;
        default: f = c ^ (b | ~d); k = (7 * i) & 15; break;
        }
        uint32_t t = d;
        d = c;
        c = b;
        b = b + rotl(a + f + x[k] + md5_t[i], md5_s[round][i & 3]);
        a = t;
    }
    m->a += a;
    m->b += b;
    m->c += c;
    m->d += d;
}

void gm_md5_init(gm_md5 *m)
{
    m->a = 0x67452301;
    m->b = 0xefcdab89;
    m->c = 0x98badcfe;
    m->d = 0x10325476;
    m->bytes = 0;
    memset(m->buf, 0, sizeof m->buf);
}

void gm_md5_update(gm_md5 *m, const void *data, size_t len)
{
    const unsigned char *p = data;
    size_t have = (size_t)(m->bytes & 63);
    if (len == 0)
        return;
    m->bytes += len;

    if (have) {
        size_t take = 64 - have < len ? 64 - have : len;
        memcpy(m->buf + have, p, take);
        p += take;
        len -= take;
        if (have + take < 64)
            return;
        md5_block(m, m->buf);
    }
    for (; len >= 64; p += 64, len -= 64)
        md5_block(m, p);
    if (len)
        memcpy(m->buf, p, len);
}

void gm_md5_final(gm_md5 *m, unsigned char digest[16])
{
    uint64_t bits = m->bytes * 8;
    size_t have = (size_t)(m->bytes & 63);
    unsigned char pad[72];
    size_t padlen = (have < 56 ? 56 : 120) - have;

    memset(pad, 0, sizeof pad);
    pad[0] = 0x80;
    for (size_t i = 0; i < 8; i++)
        pad[padlen + i] = (unsigned char)(bits >> (8 * i));
    gm_md5_update(m, pad, padlen + 8);

    put_le32(digest, m->a);
    put_le32(digest + 4, m->b);
    put_le32(digest + 8, m->c);
    put_le32(digest + 12, m->d);
}
