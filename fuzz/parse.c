/*
 * parse.c - libFuzzer target: core/input's reader and parser on a buffer (blocks
 * of 64 bytes and up, parsed on 1 to 4 threads), against the line-at-a-time reference of reference.h:
 * the same keys in the same order, or the same first problem on the same line,
 * with a message that names it.
 *
 * The same text is parsed again as the integer path parses outside --strict
 * (canonical lines only): taken whole exactly when every line is a canonical
 * integer, else declined (GM_ERECORDS) at the first line that is not, unless a
 * disorder comes before it.
 *
 * Input: one byte of options (bit 0 ordered, bit 1 descending, bit 2 strict, bits
 * 3-4 threads - 1, bits 5-7 the block size: 0 the default, else 64 << N bytes), then the text, in a buffer of exactly its size so that any
 * read past it is caught by AddressSanitizer.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../core/read/input.h"
#include "reference.h"

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "fuzz/parse.c:%d: check failed: %s\n", __LINE__, #cond); \
            abort();                                                                  \
        }                                                                             \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The first line (1-based) that is not a canonical integer within int64, or 0. */
static int64_t first_noncanonical(const char *text, size_t len)
{
    int64_t line = 0;
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        int64_t v;
        line++;
        const char *d = text + at + (n > 0 && text[at] == '-');
        size_t nd = n - (size_t)(d - (text + at));
        int digits = nd > 0 && (d[0] != '0' || (nd == 1 && d == text + at));
        for (size_t i = 0; i < nd && digits; i++)
            digits = d[i] >= '0' && d[i] <= '9';
        if (!digits || ref_line(text + at, n, &v) != 1)
            return line;
        at += n + 1;
    }
    return 0;
}

static void check_canonical(const char *text, size_t len, const gm_parse_opts *opts,
                            unsigned flags)
{
    gm_parse_opts o = *opts;
    o.canonical = 1;
    int mfd = memfd_create("in", 0);
    CHECK(mfd >= 0);
    CHECK(len == 0 || write(mfd, text, len) == (ssize_t)len);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", mfd);
    gm_input_test_block_size(flags >> 5 ? (size_t)64 << (flags >> 5) : 0);
    gm_input in;
    gm_keybuf kb = { NULL, 0, 0, 0, GM_I32 };
    gm_status st = { GM_OK, "", 0 };
    int rc = gm_input_open(&in, path, &st);
    CHECK(rc == GM_OK);
    while (!rc && !in.eof)
        rc = gm_input_read_keys(&in, &o, &kb, &st);
    gm_input_close(&in);
    close(mfd);
    int64_t bad = first_noncanonical(text, len);
    ref_parse want = ref_read(text, len, o.ordered, o.mask ? -1 : 1, o.strict);
    int disorder_first = want.prob == REF_DISORDER && (bad == 0 || want.prob_line < bad);
    if (disorder_first) {
        CHECK(rc == GM_DISORDER);
    } else if (bad) {
        char head[128];
        snprintf(head, sizeof head, "%s:%lld: not a canonical integer: ", path, (long long)bad);
        CHECK(rc == GM_ERECORDS);
        CHECK(strncmp(st.msg, head, strlen(head)) == 0);
    } else {
        CHECK(rc == GM_OK);
        CHECK(kb.n == want.n);
        for (int64_t i = 0; i < want.n; i++)
            CHECK(gm_keybuf_get(&kb, i) == want.keys[i]);
    }
    free(want.keys);
    gm_keybuf_free(&kb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned flags = data[0];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    gm_parse_opts o = { (int)((flags >> 3) & 3) + 1, (int)(flags & 1),
                        (flags & 2) ? -1 : 0, (int)((flags >> 2) & 1) };

    /* The text as a file of its own (a memfd, opened again by name as any input
     * is), read in blocks as small as 64 bytes so that lines cross blocks. */
    int mfd = memfd_create("in", 0);
    CHECK(mfd >= 0);
    CHECK(len == 0 || write(mfd, text, len) == (ssize_t)len);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", mfd);
    gm_input_test_block_size(flags >> 5 ? (size_t)64 << (flags >> 5) : 0);
    gm_input in;
    gm_keybuf kb = { NULL, 0, 0, 0, GM_I32 };
    gm_status st = { GM_OK, "", 0 };
    int rc = gm_input_open(&in, path, &st);
    CHECK(rc == GM_OK);
    while (!rc && !in.eof)
        rc = gm_input_read_keys(&in, &o, &kb, &st);
    gm_input_close(&in);
    close(mfd);

    ref_parse want = ref_read(text, len, o.ordered, o.mask ? -1 : 1, o.strict);
    if (want.prob == REF_OK) {
        CHECK(rc == GM_OK);
        CHECK(kb.n == want.n);
        for (int64_t i = 0; i < want.n; i++) {
            CHECK(gm_keybuf_get(&kb, i) == want.keys[i]);
            CHECK(kb.width == GM_I64 || (want.keys[i] >= INT32_MIN && want.keys[i] <= INT32_MAX));
        }
    } else {
        static const char *const what[] = { "", "not an integer", "out of range",
                                            "disorder" };
        char head[128];
        snprintf(head, sizeof head, "%s:%lld: %s: ", path, (long long)want.prob_line,
                 what[want.prob]);
        CHECK(rc == (want.prob == REF_DISORDER ? GM_DISORDER : GM_EINPUT));
        CHECK(strncmp(st.msg, head, strlen(head)) == 0);
        CHECK(ref_printable(st.msg));
    }
    free(want.keys);
    gm_keybuf_free(&kb);
    check_canonical(text, len, &o, flags);
    return 0;
}
