/*
 * testing.h - what the tests and the benchmark may ask of the GPU engine beyond
 * gpu.h: choices forced whatever the size, so that small inputs reach every path
 * (the four-way sort pass, each way of finding the tiled kernel's co-ranks, the
 * circular kernel's long segments, the "does not fit" error), and the tile sizes
 * the tests probe around.
 *
 * gm_gpu_force and the tile functions are defined in cuda/testing.cu (or
 * cuda/testing_stub.c without nvcc), which only the test binaries and the benchmark
 * link; the shipped binary cannot set any of this. The engine reads the choices
 * from gm_forced (cuda/device.cuh), all zero unless a test set them.
 */
#ifndef GM_GPU_TESTING_H
#define GM_GPU_TESTING_H

#include <stddef.h>
#include <stdint.h>

#include "../core/base/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the tiled kernel's passes find their tiles' co-ranks. */
typedef enum gm_partition {
    GM_PARTITION_AUTO,     /* by the number of tiles (policy.cuh, choice) */
    GM_PARTITION_NONE,     /* no partition kernel: each block searches for itself */
    GM_PARTITION_LANES_1,  /* a partition kernel, 1, 8 or 32 lanes a tile */
    GM_PARTITION_LANES_8,
    GM_PARTITION_LANES_32
} gm_partition;

typedef struct gm_gpu_choices {
    int sort_ways;           /* 0: by size; 2: two-way passes only; 4: four-way passes
                                wherever three runs or more are left */
    gm_partition partition;  /* the tiled kernel's (the lanes also the circular
                                kernel's partition, which is never NONE) */
    int circular_blocks;     /* 0: as many as the device holds; else the circular
                                kernel's blocks in all, so each walks many tiles */
    int serial_launches;     /* 1: no dependent launches, even where the device has them */
    size_t memory_limit;     /* 0: none; else the most device memory counted as free */
    size_t text_chunk;       /* 0: the staging buffers' size; else the bytes of text
                                each copy of gm_gpu_sort_text moves, at least 16 */
    size_t lines_piece;      /* 0: by size; else the bytes of sorted lines that
                                gm_gpu_sort_lines gathers on the device at a time */
    int driver_loaded;       /* 1: gm_gpu_driver_loaded says yes whatever the machine
                                (auto's whole read of a pipe, reached without a GPU) */
} gm_gpu_choices;

/* Forces the choices in c (NULL: all back to zero) for the calls that follow. */
void gm_gpu_force(const gm_gpu_choices *c);

/* Keys per tile of a merge kernel (kernel != AUTO), and per block of the sort's
 * block-sort stage, for this width (0 without CUDA). */
int64_t gm_gpu_merge_tile(gm_kernel kernel, gm_width width);
int64_t gm_gpu_sort_tile(gm_width width);

/* Whether this process has begun CUDA's start-up (the probe, or the warm start's
 * thread): 0 while CUDA has not been touched. In a build without CUDA, whether
 * the stub's probe or warm start was called. */
int gm_gpu_test_cuda_touched(void);

/* The text path's parser alone (cuda/text_parse.cu): parses len bytes of text with
 * lines ending in eol into keys (room for cap, as int64), *nkeys and *width as the
 * host parser would give them. Returns GM_OK; GM_ETEXT with *bad_line (1-based) the
 * first line the parser declines and *bad_range whether it was out of range (else
 * not an integer); or a CUDA status. */
int gm_gpu_test_parse(const char *text, size_t len, char eol, int64_t *keys, int64_t cap,
                      int64_t *nkeys, gm_width *width, int64_t *bad_line, int *bad_range,
                      gm_status *st);

/* The text path's formatter alone: keys as canonical decimal lines ending in eol,
 * into out (room for cap bytes); *len the bytes. Returns GM_OK, GM_ENOMEM when cap
 * is too small, or a CUDA status. */
int gm_gpu_test_format(const gm_keys *keys, char eol, char *out, size_t cap, size_t *len,
                       gm_status *st);

/* The key types of the device's key-value sorts and merges. */
typedef enum gm_pair_key { GM_PAIR_I32, GM_PAIR_I64, GM_PAIR_U32, GM_PAIR_U64 } gm_pair_key;

/* The device sort of key-value pairs (cuda/kernels.cuh, sort_pairs_on_device) on
 * host arrays: n keys of type `type` in keys and their uint32 values in vals are
 * copied to the device, sorted by key with kernel (AUTO: tiled), stably, descending
 * if reverse, and copied back in place. Returns GM_OK or a CUDA status. */
int gm_gpu_test_sort_pairs(gm_pair_key type, void *keys, uint32_t *vals, int64_t n, int reverse,
                           gm_kernel kernel, gm_status *st);

/* The device merge of two sorted runs of pairs (merge_pairs_on_device): keys[0, m)
 * and keys[m, m + n), with their values, merged with kernel (AUTO: as gm_gpu_merge)
 * into keys and vals, stably (ties: the first run's first). Returns GM_OK or a
 * CUDA status. */
int gm_gpu_test_merge_pairs(gm_pair_key type, void *keys, uint32_t *vals, int64_t m, int64_t n,
                            int reverse, gm_kernel kernel, gm_status *st);
/* The records sort's steps (cuda/records.cuh) run on the host in place of the
 * kernels, with a stable sort in place of the device's: what gm_gpu_sort_records
 * would hand back for job (its recs and tied filled). Returns GM_OK, GM_ECUDA when
 * the lines found are not job->lines, or GM_ENODEV in a build without CUDA. */
struct gm_gpu_rec_job;
int gm_gpu_test_records_host(const struct gm_gpu_rec_job *job, gm_status *st);

#ifdef __cplusplus
}
#endif

#endif
