/*
 * testing_stub.c - testing.h for a build without nvcc: nothing to force, no tiles;
 * whether the stub engine (gpu_stub.c) was asked to start.
 */
#include "testing.h"

void gm_gpu_force(const gm_gpu_choices *c)
{
    (void)c;
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
