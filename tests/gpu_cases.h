/*
 * gpu_cases.h - what the GPU suite's files share (defined in test_gpu.c): the
 * skip without a usable device, GM_TEST_SMALL, the kernels, keys drawn from a few
 * distributions and sorted into runs by the CPU, and the GPU's merge or sort
 * under each of a kernel's forced settings compared with the CPU's answer.
 */
#ifndef GM_TEST_GPU_CASES_H
#define GM_TEST_GPU_CASES_H

#include <stdint.h>

#include "../core/sort/cpu.h"
#include "../cuda/gpu.h"
#include "helpers.h"

/* Skips the test without a usable device (fails it under GM_TEST_REQUIRE_GPU=1). */
void need_gpu(void);
/* GM_TEST_SMALL=1: small sizes only (compute-sanitizer). */
int small_only(void);

/* The three merge kernels. */
extern const gm_kernel kernels[3];

/* DIST_ENDS: mostly the largest and the smallest key (7 in 16 each): in every run
 * long stretches of keys equal to the one that sorts last, in either direction
 * (the block sort pads a short tile with it, and a merge must never take it for
 * a guard). */
enum dist { DIST_WIDE, DIST_FEW, DIST_EQUAL, DIST_EXTREMES, DIST_CLUSTERED, DIST_ENDS };

/* A key of width w drawn from d. */
int64_t draw(rng *r, enum dist d, gm_width w);
/* Key i of p, of width w. */
void put(void *p, int64_t i, int64_t v, gm_width w);
int64_t get(const void *p, int64_t i, gm_width w);
/* Fails with the first position where got and want (n keys of width w) differ. */
void assert_same_keys(const void *got, const void *want, int64_t n, gm_width w,
                      const char *what);
/* Fills runs [offsets[r], offsets[r+1]) with draws, each run sorted by the CPU. */
gm_keys make_runs(rng *r, const int64_t *offsets, int nruns, enum dist d, gm_width w,
                  int reverse);
/* Merges the runs of k (offsets, nruns) on the GPU with kernel, or sorts k (offsets
 * null), under each of the kernel's forced settings, and compares each result with
 * want's first n keys. */
void check_gpu_runs(gm_keys k, const int64_t *offsets, int nruns, int reverse, int unique,
                    gm_kernel kernel, gm_keys want, int64_t n, const char *what);

/* 2^31 keys and a few more; need_room_past_2_31 skips the test where the device's
 * or the host's memory is short of them. */
int64_t past_2_31(void);
void need_room_past_2_31(void);

#endif
