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
 *
 * CUDA's start-up (the context) costs about as much as a sort of 10^8 keys on 16
 * cores, so it is begun early in a thread of its own (gm_engine_warm) whenever a
 * GPU may be used, and the run goes on reading meanwhile; --device=gpu's early
 * failure (gm_engine_prepare) is the result of that start-up.
 *
 * Room device/, above runs/: the engines, the only room that includes a header
 * of cuda/: the door to the GPU engine (gpu.h, cuda/gpu.h's interface for the
 * rooms above), the choice of GPU or CPU and its fallback (this file), and the
 * records' chunk sort on the GPU (recgpu.h). It includes the rooms below it
 * (base/ to runs/) and cuda/gpu.h.
 */
#ifndef GM_ENGINE_H
#define GM_ENGINE_H

#include <stdint.h>

#include "base/config.h"

/* Stage timings and the plan actually carried out, for -v. */
typedef struct gm_engine_report {
    gm_device device;     /* cpu or gpu */
    gm_kernel kernel;     /* for the GPU */
    char reason[256];     /* why this device */
    char gpu_name[256];
    double h2d, kernel_s, d2h; /* GPU stage times */
    double startup_wait;  /* waiting for CUDA's start-up inside this call */
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

/* Merges two runs, a (na keys) and b (nb keys) of width w, from their own buffers
 * into out (na + nb keys) on the CPU: what the engine picks for a round of this
 * size outside --device=gpu, without gathering the runs first. rep says so. */
void gm_engine_merge2(const gm_config *cfg, gm_width w, const void *a, int64_t na,
                      const void *b, int64_t nb, void *out, int nthreads, gm_engine_report *rep);

/* The report of a sort the text path (core/stream/textsort.c) ran on the GPU for the
 * reason why, with its copies, kernels and passes t (cuda/gpu.h). */
struct gm_gpu_times;
void gm_engine_report_text(gm_engine_report *rep, const gm_config *cfg, const char *why,
                           const struct gm_gpu_times *t);

/* The most keys of this width one sort chunk may hold on the device cfg asks for
 * (--device=gpu: what fits in the GPU's free memory with the sort's scratch), or
 * 0 when the device sets no limit. The external sort cuts its chunks to it. */
int64_t gm_engine_max_chunk(const gm_config *cfg, gm_width width);

/* Begins CUDA's start-up in the background (gm_gpu_warm_start) when a GPU may run
 * this work, so that it overlaps opening, reading and parsing: always for
 * --device=gpu; for auto when keys, the most keys one engine call of the run is
 * expected to hold (-1: not known), put the call above the cost model's threshold
 * (the CPU's estimate at least the GPU's start-up: the test gm_engine_run makes
 * before it probes); never for --device=cpu, nor for auto's check. Returns 1 when
 * the start-up has begun (by this call or an earlier one), else 0. */
int gm_engine_warm(const gm_config *cfg, gm_op op, int64_t keys, int nthreads);

/* gm_engine_warm for a sort the text path may take, bytes of text long: files
 * whose sizes are known, or (growing) the bytes read so far of a pipe read whole.
 * Auto begins CUDA's start-up once bytes make the text path beat the CPU
 * (gm_engine_text_path's test; for a pipe, with half the start-up counted, the
 * rest of the read hiding the other half). Returns 1 when the start-up has begun. */
int gm_engine_warm_text(const gm_config *cfg, uint64_t bytes, int growing, int nthreads);

/* --device=gpu's early failure: the result of the start-up gm_engine_warm began
 * (begun here if it was not). With wait, waits for it; without, sets *done to 0
 * and returns GM_OK while it still runs (ask again later). Returns GM_ENODEV with
 * the reason in words ("no usable CUDA device: no NVIDIA driver loaded", ...), and
 * under -v the CUDA error behind it; GM_OK when the GPU is usable and for every
 * other device choice (*done 1). */
int gm_engine_prepare(const gm_config *cfg, int wait, int *done, gm_status *st);

/* CUDA's start-up in this process, for -v: the seconds it took (0 when it never
 * ran), and in *background whether it ran in the warm start's thread. */
double gm_engine_startup(int *background);

/* Begins ending CUDA's part in the process in the background, for a run whose
 * engine work is over (gm_gpu_teardown_begin); nothing when CUDA never started. */
void gm_engine_release_begin(void);

/* Ends CUDA's part in the process when it was started (gm_gpu_teardown: the
 * context destroyed now, not in exit's handlers), or waits for the end begun by
 * gm_engine_release_begin. Returns the seconds the caller spent here; *took is
 * how long the destruction itself took. */
double gm_engine_release(double *took);

/* Whether a sort of bytes of text, all in memory, takes the GPU's text path
 * (core/stream/textsort.c): --device=gpu when a GPU is usable, auto when the cost model
 * says the path beats the CPU's read, parse, sort and format, counting what is
 * left of CUDA's start-up (all of it where none began; less where a warm start
 * has run meanwhile, as it does while a pipe is read).
 * why gets the reason in words, for -v. */
int gm_engine_text_path(const gm_config *cfg, uint64_t bytes, int nthreads, char *why,
                        size_t size);

/* The bytes of text from which --device=auto gives a sort on the records path
 * to the GPU on nthreads threads: sorted in device memory (resident: every input
 * a regular file) or chunk by chunk; the estimates meet there. UINT64_MAX where
 * the CPU is never slower. */
uint64_t gm_engine_records_least(int nthreads, int resident);

/* Chooses the CUDA device cfg->gpu names (--gpu=N) for the run's start-up, before
 * anything may begin it (gm_gpu_select). */
void gm_engine_choose(const gm_config *cfg);

#endif
