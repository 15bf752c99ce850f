/*
 * parse.c - libFuzzer target: core/input's parser on a buffer (split, parse on
 * 1 to 4 threads, gather), against the line-at-a-time reference of reference.h:
 * the same keys in the same order, or the same first problem on the same line,
 * with a message that names it.
 *
 * Input: one byte of options (bit 0 ordered, bit 1 descending, bit 2 strict, bits
 * 3-4 threads - 1), then the text, in a buffer of exactly its size so that any
 * read past it is caught by AddressSanitizer.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/input.h"
#include "reference.h"

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "fuzz/parse.c:%d: check failed: %s\n", __LINE__, #cond); \
            abort();                                                                  \
        }                                                                             \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned flags = data[0];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    gm_parse_opts o = { (int)((flags >> 3) & 3) + 1, (int)(flags & 1),
                        (flags & 2) ? -1 : 0, (int)((flags >> 2) & 1) };

    gm_input in;
    memset(&in, 0, sizeof in);
    in.fd = -1;
    in.name = "in";
    strcpy(in.shown, "in");
    in.text = malloc(len ? len : 1);
    memcpy(in.text, text, len);
    in.len = len;
    gm_status st = { GM_OK, "" };
    int rc = gm_input_split(&in, o.nthreads, &st);
    CHECK(rc == GM_OK);
    int32_t *dest = malloc((size_t)(in.nlines ? in.nlines : 1) * sizeof *dest);
    rc = gm_input_parse(&in, &o, dest, &st);

    ref_parse want = ref_read(text, len, o.ordered, o.mask ? -1 : 1, o.strict);
    if (want.prob == REF_OK) {
        CHECK(rc == GM_OK);
        CHECK(in.nkeys == want.n);
        int64_t *got = malloc((size_t)(want.n ? want.n : 1) * sizeof *got);
        if (in.wide) {
            gm_input_gather(&in, GM_I64, got, o.nthreads);
        } else {
            gm_input_gather(&in, GM_I32, dest, o.nthreads);
            for (int64_t i = 0; i < want.n; i++)
                got[i] = dest[i];
        }
        CHECK(want.n == 0 || memcmp(got, want.keys, (size_t)want.n * sizeof *got) == 0);
        for (int64_t i = 0; i < want.n; i++)
            CHECK(in.wide || (want.keys[i] >= INT32_MIN && want.keys[i] <= INT32_MAX));
        free(got);
    } else {
        static const char *const what[] = { "", "not an integer", "out of range",
                                            "disorder" };
        char head[128];
        snprintf(head, sizeof head, "in:%lld: %s: ", (long long)want.prob_line,
                 what[want.prob]);
        CHECK(rc == (want.prob == REF_DISORDER ? GM_DISORDER : GM_EINPUT));
        CHECK(strncmp(st.msg, head, strlen(head)) == 0);
        CHECK(ref_printable(st.msg));
    }
    free(want.keys);
    free(dest);
    gm_input_close(&in);
    return 0;
}
