/*
 * policy.cuh - the tuning policy: every number that shapes a kernel or picks a
 * path, as constexpr data, in the manner of CUB's per-architecture policies.
 *
 *   shape<K>       block shapes per key type: what the host and the device must
 *                  agree on (the host lays out tiles and grids from them)
 *   arch<ARCH>     the limits of one architecture (sm_75, sm_80, sm_90), from
 *                  NVIDIA's CUDA C++ Programming Guide, "Compute capabilities"
 *   resident_blocks<ARCH>()  blocks a multiprocessor holds, from those limits:
 *                  the __launch_bounds__ minimum of each kernel, so that registers
 *                  never cost a block that shared memory would allow
 *   choice         the host's size thresholds between paths
 *
 * The shapes were measured on sm_90 (bench/tune.sh, bench/RESULTS.md) and serve
 * sm_75 and sm_80 too: every block's static shared memory stays under the 48 KB any
 * block may have and the circular kernel's five tiles under sm_75's 64 KB, so the
 * same shape runs everywhere; what differs per architecture is how many blocks
 * reside, and so the register cap each kernel is compiled with.
 *
 * Build-time overrides (bench/tune.sh) go through one macro, GM_TUNE, a string of
 * "name=value" pairs: -DGM_TUNE='"i32.tiled_items=17 tiled_steps=8"'. The names are
 * the strings below; an unknown name stops the build.
 */
#ifndef GM_CUDA_POLICY_CUH
#define GM_CUDA_POLICY_CUH

#include <stdint.h>

/* ------------------------------------------------------------------ overrides */

#ifndef GM_TUNE
#define GM_TUNE ""
#endif

/* Whether s[i..] begins with name followed by '='. */
constexpr bool gm_tune_match(const char *s, int i, const char *name)
{
    int j = 0;
    while (name[j] && s[i + j] == name[j])
        j++;
    return name[j] == 0 && s[i + j] == '=';
}

/* The value GM_TUNE gives name, else dflt. */
constexpr int tuned(const char *name, int dflt)
{
    const char *s = GM_TUNE;
    for (int i = 0; s[i]; i++) {
        if ((i == 0 || s[i - 1] == ' ') && gm_tune_match(s, i, name)) {
            int j = i;
            while (s[j] != '=')
                j++;
            j++;
            int sign = 1, v = 0;
            if (s[j] == '-')
                sign = -1, j++;
            while (s[j] >= '0' && s[j] <= '9')
                v = 10 * v + (s[j++] - '0');
            return sign * v;
        }
    }
    return dflt;
}

/* Every name GM_TUNE may set. */
constexpr const char *gm_tune_names[] = {
    "i32.basic_threads", "i32.basic_items", "i32.tiled_threads", "i32.tiled_items",
    "i32.circ_threads",  "i32.circ_items",  "i32.sort_threads",  "i32.multi_threads",
    "i32.multi_items",   "i32.multi_pipelined",
    "i64.basic_threads", "i64.basic_items", "i64.tiled_threads", "i64.tiled_items",
    "i64.circ_threads",  "i64.circ_items",  "i64.sort_threads",  "i64.multi_threads",
    "i64.multi_items",   "i64.multi_pipelined",
    "tiled_steps", "self_search_max_tiles", "partition_32_max_tiles",
    "partition_8_max_tiles", "multi_min_bytes_log2", "multi_gaps", "multi_oversample",
};

/* Whether every name set in GM_TUNE is one of gm_tune_names. */
constexpr bool gm_tune_known()
{
    const char *s = GM_TUNE;
    for (int i = 0; s[i]; i++) {
        if (i > 0 && s[i - 1] != ' ')
            continue;
        if (s[i] == ' ')
            continue;
        bool found = false;
        for (const char *name : gm_tune_names)
            found = found || gm_tune_match(s, i, name);
        if (!found)
            return false;
    }
    return true;
}
static_assert(gm_tune_known(), "GM_TUNE sets a name that policy.cuh does not know");

/* ------------------------------------------------------------------ shapes */

/*
 * Block shapes, THREADS x ITEMS keys a tile: ITEMS odd, so that the staging
 * writes of a warp (thread t from t ITEMS on) fall in distinct shared-memory banks;
 * int64 keeps about half the keys a thread of int32, so a tile has about the same
 * bytes. Every value measured on sm_90 with bench/tune.sh, `kernels 28 merge` and
 * `kernels 28 sort` (bench/RESULTS.md, "Tuning").
 */
template <typename K> struct shape;

template <> struct shape<int32_t> {
    /* basic kernel: 128 threads, the block the other shapes were scaled from */
    static constexpr int BASIC_THREADS = tuned("i32.basic_threads", 128);
    /* basic kernel: the tiled kernel's ITEMS (a teaching kernel, never tuned apart) */
    static constexpr int BASIC_ITEMS = tuned("i32.basic_items", 19);
    /* tiled kernel: 256 beat 128 (per-tile costs over more keys); 512 exceeds 48 KB a block */
    static constexpr int TILED_THREADS = tuned("i32.tiled_threads", 256);
    /* tiled kernel and block sort: 19 sorts faster than 17 and 15, merges as fast */
    static constexpr int TILED_ITEMS = tuned("i32.tiled_items", 19);
    /* circular kernel: 128 x 15 fastest of 128/256 threads x 7..23 items */
    static constexpr int CIRC_THREADS = tuned("i32.circ_threads", 128);
    static constexpr int CIRC_ITEMS = tuned("i32.circ_items", 15);
    /* block sort: 512 threads (four basic blocks); 1024 (one block an SM) was slower */
    static constexpr int SORT_THREADS = tuned("i32.sort_threads", 512);
    /* four-way pass: 256 threads beat 128 of twice the items (more threads hide more latency) */
    static constexpr int MULTI_THREADS = tuned("i32.multi_threads", 256);
    static constexpr int MULTI_ITEMS = tuned("i32.multi_items", 17);
    /* four-way pass: loading the next chunk while merging loses with 6 blocks of 256 resident */
    static constexpr bool MULTI_PIPELINED = tuned("i32.multi_pipelined", 0);
};

template <> struct shape<int64_t> {
    /* basic kernel: as int32, about half the keys a thread */
    static constexpr int BASIC_THREADS = tuned("i64.basic_threads", 128);
    static constexpr int BASIC_ITEMS = tuned("i64.basic_items", 11);
    /* tiled kernel: 256 threads, as int32 (128 slower) */
    static constexpr int TILED_THREADS = tuned("i64.tiled_threads", 256);
    /* tiled kernel and block sort: 11 sorts faster than 9 and 7, merges as fast */
    static constexpr int TILED_ITEMS = tuned("i64.tiled_items", 11);
    /* circular kernel: 128 x 11 fastest of 128/256 threads x 3..11 items */
    static constexpr int CIRC_THREADS = tuned("i64.circ_threads", 128);
    static constexpr int CIRC_ITEMS = tuned("i64.circ_items", 11);
    /* block sort: 512 threads, as int32 */
    static constexpr int SORT_THREADS = tuned("i64.sort_threads", 512);
    /* four-way pass: 128 x 19 beat 256 threads of half the items (fewer co-rank searches a key) */
    static constexpr int MULTI_THREADS = tuned("i64.multi_threads", 128);
    static constexpr int MULTI_ITEMS = tuned("i64.multi_items", 19);
    /* four-way pass: pipelined pays with only 5 blocks of 128 threads resident */
    static constexpr bool MULTI_PIPELINED = tuned("i64.multi_pipelined", 1);
};

/* Unsigned keys (the key-value sorts' key prefixes) take the shapes of the signed
 * keys of their width: the kernels' shared memory and registers see only the
 * width. */
template <> struct shape<uint32_t> : shape<int32_t> {};
template <> struct shape<uint64_t> : shape<int64_t> {};

/* The tiled kernel's coarse partition: co-ranks found to within a step of
 * TILED_TILE / steps keys (partition.cu); 4 beat 3, 8 and 16, and 1 (exact
 * co-ranks). */
constexpr int TILED_STEPS = tuned("tiled_steps", 4);

/* ------------------------------------------------------------------ architectures */

template <int ARCH> struct arch;
template <> struct arch<750> {            /* Turing */
    static constexpr int SM_THREADS = 1024;           /* threads a multiprocessor holds */
    static constexpr int SM_SHARED = 64 * 1024;       /* shared memory a multiprocessor has */
    static constexpr int BLOCK_RESERVED = 0;          /* shared memory the system keeps a block */
};
template <> struct arch<800> {            /* Ampere (GA100) */
    static constexpr int SM_THREADS = 2048;
    static constexpr int SM_SHARED = 164 * 1024;
    static constexpr int BLOCK_RESERVED = 1024;
};
template <> struct arch<900> {            /* Hopper */
    static constexpr int SM_THREADS = 2048;
    static constexpr int SM_SHARED = 228 * 1024;
    static constexpr int BLOCK_RESERVED = 1024;
};

/* The architecture device code is compiled for (sm_86 and sm_89 run the sm_80
 * code, newer devices the sm_90 PTX); the host pass, which only parses the
 * __launch_bounds__, sees sm_90's. */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define GM_ARCH 900
#elif __CUDA_ARCH__ >= 800
#define GM_ARCH 800
#else
#define GM_ARCH 750
#endif

/* Blocks of `threads` threads and `smem` bytes of shared memory that one
 * multiprocessor of ARCH holds at once, at least one. */
template <int ARCH> constexpr int resident_blocks(int threads, int smem)
{
    int by_threads = arch<ARCH>::SM_THREADS / threads;
    int by_smem = arch<ARCH>::SM_SHARED / (smem + arch<ARCH>::BLOCK_RESERVED);
    int b = by_threads < by_smem ? by_threads : by_smem;
    return b > 0 ? b : 1;
}

/* ------------------------------------------------------------------ host choices */

struct choice {
    /* Up to this many tiles the tiled kernel's blocks find their own co-ranks, with
     * no partition kernel before them (a launch saved, against a search every block
     * waits for): `kernels 28 lanes`, won at 2^20 keys, tied at 2^22, lost at 2^24. */
    static constexpr int64_t SELF_SEARCH_MAX_TILES = tuned("self_search_max_tiles", 1024);
    /* Partition lanes a tile: 32 up to this many tiles (the search chain's latency
     * is the cost), ... */
    static constexpr int64_t PARTITION_32_MAX_TILES = tuned("partition_32_max_tiles", 2048);
    /* ... 8 up to this many, then one (the partition's loads cost bandwidth the
     * merge needs): `kernels 28 lanes`. */
    static constexpr int64_t PARTITION_8_MAX_TILES = tuned("partition_8_max_tiles", 8192);
    /* The sort's four-way passes from this many bytes of keys: below, two-way passes
     * partly run in L2 while the four-way merge is bound by instructions anyway. */
    static constexpr int64_t MULTI_MIN_BYTES = (int64_t)1 << tuned("multi_min_bytes_log2", 28);
    /* Sample gaps a four-way block walks: GAPS / 4 chunks of output. */
    static constexpr int MULTI_GAPS = tuned("multi_gaps", 32);
    /* Samples of a run per quarter chunk: 2 was slower for both widths. */
    static constexpr int MULTI_OVERSAMPLE = tuned("multi_oversample", 1);
    /* --kernel=auto picks the basic kernel below this many keys (one launch, its
     * threads searching for themselves) and the tiled kernel from it on. */
    static constexpr int64_t AUTO_TILED_FROM = (int64_t)1 << 16;
};

/* ------------------------------------------------------------------ derived */

/* The sizes that follow from the shapes, for host and device. */
template <typename K> struct tiles : shape<K> {
    using S = shape<K>;
    static constexpr int BASIC_TILE = S::BASIC_THREADS * S::BASIC_ITEMS;
    static constexpr int TILED_TILE = S::TILED_THREADS * S::TILED_ITEMS;
    static constexpr int TILED_STEP = TILED_STEPS > 1 ? TILED_TILE / TILED_STEPS : 1;
    static constexpr int CIRC_TILE = S::CIRC_THREADS * S::CIRC_ITEMS;
    /* The block sort's threads each sort TILED_ITEMS keys in registers. */
    static constexpr int SORT_ITEMS = S::TILED_ITEMS;
    static constexpr int SORT_TILE = S::SORT_THREADS * SORT_ITEMS;
    static constexpr int MULTI_TILE = S::MULTI_THREADS * S::MULTI_ITEMS;
    /* The smallest tile of a two-way pass: it bounds the co-rank scratch. */
    static constexpr int MIN_TILE = BASIC_TILE < TILED_TILE ? BASIC_TILE : TILED_TILE;

    static_assert(S::BASIC_ITEMS % 2 && S::TILED_ITEMS % 2 && S::CIRC_ITEMS % 2 &&
                      S::MULTI_ITEMS % 2,
                  "ITEMS odd: a warp's staging writes in distinct banks");
    static_assert(SORT_TILE % TILED_TILE == 0, "sort runs are whole tiled tiles");
    static_assert(TILED_STEPS <= 1 || TILED_TILE % TILED_STEPS == 0,
                  "a tiled tile is a whole number of steps");
    static_assert(choice::MULTI_GAPS * choice::MULTI_OVERSAMPLE <= S::MULTI_THREADS,
                  "a chunk's end is found by one thread per entry");
};

#endif
