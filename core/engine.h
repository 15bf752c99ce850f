/*
 * engine.h - the plan: which device runs the merge or sort (GPU or CPU), which
 * kernel, and what to do when the GPU cannot. The width of the keys is decided by
 * the parser (int32 when every value fits); the engine only reports it.
 *
 * --device=auto estimates both devices' times from the measured rates in
 * engine.c (CPU merge and sort throughput per thread; GPU start-up, PCIe copies and
 * kernel throughput) and takes the faster; it never starts CUDA when the CPU's
 * estimate is already below the GPU's start-up cost alone. If the GPU then fails
 * (not enough device memory, a CUDA error) auto prints a notice and runs the CPU.
 */
#ifndef GM_ENGINE_H
#define GM_ENGINE_H

#include "gm.h"

/* Stage timings and the plan actually carried out, for -v. */
typedef struct gm_engine_report {
    gm_device device;     /* cpu or gpu */
    gm_kernel kernel;     /* for the GPU */
    char reason[256];     /* why this device */
    char gpu_name[256];
    double h2d, kernel_s, d2h; /* GPU stage times */
    int passes;
    int deduplicated;     /* -u already applied (GPU sort) */
} gm_engine_report;

/* Merges the nruns runs of keys (or sorts keys, with nruns ignored) as cfg asks.
 * keys->data and *scratch may be swapped (see cpu.h); with unique, the GPU sort may
 * shrink keys->n and set rep->deduplicated. Returns GM_OK or an error: GM_ENODEV
 * (--device=gpu without a usable GPU), GM_EDEVMEM or GM_ECUDA (--device=gpu only;
 * auto falls back). */
int gm_engine_run(const gm_config *cfg, gm_op op, gm_keys *keys, void **scratch,
                  const int64_t *offsets, int nruns, int nthreads,
                  gm_engine_report *rep, gm_status *st);

/* The most keys of this width one sort chunk may hold on the device cfg asks for
 * (--device=gpu: what fits in the GPU's free memory with the sort's scratch), or
 * 0 when the device sets no limit. The external sort cuts its chunks to it. */
int64_t gm_engine_max_chunk(const gm_config *cfg, gm_width width);

/* Whether a sort of bytes of text, all in memory, takes the GPU's text path
 * (core/textsort.c): --device=gpu when a GPU is usable, auto when the cost model
 * says the path beats the CPU's read, parse, sort and format, start-up included.
 * why gets the reason in words, for -v. */
int gm_engine_text_path(const gm_config *cfg, uint64_t bytes, int nthreads, char *why,
                        size_t size);

/* Fails early when --device=gpu has no usable GPU: GM_ENODEV with the reason in
 * words ("no NVIDIA driver loaded", ...), and under -v the CUDA error behind it.
 * GM_OK for every other device choice. */
int gm_engine_prepare(const gm_config *cfg, gm_status *st);

#endif
