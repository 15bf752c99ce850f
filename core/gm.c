/*
 * gm.c - the three operations of gm.h over the streaming data plane (stream.h):
 *
 *   install the temporary-file clean-up and give closed standard descriptors
 *   /dev/null -> the plan (plan.h: threads, budget and its shares, fan-in), once
 *   -> stream: begin CUDA's start-up when a GPU may be used, open every
 *   input, read blocks, parse them on all cores (--device=gpu fails here, before
 *   any output, when the start-up found no GPU), merge or sort chunk by chunk
 *   (spilling sorted runs to temporary files past the memory budget), format and
 *   write in order, rename -o's temporary file into place -> on the process's last
 *   run, end CUDA's part -> the -v report (budget, runs, passes, the time of each
 *   stage and the total since main's first line).
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
#include "plan.h"
#include "records.h"
#include "stream.h"
#include "util.h"

/* The calls by op and device, after the device line of a run of several calls. */
static void say_calls(char *buf, size_t size, const gm_stream_stats *s)
{
    static const char *const op[2] = { "sort", "merge" }, *const dev[2] = { "cpu", "gpu" };
    size_t len = 0;
    buf[0] = '\0';
    for (int o = 0; o < 2; o++)
        for (int d = 0; d < 2; d++)
            if (s->calls[o][d] && len < size)
                len += (size_t)snprintf(buf + len, size - len, "; %s: %d on the %s", op[o],
                                        s->calls[o][d], dev[d]);
}

/* What ran (the plan was said before the work), then where the time went: the calling thread's stages one by one, which
 * add up to the run's total but for the rest it names; what other threads did
 * meanwhile in brackets (overlapped); the total from the program's first line. */
static void print_report(const gm_config *cfg, const char *what, int nins,
                         const gm_stream_stats *s, int nthreads, double startup,
                         double teardown, double took, double total)
{
    const gm_engine_report *rep = &s->rep;
    int gpu = s->used_engine && rep->device == GM_DEVICE_GPU;
    char size[64], calls[256];
    gm_say(cfg, GM_MSG_VERBOSE, "path: integer keys (%s)",
           cfg->strict ? "--strict" : "every line a canonical integer, by the whole line's -n");
    gm_say(cfg, GM_MSG_VERBOSE, "ran: %s %d input%s, %lld keys, int%d, %s, %d thread%s", what,
           nins, nins == 1 ? "" : "s", (long long)s->keys, (int)s->width * 8,
           gpu ? "gpu" : "cpu", nthreads, nthreads == 1 ? "" : "s");
    gm_say(cfg, GM_MSG_VERBOSE, "memory: budget %s, %d temporary run%s, %d merge pass%s over them",
           gm_plan_bytes((double)s->budget, size, sizeof size), s->runs, s->runs == 1 ? "" : "s",
           s->passes, s->passes == 1 ? "" : "es");
    int ncalls = s->calls[0][0] + s->calls[0][1] + s->calls[1][0] + s->calls[1][1];
    if (ncalls == 1)
        gm_say(cfg, GM_MSG_VERBOSE, "device: %s", rep->reason);
    else if (ncalls > 1) {
        say_calls(calls, sizeof calls, s);
        gm_say(cfg, GM_MSG_VERBOSE, "device: %s (the largest of %d calls, %lld keys%s)",
               rep->reason, ncalls, (long long)s->rep_keys, calls);
    }
    if (gpu)
        gm_say(cfg, GM_MSG_VERBOSE, "gpu: %s, kernel %s, %d merge pass%s%s", rep->gpu_name,
               gm_kernel_name(rep->kernel), rep->passes, rep->passes == 1 ? "" : "es",
               rep->deduplicated ? ", -u on the device" : "");

    int background = 0;
    double cuda = gm_engine_startup(&background);
    double stages = startup + s->open + s->read + s->parse + s->startup_wait + s->engine +
                    s->spill + s->write + s->finish + s->cleanup + teardown;
    gm_say(cfg, GM_MSG_VERBOSE, "time: start-up %.3f s (%s to the first input)", startup,
           cfg->started > 0 ? "the first line of main" : "the call");
    gm_say(cfg, GM_MSG_VERBOSE, "time: open %.3f s (the inputs and the output)", s->open);
    gm_say(cfg, GM_MSG_VERBOSE, "time: read %.3f s (reading files, waiting for pipes)", s->read);
    gm_say(cfg, GM_MSG_VERBOSE, "time: parse %.3f s", s->parse);
    if (cuda > 0 || s->startup_wait > 0.0005)
        gm_say(cfg, GM_MSG_VERBOSE,
               "time: waiting for CUDA's start-up %.3f s (the start-up took %.3f s, %s)",
               s->startup_wait, cuda,
               background ? "begun in the background, overlapped with the stages before"
                          : "in the run's own thread");
    if (s->h2d + s->kernel_s + s->d2h > 0)
        gm_say(cfg, GM_MSG_VERBOSE,
               "time: %s %.3f s (on the gpu: host to device %.3f s, kernels %.3f s, device "
               "to host %.3f s; the rest allocation and the cpu's calls)",
               what, s->engine, s->h2d, s->kernel_s, s->d2h);
    else
        gm_say(cfg, GM_MSG_VERBOSE, "time: %s %.3f s", what, s->engine);
    if (s->runs > 0)
        gm_say(cfg, GM_MSG_VERBOSE, "time: temporary runs %.3f s (writing and reading)", s->spill);
    char ahead[160] = "";
    if (s->ahead > 0)
        snprintf(ahead, sizeof ahead,
                 "; before them, overlapped: the output's space reserved ahead on a thread "
                 "of its own (fallocate %.3f s)%s",
                 s->ahead, s->touchers ? ", its pages faulted in behind it" : "");
    if (s->mapped)
        gm_say(cfg, GM_MSG_VERBOSE,
               "time: format and write %.3f s, finish %.3f s (close, rename); within them, "
               "on the pool: format into the mapping %.3f s a thread (its page faults "
               "included), copies, fallocate, mmap and munmap %.3f s%s",
               s->write, s->finish, s->format, s->write_syscalls, ahead);
    else
        gm_say(cfg, GM_MSG_VERBOSE,
               "time: format and write %.3f s, finish %.3f s (the last blocks, close, rename); "
               "within them, on the pool and the writer thread: format %.3f s a thread, "
               "write(2) %.3f s",
               s->write, s->finish, s->format, s->write_syscalls);
    char began[160] = "";
    if (s->teardown_begun && took > 0)
        snprintf(began, sizeof began,
                 ": the teardown took %.3f s, begun in the background when the device's "
                 "work was over, overlapped with finishing the output", took);
    gm_say(cfg, GM_MSG_VERBOSE,
           "time: clean-up %.3f s (closing the inputs, freeing buffers %.3f s; %s and a "
           "replaced output's release %.3f s%s)",
           s->cleanup + teardown, s->cleanup, began[0] ? "waiting for CUDA's teardown"
                                                       : "CUDA teardown", teardown, began);
    gm_say(cfg, GM_MSG_VERBOSE,
           "time: total %.3f s in the process (the stages above %.3f s, the rest %.3f s)",
           total, stages, total - stages);
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

/* The order of lines when the caller names none: whole lines by -n, with the
 * configuration's -r, -u and -z. */
static void default_keyspec(gm_keyspec *ks, const gm_config *cfg)
{
    gm_keyspec_init(ks);
    ks->reverse = cfg->reverse;
    ks->unique = cfg->unique;
    ks->eol = cfg->zero_terminated ? '\0' : '\n';
    gm_keyspec_finish(ks);
}

/* Why a run goes straight to the records path, or NULL when the integer path
 * may serve it (--strict, or whole lines by -n: it hands the run over at the
 * first line that is not a canonical integer). A stable merge is the records
 * path's from the start: the integer merge writes equal keys of several inputs
 * in one round, before a later line of an earlier input could come between. */
static const char *records_reason(gm_op op, const gm_config *cfg)
{
    const gm_keyspec *ks = cfg->keyspec;
    if (cfg->strict)
        return NULL;
    if (!ks->whole_line_numeric)
        return "keys in fields, or an order other than -n";
    if (op == GM_OP_MERGE && ks->stable)
        return "a stable merge";
    return NULL;
}

int gm_run(gm_op c, const gm_config *given, char *const *names, int nnames, gm_status *st)
{
    gm_config config = *given, *cfg = &config;
    gm_keyspec dflt;
    if (!cfg->keyspec) {
        default_keyspec(&dflt, cfg);
        cfg->keyspec = &dflt;
    }
    double started = cfg->started > 0 ? cfg->started : gm_now();
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
    gm_engine_choose(cfg);
    gm_stream_stats stats;
    memset(&stats, 0, sizeof stats);
    double streaming = gm_now();
    const char *why = records_reason(c, cfg);
    if (why) {
        gm_say(cfg, GM_MSG_VERBOSE, "path: records (%s)", why);
        int done = 0; /* --device=gpu without a usable GPU fails here too */
        rc = cfg->device == GM_DEVICE_GPU ? gm_engine_prepare(cfg, 1, &done, st) : GM_OK;
        if (!rc && cfg->device == GM_DEVICE_GPU)
            gm_say(cfg, GM_MSG_VERBOSE, "device: cpu (the GPU sorts integer keys; records "
                                        "are sorted on the CPU)");
    }
    /* The run's numbers, once, before any work (after CUDA's start-up where the
     * records path waits for it: the descriptors free are those it leaves). */
    gm_plan plan;
    gm_plan_make(&plan, c, cfg, nnames);
    if (!rc && !why)
        rc = gm_stream_run(c, cfg, &plan, names, nnames, &stats, st);
    else if (!rc)
        rc = gm_records_run(c, cfg, &plan, names, nnames, st);
    double took = 0, teardown = cfg->last ? gm_engine_release(&took) : 0;
    teardown += gm_close_later_join(); /* a replaced -o file's release */
    if (!rc && !why && !stats.handed_over && c != GM_OP_CHECK && cfg->verbose) {
        double total = gm_now() - started;
        print_report(cfg, c == GM_OP_MERGE ? "merge" : "sort", nnames, &stats,
                     stats.threads, streaming - started,
                     teardown, took, total);
    }
    return rc;
}
