/*
 * report.c - -v's lines (report.h): a fact, a stage's row, and the integer
 * path's report from its stats (stats.h): what the run found, its stages one by
 * one with what overlapped them, and the total.
 */
#include "plan/report.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "plan/plan.h"
#include "base/util.h"

void gm_report_fact(const gm_config *cfg, const char *key, const char *fmt, ...)
{
    if (!cfg->verbose)
        return;
    char text[448];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    gm_say(cfg, GM_MSG_VERBOSE, "%-*s %s", GM_REPORT_KEY, key, text);
}

void gm_report_row(const gm_config *cfg, const char *stage, double seconds, const char *fmt,
                   ...)
{
    if (!cfg->verbose)
        return;
    char note[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(note, sizeof note, fmt, ap);
    va_end(ap);
    gm_say(cfg, GM_MSG_VERBOSE, "%-*s %8.3f s%s%s", GM_REPORT_KEY, stage, seconds,
           note[0] ? "  " : "", note);
}

void gm_report_runs(const gm_config *cfg, int runs, int passes)
{
    const char *prog = cfg->compress_program;
    gm_report_fact(cfg, "runs", "%d temporary, %d merge pass%s over them%s%s%s%s%s", runs, passes,
                   passes == 1 ? "" : "es", prog ? ", written through " : "", prog ? prog : "",
                   prog ? ", read through " : "", prog ? prog : "", prog ? " -d" : "");
}

int gm_report_gpu_touched(const gm_stream_stats *s)
{
    int background = 0;
    double cuda = gm_engine_startup(&background);
    return cuda > 0 || s->startup_wait > 0.0005 ||
           (s->used_engine && s->rep.device == GM_DEVICE_GPU);
}

/* What the run found: its keys, its runs, the device of its engine calls and why. */
static void say_found(const gm_config *cfg, gm_op op, const gm_stream_stats *s)
{
    static const char *const opn[2] = { "sort", "merge" }, *const dev[2] = { "cpu", "gpu" };
    const gm_engine_report *rep = &s->rep;
    int gpu = s->used_engine && rep->device == GM_DEVICE_GPU;
    gm_report_fact(cfg, "keys", "%lld, int%d", (long long)s->keys, (int)s->width * 8);
    if (op != GM_OP_CHECK)
        gm_report_runs(cfg, s->runs, s->passes);
    int ncalls = s->calls[0][0] + s->calls[0][1] + s->calls[1][0] + s->calls[1][1];
    char calls[256] = "";
    size_t len = 0;
    for (int o = 0; o < 2 && ncalls > 1; o++)
        for (int d = 0; d < 2; d++)
            if (s->calls[o][d] && len < sizeof calls)
                len += (size_t)snprintf(calls + len, sizeof calls - len, "; %s: %d on the %s",
                                        opn[o], s->calls[o][d], dev[d]);
    /* one call where --device named its device: the engine's line said it all */
    int named = strncmp(rep->reason, "--device=", 9) == 0;
    if (ncalls == 1 && !named)
        gm_report_fact(cfg, "device", "%s (%s)", dev[gpu], rep->reason);
    else if (ncalls > 1)
        gm_report_fact(cfg, "device", "%s (%s; the largest of %d calls, %lld keys%s)", dev[gpu],
                       rep->reason, ncalls, (long long)s->rep_keys, calls);
    if (gpu)
        gm_report_fact(cfg, "gpu", "%s, kernel %s, %d merge pass%s%s", rep->gpu_name,
                       gm_kernel_name(rep->kernel), rep->passes, rep->passes == 1 ? "" : "es",
                       rep->deduplicated ? ", -u on the device" : "");
}

/* The rows of formatting and writing, and of the output's finish. */
static void say_write(const gm_config *cfg, const gm_stream_stats *s)
{
    char ahead[160] = "";
    if (s->ahead > 0)
        snprintf(ahead, sizeof ahead, "; the output's space reserved ahead (fallocate %.3f s)%s",
                 s->ahead, s->touchers ? ", its pages faulted in behind it" : "");
    if (s->mapped)
        gm_report_row(cfg, "write", s->write, "overlapped: format into the mapping %.3f s a "
                      "thread, fallocate, mmap and munmap %.3f s%s", s->format,
                      s->write_syscalls, ahead);
    else
        gm_report_row(cfg, "write", s->write, "overlapped: format %.3f s a thread, write(2) "
                      "%.3f s%s", s->format, s->write_syscalls, ahead);
    gm_report_row(cfg, "finish", s->finish, "the last blocks, close, rename");
}

void gm_report_stream(const gm_config *cfg, gm_op op, const gm_stream_stats *s, double startup,
                      double teardown, double took, double total)
{
    if (!cfg->verbose)
        return;
    say_found(cfg, op, s);
    int touched = gm_report_gpu_touched(s), background = 0;
    double cuda = gm_engine_startup(&background);
    gm_report_row(cfg, "start-up", startup, "%s to the run",
                  cfg->started > 0 ? "main's first line" : "the call");
    gm_report_row(cfg, "open", s->open, "%s",
                  op == GM_OP_CHECK ? "the inputs" : "the inputs and the output");
    gm_report_row(cfg, "read", s->read, "files read, pipes waited for");
    gm_report_row(cfg, "parse", s->parse, "%s",
                  op == GM_OP_CHECK ? "keys parsed, their order checked" : "keys parsed");
    if (touched)
        gm_report_row(cfg, "cuda", s->startup_wait, "waiting for CUDA's start-up, which took "
                      "%.3f s %s", cuda, background ? "in the background, beside the stages "
                      "before" : "in the run's own thread");
    const char *what = op == GM_OP_MERGE ? "merge" : "sort";
    if (op != GM_OP_CHECK && s->h2d + s->kernel_s + s->d2h > 0)
        gm_report_row(cfg, what, s->engine, "on the gpu: host to device %.3f s, kernels %.3f "
                      "s, device to host %.3f s", s->h2d, s->kernel_s, s->d2h);
    else if (op != GM_OP_CHECK)
        gm_report_row(cfg, what, s->engine, "%s", "");
    if (s->runs > 0)
        gm_report_row(cfg, "spill", s->spill, "temporary runs written and read back");
    if (op != GM_OP_CHECK)
        say_write(cfg, s);
    gm_report_end(cfg, touched, s->teardown_begun, s->cleanup, teardown, took,
                  startup + gm_stream_staged(s) - s->cleanup, total);
}

void gm_report_end(const gm_config *cfg, int touched, int teardown_begun, double cleanup,
                   double teardown, double took, double stages, double total)
{
    if (!cfg->verbose)
        return;
    char rest[200] = "";
    if (touched && teardown_begun && took > 0)
        snprintf(rest, sizeof rest, "; waiting for CUDA's teardown and a replaced output's "
                 "release %.3f s (the teardown took %.3f s, beside the finish)", teardown, took);
    else if (touched)
        snprintf(rest, sizeof rest, "; CUDA's teardown and a replaced output's release %.3f s",
                 teardown);
    else if (teardown >= 0.0005)
        snprintf(rest, sizeof rest, "; a replaced output's release %.3f s", teardown);
    gm_report_row(cfg, "clean-up", cleanup + teardown, "inputs closed, buffers freed %.3f s%s",
                  cleanup, rest);
    stages += cleanup + teardown;
    gm_report_row(cfg, "total", total, "the stages %.3f s, the rest %.3f s", stages,
                  total - stages);
}
