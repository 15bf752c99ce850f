/*
 * gm.c - the three operations of gm.h over the streaming data plane (stream.h):
 *
 *   install the temporary-file clean-up and give closed standard descriptors
 *   /dev/null -> fail early when --device=gpu has no GPU
 *   -> stream: open every input, read blocks, parse them on all cores, merge or
 *   sort chunk by chunk (spilling sorted runs to temporary files past the memory
 *   budget), format and write in order -> rename -o's temporary file into place
 *   -> the -v report (budget, runs, passes, and the time of each stage).
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cleanup.h"
#include "engine.h"
#include "gm.h"
#include "stream.h"
#include "util.h"

static void print_report(const gm_config *cfg, const char *what, int nins,
                         const gm_stream_stats *s, int nthreads)
{
    if (!cfg->verbose)
        return;
    const gm_engine_report *rep = &s->rep;
    int gpu = s->used_engine && rep->device == GM_DEVICE_GPU;
    gm_say(cfg, GM_MSG_VERBOSE, "plan: %s %d input%s, %lld keys, int%d, %s, %d thread%s", what,
           nins, nins == 1 ? "" : "s", (long long)s->keys, (int)s->width * 8,
           gpu ? "gpu" : "cpu", nthreads, nthreads == 1 ? "" : "s");
    gm_say(cfg, GM_MSG_VERBOSE, "memory: budget %.1f MB, %d temporary run%s, %d merge pass%s over them",
           (double)s->budget / 1e6, s->runs, s->runs == 1 ? "" : "s", s->passes,
           s->passes == 1 ? "" : "es");
    if (s->used_engine)
        gm_say(cfg, GM_MSG_VERBOSE, "device: %s", rep->reason);
    if (gpu)
        gm_say(cfg, GM_MSG_VERBOSE, "gpu: %s, kernel %s, %d merge pass%s%s", rep->gpu_name,
               gm_kernel_name(rep->kernel), rep->passes, rep->passes == 1 ? "" : "es",
               rep->deduplicated ? ", -u on the device" : "");
    gm_say(cfg, GM_MSG_VERBOSE, "time: read %.3f s (reading files, waiting for pipes)", s->read);
    gm_say(cfg, GM_MSG_VERBOSE, "time: parse %.3f s", s->parse);
    if (gpu)
        gm_say(cfg, GM_MSG_VERBOSE,
               "time: %s %.3f s (last chunk: host to device %.3f s, kernels %.3f s, device to host %.3f s)",
               what, s->engine, rep->h2d, rep->kernel_s, rep->d2h);
    else
        gm_say(cfg, GM_MSG_VERBOSE, "time: %s %.3f s", what, s->engine);
    if (s->runs > 0)
        gm_say(cfg, GM_MSG_VERBOSE, "time: temporary runs %.3f s (writing and reading)", s->spill);
    gm_say(cfg, GM_MSG_VERBOSE, "time: format %.3f s, write %.3f s (overlapped: %.3f s in all)",
           s->format, s->write_syscalls, s->write);
}

/* Under a memory limit every malloc arena a thread creates reserves 64 MB of
 * address space; one arena keeps ulimit -v for the data. */
static void tune_malloc(void)
{
    struct rlimit rl;
    if ((getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) ||
        (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY))
        mallopt(M_ARENA_MAX, 1);
}

int gm_run(gm_op c, const gm_config *cfg, char *const *names, int nnames, gm_status *st)
{
    static char *const stdin_name[] = { "-" };
    if (nnames == 0) {
        names = stdin_name;
        nnames = 1;
    }
    int rc = gm_cleanup_install(st); /* temporary files never outlive a signal */
    if (rc)
        return rc;
    tune_malloc();
    gm_fill_std_fds();
    rc = gm_engine_prepare(cfg, st); /* before reading gigabytes (check too) */
    if (rc)
        return rc;
    gm_stream_stats stats;
    rc = gm_stream_run(c, cfg, names, nnames, &stats, st);
    if (!rc && c != GM_OP_CHECK)
        print_report(cfg, c == GM_OP_MERGE ? "merge" : "sort", nnames, &stats,
                     cfg->threads > 0 ? cfg->threads : gm_cpu_count());
    return rc;
}
