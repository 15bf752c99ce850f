/*
 * options.c - parsing gpumerge's command line (see options.h).
 *
 * gpumerge takes GNU sort's options so that a script written for `sort -n` runs
 * with gpumerge in sort's place: with no subcommand it acts as sort -n, sort -m -n
 * or sort -c -n would. Modelled on coreutils' sort.c: its long_options[] in its
 * order, its checks (specify_sort_size, specify_nmerge, specify_nthreads,
 * --files0-from, the incompatible options) and its messages, word for word.
 *
 * The options are read by a small loop that follows getopt_long's rules (GNU
 * argument order, clusters of short options, '--', unambiguous abbreviations)
 * and reports errors in getopt's words, written out rather than calling
 * getopt_long for two reasons: an abbreviation that is unique among sort's own
 * options keeps its sort meaning although gpumerge adds options (`--p=1` is
 * --parallel, not ambiguous with --progress), and the first operand before any
 * '--' may be a subcommand, so operands are seen in their place.
 */
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../core/util.h"

#define MAX_THREADS 4096

enum {
    OPT_CHECK = 256, OPT_COMPRESS_PROGRAM, OPT_DEBUG, OPT_FILES0_FROM, OPT_BATCH_SIZE,
    OPT_RANDOM_SOURCE, OPT_SORT, OPT_PARALLEL, OPT_HELP, OPT_VERSION,
    OPT_DEVICE, OPT_KERNEL, OPT_THREADS, OPT_PROGRESS, OPT_STRICT
};

enum { NO_ARG, REQUIRED_ARG, OPTIONAL_ARG };

typedef struct cli_option {
    const char *name;
    int has_arg;
    int id;
    int sorts;      /* one of sort's own options: wins an abbreviation */
} cli_option;

/* sort's short options (less the obsolete -y), then gpumerge's -v. */
static const char short_options[] = "bcCdfghik:mMno:rRsS:t:T:uVzv";

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
    { "kernel", REQUIRED_ARG, OPT_KERNEL, 0 },
    { "threads", REQUIRED_ARG, OPT_THREADS, 0 },
    { "progress", NO_ARG, OPT_PROGRESS, 0 },
    { "strict", NO_ARG, OPT_STRICT, 0 },
};
#define NLONG ((int)(sizeof long_options / sizeof long_options[0]))

/* sort's options that gpumerge refuses, each with the reason. */
static const struct {
    int id;
    const char *reason;
} refused[] = {
    { 'd', "gpumerge orders by number or by bytes, not in dictionary order" },
    { 'f', "gpumerge orders by number or by bytes, without folding case" },
    { 'i', "gpumerge orders by number or by bytes, ignoring no characters" },
    { 'M', "gpumerge orders by number or by bytes, not by month names" },
    { 'R', "the order is always by key (shuf(1) shuffles)" },
    { 'V', "gpumerge orders by number or by bytes, not by version" },
    { OPT_RANDOM_SOURCE, "it only serves -R, which is not supported" },
    { OPT_DEBUG, "it annotates sort's key fields; -v shows gpumerge's plan" },
    { OPT_COMPRESS_PROGRAM, "temporary files are not compressed" },
};

void gm_cli_usage(FILE *to)
{
    fputs("Usage: gpumerge merge [OPTION]... [FILE]...\n"
          "  or:  gpumerge sort [OPTION]... [FILE]...\n"
          "  or:  gpumerge check [OPTION]... [FILE]...\n"
          "  or:  gpumerge [OPTION]... [FILE]...\n"
          "  or:  gpumerge [OPTION]... --files0-from=F\n"
          "Sort, merge or check lines by number, as 'LC_ALL=C sort -n' does, on an\n"
          "NVIDIA GPU when one is worth using and on all CPU cores otherwise.\n"
          "\n"
          "With no subcommand gpumerge acts as sort -n: it sorts, or merges with -m, or\n"
          "checks with -c or -C. The subcommands name the mode instead:\n"
          "  merge   merge sorted inputs into one sorted output (like sort -m -n)\n"
          "  sort    sort the concatenation of the inputs (like sort -n)\n"
          "  check   check each input and report the first disorder in each\n"
          "          (like sort -c -n, which takes one input)\n"
          "  help    display this help and exit (as --help)\n"
          "Options may come before or after the subcommand.\n"
          "\n"
          "With no FILE, or when FILE is -, read standard input. Lines are ordered by\n"
          "their keys (the whole line by default) as sort orders them in the C locale,\n"
          "by -n unless -g, -h or a key's own flags name another order, then by the\n"
          "whole line's bytes; every line is written back with its own bytes.\n"
          "\n"
          "sort's options:\n"
          "  -b, --ignore-leading-blanks  ignore leading blanks in keys\n"
          "  -c, --check, --check=diagnose-first  check for sorted input; do not sort\n"
          "  -C, --check=quiet, --check=silent  like -c, but do not report the first bad line\n"
          "  -g, --general-numeric-sort  compare by general numerical value (floats)\n"
          "  -h, --human-numeric-sort  compare human readable numbers (2K, 1G)\n"
          "  -k, --key=KEYDEF          sort via a key; KEYDEF gives location and type\n"
          "  -m, --merge               merge already sorted files; do not sort\n"
          "  -n, --numeric-sort        compare by string numerical value (the default)\n"
          "  -o, --output=FILE         write to FILE (FILE may be an input)\n"
          "  -r, --reverse             reverse the result of comparisons\n"
          "  -s, --stable              no last-resort comparison of whole lines\n"
          "      --sort=WORD           numeric -n, general-numeric -g, human-numeric -h\n"
          "  -t, --field-separator=SEP  use SEP instead of non-blank to blank transition\n"
          "  -u, --unique              output only the first of lines with equal keys\n"
          "                            (check: equal keys are a disorder)\n"
          "  -S, --buffer-size=SIZE    use SIZE for the main memory buffer\n"
          "  -T, --temporary-directory=DIR  temporary files in DIR, not $TMPDIR or /tmp\n"
          "                            (given several times: the last one)\n"
          "      --batch-size=NMERGE   merge at most NMERGE inputs at once\n"
          "      --parallel=N          use N CPU threads (default: all online cores)\n"
          "  -z, --zero-terminated     lines end with NUL, not newline\n"
          "      --files0-from=F       read input names, NUL-terminated, from F (- = stdin)\n"
          "gpumerge's options:\n"
          "  -v, --verbose             print the plan and the time of each stage on stderr\n"
          "      --progress            show progress on stderr during long work\n"
          "      --strict              every line must hold one integer (an error names\n"
          "                            the first that does not); output canonical\n"
          "      --device=DEV          auto (default), cpu or gpu\n"
          "      --kernel=K            GPU merge kernel: auto (default), basic, tiled, circular\n"
          "      --threads=N           the same as --parallel=N\n"
          "      --help                display this help and exit\n"
          "      --version             output version information and exit\n"
          "\n"
          "-f, --ignore-case is accepted where every key is a number (it changes nothing\n"
          "there) and refused where a key compares bytes.\n"
          "Refused (exit 2): -d, -i, -M, -R, -V, --debug, --random-source,\n"
          "--compress-program, --sort=month, random or version.\n"
          "\n"
          "KEYDEF is F[.C][OPTS][,F[.C][OPTS]] for start and stop position, where F is a\n"
          "field number and C a character position in the field; both are origin 1, and\n"
          "the stop position defaults to the line's end. OPTS is one or more of b, g, h,\n"
          "n, r, which override the global ordering options for that key.\n"
          "\n"
          "SIZE may be followed by % (of memory), b (bytes), K (1024, the default), M, G,\n"
          "T, P, E, Z, Y.\n"
          "\n"
          "Exit status: 0 success, 1 check found disorder, 2 error.\n",
          to);
}

/* ---------------------------------------------------------------- messages */

#define TRY_HELP "\nTry 'gpumerge --help' for more information."

/* A usage error: the message, then the hint (as sort's usage(SORT_FAILURE)). */
static int usage_error(gm_status *st, const char *fmt, const char *arg)
{
    char msg[768];
    snprintf(msg, sizeof msg, fmt, arg);
    return gm_fail(st, GM_EUSAGE, "%s" TRY_HELP, msg);
}

/* A fatal error in sort's words, without the hint (as sort's die()). */
static int die(gm_status *st, const char *fmt, const char *arg)
{
    return gm_fail(st, GM_EUSAGE, fmt, arg);
}

/* A name always in single quotes, ' written as '\'' (gnulib's quoteaf). */
static const char *quote_always(const char *s, char *buf, size_t size)
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

static int bad_choice(gm_status *st, const char *opt, const char *arg, const char *valid)
{
    char msg[640];
    snprintf(msg, sizeof msg, "invalid argument '%.300s' for '%s'\nValid arguments are: %s",
             arg, opt, valid);
    return usage_error(st, "%s", msg);
}

/* Maps arg to the index of one of names[], or -1. */
static int pick(const char *arg, const char *const *names, int count)
{
    for (int i = 0; i < count; i++)
        if (strcmp(arg, names[i]) == 0)
            return i;
    return -1;
}

/* gnulib's argmatch, as sort uses it for --check and --sort: an exact name or
 * an unambiguous abbreviation. names[] holds the choices, synonyms as "a|b".
 * Sets *index to the choice, or fails with sort's message, which lists the
 * valid arguments one choice a line. */
static int arg_match(const char *opt, const char *arg, const char *const *names, int count,
                     int *index, gm_status *st)
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
    for (int i = 0; i < count && at < (int)sizeof msg; i++) {
        at += snprintf(msg + at, sizeof msg - (size_t)at, "\n  - '");
        for (const char *c = names[i]; *c && at < (int)sizeof msg - 8; c++)
            at += *c == '|' ? snprintf(msg + at, sizeof msg - (size_t)at, "', '")
                            : snprintf(msg + at, sizeof msg - (size_t)at, "%c", *c);
        at += snprintf(msg + at, sizeof msg - (size_t)at, "'");
    }
    return usage_error(st, "%s", msg);
}

/* ---------------------------------------------------------------- numbers */

/* How gnulib's xstrtoumax ends; the messages are xstrtol_fatal's. */
typedef enum { NUM_OK, NUM_INVALID, NUM_SUFFIX, NUM_OVERFLOW } num_result;

static int number_error(gm_status *st, num_result r, const char *opt, const char *arg)
{
    const char *fmt = r == NUM_SUFFIX     ? "invalid suffix in %s argument '%s'"
                      : r == NUM_OVERFLOW ? "%s argument '%s' too large"
                                          : "invalid %s argument '%s'";
    return gm_fail(st, GM_EUSAGE, fmt, opt, arg);
}

/* Scales *n by 1024^power; NUM_OVERFLOW (and the largest value) if it overflows. */
static num_result scale(uintmax_t *n, int power)
{
    num_result r = NUM_OK;
    for (int i = 0; i < power; i++) {
        if (*n > UINTMAX_MAX / 1024) {
            *n = UINTMAX_MAX;
            r = NUM_OVERFLOW;
        } else {
            *n *= 1024;
        }
    }
    return r;
}

/* gnulib's xstrtoumax in base 10: leading blanks, no sign, then at most one of
 * the suffixes (powers of 1024); with no digits, a valid suffix stands for 1.
 * *end points past what was read (at a bad suffix when NUM_SUFFIX). */
static num_result read_count(const char *s, const char **end, uintmax_t *n,
                             const char *suffixes)
{
    const char *p = s;
    while (isspace((unsigned char)*p))
        p++;
    *end = s;
    if (*p == '-')
        return NUM_INVALID;
    char *e;
    errno = 0;
    *n = strtoumax(s, &e, 10);
    num_result r = NUM_OK;
    if (e == s) {
        if (!(*e && strchr(suffixes, *e)))
            return NUM_INVALID;
        *n = 1;
    } else if (errno == ERANGE) {
        r = NUM_OVERFLOW;
    } else if (errno) {
        return NUM_INVALID;
    }
    *end = e;
    if (*e == '\0')
        return r;
    if (!strchr(suffixes, *e))
        return NUM_SUFFIX; /* sort reports a bad suffix even after an overflow */
    static const char powers[] = "KkMmGgTtPEZY";
    static const int power_of[] = { 1, 1, 2, 2, 3, 3, 4, 4, 5, 6, 7, 8 };
    num_result s2 = scale(n, power_of[strchr(powers, *e) - powers]);
    if (s2 != NUM_OK)
        r = s2;
    *end = e + 1;
    return e[1] ? NUM_SUFFIX : r;
}

/* sort's specify_sort_size: SIZE in KiB by default, b for bytes, % of physical
 * memory, K M G T P E Z Y; several -S keep the largest. The core raises a size
 * below its minimum to that minimum, as sort does. */
static int parse_size(gm_cli *cli, const char *opt, const char *arg, gm_status *st)
{
    uintmax_t n;
    const char *suffix;
    num_result r = read_count(arg, &suffix, &n, "EgGkKmMPtTYZ");
    if (r == NUM_OK && suffix > arg && isdigit((unsigned char)suffix[-1]))
        r = scale(&n, 1);
    if (r == NUM_SUFFIX && suffix > arg && isdigit((unsigned char)suffix[-1]) && !suffix[1]) {
        if (*suffix == 'b') {
            r = NUM_OK;
        } else if (*suffix == '%') {
            long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
            double mem = (double)pages * (double)page * (double)n / 100;
            r = pages > 0 && page > 0 && mem < (double)SIZE_MAX ? NUM_OK : NUM_OVERFLOW;
            n = r == NUM_OK ? (uintmax_t)mem : n;
        }
    }
    if (r == NUM_OK && n > SIZE_MAX)
        r = NUM_OVERFLOW;
    if (r != NUM_OK)
        return number_error(st, r, opt, arg);
    if (n == 0)
        n = 1; /* sort's smallest buffer; 0 in gm_config means "chosen from the machine" */
    if (n > cli->config.buffer_size)
        cli->config.buffer_size = (size_t)n;
    return GM_OK;
}

/* sort's specify_nthreads: a positive count; sort takes a huge one as "as many
 * as possible", gpumerge as MAX_THREADS. */
static int parse_parallel(gm_cli *cli, const char *arg, gm_status *st)
{
    uintmax_t n;
    const char *end;
    num_result r = read_count(arg, &end, &n, "");
    if (r == NUM_OVERFLOW)
        n = MAX_THREADS;
    else if (r != NUM_OK)
        return number_error(st, r, "--parallel", arg);
    if (n == 0)
        return die(st, "%s", "number in parallel must be nonzero");
    cli->config.threads = n > MAX_THREADS ? MAX_THREADS : (int)n;
    return GM_OK;
}

/* sort's specify_nmerge: at least 2, at most the open-file limit less 3. */
static int parse_batch_size(gm_cli *cli, const char *arg, gm_status *st)
{
    uintmax_t n;
    const char *end;
    struct rlimit rl;
    uintmax_t limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? (uintmax_t)rl.rlim_cur : 1024;
    unsigned max = (unsigned)((limit > UINT32_MAX ? UINT32_MAX : limit) - 3);
    num_result r = read_count(arg, &end, &n, "");
    if (r == NUM_OK && n < 2)
        return gm_fail(st, GM_EUSAGE,
                       "invalid --batch-size argument '%s'\n"
                       "gpumerge: minimum --batch-size argument is '2'", arg);
    if (r == NUM_OVERFLOW || (r == NUM_OK && (n > max || n > INT32_MAX)))
        return gm_fail(st, GM_EUSAGE,
                       "--batch-size argument '%s' too large\n"
                       "gpumerge: maximum --batch-size argument with current rlimit is %u",
                       arg, max);
    if (r != NUM_OK)
        return number_error(st, r, "--batch-size", arg);
    cli->config.batch_size = (int)n;
    return GM_OK;
}

/* ---------------------------------------------------------------- options */

/* State that lives only while parsing. */
typedef struct parse_state {
    int check;              /* 0, 'c' or 'C' */
    int merge;              /* -m seen */
    const char *files_from; /* --files0-from */
    char orders[4];         /* the global orders given (-g, -h, -n), in sort's order */
    int keyed;              /* -k seen */
    int tabbed;             /* -t seen */
    char fold[32];          /* -f as given, or "" */
} parse_state;

/* A global -n, -g or -h (or --sort=WORD): sort refuses two different ones. */
static int set_order(gm_cli *cli, parse_state *ps, int c, gm_status *st)
{
    static const char letters[] = "ghn";
    static const gm_order orders[] = { GM_ORDER_GENERAL, GM_ORDER_HUMAN, GM_ORDER_NUMERIC };
    int at = (int)(strchr(letters, c) - letters);
    ps->orders[at] = (char)c;
    (void)st;
    cli->keyspec.order = orders[at];
    cli->keyspec.order_given = 1;
    return GM_OK;
}

/* Two global orders are refused as sort refuses them: where a key takes the
 * global options (no -k, or a key without flags of its own). */
static int check_orders(const gm_cli *cli, const parse_state *ps, gm_status *st)
{
    char both[8];
    int n = 0;
    for (int i = 0; i < 3; i++)
        if (ps->orders[i])
            both[n++] = ps->orders[i];
    both[n] = '\0';
    int inherits = cli->keyspec.nkeys == 0;
    for (int i = 0; i < cli->keyspec.nkeys; i++)
        inherits |= !cli->keyspec.keys[i].has_flags;
    if (n > 1 && inherits)
        return die(st, "options '-%s' are incompatible", both);
    return GM_OK;
}

/* -t SEP as sort takes it: one byte, or "\0" for NUL; the same one each time. */
static int set_tab(gm_cli *cli, parse_state *ps, const char *arg, gm_status *st)
{
    char q[512];
    int tab = (unsigned char)arg[0];
    if (!arg[0])
        return die(st, "%s", "empty tab");
    if (arg[1]) {
        if (strcmp(arg, "\\0") != 0)
            return die(st, "multi-character tab %s", quote_always(arg, q, sizeof q));
        tab = '\0';
    }
    if (cli->keyspec.tab >= 0 && cli->keyspec.tab != tab)
        return die(st, "%s", "incompatible tabs");
    cli->keyspec.tab = tab;
    ps->tabbed = 1;
    return GM_OK;
}

/* An option gpumerge does not implement, named as given (spelled after the
 * prefix: "--sort=" and the word, or "" and the option). */
static int refuse(int id, const char *spelled, const char *prefix, gm_status *st)
{
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (refused[i].id == id) {
            char msg[400];
            snprintf(msg, sizeof msg, "option '%s%.100s' is not supported: %s", prefix,
                     spelled, refused[i].reason);
            return die(st, "%s", msg);
        }
    return GM_OK;
}

/* Sets the check mode c ('c' or 'C'), as sort does: -c and -C do not mix. */
static int set_check(parse_state *ps, int c, gm_status *st)
{
    if (ps->check && ps->check != c)
        return die(st, "%s", "options '-cC' are incompatible");
    ps->check = c;
    return GM_OK;
}

/* Applies option id with its argument (or NULL); spelled is the option as
 * messages name it ("-S" or "--buffer-size"). */
static int apply(gm_cli *cli, parse_state *ps, int id, const char *arg, const char *spelled,
                 gm_status *st)
{
    static const char *const devices[] = { "auto", "cpu", "gpu" };
    static const char *const kernels[] = { "auto", "basic", "tiled", "circular" };
    static const char *const check_names[] = { "quiet|silent", "diagnose-first" };
    static const int check_values[] = { 'C', 'c' };
    static const char *const sort_names[] = { "general-numeric", "human-numeric", "month",
                                              "numeric", "random", "version" };
    static const int sort_values[] = { 'g', 'h', 'M', 'n', 'R', 'V' };
    gm_config *cfg = &cli->config;
    int n;
    char *end;
    switch (id) {
    case 'b':
        cli->keyspec.skip_blanks = 1;
        return GM_OK;
    case 'f': /* refused in finish where a key compares bytes: numbers have no case */
        snprintf(ps->fold, sizeof ps->fold, "%s", spelled);
        return GM_OK;
    case 'g':
    case 'h':
    case 'n':
        return set_order(cli, ps, id, st);
    case 'k':
        ps->keyed = 1;
        return gm_keyspec_parse_key(&cli->keyspec, arg, st);
    case 't':
        return set_tab(cli, ps, arg, st);
    case 's':
        cli->keyspec.stable = 1;
        return GM_OK;
    case OPT_STRICT:
        cfg->strict = 1;
        return GM_OK;
    case 'c':
    case 'C':
        return set_check(ps, id, st);
    case OPT_CHECK:
        if (!arg)
            return set_check(ps, 'c', st);
        if (arg_match("--check", arg, check_names, 2, &n, st))
            return st->code;
        return set_check(ps, check_values[n], st);
    case 'm':
        ps->merge = 1;
        return GM_OK;
    case 'o':
        if (cfg->output && strcmp(cfg->output, arg) != 0)
            return die(st, "%s", "multiple output files specified");
        cfg->output = arg;
        return GM_OK;
    case 'r':
        cfg->reverse = 1;
        cli->keyspec.reverse = 1;
        return GM_OK;
    case 'u':
        cfg->unique = 1;
        cli->keyspec.unique = 1;
        return GM_OK;
    case 'v':
        cfg->verbose = 1;
        return GM_OK;
    case 'z':
        cfg->zero_terminated = 1;
        cli->keyspec.eol = '\0';
        return GM_OK;
    case 'S':
        return parse_size(cli, spelled, arg, st);
    case 'T':
        cfg->tmpdir = arg;
        return GM_OK;
    case OPT_BATCH_SIZE:
        return parse_batch_size(cli, arg, st);
    case OPT_PARALLEL:
        return parse_parallel(cli, arg, st);
    case OPT_FILES0_FROM:
        ps->files_from = arg;
        return GM_OK;
    case OPT_PROGRESS:
        cfg->progress = 1;
        return GM_OK;
    case OPT_SORT:
        if (arg_match("--sort", arg, sort_names, 6, &n, st))
            return st->code;
        if (strchr("ghn", sort_values[n]))
            return set_order(cli, ps, sort_values[n], st);
        return refuse(sort_values[n], arg, "--sort=", st);
    case OPT_DEVICE:
        n = pick(arg, devices, 3);
        if (n < 0)
            return bad_choice(st, "--device", arg, "auto, cpu, gpu");
        cfg->device = (gm_device)n;
        return GM_OK;
    case OPT_KERNEL:
        n = pick(arg, kernels, 4);
        if (n < 0)
            return bad_choice(st, "--kernel", arg, "auto, basic, tiled, circular");
        cfg->kernel = (gm_kernel)n;
        return GM_OK;
    case OPT_THREADS:
        errno = 0;
        long t = strtol(arg, &end, 10);
        if (end == arg || *end || errno || t < 1 || t > MAX_THREADS)
            return usage_error(st, "invalid --threads: '%s' (want 1 to 4096)", arg);
        cfg->threads = (int)t;
        return GM_OK;
    case OPT_HELP:
        cli->show_help = 1;
        return GM_OK;
    case OPT_VERSION:
        cli->show_version = 1;
        return GM_OK;
    default:
        return refuse(id, spelled, "", st);
    }
}

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
    usage_error(st, "%s", msg);
    return -2;
}

/* Reads --files0-from's names as sort does: NUL-terminated (the last may lack
 * its NUL), none empty, none '-'; no operands besides. */
static int read_files0(gm_cli *cli, const char *from, gm_status *st)
{
    char q[512];
    if (cli->nfiles > 0) {
        char msg[640];
        snprintf(msg, sizeof msg,
                 "extra operand %s\nfile operands cannot be combined with --files0-from",
                 quote_always(cli->files[0], q, sizeof q));
        return usage_error(st, "%s", msg);
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
        return die(st, "cannot read file names from %s", quote_always(from, q, sizeof q));
    }
    text[len] = '\0';
    cli->names0 = text;

    int count = 0;
    for (size_t i = 0; i < len; i++)
        count += text[i] == '\0';
    count += len > 0 && text[len - 1] != '\0';
    if (count == 0)
        return die(st, "no input from %s", quote_always(from, q, sizeof q));
    free(cli->files);
    cli->files = malloc((size_t)count * sizeof *cli->files);
    if (!cli->files)
        return gm_fail(st, GM_ENOMEM, "out of memory");
    cli->nfiles = 0;
    for (size_t i = 0; i < len; i += strlen(text + i) + 1) {
        char *name = text + i;
        if (strcmp(name, "-") == 0)
            return die(st, "%s", "when reading file names from stdin, no file name of '-' allowed");
        if (name[0] == '\0')
            return gm_fail(st, GM_EUSAGE, "%s:%d: invalid zero-length file name",
                           gm_quote(from, q, sizeof q), cli->nfiles + 1);
        cli->files[cli->nfiles++] = name;
    }
    return GM_OK;
}

/* An operand: the first one before any "--" may be the subcommand, or "help",
 * which is --help. */
static void operand(gm_cli *cli, char *arg, int may_be_command)
{
    static const char *const commands[] = { "merge", "sort", "check", "help" };
    if (may_be_command && !cli->have_op && cli->nfiles == 0) {
        int c = pick(arg, commands, 4);
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
static int mode_conflict(const gm_cli *cli, const parse_state *ps, gm_status *st)
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
    return usage_error(st, "%s", msg);
}

/* Everything after the loop over argv, in sort's order. */
static int finish(gm_cli *cli, parse_state *ps, gm_status *st)
{
    gm_config *cfg = &cli->config;
    char q[512];
    if (ps->files_from && read_files0(cli, ps->files_from, st))
        return st->code;
    if (cli->have_op) {
        if (mode_conflict(cli, ps, st))
            return st->code;
        if (cli->op == GM_OP_CHECK && cfg->output)
            return usage_error(st, "%s", "check writes no output: -o is not allowed");
    } else {
        cli->op = ps->check ? GM_OP_CHECK : ps->merge ? GM_OP_MERGE : GM_OP_SORT;
        if (ps->check && cli->nfiles > 1) {
            char msg[600];
            snprintf(msg, sizeof msg, "extra operand %s not allowed with -%c",
                     quote_always(cli->files[1], q, sizeof q), ps->check);
            return die(st, "%s", msg);
        }
        if (ps->check && cfg->output) {
            char msg[64];
            snprintf(msg, sizeof msg, "options '-%co' are incompatible", ps->check);
            return die(st, "%s", msg);
        }
    }
    cfg->check_quiet = ps->check == 'C';
    /* --strict is the integer path: whole lines, each one integer */
    const char *keyed = ps->keyed ? "-k" : ps->tabbed ? "-t" : ps->orders[0] ? "-g"
                        : ps->orders[1] ? "-h" : NULL;
    if (cfg->strict && keyed) {
        char msg[128];
        snprintf(msg, sizeof msg,
                 "options '--strict' and '%s' are incompatible: --strict takes lines of one "
                 "integer each", keyed);
        return die(st, "%s", msg);
    }
    if (check_orders(cli, ps, st))
        return st->code;
    gm_keyspec_finish(&cli->keyspec);
    cfg->keyspec = &cli->keyspec;
    for (int i = 0; ps->fold[0] && i < cli->keyspec.nkeys; i++)
        if (!cli->keyspec.keys[i].has_flags && cli->keyspec.keys[i].order == GM_ORDER_BYTES)
            return refuse('f', ps->fold, "", st);
    return GM_OK;
}

/* With POSIXLY_CORRECT, options end at the first file operand (getopt's rule,
 * which sort follows); sort still takes "-oFILE", or "-o" with a word after it,
 * there unless it checks. A subcommand is not a file: options go on after it. */
static int posix_options_end(int argc, char **argv, int i, const gm_cli *cli,
                             const parse_state *ps)
{
    const char *a = argv[i];
    if (cli->nfiles == 0)
        return 0;
    int checks = ps->check || (cli->have_op && cli->op == GM_OP_CHECK);
    return checks || !(a[0] == '-' && a[1] == 'o' && (a[2] || i + 1 < argc));
}

int gm_cli_parse(int argc, char **argv, gm_cli *cli, gm_status *st)
{
    memset(cli, 0, sizeof *cli);
    gm_keyspec_init(&cli->keyspec);
    parse_state ps;
    memset(&ps, 0, sizeof ps);
    cli->files = malloc((size_t)(argc > 0 ? argc : 1) * sizeof *cli->files);
    if (!cli->files)
        return gm_fail(st, GM_ENOMEM, "out of memory");
    int only_operands = 0;
    const int posix = getenv("POSIXLY_CORRECT") != NULL;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (posix && !only_operands && posix_options_end(argc, argv, i, cli, &ps))
            only_operands = 1;
        if (only_operands || a[0] != '-' || a[1] == '\0') {
            operand(cli, a, !only_operands);
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
                return usage_error(st, "unrecognized option '%.600s'", a);
            const cli_option *o = &long_options[k];
            char spelled[64];
            snprintf(spelled, sizeof spelled, "--%s", o->name);
            const char *eq = strchr(a, '=');
            const char *arg = eq ? eq + 1 : NULL;
            if (arg && o->has_arg == NO_ARG)
                return usage_error(st, "option '%s' doesn't allow an argument", spelled);
            if (!arg && o->has_arg == REQUIRED_ARG) {
                if (i + 1 == argc)
                    return usage_error(st, "option '%s' requires an argument", spelled);
                arg = argv[++i];
            }
            if (apply(cli, &ps, o->id, arg, spelled, st))
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
                return usage_error(st, "invalid option -- '%s'", c);
            }
            const char *arg = NULL;
            if (spec[1] == ':') {
                if (p[1])
                    arg = p + 1;
                else if (i + 1 < argc)
                    arg = argv[++i];
                else
                    return usage_error(st, "option requires an argument -- '%s'", spelled + 1);
            }
            if (apply(cli, &ps, *p, arg, spelled, st))
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
