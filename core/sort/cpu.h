/*
 * cpu.h - the CPU engine: merging sorted runs and sorting, on all cores.
 *
 * It is the fallback when no GPU can be used and the reference the GPU tests compare
 * against. Keys live in one array; "runs" are consecutive slices of it, run r being
 * [offsets[r], offsets[r+1]). The merge is in cpumerge.c, the radix sort in
 * cpusort.c.
 *
 * Room sort/, above read/: sorting in memory on the CPU: the CPU engine's sort
 * and merge of key arrays (cpu.h) and the records' sort (recsort.h). It
 * includes base/, keys/ and read/ only.
 */
#ifndef GM_CPU_H
#define GM_CPU_H

#include <stdint.h>

#include "base/types.h"

#ifdef __cplusplus
extern "C" { /* the benchmark and GPU tests compare against it from C++ too */
#endif

/* Below this many keys per thread, extra threads cost more than they save (both
 * the merge and the sort cut their work by it). */
enum { GM_CPU_MIN_KEYS = 1 << 16 };

/* Merges two sorted arrays a (m keys) and b (n keys) of the given width into c
 * (m + n keys, not overlapping a or b): the output is cut into equal parts, each
 * part's inputs found by co-rank, each part merged on its own thread. Stable: on
 * equal keys a comes first. reverse: inputs and output are descending. */
void gm_cpu_merge2(gm_width width, const void *a, int64_t m, const void *b, int64_t n,
                   void *c, int reverse, int nthreads);

/* Merges the nruns sorted runs of *keys into one run. Uses *scratch (room for
 * keys->n keys) and may swap keys->data with *scratch: on return keys->data holds
 * the result. A tree of two-way merges of neighbouring runs, so the merge is stable:
 * on equal keys the earlier run comes first. */
void gm_cpu_merge_runs(gm_keys *keys, void **scratch, const int64_t *offsets,
                       int nruns, int reverse, int nthreads);

/* Sorts *keys, using *scratch (room for keys->n keys) and perhaps swapping the two
 * as gm_cpu_merge_runs does. Can't fail. */
void gm_cpu_sort(gm_keys *keys, void **scratch, int reverse, int nthreads);

#ifdef __cplusplus
}
#endif

#endif
