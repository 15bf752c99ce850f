/*
 * value.cuh - the value a key carries through the kernels: a key-value merge or
 * sort (the records path's key prefix and line index) keeps its values in an array
 * of their own beside the keys, as CUB's pairs do. Every kernel is written once,
 * templated on the value type V, and no_value, the keys-only case, compiles each
 * value step away (as moderngpu's kernels with has_values false), so the keys-only
 * kernels run the code they ran before.
 *
 * In shared memory a tile's values lie in an array parallel to its keys, each value
 * at its key's position ("the shadow"), so a merge moves a value wherever it moves
 * its key and needs no index of its own. The shadow is the kernels' dynamic shared
 * memory (no bytes keys-only), after their static key buffers.
 */
#ifndef GM_CUDA_VALUE_CUH
#define GM_CUDA_VALUE_CUH

#include <cuda_pipeline.h>
#include <stdint.h>

#include <type_traits>

/* The value type of a keys-only kernel. */
struct no_value {};

template <typename V> constexpr bool has_value = !std::is_same<V, no_value>::value;

/* Bytes of a shadow of n keys' values, rounded up to 16 (none keys-only). */
template <typename V> constexpr int value_bytes(int n)
{
    return has_value<V> ? (n * (int)sizeof(V) + 15) / 16 * 16 : 0;
}

/* p + off, for a value array that keys-only is null (no arithmetic on it then). */
template <typename V> __host__ __device__ inline V *value_at(V *p, int64_t off)
{
    if constexpr (has_value<V>)
        return p + off;
    else
        return p;
}

/* The dynamic shared memory, where a kernel's value shadows lie (from byte at on). */
template <typename V> __device__ inline V *value_shadow(int at = 0)
{
    extern __shared__ __align__(16) unsigned char gm_value_smem[];
    return reinterpret_cast<V *>(gm_value_smem + at);
}

/*
 * The values of N slices of global memory, copied into a shadow at the positions
 * their keys take in the key buffer (chunked_slices' at[]): one asynchronous copy
 * per value (cp.async of 4, 8 or 16 bytes), committed with the keys' copies. Each
 * value is copied alone, since a value's place in the shadow follows its key's
 * alignment, not its own.
 */
template <typename V, int N> struct value_slices {
    static_assert(sizeof(V) == 4 || sizeof(V) == 8 || sizeof(V) == 16,
                  "values are copied as cp.async of 4, 8 or 16 bytes");
    const V *from[N]; /* each slice's first value */
    int start[N + 1]; /* values before each slice; start[N]: all */
    int at[N];        /* where each slice starts in the shadow */

    /* Slice q: len values from p, to the shadow from position to; after slices
     * 0 .. q - 1. */
    __device__ void add(int q, const V *p, int len, int to)
    {
        if (q == 0)
            start[0] = 0;
        from[q] = p;
        at[q] = to;
        start[q + 1] = start[q] + len;
    }

    /* Starts the copies into s, THREADS threads sharing them; the caller commits
     * the group (with the keys') and waits for it before reading s. */
    template <int THREADS> __device__ void fetch(V *s) const
    {
#pragma unroll 1
        for (int x = threadIdx.x; x < start[N]; x += THREADS) {
            /* the last slice starting at or before x, the one holding it, chosen by
             * selects (an index into the arrays would put them in local memory) */
            const V *f = from[0];
            int first = 0, to = at[0];
#pragma unroll
            for (int q = 1; q < N; q++)
                if (x >= start[q]) {
                    f = from[q];
                    first = start[q];
                    to = at[q];
                }
            __pipeline_memcpy_async(s + to + (x - first), f + (x - first), sizeof(V));
        }
    }
};

/* Keys only: nothing to copy. */
template <int N> struct value_slices<no_value, N> {
    __device__ void add(int, const no_value *, int, int) {}
    template <int THREADS> __device__ void fetch(no_value *) const {}
};

#endif
