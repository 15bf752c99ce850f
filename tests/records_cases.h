/*
 * records_cases.h - what the records suite's files share (defined in
 * test_records.c): the table of option sets, each naming an order as gpumerge
 * would imply -n; gm_records_run called with a few knobs; generated inputs; and
 * LC_ALL=C sort's answers with the byte-for-byte comparison against them.
 */
#ifndef GM_TEST_RECORDS_CASES_H
#define GM_TEST_RECORDS_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "../core/gm.h"
#include "helpers.h"

#define MAX_OPTS 8

/* A set of sort options: each names an order, as gpumerge would imply -n. */
typedef struct {
    const char *opt[MAX_OPTS];
} opts;

/* The option sets every generated case runs with, NTABLE of them. */
extern const opts TABLE[];
extern const size_t NTABLE;

/* What the last run said through its message callback (-v), a line each. */
extern char said[4096];

/* The spec of o (zero: -z). */
gm_keyspec spec_of(const opts *o, int zero);
/* The options as sort's arguments for sh -c ("-t" with its byte quoted). */
void shell_opts(const opts *o, int zero, char *buf, size_t size);

typedef struct {
    size_t budget;
    int batch;
    int threads;
    const char *output;
    const char *tmpdir;
    int quiet;
} knobs;

/* gm_records_run on the CPU with ks and the knobs k; said gets what it said. */
int records(gm_op op, const gm_keyspec *ks, const knobs *k, char **names, int n,
            gm_status *st);

/* n random lines into dir/name, fields split by sep; eol ends them (the last one
 * without it sometimes). Returns the path. */
char *gen_file(rng *r, const char *dir, const char *name, int64_t n, char sep, char eol);
/* nfiles generated files m0, m1..., each sorted by sort with o; names and list
 * (" m0 m1...") filled. */
void sorted_files(rng *r, const char *dir, const opts *o, int nfiles, int64_t lines,
                  char **names, char *list, size_t size);

/* LC_ALL=C sort ARGS... > dir/ref, read back. */
char *sort_ref(const char *dir, const char *args, size_t *len);
/* Fails unless the file at path holds want's want_len bytes. */
void assert_same_file(const char *path, const char *want, size_t want_len, const char *what);
/* The entries of dir, but for those whose names begin with '.'. */
int dir_entries(const char *dir);

#endif
