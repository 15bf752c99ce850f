/*
 * trace.cu - the stages' NVTX ranges (gpu.h: gm_trace_push, gm_trace_pop), so that
 * Nsight Systems shows the pipeline on its timeline: read, parse, engine, spill and
 * write on the core's threads, CUDA's start-up on its own, and the copies and
 * kernels of each GPU job. NVTX 3 is header-only (the toolkit's nvtx3/); until a
 * tool injects itself (nsys sets NVTX_INJECTION64_PATH), each call finds no
 * handler and returns at once.
 */
#include <nvtx3/nvToolsExt.h>

#include "gpu.h"

extern "C" void gm_trace_push(const char *name)
{
    nvtxRangePushA(name);
}

extern "C" void gm_trace_pop(void)
{
    nvtxRangePop();
}
