/*
 * recdev.h - the records sort with the text kept on the device (recdev.c): the
 * inputs read straight into device memory, sorted and gathered there, the sorted
 * lines written as they come back; a text larger than the device holds goes range
 * by range of its keys (recrange.c); each sort on the device is recdevsort.c's.
 */
#ifndef GM_RECDEV_H
#define GM_RECDEV_H

#include "records/records_impl.h"

/* Sorts every input of r into r->out on the GPU, the text in device memory.
 * Returns GM_OK; GM_ETEXT before any output where it does not (an input that is
 * not an open regular file, a text the device declines, and under auto a GPU that
 * fails: r->gpu is then cleared), the inputs left to be read again; or the error
 * that ended it (GM_EIO, GM_EPIPE, GM_ENOMEM, the device's under --device=gpu). */
int gm_records_resident(struct rec_run *r, gm_status *st);

#endif
