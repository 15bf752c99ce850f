/*
 * helpers.h - what the Criterion suites share: a seeded random generator, reference
 * implementations (qsort, a plain two-pointer merge) to check the engines against,
 * scratch directories, and running gpumerge (or any shell command) with its
 * output, error output and exit status captured.
 */
#ifndef GM_TEST_HELPERS_H
#define GM_TEST_HELPERS_H

#include <stddef.h>
#include <stdint.h>

/* xorshift64*: deterministic for a given seed. */
typedef struct { uint64_t s; } rng;
void rng_seed(rng *r, uint64_t seed);
uint64_t rng_next(rng *r);
/* Uniform in [lo, hi]. */
int64_t rng_range(rng *r, int64_t lo, int64_t hi);

/* Reference sort (qsort) and merge of int64 arrays; order: +1 ascending, -1
 * descending. */
void ref_sort_i64(int64_t *a, int64_t n, int order);
void ref_merge_i64(const int64_t *a, int64_t m, const int64_t *b, int64_t n, int64_t *c,
                   int order);

/* A fresh scratch directory under $TMPDIR (or /tmp); returns its path, malloc'd.
 * The directory and everything in it are removed when the process exits. */
char *scratch_dir(void);
/* How many entries dir holds, but . and .. (aborts where dir cannot be read). */
int entries(const char *dir);
/* dir/name, malloc'd. */
char *path_in(const char *dir, const char *name);
/* Writes len bytes to path (truncating). */
void write_file(const char *path, const char *data, size_t len);
void write_text(const char *path, const char *text);
/* Reads a whole file; *len gets its size. Returns malloc'd, NUL-terminated data, or
 * NULL if it cannot be read. */
char *read_file(const char *path, size_t *len);
/* A growing text, NUL-terminated after its n bytes: generated inputs. */
typedef struct { char *buf; size_t n, cap; } text;
void text_put(text *t, const void *p, size_t n);
void text_puts(text *t, const char *s);
void text_putf(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes n keys, one per line, in canonical decimal. */
void write_keys(const char *path, const int64_t *keys, int64_t n);
/* Writes n random keys to dir/name: spread picks the range (0: int32, 1: int64,
 * 2: a few distinct values); sorted: 0 none, 1 ascending, -1 descending. */
void random_file(rng *r, const char *dir, const char *name, int64_t n, int spread,
                 int sorted);

/* Result of a command. */
typedef struct {
    int status;     /* exit status, or 128 + signal */
    char *out;      /* standard output */
    size_t out_len;
    char *err;      /* standard error */
    size_t err_len; /* its bytes, NULs within included */
} cmd_result;

/* Runs `sh -c cmd` in dir (NULL: current) with stdout and stderr captured. */
cmd_result run_sh(const char *dir, const char *cmd);
/* In a child of one thread: closes every descriptor above standard error but keep
 * (-1: none), the test runner's among them, and sets RLIMIT_NOFILE to nofile.
 * Returns 0, or -1 where the limit is refused. */
int limit_descriptors(int nofile, int keep);
/* Runs argv (argv[0] "sort": LC_ALL=C sort from PATH, else the gpumerge under
 * test) in dir with only the standard descriptors open and RLIMIT_NOFILE at
 * nofile, standard input /dev/null; standard output and error captured. */
cmd_result run_limited(const char *dir, int nofile, char **argv);
void cmd_free(cmd_result *r);

/* Path of the gpumerge binary under test ($GPUMERGE, else ./gpumerge). */
const char *gpumerge_path(void);
/* Extra arguments every CLI run gets ($GM_TEST_DEVICE=gpu: "--device=gpu"). */
const char *gpumerge_device_arg(void);

#endif
