/*
 * plan.c - the run's numbers (plan.h): the budget as coreutils' default_sort_size,
 * the threads its share pays for, the fan-in as sort's NMERGE within the
 * descriptors free (those a pass writes to counted, as sort counts them), and
 * when -o's file is created; the budget's splits among chunks, rounds, blocks and the
 * writer; then -v's plan (report.h's shape).
 */
#define _GNU_SOURCE
#include "plan/plan.h"

#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device/gpu.h"
#include "keys/keys.h"
#include "merge/recmerge.h"
#include "plan/report.h"
#include "base/util.h"

enum {
    DEFAULT_FAN_IN = 16,           /* sort's NMERGE: the least fan-in by default */
    FAN_BLOCK = 64 << 10,          /* the least read a source of a pass keeps */
    MERGE_MEMORY = 96 << 20,       /* merge: all the inputs' buffers together, at most, */
    MERGE_CORES = 2,               /* per this many threads, */
    MERGE_SCALE = 8,               /* up to this many times (gm_plan_thread_scale) */
    MAX_BLOCK = 4 << 20,           /* a text block, per MERGE_CORES threads */
    MIN_BLOCK = 4 << 10,
    MIN_BUDGET = 64 << 10,
    FD_WRITTEN = 1,                /* what a pass writes: a run, or the output */
    FD_CHILD = 2,                  /* a --compress-program child's pipe: its ends
                                    * and the run's file, for a moment */
    READ_AHEAD_THREADS = 4,        /* merge inputs read ahead from this many threads */
    THREAD_SHARE = 8,              /* the threads' stacks take at most 1/this of the
                                    * budget, and the writer's buffers as much */
};

uint64_t gm_physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

size_t gm_default_budget(void)
{
    /* default_sort_size of coreutils' sort.c. */
    double size = 1e300;
    struct rlimit rl;
    if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        size = (double)rl.rlim_cur;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < size)
        size = (double)rl.rlim_cur;
    size /= 2;
    if (getrlimit(RLIMIT_RSS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (double)rl.rlim_cur / 16 * 15 < size)
        size = (double)rl.rlim_cur / 16 * 15;
    double page = (double)sysconf(_SC_PAGESIZE);
    double avail = (double)sysconf(_SC_AVPHYS_PAGES) * page;
    double total = (double)gm_physical_memory();
    double mem = avail > total / 8 ? avail : total / 8;
    if (total > 0 && total * 0.75 < size)
        size = total * 0.75; /* a quarter of the memory left to everything else */
    if (mem > 0 && mem < size)
        size = mem;
    if (size > (double)(SIZE_MAX / 4))
        size = (double)(SIZE_MAX / 4);
    return size < MIN_BUDGET ? MIN_BUDGET : (size_t)size;
}

static size_t clamp_size(size_t v, size_t lo, size_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* How many times a block and a merge's buffers grow with the threads: once per
 * MERGE_CORES threads, up to MERGE_SCALE. A block is read and parsed by all the
 * threads in fork-joins, and a merge round fills and drains the writer's pipeline,
 * so with more threads they are larger and those fixed costs stay small beside
 * the work. */
size_t gm_plan_thread_scale(int nthreads)
{
    size_t scale = nthreads > MERGE_CORES ? (size_t)(nthreads / MERGE_CORES) : 1;
    return scale < MERGE_SCALE ? scale : MERGE_SCALE;
}

int64_t gm_sort_chunk_keys(size_t budget, gm_width width)
{
    /* Half the budget for the chunk and the engine's scratch of the same size;
     * the rest for the text blocks, the staging area and the writer. */
    if (budget < MIN_BUDGET)
        budget = MIN_BUDGET;
    int64_t k = (int64_t)(budget / 4 / width);
    return k > 0 ? k : 1;
}

/* The descriptors free for a pass's inputs and runs (returned), of room free
 * now: beside them, what the pass writes (a run, or the output; standard output
 * has its own), a compressing child's pipe for a moment, and the output's
 * descriptor where it is held from the start: a stream named by -o (a terminal,
 * a fifo), or a regular -o file's replacement or spool where descriptors are
 * plenty (created before the inputs are read, its space reserved ahead of the
 * writing). Where they are short (fewer than wanted, sort's NMERGE, would stay),
 * *late is set: the regular file's is created when its first byte is due, as
 * sort opens its output for the last pass, so the passes before have it. */
static int plan_fds(const gm_config *cfg, int room, int wanted, int *late)
{
    int spare = FD_WRITTEN + (cfg->compress_program ? FD_CHILD : 0);
    struct stat sb;
    int regular = 0, stream = 0;
    if (cfg->output) {
        regular = stat(cfg->output, &sb) != 0 || S_ISREG(sb.st_mode); /* or made */
        stream = !regular;
    }
    *late = regular && room - spare - 1 < wanted;
    return room - spare - (stream || (regular && !*late));
}

/* The fan-in that --batch-size names, else as many sources as a pass's memory,
 * mem, holds, each with `buffers` reads of FAN_BLOCK (the descriptors free bound
 * it after), within sort's NMERGE and the records merge's limit: every input of a
 * merge, or every run of a sort, in one pass where they fit. */
static int fan_in_wanted(const gm_config *cfg, size_t mem, size_t buffers)
{
    if (cfg->batch_size >= 2)
        return cfg->batch_size;
    size_t k = mem / (buffers * FAN_BLOCK);
    return k < DEFAULT_FAN_IN ? DEFAULT_FAN_IN : k > GM_MERGE_MAX ? GM_MERGE_MAX : (int)k;
}

/* The fan-in below which the output is created late (plan_fds): --batch-size,
 * else sort's NMERGE. */
static int late_below(const gm_config *cfg)
{
    return cfg->batch_size >= 2 ? cfg->batch_size : DEFAULT_FAN_IN;
}

/* The records path's numbers: the threads asked for, the fan-in within the
 * descriptors free and the records merge's limit (a source's block is a fourth
 * of the budget's share, recsrc.c). */
static void plan_records(gm_plan *p, const gm_config *cfg, int cores, int room)
{
    p->records.threads = cores;
    int late;
    p->records.fds = plan_fds(cfg, room, late_below(cfg), &late);
    /* auto may start CUDA in the middle of a sort (recchunk.c); --device=gpu has
     * started it before the plan */
    if (p->op == GM_OP_SORT && cfg->device == GM_DEVICE_AUTO && gm_gpu_driver_loaded() &&
        p->records.fds >= GM_GPU_START_FDS + 2)
        p->records.fds -= GM_GPU_START_FDS;
    int fan_in = fan_in_wanted(cfg, p->budget, 4);
    if (fan_in > p->records.fds)
        fan_in = p->records.fds > 2 ? p->records.fds : 2;
    p->records.fan_in = fan_in > GM_MERGE_MAX ? GM_MERGE_MAX : fan_in;
}

void gm_plan_make(gm_plan *p, gm_op op, const gm_config *cfg, int nnames)
{
    *p = (gm_plan){ .op = op, .ninputs = nnames, .total_bytes = -1 };
    int cores = cfg->threads > 0 ? cfg->threads : gm_cpu_count();
    p->budget = cfg->buffer_size ? cfg->buffer_size : gm_default_budget();
    if (p->budget < MIN_BUDGET)
        p->budget = MIN_BUDGET;
    /* What the threads hold counts against the budget: as many threads as their
     * stacks' share pays for, and the writer's buffers within a share as large
     * (gm_writer.mem), so that any --parallel runs under a limit on the address
     * space (ulimit -v), whose half is the default budget. */
    size_t most_threads = p->budget / THREAD_SHARE / GM_THREAD_STACK;
    p->threads = (size_t)cores > most_threads ? (most_threads > 1 ? (int)most_threads : 1) : cores;
    p->writer_mem = p->budget / THREAD_SHARE;
    /* A merge pass holds its fan-in of inputs or runs open beside the spare;
     * every other input and run is closed until its pass. */
    int room = gm_fd_room();
    /* A merge round's buffers grow with the threads, as far as the budget allows. */
    size_t scale = gm_plan_thread_scale(p->threads);
    p->merge_mem = (size_t)MERGE_MEMORY * scale;
    if (p->budget < p->merge_mem)
        p->merge_mem = p->budget;
    p->fds = plan_fds(cfg, room, late_below(cfg), &p->output_late);
    if (cfg->device != GM_DEVICE_CPU && gm_gpu_driver_loaded() && p->fds >= GM_GPU_START_FDS + 2)
        p->fds -= GM_GPU_START_FDS; /* CUDA may start beside the merge (gpu.h) */
    p->fan_in = fan_in_wanted(cfg, p->merge_mem, 6); /* merge_block's six a source */
    if (p->fan_in > p->fds)
        p->fan_in = p->fds > 2 ? p->fds : 2;
    int k = nnames < p->fan_in ? nnames : p->fan_in;
    p->merge_block = clamp_size(p->merge_mem / (6 * (size_t)(k > 0 ? k : 1)), MIN_BLOCK,
                                (size_t)MAX_BLOCK * scale);
    p->run_read_keys = (int64_t)clamp_size(p->budget / (8 * 8 * (size_t)p->fan_in), 1024, 1 << 20);
    /* The sort's text block: a sixteenth of the budget, within MIN_BLOCK and
     * MAX_BLOCK times gm_plan_thread_scale. */
    p->sort_block = clamp_size(p->budget / 16, MIN_BLOCK, (size_t)MAX_BLOCK * scale);
    p->chunk_keys[0] = gm_sort_chunk_keys(p->budget, GM_I32);
    p->chunk_keys[1] = gm_sort_chunk_keys(p->budget, GM_I64);
    p->text_limit = p->budget / 2; /* the text, and the GPU's copies beside it */
    p->read_ahead = op == GM_OP_MERGE && p->threads >= READ_AHEAD_THREADS;
    plan_records(p, cfg, cores, room);
}

void gm_plan_inputs(gm_plan *p, int64_t total_bytes, uint64_t regular_bytes, int streams)
{
    p->total_bytes = total_bytes;
    p->regular_bytes = regular_bytes;
    p->streams = streams;
    if (streams > 0)
        p->fan_in = p->fan_in - streams > 2 ? p->fan_in - streams : 2;
}

const char *gm_plan_bytes(double bytes, char *buf, size_t size)
{
    if (bytes >= 1024.0 * 1024 * 1024)
        snprintf(buf, size, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
    else if (bytes >= 1024.0 * 1024)
        snprintf(buf, size, "%.1f MiB", bytes / (1024.0 * 1024));
    else
        snprintf(buf, size, "%.1f KiB", bytes / 1024.0);
    return buf;
}

/* The integer path's budget and its shares. */
static void say_budget(const gm_plan *p, const gm_config *cfg)
{
    char b[32], m[32], mb[32], sb[32], w[32];
    gm_plan_bytes((double)p->budget, b, sizeof b);
    if (p->op == GM_OP_MERGE)
        gm_report_fact(cfg, "budget", "%s: merge rounds %s, blocks of %s an input%s, runs read "
                       "%lld keys at a time, the writer %s", b,
                       gm_plan_bytes((double)p->merge_mem, m, sizeof m),
                       gm_plan_bytes((double)p->merge_block, mb, sizeof mb),
                       p->read_ahead ? " read ahead" : "", (long long)p->run_read_keys,
                       gm_plan_bytes((double)p->writer_mem, w, sizeof w));
    else if (p->op == GM_OP_CHECK)
        gm_report_fact(cfg, "budget", "%s: blocks of %s", b,
                       gm_plan_bytes((double)p->sort_block, sb, sizeof sb));
    else
        gm_report_fact(cfg, "budget", "%s: sort chunks of %lld keys (int32) or %lld (int64), "
                       "blocks of %s, the writer %s", b, (long long)p->chunk_keys[0],
                       (long long)p->chunk_keys[1],
                       gm_plan_bytes((double)p->sort_block, sb, sizeof sb),
                       gm_plan_bytes((double)p->writer_mem, w, sizeof w));
}

void gm_plan_say(const gm_plan *p, const gm_config *cfg, int records)
{
    if (!cfg->verbose)
        return;
    static const char *const what[] = { "merge", "sort", "check" };
    char size[64] = "", b[32];
    if (p->total_bytes >= 0)
        snprintf(size, sizeof size, "%.1f MB", (double)p->total_bytes / 1e6);
    else
        snprintf(size, sizeof size, "a pipe among them");
    char order[512];
    if (cfg->keyspec) {
        gm_keyspec_say(cfg->keyspec, order, sizeof order);
        gm_report_fact(cfg, "order", "%s", order);
    }
    gm_report_fact(cfg, "plan", "%s of %d input%s, %s", p->op <= GM_OP_CHECK ? what[p->op] : "run",
                   p->ninputs, p->ninputs == 1 ? "" : "s", size);
    if (p->path)
        gm_report_fact(cfg, "path", "%s", p->path);
    if (p->engine[0])
        gm_report_fact(cfg, "engine", "%s", p->engine);
    int t = records ? p->records.threads : p->threads;
    gm_report_fact(cfg, "threads", "%d", t);
    if (records) {
        gm_report_fact(cfg, "budget", "%s", gm_plan_bytes((double)p->budget, b, sizeof b));
        gm_report_fact(cfg, "fan-in", "%d (of %d descriptors free)", p->records.fan_in,
                       p->records.fds);
        return;
    }
    say_budget(p, cfg);
    gm_report_fact(cfg, "fan-in", "%d (of %d descriptors free%s)", p->fan_in, p->fds,
                   p->streams ? ", less the pipes held open" : "");
    if (p->op == GM_OP_SORT && p->gpu)
        gm_report_fact(cfg, "text", "the GPU's text path takes up to %s",
                       gm_plan_bytes((double)p->text_limit, b, sizeof b));
}
