/*
 * mapwrite.h - the mapping writer (mapwrite.c): a regular -o file written through
 * a shared mapping of its space, reserved first, with the threads formatting or
 * copying straight into the file's pages. The reserving ahead of gm_writer_ahead
 * (output.h) is done here too.
 */
#ifndef GM_MAPWRITE_H
#define GM_MAPWRITE_H

#include "write/output.h"

/* What the mapping writer returns where the file system or the mapping refuses:
 * nothing of the chunk counts, and the caller writes it with write(2). */
enum { GM_MAP_UNSUPPORTED = -1 };

/* For the tests: gm_output_test_map's modes. */
void gm_mapwrite_test(int mode);

/* The first byte is due: the way of writing is chosen (w->map). */
void gm_mapwrite_begin(gm_writer *w);

/* Formats one chunk of keys into the mapping, after the output so far. Returns 0,
 * GM_MAP_UNSUPPORTED or an errno value. */
int gm_mapwrite_put(gm_writer *w, const gm_keys *keys);

/* Copies text into the mapping, after the output so far. Returns as
 * gm_mapwrite_put. */
int gm_mapwrite_put_text(gm_writer *w, const char *text, size_t len);

/* Fills the next len bytes in pieces straight in the mapping (see
 * gm_writer_put_pieces). Returns as gm_mapwrite_put. */
int gm_mapwrite_put_pieces(gm_writer *w, size_t len, int npieces, const size_t *at,
                           gm_fill_fn fill, void *ctx);

/* Gives up the mapping for good: the output goes on with write(2) at its end.
 * Returns 0 or an errno value. */
int gm_mapwrite_abandon(gm_writer *w);

#endif
