/*
 * api.c - the library's calls on memory (include/gpumerge.h): the arguments
 * checked, then the engines the program runs. Host memory goes through
 * core/device/engine.c (the device choice, the cost model of GM_DEVICE_AUTO and its
 * fallback to the CPU; cpumerge.c's co-rank merges, cpusort.c's radix sort,
 * cuda/'s gm_gpu_merge and gm_gpu_sort); device memory goes to cuda/'s
 * gm_gpu_sort_device and gm_gpu_merge_device.
 *
 * A host merge gathers its arrays into the output (the engines merge runs of one
 * array) and checks their order on the way, in chunks on all threads; two arrays
 * on the CPU are merged straight from where they are. unique keeps the first of
 * each run of equal keys after the engine, unless the GPU sort did it already.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "device/gpu.h"
#include "device/engine.h"
#include "base/pages.h"
#include "base/util.h"

/* Keys a task of the merge's gather-and-check pass takes. */
enum { CHECK_CHUNK = 1 << 18 };

static const gm_options no_options;

const char *gm_version(void)
{
    return GM_VERSION;
}

int gm_device_probe(gm_status *st)
{
    return gm_gpu_probe(NULL, st);
}

/* The arguments every call has. */
static int check_common(const char *fn, gm_width width, const gm_options *opt, size_t *n_out,
                        gm_status *st)
{
    if (width != GM_I32 && width != GM_I64)
        return gm_fail(st, GM_EUSAGE, "%s: width %d is neither GM_I32 (4) nor GM_I64 (8)", fn,
                       (int)width);
    if (opt->device != GM_DEVICE_AUTO && opt->device != GM_DEVICE_CPU &&
        opt->device != GM_DEVICE_GPU)
        return gm_fail(st, GM_EUSAGE,
                       "%s: device %d is not GM_DEVICE_AUTO, GM_DEVICE_CPU or GM_DEVICE_GPU", fn,
                       (int)opt->device);
    if (opt->threads < 0)
        return gm_fail(st, GM_EUSAGE, "%s: threads %d is negative", fn, opt->threads);
    for (size_t i = 0; i < sizeof opt->reserved / sizeof opt->reserved[0]; i++)
        if (opt->reserved[i])
            return gm_fail(st, GM_EUSAGE, "%s: reserved option %zu is not zero", fn, i);
    if (opt->unique && !n_out)
        return gm_fail(st, GM_EUSAGE, "%s: unique needs n_out for the count of keys kept", fn);
    return GM_OK;
}

/* The arguments of a merge; *total gets the keys of all arrays. */
static int check_merge(const char *fn, const void *const *arrays, const size_t *lens, size_t k,
                       gm_width width, const void *out, size_t *total, gm_status *st)
{
    if (k > 0 && (!arrays || !lens))
        return gm_fail(st, GM_EUSAGE, "%s: %s is NULL with k = %zu", fn,
                       arrays ? "lens" : "arrays", k);
    if (k >= INT_MAX)
        return gm_fail(st, GM_EUSAGE, "%s: k = %zu arrays are too many", fn, k);
    size_t n = 0, limit = (size_t)INT64_MAX / (size_t)width;
    for (size_t i = 0; i < k; i++) {
        if (lens[i] > 0 && !arrays[i])
            return gm_fail(st, GM_EUSAGE, "%s: arrays[%zu] is NULL with %zu keys", fn, i,
                           lens[i]);
        if (lens[i] > limit - n)
            return gm_fail(st, GM_EUSAGE, "%s: the arrays hold too many keys", fn);
        n += lens[i];
    }
    if (n > 0 && !out)
        return gm_fail(st, GM_EUSAGE, "%s: out is NULL with %zu keys to write", fn, n);
    uintptr_t o = (uintptr_t)out, oend = o + n * (size_t)width;
    for (size_t i = 0; i < k; i++) {
        uintptr_t a = (uintptr_t)arrays[i], aend = a + lens[i] * (size_t)width;
        if (lens[i] > 0 && a < oend && o < aend)
            return gm_fail(st, GM_EUSAGE, "%s: out overlaps arrays[%zu]", fn, i);
    }
    *total = n;
    return GM_OK;
}

/* The engine's configuration for opt. */
static void engine_config(gm_config *cfg, const gm_options *opt)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->device = opt->device;
    cfg->reverse = opt->descending != 0;
    cfg->unique = opt->unique != 0;
    cfg->threads = opt->threads;
    cfg->kernel = GM_KERNEL_AUTO;
}

static int threads_of(const gm_options *opt)
{
    return opt->threads > 0 ? opt->threads : gm_cpu_count();
}

/* Keeps the first of each run of equal keys of the n keys at keys; returns how many
 * are kept. */
static size_t keep_unique(void *keys, size_t n, gm_width width)
{
    size_t m = n > 0;
#define GM_KEEP_UNIQUE(T)                                                                \
    do {                                                                                 \
        T *k = keys;                                                                     \
        for (size_t i = 1; i < n; i++)                                                   \
            if (k[i] != k[m - 1])                                                        \
                k[m++] = k[i];                                                           \
    } while (0)
    if (width == GM_I32)
        GM_KEEP_UNIQUE(int32_t);
    else
        GM_KEEP_UNIQUE(int64_t);
#undef GM_KEEP_UNIQUE
    return m;
}

/* After the engine ran on keys (*scratch its partner, perhaps swapped with it):
 * the result copied home (on nthreads threads) when it ended in the scratch, the
 * other buffer freed. */
static void settle(gm_keys *keys, void *home, void *scratch, int nthreads)
{
    if (keys->data != home) {
        gm_pages_copy(home, keys->data, (size_t)keys->n * (size_t)keys->width, nthreads);
        free(keys->data);
        keys->data = home;
    } else {
        free(scratch);
    }
}

int gm_sort(void *keys, size_t n, gm_width width, const gm_options *opt, size_t *n_out,
            gm_status *st)
{
    opt = opt ? opt : &no_options;
    int rc = check_common("gm_sort", width, opt, n_out, st);
    if (rc)
        return rc;
    if (n > 0 && !keys)
        return gm_fail(st, GM_EUSAGE, "gm_sort: keys is NULL with n = %zu", n);
    if (n > (size_t)INT64_MAX / (size_t)width)
        return gm_fail(st, GM_EUSAGE, "gm_sort: n = %zu keys are too many", n);
    gm_config cfg;
    engine_config(&cfg, opt);
    gm_keys k = { keys, (int64_t)n, width };
    void *scratch = gm_alloc(n * (size_t)width, st);
    if (!scratch)
        return GM_ENOMEM;
    gm_engine_report rep;
    int nthreads = threads_of(opt);
    rc = gm_engine_run(&cfg, GM_OP_SORT, &k, &scratch, NULL, 0, nthreads, &rep, st);
    settle(&k, keys, scratch, nthreads);
    if (rc)
        return rc;
    size_t kept = (size_t)k.n;
    if (opt->unique && !rep.deduplicated)
        kept = keep_unique(keys, kept, width);
    if (n_out)
        *n_out = kept;
    return GM_OK;
}

/* ------------------------------------------------------------------ merge */

/* The merge's gather-and-check pass: task t takes CHECK_CHUNK keys of one array,
 * copies them to their place in out (unless out is NULL) and records the index of
 * the first key out of order in them (checked against the key before the chunk
 * too), or -1. */
typedef struct gather_job {
    const void *const *arrays; /* the caller's sorted key arrays (gather_checked's) */
    const size_t *lens;       /* keys in each array (gather_checked's) */
    const size_t *first_task; /* array i's first task; first_task[k] = all tasks */
    const size_t *offset;     /* array i's place in out */
    size_t k;                 /* arrays to check and gather */
    gm_width width;           /* the keys' width, the same for every array */
    int descending;           /* the order expected: gather_checked's desc */
    char *out;                /* where the arrays go one after another; NULL: check only */
    int64_t *bad; /* per task: gather_task's first disorder in its chunk, or -1 */
} gather_job;

/* The index of the first key in [lo, hi) of keys out of order with the one before
 * it, or -1. */
static int64_t first_disorder(const void *keys, size_t lo, size_t hi, gm_width width, int desc)
{
#define GM_SCAN(T)                                                                       \
    do {                                                                                 \
        const T *a = keys;                                                               \
        for (size_t j = lo > 0 ? lo : 1; j < hi; j++)                                    \
            if (desc ? a[j - 1] < a[j] : a[j - 1] > a[j])                                \
                return (int64_t)j;                                                       \
    } while (0)
    if (width == GM_I32)
        GM_SCAN(int32_t);
    else
        GM_SCAN(int64_t);
#undef GM_SCAN
    return -1;
}

static void gather_task(void *ctx, int task)
{
    gather_job *g = ctx;
    size_t t = (size_t)task, lo = 0, hi = g->k;
    while (hi - lo > 1) { /* the array holding task t: the last i with first_task[i] <= t */
        size_t mid = lo + (hi - lo) / 2;
        if (g->first_task[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    size_t begin = (t - g->first_task[lo]) * CHECK_CHUNK, end = begin + CHECK_CHUNK;
    end = end < g->lens[lo] ? end : g->lens[lo];
    size_t w = (size_t)g->width;
    if (g->out)
        memcpy(g->out + (g->offset[lo] + begin) * w, (const char *)g->arrays[lo] + begin * w,
               (end - begin) * w);
    g->bad[t] = first_disorder(g->arrays[lo], begin, end, g->width, g->descending);
}

/* Checks every array's order and, when out is not NULL, copies them one after the
 * other into out, on nthreads threads. Returns GM_OK, GM_EINPUT naming the first
 * array out of order, or GM_ENOMEM. */
static int gather_checked(const void *const *arrays, const size_t *lens, size_t k,
                          gm_width width, int desc, void *out, int nthreads, gm_status *st)
{
    size_t *first_task = gm_alloc((2 * k + 1) * sizeof *first_task, st);
    if (!first_task)
        return GM_ENOMEM;
    size_t *offset = first_task + k + 1, tasks = 0, at = 0;
    for (size_t i = 0; i < k; i++) {
        first_task[i] = tasks;
        offset[i] = at;
        tasks += (lens[i] + CHECK_CHUNK - 1) / CHECK_CHUNK;
        at += lens[i];
    }
    first_task[k] = tasks;
    int rc = GM_OK;
    int64_t *bad = tasks > 0 ? gm_alloc(tasks * sizeof *bad, st) : NULL;
    if (tasks > 0 && !bad)
        rc = GM_ENOMEM;
    if (tasks > 0 && bad) {
        gather_job g = { arrays, lens, first_task, offset, k, width, desc, out, bad };
        gm_parallel_for(nthreads, (int)(tasks < INT_MAX ? tasks : INT_MAX), gather_task, &g);
        for (size_t i = 0, t = 0; i < k && rc == GM_OK; i++)
            for (; t < first_task[i + 1]; t++)
                if (bad[t] >= 0) {
                    rc = gm_fail(st, GM_EINPUT,
                                 "gm_merge: arrays[%zu] is not in %s order: key %lld at index "
                                 "%lld follows %lld",
                                 i, desc ? "descending" : "ascending",
                                 width == GM_I32 ? (long long)((const int32_t *)arrays[i])[bad[t]]
                                                 : (long long)((const int64_t *)arrays[i])[bad[t]],
                                 (long long)bad[t],
                                 width == GM_I32
                                     ? (long long)((const int32_t *)arrays[i])[bad[t] - 1]
                                     : (long long)((const int64_t *)arrays[i])[bad[t] - 1]);
                    break;
                }
    }
    free(bad);
    free(first_task);
    return rc;
}

/* Two arrays on the CPU, straight from where they are (gm_engine_merge2). */
static int merge_two(const gm_config *cfg, const void *const *arrays, const size_t *lens,
                     size_t k, gm_width width, void *out, int nthreads, gm_status *st)
{
    int rc = gather_checked(arrays, lens, k, width, cfg->reverse, NULL, nthreads, st);
    if (rc)
        return rc;
    const void *two[2];
    size_t n[2], m = 0;
    for (size_t i = 0; i < k; i++)
        if (lens[i] > 0)
            two[m] = arrays[i], n[m++] = lens[i];
    gm_engine_report rep;
    gm_engine_merge2(cfg, width, two[0], (int64_t)n[0], two[1], (int64_t)n[1], out, nthreads,
                     &rep);
    return GM_OK;
}

/* The engine's merge of the nruns non-empty arrays of lens gathered in out (n keys). */
static int merge_gathered(const gm_config *cfg, const size_t *lens, size_t k, gm_width width,
                          void *out, size_t n, int nruns, int nthreads, gm_status *st)
{
    int64_t *offsets = gm_alloc((size_t)(nruns + 1) * sizeof *offsets, st);
    if (!offsets)
        return GM_ENOMEM;
    void *scratch = gm_alloc(n * (size_t)width, st);
    if (!scratch) {
        free(offsets);
        return GM_ENOMEM;
    }
    offsets[0] = 0;
    for (size_t i = 0, r = 0; i < k; i++)
        if (lens[i] > 0) {
            offsets[r + 1] = offsets[r] + (int64_t)lens[i];
            r++;
        }
    gm_keys keys = { out, (int64_t)n, width };
    gm_engine_report rep;
    int rc = gm_engine_run(cfg, GM_OP_MERGE, &keys, &scratch, offsets, nruns, nthreads, &rep, st);
    settle(&keys, out, scratch, nthreads);
    free(offsets);
    return rc;
}

int gm_merge(const void *const *arrays, const size_t *lens, size_t k, gm_width width, void *out,
             const gm_options *opt, size_t *n_out, gm_status *st)
{
    opt = opt ? opt : &no_options;
    size_t n;
    int rc = check_common("gm_merge", width, opt, n_out, st);
    if (rc || (rc = check_merge("gm_merge", arrays, lens, k, width, out, &n, st)))
        return rc;
    gm_config cfg;
    engine_config(&cfg, opt);
    int nthreads = threads_of(opt), nruns = 0;
    for (size_t i = 0; i < k; i++)
        nruns += lens[i] > 0;

    if (nruns == 2 && opt->device != GM_DEVICE_GPU) {
        rc = merge_two(&cfg, arrays, lens, k, width, out, nthreads, st);
    } else {
        rc = gather_checked(arrays, lens, k, width, cfg.reverse, out, nthreads, st);
        if (rc == GM_OK && (nruns > 1 || opt->device == GM_DEVICE_GPU))
            rc = merge_gathered(&cfg, lens, k, width, out, n, nruns, nthreads, st);
    }
    if (rc)
        return rc;
    if (n_out)
        *n_out = opt->unique ? keep_unique(out, n, width) : n;
    return GM_OK;
}

/* ------------------------------------------------------------------ device memory */

/* What the device calls refuse beyond the common checks. */
static int check_device(const char *fn, const gm_options *opt, gm_status *st)
{
    if (opt->device == GM_DEVICE_CPU)
        return gm_fail(st, GM_EUSAGE, "%s: device pointers need the GPU engine, not GM_DEVICE_CPU",
                       fn);
    return GM_OK;
}

int gm_sort_device(void *keys, size_t n, gm_width width, const gm_options *opt, size_t *n_out,
                   gm_status *st)
{
    opt = opt ? opt : &no_options;
    int rc = check_common("gm_sort_device", width, opt, n_out, st);
    if (rc || (rc = check_device("gm_sort_device", opt, st)))
        return rc;
    if (n > 0 && !keys)
        return gm_fail(st, GM_EUSAGE, "gm_sort_device: keys is NULL with n = %zu", n);
    if (n > (size_t)INT64_MAX / (size_t)width)
        return gm_fail(st, GM_EUSAGE, "gm_sort_device: n = %zu keys are too many", n);
    int64_t kept = 0;
    rc = gm_gpu_sort_device(keys, (int64_t)n, width, opt->descending != 0, opt->unique != 0,
                            &kept, opt->stream, st);
    if (rc == GM_OK && n_out)
        *n_out = (size_t)kept;
    return rc;
}

int gm_merge_device(const void *const *arrays, const size_t *lens, size_t k, gm_width width,
                    void *out, const gm_options *opt, size_t *n_out, gm_status *st)
{
    opt = opt ? opt : &no_options;
    size_t n;
    int rc = check_common("gm_merge_device", width, opt, n_out, st);
    if (rc || (rc = check_device("gm_merge_device", opt, st)) ||
        (rc = check_merge("gm_merge_device", arrays, lens, k, width, out, &n, st)))
        return rc;
    int64_t *len64 = gm_alloc((k + 1) * sizeof *len64, st), kept = 0;
    if (!len64)
        return GM_ENOMEM;
    for (size_t i = 0; i < k; i++)
        len64[i] = (int64_t)lens[i];
    rc = gm_gpu_merge_device(arrays, len64, (int)k, width, out, opt->descending != 0,
                             opt->unique != 0, &kept, opt->stream, st);
    free(len64);
    if (rc == GM_OK && n_out)
        *n_out = (size_t)kept;
    return rc;
}
