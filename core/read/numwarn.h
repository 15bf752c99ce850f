/*
 * numwarn.h - gpumerge's one warning about its default order. Where no order is
 * named (gm_keyspec.order_implied), gpumerge orders lines by -n, as `sort -n`
 * would; a line whose key holds no number as -n reads one (after blanks, an
 * optional '-', then a digit, or a '.' and a digit) counts as zero there, which is
 * what text sorted by mistake looks like. The first such line is named once, on
 * standard error, through the run's messages ("FILE:LINE: no number in this line;
 * ..."); output and exit status stay sort -n's. A blank key says nothing (it is
 * zero to sort -n too), and neither does gpusort, an order named, or -C.
 *
 * The records path checks every line it reads from an input until the warning is
 * said: its split into records (linesplit.c) looks again only at lines whose -n
 * prefix is zero's; text that goes to the GPU unsplit is scanned as it is read
 * (gm_numwarn_block for a chunk, recspan.c for the sort in device memory). The
 * integer path needs no check: every line it serves is an integer.
 */
#ifndef GM_NUMWARN_H
#define GM_NUMWARN_H

#include <stddef.h>
#include <stdint.h>

#include "base/config.h"
#include "keys/keyprefix.h"
#include "read/lines.h"

/* The key whose lines a run of cfg checks: the first ordered by an implied -n;
 * -1 where nothing is checked (an order named, gpusort, -C, no message
 * function). */
int gm_numwarn_key(const gm_config *cfg);

/* Marks s, an input of a run of cfg, as checked (or not: gm_numwarn_key). */
void gm_numwarn_watch(gm_lines_src *s, const gm_config *cfg);

/* Whether the warning has been said in this process: the checks are over. */
int gm_numwarn_said(void);

/* Says the warning for line `line` (from 1) of the input shown (as messages show
 * it), unless it was said before; key is gm_numwarn_key's. */
void gm_numwarn_say(const gm_config *cfg, int key, const char *shown, int64_t line);

/* Whether key `key` of the line [s, s + len) holds a number as -n reads one, or is
 * blank: then nothing is said of it. */
static inline int gm_numwarn_holds(const gm_keyspec *ks, int key, const unsigned char *s,
                                   size_t len)
{
    size_t kl;
    const unsigned char *k = gm_kp_key_span(ks->tab, &ks->keys[key], s, len, &kl);
    size_t i = gm_kp_skip_blanks(k, kl, 0);
    if (i == kl)
        return 1;
    i += k[i] == '-';
    return (i < kl && gm_kp_digit(k[i])) ||
           (i + 1 < kl && k[i] == '.' && gm_kp_digit(k[i + 1]));
}

/* The prefix (gm_line_prefix) of a first key that -n reads as zero, or holds no
 * number: the only prefix whose line gm_numwarn_holds needs to look at. */
static inline uint64_t gm_numwarn_zero(const gm_keyspec *ks)
{
    uint64_t z = UINT64_C(0x80) << 56;
    return ks->keys[0].reverse ? ~z : z;
}

/* The first of the whole lines [p, p + len) (each ended by ks->eol) whose key
 * `key` holds no number, found on nthreads threads: its index from 0; SIZE_MAX
 * where there is none, and then *lines is the number of lines. */
size_t gm_numwarn_scan(const gm_keyspec *ks, int key, const unsigned char *p, size_t len,
                       int nthreads, size_t *lines);

/* Checks b, the block s handed out last, where s is checked (gm_numwarn_watch)
 * and nothing was said: by gm_numwarn_scan, saying the warning for the line
 * found. For text that is not split into records on the host. */
void gm_numwarn_block(const gm_lines_src *s, const gm_lines_block *b, int nthreads);

#endif
