/*
 * pipeline.c - libFuzzer target: the whole of gm_run under --strict (merge, sort,
 * check; -r, -u;
 * one or two threads; -o to a new file, onto an input, through a dangling link,
 * over an old file) on random files, in process, against:
 *   - the line-at-a-time reference of reference.h, sorted with qsort: the output
 *     byte for byte, or the first problem (file and line) as the error;
 *   - GNU sort (LC_ALL=C sort -n, -m, -r, -u) when every input is canonical;
 *   - the rules of -o: after an error the target is as it was (a new one never
 *     created), a link is still a link, and no temporary file is left;
 *   - every error a message of printable bytes (the CLI exits 2 on it).
 *
 * Input: byte 0 the operation (mod 3), byte 1 flags (bit 0 -r, bit 1 -u, bit 2
 * two threads, bits 3-4 the -o case), byte 2 the number of files (mod 4, plus
 * 1), then the files' contents separated by NUL bytes.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/base/cleanup.h"
#include "../core/gm.h"
#include "reference.h"

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "fuzz/pipeline.c:%d: check failed: %s\n", __LINE__, #cond); \
            abort();                                                                     \
        }                                                                                \
    } while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

static void remove_dir(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[128];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.' || strlen(e->d_name) > 2)
            unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* gm_run installs its signal handlers once, and libFuzzer leaves alone a
     * signal that has a handler: install them now and put back what was there,
     * so that libFuzzer's own (its timer's SIGALRM, SIGINT, ...) go in after. */
    struct sigaction old[NSIG];
    for (int s = 1; s < NSIG; s++)
        sigaction(s, NULL, &old[s]);
    gm_status st;
    gm_cleanup_install(&st);
    for (int s = 1; s < NSIG; s++)
        sigaction(s, &old[s], NULL);
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/gpumerge-fuzz-XXXXXX", tmp && strlen(tmp) < 30 ? tmp : "/tmp");
    CHECK(mkdtemp(dir) != NULL);
    atexit(remove_dir);
    return 0;
}

static char *at(const char *name)
{
    static char paths[8][128];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    return p;
}

static void put(const char *path, const char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    CHECK(write(fd, data, len) == (ssize_t)len);
    close(fd);
}

static char *get(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return NULL;
    size_t cap = 1 << 12, n = 0;
    char *buf = malloc(cap);
    ssize_t got;
    while ((got = read(fd, buf + n, cap - n)) > 0)
        if ((n += (size_t)got) == cap)
            buf = realloc(buf, cap *= 2);
    close(fd);
    *len = n;
    return buf;
}

static int no_temporary(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int clean = 1;
    while (d && (e = readdir(d)))
        if (strncmp(e->d_name, ".gpumerge-", 10) == 0)
            clean = 0;
    closedir(d);
    return clean;
}

static int ascending(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* GNU sort's output for these files into `sorted`; 0 when it could not run. */
static int gnu_sort(gm_op op, int reverse, int unique, char **names, int n)
{
    char *argv[16];
    int a = 0;
    argv[a++] = "sort";
    argv[a++] = "-n";
    if (op == GM_OP_MERGE)
        argv[a++] = "-m";
    if (reverse)
        argv[a++] = "-r";
    if (unique)
        argv[a++] = "-u";
    argv[a++] = "-o";
    argv[a++] = at("sorted");
    argv[a++] = "--";
    for (int i = 0; i < n; i++)
        argv[a++] = names[i];
    argv[a] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 2);
        setenv("LC_ALL", "C", 1);
        execvp("sort", argv);
        _exit(127);
    }
    int status;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
           WEXITSTATUS(status) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3 || size > (1 << 16))
        return 0;
    gm_op op = (gm_op)(data[0] % 3);
    unsigned flags = data[1];
    int nfiles = data[2] % 4 + 1, reverse = flags & 1, unique = (flags >> 1) & 1;
    int target = op == GM_OP_CHECK ? -1 : (int)((flags >> 3) & 3);

    /* The files. */
    char *names[4];
    const char *text[4];
    size_t len[4];
    const char *p = (const char *)data + 3, *end = (const char *)data + size;
    for (int i = 0; i < nfiles; i++) {
        const char *nul = p < end ? memchr(p, 0, (size_t)(end - p)) : NULL;
        text[i] = p;
        len[i] = p < end ? (size_t)((nul ? nul : end) - p) : 0;
        p += len[i] + (p < end);
        char name[8];
        snprintf(name, sizeof name, "f%d", i);
        names[i] = strdup(at(name));
        put(names[i], text[i], len[i]);
    }
    unlink(at("out"));
    unlink(at("new"));
    unlink(at("lnk"));
    put(at("old"), "old\n", 4);
    CHECK(symlink("new", at("lnk")) == 0);
    static const char *const outputs[] = { "out", "f0", "lnk", "old" };
    char *output = target < 0 ? NULL : strdup(at(outputs[target]));
    char *result = target < 0 ? NULL : strdup(at(target == 2 ? "new" : outputs[target]));

    /* The reference. */
    int dirn = reverse ? -1 : 1, canonical = 1;
    gm_code want_rc = GM_OK;
    char want_head[256] = "";
    int64_t *keys = malloc((size / 2 + 1) * sizeof *keys), nkeys = 0;
    for (int i = 0; i < nfiles && want_rc == GM_OK; i++) {
        ref_parse r = ref_read(text[i], len[i], op != GM_OP_SORT, dirn,
                               op == GM_OP_CHECK && unique);
        canonical &= r.canonical;
        if (r.prob != REF_OK) {
            static const char *const what[] = { "", "not an integer", "out of range",
                                                "disorder" };
            want_rc = r.prob == REF_DISORDER && op == GM_OP_CHECK ? GM_DISORDER : GM_EINPUT;
            snprintf(want_head, sizeof want_head, "%s:%lld: %s: ", names[i],
                     (long long)r.prob_line, what[r.prob]);
        }
        memcpy(keys + nkeys, r.keys, (size_t)r.n * sizeof *keys);
        nkeys += r.n;
        free(r.keys);
    }
    int compare_gnu = want_rc == GM_OK && canonical && op != GM_OP_CHECK &&
                      gnu_sort(op, reverse, unique, names, nfiles);

    gm_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.reverse = reverse;
    cfg.unique = unique;
    cfg.threads = (flags & 4) ? 2 : 1;
    cfg.device = GM_DEVICE_CPU;
    cfg.strict = 1; /* the reference reads integers (test_lines: lines against sort) */
    cfg.output = output;
    gm_status st = { GM_OK, "", 0 };
    int rc = gm_run(op, &cfg, names, nfiles, &st);

    CHECK(rc == (int)want_rc);
    CHECK(no_temporary());
    struct stat sb;
    CHECK(target < 0 || (lstat(at("lnk"), &sb) == 0 && S_ISLNK(sb.st_mode)));
    size_t got_len = 0;
    char *got = result ? get(result, &got_len) : NULL;
    if (rc != GM_OK) {
        CHECK(strncmp(st.msg, want_head, strlen(want_head)) == 0);
        CHECK(ref_printable(st.msg));
        if (target == 0 || target == 2)
            CHECK(got == NULL); /* never created */
        if (target == 1)
            CHECK(got && got_len == len[0] && memcmp(got, text[0], len[0]) == 0);
        if (target == 3)
            CHECK(got && got_len == 4 && memcmp(got, "old\n", 4) == 0);
    } else if (target >= 0) {
        /* A merge's inputs are each in order: sorting them all gives the merge. */
        qsort(keys, (size_t)nkeys, sizeof *keys, ascending);
        char *want = malloc((size_t)nkeys * 21 + 1), *w = want;
        for (int64_t i = 0; i < nkeys; i++) {
            int64_t k = keys[reverse ? nkeys - 1 - i : i];
            if (unique && i > 0 && k == keys[reverse ? nkeys - i : i - 1])
                continue;
            w += sprintf(w, "%lld\n", (long long)k);
        }
        CHECK(got != NULL);
        CHECK(got_len == (size_t)(w - want) && memcmp(got, want, got_len) == 0);
        if (compare_gnu) {
            size_t gnu_len;
            char *gnu = get(at("sorted"), &gnu_len);
            CHECK(gnu && gnu_len == got_len && memcmp(gnu, got, got_len) == 0);
            free(gnu);
        }
        free(want);
    }
    free(got);
    free(keys);
    free(output);
    free(result);
    for (int i = 0; i < nfiles; i++)
        free(names[i]);
    return 0;
}
