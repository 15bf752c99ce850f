/*
 * keys.h - sort's key definitions and its comparison of two lines: -k POS1[,POS2]
 * with field and character positions and per-key flags, -t, -b, the numeric
 * orders -n (numcompare), -g (general_numcompare) and -h (human_numcompare), byte
 * order, and the last-resort comparison of whole lines that -s and -u turn off.
 * The rules are coreutils sort.c's (keycompare, begfield, limfield, compare), read
 * in the C locale: blanks are space, tab and newline, the decimal point is '.',
 * there is no thousands separator.
 *
 * Besides the exact comparison, a line's first key is encoded into a 64-bit
 * prefix whose unsigned order follows the key order (DuckDB normalises its sort
 * keys the same way): the sorts compare prefixes first and call the exact
 * comparison only when two prefixes are equal.
 *
 * Room keys/, above base/: the keys and their orders, written once for the host
 * and, where the device needs them, for the device too: -k's specs, the line
 * comparisons, the numeric, version and text orders, the 64-bit key prefix
 * (keyprefix.h), GM_HD (hd.h) and the co-rank (corank.h). cuda/ includes this
 * room, so it includes nothing of the core but base/types.h.
 */
#ifndef GM_KEYS_H
#define GM_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "base/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a key's text is ordered. */
typedef enum gm_order {
    GM_ORDER_BYTES,   /* memcmp, shorter first on a common prefix (no flag) */
    GM_ORDER_NUMERIC, /* -n: sort's numcompare */
    GM_ORDER_GENERAL, /* -g: sort's general_numcompare (strtold) */
    GM_ORDER_HUMAN,   /* -h: sort's human_numcompare (SI suffix, then -n) */
    GM_ORDER_MONTH,   /* -M: sort's getmonth (JAN < ... < DEC, unknown first) */
    GM_ORDER_RANDOM,  /* -R: sort's compare_random (MD5 of a seed and the key) */
    GM_ORDER_VERSION  /* -V: gnulib's filenvercmp */
} gm_order;

/* What a key's comparison skips (sort's ignore tables). */
enum {
    GM_IGNORE_NONE,
    GM_IGNORE_DICT,  /* -d: all but letters, digits and blanks */
    GM_IGNORE_PRINT  /* -i: all but printable bytes (0x20 to 0x7e) */
};

/* The order letters of a key (sort's key_to_opts spells them in this order). */
#define GM_ORDER_LETTERS "dfghiMnRV"

/* One -k, as sort.c's struct keyfield: fields and characters counted from 0 here
 * (-k 2.3 is sword 1, schar 2). eword SIZE_MAX: to the end of the line; echar 0:
 * to the end of field eword. */
typedef struct gm_keydef {
    size_t sword, schar; /* POS1's field and character (gm_keyspec_parse_key, _obsolete) */
    size_t eword, echar; /* POS2's field and character, or the line's end as above */
    int skipsblanks;  /* 'b' on POS1 (or -b inherited) */
    int skipeblanks;  /* 'b' on POS2 (or -b inherited) */
    gm_order order;   /* its letters' order (gm_keydef_set_letters), or the global one */
    int fold;         /* 'f': lower case compared as upper case */
    int ignore;       /* 'd' or 'i': GM_IGNORE_DICT or GM_IGNORE_PRINT */
    int reverse;      /* 'r' */
    int has_flags;    /* the key named flags of its own (then it inherits nothing) */
} gm_keydef;

#define GM_MAX_KEYS 64

/* The whole ordering of a run: built by the command line (gm_keyspec_init,
 * gm_keyspec_parse_key for each -k, the global flags set in the fields, then
 * gm_keyspec_finish), read by every path that compares lines. */
typedef struct gm_keyspec {
    gm_keydef keys[GM_MAX_KEYS]; /* the -k keys in order (append_key), or finish's one */
    int nkeys;        /* keys in use: append_key, gm_keyspec_finish */
    int tab;          /* -t's byte, or -1: fields begin at the blanks before them */
    /* global options, inherited by keys without flags of their own */
    gm_order order;   /* -n, -g, -h, -M, -R, -V, or GM_ORDER_BYTES when none was given */
    int order_given;  /* one of them appeared globally */
    int fold;         /* -f */
    int ignore;       /* -d or -i (GM_IGNORE_DICT wins, as in sort) */
    int bytes_default; /* no order named means bytes (gpusort), not -n (gpumerge) */
    int order_implied; /* set by gm_keyspec_finish: -n taken for want of an order */
    unsigned char random_seed[16]; /* -R: the 16 bytes MD5 hashes before each key */
    int reverse;      /* -r: also reverses the last resort */
    int skip_blanks;  /* -b */
    int stable;       /* -s: no last-resort comparison */
    int unique;       /* -u: no last-resort comparison; equal keys are duplicates */
    char eol;         /* '\n', or '\0' with -z */
    /* set by gm_keyspec_finish */
    int key_made;     /* no -k: finish made the one whole-line key */
    int whole_line_numeric; /* the order is -n on whole lines, one key or none: the
                               integer path (canonical integers) may serve it */
} gm_keyspec;

/* A spec with no keys, -n not yet implied, '\n' lines. */
void gm_keyspec_init(gm_keyspec *ks);

/* letters: bit i set for GM_ORDER_LETTERS[i], as a key's flags or the global
 * options name them. sort refuses more than one of n, g, h, M and one of V, R,
 * d, i: then returns 1 with the letters named, in sort's order, in out. */
int gm_order_incompatible(unsigned letters, char out[16]);

/* Sets the order and flags of k from letters (the flags of one key or the
 * global options): the order by sort's precedence (n, g, h, M, R, V), 'f',
 * and 'd' over 'i'. */
void gm_keydef_set_letters(gm_keydef *k, unsigned letters);

/* Parses one -k argument ("2,2n", "1.3b,1.5", "3") and appends it. Returns GM_OK,
 * or GM_EUSAGE with sort's own message ("invalid number at field start: invalid
 * count at start of '0,1'", "field number is zero: invalid field specification
 * '0'", "invalid number after '.': ...", "stray character in field spec: ...",
 * and "keys may not use options other than b, g, h, n and r" style refusals for
 * the flags gpumerge does not implement: d f i M R V). */
int gm_keyspec_parse_key(gm_keyspec *ks, const char *arg, gm_status *st);

/* sort's obsolete key: pos1 "+F[.C][FLAGS]" and pos2 "-F[.C][FLAGS]" or NULL,
 * fields and characters counted from 0, as -k F+1[.C+1][FLAGS] ending (pos2)
 * after field F where C is 0, else at character C of field F+1. Sets *is_key to 0
 * and appends nothing when pos1 is not such a position (sort reads it as a file
 * name); else appends the key. Returns GM_OK, or GM_EUSAGE with sort's message for
 * a bad pos2 ("stray character in field spec: invalid field specification '-2x'",
 * "invalid number after '.': ...") or as gm_keyspec_parse_key's. */
int gm_keyspec_parse_obsolete(gm_keyspec *ks, const char *pos1, const char *pos2,
                              int *is_key, gm_status *st);

/* After every option is in: keys without flags of their own take the global ones
 * (sort's default_key_compare rule); when nothing names an order (no -n, -g, -h
 * globally or on any key), -n is implied, as gpumerge is sort -n; without -k the
 * whole line is the one key (with the global order; key_made). Sets
 * whole_line_numeric. */
void gm_keyspec_finish(gm_keyspec *ks);

/* ks (finished) spelt as sort's options into out: "-t, -k2,2n -s", "-n on whole
 * lines", with "(no order named: ...)" where the order is a default. */
void gm_keyspec_say(const gm_keyspec *ks, char *out, size_t size);

/* sort's compare(): the keys in turn, then, unless stable or unique, the whole
 * lines as bytes (reversed by the global -r). Lines are given without their
 * terminator. Returns <0, 0 or >0. */
int gm_line_cmp(const gm_keyspec *ks, const unsigned char *a, size_t alen,
                const unsigned char *b, size_t blen);

/* The keys only (sort's keycompare): what -u calls equal. */
int gm_key_cmp(const gm_keyspec *ks, const unsigned char *a, size_t alen,
               const unsigned char *b, size_t blen);

/* The first key's 64-bit prefix: prefix(a) < prefix(b) implies
 * gm_line_cmp(a, b) < 0 (the order's direction, -r included, is in the
 * encoding). *exact is set when equal prefixes mean equal first keys, so that a
 * comparison of two exact, equal prefixes may go on from the second key
 * (gm_line_cmp_from). exact may be NULL. */
uint64_t gm_line_prefix(const gm_keyspec *ks, const unsigned char *line, size_t len,
                        int *exact);

/* gm_line_cmp starting at key `from` (0: as gm_line_cmp); from == nkeys compares
 * only what follows the keys (the last resort, unless stable or unique). */
int gm_line_cmp_from(const gm_keyspec *ks, int from, const unsigned char *a, size_t alen,
                     const unsigned char *b, size_t blen);

#ifdef __cplusplus
}
#endif

#endif
