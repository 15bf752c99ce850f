/*
 * cpumerge.c - the CPU engine's merge (see cpu.h): the basic merge kernel of PMPP
 * chapter 12 on threads. The output is cut into equal parts; co-rank
 * (core/keys/corank.h) gives each part's starting point in both inputs and the part is
 * merged sequentially, so no thread waits for another. More than two runs are
 * merged as a tree of two-way merges of neighbouring runs (ceil(log2 k) passes),
 * which keeps ties in input order.
 */
#include "sort/cpu.h"

#include <stdlib.h>
#include <string.h>

#include "keys/corank.h"
#include "base/util.h"

/* One part of one two-way merge: output positions [k0, k1) of merging a and b. */
struct merge_task {
    const char *a, *b;  /* the two sorted inputs; set by add_merge_tasks */
    int64_t m, n;       /* their lengths in keys; set by add_merge_tasks */
    char *c;            /* the whole merge's output (m + n keys); set by add_merge_tasks */
    int64_t k0, k1;     /* this part's output range, an equal cut; set by add_merge_tasks */
};

/* What merge_part reads: built by gm_cpu_merge2 and each pass of gm_cpu_merge_runs. */
struct merge_job {
    gm_width width;             /* key width, picks the i32 or i64 kernel */
    int64_t mask;               /* -1 for a descending merge, else 0: XORed into compares */
    struct merge_task *tasks;   /* the parts, one per parallel_for index */
};

static void merge_part(void *ctx, int index)
{
    struct merge_job *job = ctx;
    const struct merge_task *t = &job->tasks[index];
    if (job->width == GM_I32) {
        const int32_t *a = (const int32_t *)t->a, *b = (const int32_t *)t->b;
        int32_t mask = (int32_t)job->mask;
        int64_t i = gm_corank_i32(t->k0, a, t->m, b, t->n, mask);
        gm_merge_seq_i32(a, t->m, b, t->n, i, t->k0 - i, (int32_t *)t->c + t->k0,
                         t->k1 - t->k0, mask);
    } else {
        const int64_t *a = (const int64_t *)t->a, *b = (const int64_t *)t->b;
        int64_t i = gm_corank_i64(t->k0, a, t->m, b, t->n, job->mask);
        gm_merge_seq_i64(a, t->m, b, t->n, i, t->k0 - i, (int64_t *)t->c + t->k0,
                         t->k1 - t->k0, job->mask);
    }
}

/* Number of parts to cut a merge of len keys into, for nthreads threads. */
static int64_t parts_for(int64_t len, int64_t total, int nthreads)
{
    int64_t part = total / ((int64_t)nthreads * 4);
    if (part < GM_CPU_MIN_KEYS)
        part = GM_CPU_MIN_KEYS;
    int64_t parts = (len + part - 1) / part;
    return parts > 0 ? parts : 1;
}

/* Appends the parts of merging a (m) and b (n) into c to tasks, returns the count. */
static int64_t add_merge_tasks(struct merge_task *tasks, const char *a, int64_t m,
                               const char *b, int64_t n, char *c, int64_t parts)
{
    int64_t len = m + n;
    for (int64_t p = 0; p < parts; p++) {
        struct merge_task *t = &tasks[p];
        t->a = a;
        t->b = b;
        t->m = m;
        t->n = n;
        t->c = c;
        t->k0 = len * p / parts;
        t->k1 = len * (p + 1) / parts;
    }
    return parts;
}

void gm_cpu_merge2(gm_width width, const void *a, int64_t m, const void *b, int64_t n,
                   void *c, int reverse, int nthreads)
{
    int64_t parts = parts_for(m + n, m + n, nthreads);
    struct merge_task small[64];
    struct merge_task *tasks = parts <= 64 ? small : malloc((size_t)parts * sizeof *tasks);
    if (!tasks) { /* no memory for the task list: merge on this thread */
        tasks = small;
        parts = 1;
    }
    add_merge_tasks(tasks, a, m, b, n, c, parts);
    struct merge_job job = { width, reverse ? -1 : 0, tasks };
    gm_parallel_for(nthreads, (int)parts, merge_part, &job);
    if (tasks != small)
        free(tasks);
}

void gm_cpu_merge_runs(gm_keys *keys, void **scratch, const int64_t *offsets,
                       int nruns, int reverse, int nthreads)
{
    if (nruns <= 1)
        return;
    size_t w = (size_t)keys->width;
    int64_t *bounds = malloc((size_t)(nruns + 1) * sizeof *bounds);
    /* Upper bound on tasks in one pass: every pair's parts, plus one per pair. */
    int64_t max_tasks = parts_for(keys->n, keys->n, nthreads) + nruns;
    struct merge_task *tasks = malloc((size_t)max_tasks * sizeof *tasks);
    if (!bounds || !tasks) {
        /* Without room for the bookkeeping, merge one pair at a time. */
        free(bounds);
        free(tasks);
        for (int r = 1; r < nruns; r++) {
            gm_cpu_merge2(keys->width, keys->data, offsets[r],
                          (char *)keys->data + (size_t)offsets[r] * w,
                          offsets[r + 1] - offsets[r], *scratch, reverse, nthreads);
            memcpy(keys->data, *scratch, (size_t)offsets[r + 1] * w);
        }
        return;
    }
    memcpy(bounds, offsets, (size_t)(nruns + 1) * sizeof *bounds);
    while (nruns > 1) {
        char *src = keys->data, *dst = *scratch;
        int64_t ntasks = 0;
        int out = 0;
        for (int r = 0; r < nruns; r += 2, out++) {
            int64_t lo = bounds[r], mid = bounds[r + 1];
            int64_t hi = r + 1 < nruns ? bounds[r + 2] : mid; /* lone last run: b empty */
            int64_t parts = parts_for(hi - lo, keys->n, nthreads);
            ntasks += add_merge_tasks(tasks + ntasks, src + (size_t)lo * w, mid - lo,
                                      src + (size_t)mid * w, hi - mid,
                                      dst + (size_t)lo * w, parts);
            bounds[out] = lo;
        }
        bounds[out] = keys->n;
        nruns = out;
        struct merge_job job = { keys->width, reverse ? -1 : 0, tasks };
        gm_parallel_for(nthreads, (int)ntasks, merge_part, &job);
        *scratch = src;
        keys->data = dst;
    }
    free(bounds);
    free(tasks);
}
