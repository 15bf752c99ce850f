/*
 * bench_check.cuh - the benchmarks' CUDA check: a failed call prints where and why and
 * ends the program (a benchmark has nothing to fall back to, unlike the product,
 * whose calls report a status through cuda/check.cuh).
 */
#ifndef GM_BENCH_CHECK_CUH
#define GM_BENCH_CHECK_CUH

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                  \
                    cudaGetErrorString(e_));                                               \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

#endif
