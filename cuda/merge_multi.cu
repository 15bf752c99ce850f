/*
 * merge_multi.cu - the sort's four-way merge pass: runs 4q .. 4q+3 of src become run
 * q of dst, in one pass over memory where two-way passes take two.
 *
 * A merge sort's time is its passes over memory (each moves every key twice), so
 * merging four runs per pass halves the passes after the block sort. What makes
 * four-way merging hard is the partition: a two-way tile boundary is one co-rank
 * (PMPP 12.3), but a four-way boundary is a point in four runs at once. We find
 * such points from samples, as the CUDA samples' mergeSort does for
 * two runs with its ranks and limits:
 *
 *   1. Sample every S-th key of every run (S: a quarter of a chunk, below). A
 *      sample's place in the merged output is known exactly once we know how many
 *      keys of each other run precede it: a binary search per run (upper bound in
 *      the runs before its own, lower bound in the runs after it: ties keep run
 *      order, so the merge is stable). Those four counts are a split of the four
 *      runs, and the number of samples before it is the sum of ceil(count / S)
 *      over the runs; so each sample writes its split straight into its place in
 *      a sorted list, with no sort of the samples. The samples are first copied
 *      into a compact index, so that each search first finds the two samples of
 *      the other run around the key (in the index, a megabyte or two that stays in
 *      the L2 cache) and only then searches the S keys between them in the run
 *      itself: fewer of its rounds read scattered sectors from DRAM.
 *   2. Between two neighbouring samples of that list each run contributes at most S
 *      keys (or one of its samples would lie between them), so the output between
 *      any two neighbouring splits is at most 4 S keys, a chunk. Each block takes a
 *      stretch of the list and walks it in chunks: from the current split, the
 *      furthest split at most a chunk's keys on is the chunk's end. Both ends of
 *      every chunk are exact splits, so the block loads exactly the keys it merges.
 *   3. In shared memory the chunk's four slices merge as a tree: runs 0 and 1 into
 *      X and runs 2 and 3 into Y (every thread: co-rank, then its ITEMS keys,
 *      merge_items), then X with Y into the staging tile, and a coalesced store.
 *      For int64 keys the next chunk loads while this one merges its second level
 *      (few blocks are resident to hide the wait otherwise).
 *
 * The chunk's loads are the tiled kernel's (chunked_slices: 16-byte cp.async chunks).
 * With values (value.cuh), both buffers have shadows, which the chunk's values
 * load into and merge through beside the keys.
 */
#include "block.cuh"
#include "kernels.cuh"
#include "merge_multi.cuh"

/* Step 0: the index, one thread per sample: every run's samples, consecutive. */
template <typename K>
__global__ void multi_index_kernel(const K *__restrict__ src, multi_desc d, K *__restrict__ index)
{
    gm_after_previous();
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t run = t / d.samples_per_run, p = t % d.samples_per_run * d.stride;
    if (run < d.groups * WAYS && run * d.run_len + p < d.n)
        index[t] = src[run * d.run_len + p];
}

/* In each of the sorted arrays in[q], within [lo[q], hi[q]], the first key that
 * follows key (key and the arrays' keys compared after XOR with mask; ties: the
 * arrays before j keep their keys equal to key before it); returned in lo. Binary
 * searches, the arrays' side by side, a round at a time: their loads are
 * independent, so a round waits for memory once, not once an array. */
template <typename K>
__device__ __forceinline__ void search_runs(const K *const (&in)[WAYS], int64_t (&lo)[WAYS],
                                            int64_t (&hi)[WAYS], K key, int j, K mask)
{
    for (;;) {
        bool more = false;
#pragma unroll
        for (int q = 0; q < WAYS; q++) {
            if (lo[q] < hi[q]) {
                int64_t mid = lo[q] + (hi[q] - lo[q]) / 2;
                K x = in[q][mid] ^ mask;
                if (x < key || (q < j && x == key))
                    lo[q] = mid + 1;
                else
                    hi[q] = mid;
                more |= lo[q] < hi[q];
            }
        }
        if (!more)
            break;
    }
}

/*
 * Step 1: one thread per sample. Entry r of group g's list (WAYS positions, one
 * per run) is the split just before the r-th sample in output order; the entry
 * after the last sample is the runs' lengths (written by the group's first
 * thread). The first sample in output order is some run's first key, so entry 0
 * is all zeros.
 */
template <typename K>
__global__ void multi_sample_kernel(const K *__restrict__ src, multi_desc d, K mask,
                                    const K *__restrict__ index, int64_t *__restrict__ splits)
{
    gm_after_previous();
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t per_group = WAYS * d.samples_per_run;
    int64_t g = t / per_group;
    if (g >= d.groups)
        return;
    int j = (int)((t - g * per_group) / d.samples_per_run);
    int64_t p = (t - g * per_group) % d.samples_per_run * d.stride;
    int64_t *list = splits + g * d.entries_per_group * WAYS;
    if (j == 0 && p == 0) {
        int64_t last = group_samples(d, g);
#pragma unroll
        for (int q = 0; q < WAYS; q++)
            list[last * WAYS + q] = run_length(d, g, q);
    }
    int64_t at = run_start(d, g, j);
    if (p >= run_start(d, g, j + 1) - at)
        return;
    const K key = index[t] ^ mask;
    /* In each other run q, the first key that follows the sample's: first over
     * q's samples in the index; if c of them precede the key, the answer lies
     * after sample c - 1 and at most at sample c, S keys; then over those keys of
     * the run. (The runs' lengths and sample counts are written out here, not
     * through run_length and run_samples: through them the compiler allocates
     * registers differently and the sort runs slower.) */
    int64_t lo[WAYS], hi[WAYS];
#pragma unroll
    for (int q = 0; q < WAYS; q++) {
        lo[q] = q == j ? p / d.stride : 0;
        hi[q] = q == j ? p / d.stride
                       : ceil_div(run_start(d, g, q + 1) - run_start(d, g, q), d.stride);
    }
    const K *in[WAYS];
#pragma unroll
    for (int q = 0; q < WAYS; q++)
        in[q] = index + index_at(d, g, q);
    search_runs(in, lo, hi, key, j, mask);
#pragma unroll
    for (int q = 0; q < WAYS; q++) {
        int64_t c = lo[q], len = run_start(d, g, q + 1) - run_start(d, g, q);
        lo[q] = q == j ? p : c > 0 ? (c - 1) * d.stride + 1 : 0;
        hi[q] = q == j ? p : c < ceil_div(len, d.stride) ? c * d.stride : len;
        in[q] = src + run_start(d, g, q);
    }
    search_runs(in, lo, hi, key, j, mask);
    int64_t r = 0;
#pragma unroll
    for (int q = 0; q < WAYS; q++)
        r += ceil_div(lo[q], d.stride);
#pragma unroll
    for (int q = 0; q < WAYS; q++)
        list[r * WAYS + q] = lo[q];
}

/* The most keys a chunk holds: a tile less ITEMS (see level one below). Samples are
 * close enough that four runs' keys between neighbouring samples fit in it. */
template <typename K> constexpr int multi_chunk_cap()
{
    return tiles<K>::MULTI_TILE - shape<K>::MULTI_ITEMS;
}

/* Where the chunk from list entry cur ends (every thread of the block calls it,
 * and gets it): at the furthest entry up to end at most multi_chunk_cap outputs
 * on. The entries' outputs rise, so the ones that fit are a prefix, counted. */
template <typename K>
__device__ inline int multi_chunk_end(const int64_t *list, int cur, int end)
{
    int64_t start = 0;
#pragma unroll
    for (int q = 0; q < WAYS; q++)
        start += list[cur * WAYS + q];
    bool fits = false;
    if (threadIdx.x >= 1 && threadIdx.x <= end - cur) {
        int64_t e = 0;
#pragma unroll
        for (int q = 0; q < WAYS; q++)
            e += list[(cur + threadIdx.x) * WAYS + q];
        fits = e - start <= multi_chunk_cap<K>();
    }
    return cur + __syncthreads_count(fits);
}

/* One chunk of a block's stretch, as every thread of the block needs it. */
template <typename K, typename V> struct multi_chunk {
    chunked_slices<K, WAYS> slices; /* each run's slice, and where it lands */
    value_slices<V, WAYS> vslices;  /* their values, landing in the shadow */
    int len[WAYS];
    int64_t out; /* the chunk's first output, in the array */
};

/* Sets c from the splits lo and hi (thread 0 of the block). */
template <typename K, typename V>
__device__ inline void multi_chunk_of(multi_chunk<K, V> &c, const K *src, const V *vsrc,
                                      const int64_t *run_at, const int64_t *lo,
                                      const int64_t *hi)
{
    int64_t out = run_at[0];
    for (int q = 0; q < WAYS; q++) {
        c.len[q] = (int)(hi[q] - lo[q]);
        c.slices.add(q, src + run_at[q] + lo[q], c.len[q]);
        c.vslices.add(q, value_at(vsrc, run_at[q] + lo[q]), c.len[q], c.slices.at[q]);
        out += lo[q];
    }
    c.out = out;
}

/* The kernel's two shared buffers, in keys. `in`: the slices' chunks (TILE + 2 (VEC -
 * 1) keys a slice at most), then room for merge_items's reads past a slice;
 * unpipelined, the merged chunk reuses it, from a shift below VEC (its threads
 * write up to TILE keys). `tmp`: X and Y, Y starting at a multiple of ITEMS, each
 * thread writing ITEMS keys; pipelined, then the merged chunk in place, from its
 * shift. */
template <typename K> constexpr int multi_in_keys()
{
    constexpr int TILE = tiles<K>::MULTI_TILE, ITEMS = shape<K>::MULTI_ITEMS;
    constexpr int VEC = 16 / sizeof(K);
    return (TILE + 2 * WAYS * VEC + ITEMS + VEC) / VEC * VEC;
}
template <typename K> constexpr int multi_tmp_keys()
{
    constexpr int TILE = tiles<K>::MULTI_TILE, ITEMS = shape<K>::MULTI_ITEMS;
    constexpr int VEC = 16 / sizeof(K);
    return (TILE + 2 * ITEMS + VEC) / VEC * VEC;
}

/* The dynamic shared memory: the shadows of `in` and of `tmp` (none keys-only). */
template <typename K, typename V> constexpr int multi_value_bytes()
{
    return value_bytes<V>(multi_in_keys<K>()) + value_bytes<V>(multi_tmp_keys<K>());
}

/* Shared memory a block uses: both buffers, the chunks' descriptions, the shadows. */
template <typename K, typename V> constexpr int multi_smem_bytes()
{
    return (multi_in_keys<K>() + multi_tmp_keys<K>()) * (int)sizeof(K) + 256 +
           (has_value<V> ? 2 * (int)sizeof(value_slices<V, WAYS>) : 0) +
           multi_value_bytes<K, V>();
}

/* Starts the loads of chunk c: its slices' keys into in, their values into vin, as
 * one cp.async group that __pipeline_wait_prior waits for. Every thread of the
 * block calls it, or none: each copies its share of the chunk. */
template <typename K, typename V>
__device__ __forceinline__ void multi_chunk_fetch(const multi_chunk<K, V> &c, K *in, V *vin)
{
    constexpr int THREADS = shape<K>::MULTI_THREADS;
    c.slices.template fetch<THREADS>(in);
    c.vslices.template fetch<THREADS>(vin);
    __pipeline_commit();
}

/* Level one of chunk m's merge, by the calling thread: X = runs 0 and 1 (lx keys),
 * Y = runs 2 and 3 (ly keys), from in into tmp, their values from vin into vtmp;
 * returns where Y starts in tmp, a multiple of ITEMS. With at most TILE - ITEMS
 * keys, ceil(lx / ITEMS) + ceil(ly / ITEMS) <= THREADS, so one share each. No
 * barrier: the caller's next __syncthreads makes tmp whole. */
template <typename K, typename V, bool DESC>
__device__ __forceinline__ int multi_level_one(const multi_chunk<K, V> &m, const K *in, K *tmp,
                                               const V *vin, V *vtmp, int lx, int ly)
{
    constexpr int ITEMS = shape<K>::MULTI_ITEMS;
    int nx = (lx + ITEMS - 1) / ITEMS, ny = (ly + ITEMS - 1) / ITEMS, y_at = nx * ITEMS;
    int u = threadIdx.x;
    if (u < nx)
        merge_share<K, ITEMS, DESC, V>(in, m.slices.at[0], m.len[0], m.slices.at[1], m.len[1],
                                       u * ITEMS, tmp + u * ITEMS, vin,
                                       value_at(vtmp, u * ITEMS));
    else if (u < nx + ny)
        merge_share<K, ITEMS, DESC, V>(in, m.slices.at[2], m.len[2], m.slices.at[3], m.len[3],
                                       (u - nx) * ITEMS, tmp + y_at + (u - nx) * ITEMS, vin,
                                       value_at(vtmp, y_at + (u - nx) * ITEMS));
    return y_at;
}

template <typename K, typename V, bool DESC>
__global__ void __launch_bounds__(shape<K>::MULTI_THREADS,
                                  resident_blocks<GM_ARCH>(shape<K>::MULTI_THREADS,
                                                           multi_smem_bytes<K, V>()))
merge_multi_kernel(const K *__restrict__ src, K *__restrict__ dst, multi_desc d,
                   const int64_t *__restrict__ splits, const V *__restrict__ vsrc,
                   V *__restrict__ vdst)
{
    constexpr int THREADS = shape<K>::MULTI_THREADS, ITEMS = shape<K>::MULTI_ITEMS;
    constexpr int TILE = tiles<K>::MULTI_TILE, VEC = 16 / sizeof(K);
    constexpr int VVEC = 16 / sizeof(V); /* values a 16-byte store */
    constexpr int BUF = multi_in_keys<K>(), TMP = multi_tmp_keys<K>();
    static_assert(BUF >= TILE + VEC, "the merged chunk fits after its shift");
    static_assert(TMP >= TILE + VEC, "the merged chunk fits after its shift");
    static_assert(!has_value<V> || (BUF >= TILE + VVEC && TMP >= TILE + VVEC),
                  "the merged chunk's values fit after their shift");
    __shared__ __align__(16) K in[BUF];
    __shared__ __align__(16) K tmp[TMP];
    __shared__ int64_t run_at[WAYS + 1];
    __shared__ int last_entry;
    __shared__ multi_chunk<K, V> c[2]; /* the chunk merged, the chunk loading */
    V *vin = value_shadow<V>(), *vtmp = value_shadow<V>(value_bytes<V>(BUF)); /* shadows */
    gm_after_previous();

    int64_t g = blockIdx.x / d.blocks_per_group;
    int cur = (int)(blockIdx.x % d.blocks_per_group * d.gaps);
    const int64_t *list = splits + g * d.entries_per_group * WAYS;
    if (threadIdx.x <= WAYS)
        run_at[threadIdx.x] = run_start(d, g, threadIdx.x);
    if (threadIdx.x == 0)
        last_entry = (int)group_samples(d, g);
    __syncthreads();
    int end = cur + d.gaps < last_entry ? cur + d.gaps : last_entry;
    if (cur >= end)
        return;
    /* Each chunk's end is found while the chunk before it loads: its reads of the
     * list wait on memory beside the slices' copies, not after them. Pipelined
     * (shape MULTI_PIPELINED), chunk i + 1's slices load into `in` while chunk i
     * merges its second level, in place in tmp, and is stored: its first level has
     * read `in` by then. Else the second level merges into `in` (out of place:
     * fewer instructions and registers) and chunk i + 1 loads after the store. */
    constexpr bool PIPELINED = shape<K>::MULTI_PIPELINED;
    int next = multi_chunk_end<K>(list, cur, end);
    if (threadIdx.x == 0)
        multi_chunk_of<K, V>(c[0], src, vsrc, run_at, list + cur * WAYS, list + next * WAYS);
    __syncthreads();
    multi_chunk_fetch<K, V>(c[0], in, vin);
    for (int b = 0; cur < end; b ^= 1) {
        int after = next < end ? multi_chunk_end<K>(list, next, end) : next;
        __pipeline_wait_prior(0);
        __syncthreads();
        const multi_chunk<K, V> &m = c[b];
        if (threadIdx.x == 0 && next < end) /* read by all after level one's barrier */
            multi_chunk_of<K, V>(c[b ^ 1], src, vsrc, run_at, list + next * WAYS,
                                 list + after * WAYS);

        /* Level one: X = runs 0 and 1, Y = runs 2 and 3, into tmp. */
        int lx = m.len[0] + m.len[1], ly = m.len[2] + m.len[3];
        int y_at = multi_level_one<K, V, DESC>(m, in, tmp, vin, vtmp, lx, ly);
        int64_t out = m.out;
        __syncthreads();

        /* Level two: X with Y, staged from the chunk's misalignment in memory (the
         * values from theirs), so that the stores can be vectors. */
        int shift = (int)(out % VEC), vshift = (int)(out % VVEC);
        const K *merged = in;
        const V *vmerged = vin;
        if constexpr (PIPELINED) {
            if (next < end)
                multi_chunk_fetch<K, V>(c[b ^ 1], in, vin);
            int k = threadIdx.x * ITEMS;
            merge_share_in_place<K, ITEMS, DESC, V>(tmp, k < lx + ly, 0, lx, y_at, ly, k,
                                                    shift + k, vtmp, vshift + k);
            merged = tmp;
            vmerged = vtmp;
        } else {
            merge_tile<K, ITEMS, DESC, V>(tmp, 0, lx, y_at, ly, in + shift, 0, vtmp,
                                          value_at(vin, vshift));
        }
        __syncthreads();
        store_tile<K, THREADS>(dst + out, merged, lx + ly, shift);
        if constexpr (has_value<V>)
            store_tile<V, THREADS>(vdst + out, vmerged, lx + ly, vshift);
        if (!PIPELINED && next < end) {
            __syncthreads(); /* every store has read `in` */
            multi_chunk_fetch<K, V>(c[b ^ 1], in, vin);
        }
        cur = next; /* the next round's barrier keeps tmp until every store has read it */
        next = after;
    }
}

template <typename K> multi_desc multi_pass_desc(int64_t n, int64_t run_len)
{
    multi_desc d{};
    d.n = n;
    d.run_len = run_len;
    d.stride = multi_chunk_cap<K>() / (WAYS * choice::MULTI_OVERSAMPLE);
    d.samples_per_run = (run_len + d.stride - 1) / d.stride;
    d.entries_per_group = WAYS * d.samples_per_run + 1;
    d.groups = (n + WAYS * run_len - 1) / (WAYS * run_len);
    d.gaps = choice::MULTI_GAPS * choice::MULTI_OVERSAMPLE; /* a block's stretch */
    d.blocks_per_group = (WAYS * d.samples_per_run + d.gaps - 1) / d.gaps;
    return d;
}

/* The scratch of a pass: the groups' lists, then the index of every run's samples
 * (a key a slot, samples_per_run slots a run, as index_at lays them out). */
static int64_t multi_list_entries(const multi_desc &d)
{
    return d.groups * d.entries_per_group * WAYS;
}
static int64_t multi_index_slots(const multi_desc &d)
{
    return d.groups * WAYS * d.samples_per_run;
}

template <typename K> int64_t multi_scratch_entries(int64_t n, int64_t run_len)
{
    multi_desc d = multi_pass_desc<K>(n, run_len);
    return multi_list_entries(d) + multi_index_slots(d);
}

/* The attributes kernel needs: all of L1 as shared memory, and room for the
 * shadows (past 48 KB a block). */
template <auto KERNEL, typename K, typename V> static int multi_attributes(gm_status *st)
{
    int rc = prefer_shared_memory<KERNEL>(st);
    if (!rc && multi_value_bytes<K, V>() > 0)
        rc = set_attribute_once<KERNEL, cudaFuncAttributeMaxDynamicSharedMemorySize>(
            multi_value_bytes<K, V>(), st);
    return rc;
}

template <typename K, typename V>
int launch_merge_multi(const K *src, K *dst, int64_t n, int64_t run_len, K mask,
                       int64_t *splits, cudaStream_t s, gm_status *st, const V *vsrc, V *vdst)
{
    if (n == 0)
        return GM_OK;
    multi_desc d = multi_pass_desc<K>(n, run_len);
    /* One kernel per direction: the merges' comparisons are compiled for it. */
    auto kernel = mask == 0 ? merge_multi_kernel<K, V, false> : merge_multi_kernel<K, V, true>;
    int rc = mask == 0 ? multi_attributes<merge_multi_kernel<K, V, false>, K, V>(st)
                       : multi_attributes<merge_multi_kernel<K, V, true>, K, V>(st);
    if (rc)
        return rc;
    int64_t samples = multi_index_slots(d); /* a thread each, in both kernels */
    K *index = reinterpret_cast<K *>(splits + multi_list_entries(d));
    GM_LAUNCH("multi_index_kernel", st, false, multi_index_kernel<K>,
              (unsigned)((samples + 255) / 256), 256, 0, s, src, d, index);
    GM_LAUNCH("multi_sample_kernel", st, false, multi_sample_kernel<K>,
              (unsigned)((samples + 255) / 256), 256, 0, s, src, d, mask,
              (const K *)index, splits);
    GM_LAUNCH("merge_multi_kernel", st, false, kernel,
              (unsigned)(d.groups * d.blocks_per_group), shape<K>::MULTI_THREADS,
              multi_value_bytes<K, V>(), s, src, dst, d, (const int64_t *)splits, vsrc, vdst);
    return GM_OK;
}

#define GM_INSTANTIATE_KEYS(K) template int64_t multi_scratch_entries<K>(int64_t, int64_t);
GM_FOR_KEYS(GM_INSTANTIATE_KEYS)
#define GM_INSTANTIATE(K, V)                                                               \
    template int launch_merge_multi<K, V>(const K *, K *, int64_t, int64_t, K, int64_t *,   \
                                          cudaStream_t, gm_status *, const V *, V *);
GM_FOR_KEYS_AND_PAIRS(GM_INSTANTIATE)
