/*
 * keys_md5.c - part of the keys suite: core/md5.h against the test vectors of
 * RFC 1321 (A.5), updates split at every offset against one-shot digests, and
 * a copied seeded state against a fresh one (as sort -R uses it).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../core/keys/md5.h"

static void md5_hex(const void *data, size_t len, char out[33])
{
    gm_md5 m;
    unsigned char d[16];
    gm_md5_init(&m);
    gm_md5_update(&m, data, len);
    gm_md5_final(&m, d);
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

Test(keys, md5_rfc1321_vectors)
{
    static const char *const cases[][2] = {
        {"", "d41d8cd98f00b204e9800998ecf8427e"},
        {"a", "0cc175b9c0f1b6a831c399e269772661"},
        {"abc", "900150983cd24fb0d6963f7d28e17f72"},
        {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
        {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
        {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
         "d174ab98d277d9f5a5611c2c9f419d9f"},
        {"1234567890123456789012345678901234567890"
         "1234567890123456789012345678901234567890",
         "57edf4a22be3c955ac49da2e2107b67a"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char hex[33];
        md5_hex(cases[i][0], strlen(cases[i][0]), hex);
        cr_expect_str_eq(hex, cases[i][1], "md5(\"%s\")", cases[i][0]);
    }
}

Test(keys, md5_padding_boundaries)
{
    /* Lengths around the 56- and 64-byte edges of the padding; the digests
     * of runs of 'a' as md5sum gives them. */
    static const struct { size_t n; const char *hex; } cases[] = {
        {55, "ef1772b6dff9a122358552954ad0df65"},
        {56, "3b0c8ac703f828b04c6c197006d17218"},
        {57, "652b906d60af96844ebd21b674f35e93"},
        {63, "b06521f39153d618550606be297466d5"},
        {64, "014842d480b571495a4a0363793f7367"},
        {65, "c743a45e0d2e6a95cb859adae0248435"},
        {1000, "cabe45dcc9ae5b66ba86600cca6b8ba8"},
    };
    char buf[1000];
    memset(buf, 'a', sizeof buf);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char hex[33];
        md5_hex(buf, cases[i].n, hex);
        cr_expect_str_eq(hex, cases[i].hex, "md5 of %zu 'a's", cases[i].n);
    }
}

Test(keys, md5_split_updates)
{
    unsigned char data[300];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (unsigned char)(i * 131 + 7);

    for (size_t len = 0; len <= sizeof data; len += 37) {
        unsigned char one[16];
        gm_md5 m;
        gm_md5_init(&m);
        gm_md5_update(&m, data, len);
        gm_md5_final(&m, one);
        for (size_t cut = 0; cut <= len; cut++) {
            unsigned char two[16];
            gm_md5_init(&m);
            gm_md5_update(&m, data, cut);
            gm_md5_update(&m, NULL, 0);
            gm_md5_update(&m, data + cut, len - cut);
            gm_md5_final(&m, two);
            cr_assert(memcmp(one, two, 16) == 0, "len %zu split at %zu", len, cut);
        }
        /* Byte by byte. */
        unsigned char three[16];
        gm_md5_init(&m);
        for (size_t i = 0; i < len; i++)
            gm_md5_update(&m, data + i, 1);
        gm_md5_final(&m, three);
        cr_assert(memcmp(one, three, 16) == 0, "len %zu byte by byte", len);
    }
}

Test(keys, md5_copied_seed)
{
    /* A state seeded with a salt and copied by value gives the digest of
     * salt + line, and leaves the seed untouched. */
    gm_md5 seed;
    gm_md5_init(&seed);
    gm_md5_update(&seed, "0123456789abcdef", 16);
    const char *lines[] = {"", "x", "hello world", "a line longer than one block of "
                                                    "sixty-four bytes, to cross it"};
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        gm_md5 m = seed;
        unsigned char got[16], want[16];
        gm_md5_update(&m, lines[i], strlen(lines[i]));
        gm_md5_final(&m, got);

        char cat[200];
        int n = snprintf(cat, sizeof cat, "0123456789abcdef%s", lines[i]);
        gm_md5_init(&m);
        gm_md5_update(&m, cat, (size_t)n);
        gm_md5_final(&m, want);
        cr_expect(memcmp(got, want, 16) == 0, "seeded copy, line %zu", i);
    }
}
