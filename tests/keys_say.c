/*
 * keys_say.c - core/keys/keys.h's gm_keyspec_say, -v's first line: a finished
 * spec spelt back as sort's options, each key with the letters it compares by,
 * and the defaults named where no order is.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "../core/keys/keys.h"
#include "specs.h"

Test(keys, said_as_sort_options)
{
    static const struct { const char *args; int bytes; const char *want; } cases[] = {
        { "", 1, "bytes of whole lines (no order named: sort's byte order)" },
        { "", 0, "-n on whole lines (no order named: gpumerge's default)" },
        { "-n", 0, "-n on whole lines" },
        { "-r", 1, "-r on whole lines (no order named: sort's byte order)" },
        { "-f -r", 1, "-f -r on whole lines" },
        { "-b -M", 1, "-bM on whole lines" },
        { "-d -i", 1, "-d on whole lines" },
        { "-z -V -u", 1, "-V -u -z on whole lines" },
        { "-t, -k2,2n -s", 1, "-t, -k2,2n -s" },
        { "-t, -n -k2,2 -k1,1", 1, "-t, -k2,2n -k1,1n" },
        { "-k3V -k1,1n -u", 1, "-k3V -k1,1n -u" },
        { "-k2.3b,3.4r", 1, "-k2.3b,3.4r" },
        { "-b -k2,2 -k1", 1, "-k2b,2b -k1b" },
        { "-t: -k2,2df -k1bh", 1, "-t: -k2,2df -k1bh" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gm_keyspec ks = spec_from_as(cases[i].args, cases[i].bytes, NULL);
        char out[256];
        gm_keyspec_say(&ks, out, sizeof out);
        cr_expect_str_eq(out, cases[i].want, "%s", cases[i].args);
    }
    /* a tab that is not printable, or a quote, in sort's quoting */
    gm_keyspec ks = spec_from_as("-k2,2", 1, NULL);
    ks.tab = '\t';
    char out[256];
    gm_keyspec_say(&ks, out, sizeof out);
    cr_expect_str_eq(out, "-t '\\t' -k2,2");
    ks.tab = '\'';
    gm_keyspec_say(&ks, out, sizeof out);
    cr_expect_str_eq(out, "-t '\\047' -k2,2");
    /* a buffer too small is cut, still a string */
    char small[8];
    gm_keyspec_say(&ks, small, sizeof small);
    cr_expect(strlen(small) < sizeof small && strncmp(small, "-t", 2) == 0, "%s", small);
}
