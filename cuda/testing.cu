/*
 * testing.cu - testing.h: the setter of the forced choices and the tile sizes the
 * tests probe around. Linked into the test binaries and the benchmark only.
 */
#include <string.h>

#include "device.cuh"
#include "kernels.cuh"
#include "testing.h"

extern "C" void gm_gpu_force(const gm_gpu_choices *c)
{
    if (c)
        gm_forced = *c;
    else
        memset(&gm_forced, 0, sizeof gm_forced);
}

extern "C" int64_t gm_gpu_merge_tile(gm_kernel kernel, gm_width width)
{
    bool i32 = width == GM_I32;
    if (kernel == GM_KERNEL_TILED)
        return i32 ? tiles<int32_t>::TILED_TILE : tiles<int64_t>::TILED_TILE;
    if (kernel == GM_KERNEL_CIRCULAR)
        return i32 ? tiles<int32_t>::CIRC_TILE : tiles<int64_t>::CIRC_TILE;
    return i32 ? tiles<int32_t>::BASIC_TILE : tiles<int64_t>::BASIC_TILE;
}

extern "C" int64_t gm_gpu_sort_tile(gm_width width)
{
    return width == GM_I32 ? tiles<int32_t>::SORT_TILE : tiles<int64_t>::SORT_TILE;
}

extern "C" int gm_gpu_test_cuda_touched(void)
{
    return gm_cuda_touched;
}
