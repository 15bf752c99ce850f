/*
 * options.h - the command line of gpumerge: sort's options (as GNU sort spells,
 * checks and reports them) plus gpumerge's own, an optional subcommand (merge,
 * sort, check) among the operands, and the input names (operands or
 * --files0-from), all checked before any work is done.
 */
#ifndef GM_OPTIONS_H
#define GM_OPTIONS_H

#include <stdio.h>

#include "../core/gm.h"

typedef struct gm_cli {
    int have_op;    /* a subcommand was given (else the mode comes from -m, -c, -C) */
    gm_op op;       /* merge, sort or check: operand() or finish() in options.c */
    gm_config config; /* what the options set (optapply.c, optnum.c); main.c adds the rest */
    gm_keyspec keyspec; /* the order of lines; config.keyspec points here */
    char **files;   /* input names, in order (owned: gm_cli_free) */
    int nfiles;     /* entries in files: operand() or gm_cli_read_files0 */
    int show_help;  /* --help: print usage, exit 0 */
    int show_version; /* --version: print the version text, exit 0 (optapply.c) */
    char *names0;   /* --files0-from's text, which files[] points into */
    int as_sort;    /* called as gpusort: byte order by default, no subcommands */
} gm_cli;

/* Parses argv. Returns GM_OK, or GM_EUSAGE with the message in st (several
 * lines for some of sort's messages, without the final newline). Reads the
 * --files0-from file. argv is not changed and must outlive cli. */
int gm_cli_parse(int argc, char **argv, gm_cli *cli, gm_status *st);

/* Frees what gm_cli_parse allocated. */
void gm_cli_free(gm_cli *cli);

/* The full --help text. */
void gm_cli_usage(FILE *to);

/* The --version text: version, the engine this binary was built with (version.c,
 * which the Makefile compiles with the build's description) and the device cfg's
 * --gpu names, or why there is none. */
void gm_cli_version(FILE *to, const gm_config *cfg);

#endif
