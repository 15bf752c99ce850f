/*
 * engine.c - device choice and fallback (see engine.h).
 *
 * The rates below are the cost model of --device=auto, each with the measurement
 * it comes from (-v and bench/e2e.sh on the GPU machine, 16 cores and an NVIDIA
 * H200, and on a 2-core machine; bench/RESULTS.md, "The cost model of
 * --device=auto"). What they say: a GPU run pays about 0.3 s before the first key
 * moves (context, allocations), and copies cross PCIe from pageable memory at
 * about 9 GB/s each way, while 16 cores merge 2.5 G keys/s: a merge is never worth
 * sending to the GPU, and a sort is from about 10^8 keys.
 */
#include "device/engine.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "device/gpu.h"
#include "sort/cpu.h"
#include "base/util.h"

static const struct {
    double cpu_merge_per_thread; /* keys/s merged by one thread */
    double cpu_merge_max;        /* keys/s when memory bandwidth is the limit */
    double cpu_sort_per_thread;  /* keys/s sorted by one thread (radix sort) */
    double cpu_sort_max;
    double gpu_start;            /* s: CUDA context and buffers, paid by every run */
    double pcie;                 /* bytes/s each way, pageable host memory */
    double gpu_merge;            /* keys/s on the device */
    double gpu_sort;
} rate = {
    .cpu_merge_per_thread = 2.5e8, /* 2 cores: 10 M keys in 0.020 s */
    .cpu_merge_max = 2.5e9,        /* 16 cores: 20 M keys in 0.008 s */
    .cpu_sort_per_thread = 1.0e8,  /* 2 cores: 10 M keys in 0.050 s */
    .cpu_sort_max = 6.1e8,         /* 16 cores: 100 M keys in 0.165 s */
    .gpu_start = 0.30,             /* H200: the text path's run less its stages below */
    .pcie = 9.0e9,                 /* H200: 80 MB up in 0.009 s, down in 0.007 s */
    .gpu_merge = 4.5e11,           /* tiled kernel, 2^28 int32 keys in 0.59 ms */
    .gpu_sort = 2.3e10,            /* merge sort, 2^28 int32 keys in 11.4 ms */
};

/* The sort's text path (core/stream/textsort.c): the whole text on the device, parsed and
 * formatted there, against the CPU's read, parse and format of the same text. What
 * both do alike (opening, the output's last pages, the rename) is left out. Rates:
 * bench/RESULTS.md, "The cost model of --device=auto": the CPU's from -v of the
 * product (H200 machine, 16 cores, 1.1 GB of int32 lines, the output reserved
 * ahead), the GPU's from the kernels' tables and "Design choices". */
static const struct {
    double cpu_read_parse_per_thread; /* bytes/s of a file read and parsed, one thread */
    double cpu_read_parse_max;
    double cpu_format_per_thread;     /* bytes/s formatted, one thread */
    double cpu_format_max;
    double read;                      /* bytes/s read into memory by the pool's preads */
    double staged;                    /* bytes/s each way through the pinned staging ring */
    double gpu_text;                  /* bytes/s parsed and formatted on the device */
    double bytes_per_key;             /* random int32 lines, the newline included */
} text_rate = {
    .cpu_read_parse_per_thread = 5.9e8, /* 16 threads: 1.1 GB in 0.117 s */
    .cpu_read_parse_max = 9.4e9,
    .cpu_format_per_thread = 9.0e8,     /* 16 threads: 1.1 GB in 0.076 s, into pages */
    .cpu_format_max = 1.45e10,          /* reserved ahead */
    .read = 2.0e10,                     /* 16 threads into fresh pageable memory */
    .staged = 2.6e10,                   /* copy into the ring overlapped with the DMA */
    .gpu_text = 2.0e11,                 /* parse 1.1 GB in 4.0 ms, format in 1.4 ms */
    .bytes_per_key = 11.0,
};

/* The records path (core/records/): lines with their keys read, split, sorted by
 * their prefixes and written, on the CPU, against the same on the device: in its
 * memory, every input a regular file (resident), or a chunk at a time. What both
 * do alike is left out. Rates: bench/RESULTS.md, "The cost model of
 * --device=auto", `-t, -k2,2n` on gen -c lines: the CPU's on the 2-core machine
 * and on 16 cores, the device's from an H100's runs of 30 M and 60 M lines (their
 * difference; the start-up is the difference's intercept, rate.gpu_start). */
static const struct {
    double cpu_per_thread; /* bytes/s sorted file to file by one thread */
    double cpu_max;        /* bytes/s when memory bandwidth is the limit */
    double gpu_resident;   /* bytes/s sorted in device memory */
    double gpu_chunk;      /* bytes/s of chunks staged to the device and back */
} rec_rate = {
    .cpu_per_thread = 4.45e8, /* 2 cores: 449 MB in 0.506 s */
    .cpu_max = 2.45e9,        /* 16 cores: 1.41 GB more in 0.575 s */
    .gpu_resident = 4.67e9,   /* H100: 1.41 GB more in 0.302 s */
    .gpu_chunk = 3.24e9,      /* chunks meet the CPU's 16 cores at 3.2 GB */
};

uint64_t gm_engine_records_least(int nthreads, int resident)
{
    double cpu = rec_rate.cpu_per_thread * (nthreads > 0 ? nthreads : 1);
    cpu = cpu < rec_rate.cpu_max ? cpu : rec_rate.cpu_max;
    double gpu = resident ? rec_rate.gpu_resident : rec_rate.gpu_chunk;
    if (cpu >= gpu)
        return UINT64_MAX;
    /* b / cpu = start + b / gpu */
    return (uint64_t)(rate.gpu_start / (1 / cpu - 1 / gpu));
}

static double cpu_estimate(gm_op op, int64_t n, int nthreads)
{
    double per = op == GM_OP_MERGE ? rate.cpu_merge_per_thread : rate.cpu_sort_per_thread;
    double max = op == GM_OP_MERGE ? rate.cpu_merge_max : rate.cpu_sort_max;
    double r = per * nthreads < max ? per * nthreads : max;
    return (double)n / r;
}

/* gm_now() when the warm start was begun; negative before. */
static double warm_began = -1;

static int begin_warm(void)
{
    warm_began = gm_now();
    gm_gpu_warm_start();
    return 1;
}

int gm_engine_warm(const gm_config *cfg, gm_op op, int64_t keys, int nthreads)
{
    if (warm_began >= 0)
        return 1;
    if (cfg->device == GM_DEVICE_CPU)
        return 0;
    if (cfg->device == GM_DEVICE_AUTO &&
        (op == GM_OP_CHECK || keys <= 1 || cpu_estimate(op, keys, nthreads) < rate.gpu_start))
        return 0;
    return begin_warm();
}

static double gpu_estimate(gm_op op, int64_t n, gm_width w)
{
    double copy = 2.0 * (double)n * (double)w / rate.pcie;
    double work = (double)n / (op == GM_OP_MERGE ? rate.gpu_merge : rate.gpu_sort);
    return rate.gpu_start + copy + work;
}

static int run_cpu(gm_op op, gm_keys *keys, void **scratch, const int64_t *offsets,
                   int nruns, int reverse, int nthreads)
{
    if (op == GM_OP_MERGE)
        gm_cpu_merge_runs(keys, scratch, offsets, nruns, reverse, nthreads);
    else
        gm_cpu_sort(keys, scratch, reverse, nthreads);
    return GM_OK;
}

/* The GPU's copies, kernels and passes of one call, into its report. */
static void gpu_times(gm_engine_report *rep, const gm_gpu_times *t)
{
    rep->h2d = t->h2d;
    rep->kernel_s = t->kernel;
    rep->d2h = t->d2h;
    rep->passes = t->passes;
    rep->kernel = t->kernel_used;
}

static int run_gpu(const gm_config *cfg, gm_op op, gm_keys *keys, const int64_t *offsets,
                   int nruns, gm_engine_report *rep, gm_status *st)
{
    gm_gpu_times t;
    memset(&t, 0, sizeof t);
    int rc = op == GM_OP_MERGE
                 ? gm_gpu_merge(keys, offsets, nruns, cfg->reverse, cfg->kernel, &t, st)
                 : gm_gpu_sort(keys, cfg->reverse, cfg->unique, cfg->kernel, &t, st);
    gpu_times(rep, &t);
    rep->deduplicated = op == GM_OP_SORT && cfg->unique && rc == GM_OK;
    return rc;
}

void gm_engine_merge2(const gm_config *cfg, gm_width w, const void *a, int64_t na,
                      const void *b, int64_t nb, void *out, int nthreads, gm_engine_report *rep)
{
    gm_cpu_merge2(w, a, na, b, nb, out, cfg->reverse, nthreads);
    memset(rep, 0, sizeof *rep);
    rep->device = GM_DEVICE_CPU;
    snprintf(rep->reason, sizeof rep->reason, "%s",
             cfg->device == GM_DEVICE_CPU ? "--device=cpu" : "auto: two runs, merged on the CPU");
}

void gm_engine_report_text(gm_engine_report *rep, const gm_config *cfg, const char *why,
                           const struct gm_gpu_times *t)
{
    memset(rep, 0, sizeof *rep);
    rep->device = GM_DEVICE_GPU;
    snprintf(rep->reason, sizeof rep->reason, "%s", why);
    gm_gpu_info info;
    gm_status ignored;
    if (gm_gpu_probe(&info, &ignored) == GM_OK)
        snprintf(rep->gpu_name, sizeof rep->gpu_name, "%s", info.name);
    gpu_times(rep, t);
    rep->deduplicated = cfg->unique;
}

int gm_engine_run(const gm_config *cfg, gm_op op, gm_keys *keys, void **scratch,
                  const int64_t *offsets, int nruns, int nthreads,
                  gm_engine_report *rep, gm_status *st)
{
    memset(rep, 0, sizeof *rep);
    rep->device = GM_DEVICE_CPU;
    int trivial = op == GM_OP_MERGE ? nruns <= 1 : keys->n <= 1;

    if (cfg->device == GM_DEVICE_CPU) {
        snprintf(rep->reason, sizeof rep->reason, "--device=cpu");
        return run_cpu(op, keys, scratch, offsets, nruns, cfg->reverse, nthreads);
    }

    double cpu_t = cpu_estimate(op, keys->n, nthreads);
    if (cfg->device == GM_DEVICE_AUTO) {
        if (trivial || cpu_t < rate.gpu_start) {
            snprintf(rep->reason, sizeof rep->reason,
                     "auto: cpu estimate %.3f s, below a GPU's start-up of %.2f s", cpu_t,
                     rate.gpu_start);
            return run_cpu(op, keys, scratch, offsets, nruns, cfg->reverse, nthreads);
        }
    }

    gm_gpu_info info;
    memset(&info, 0, sizeof info);
    double waited = gm_now();
    int rc = gm_gpu_probe(&info, st);
    rep->startup_wait = gm_now() - waited;
    if (rc != GM_OK) {
        if (cfg->device == GM_DEVICE_GPU || rc == GM_EUSAGE) /* --gpu=N names no device */
            return rc;
        snprintf(rep->reason, sizeof rep->reason, "auto: %.120s%s%.120s%s", st->msg,
                 info.detail[0] ? " (" : "", info.detail, info.detail[0] ? ")" : "");
        return run_cpu(op, keys, scratch, offsets, nruns, cfg->reverse, nthreads);
    }
    snprintf(rep->gpu_name, sizeof rep->gpu_name, "%s", info.name);

    if (cfg->device == GM_DEVICE_AUTO) {
        /* The start-up is paid now; what is left to compare is copies and work. */
        double gpu_t = gpu_estimate(op, keys->n, keys->width) - rate.gpu_start;
        if (gpu_t >= cpu_t) {
            snprintf(rep->reason, sizeof rep->reason,
                     "auto: cpu estimate %.3f s, gpu (copies and kernels) %.3f s", cpu_t,
                     gpu_t);
            return run_cpu(op, keys, scratch, offsets, nruns, cfg->reverse, nthreads);
        }
        snprintf(rep->reason, sizeof rep->reason,
                 "auto: gpu estimate %.3f s (copies and kernels), cpu %.3f s", gpu_t, cpu_t);
    } else {
        snprintf(rep->reason, sizeof rep->reason, "--device=gpu");
    }

    rep->device = GM_DEVICE_GPU;
    rc = run_gpu(cfg, op, keys, offsets, nruns, rep, st);
    if (rc == GM_OK || cfg->device == GM_DEVICE_GPU)
        return rc;
    /* auto: the GPU could not do it; say why and use the CPU. */
    gm_say(cfg, GM_MSG_NOTICE, "notice: %s; using the CPU", st->msg);
    rep->device = GM_DEVICE_CPU;
    snprintf(rep->reason, sizeof rep->reason, "auto: fell back to the CPU");
    return run_cpu(op, keys, scratch, offsets, nruns, cfg->reverse, nthreads);
}

/* The estimates for a sort of bytes of text: the CPU's read, parse, sort and
 * format, and the GPU's text path without its start-up. */
static void text_estimates(uint64_t bytes, int nthreads, double *cpu_t, double *gpu_t)
{
    double b = (double)bytes, n = b / text_rate.bytes_per_key, t = (double)nthreads;
    double rp = text_rate.cpu_read_parse_per_thread * t, fm = text_rate.cpu_format_per_thread * t;
    rp = rp < text_rate.cpu_read_parse_max ? rp : text_rate.cpu_read_parse_max;
    fm = fm < text_rate.cpu_format_max ? fm : text_rate.cpu_format_max;
    *cpu_t = b / rp + b / fm + cpu_estimate(GM_OP_SORT, (int64_t)n, nthreads);
    *gpu_t = b / text_rate.read + 2 * b / text_rate.staged + b / text_rate.gpu_text +
             n / rate.gpu_sort;
}

/* What is left of CUDA's start-up: all of it before the warm start, nothing once
 * the probe is over, else the part not yet elapsed. */
static double start_left(void)
{
    if (warm_began < 0)
        return rate.gpu_start;
    if (gm_gpu_probe_done())
        return 0;
    double left = rate.gpu_start - (gm_now() - warm_began);
    return left > 0 ? left : 0;
}

int gm_engine_warm_text(const gm_config *cfg, uint64_t bytes, int growing, int nthreads)
{
    if (warm_began >= 0)
        return 1;
    if (cfg->device != GM_DEVICE_AUTO)
        return gm_engine_warm(cfg, GM_OP_SORT, -1, nthreads);
    double cpu_t, gpu_t;
    text_estimates(bytes, nthreads, &cpu_t, &gpu_t);
    /* A pipe's bytes so far: the rest of its read hides the other half. */
    double start = growing ? rate.gpu_start / 2 : rate.gpu_start;
    return cpu_t < start + gpu_t ? 0 : begin_warm();
}

int gm_engine_text_path(const gm_config *cfg, uint64_t bytes, int nthreads, char *why,
                        size_t size)
{
    why[0] = 0;
    if (cfg->device == GM_DEVICE_CPU)
        return 0;
    double cpu_t, gpu_t, start = start_left();
    text_estimates(bytes, nthreads, &cpu_t, &gpu_t);
    if (cfg->device == GM_DEVICE_AUTO && cpu_t < start + gpu_t) {
        snprintf(why, size, "auto: cpu estimate %.3f s, gpu text path %.3f s with what is "
                 "left of the start-up", cpu_t, start + gpu_t);
        return 0;
    }
    if (cfg->device == GM_DEVICE_GPU) {
        /* CUDA's start-up began with the run (gm_engine_warm); the text is read
         * before it is waited for. */
        snprintf(why, size, "--device=gpu, text path");
        return 1;
    }
    gm_gpu_info info;
    gm_status st;
    /* A start-up still running is not waited for: the text is read meanwhile, and
     * the sort finds out (a failed start-up then leaves the sort to the CPU). */
    if (gm_gpu_probe_done() && gm_gpu_probe(&info, &st) != GM_OK) {
        snprintf(why, size, "auto: %.200s", st.msg);
        return st.code == GM_EUSAGE; /* --gpu=N names no device: the path says so */
    }
    snprintf(why, size, "auto: gpu text path estimate %.3f s with what is left of the "
             "start-up, cpu %.3f s", start + gpu_t, cpu_t);
    return 1;
}

int64_t gm_engine_max_chunk(const gm_config *cfg, gm_width width)
{
    if (cfg->device != GM_DEVICE_GPU)
        return 0; /* auto falls back to the CPU when a chunk does not fit */
    gm_gpu_info info;
    gm_status st;
    if (gm_gpu_probe(&info, &st) != GM_OK)
        return 0;
    /* keys and scratch on the device, and a third kept free for the kernels */
    int64_t keys = (int64_t)(info.free_bytes / 3 / (size_t)width);
    return keys > 0 ? keys : 1;
}

int gm_engine_prepare(const gm_config *cfg, int wait, int *done, gm_status *st)
{
    *done = 1;
    if (cfg->device != GM_DEVICE_GPU)
        return GM_OK;
    gm_engine_warm(cfg, GM_OP_SORT, -1, 1);
    if (!wait && !gm_gpu_probe_done()) {
        *done = 0;
        return GM_OK;
    }
    gm_gpu_info info;
    memset(&info, 0, sizeof info);
    int rc = gm_gpu_probe(&info, st);
    if (rc != GM_OK && info.detail[0])
        gm_say(cfg, GM_MSG_VERBOSE, "%-*s %s", GM_REPORT_KEY, "gpu", info.detail);
    return rc;
}

double gm_engine_startup(int *background)
{
    *background = warm_began >= 0;
    if (!gm_gpu_probe_done())
        return 0;
    gm_gpu_info info;
    gm_status ignored;
    gm_gpu_probe(&info, &ignored);
    return info.seconds;
}

void gm_engine_release_begin(void)
{
    gm_gpu_teardown_begin();
}

double gm_engine_release(double *took)
{
    double a = gm_now();
    *took = gm_gpu_teardown();
    return gm_now() - a;
}

void gm_engine_choose(const gm_config *cfg)
{
    gm_gpu_select(cfg->gpu);
}

int gm_device_describe(const gm_config *cfg, char *buf, size_t size)
{
    gm_gpu_info info;
    gm_status st;
    gm_gpu_select(cfg->gpu);
    if (!gm_gpu_built()) {
        snprintf(buf, size, "none: built without CUDA");
        return GM_ENODEV;
    }
    /* Without a driver CUDA would only say so, after loading itself. */
    if (!gm_gpu_driver_loaded()) {
        snprintf(buf, size, "no usable CUDA device: no NVIDIA driver loaded");
        return GM_ENODEV;
    }
    int rc = gm_gpu_probe(&info, &st);
    if (rc == GM_OK)
        snprintf(buf, size, "%d: %s (compute capability %d.%d, %d SMs, %.1f GiB)", info.index,
                 info.name, info.cc_major, info.cc_minor, info.sm_count,
                 (double)info.total_bytes / (1 << 30));
    else
        snprintf(buf, size, "%s", st.msg);
    gm_gpu_teardown();
    return rc;
}
