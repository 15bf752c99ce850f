/*
 * block.cuh - what a block does with a tile in shared memory: load it (coalesced,
 * or as 16-byte asynchronous copies), merge it (each thread its ITEMS outputs,
 * found by co-rank: PMPP 12.6), and store it (coalesced, 16 bytes a thread where
 * alignment allows). Every kernel is made of these, as moderngpu's kernels are of
 * its cta_load / cta_merge / cta_store. The loads and stores serve values as well
 * as keys (any 4- or 8-byte type); the merges move a key's value beside it.
 */
#ifndef GM_CUDA_BLOCK_CUH
#define GM_CUDA_BLOCK_CUH

#include <cuda_pipeline.h>
#include <stdint.h>

#include "corank.cuh"
#include "value.cuh"

/* Loads cnt keys of a into s. Coalesced (thread t loads t, t + THREADS, ...), and
 * every load is issued before the first store to shared memory, so a thread has
 * ITEMS loads in flight rather than one. */
template <typename K, int THREADS, int ITEMS>
__device__ inline void load_tile(K *s, const K *a, int64_t cnt)
{
    K v[ITEMS];
#pragma unroll
    for (int u = 0; u < ITEMS; u++) {
        int64_t x = threadIdx.x + u * THREADS;
        v[u] = x < cnt ? a[x] : K(0);
    }
#pragma unroll
    for (int u = 0; u < ITEMS; u++) {
        int64_t x = threadIdx.x + u * THREADS;
        if (x < cnt)
            s[x] = v[u];
    }
}

/*
 * N slices of global memory copied into one shared-memory buffer as the 16-byte
 * chunks that cover them (cp.async on sm_80 and later): chunk copies are 16-byte
 * aligned at both ends, VEC keys per copy instruction, and a slice then starts
 * some keys into its first chunk; each slice's chunks follow the one before's.
 * The chunks cover at most VEC - 1 keys before a slice and VEC - 1 after, so the
 * buffer needs the slices' keys plus 2 N (VEC - 1); reading them stays inside the
 * array, whose allocation has 16 bytes to spare at its end. The tiled kernel loads
 * a tile's two slices so, the four-way kernel a chunk's four.
 */
template <typename K, int N> struct chunked_slices {
    static constexpr int VEC = 16 / sizeof(K);
    const K *from[N];  /* first chunk of each slice, in global memory */
    int chunks[N + 1]; /* 16-byte chunks before each slice; chunks[N]: all */
    int at[N];         /* where each slice starts in the buffer */

    chunked_slices() = default;
    /* Slice q: len[q] keys from p[q]. */
    __device__ chunked_slices(const K *const (&p)[N], const int (&len)[N])
    {
#pragma unroll
        for (int q = 0; q < N; q++)
            add(q, p[q], len[q]);
    }

    /* Lays out slice q, len keys from p, after slices 0 .. q - 1. */
    __device__ void add(int q, const K *p, int len)
    {
        if (q == 0)
            chunks[0] = 0;
        int off = len > 0 ? (int)(((uintptr_t)p / sizeof(K)) & (VEC - 1)) : 0;
        from[q] = p - off;
        at[q] = chunks[q] * VEC + off;
        chunks[q + 1] = chunks[q] + (len > 0 ? (off + len + VEC - 1) / VEC : 0);
    }

    /* Starts the asynchronous copies into s, THREADS threads sharing them; the caller
     * commits the group and waits for it before reading s. */
    template <int THREADS> __device__ void fetch(K *s) const
    {
#pragma unroll 1
        for (int x = threadIdx.x; x < chunks[N]; x += THREADS) {
            const K *f = from[0];
            int first = 0; /* the slice's first chunk */
#pragma unroll
            for (int q = 1; q < N; q++)
                if (x >= chunks[q]) {
                    f = from[q];
                    first = chunks[q];
                }
            __pipeline_memcpy_async(s + x * VEC, f + (x - first) * VEC, 16);
        }
    }
};

/* Stores s[shift, shift + cnt) to out[0, cnt), coalesced. s is 16-byte aligned,
 * and out - shift lies in out's array; where out - shift is 16-byte aligned too,
 * the keys go 16 bytes per thread and store, with the partial vectors at either
 * end key by key; else all of them key by key. (A caller whose output may start
 * anywhere stages its keys from shift = its misalignment, in keys, so that the
 * stores can be vectors: merge_multi.cu.) The loops are kept rolled: unrolled,
 * their 16-byte values in flight cost the tiled kernel twice its registers (and
 * so half its resident blocks). */
template <typename K, int THREADS>
__device__ inline void store_tile(K *out, const K *s, int cnt, int shift = 0)
{
    constexpr int PER_VEC = 16 / sizeof(K);
    K *base = out - shift;
    int end = shift + cnt, v0 = end, v1 = end; /* keys [v0, v1) go as vectors */
    if (((uintptr_t)base & 15) == 0) {
        v0 = (shift + PER_VEC - 1) / PER_VEC * PER_VEC;
        v0 = v0 < end ? v0 : end;
        v1 = end / PER_VEC * PER_VEC;
        v1 = v1 > v0 ? v1 : v0;
#pragma unroll 1
        for (int v = v0 / PER_VEC + threadIdx.x; v < v1 / PER_VEC; v += THREADS)
            ((int4 *)base)[v] = ((const int4 *)s)[v];
    }
#pragma unroll 1
    for (int x = shift + threadIdx.x; x < v0; x += THREADS)
        base[x] = s[x];
#pragma unroll 1
    for (int x = v1 + threadIdx.x; x < end; x += THREADS)
        base[x] = s[x];
}

/*
 * The sequential merge of PMPP 12.2 as every tiled kernel runs it, one thread's
 * ITEMS outputs at a time: writes outputs to out[0, ITEMS) of the stable merge of
 * s[pa, a_end) and s[pb, b_end) (one shared-memory array holds both inputs). The
 * next key of each input waits in a register, so an output costs one shared-memory
 * load (the key that replaces the one taken) where the general merge_seq pays two,
 * and the loop is unrolled with no exit test: once both inputs are exhausted it
 * writes garbage that callers never store. Meanwhile it reads s[pb] for pb <= b_end
 * and s[pa] for pa < a_end + ITEMS: the caller keeps those inside an array that no
 * thread writes during the merge (racecheck counts reads whose values go unused).
 * With values (value.cuh), sv is the keys' shadow and each output's value, read from
 * where its key was taken, goes to vout[u]: one more load an output, within the
 * same bounds.
 */
template <typename K, int ITEMS, bool DESC, typename V = no_value>
__device__ __forceinline__ void merge_items(const K *s, int pa, int a_end, int pb, int b_end,
                                            K *out, const V *sv = nullptr, V *vout = nullptr)
{
    K ak = s[pa], bk = s[pb];
#pragma unroll
    for (int u = 0; u < ITEMS; u++) {
        bool take_b = pb < b_end && (pa >= a_end || (DESC ? ak < bk : bk < ak));
        out[u] = take_b ? bk : ak;
        if constexpr (has_value<V>)
            vout[u] = sv[take_b ? pb : pa];
        pa += !take_b;
        pb += take_b;
        if (u + 1 < ITEMS) {
            K next = s[take_b ? pb : pa];
            ak = take_b ? ak : next;
            bk = take_b ? next : bk;
        }
    }
}

/* One thread's share of a merge in shared memory: outputs [k, k + ITEMS) of the
 * stable merge of a (la keys at s + a_at) with b (lb keys at s + b_at), its place
 * found by co-rank, written to out[0, ITEMS) (s readable past the slices as
 * merge_items needs), and their values from the shadow sv to vout. Every merge in
 * shared memory is made of these: the tiled, circular and four-way kernels' and the
 * block sort's. */
template <typename K, int ITEMS, bool DESC, typename V = no_value>
__device__ __forceinline__ void merge_share(const K *s, int a_at, int la, int b_at, int lb,
                                            int k, K *out, const V *sv = nullptr,
                                            V *vout = nullptr)
{
    int i = corank_tile(k, s + a_at, la, s + b_at, lb, DESC ? K(-1) : K(0));
    merge_items<K, ITEMS, DESC, V>(s, a_at + i, a_at + la, b_at + k - i, b_at + lb, out, sv,
                                   vout);
}

/* The heart of every tiled kernel: in s, a holds la keys from a_at and b holds lb
 * keys from b_at; thread t finds the co-rank of output k0 + t * ITEMS and merges the
 * next ITEMS outputs into stage (TILE keys from output k0 on), their values from
 * the shadow sv into vstage. The caller synchronizes before and after, and leaves s
 * readable up to b_at + lb and a_at + la + ITEMS (see merge_items). */
template <typename K, int ITEMS, bool DESC, typename V = no_value>
__device__ __forceinline__ void merge_tile(const K *s, int a_at, int la, int b_at, int lb,
                                           K *stage, int k0 = 0, const V *sv = nullptr,
                                           V *vstage = nullptr)
{
    int k = k0 + threadIdx.x * ITEMS;
    if (k < la + lb)
        merge_share<K, ITEMS, DESC, V>(s, a_at, la, b_at, lb, k, stage + (k - k0), sv,
                                       value_at(vstage, k - k0));
}

/* One thread's share of a merge in place: outputs [k, k + ITEMS) of the merge of a
 * (la keys at s + a_at) with b (lb keys at s + b_at), merged into registers and,
 * once every thread of the block has read its inputs, written to s[to, to + ITEMS)
 * (their values, from the shadow sv, to sv[vto, vto + ITEMS)). A thread with has
 * false merges nothing but still meets the barrier, so every thread of the block
 * calls it; the caller synchronizes before the merged keys are read. */
template <typename K, int ITEMS, bool DESC, typename V = no_value>
__device__ __forceinline__ void merge_share_in_place(K *s, bool has, int a_at, int la, int b_at,
                                                     int lb, int k, int to, V *sv = nullptr,
                                                     int vto = 0)
{
    K r[ITEMS];
    V rv[has_value<V> ? ITEMS : 1];
    if (has)
        merge_share<K, ITEMS, DESC, V>(s, a_at, la, b_at, lb, k, r, sv, rv);
    __syncthreads();
    if (has) {
#pragma unroll
        for (int u = 0; u < ITEMS; u++) {
            s[to + u] = r[u];
            if constexpr (has_value<V>)
                sv[vto + u] = rv[u];
        }
    }
}

#endif
