/*
 * check.cuh - checked CUDA calls and kernel launches: every failure becomes a
 * gm_status that the caller returns upward ("CUDA error: WHAT (CALL)"), never an
 * exit. Also the launch helper every launcher goes through, with programmatic
 * dependent launch where the device has it, and kernel attributes set once.
 *
 * The pattern is CUB's CubDebug / moderngpu's launch_box reduced to what this
 * engine needs: one macro per kind of call, the status filled in by device.cu.
 */
#ifndef GM_CUDA_CHECK_CUH
#define GM_CUDA_CHECK_CUH

#include <cuda_runtime.h>

#include "../core/base/types.h"

/* Fills st from a CUDA error ("CUDA error: STRING (WHAT)") and returns GM_ECUDA, or
 * GM_EDEVMEM for an allocation that failed for lack of memory. Defined in device.cu. */
int gm_cuda_fail(gm_status *st, cudaError_t err, const char *what);

/* Whether launches asked to be dependent are (device.cu: compute capability 9.0
 * and later, unless a test forced serial launches). */
bool gm_dependent_launches();

/* Evaluates a CUDA call; on failure returns its status from the enclosing function. */
#define GM_CUDA(call, st)                                                       \
    do {                                                                        \
        cudaError_t gm_err_ = (call);                                           \
        if (gm_err_ != cudaSuccess)                                             \
            return gm_cuda_fail((st), gm_err_, #call);                          \
    } while (0)

/*
 * Programmatic dependent launch (sm_90 and later): a kernel launched as dependent
 * may be scheduled while the kernel before it in the stream finishes, so its blocks
 * are in place when that one ends instead of a launch later. Every kernel starts
 * with gm_after_previous(): it waits there until the previous kernel has finished
 * and its writes are visible, then lets the next kernel be scheduled (for a kernel
 * not launched as dependent, both are no-ops). Only a merge's merge kernel is
 * launched as dependent on its partition (pass_desc.dependent); the sort's passes
 * are not, as they ran slower so (bench/RESULTS.md).
 */
__device__ __forceinline__ void gm_after_previous()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaGridDependencySynchronize();
    cudaTriggerProgrammaticLaunchCompletion();
#endif
}

/* Launches kernel<<<grid, block, smem, s>>>(args...), as a dependent launch if
 * `dependent` and the device has them; returns the launch's error. */
template <typename... P, typename... A>
cudaError_t gm_launch(bool dependent, void (*kernel)(P...), dim3 grid, dim3 block, size_t smem,
                      cudaStream_t s, A &&...args)
{
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = s;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = dependent && gm_dependent_launches() ? 1 : 0;
    return cudaLaunchKernelEx(&cfg, kernel, static_cast<A &&>(args)...);
}

/* GM_LAUNCH(what, st, dependent, kernel, grid, block, smem, stream, args...): the
 * launch, and on failure its status from the enclosing function, naming kernel
 * `what`. */
#define GM_LAUNCH(what, st, ...)                                                \
    do {                                                                        \
        cudaError_t gm_err_ = gm_launch(__VA_ARGS__);                           \
        if (gm_err_ == cudaSuccess)                                             \
            gm_err_ = cudaGetLastError();                                       \
        if (gm_err_ != cudaSuccess)                                             \
            return gm_cuda_fail((st), gm_err_, (what));                         \
    } while (0)

/* Sets attribute ATTR of KERNEL to value the first time a launcher asks (kernel
 * attributes last for the process): the carve-out and the shared memory beyond
 * 48 KB that the kernels' launchers need. */
template <auto KERNEL, cudaFuncAttribute ATTR> int set_attribute_once(int value, gm_status *st)
{
    static bool done;
    if (!done) {
        GM_CUDA(cudaFuncSetAttribute(KERNEL, ATTR, value), st);
        done = true;
    }
    return GM_OK;
}

/* All of a multiprocessor's L1 as shared memory for KERNEL: its resident blocks are
 * counted in threads and shared memory, never in L1's use. */
template <auto KERNEL> int prefer_shared_memory(gm_status *st)
{
    return set_attribute_once<KERNEL, cudaFuncAttributePreferredSharedMemoryCarveout>(
        (int)cudaSharedmemCarveoutMaxShared, st);
}

#endif
