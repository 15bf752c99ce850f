/*
 * recdevsort.c - one sort of a text in device memory (recdevsort.h), whoever hands
 * out the text: the whole inputs (recdev.c) or one range of their keys
 * (recrange.c). gm_gpu_sort_lines (cuda/gpu.h) reads the text into the device,
 * sorts it there and hands back the sorted lines, which go to the run's output;
 * the runs of ties the device cannot order come back here and are ordered by the
 * CPU's own tie routine (recgpu.c).
 */
#include "records/recdevsort.h"

#include "base/progress.h"
#include "device/recgpu.h"
#include "base/util.h"

/* The sink's context: the run, and the text's bytes that --progress counts as
 * sorted when the first sorted piece comes (or the sort returns). */
struct sorting {
    struct rec_run *r;  /* the run whose output takes the pieces (gm_recdev_sort) */
    int64_t unsorted;   /* bytes not yet counted as sorted (gm_recdev_sort, sink) */
};

static int ties(void *ctx, uint64_t *recs, const unsigned char *tied, size_t n, gm_status *st)
{
    const struct rec_run *r = ctx;
    return gm_recgpu_ties(r->ks, (gm_rec *)recs, tied, n, r->nthreads, st);
}

static int sink(void *ctx, const char *text, size_t len, gm_status *st)
{
    struct sorting *s = ctx;
    gm_progress_sorted_once(&s->unsorted);
    return gm_recsink_put_text(s->r->out, text, len, st);
}

static void account(struct rec_run *r, const gm_gpu_lines_result *res, const gm_gpu_times *t,
                    double took)
{
    r->read += res->setup + res->read;
    r->sort += took - res->setup - res->read - res->sink;
    r->write += res->sink;
    r->gpu_device += took;
    r->gpu_h2d += t->h2d;
    r->gpu_kernel += t->kernel;
    r->gpu_d2h += t->d2h;
    r->gpu_ties += res->ties;
    r->gpu_resident = 1;
    r->out->lines += (int64_t)res->written;
}

int gm_recdev_sort(struct rec_run *r, uint64_t bytes, uint64_t hint, gm_read_fn read, void *ctx,
                   gm_gpu_lines_result *res, uint64_t *written, gm_status *st)
{
    struct sorting sorting = { r, (int64_t)bytes };
    gm_gpu_lines_job job = {
        .ks = r->ks, .bytes = bytes, .lines_hint = hint, .read = read, .read_ctx = ctx,
        .ties_max = r->budget / 2, .ties = ties, .ties_ctx = r, .sink = sink,
        .sink_ctx = &sorting,
    };
    gm_gpu_times t;
    double a = gm_now();
    int rc = gm_gpu_sort_lines(&job, res, &t, st);
    if (rc == GM_OK)
        gm_progress_sorted_once(&sorting.unsorted);
    if (rc == GM_OK || res->bytes > 0 || rc == GM_EIO || rc == GM_EPIPE)
        account(r, res, &t, gm_now() - a);
    *written += res->bytes;
    return rc;
}
