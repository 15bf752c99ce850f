/*
 * gpu_text.c - the GPU's text path (cuda/text.cu): its parser against
 * core/read/input.c's on random texts of every accepted and declined line form
 * (blanks, signs, leading zeros, CRLF, blank lines, int64 values first met late,
 * a last line without its end, -z), its formatter against gm_format_i64, and
 * gm_gpu_sort_text against the CPU's parse, sort and format, with -r, -u, -z and
 * copies forced into small pieces; a declined line, and outside --strict every
 * form but canonical integers, declined before anything is handed out.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/read/input.h"
#include "../core/write/output.h"
#include "../cuda/gpu.h"
#include "../cuda/testing.h"
#include "gpu_cases.h"
#include "helpers.h"

/* Line forms the host parser accepts, declines as not an integer, and declines as
 * out of range. */
static const char *const accepted[] = {
    "0", "-0", "+0", "+17", "-17", "2147483647", "-2147483648", "2147483648", "-2147483649",
    "9223372036854775807", "-9223372036854775808", "+9223372036854775807",
    "0000000000000000000000000000042", "-00000000000000000000009223372036854775808",
    "9999999999999999", "10000000000000000", "99999999999999999", "-4294967296",
    " 12", "\t-5\t", "  +7  \t ", "12\r", " 3 \r", "00", "1000000000000000000",
};
static const char *const blank_lines[] = { "", " ", "\t", "\r", " \t \r", "   " };
static const char *const rejected[] = {
    "+", "-", "12a", "a12", "1 2", "--1", "+-1", "- 1", "1\r\r", "12\r ", "x", "0x10",
    "1.5", "1e5", "\xd9\xa1", "\v1", "1\f",
};
static const char *const too_big[] = {
    "9223372036854775808", "-9223372036854775809", "99999999999999999999",
    "+18446744073709551616", "-100000000000000000000000",
};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

struct text {
    char *p;
    size_t len, cap;
};

static void add(struct text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->p = realloc(t->p, t->cap);
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = 0;
}

static void adds(struct text *t, const char *s) { add(t, s, strlen(s)); }

static int fits_i32(const char *a)
{
    char *end;
    long long v = strtoll(a, &end, 10);
    return v >= INT32_MIN && v <= INT32_MAX && strlen(a) < 12;
}

/* A random text of lines lines: keys, the fixed forms above, blank lines (unless
 * c % 5 == 2), long lines that leave a tile and its halo, CRLF. narrow keeps every
 * key within int32 (c % 3 == 0); c % 7 == 3 puts a single int64 key near the end;
 * bad (c % 4 == 1) plants declined lines. The last line ends or not at random. */
static struct text random_text(rng *r, int64_t lines, int c)
{
    struct text t = { NULL, 0, 0 };
    adds(&t, "");
    const int narrow = c % 3 == 0 || c % 7 == 3, bad = c % 4 == 1, blank = c % 5 != 2;
    char buf[64];
    for (int64_t i = 0; i < lines; i++) {
        int64_t x = rng_range(r, 0, 99);
        int64_t v = narrow ? rng_range(r, INT32_MIN, INT32_MAX)
                           : (int64_t)rng_next(r) >> rng_range(r, 0, 63);
        if (x < 70) {
            snprintf(buf, sizeof buf, "%lld", (long long)v);
            adds(&t, buf);
        } else if (x < 82) {
            const char *a = accepted[rng_range(r, 0, COUNT(accepted) - 1)];
            adds(&t, narrow && !fits_i32(a) ? "1" : a);
        } else if (x < 90 && blank) {
            adds(&t, blank_lines[rng_range(r, 0, COUNT(blank_lines) - 1)]);
        } else if (x < 91) {
            int64_t pad = rng_range(r, 0, 5000);
            for (int64_t k = 0; k < pad; k++)
                adds(&t, x & 1 ? " " : "\t");
            snprintf(buf, sizeof buf, "%lld", (long long)v);
            adds(&t, buf);
        } else if (x < 93 && bad) {
            adds(&t, rejected[rng_range(r, 0, COUNT(rejected) - 1)]);
        } else if (x < 94 && bad) {
            adds(&t, too_big[rng_range(r, 0, COUNT(too_big) - 1)]);
        } else {
            snprintf(buf, sizeof buf, "%lld%s", (long long)v, x & 1 ? "\r" : " ");
            adds(&t, buf);
        }
        if (c % 7 == 3 && i == lines - 2)
            adds(&t, "\n-9000000000"); /* one int64 key, late */
        if (i + 1 < lines || rng_range(r, 0, 1))
            adds(&t, "\n");
    }
    return t;
}

/* The host parser (core/read/input.c) on text in memory: its keys as int64, its width,
 * and the line (0: none) and kind of its first problem. */
struct parsed {
    int64_t *keys;
    int64_t n;
    gm_width width;
    int64_t bad_line;
    int bad_range;
};

static struct parsed host_parse(const char *text, size_t len)
{
    struct parsed p = { NULL, 0, GM_I32, 0, 0 };
    gm_input in;
    memset(&in, 0, sizeof in);
    in.name = "t";
    strcpy(in.shown, "t");
    in.fd = -1;
    in.size = (int64_t)len;
    gm_block blk = { text, len, 1 };
    gm_keybuf kb = { NULL, 0, 0, 0, GM_I32 };
    gm_parse_opts o = { 3, 0, 0, 0, 0 };
    gm_status st;
    int rc = gm_input_parse_block(&in, &blk, &o, &kb, &st);
    if (rc == GM_OK) {
        p.width = kb.width;
        p.n = kb.n;
        p.keys = malloc((size_t)(kb.n + 1) * sizeof *p.keys);
        for (int64_t i = 0; i < kb.n; i++)
            p.keys[i] = gm_keybuf_get(&kb, i);
    } else {
        cr_assert_eq(rc, GM_EINPUT, "host parse: %s", st.msg);
        long long line = 0;
        cr_assert_eq(sscanf(st.msg, "t:%lld:", &line), 1, "%s", st.msg);
        p.bad_line = line;
        p.bad_range = strstr(st.msg, "out of range") != NULL;
    }
    gm_keybuf_free(&kb);
    gm_input_close(&in);
    return p;
}

/* -z's form of a text: NUL and newline swapped, as the reader swaps them back. */
static void swap_ends(char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = p[i] == '\0' ? '\n' : p[i] == '\n' ? '\0' : p[i];
}

static void check_text_parse(const struct text *t, int zero, const char *what)
{
    struct parsed want = host_parse(t->p, t->len);
    char *z = malloc(t->len + 1);
    memcpy(z, t->p, t->len);
    if (zero)
        swap_ends(z, t->len);
    int64_t cap = (int64_t)t->len + 1, n = 0, bad = 0;
    int64_t *keys = malloc((size_t)cap * sizeof *keys);
    gm_width w;
    int range = 0;
    gm_status st;
    int rc = gm_gpu_test_parse(z, t->len, zero ? '\0' : '\n', keys, cap, &n, &w, &bad, &range, &st);
    if (want.bad_line) {
        cr_assert_eq(rc, GM_ETEXT, "%s: the host declines line %lld, the device: %s", what,
                     (long long)want.bad_line, rc ? st.msg : "nothing");
        cr_assert_eq(bad, want.bad_line, "%s: first declined line %lld on the device, %lld on the host",
                     what, (long long)bad, (long long)want.bad_line);
        cr_assert_eq(range, want.bad_range, "%s: line %lld: kind", what, (long long)bad);
    } else {
        cr_assert_eq(rc, GM_OK, "%s: %s", what, st.msg);
        cr_assert_eq(n, want.n, "%s: %lld keys on the device, %lld on the host", what,
                     (long long)n, (long long)want.n);
        cr_assert_eq(w, want.width, "%s: int%d on the device, int%d on the host", what, w * 8,
                     want.width * 8);
        assert_same_keys(keys, want.keys, n, GM_I64, what);
    }
    free(keys);
    free(z);
    free(want.keys);
}

static const char *const fixed_texts[] = {
    "\n", "\n\n\n", "5", "5\n", " ", "-", "\r\n", "\r", "-9223372036854775808",
    "1\n\n2\n", "1\n2\n3", "9223372036854775808\nx\n", "x\n9223372036854775808\n",
    "1\r\n-2\r\n+3\r\n", "7\n\n\n\n2147483648",
};

Test(gpu, text_parse_against_the_host, .timeout = 600)
{
    need_gpu();
    rng r;
    rng_seed(&r, 70);
    char what[96];
    for (int zero = 0; zero <= 1; zero++)
        for (int i = 0; i < COUNT(fixed_texts); i++) {
            struct text t = { NULL, 0, 0 };
            adds(&t, fixed_texts[i]);
            snprintf(what, sizeof what, "fixed text %d%s", i, zero ? " (-z)" : "");
            check_text_parse(&t, zero, what);
            free(t.p);
        }
    /* a line at every place about a tile (4096 bytes) and its halo (256 after it) */
    for (int pad = 4080; pad <= 4400; pad += 37) {
        struct text t = { NULL, 0, 0 };
        for (int k = 0; k < pad; k++)
            adds(&t, k % 3 ? " " : "\t");
        adds(&t, "7\n8\n");
        for (int k = 0; k < 4096; k++)
            adds(&t, "\n");
        adds(&t, "-3");
        snprintf(what, sizeof what, "tile edge %d", pad);
        check_text_parse(&t, 0, what);
        free(t.p);
    }
    int cases = small_only() ? 40 : 300;
    for (int c = 0; c < cases; c++) {
        int64_t lines = c % 10 == 9 ? rng_range(&r, 20000, 50000) : rng_range(&r, 1, 3000);
        struct text t = random_text(&r, lines, c);
        snprintf(what, sizeof what, "random text %d (%lld lines)%s", c, (long long)lines,
                 c % 2 ? " (-z)" : "");
        check_text_parse(&t, c % 2, what);
        free(t.p);
    }
}

Test(gpu, text_format_against_the_host, .timeout = 300)
{
    need_gpu();
    rng r;
    rng_seed(&r, 71);
    int64_t sizes[] = { 1, 2, 2047, 2048, 2049, 100000 };
    for (int s = 0; s < COUNT(sizes); s++)
        for (int w = 4; w <= 8; w += 4)
            for (int zero = 0; zero <= 1; zero++) {
                int64_t n = sizes[s];
                gm_keys k = { malloc((size_t)n * (size_t)w), n, (gm_width)w };
                for (int64_t i = 0; i < n; i++)
                    put(k.data, i, draw(&r, i % 5 ? DIST_WIDE : DIST_EXTREMES, (gm_width)w), (gm_width)w);
                put(k.data, 0, 0, (gm_width)w);
                size_t cap = (size_t)n * 21 + 1, len = 0, wl = 0;
                char *got = malloc(cap), *want = malloc(cap);
                for (int64_t i = 0; i < n; i++) {
                    char *e = gm_format_i64(want + wl, get(k.data, i, (gm_width)w));
                    *e++ = zero ? '\0' : '\n';
                    wl = (size_t)(e - want);
                }
                gm_gpu_choices c = { .text_chunk = s % 2 ? 4096 : 0 };
                gm_gpu_force(&c);
                gm_status st;
                int rc = gm_gpu_test_format(&k, zero ? '\0' : '\n', got, cap, &len, &st);
                gm_gpu_force(NULL);
                cr_assert_eq(rc, GM_OK, "%s", st.msg);
                cr_assert_eq(len, wl, "%lld int%d keys: %zu bytes, want %zu", (long long)n, w * 8,
                             len, wl);
                cr_assert(memcmp(got, want, wl) == 0, "%lld int%d keys: text differs",
                          (long long)n, w * 8);
                free(got), free(want), free(k.data);
            }
}

struct sink_buf {
    char *p;
    size_t len, cap;
    int calls;
};

static int to_buf(void *ctx, const char *text, size_t len, gm_status *st)
{
    struct sink_buf *b = ctx;
    if (b->len + len > b->cap)
        return gm_fail(st, GM_EIO, "sink full");
    memcpy(b->p + b->len, text, len);
    b->len += len;
    b->calls++;
    return GM_OK;
}

/* The CPU's answer: parse, sort, and format (with -u, the first of each run). */
static char *cpu_sorted_text(const struct text *t, int reverse, int unique, char eol, size_t *len)
{
    struct parsed p = host_parse(t->p, t->len);
    cr_assert_eq(p.bad_line, 0);
    ref_sort_i64(p.keys, p.n, reverse ? -1 : 1);
    char *out = malloc((size_t)p.n * 21 + 1), *e = out;
    for (int64_t i = 0; i < p.n; i++) {
        if (unique && i > 0 && p.keys[i] == p.keys[i - 1])
            continue;
        e = gm_format_i64(e, p.keys[i]);
        *e++ = eol;
    }
    *len = (size_t)(e - out);
    free(p.keys);
    return out;
}

Test(gpu, text_sort_against_the_cpu, .timeout = 600)
{
    need_gpu();
    rng r;
    rng_seed(&r, 72);
    int cases = small_only() ? 12 : 60;
    for (int c = 0; c < cases; c++) {
        int64_t lines = c % 6 == 5 ? rng_range(&r, 100000, 300000) : rng_range(&r, 1, 5000);
        int cc = c % 4 == 1 ? c + 1 : c; /* no declined lines here */
        struct text t = random_text(&r, lines, cc);
        int reverse = c & 1, unique = (c >> 1) & 1, zero = c % 3 == 2;
        char eol = zero ? '\0' : '\n';
        size_t wl;
        char *want = cpu_sorted_text(&t, reverse, unique, eol, &wl);
        if (zero)
            swap_ends(t.p, t.len);
        struct sink_buf b = { malloc(t.len + 2), 0, t.len + 1, 0 };
        gm_text_job job = { t.p, t.len, eol, reverse, unique, GM_KERNEL_AUTO, 0, NULL, NULL,
                            to_buf, &b };
        gm_text_result res;
        gm_gpu_times tm;
        gm_status st;
        gm_gpu_choices f = { .text_chunk = c % 5 == 0 ? 16 : c % 5 == 1 ? 65536 : 0 };
        gm_gpu_force(&f);
        int rc = gm_gpu_sort_text(&job, &res, &tm, &st);
        gm_gpu_force(NULL);
        cr_assert_eq(rc, GM_OK, "case %d: %s", c, st.msg);
        cr_assert_eq(b.len, wl, "case %d (%lld lines, -r %d, -u %d, -z %d): %zu bytes, want %zu",
                     c, (long long)lines, reverse, unique, zero, b.len, wl);
        cr_assert(memcmp(b.p, want, wl) == 0, "case %d: text differs", c);
        cr_assert_eq(res.bytes, (uint64_t)wl);
        free(b.p), free(want), free(t.p);
    }
}

Test(gpu, text_sort_declines_a_bad_line)
{
    need_gpu();
    const char *texts[] = { "1\n2\nx\n", "5\n99999999999999999999\n", "3\n-\n" };
    for (int i = 0; i < COUNT(texts); i++) {
        struct sink_buf b = { malloc(64), 0, 64, 0 };
        gm_text_job job = { texts[i], strlen(texts[i]), '\n', 0, 0, GM_KERNEL_AUTO, 0, NULL,
                            NULL, to_buf, &b };
        gm_text_result res;
        gm_gpu_times tm;
        gm_status st;
        cr_assert_eq(gm_gpu_sort_text(&job, &res, &tm, &st), GM_ETEXT, "text %d", i);
        cr_assert_eq(b.calls, 0, "nothing handed out before declining");
        free(b.p);
    }
}

/* Outside --strict the device takes canonical integers only: every other form the
 * full grammar accepts (signs, zeros, blanks, CR, blank lines) is declined, so
 * that the records path writes those lines back as they are; canonical lines of
 * both widths are sorted. */
Test(gpu, text_sort_canonical_only)
{
    need_gpu();
    const char *declined[] = { "1\n007\n", "1\n-0\n", "+5\n", " 12\n", "3\r\n", "1\n\n2\n",
                               "12 \n", "00\n", "-01\n" };
    for (int i = 0; i < COUNT(declined); i++) {
        struct sink_buf b = { malloc(64), 0, 64, 0 };
        gm_text_job job = { declined[i], strlen(declined[i]), '\n', 0, 0, GM_KERNEL_AUTO, 1,
                            NULL, NULL, to_buf, &b };
        gm_text_result res;
        gm_gpu_times tm;
        gm_status st;
        cr_assert_eq(gm_gpu_sort_text(&job, &res, &tm, &st), GM_ETEXT, "text %d", i);
        cr_assert_eq(b.calls, 0, "nothing handed out before declining");
        free(b.p);
    }
    const char *text = "5\n-9223372036854775808\n0\n-3\n9223372036854775807\n10";
    const char *want = "-9223372036854775808\n-3\n0\n5\n10\n9223372036854775807\n";
    struct sink_buf b = { malloc(128), 0, 128, 0 };
    gm_text_job job = { text, strlen(text), '\n', 0, 0, GM_KERNEL_AUTO, 1, NULL, NULL, to_buf,
                        &b };
    gm_text_result res;
    gm_gpu_times tm;
    gm_status st;
    cr_assert_eq(gm_gpu_sort_text(&job, &res, &tm, &st), GM_OK, "%s", st.msg);
    cr_assert_eq(b.len, strlen(want));
    cr_assert(memcmp(b.p, want, b.len) == 0);
    free(b.p);
}
