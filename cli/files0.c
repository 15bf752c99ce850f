/*
 * files0.c - --files0-from: the input names read from a file (or standard input),
 * NUL-terminated, as coreutils' sort.c reads them (its argv_iter loop), with its
 * checks and messages: no operands besides, no empty name, no '-'.
 */
#include "options_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/base/util.h"

/* Reads --files0-from's names as sort does: NUL-terminated (the last may lack
 * its NUL), none empty, none '-'; no operands besides. */
int gm_cli_read_files0(gm_cli *cli, const char *from, gm_status *st)
{
    char q[512];
    if (cli->nfiles > 0) {
        char msg[640];
        snprintf(msg, sizeof msg,
                 "extra operand %s\nfile operands cannot be combined with --files0-from",
                 gm_cli_quote_always(cli->files[0], q, sizeof q));
        return gm_cli_usage_error(st, "%s", msg);
    }
    int from_stdin = strcmp(from, "-") == 0;
    FILE *f = from_stdin ? stdin : fopen(from, "r");
    if (!f) {
        int err = errno;
        return gm_fail(st, GM_EUSAGE, "open failed: %s: %s", gm_quote(from, q, sizeof q),
                       strerror(err));
    }
    size_t cap = 4096, len = 0;
    char *text = malloc(cap + 1);
    size_t got;
    while (text && (got = fread(text + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            char *bigger = realloc(text, 2 * cap + 1);
            if (!bigger)
                free(text);
            text = bigger;
            cap *= 2;
        }
    }
    int failed = text && ferror(f);
    if (!from_stdin)
        fclose(f);
    if (!text)
        return gm_fail(st, GM_ENOMEM, "out of memory");
    if (failed) {
        free(text);
        return gm_cli_die(st, "cannot read file names from %s",
                          gm_cli_quote_always(from, q, sizeof q));
    }
    text[len] = '\0';
    cli->names0 = text;

    int count = 0;
    for (size_t i = 0; i < len; i++)
        count += text[i] == '\0';
    count += len > 0 && text[len - 1] != '\0';
    if (count == 0)
        return gm_cli_die(st, "no input from %s", gm_cli_quote_always(from, q, sizeof q));
    free(cli->files);
    cli->files = malloc((size_t)count * sizeof *cli->files);
    if (!cli->files)
        return gm_fail(st, GM_ENOMEM, "out of memory");
    cli->nfiles = 0;
    for (size_t i = 0; i < len; i += strlen(text + i) + 1) {
        char *name = text + i;
        if (strcmp(name, "-") == 0)
            return gm_cli_die(st, "%s",
                              "when reading file names from stdin, no file name of '-' allowed");
        if (name[0] == '\0')
            return gm_fail(st, GM_EUSAGE, "%s:%d: invalid zero-length file name",
                           gm_quote(from, q, sizeof q), cli->nfiles + 1);
        cli->files[cli->nfiles++] = name;
    }
    return GM_OK;
}
