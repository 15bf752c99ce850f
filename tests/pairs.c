/*
 * pairs.c - pairs.h: key-value cases for the GPU's pair sort and merge, and the
 * reference they are checked against, a stable sort of (key, index) on the host
 * (qsort over the key's order and the input position, which makes the order total
 * and so the answer the one stable order).
 */
#define _GNU_SOURCE
#include "pairs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const pair_way sort_ways[] = {
    { "basic", GM_KERNEL_BASIC, { 0 } },
    { "tiled", GM_KERNEL_TILED, { 0 } },
    { "tiled, four-way passes", GM_KERNEL_TILED, { .sort_ways = 4 } },
    { "circular", GM_KERNEL_CIRCULAR, { 0 } },
    { "auto", GM_KERNEL_AUTO, { 0 } },
};
static const pair_way merge_ways[] = {
    { "basic", GM_KERNEL_BASIC, { 0 } },
    { "tiled", GM_KERNEL_TILED, { 0 } },
    { "tiled, each block searches", GM_KERNEL_TILED, { .partition = GM_PARTITION_NONE } },
    { "tiled, partition 1 lane", GM_KERNEL_TILED, { .partition = GM_PARTITION_LANES_1 } },
    { "tiled, partition 8 lanes", GM_KERNEL_TILED, { .partition = GM_PARTITION_LANES_8 } },
    { "circular", GM_KERNEL_CIRCULAR, { 0 } },
    { "circular, 3 blocks", GM_KERNEL_CIRCULAR, { .circular_blocks = 3 } },
    { "auto", GM_KERNEL_AUTO, { 0 } },
};

const pair_way *pair_ways(int sort, int *count)
{
    *count = sort ? (int)(sizeof sort_ways / sizeof *sort_ways)
                  : (int)(sizeof merge_ways / sizeof *merge_ways);
    return sort ? sort_ways : merge_ways;
}

const char *pair_key_name(gm_pair_key type)
{
    static const char *names[] = { "int32", "int64", "uint32", "uint64" };
    return names[type];
}

int pair_key_width(gm_pair_key type)
{
    return type == GM_PAIR_I32 || type == GM_PAIR_U32 ? 4 : 8;
}

static int key_signed(gm_pair_key type)
{
    return type == GM_PAIR_I32 || type == GM_PAIR_I64;
}

/* The key's bits (zero-extended for 4-byte keys). */
static uint64_t key_bits(gm_pair_key type, const void *keys, int64_t i)
{
    if (pair_key_width(type) == 4)
        return ((const uint32_t *)keys)[i];
    return ((const uint64_t *)keys)[i];
}

static void set_key(gm_pair_key type, void *keys, int64_t i, uint64_t bits)
{
    if (pair_key_width(type) == 4)
        ((uint32_t *)keys)[i] = (uint32_t)bits;
    else
        ((uint64_t *)keys)[i] = bits;
}

/* The key's place in the order, as an unsigned number: signed keys with their
 * sign bit flipped; descending: complemented. */
static uint64_t key_order(gm_pair_key type, const void *keys, int64_t i, int reverse)
{
    uint64_t b = key_bits(type, keys, i);
    if (key_signed(type))
        b ^= pair_key_width(type) == 4 ? 0x80000000u : 0x8000000000000000u;
    return reverse ? ~b : b;
}

static uint64_t draw_key(rng *r, gm_pair_key type, enum pair_dist d)
{
    int w = pair_key_width(type);
    uint64_t top = w == 4 ? 0x80000000u : 0x8000000000000000u, all = w == 4 ? 0xffffffffu : ~0ull;
    /* the type's least and largest, as bits */
    uint64_t least = key_signed(type) ? top : 0, largest = key_signed(type) ? top - 1 : all;
    switch (d) {
    case PAIR_FEW: {
        uint64_t pick[5] = { 0, 1, top - 1, top, all };
        return pick[rng_range(r, 0, 4)];
    }
    case PAIR_EQUAL:
        return 7;
    case PAIR_ENDS: {
        int64_t x = rng_range(r, 0, 15);
        return x < 7 ? least : x < 14 ? largest : rng_next(r) & all;
    }
    default:
        return rng_next(r) & all;
    }
}

struct ranked {
    uint64_t order;
    int64_t at;
};

static int by_rank(const void *x, const void *y)
{
    const struct ranked *a = x, *b = y;
    if (a->order != b->order)
        return a->order < b->order ? -1 : 1;
    return a->at < b->at ? -1 : a->at > b->at;
}

/* Sorts pairs [lo, hi) of keys and vals stably into (to_keys, to_vals) from lo. */
static void stable_sort(gm_pair_key type, int reverse, const void *keys, const uint32_t *vals,
                        int64_t lo, int64_t hi, void *to_keys, uint32_t *to_vals)
{
    int64_t n = hi - lo;
    struct ranked *r = malloc((size_t)(n + 1) * sizeof *r);
    for (int64_t i = 0; i < n; i++)
        r[i] = (struct ranked){ key_order(type, keys, lo + i, reverse), lo + i };
    qsort(r, (size_t)n, sizeof *r, by_rank);
    for (int64_t i = 0; i < n; i++) {
        set_key(type, to_keys, lo + i, key_bits(type, keys, r[i].at));
        to_vals[lo + i] = vals[r[i].at];
    }
    free(r);
}

void pair_case_make(pair_case *c, rng *r, gm_pair_key type, int64_t n, int64_t m,
                    enum pair_dist d, int reverse)
{
    size_t kb = (size_t)(n + 1) * (size_t)pair_key_width(type), vb = (size_t)(n + 1) * 4;
    *c = (pair_case){ type, n, m, reverse, malloc(kb), malloc(vb), malloc(kb), malloc(vb) };
    for (int64_t i = 0; i < n; i++) {
        set_key(type, c->keys, i, draw_key(r, type, d));
        c->vals[i] = (uint32_t)i * 2654435761u; /* odd: distinct for distinct i */
    }
    if (m >= 0) { /* each run sorted, in place (through want) */
        stable_sort(type, reverse, c->keys, c->vals, 0, m, c->want_keys, c->want_vals);
        stable_sort(type, reverse, c->keys, c->vals, m, n, c->want_keys, c->want_vals);
        memcpy(c->keys, c->want_keys, (size_t)n * (size_t)pair_key_width(type));
        memcpy(c->vals, c->want_vals, (size_t)n * 4);
    }
    /* the stable merge of two sorted runs is the stable sort of both */
    stable_sort(type, reverse, c->keys, c->vals, 0, n, c->want_keys, c->want_vals);
}

void pair_case_free(pair_case *c)
{
    free(c->keys);
    free(c->vals);
    free(c->want_keys);
    free(c->want_vals);
}

int pair_case_check(const pair_case *c, const pair_way *way, char *msg, size_t cap)
{
    size_t kb = (size_t)(c->n + 1) * (size_t)pair_key_width(c->type), vb = (size_t)(c->n + 1) * 4;
    void *keys = malloc(kb);
    uint32_t *vals = malloc(vb);
    memcpy(keys, c->keys, kb - (size_t)pair_key_width(c->type));
    memcpy(vals, c->vals, vb - 4);
    gm_status st;
    gm_gpu_force(&way->forced);
    int rc = c->m < 0 ? gm_gpu_test_sort_pairs(c->type, keys, vals, c->n, c->reverse,
                                               way->kernel, &st)
                      : gm_gpu_test_merge_pairs(c->type, keys, vals, c->m, c->n - c->m,
                                                c->reverse, way->kernel, &st);
    gm_gpu_force(NULL);
    int bad = 0;
    if (rc != GM_OK) {
        snprintf(msg, cap, "GPU failed: %s", st.msg);
        bad = 1;
    }
    for (int64_t i = 0; !bad && i < c->n; i++) {
        uint64_t got = key_bits(c->type, keys, i), want = key_bits(c->type, c->want_keys, i);
        if (got != want || vals[i] != c->want_vals[i]) {
            snprintf(msg, cap, "pair %lld is (%#llx, %u), want (%#llx, %u)", (long long)i,
                     (unsigned long long)got, vals[i], (unsigned long long)want,
                     c->want_vals[i]);
            bad = 1;
        }
    }
    free(keys);
    free(vals);
    return bad;
}
