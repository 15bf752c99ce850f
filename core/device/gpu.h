/*
 * gpu.h - the door to the GPU engine: cuda/gpu.h's C interface (its calls, jobs
 * and times) for the core. No file of the core outside device/ includes a header
 * of cuda/; the rooms above device/ that ask the GPU something directly (the plan's
 * descriptors for CUDA's start-up, the text path, the records' chunks, the
 * streams' trace ranges, gm.c and api.c) come through here, so that what the core
 * knows of CUDA stays this one interface, which a build without nvcc gives through
 * cuda/gpu_stub.c.
 */
#ifndef GM_DEVICE_GPU_H
#define GM_DEVICE_GPU_H

#include "../../cuda/gpu.h"

#endif
