/*
 * recgpu_cases.h - what the recgpu suite's files share (defined in
 * test_recgpu.c): generators of lines, and the cases that pair one with sort's
 * options, each run by the host's half, the kernels' steps and the CLI.
 */
#ifndef GM_TEST_RECGPU_CASES_H
#define GM_TEST_RECGPU_CASES_H

#include <stddef.h>

#include "helpers.h"

/* n lines ended by eol appended to t: */
/* bench/records.sh's id,ts,payload, a timestamp shared by about fifty; */
void gen_events(rng *r, text *t, int n, char eol);
/* fields of numbers and words, blank lines, CRs and copies of earlier lines; */
void gen_fields(rng *r, text *t, int n, char eol);
/* one key for every line, the rest of the line telling them apart or not; */
void gen_equal(rng *r, text *t, int n, char eol);
/* one key for every line, the first eight bytes shared by thousands; */
void gen_equal_heads(rng *r, text *t, int n, char eol);
/* ids many share, with more bytes in common after the id; */
void gen_long_heads(rng *r, text *t, int n, char eol);
/* words for the text orders: mixed case, months, punctuation, shared beginnings. */
void gen_words(rng *r, text *t, int n, char eol);
/* file names for -V: long shared numbers, suffixes, '~', hidden and special names. */
void gen_versions(rng *r, text *t, int n, char eol);

typedef void (*gen_fn)(rng *, text *, int, char);

typedef struct {
    gen_fn gen;
    int lines;
    const char *args;  /* sort's options, as the shell takes them */
    int zero;          /* -z */
    int bytes;         /* run as gpusort: byte order where none is named */
} rec_case;

/* Every generator with a few sets of sort's options, NCASES of them. */
extern const rec_case CASES[];
extern const size_t NCASES;

#endif
