/*
 * specs.c - key specs from sort-style words for the suites (specs.h).
 */
#define _GNU_SOURCE
#include "specs.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

void spec_word(gm_keyspec *ks, const char *t)
{
    if (strncmp(t, "-t", 2) == 0) {
        ks->tab = (unsigned char)(t[2] == '\'' ? ' ' : t[2]);
    } else if (strncmp(t, "-k", 2) == 0) {
        gm_status st;
        cr_assert_eq(gm_keyspec_parse_key(ks, t + 2, &st), GM_OK, "%s: %s", t, st.msg);
    } else {
        for (const char *f = t + 1; *f; f++)
            switch (*f) {
            case 'n': ks->order = GM_ORDER_NUMERIC; ks->order_given = 1; break;
            case 'g': ks->order = GM_ORDER_GENERAL; ks->order_given = 1; break;
            case 'h': ks->order = GM_ORDER_HUMAN; ks->order_given = 1; break;
            case 'M': ks->order = GM_ORDER_MONTH; ks->order_given = 1; break;
            case 'V': ks->order = GM_ORDER_VERSION; ks->order_given = 1; break;
            case 'f': ks->fold = 1; break;
            case 'd': ks->ignore = GM_IGNORE_DICT; break;
            case 'i': if (ks->ignore != GM_IGNORE_DICT) ks->ignore = GM_IGNORE_PRINT; break;
            case 'r': ks->reverse = 1; break;
            case 's': ks->stable = 1; break;
            case 'u': ks->unique = 1; break;
            case 'b': ks->skip_blanks = 1; break;
            case 'z': ks->eol = '\0'; break;
            default: cr_assert_fail("bad test option %s", t);
            }
    }
}

gm_keyspec spec_from(const char *args, int *implied)
{
    return spec_from_as(args, 0, implied);
}

gm_keyspec spec_from_as(const char *args, int bytes_default, int *implied)
{
    gm_keyspec ks;
    gm_keyspec_init(&ks);
    ks.bytes_default = bytes_default;
    char *copy = strdup(args), *save = NULL;
    for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        spec_word(&ks, t);
        if (strncmp(t, "-t'", 3) == 0)
            strtok_r(NULL, " ", &save); /* the quote after the space */
    }
    free(copy);
    int had = ks.order != GM_ORDER_BYTES || ks.fold || ks.ignore || bytes_default;
    for (int i = 0; i < ks.nkeys; i++)
        had |= ks.keys[i].order != GM_ORDER_BYTES || ks.keys[i].fold || ks.keys[i].ignore;
    gm_keyspec_finish(&ks);
    if (implied)
        *implied = !had;
    return ks;
}
