/*
 * optmsg.c - the option parser's messages, in sort's words: usage errors with the
 * "Try 'gpumerge --help'" hint (sort's usage(SORT_FAILURE)), fatal ones without it
 * (sort's die()), names quoted as gnulib's quoteaf quotes them, and the choice of
 * an option's word: an exact name, or an unambiguous abbreviation as gnulib's
 * argmatch takes it, with its "Valid arguments are:" list.
 */
#include "options_impl.h"

#include <stdio.h>
#include <string.h>

#define TRY_HELP "\nTry 'gpumerge --help' for more information."

/* A usage error: the message, then the hint (as sort's usage(SORT_FAILURE)). */
int gm_cli_usage_error(gm_status *st, const char *fmt, const char *arg)
{
    char msg[768];
    snprintf(msg, sizeof msg, fmt, arg);
    return gm_fail(st, GM_EUSAGE, "%s" TRY_HELP, msg);
}

/* A fatal error in sort's words, without the hint (as sort's die()). */
int gm_cli_die(gm_status *st, const char *fmt, const char *arg)
{
    return gm_fail(st, GM_EUSAGE, fmt, arg);
}

/* A name always in single quotes, ' written as '\'' (gnulib's quoteaf). */
const char *gm_cli_quote_always(const char *s, char *buf, size_t size)
{
    size_t o = 0;
#define PUT(c) do { if (o + 1 < size) buf[o++] = (c); } while (0)
    PUT('\'');
    for (; *s; s++) {
        if (*s == '\'') {
            PUT('\''); PUT('\\'); PUT('\''); PUT('\'');
        } else {
            PUT(*s);
        }
    }
    PUT('\'');
#undef PUT
    buf[o] = '\0';
    return buf;
}

int gm_cli_bad_choice(gm_status *st, const char *opt, const char *arg, const char *valid)
{
    char msg[640];
    snprintf(msg, sizeof msg, "invalid argument '%.300s' for '%s'\nValid arguments are: %s",
             arg, opt, valid);
    return gm_cli_usage_error(st, "%s", msg);
}

/* Maps arg to the index of one of names[], or -1. */
int gm_cli_pick(const char *arg, const char *const *names, int count)
{
    for (int i = 0; i < count; i++)
        if (strcmp(arg, names[i]) == 0)
            return i;
    return -1;
}

/* gnulib's argmatch, as sort uses it for --check and --sort: an exact name or
 * an unambiguous abbreviation. names[] holds the choices, synonyms as "a|b".
 * Sets *index to the choice, or fails with sort's message, which lists the
 * first listed choices one a line. */
int gm_cli_arg_match(const char *opt, const char *arg, const char *const *names, int count,
                     int listed, int *index, gm_status *st)
{
    size_t len = strlen(arg);
    int found = -1, ambiguous = 0;
    for (int i = 0; i < count; i++) {
        const char *name = names[i];
        for (size_t n = strcspn(name, "|"); *name; name += n + 1, n = strcspn(name, "|")) {
            if (n >= len && strncmp(name, arg, len) == 0) {
                if (n == len) {
                    *index = i;
                    return GM_OK;
                }
                ambiguous |= found >= 0 && found != i;
                found = i;
            }
            if (!name[n])
                break;
        }
    }
    if (found >= 0 && !ambiguous) {
        *index = found;
        return GM_OK;
    }
    char msg[768];
    int at = snprintf(msg, sizeof msg, "%s argument '%.200s' for '%s'\nValid arguments are:",
                      found < 0 ? "invalid" : "ambiguous", arg, opt);
    for (int i = 0; i < listed && at < (int)sizeof msg; i++) {
        at += snprintf(msg + at, sizeof msg - (size_t)at, "\n  - '");
        for (const char *c = names[i]; *c && at < (int)sizeof msg - 8; c++)
            at += *c == '|' ? snprintf(msg + at, sizeof msg - (size_t)at, "', '")
                            : snprintf(msg + at, sizeof msg - (size_t)at, "%c", *c);
        at += snprintf(msg + at, sizeof msg - (size_t)at, "'");
    }
    return gm_cli_usage_error(st, "%s", msg);
}
