/*
 * optnum.c - the option parser's numbers, as coreutils' sort.c reads them: -S's
 * size (specify_sort_size), --parallel's count (specify_nthreads) and
 * --batch-size's (specify_nmerge), each through gnulib's xstrtoumax rules
 * (read_count here) and with xstrtol_fatal's messages; gpumerge's --gpu device
 * number read and reported the same way.
 */
#define _GNU_SOURCE
#include "options_impl.h"

#include "../core/base/util.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/random.h>
#include <unistd.h>

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
int gm_cli_parse_size(gm_cli *cli, const char *opt, const char *arg, gm_status *st)
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
 * as possible", gpumerge as GM_CLI_MAX_THREADS. */
int gm_cli_parse_parallel(gm_cli *cli, const char *arg, gm_status *st)
{
    uintmax_t n;
    const char *end;
    num_result r = read_count(arg, &end, &n, "");
    if (r == NUM_OVERFLOW)
        n = GM_CLI_MAX_THREADS;
    else if (r != NUM_OK)
        return number_error(st, r, "--parallel", arg);
    if (n == 0)
        return gm_cli_die(st, "%s", "number in parallel must be nonzero");
    cli->config.threads = n > GM_CLI_MAX_THREADS ? GM_CLI_MAX_THREADS : (int)n;
    return GM_OK;
}

/* sort's specify_nmerge: at least 2, at most the open-file limit less 3. */
int gm_cli_parse_batch_size(gm_cli *cli, const char *arg, gm_status *st)
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

/* --gpu=N: a device number from 0, read as sort reads a count (no sign, no
 * suffix). Whether device N exists is the probe's to say, when CUDA starts. */
int gm_cli_parse_gpu(gm_cli *cli, const char *arg, gm_status *st)
{
    uintmax_t n;
    const char *end;
    num_result r = read_count(arg, &end, &n, "");
    if (r == NUM_OK && n > INT32_MAX)
        r = NUM_OVERFLOW;
    if (r != NUM_OK)
        return number_error(st, r, "--gpu", arg);
    cli->config.gpu = (int)n;
    return GM_OK;
}

int gm_cli_random_seed(const char *source, unsigned char seed[16], gm_status *st)
{
    char shown[512];
    if (!source) {
        size_t got = 0;
        while (got < 16) {
            ssize_t r = getrandom(seed + got, 16 - got, 0);
            if (r < 0 && errno != EINTR)
                return gm_cli_die(st, "open failed: getrandom: %s", strerror(errno));
            got += r > 0 ? (size_t)r : 0;
        }
        return GM_OK;
    }
    gm_quote(source, shown, sizeof shown);
    int fd = open(source, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        char msg[600];
        snprintf(msg, sizeof msg, "open failed: %s: %s", shown, strerror(errno));
        return gm_cli_die(st, "%s", msg);
    }
    size_t got = 0;
    int err = 0;
    while (got < 16) {
        ssize_t r = read(fd, seed + got, 16 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            err = r < 0 ? errno : 0;
            break;
        }
        got += (size_t)r;
    }
    close(fd);
    if (got == 16)
        return GM_OK;
    char msg[600];
    if (err)
        snprintf(msg, sizeof msg, "read failed: %s: %s", shown, strerror(err));
    else
        snprintf(msg, sizeof msg, "%s: end of file",
                 gm_cli_quote_always(source, shown, sizeof shown));
    return gm_cli_die(st, "%s", msg);
}
