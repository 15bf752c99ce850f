/*
 * options.c - libFuzzer target: cli/options.c's gm_cli_parse on random argument
 * vectors. It must return GM_OK with a consistent result (an operation, each
 * operand one of the arguments) or GM_EUSAGE with a message, leave argv as it
 * was, and never read or write outside its arguments.
 *
 * Input: the arguments after "gpumerge", separated by NUL bytes (at most 32),
 * each in a buffer of exactly its size.
 */
#define _GNU_SOURCE
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

    gm_cli cli;
    gm_status st = { GM_OK, "", 0 };
    int rc = gm_cli_parse(argc, argv, &cli, &st);
    if (rc == GM_OK) {
        if (!cli.show_help && !cli.show_version) {
            CHECK(cli.op == GM_OP_MERGE || cli.op == GM_OP_SORT || cli.op == GM_OP_CHECK);
            CHECK(cli.nfiles >= 0);
            for (int i = 0; i < cli.nfiles; i++) { /* no --files0-from here: from argv */
                int found = 0;
                for (int j = 1; j < argc && !found; j++)
                    found = cli.files[i] == argv[j];
                CHECK(found);
            }
        }
    } else {
        CHECK(rc == GM_EUSAGE);
        CHECK(memchr(st.msg, '\0', sizeof st.msg) != NULL && st.msg[0] != '\0');
    }
    gm_cli_free(&cli);
    CHECK(memcmp(copy, argv, sizeof copy) == 0);
    for (int i = 0; i < argc; i++)
        free(copy[i]);
    return 0;
}
