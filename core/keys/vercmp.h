/*
 * vercmp.h - version comparison for sort -V: the order of gnulib's
 * filenvercmp (the 2022 filevercmp) as coreutils 9.1's sort -V uses it,
 * on byte strings of explicit length (NUL is an ordinary byte).
 */
#ifndef GM_VERCMP_H
#define GM_VERCMP_H

#include <stddef.h>

/* Compares A[0..ALEN) with B[0..BLEN) as versions: <0, 0 or >0. Distinct
 * strings may compare equal (e.g. "1" and "01"); sort's last resort then
 * orders them by bytes. */
int gm_version_cmp(const unsigned char *a, size_t alen,
                   const unsigned char *b, size_t blen);

#endif
