/*
 * options.c - parsing gpumerge's command line (see options.h): the table of
 * options, the loop over argv, and the checks after it.
 *
 * gpumerge takes GNU sort's options so that a script written for `sort -n` runs
 * with gpumerge in sort's place: with no subcommand it acts as sort -n, sort -m -n
 * or sort -c -n would. Modelled on coreutils' sort.c: its long_options[] in its
 * order, its checks (specify_sort_size, specify_nmerge, specify_nthreads,
 * --files0-from, the incompatible options) and its messages, word for word. What
 * each option does is in optapply.c, sort's numbers in optnum.c, its messages in
 * optmsg.c, --files0-from in files0.c, the --help text in usage.c.
 *
 * The options are read by a small loop that follows getopt_long's rules (GNU
 * argument order, clusters of short options, '--', unambiguous abbreviations,
 * and sort's own: its obsolete keys "+POS1 [-POS2]" and POSIXLY_CORRECT's end of
 * options, both ruled by _POSIX2_VERSION as in sort's main) and reports errors
 * in getopt's words, written out rather than calling getopt_long for two
 * reasons: an abbreviation that is unique among sort's own options keeps its
 * sort meaning although gpumerge adds options (`--p=1` is --parallel, not
 * ambiguous with --progress), and the first operand before any '--' may be a
 * subcommand, so operands are seen in their place.
 */
#include "options_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NO_ARG, REQUIRED_ARG, OPTIONAL_ARG };

typedef struct cli_option {
    const char *name; /* the long name without "--" (long_options' table) */
    int has_arg;    /* NO_ARG, REQUIRED_ARG or OPTIONAL_ARG: gm_cli_parse checks it */
    int id;         /* the short letter or OPT_* code that gm_cli_apply acts on */
    int sorts;      /* one of sort's own options: wins an abbreviation */
} cli_option;

/* sort's short options (the obsolete -y taken and ignored, as sort does), then
 * gpumerge's -v. */
static const char short_options[] = "bcCdfghik:mMno:rRsS:t:T:uVyzv";

/* sort's long options in sort's order (it decides how ambiguities are listed),
 * then gpumerge's own. */
static const cli_option long_options[] = {
    { "ignore-leading-blanks", NO_ARG, 'b', 1 },
    { "check", OPTIONAL_ARG, OPT_CHECK, 1 },
    { "compress-program", REQUIRED_ARG, OPT_COMPRESS_PROGRAM, 1 },
    { "debug", NO_ARG, OPT_DEBUG, 1 },
    { "dictionary-order", NO_ARG, 'd', 1 },
    { "ignore-case", NO_ARG, 'f', 1 },
    { "files0-from", REQUIRED_ARG, OPT_FILES0_FROM, 1 },
    { "general-numeric-sort", NO_ARG, 'g', 1 },
    { "ignore-nonprinting", NO_ARG, 'i', 1 },
    { "key", REQUIRED_ARG, 'k', 1 },
    { "merge", NO_ARG, 'm', 1 },
    { "month-sort", NO_ARG, 'M', 1 },
    { "numeric-sort", NO_ARG, 'n', 1 },
    { "human-numeric-sort", NO_ARG, 'h', 1 },
    { "version-sort", NO_ARG, 'V', 1 },
    { "random-sort", NO_ARG, 'R', 1 },
    { "random-source", REQUIRED_ARG, OPT_RANDOM_SOURCE, 1 },
    { "sort", REQUIRED_ARG, OPT_SORT, 1 },
    { "output", REQUIRED_ARG, 'o', 1 },
    { "reverse", NO_ARG, 'r', 1 },
    { "stable", NO_ARG, 's', 1 },
    { "batch-size", REQUIRED_ARG, OPT_BATCH_SIZE, 1 },
    { "buffer-size", REQUIRED_ARG, 'S', 1 },
    { "field-separator", REQUIRED_ARG, 't', 1 },
    { "temporary-directory", REQUIRED_ARG, 'T', 1 },
    { "unique", NO_ARG, 'u', 1 },
    { "zero-terminated", NO_ARG, 'z', 1 },
    { "parallel", REQUIRED_ARG, OPT_PARALLEL, 1 },
    { "help", NO_ARG, OPT_HELP, 1 },
    { "version", NO_ARG, OPT_VERSION, 1 },
    { "verbose", NO_ARG, 'v', 0 },
    { "device", REQUIRED_ARG, OPT_DEVICE, 0 },
    { "gpu", REQUIRED_ARG, OPT_GPU, 0 },
    { "kernel", REQUIRED_ARG, OPT_KERNEL, 0 },
    { "threads", REQUIRED_ARG, OPT_THREADS, 0 },
    { "progress", NO_ARG, OPT_PROGRESS, 0 },
    { "strict", NO_ARG, OPT_STRICT, 0 },
};
#define NLONG ((int)(sizeof long_options / sizeof long_options[0]))

/* Finds the long option that "--"-less text (up to '=' or its end) names:
 * an exact name; else the one option of sort's whose name it begins; else the
 * one of all. Returns its index, -1 when none, -2 when ambiguous (message in
 * st, possibilities listed in table order, as getopt_long lists them). */
static int find_long(const char *text, gm_status *st)
{
    size_t len = strcspn(text, "=");
    int sorts = -1, all = -1, nsorts = 0, nall = 0;
    for (int i = 0; i < NLONG; i++) {
        if (strncmp(long_options[i].name, text, len) != 0)
            continue;
        if (strlen(long_options[i].name) == len)
            return i;
        if (long_options[i].sorts && nsorts++ == 0)
            sorts = i;
        if (nall++ == 0)
            all = i;
    }
    if (nsorts == 1)
        return sorts;
    if (nall == 1)
        return all;
    if (nall == 0)
        return -1;
    char msg[768];
    int at = snprintf(msg, sizeof msg, "option '--%.200s' is ambiguous; possibilities:", text);
    for (int i = 0; i < NLONG && at < (int)sizeof msg; i++)
        if (strncmp(long_options[i].name, text, len) == 0)
            at += snprintf(msg + at, sizeof msg - (size_t)at, " '--%s'", long_options[i].name);
    gm_cli_usage_error(st, "%s", msg);
    return -2;
}


/* An operand: the first one before any "--" may be the subcommand, or "help",
 * which is --help. */
static void operand(gm_cli *cli, char *arg, int may_be_command)
{
    static const char *const commands[] = { "merge", "sort", "check", "help" };
    if (may_be_command && !cli->as_sort && !cli->have_op && cli->nfiles == 0) {
        int c = gm_cli_pick(arg, commands, 4);
        if (c == 3) {
            cli->show_help = 1;
            return;
        }
        if (c >= 0) {
            cli->op = (gm_op)(GM_OP_MERGE + c);
            cli->have_op = 1;
            return;
        }
    }
    cli->files[cli->nfiles++] = arg;
}

/* A subcommand names the mode; -m, -c and -C may only repeat it. */
static int mode_conflict(const gm_cli *cli, const gm_cli_state *ps, gm_status *st)
{
    static const char *const names[] = { "merge", "sort", "check" };
    const char *opt = NULL;
    if (ps->merge && cli->op != GM_OP_MERGE)
        opt = "-m";
    else if (ps->check && cli->op != GM_OP_CHECK)
        opt = ps->check == 'c' ? "-c" : "-C";
    if (!opt)
        return GM_OK;
    char msg[128];
    snprintf(msg, sizeof msg, "option '%s' does not go with the '%s' command", opt,
             names[cli->op]);
    return gm_cli_usage_error(st, "%s", msg);
}

/* Everything after the loop over argv, in sort's order. */
static int finish(gm_cli *cli, gm_cli_state *ps, gm_status *st)
{
    gm_config *cfg = &cli->config;
    char q[512];
    if (ps->files_from && gm_cli_read_files0(cli, ps->files_from, st))
        return st->code;
    if (cli->have_op) {
        if (mode_conflict(cli, ps, st))
            return st->code;
        if (cli->op == GM_OP_CHECK && cfg->output)
            return gm_cli_usage_error(st, "%s",
                                      "check writes no output: -o is not allowed");
    } else {
        cli->op = ps->check ? GM_OP_CHECK : ps->merge ? GM_OP_MERGE : GM_OP_SORT;
        if (ps->check && cli->nfiles > 1) {
            char msg[600];
            snprintf(msg, sizeof msg, "extra operand %s not allowed with -%c",
                     gm_cli_quote_always(cli->files[1], q, sizeof q), ps->check);
            return gm_cli_die(st, "%s", msg);
        }
        if (ps->check && cfg->output) {
            char msg[64];
            snprintf(msg, sizeof msg, "options '-%co' are incompatible", ps->check);
            return gm_cli_die(st, "%s", msg);
        }
    }
    cfg->check_quiet = ps->check == 'C';
    /* --strict is the integer path: whole lines, each one integer */
    static const char *const spelled[] = { "-d", "-f", "-g", "-h", "-i", "-M", "-n", "-R", "-V" };
    const char *keyed = ps->keyed ? "-k" : ps->obsolete ? ps->obsolete
                                         : ps->tabbed ? "-t" : NULL;
    for (int i = 0; !keyed && GM_ORDER_LETTERS[i]; i++)
        if ((ps->letters & (1u << i)) && GM_ORDER_LETTERS[i] != 'n')
            keyed = spelled[i];
    if (cfg->strict && keyed) {
        char msg[128];
        snprintf(msg, sizeof msg,
                 "options '--strict' and '%s' are incompatible: --strict takes lines of one "
                 "integer each", keyed);
        return gm_cli_die(st, "%s", msg);
    }
    if (gm_cli_check_orders(cli, ps, st))
        return st->code;
    gm_keyspec_finish(&cli->keyspec);
    cfg->keyspec = &cli->keyspec;
    for (int i = 0; i < cli->keyspec.nkeys; i++)
        if (cli->keyspec.keys[i].order == GM_ORDER_RANDOM)
            return gm_cli_random_seed(ps->random_source, cli->keyspec.random_seed, st);
    return GM_OK;
}

/* With POSIXLY_CORRECT, options end at the first file operand (getopt's rule,
 * which sort follows): each word after it is a file, but for "-oFILE", or "-o"
 * with a word after it, which sort still takes in its traditional usage unless
 * it checks. A subcommand is not a file: options go on after it. */
static int posix_options_end(int argc, char **argv, int i, const gm_cli *cli,
                             const gm_cli_state *ps)
{
    const char *a = argv[i];
    if (!ps->posix || cli->nfiles == 0)
        return 0;
    int checks = ps->check || (cli->have_op && cli->op == GM_OP_CHECK);
    return checks || !ps->traditional ||
           !(a[0] == '-' && a[1] == 'o' && (a[2] || i + 1 < argc));
}

/* sort's traditional usage, from _POSIX2_VERSION as gnulib's posix2_version reads
 * it (a whole decimal number, else the default, 200809): all but POSIX
 * 1003.1-2001's, 200112 to 200808, which has no +POS1 keys. */
static int traditional_usage(void)
{
    long version = 200809;
    const char *s = getenv("_POSIX2_VERSION");
    if (s && *s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (!*end)
            version = v;
    }
    return !(200112 <= version && version < 200809);
}

/* sort's obsolete key "+POS1 [-POS2]", argv[*i] beginning with '+': a -POS2 is
 * the next word when it is '-' and a digit, and makes the usage traditional from
 * here on unless POSIXLY_CORRECT is set; in the traditional usage a valid +POS1
 * is a key (*key set, *i then past its -POS2); else the word is a file name.
 * Returns GM_OK, or the error of a bad -POS2. */
static int obsolete_key(gm_cli *cli, gm_cli_state *ps, int argc, char **argv, int *i,
                        int *key, gm_status *st)
{
    const char *next = *i + 1 < argc ? argv[*i + 1] : NULL;
    int has_pos2 = next && next[0] == '-' && (unsigned)(next[1] - '0') <= 9;
    ps->traditional |= has_pos2 && !ps->posix;
    if (!ps->traditional)
        return GM_OK;
    if (gm_keyspec_parse_obsolete(&cli->keyspec, argv[*i], has_pos2 ? next : NULL, key, st))
        return st->code;
    if (*key && !ps->obsolete)
        ps->obsolete = argv[*i];
    *i += *key && has_pos2;
    return GM_OK;
}

/* Whether the program runs as gpusort: its name's last part. */
static int called_gpusort(const char *argv0)
{
    const char *base = argv0 ? strrchr(argv0, '/') : NULL;
    base = base ? base + 1 : argv0 ? argv0 : "";
    return strcmp(base, "gpusort") == 0;
}

int gm_cli_parse(int argc, char **argv, gm_cli *cli, gm_status *st)
{
    memset(cli, 0, sizeof *cli);
    gm_keyspec_init(&cli->keyspec);
    /* gpusort is sort: byte order by default, and no subcommands */
    cli->as_sort = argc > 0 && called_gpusort(argv[0]);
    cli->keyspec.bytes_default = cli->as_sort;
    gm_cli_state ps;
    memset(&ps, 0, sizeof ps);
    cli->files = malloc((size_t)(argc > 0 ? argc : 1) * sizeof *cli->files);
    if (!cli->files)
        return gm_fail(st, GM_ENOMEM, "out of memory");
    int only_operands = 0; /* after "--" */
    ps.posix = getenv("POSIXLY_CORRECT") != NULL;
    ps.traditional = traditional_usage();
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        int file = only_operands || posix_options_end(argc, argv, i, cli, &ps);
        int key = 0;
        if (!file && a[0] == '+' && obsolete_key(cli, &ps, argc, argv, &i, &key, st))
            return st->code;
        if (key)
            continue;
        if (file || a[0] != '-' || a[1] == '\0') {
            operand(cli, a, !file);
            if (cli->show_help)
                return GM_OK;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_operands = 1;
            continue;
        }
        if (a[1] == '-') { /* --name, --name=ARG, --name ARG */
            int k = find_long(a + 2, st);
            if (k == -2)
                return st->code;
            if (k < 0)
                return gm_cli_usage_error(st, "unrecognized option '%.600s'", a);
            const cli_option *o = &long_options[k];
            char spelled[64];
            snprintf(spelled, sizeof spelled, "--%s", o->name);
            const char *eq = strchr(a, '=');
            const char *arg = eq ? eq + 1 : NULL;
            if (arg && o->has_arg == NO_ARG)
                return gm_cli_usage_error(st, "option '%s' doesn't allow an argument",
                                          spelled);
            if (!arg && o->has_arg == REQUIRED_ARG) {
                if (i + 1 == argc)
                    return gm_cli_usage_error(st, "option '%s' requires an argument", spelled);
                arg = argv[++i];
            }
            if (gm_cli_apply(cli, &ps, o->id, arg, spelled, st))
                return st->code;
            if (cli->show_help || cli->show_version)
                return GM_OK;
            continue;
        }
        for (const char *p = a + 1; *p; p++) { /* a cluster of short options */
            const char *spec = *p == ':' ? NULL : strchr(short_options, *p);
            char spelled[3] = { '-', *p, '\0' };
            if (!spec) {
                char c[2] = { *p, '\0' };
                return gm_cli_usage_error(st, "invalid option -- '%s'", c);
            }
            const char *arg = NULL;
            if (spec[1] == ':') {
                if (p[1])
                    arg = p + 1;
                else if (i + 1 < argc)
                    arg = argv[++i];
                else
                    return gm_cli_usage_error(st, "option requires an argument -- '%s'",
                                              spelled + 1);
            }
            if (gm_cli_apply(cli, &ps, *p, arg, spelled, st))
                return st->code;
            if (arg)
                break;
        }
    }
    return finish(cli, &ps, st);
}

void gm_cli_free(gm_cli *cli)
{
    free(cli->files);
    free(cli->names0);
    cli->files = NULL;
    cli->names0 = NULL;
}
