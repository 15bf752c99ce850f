/*
 * pairs.h - cases for the GPU's sort and merge of key-value pairs (cuda/testing.h:
 * gm_gpu_test_sort_pairs, gm_gpu_test_merge_pairs) and their reference on the
 * host: a stable sort of (key, index). Shared by the GPU suite (gpu_pairs.c) and by
 * gpupairs, the driver compute-sanitizer runs (tests/sanitize.sh); no Criterion.
 */
#ifndef GM_TEST_PAIRS_H
#define GM_TEST_PAIRS_H

#include <stddef.h>
#include <stdint.h>

#include "../cuda/testing.h"
#include "helpers.h"

/* Keys drawn over the whole type; from five (0, 1, the middle, the top bit, the
 * largest); all equal; mostly the type's least and largest (the key the block sort
 * pads with sorts last, in either direction). */
enum pair_dist { PAIR_WIDE, PAIR_FEW, PAIR_EQUAL, PAIR_ENDS };

/* One case: n pairs of keys of type `type` and uint32 values (each distinct, so a
 * value tells its pair's input position), sorted (m < 0) or merged as runs [0, m)
 * and [m, n), each sorted first; descending if reverse. want_*: the answer. */
typedef struct pair_case {
    gm_pair_key type;
    int64_t n, m;
    int reverse;
    void *keys;
    uint32_t *vals;
    void *want_keys;
    uint32_t *want_vals;
} pair_case;

/* A way of running a case: its kernel and the GPU choices forced meanwhile. */
typedef struct pair_way {
    const char *label;
    gm_kernel kernel;
    gm_gpu_choices forced;
} pair_way;

/* The ways a sort (sort = 1) or a merge runs in: every kernel, and the choices
 * that reach the paths small sizes would not (the four-way passes, the tiled
 * kernel's partitions, the circular kernel's long segments). *count: how many. */
const pair_way *pair_ways(int sort, int *count);

void pair_case_make(pair_case *c, rng *r, gm_pair_key type, int64_t n, int64_t m,
                    enum pair_dist d, int reverse);
void pair_case_free(pair_case *c);

/* Runs c on the GPU the given way and compares with the reference. Returns 0 when
 * they agree; else 1 with what differs (or the GPU's error) in msg. */
int pair_case_check(const pair_case *c, const pair_way *way, char *msg, size_t cap);

/* The key type's name and width in bytes. */
const char *pair_key_name(gm_pair_key type);
int pair_key_width(gm_pair_key type);

#endif
