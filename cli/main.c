/*
 * main.c - gpumerge's entry point: parse the command line, run merge, sort or
 * check through the core (core/gm.h), and turn the resulting status into a message
 * and an exit code. This is the only place the program exits.
 *
 * Exit status, as sort(1): 0 success, 1 check found disorder, 2 any error.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../core/gm.h"
#include "options.h"

enum { EXIT_OK = 0, EXIT_DISORDER = 1, EXIT_TROUBLE = 2 };

/* The core's messages (-v, notices, --progress) go to standard error. */
static void print_message(void *ctx, gm_message kind, const char *text)
{
    (void)ctx;
    (void)kind;
    fprintf(stderr, "gpumerge: %s\n", text);
}

int main(int argc, char **argv)
{
    gm_status st = { GM_OK, "" };
    gm_cli cli;
    if (gm_cli_parse(argc, argv, &cli, &st) != GM_OK) {
        fprintf(stderr, "gpumerge: %s\n", st.msg);
        return EXIT_TROUBLE;
    }
    if (cli.show_help) {
        gm_cli_usage(stdout);
        return fflush(stdout) == 0 ? EXIT_OK : EXIT_TROUBLE;
    }
    if (cli.show_version) {
        printf("gpumerge %s\n", GM_VERSION);
        return fflush(stdout) == 0 ? EXIT_OK : EXIT_TROUBLE;
    }

    cli.config.message = print_message;
    int rc = gm_run(cli.op, &cli.config, cli.files, cli.nfiles, &st);
    switch (rc) {
    case GM_OK:
        return EXIT_OK;
    case GM_DISORDER:
        fprintf(stderr, "gpumerge: %s\n", st.msg);
        return EXIT_DISORDER;
    case GM_EPIPE:
        return EXIT_TROUBLE; /* the reader went away: nothing to say */
    default:
        fprintf(stderr, "gpumerge: %s\n", st.msg);
        return EXIT_TROUBLE;
    }
}
