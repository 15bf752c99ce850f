/*
 * main.c - gpumerge's entry point: parse the command line, run merge, sort or
 * check through the core (core/gm.h), and turn the resulting status into a message
 * and an exit code. This is the only place the program exits.
 *
 * `check` with several inputs checks each in turn, as `sort -c` would one by one,
 * and reports the first disorder in each; an error (an unreadable input, a line
 * that is not an integer) stops it.
 *
 * Exit status, as sort(1): 0 success, 1 check found disorder, 2 any error. A
 * reader of the output that goes away ends the process by SIGPIPE, as it ends
 * sort, unless SIGPIPE was ignored: then it is a write error like any other.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../core/gm.h"
#include "../core/base/util.h"
#include "options.h"

enum { EXIT_OK = 0, EXIT_DISORDER = 1, EXIT_TROUBLE = 2 };

/* The core's messages (-v, notices, --progress) go to standard error. On a
 * terminal a progress line is redrawn in place (\r, erase to the end of the line),
 * cut to the terminal's width so that it stays one line, and ended before any
 * other message; elsewhere it is a plain line. */
static int progress_shown;

static void print_message(void *ctx, gm_message kind, const char *text)
{
    (void)ctx;
    if (kind == GM_MSG_PROGRESS && isatty(STDERR_FILENO)) {
        struct winsize ws;
        int width = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20
                        ? ws.ws_col - 1 - (int)strlen("gpumerge: ") : INT_MAX;
        fprintf(stderr, "\rgpumerge: %.*s\033[K", width, text);
        progress_shown = 1;
        return;
    }
    if (progress_shown)
        fputc('\n', stderr);
    progress_shown = 0;
    fprintf(stderr, "gpumerge: %s\n", text);
}

/* Writes "gpumerge: MESSAGE" and end to standard error, the message's NUL bytes
 * included (a line shown as sort shows it). */
static void print_status(const gm_status *st, int end)
{
    fputs("gpumerge: ", stderr);
    fwrite(st->msg, 1, st->len ? st->len : strlen(st->msg), stderr);
    fputc(end, stderr);
}

/* A closed pipe, where SIGPIPE has not been ignored: the process ends by it, as
 * sort's sort_die ends it (the signal normally came with the failed write; the
 * core's handler, if installed, removes the temporary files first). Returns
 * where SIGPIPE is ignored. */
static void end_by_sigpipe(void)
{
    struct sigaction sa;
    if (sigaction(SIGPIPE, NULL, &sa) != 0 || sa.sa_handler == SIG_IGN)
        return;
    sigset_t only_pipe;
    sigemptyset(&only_pipe);
    sigaddset(&only_pipe, SIGPIPE);
    pthread_sigmask(SIG_UNBLOCK, &only_pipe, NULL);
    raise(SIGPIPE);
}

/* Maps a run's status to an exit code, printing its message where there is one
 * to print (none for -C's disorder). */
static int report(int rc, const gm_status *st, const gm_config *cfg)
{
    if (progress_shown)
        fputc('\n', stderr);
    progress_shown = 0;
    switch (rc) {
    case GM_OK:
        return EXIT_OK;
    case GM_DISORDER: /* ended as sort ends it: with the lines' terminator */
        if (!cfg->check_quiet)
            print_status(st, cfg->zero_terminated ? '\0' : '\n');
        return EXIT_DISORDER;
    case GM_EPIPE: /* the reader went away: "write failed: FILE: Broken pipe" */
        end_by_sigpipe();
        print_status(st, '\n');
        return EXIT_TROUBLE;
    default:
        print_status(st, '\n');
        return EXIT_TROUBLE;
    }
}

/* check over several inputs: each on its own, the first disorder of each. */
static int check_each(const gm_cli *cli)
{
    int status = EXIT_OK;
    gm_config cfg = cli->config;
    for (int i = 0; i < cli->nfiles; i++) {
        gm_status st = { GM_OK, "", 0 };
        cfg.last = i == cli->nfiles - 1;
        int code = report(gm_run(GM_OP_CHECK, &cfg, &cli->files[i], 1, &st), &st, &cfg);
        if (code == EXIT_TROUBLE)
            return code;
        if (code == EXIT_DISORDER) {
            status = code;
            if (cli->config.check_quiet)
                break; /* the status is all -C reports */
        }
    }
    return status;
}

int main(int argc, char **argv)
{
    double started = gm_now(); /* -v's total counts from here */
    gm_status st = { GM_OK, "", 0 };
    gm_cli cli;
    int code;
    if (gm_cli_parse(argc, argv, &cli, &st) != GM_OK) {
        fprintf(stderr, "gpumerge: %s\n", st.msg);
        code = EXIT_TROUBLE;
    } else if (cli.show_help) {
        gm_cli_usage(stdout);
        code = fflush(stdout) == 0 ? EXIT_OK : EXIT_TROUBLE;
    } else if (cli.show_version) {
        gm_cli_version(stdout, &cli.config);
        code = fflush(stdout) == 0 ? EXIT_OK : EXIT_TROUBLE;
    } else {
        cli.config.message = print_message;
        cli.config.started = started;
        cli.config.last = 1; /* one gm_run, or check_each's last */
        if (cli.op == GM_OP_CHECK && cli.nfiles > 1)
            code = check_each(&cli);
        else
            code = report(gm_run(cli.op, &cli.config, cli.files, cli.nfiles, &st), &st,
                          &cli.config);
    }
    gm_cli_free(&cli);
    return code;
}
