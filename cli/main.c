/*
 * main.c - gpumerge's entry point: parse the command line, run merge, sort or
 * check through the core (core/gm.h), and turn the resulting status into a message
 * and an exit code. This is the only place the program exits.
 *
 * Exit status, as sort(1): 0 success, 1 check found disorder, 2 any error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../core/gm.h"
#include "options.h"

enum { EXIT_OK = 0, EXIT_DISORDER = 1, EXIT_TROUBLE = 2 };

/* The core's messages (-v, notices, --progress) go to standard error. On a
 * terminal a progress line is redrawn in place (\r, erase to the end of the line)
 * and ended before any other message; elsewhere it is a plain line. */
static int progress_shown;

static void print_message(void *ctx, gm_message kind, const char *text)
{
    (void)ctx;
    if (kind == GM_MSG_PROGRESS && isatty(STDERR_FILENO)) {
        fprintf(stderr, "\rgpumerge: %s\033[K", text);
        progress_shown = 1;
        return;
    }
    if (progress_shown)
        fputc('\n', stderr);
    progress_shown = 0;
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
    if (progress_shown)
        fputc('\n', stderr);
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
