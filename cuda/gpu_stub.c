/*
 * gpu_stub.c - the GPU engine of a build without nvcc: every entry point of gpu.h
 * reports that CUDA is not built in, so --device=auto falls back to the CPU and
 * --device=gpu fails with a clear message. Built with GM_FAKE_LINES, it leaves
 * the probe and the sort in device memory to tests/fakegpu.c's stand-in device.
 */
#include <stdio.h>
#include <string.h>

#include "gpu.h"

/* Whether a start-up was asked for (the probe or the warm start), for
 * testing_stub.c: the tests check that --device=auto leaves CUDA alone on small
 * inputs in this build too. */
int gm_gpu_stub_touched;

#ifndef GM_FAKE_LINES /* tests/fakegpu.c stands in for the probe and the two below */
int gm_gpu_probe(gm_gpu_info *info, gm_status *st)
{
    gm_gpu_stub_touched = 1;
    if (info)
        memset(info, 0, sizeof *info); /* no CUDA error behind the words */
    return gm_fail(st, GM_ENODEV, "no usable CUDA device: built without CUDA");
}
#endif

#ifndef GM_FAKE_LINES
int gm_gpu_lines_fit(const gm_keyspec *ks, uint64_t bytes, uint64_t lines, gm_status *st)
{
    (void)ks;
    (void)bytes;
    (void)lines;
    return gm_fail(st, GM_ENODEV, "no usable CUDA device: built without CUDA");
}
#endif

void gm_gpu_select(int index)
{
    (void)index;
}

int gm_gpu_built(void)
{
    return 0;
}

int gm_gpu_merge(gm_keys *keys, const int64_t *offsets, int nruns, int reverse,
                 gm_kernel kernel, gm_gpu_times *times, gm_status *st)
{
    (void)keys, (void)offsets, (void)nruns, (void)reverse, (void)kernel, (void)times;
    return gm_fail(st, GM_ENODEV, "no usable CUDA device: built without CUDA");
}

int gm_gpu_sort(gm_keys *keys, int reverse, int unique, gm_kernel kernel,
                gm_gpu_times *times, gm_status *st)
{
    (void)keys, (void)reverse, (void)unique, (void)kernel, (void)times;
    return gm_fail(st, GM_ENODEV, "no usable CUDA device: built without CUDA");
}

int gm_gpu_sort_device(void *keys, int64_t n, gm_width width, int reverse, int unique,
                       int64_t *n_out, void *stream, gm_status *st)
{
    (void)keys, (void)n, (void)width, (void)reverse, (void)unique, (void)n_out, (void)stream;
    return gm_fail(st, GM_ENODEV, "no usable CUDA device: built without CUDA");
}

int gm_gpu_merge_device(const void *const *arrays, const int64_t *lens, int k, gm_width width,
                        void *out, int reverse, int unique, int64_t *n_out, void *stream,
                        gm_status *st)
{
    (void)arrays, (void)lens, (void)k, (void)width, (void)out, (void)reverse, (void)unique;
    (void)n_out, (void)stream;
    return gm_fail(st, GM_ENODEV, "no usable CUDA device: built without CUDA");
}

void gm_gpu_warm_start(void)
{
    gm_gpu_stub_touched = 1;
}

int gm_gpu_stub_driver; /* set by the tests (testing_stub.c) */

int gm_gpu_driver_loaded(void)
{
    return gm_gpu_stub_driver;
}

#ifndef GM_FAKE_LINES
int gm_gpu_probe_done(void)
{
    return gm_gpu_stub_touched;
}
#endif

double gm_gpu_teardown(void)
{
    return 0;
}

void gm_gpu_teardown_begin(void)
{
}

void gm_trace_push(const char *name)
{
    (void)name;
}

void gm_trace_pop(void)
{
}

int gm_gpu_sort_text(const gm_text_job *job, gm_text_result *res, gm_gpu_times *times,
                     gm_status *st)
{
    (void)job, (void)times;
    memset(res, 0, sizeof *res);
    return gm_fail(st, GM_ENODEV, "no usable CUDA device: built without CUDA");
}

#ifndef GM_FAKE_LINES
int gm_gpu_sort_lines(const gm_gpu_lines_job *job, gm_gpu_lines_result *res,
                      gm_gpu_times *times, gm_status *st)
{
    (void)job;
    memset(res, 0, sizeof *res);
    memset(times, 0, sizeof *times);
    return gm_fail(st, GM_ENODEV, "no usable CUDA device: built without CUDA");
}
#endif

int gm_gpu_sort_records(const gm_gpu_rec_job *job, gm_gpu_times *times, gm_status *st)
{
    (void)job;
    memset(times, 0, sizeof *times);
    return gm_fail(st, GM_ENODEV, "no usable CUDA device: built without CUDA");
}
