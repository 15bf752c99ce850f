/*
 * corank.h - the co-rank function and the sequential merge of chapter 12 of
 * Kirk & Hwu, "Programming Massively Parallel Processors" (4th ed.), the one copy
 * shared by the CPU engine (core/sort/cpumerge.c), the CUDA kernels (cuda/) and the tests.
 *
 * GM_HD makes each function __host__ __device__ under nvcc and a plain static
 * inline function under a C compiler. Every function exists for int32_t and int64_t
 * keys (suffix _i32, _i64), and for the unsigned keys the GPU's key-value sorts take
 * (uint32_t, uint64_t: _u32, _u64), with 64-bit positions, and again with 32-bit
 * positions (suffix _i32_t, _i64_t, _u32_t, _u64_t) for tiles in GPU shared memory,
 * where 64-bit index arithmetic would double the work of the inner loops. All are
 * generated from the one body in corank_impl.h; the CUDA side wraps them in
 * overloads for its key-type templates.
 *
 * Order: keys are compared after XOR with a mask, 0 for ascending and all ones for
 * descending (~x reverses the order of two's-complement and of unsigned integers
 * exactly), so one routine serves both directions. Ties always take the first input (A) first:
 * that is what makes the merge stable.
 */
#ifndef GM_CORANK_H
#define GM_CORANK_H

#include <stdint.h>

#include "keys/hd.h"

#define GM_CAT2(a, b) a##b
#define GM_CAT(a, b) GM_CAT2(a, b)

#define GM_KEY int32_t
#define GM_IDX int64_t
#define GM_SUF _i32
#include "keys/corank_impl.h"
#undef GM_KEY
#undef GM_IDX
#undef GM_SUF

#define GM_KEY int64_t
#define GM_IDX int64_t
#define GM_SUF _i64
#include "keys/corank_impl.h"
#undef GM_KEY
#undef GM_IDX
#undef GM_SUF

#define GM_KEY int32_t
#define GM_IDX int32_t
#define GM_SUF _i32_t
#include "keys/corank_impl.h"
#undef GM_KEY
#undef GM_IDX
#undef GM_SUF

#define GM_KEY int64_t
#define GM_IDX int32_t
#define GM_SUF _i64_t
#include "keys/corank_impl.h"
#undef GM_KEY
#undef GM_IDX
#undef GM_SUF

#define GM_KEY uint32_t
#define GM_IDX int64_t
#define GM_SUF _u32
#include "keys/corank_impl.h"
#undef GM_KEY
#undef GM_IDX
#undef GM_SUF

#define GM_KEY uint64_t
#define GM_IDX int64_t
#define GM_SUF _u64
#include "keys/corank_impl.h"
#undef GM_KEY
#undef GM_IDX
#undef GM_SUF

#define GM_KEY uint32_t
#define GM_IDX int32_t
#define GM_SUF _u32_t
#include "keys/corank_impl.h"
#undef GM_KEY
#undef GM_IDX
#undef GM_SUF

#define GM_KEY uint64_t
#define GM_IDX int32_t
#define GM_SUF _u64_t
#include "keys/corank_impl.h"
#undef GM_KEY
#undef GM_IDX
#undef GM_SUF

#endif
