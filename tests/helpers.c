/*
 * helpers.c - shared test utilities (see helpers.h).
 */
#define _GNU_SOURCE
#include "helpers.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

void rng_seed(rng *r, uint64_t seed) { r->s = seed * 0x9E3779B97F4A7C15ULL + 1; }

uint64_t rng_next(rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1DULL;
}

int64_t rng_range(rng *r, int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
    uint64_t v = rng_next(r);
    return span == 0 ? (int64_t)v : (int64_t)((uint64_t)lo + v % span);
}

static int order_sign;
static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return order_sign * ((a > b) - (a < b));
}

void ref_sort_i64(int64_t *a, int64_t n, int order)
{
    order_sign = order;
    qsort(a, (size_t)n, sizeof *a, cmp_i64);
}

void ref_merge_i64(const int64_t *a, int64_t m, const int64_t *b, int64_t n, int64_t *c,
                   int order)
{
    int64_t i = 0, j = 0, k = 0;
    while (i < m && j < n) {
        int b_first = order > 0 ? b[j] < a[i] : b[j] > a[i];
        c[k++] = b_first ? b[j++] : a[i++];
    }
    while (i < m)
        c[k++] = a[i++];
    while (j < n)
        c[k++] = b[j++];
}

/* The scratch folders this process made, removed when it exits (each Criterion
 * test runs in a process of its own). */
static char *scratch[256];
static int nscratch;

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    chmod(path, 0700); /* a test may have taken the permissions away */
    remove(path);
    return 0;
}

static void remove_scratch(void)
{
    for (int i = 0; i < nscratch; i++)
        nftw(scratch[i], remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "cannot read the folder %s\n", dir);
        abort();
    }
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

char *scratch_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    char *path;
    if (asprintf(&path, "%s/gpumerge-test-XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0)
        abort();
    if (!mkdtemp(path))
        abort();
    if (nscratch == 0)
        atexit(remove_scratch);
    if (nscratch < (int)(sizeof scratch / sizeof scratch[0]))
        scratch[nscratch++] = strdup(path);
    return path;
}

char *path_in(const char *dir, const char *name)
{
    char *p;
    if (asprintf(&p, "%s/%s", dir, name) < 0)
        abort();
    return p;
}

void write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0)
        abort();
}

void write_text(const char *path, const char *text) { write_file(path, text, strlen(text)); }

char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            char *bigger = realloc(buf, cap + 1);
            if (!bigger)
                abort();
            buf = bigger;
        }
    }
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

void write_keys(const char *path, const int64_t *keys, int64_t n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        abort();
    for (int64_t i = 0; i < n; i++)
        fprintf(f, "%lld\n", (long long)keys[i]);
    if (fclose(f) != 0)
        abort();
}

/* The result of a child that ended with wait status st, its output and errors in
 * files out and err of scratch folder tmp, which go (and their names are freed). */
static cmd_result collected(int st, char *tmp, char *out, char *err)
{
    cmd_result r = { WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), NULL, 0, NULL, 0 };
    r.out = read_file(out, &r.out_len);
    r.err = read_file(err, &r.err_len);
    unlink(out);
    unlink(err);
    rmdir(tmp);
    free(out);
    free(err);
    free(tmp);
    return r;
}

cmd_result run_sh(const char *dir, const char *cmd)
{
    char *tmp = scratch_dir();
    char *out = path_in(tmp, "out"), *err = path_in(tmp, "err"), *full;
    if (asprintf(&full, "%s%s%s(%s) >'%s' 2>'%s'", dir ? "cd '" : "", dir ? dir : "",
                 dir ? "' && " : "", cmd, out, err) < 0)
        abort();
    int st = system(full);
    free(full);
    return collected(st, tmp, out, err);
}

int limit_descriptors(int nofile, int keep)
{
    for (int fd = STDERR_FILENO + 1; fd < 4096; fd++)
        if (fd != keep)
            close(fd);
    struct rlimit rl = { (rlim_t)nofile, (rlim_t)nofile };
    return setrlimit(RLIMIT_NOFILE, &rl);
}

/* Runs argv (argv[0] "sort": LC_ALL=C sort from PATH, else the gpumerge under
 * test) in dir with only the standard descriptors open and RLIMIT_NOFILE at
 * nofile, standard input /dev/null; standard output and error captured. */
cmd_result run_limited(const char *dir, int nofile, char **argv)
{
    char *tmp = scratch_dir(), *out = path_in(tmp, "out"), *err = path_in(tmp, "err");
    pid_t pid = fork();
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY), o = open(out, O_WRONLY | O_CREAT, 0600),
            e = open(err, O_WRONLY | O_CREAT, 0600);
        if (in < 0 || o < 0 || e < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 ||
            chdir(dir) != 0)
            _exit(127);
        if (limit_descriptors(nofile, -1) != 0)
            _exit(127);
        if (strcmp(argv[0], "sort") == 0) {
            setenv("LC_ALL", "C", 1);
            execvp("sort", argv);
        } else {
            execv(gpumerge_path(), argv);
        }
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    return collected(status, tmp, out, err);
}

void cmd_free(cmd_result *r)
{
    free(r->out);
    free(r->err);
}

const char *gpumerge_path(void)
{
    const char *p = getenv("GPUMERGE");
    return p && *p ? p : "./gpumerge";
}

const char *gpumerge_device_arg(void)
{
    const char *d = getenv("GM_TEST_DEVICE");
    return d && strcmp(d, "gpu") == 0 ? "--device=gpu" : "";
}

void random_file(rng *r, const char *dir, const char *name, int64_t n, int spread,
                        int sorted)
{
    int64_t *v = malloc((size_t)(n + 1) * sizeof *v);
    for (int64_t i = 0; i < n; i++)
        v[i] = spread == 0   ? rng_range(r, INT32_MIN, INT32_MAX)
               : spread == 1 ? (int64_t)rng_next(r)
                             : rng_range(r, -5, 5);
    if (sorted)
        ref_sort_i64(v, n, sorted);
    char *path = path_in(dir, name);
    write_keys(path, v, n);
    free(path);
    free(v);
}

void text_put(text *t, const void *p, size_t n)
{
    if (t->n + n + 1 > t->cap) {
        t->cap = (t->n + n + 1) * 2;
        t->buf = realloc(t->buf, t->cap);
        if (!t->buf)
            abort();
    }
    memcpy(t->buf + t->n, p, n);
    t->n += n;
    t->buf[t->n] = '\0';
}

void text_puts(text *t, const char *s)
{
    text_put(t, s, strlen(s));
}

void text_putf(text *t, const char *fmt, ...)
{
    char b[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    text_put(t, b, (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
}
