/*
 * options.c - libFuzzer target: cli/options.c's gm_cli_parse on random argument
 * vectors. It must return GM_OK with a consistent result (a command, operands
 * inside argv) or GM_EUSAGE with a message, and never read or write outside its
 * arguments.
 *
 * Input: the arguments after "gpumerge", separated by NUL bytes (at most 32),
 * each in a buffer of exactly its size.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/options.h"

#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "fuzz/options.c:%d: check failed: %s\n", __LINE__, #cond); \
            abort();                                                                    \
        }                                                                               \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { MAX_ARGS = 32 };
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = strdup("gpumerge");
    for (size_t at = 0; at <= size && argc <= MAX_ARGS;) {
        const uint8_t *nul = memchr(data + at, 0, size - at);
        size_t n = nul ? (size_t)(nul - (data + at)) : size - at;
        char *arg = malloc(n + 1);
        memcpy(arg, data + at, n);
        arg[n] = '\0';
        argv[argc++] = arg;
        at += n + 1;
    }
    argv[argc] = NULL;
    char *copy[MAX_ARGS + 2];
    memcpy(copy, argv, sizeof copy);

    /* glibc's getopt keeps a pointer into the last argv between calls (a short
     * option cluster it stopped in); gm_cli_parse resets only optind to 1, which
     * is enough for one parse per process, as in gpumerge. Forget that pointer. */
    char *none[] = { "x", NULL };
    optind = 0;
    opterr = 0;
    getopt(1, none, "");

    gm_cli cli;
    gm_status st = { GM_OK, "" };
    int rc = gm_cli_parse(argc, argv, &cli, &st);
    if (rc == GM_OK) {
        CHECK(cli.show_help || cli.show_version || cli.have_op);
        if (cli.have_op && !cli.show_help && !cli.show_version) {
            CHECK(cli.op == GM_OP_MERGE || cli.op == GM_OP_SORT || cli.op == GM_OP_CHECK);
            CHECK(cli.nfiles >= 0 && cli.files >= argv && cli.files + cli.nfiles <= argv + argc);
        }
    } else {
        CHECK(rc == GM_EUSAGE);
        CHECK(memchr(st.msg, '\0', sizeof st.msg) != NULL && st.msg[0] != '\0');
    }
    /* getopt may permute argv; every argument is still there once. */
    for (int i = 0; i < argc; i++)
        free(copy[i]);
    return 0;
}
