/*
 * numcmp.h - the three numeric orders of sort on one key's bytes (a pointer and a
 * length, no terminator needed), and their order-preserving 64-bit encodings.
 * Internal to the key comparison (keys.c); the rules are sort's numcompare,
 * general_numcompare and human_numcompare in the C locale.
 */
#ifndef GM_NUMCMP_H
#define GM_NUMCMP_H

#include <stddef.h>
#include <stdint.h>

/* -n: leading blanks (space, tab, newline), an optional '-', digits, an optional
 * '.' and digits; anything else ends the number; no digits is zero, "-0" is 0.
 * Exact for numbers of any length. Returns <0, 0 or >0. */
int gm_num_cmp(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen);

/* -g: strtold's value; conversion errors first, then NaNs ("-nan" before "nan", as
 * sort orders them by their printed forms), then numbers (-0 equals 0). */
int gm_general_cmp(const unsigned char *a, size_t alen, const unsigned char *b,
                   size_t blen);

/* -h: the SI unit after the number as coreutils 9.1 orders units (none < k/K < M <
 * G < T < P < E < Z < Y; negated for negative numbers, none for zero), then -n. */
int gm_human_cmp(const unsigned char *a, size_t alen, const unsigned char *b,
                 size_t blen);

/* The encodings: unsigned order follows the comparison above (a < b as numbers
 * when enc(a) < enc(b)); *exact is set when equal encodings mean equal keys. */
uint64_t gm_num_prefix(const unsigned char *s, size_t len, int *exact);
uint64_t gm_general_prefix(const unsigned char *s, size_t len, int *exact);
uint64_t gm_human_prefix(const unsigned char *s, size_t len, int *exact);

#endif
