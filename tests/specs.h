/*
 * specs.h - key specs for the suites that compare lines (keys, records, recgpu),
 * built from sort-style words the way the command line builds them.
 */
#ifndef GM_TEST_SPECS_H
#define GM_TEST_SPECS_H

#include "../core/keys/keys.h"

/* Applies one word to ks: "-tX" (X the separator), "-kSPEC", or flags among
 * n g h M V f d i r s u b z. A word the suites do not use fails the test. */
void spec_word(gm_keyspec *ks, const char *word);

/* A finished spec from words separated by spaces ("-t' '" is a space as the
 * separator). *implied (may be NULL) is set when finishing implied -n. */
gm_keyspec spec_from(const char *args, int *implied);

/* The same, with bytes_default as gpusort sets it (byte order where none is
 * named). */
gm_keyspec spec_from_as(const char *args, int bytes_default, int *implied);

#endif
