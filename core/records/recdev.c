/*
 * recdev.c - the records sort with the text kept on the device (recdev.h): where
 * every input is a regular file, their bytes go by the parallel pread (pread.h)
 * straight into the GPU's pinned staging ring, an end of line added where a file
 * lacks its last one, and gm_gpu_sort_lines (cuda/gpu.h) sorts them in device
 * memory and hands back the sorted lines, which go to the output (the bytes an
 * input hands over already read, from the integer path, go first); the runs of
 * ties the device cannot order come here and are ordered by the CPU's own tie
 * routine (recgpu.c; one such sort is recdevsort.c's). The host then holds no copy of the text, so neither the
 * chunks' reading into fresh memory nor temporary runs are paid: the device's
 * memory, not -S, bounds the input (a larger one is sorted in chunks as before).
 * The preads leave the inputs' offsets alone, so a declined sort reads them again.
 */
#define _GNU_SOURCE
#include "records/recdev.h"

#include <stdlib.h>
#include <string.h>

#include "device/gpu.h"
#include "base/progress.h"
#include "records/recdevsort.h"
#include "records/recrange.h"
#include "records/recspan.h"
#include "base/util.h"
#include "plan/report.h"

/* The spans' text (bytes) sorted whole on the device; *written: the bytes handed
 * to the output. */
static int sort_whole(struct rec_run *r, const gm_span *spans, int nspans, uint64_t bytes,
                      uint64_t hint, gm_pread_span *ps, uint64_t *written, gm_status *st)
{
    gm_span_feed f;
    gm_span_feed_start(&f, r, spans, nspans, bytes, ps, 1);
    /* the output's pages are reserved and faulted in while the device works
     * (not for -u, whose output may be a fraction) */
    if (!r->ks->unique && r->out->w)
        gm_writer_ahead(r->out->w, bytes, r->nthreads / 4, st);
    gm_gpu_lines_result res;
    int rc = gm_recdev_sort(r, bytes, hint, gm_span_read, &f, &res, written, st);
    if (!rc)
        gm_report_fact(r->cfg, "device",
               "%llu lines (%llu bytes) sorted in device memory, %llu tied lines "
               "ordered on the CPU; %.3f s waited for CUDA and the device's memory "
               "before the first read",
               (unsigned long long)res.lines, (unsigned long long)bytes,
               (unsigned long long)res.tied, res.setup);
    return rc;
}

int gm_records_resident(struct rec_run *r, gm_status *st)
{
    gm_span *spans = calloc((size_t)r->nnames + 1, sizeof *spans);
    gm_pread_span *ps = calloc((size_t)r->nnames + 1, sizeof *ps);
    int nspans = 0;
    uint64_t bytes = 0, written = 0;
    int rc = spans && ps ? GM_OK : gm_fail(st, GM_ENOMEM, "out of memory sorting");
    if (!rc && r->out->have_last) /* -u after lines written before (a hand-over) */
        rc = gm_fail(st, GM_ETEXT, "a line kept before");
    if (!rc)
        rc = gm_spans_make(r, spans, &nspans, &bytes, st);
    if (!rc && bytes == 0)
        rc = gm_fail(st, GM_ETEXT, "no bytes to sort");
    if (!rc) {
        /* a text plainly too large for the device whole goes by ranges of keys
         * (four fifths of the lines hinted, for a sample that overcounts them) */
        uint64_t hint = gm_spans_lines_hint(spans, nspans, r->ks->eol, bytes);
        rc = hint ? gm_gpu_lines_fit(r->ks, bytes, hint / 5 * 4, st) : GM_OK;
        /* ranges only where the chunk sort would write runs (each range reads
         * the inputs again; in memory the CPU's chunks are faster) */
        if (rc == GM_ETEXT && gm_records_chunk_memory(r->ks, bytes, hint) <= r->budget)
            rc = gm_fail(st, GM_ETEXT, "%llu bytes too large for the device, small enough for "
                         "the host's memory", (unsigned long long)bytes);
        else if (rc == GM_ETEXT)
            rc = gm_records_ranges(r, spans, nspans, bytes, ps, &written, st);
        else if (!rc)
            rc = sort_whole(r, spans, nspans, bytes, hint, ps, &written, st);
    }
    if (rc == GM_ETEXT || (rc && written == 0 && r->cfg->device == GM_DEVICE_AUTO &&
                           (rc == GM_ENODEV || rc == GM_EDEVMEM || rc == GM_ECUDA))) {
        if (r->cfg->verbose && bytes > 0)
            gm_report_fact(r->cfg, "device", "not sorted in device memory (%s)", st->msg);
        if (rc != GM_ETEXT)
            r->gpu = 0; /* auto: the GPU failed; the CPU sorts */
        rc = GM_ETEXT;
    }
    if (!rc) {
        for (int i = 0; i < r->nnames; i++)
            gm_records_src_close(r, i);
        gm_progress_read_done();
    }
    free(spans);
    free(ps);
    return rc;
}
