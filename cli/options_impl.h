/*
 * options_impl.h - what the files of the option parser share: the option ids, the
 * state of one parse, and each file's helpers. options.c holds the table and the
 * loop over argv, optapply.c what each option does, optnum.c sort's numbers,
 * optmsg.c sort's messages, files0.c --files0-from, usage.c --help. Not part of
 * the CLI's interface (options.h).
 */
#ifndef GM_OPTIONS_IMPL_H
#define GM_OPTIONS_IMPL_H

#include <stddef.h>

#include "options.h"

/* The most threads --parallel and --threads take. */
#define GM_CLI_MAX_THREADS 4096

/* The ids of options without a short letter (the others are their letter). */
enum {
    OPT_CHECK = 256, OPT_COMPRESS_PROGRAM, OPT_DEBUG, OPT_FILES0_FROM, OPT_BATCH_SIZE,
    OPT_RANDOM_SOURCE, OPT_SORT, OPT_PARALLEL, OPT_HELP, OPT_VERSION,
    OPT_DEVICE, OPT_KERNEL, OPT_THREADS, OPT_PROGRESS, OPT_STRICT, OPT_GPU
};

/* State that lives only while parsing. */
typedef struct gm_cli_state {
    int check;              /* 0, 'c' or 'C' */
    int merge;              /* -m seen */
    const char *files_from; /* --files0-from */
    unsigned letters;       /* the global order letters given (GM_ORDER_LETTERS' bits) */
    int keyed;              /* -k seen */
    int tabbed;             /* -t seen */
    const char *random_source; /* --random-source, or NULL */
    int posix;              /* POSIXLY_CORRECT is set */
    int traditional;        /* sort's traditional usage: +POS1 keys, and -o after a
                               file under POSIXLY_CORRECT (_POSIX2_VERSION) */
    const char *obsolete;   /* the first +POS1 taken as a key, or NULL */
} gm_cli_state;

/* optapply.c: applies option id with its argument (or NULL); spelled is the
 * option as messages name it ("-S" or "--buffer-size"). Returns GM_OK, or the
 * code with the message in st. */
int gm_cli_apply(gm_cli *cli, gm_cli_state *ps, int id, const char *arg, const char *spelled,
                 gm_status *st);
/* An option gpumerge does not implement, named as given (spelled after the
 * prefix: "--sort=" and the word, or "" and the option): GM_EUSAGE with the
 * reason; GM_OK when id is not refused. */
int gm_cli_refuse(int id, const char *spelled, const char *prefix, gm_status *st);
/* Two global orders are refused as sort refuses them: where a key takes the
 * global options (no -k, or a key without flags of its own). */
int gm_cli_check_orders(const gm_cli *cli, const gm_cli_state *ps, gm_status *st);

/* optnum.c: -R's seed: the first 16 bytes of source (NULL: getrandom), as
 * sort's randread takes them. Returns GM_OK or GM_EUSAGE ("open failed: FILE:
 * REASON", "'FILE': end of file"). */
int gm_cli_random_seed(const char *source, unsigned char seed[16], gm_status *st);

/* optnum.c: -S (sort's specify_sort_size), --parallel (specify_nthreads),
 * --batch-size (specify_nmerge) and --gpu, into cli->config. */
int gm_cli_parse_size(gm_cli *cli, const char *opt, const char *arg, gm_status *st);
int gm_cli_parse_parallel(gm_cli *cli, const char *arg, gm_status *st);
int gm_cli_parse_batch_size(gm_cli *cli, const char *arg, gm_status *st);
/* --gpu=N: a device number (from 0), in the words sort uses for a bad count. */
int gm_cli_parse_gpu(gm_cli *cli, const char *arg, gm_status *st);

/* files0.c: reads --files0-from's names into cli->files (cli->names0 holds
 * their text). */
int gm_cli_read_files0(gm_cli *cli, const char *from, gm_status *st);

/* optmsg.c: a usage error (the message, then the hint, as sort's
 * usage(SORT_FAILURE)); a fatal error in sort's words, without the hint (as sort's
 * die()); both GM_EUSAGE, fmt taking the one string arg. */
int gm_cli_usage_error(gm_status *st, const char *fmt, const char *arg);
int gm_cli_die(gm_status *st, const char *fmt, const char *arg);
/* A name always in single quotes, ' written as '\'' (gnulib's quoteaf). */
const char *gm_cli_quote_always(const char *s, char *buf, size_t size);
/* An argument that is none of valid's words: getopt's "invalid argument". */
int gm_cli_bad_choice(gm_status *st, const char *opt, const char *arg, const char *valid);
/* Maps arg to the index of one of names[], or -1. */
int gm_cli_pick(const char *arg, const char *const *names, int count);
/* gnulib's argmatch: sets *index to the choice that arg names exactly or
 * abbreviates unambiguously among count names, or fails with sort's message,
 * which lists the first listed of them (the choices gpumerge accepts; the others
 * are known only to be refused by name). */
int gm_cli_arg_match(const char *opt, const char *arg, const char *const *names, int count,
                     int listed, int *index, gm_status *st);

#endif
