/*
 * testing_stub.c - testing.h for a build without nvcc: no tiles; of the choices,
 * only the driver's presence, which the stub engine (gpu_stub.c) reports; whether
 * it was asked to start; the pairs' sort and merge fail as the stub engine does.
 */
#include "testing.h"

extern int gm_gpu_stub_driver;

void gm_gpu_force(const gm_gpu_choices *c)
{
    gm_gpu_stub_driver = c ? c->driver_loaded : 0;
}

int64_t gm_gpu_merge_tile(gm_kernel kernel, gm_width width)
{
    (void)kernel, (void)width;
    return 0;
}

int64_t gm_gpu_sort_tile(gm_width width)
{
    (void)width;
    return 0;
}

extern int gm_gpu_stub_touched;

int gm_gpu_test_cuda_touched(void)
{
    return gm_gpu_stub_touched;
}

int gm_gpu_test_parse(const char *text, size_t len, char eol, int64_t *keys, int64_t cap,
                      int64_t *nkeys, gm_width *width, int64_t *bad_line, int *bad_range,
                      gm_status *st)
{
    (void)text, (void)len, (void)eol, (void)keys, (void)cap, (void)nkeys, (void)width;
    (void)bad_line, (void)bad_range;
    return gm_fail(st, GM_ENODEV, "no usable CUDA device: built without CUDA");
}

int gm_gpu_test_format(const gm_keys *keys, char eol, char *out, size_t cap, size_t *len,
                       gm_status *st)
{
    (void)keys, (void)eol, (void)out, (void)cap, (void)len;
    return gm_fail(st, GM_ENODEV, "no usable CUDA device: built without CUDA");
}

int gm_gpu_test_sort_pairs(gm_pair_key type, void *keys, uint32_t *vals, int64_t n, int reverse,
                           gm_kernel kernel, gm_status *st)
{
    (void)type, (void)keys, (void)vals, (void)n, (void)reverse, (void)kernel;
    return gm_fail(st, GM_ENODEV, "no usable CUDA device: built without CUDA");
}

int gm_gpu_test_merge_pairs(gm_pair_key type, void *keys, uint32_t *vals, int64_t m, int64_t n,
                            int reverse, gm_kernel kernel, gm_status *st)
{
    (void)type, (void)keys, (void)vals, (void)m, (void)n, (void)reverse, (void)kernel;
    return gm_fail(st, GM_ENODEV, "no usable CUDA device: built without CUDA");
}

int gm_gpu_test_records_host(const struct gm_gpu_rec_job *job, gm_status *st)
{
    (void)job;
    return gm_fail(st, GM_ENODEV, "no usable CUDA device: built without CUDA");
}
