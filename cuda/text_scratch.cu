/*
 * text_scratch.cu - what the text path's steps share (text.cuh), below the parse
 * (text_parse.cu), the format (text_format.cu), the driver (text.cu) and the
 * records' kernels: scratch from the job's device memory, the exclusive scan of
 * per-tile counts, and the test that a job's memory fits the device.
 */
#include <cub/device/device_scan.cuh>
#include <stdio.h>

#include "kernels.cuh"
#include "text.cuh"

int text_cub_temp(text_job &j, size_t bytes, void **p, gm_status *st)
{
    unsigned char *t = nullptr;
    int rc = j.mem.alloc(&t, bytes ? bytes : 1, st);
    *p = t;
    return rc;
}

int text_scan_tiles(text_job &j, u64 *counts, u64 *pre, u64 ntiles, gm_status *st)
{
    GM_CUDA(cudaMemsetAsync(counts + ntiles, 0, sizeof *counts, j.s), st);
    size_t bytes = 0;
    GM_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, bytes, counts, pre, (int64_t)ntiles + 1, j.s),
            st);
    void *t = nullptr;
    int rc = text_cub_temp(j, bytes, &t, st);
    if (rc)
        return rc;
    GM_CUDA(cub::DeviceScan::ExclusiveSum(t, bytes, counts, pre, (int64_t)ntiles + 1, j.s), st);
    return GM_OK;
}

int text_fits(size_t need, gm_status *st)
{
    if (check_fits(need, st) == GM_OK)
        return GM_OK;
    char why[sizeof st->msg];
    snprintf(why, sizeof why, "%s", st->msg);
    return gm_fail(st, GM_ETEXT, "text path: %s", why);
}
