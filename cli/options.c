/*
 * options.c - parsing gpumerge's command line (see options.h). Modelled on
 * coreutils' sort.c: short_options, long_options[], a one-line hint on error and
 * the full text on --help.
 */
#include "options.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "../core/util.h"

enum { OPT_DEVICE = 256, OPT_KERNEL, OPT_THREADS, OPT_HELP, OPT_VERSION };

static const char short_options[] = ":o:ruv"; /* leading colon: report missing arguments */

static const struct option long_options[] = {
    { "output", required_argument, NULL, 'o' },
    { "reverse", no_argument, NULL, 'r' },
    { "unique", no_argument, NULL, 'u' },
    { "verbose", no_argument, NULL, 'v' },
    { "device", required_argument, NULL, OPT_DEVICE },
    { "kernel", required_argument, NULL, OPT_KERNEL },
    { "threads", required_argument, NULL, OPT_THREADS },
    { "help", no_argument, NULL, OPT_HELP },
    { "version", no_argument, NULL, OPT_VERSION },
    { NULL, 0, NULL, 0 },
};

void gm_cli_usage(FILE *to)
{
    fputs("Usage: gpumerge merge [OPTION]... [FILE]...\n"
          "  or:  gpumerge sort [OPTION]... [FILE]...\n"
          "  or:  gpumerge check [OPTION]... [FILE]...\n"
          "Merge sorted files of integers, sort them, or check that they are sorted,\n"
          "on an NVIDIA GPU when one is worth using and on all CPU cores otherwise.\n"
          "\n"
          "  merge   merge sorted inputs into one sorted output (like sort -m -n)\n"
          "  sort    sort the concatenation of the inputs (like sort -n)\n"
          "  check   report the first line out of order in each input (like sort -c -n)\n"
          "\n"
          "With no FILE, or when FILE is -, read standard input. Each line holds one\n"
          "integer (64-bit signed, optional sign, blanks around it); blank lines are\n"
          "skipped. Output is one integer per line in canonical decimal.\n"
          "\n"
          "  -o, --output=FILE     write to FILE (atomically; FILE may be an input)\n"
          "  -r, --reverse         descending order (merge and check expect it too)\n"
          "  -u, --unique          one line per value (check: equal lines are disorder)\n"
          "  -v, --verbose         print the plan and the time of each stage on stderr\n"
          "      --device=DEV      auto (default), cpu or gpu\n"
          "      --kernel=K        GPU merge kernel: auto (default), basic, tiled, circular\n"
          "      --threads=N       CPU threads (default: all online cores)\n"
          "      --help            display this help and exit\n"
          "      --version         output version information and exit\n"
          "\n"
          "Exit status: 0 success, 1 check found disorder, 2 error.\n",
          to);
}

static int usage_error(gm_status *st, const char *fmt, const char *arg)
{
    char msg[768];
    snprintf(msg, sizeof msg, fmt, arg);
    return gm_fail(st, GM_EUSAGE, "%s\nTry 'gpumerge --help' for more information.", msg);
}

/* Maps arg to the index of one of names[], or -1. */
static int pick(const char *arg, const char *const *names, int count)
{
    for (int i = 0; i < count; i++)
        if (strcmp(arg, names[i]) == 0)
            return i;
    return -1;
}

static int bad_choice(gm_status *st, const char *opt, const char *arg, const char *valid)
{
    char msg[640];
    snprintf(msg, sizeof msg, "invalid argument '%.300s' for '%s'\nValid arguments are: %s",
             arg, opt, valid);
    return usage_error(st, "%s", msg);
}

int gm_cli_parse(int argc, char **argv, gm_cli *cli, gm_status *st)
{
    static const char *const commands[] = { "merge", "sort", "check" };
    static const char *const devices[] = { "auto", "cpu", "gpu" };
    static const char *const kernels[] = { "auto", "basic", "tiled", "circular" };

    memset(cli, 0, sizeof *cli);
    if (argc < 2)
        return usage_error(st, "%s", "missing command (merge, sort or check)");
    int first = 1;
    if (argv[1][0] != '-' || strcmp(argv[1], "-") == 0) {
        int c = pick(argv[1], commands, 3);
        if (c < 0) {
            char q[256];
            return usage_error(st, "unknown command: %s", gm_quote(argv[1], q, sizeof q));
        }
        cli->op = (gm_op)(GM_OP_MERGE + c);
        cli->have_op = 1;
        first = 2;
    }

    /* getopt sees the subcommand as its program name. */
    int sub_argc = argc - (first - 1);
    char **sub_argv = argv + (first - 1);
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(sub_argc, sub_argv, short_options, long_options, NULL)) != -1) {
        char *end;
        long n;
        switch (opt) {
        case 'o':
            cli->config.output = optarg;
            break;
        case 'r':
            cli->config.reverse = 1;
            break;
        case 'u':
            cli->config.unique = 1;
            break;
        case 'v':
            cli->config.verbose = 1;
            break;
        case OPT_DEVICE:
            n = pick(optarg, devices, 3);
            if (n < 0)
                return bad_choice(st, "--device", optarg, "auto, cpu, gpu");
            cli->config.device = (gm_device)n;
            break;
        case OPT_KERNEL:
            n = pick(optarg, kernels, 4);
            if (n < 0)
                return bad_choice(st, "--kernel", optarg, "auto, basic, tiled, circular");
            cli->config.kernel = (gm_kernel)n;
            break;
        case OPT_THREADS:
            n = strtol(optarg, &end, 10);
            if (end == optarg || *end || n < 1 || n > 4096)
                return usage_error(st, "invalid --threads: '%s' (want 1 to 4096)", optarg);
            cli->config.threads = (int)n;
            break;
        case OPT_HELP:
            cli->show_help = 1;
            return GM_OK;
        case OPT_VERSION:
            cli->show_version = 1;
            return GM_OK;
        case ':': /* missing argument */
            if (optopt > 0 && optopt < 256) {
                char o[2] = { (char)optopt, 0 };
                return usage_error(st, "option requires an argument -- '%s'", o);
            }
            return usage_error(st, "option '%s' requires an argument", sub_argv[optind - 1]);
        default: /* '?' */
            if (optopt > 0 && optopt < 256) {
                char o[2] = { (char)optopt, 0 };
                return usage_error(st, "invalid option -- '%s'", o);
            }
            return usage_error(st, "unrecognized option '%s'", sub_argv[optind - 1]);
        }
    }
    if (!cli->have_op)
        return usage_error(st, "%s", "missing command (merge, sort or check)");
    if (cli->op == GM_OP_CHECK && cli->config.output)
        return usage_error(st, "%s", "check writes no output: -o is not allowed");
    cli->files = sub_argv + optind;
    cli->nfiles = sub_argc - optind;
    return GM_OK;
}
