/*
 * recdev.h - the records sort with the text kept on the device (recdev.c): the
 * inputs read straight into device memory, sorted and gathered there, the sorted
 * lines written as they come back; a text larger than the device holds goes range
 * by range of its keys (recrange.c).
 */
#ifndef GM_RECDEV_H
#define GM_RECDEV_H

#include "../cuda/gpu.h"
#include "records_impl.h"

/* Sorts every input of r into r->out on the GPU, the text in device memory.
 * Returns GM_OK; GM_ETEXT before any output where it does not (an input that is
 * not an open regular file, a text the device declines, and under auto a GPU that
 * fails: r->gpu is then cleared), the inputs left to be read again; or the error
 * that ended it (GM_EIO, GM_EPIPE, GM_ENOMEM, the device's under --device=gpu). */
int gm_records_resident(struct rec_run *r, gm_status *st);

/* One gm_gpu_sort_lines of r's: a text of bytes (about hint lines) that read hands
 * out, its ties ordered by the CPU's routine within half the budget, its sorted
 * lines to r's output; its stages and counts added to r's, the bytes it wrote to
 * *written. Returns gm_gpu_sort_lines's result (res: its counts). */
int gm_recdev_sort(struct rec_run *r, uint64_t bytes, uint64_t hint, gm_read_fn read, void *ctx,
                   gm_gpu_lines_result *res, uint64_t *written, gm_status *st);

#endif
