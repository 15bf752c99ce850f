/*
 * format.h - keys as canonical decimal text, one per line (format.c): a single
 * key (gm_format_i64), and a block of a sorted chunk with -u's rule applied
 * (gm_format_block), whose length gm_format_length knows beforehand.
 */
#ifndef GM_FORMAT_H
#define GM_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "base/types.h"

/* Formats one key as canonical decimal at p and returns the end (no newline).
 * p needs 20 bytes. */
char *gm_format_i64(char *p, int64_t v);

/* A block is at most GM_FORMAT_BLOCK_BYTES of text: gm_format_block_keys(w) keys
 * of width w (65536 int32 keys or 37449 int64 keys, at most 12 and 21 bytes a
 * line). */
enum { GM_FORMAT_BLOCK_BYTES = 12 << 16 };
int64_t gm_format_block_keys(gm_width w);

/* The bytes gm_format_block writes for the same arguments. */
size_t gm_format_length(const gm_keys *keys, int unique, const int64_t *before,
                        int64_t lo, int64_t hi);

/* Formats keys [lo, hi) of keys at out, each followed by eol, writing nothing at
 * or after end (the block's room: a buffer, or its exact share of a mapping).
 * With unique, a key equal to the one before it is left out, and so is key 0
 * where it equals *before (the key written just before the chunk; NULL: none).
 * Returns the length. */
size_t gm_format_block(const gm_keys *keys, int unique, const int64_t *before,
                       int64_t lo, int64_t hi, char eol, char *out, const char *end);

#endif
