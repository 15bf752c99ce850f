/*
 * options.h - the command line of gpumerge: subcommand, options (getopt_long, as
 * coreutils' sort does it) and file operands, checked before any work is done.
 */
#ifndef GM_OPTIONS_H
#define GM_OPTIONS_H

#include <stdio.h>

#include "../core/gm.h"

typedef struct gm_cli {
    int have_op;    /* a subcommand was given */
    gm_op op;
    gm_config config;
    char **files;   /* operands, in order */
    int nfiles;
    int show_help;  /* --help: print usage, exit 0 */
    int show_version;
} gm_cli;

/* Parses argv. Returns GM_OK, or GM_EUSAGE with the message in st. May reorder
 * argv (GNU argument permutation). */
int gm_cli_parse(int argc, char **argv, gm_cli *cli, gm_status *st);

/* The full --help text. */
void gm_cli_usage(FILE *to);

#endif
