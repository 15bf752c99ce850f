/*
 * optapply.c - what each option does to the parse: the order of lines (-b, -d,
 * -f, -g, -h, -i, -M, -n, -R, -V, -k, -t, -s, -r, -u, -z, --sort,
 * --random-source), the mode (-c, -C, --check, -m, --strict) and the run (-o,
 * -S, -T, --compress-program, --batch-size, --parallel, --files0-from, -v,
 * --progress, --device, --gpu, --kernel, --threads, --help, --version), and the
 * options refused by name. The checks and messages are coreutils' sort.c's, word
 * for word.
 */
#include "options_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* sort's options that gpumerge refuses, each with the reason. */
static const struct {
    int id;
    const char *reason;
} refused[] = {
    { OPT_DEBUG, "it annotates sort's key fields; -v shows gpumerge's plan" },
};

/* A global order letter (-d, -f, -g, -h, -i, -M, -n, -R, -V, or --sort=WORD):
 * the global order and flags follow sort's precedence among those given. */
static int set_order(gm_cli *cli, gm_cli_state *ps, int c, gm_status *st)
{
    (void)st;
    ps->letters |= 1u << (strchr(GM_ORDER_LETTERS, c) - GM_ORDER_LETTERS);
    gm_keydef k;
    gm_keydef_set_letters(&k, ps->letters);
    gm_keyspec *ks = &cli->keyspec;
    ks->order = k.order;
    ks->fold = k.fold;
    ks->ignore = k.ignore;
    ks->order_given = k.order != GM_ORDER_BYTES;
    return GM_OK;
}

/* Global orders that do not go together are refused as sort refuses them:
 * where a key takes the global options (no -k, or a key without flags of its
 * own). */
int gm_cli_check_orders(const gm_cli *cli, const gm_cli_state *ps, gm_status *st)
{
    char named[16];
    int inherits = cli->keyspec.nkeys == 0;
    for (int i = 0; i < cli->keyspec.nkeys; i++)
        inherits |= !cli->keyspec.keys[i].has_flags;
    if (inherits && gm_order_incompatible(ps->letters, named))
        return gm_cli_die(st, "options '-%s' are incompatible", named);
    return GM_OK;
}

/* -t SEP as sort takes it: one byte, or "\0" for NUL; the same one each time. */
static int set_tab(gm_cli *cli, gm_cli_state *ps, const char *arg, gm_status *st)
{
    char q[512];
    int tab = (unsigned char)arg[0];
    if (!arg[0])
        return gm_cli_die(st, "%s", "empty tab");
    if (arg[1]) {
        if (strcmp(arg, "\\0") != 0)
            return gm_cli_die(st, "multi-character tab %s",
                              gm_cli_quote_always(arg, q, sizeof q));
        tab = '\0';
    }
    if (cli->keyspec.tab >= 0 && cli->keyspec.tab != tab)
        return gm_cli_die(st, "%s", "incompatible tabs");
    cli->keyspec.tab = tab;
    ps->tabbed = 1;
    return GM_OK;
}

/* An option gpumerge does not implement, named as given (spelled after the
 * prefix: "--sort=" and the word, or "" and the option). */
int gm_cli_refuse(int id, const char *spelled, const char *prefix, gm_status *st)
{
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (refused[i].id == id) {
            char msg[400];
            snprintf(msg, sizeof msg, "option '%s%.100s' is not supported: %s", prefix,
                     spelled, refused[i].reason);
            return gm_cli_die(st, "%s", msg);
        }
    return GM_OK;
}

/* Sets the check mode c ('c' or 'C'), as sort does: -c and -C do not mix. */
static int set_check(gm_cli_state *ps, int c, gm_status *st)
{
    if (ps->check && ps->check != c)
        return gm_cli_die(st, "%s", "options '-cC' are incompatible");
    ps->check = c;
    return GM_OK;
}


/* An option that is not the group's: the next group is asked. */
enum { NOT_MINE = -1 };

/* The options that say how lines are ordered: keys, orders and their flags. */
static int apply_order(gm_cli *cli, gm_cli_state *ps, int id, const char *arg,
                       const char *spelled, gm_status *st)
{
    /* the orders gpumerge takes first: a bad word's message lists only those */
    static const char *const sort_names[] = { "general-numeric", "human-numeric", "month",
                                              "numeric", "random", "version" };
    static const int sort_values[] = { 'g', 'h', 'M', 'n', 'R', 'V' };
    gm_config *cfg = &cli->config;
    int n;
    (void)spelled;
    switch (id) {
    case 'b':
        cli->keyspec.skip_blanks = 1;
        return GM_OK;
    case 'd':
    case 'f':
    case 'g':
    case 'h':
    case 'i':
    case 'M':
    case 'n':
    case 'R':
    case 'V':
        return set_order(cli, ps, id, st);
    case OPT_RANDOM_SOURCE:
        if (ps->random_source && strcmp(ps->random_source, arg) != 0)
            return gm_cli_die(st, "%s", "multiple random sources specified");
        ps->random_source = arg;
        return GM_OK;
    case 'k':
        ps->keyed = 1;
        return gm_keyspec_parse_key(&cli->keyspec, arg, st);
    case 't':
        return set_tab(cli, ps, arg, st);
    case 's':
        cli->keyspec.stable = 1;
        return GM_OK;
    case 'r':
        cfg->reverse = 1;
        cli->keyspec.reverse = 1;
        return GM_OK;
    case 'u':
        cfg->unique = 1;
        cli->keyspec.unique = 1;
        return GM_OK;
    case 'z':
        cfg->zero_terminated = 1;
        cli->keyspec.eol = '\0';
        return GM_OK;
    case OPT_SORT:
        if (gm_cli_arg_match("--sort", arg, sort_names, 6, 6, &n, st))
            return st->code;
        return set_order(cli, ps, sort_values[n], st);
    default:
        return NOT_MINE;
    }
}

/* The options that choose the mode: check, merge, --strict. */
static int apply_mode(gm_cli *cli, gm_cli_state *ps, int id, const char *arg, gm_status *st)
{
    static const char *const check_names[] = { "quiet|silent", "diagnose-first" };
    static const int check_values[] = { 'C', 'c' };
    int n;
    switch (id) {
    case OPT_STRICT:
        cli->config.strict = 1;
        return GM_OK;
    case 'c':
    case 'C':
        return set_check(ps, id, st);
    case OPT_CHECK:
        if (!arg)
            return set_check(ps, 'c', st);
        if (gm_cli_arg_match("--check", arg, check_names, 2, 2, &n, st))
            return st->code;
        return set_check(ps, check_values[n], st);
    case 'm':
        ps->merge = 1;
        return GM_OK;
    default:
        return NOT_MINE;
    }
}

/* The options of the run: inputs, output, memory, threads, device, messages. */
static int apply_run(gm_cli *cli, gm_cli_state *ps, int id, const char *arg,
                     const char *spelled, gm_status *st)
{
    static const char *const devices[] = { "auto", "cpu", "gpu" };
    static const char *const kernels[] = { "auto", "basic", "tiled", "circular" };
    gm_config *cfg = &cli->config;
    int n;
    char *end;
    switch (id) {
    case 'o':
        if (cfg->output && strcmp(cfg->output, arg) != 0)
            return gm_cli_die(st, "%s", "multiple output files specified");
        cfg->output = arg;
        return GM_OK;
    case 'v':
        cfg->verbose = 1;
        return GM_OK;
    case 'y': /* sort's obsolete option, accepted and ignored */
        return GM_OK;
    case 'S':
        return gm_cli_parse_size(cli, spelled, arg, st);
    case 'T':
        cfg->tmpdir = arg;
        return GM_OK;
    case OPT_COMPRESS_PROGRAM:
        if (cfg->compress_program && strcmp(cfg->compress_program, arg) != 0)
            return gm_cli_die(st, "%s", "multiple compress programs specified");
        cfg->compress_program = arg;
        return GM_OK;
    case OPT_BATCH_SIZE:
        return gm_cli_parse_batch_size(cli, arg, st);
    case OPT_PARALLEL:
        return gm_cli_parse_parallel(cli, arg, st);
    case OPT_FILES0_FROM:
        ps->files_from = arg;
        return GM_OK;
    case OPT_PROGRESS:
        cfg->progress = 1;
        return GM_OK;
    case OPT_DEVICE:
        n = gm_cli_pick(arg, devices, 3);
        if (n < 0)
            return gm_cli_bad_choice(st, "--device", arg, "auto, cpu, gpu");
        cfg->device = (gm_device)n;
        return GM_OK;
    case OPT_GPU:
        return gm_cli_parse_gpu(cli, arg, st);
    case OPT_KERNEL:
        n = gm_cli_pick(arg, kernels, 4);
        if (n < 0)
            return gm_cli_bad_choice(st, "--kernel", arg, "auto, basic, tiled, circular");
        cfg->kernel = (gm_kernel)n;
        return GM_OK;
    case OPT_THREADS:
        errno = 0;
        long t = strtol(arg, &end, 10);
        if (end == arg || *end || errno || t < 1 || t > GM_CLI_MAX_THREADS)
            return gm_cli_usage_error(st, "invalid --threads: '%s' (want 1 to 4096)", arg);
        cfg->threads = (int)t;
        return GM_OK;
    case OPT_HELP:
        cli->show_help = 1;
        return GM_OK;
    case OPT_VERSION:
        cli->show_version = 1;
        return GM_OK;
    default:
        return NOT_MINE;
    }
}

int gm_cli_apply(gm_cli *cli, gm_cli_state *ps, int id, const char *arg, const char *spelled,
                 gm_status *st)
{
    int rc = apply_order(cli, ps, id, arg, spelled, st);
    if (rc == NOT_MINE)
        rc = apply_mode(cli, ps, id, arg, st);
    if (rc == NOT_MINE)
        rc = apply_run(cli, ps, id, arg, spelled, st);
    if (rc == NOT_MINE)
        rc = gm_cli_refuse(id, spelled, "", st);
    return rc;
}
