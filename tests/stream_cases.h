/*
 * stream_cases.h - what the stream suite's files share: gm_run called in-process
 * on files of a scratch folder with a gm_config for the tests (the CPU, -v's lines
 * kept in said, --strict), the expected text of a sort, the -v line's counts of
 * runs and passes, and generated keys of a few shapes. The functions live in
 * test_stream.c.
 */
#ifndef GM_TEST_STREAM_CASES_H
#define GM_TEST_STREAM_CASES_H

#include <stdint.h>

#include "../core/gm.h"

/* The -v lines of the last run, joined. */
extern char said[8192];

/* The CPU, -v (its lines in said), --strict. */
gm_config config(void);
/* Writes lines of numbers into fd (a child's input) until folder tmp holds runs
 * entries or the reader goes, SIGPIPE ignored. */
void feed_until_runs(int fd, const char *tmp, int runs);
/* rm -rf dir (helpers.h counts its entries). */
void rm_rf(const char *dir);
/* The expected text of sorting v (n keys): order +1/-1, unique. Sorts v. */
char *expected(int64_t *v, int64_t n, int order, int unique);
/* Runs op in-process on the files, output to dir/out; returns gm_run's code and
 * the output in *out (malloc'd). */
int run_op(gm_op op, gm_config *c, const char *dir, char **names, int n, char **out,
           gm_status *st);
/* Numbers from the -v line "runs     R temporary, P merge passes over them". */
void runs_and_passes(int *runs, int *passes);

/* Keys of a shape: int32, a few values, int64 extremes, or int32 with one int64
 * key last. malloc'd. */
enum shape { UNIFORM, DUPLICATES, EXTREMES, LATE_WIDE };
int64_t *keys_of(enum shape sh, int64_t n, uint64_t seed);
/* Writes n sorted keys of a few values (scaled by the seed) to path, and appends
 * them to *all at *at. */
void write_sorted(const char *path, int64_t n, uint64_t seed, int64_t **all, int64_t *at);

#endif
