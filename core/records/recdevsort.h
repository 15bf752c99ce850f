/*
 * recdevsort.h - one sort of a text in device memory (recdevsort.c), below the
 * sort of whole inputs (recdev.c) and of ranges of keys (recrange.c).
 */
#ifndef GM_RECDEVSORT_H
#define GM_RECDEVSORT_H

#include "device/gpu.h"
#include "records/records_impl.h"

/* One gm_gpu_sort_lines of r's: a text of bytes (about hint lines) that read hands
 * out, its ties ordered by the CPU's routine within half the budget, its sorted
 * lines to r's output; its stages and counts added to r's, the bytes it wrote to
 * *written. Returns gm_gpu_sort_lines's result (res: its counts). */
int gm_recdev_sort(struct rec_run *r, uint64_t bytes, uint64_t hint, gm_read_fn read, void *ctx,
                   gm_gpu_lines_result *res, uint64_t *written, gm_status *st);

#endif
