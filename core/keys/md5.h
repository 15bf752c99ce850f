/*
 * md5.h - MD5 message digest (RFC 1321), computed incrementally: init, any
 * number of updates, final. The state is a plain struct with no pointers, so
 * it can be copied by value: sort -R seeds one state with the random salt and
 * copies it for each line it hashes.
 */
#ifndef GM_MD5_H
#define GM_MD5_H

#include <stddef.h>
#include <stdint.h>

typedef struct gm_md5 {
    uint32_t a, b, c, d;    /* the chaining variables A, B, C, D of RFC 1321 3.3 */
    uint64_t bytes;         /* bytes fed so far (the length appended in step 3.2) */
    unsigned char buf[64];  /* the partial block: bytes % 64 bytes pending */
} gm_md5;

/* Starts a digest. */
void gm_md5_init(gm_md5 *m);
/* Feeds LEN bytes at DATA (DATA may be NULL when LEN is 0). */
void gm_md5_update(gm_md5 *m, const void *data, size_t len);
/* Pads, finishes and writes the 16-byte digest; M must be re-initialised
 * before it is used again. */
void gm_md5_final(gm_md5 *m, unsigned char digest[16]);

#endif
