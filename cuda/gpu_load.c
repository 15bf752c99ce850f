/*
 * gpu_load.c - the GPU engine of the gpumerge program and of libgpumerge.so in a
 * CUDA build: gpu.h's calls, answered here while CUDA is not needed and handed to
 * the engine itself (the .cu objects and the CUDA runtime, built as
 * gpumerge-cuda.so) once it is.
 *
 * A process that never uses the GPU (a small input, --device=cpu, auto on a
 * machine without a driver) never loads the engine: it pays none of the runtime's
 * relocations, constructors (every kernel's registration) and C++ library, and
 * starts as a CPU-only build does. The program looks for the engine beside itself
 * (the build tree), in ../lib/gpumerge/ relative to its own path (an installed
 * tree, moved or not), then in LIBDIR/gpumerge as installed. The shared library
 * (compiled with GM_LOADER_IN_LIBRARY) looks in gpumerge/ beside its own file, as
 * dladdr names it (installed, staged or moved, and the build tree), then in
 * LIBDIR/gpumerge. Without the engine the GPU is not usable, and the probe says why.
 * Loading is the dynamic loader's (dlopen), once a process.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"

#define ENGINE_NAME "gpumerge-cuda.so"
#ifndef GM_ENGINE_DIR
#define GM_ENGINE_DIR "/usr/local/lib/gpumerge" /* the Makefile's LIBDIR/gpumerge */
#endif

/* The engine's entry points, once loaded. */
static struct {
    int (*probe)(gm_gpu_info *, gm_status *);
    void (*select)(int);
    void (*warm_start)(void);
    int (*probe_done)(void);
    double (*teardown)(void);
    void (*teardown_begin)(void);
    void (*trace_push)(const char *);
    void (*trace_pop)(void);
    int (*merge)(gm_keys *, const int64_t *, int, int, gm_kernel, gm_gpu_times *, gm_status *);
    int (*sort)(gm_keys *, int, int, gm_kernel, gm_gpu_times *, gm_status *);
    int (*sort_text)(const gm_text_job *, gm_text_result *, gm_gpu_times *, gm_status *);
    int (*sort_records)(const gm_gpu_rec_job *, gm_gpu_times *, gm_status *);
    int (*sort_lines)(const gm_gpu_lines_job *, gm_gpu_lines_result *, gm_gpu_times *,
                      gm_status *);
    int (*lines_fit)(const gm_keyspec *, uint64_t, uint64_t, gm_status *);
    int (*sort_device)(void *, int64_t, gm_width, int, int, int64_t *, void *, gm_status *);
    int (*merge_device)(const void *const *, const int64_t *, int, gm_width, void *, int, int,
                        int64_t *, void *, gm_status *);
} engine;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
enum { UNTRIED, LOADED, FAILED };
static int state;          /* UNTRIED until load() ends; LOADED: every entry point found */
static char why_not[512];  /* FAILED: the reason, in words */
static int chosen;         /* gm_gpu_select's index, handed over at load */

/* The engine's path in dir/rel, where the file exists; 0 when it does not. */
static int engine_at(const char *dir, const char *rel, char *path, size_t size)
{
    int n = snprintf(path, size, "%s/%s" ENGINE_NAME, dir, rel);
    return n > 0 && (size_t)n < size && access(path, R_OK) == 0;
}

static void *need(void *lib, const char *name)
{
    void *f = dlsym(lib, name);
    if (!f && !why_not[0])
        snprintf(why_not, sizeof why_not, "no usable CUDA device: %s lacks %s", ENGINE_NAME,
                 name);
    return f;
}

#ifdef GM_LOADER_IN_LIBRARY
/* The directory of the shared library holding this code (dladdr's file name,
 * which is the path the loader opened it by); 0 when it is unknown. */
static int own_dir(char *dir, size_t size)
{
    Dl_info info;
    if (!dladdr((void *)&own_dir, &info) || !info.dli_fname ||
        !strchr(info.dli_fname, '/') || strlen(info.dli_fname) >= size)
        return 0;
    strcpy(dir, info.dli_fname);
    *strrchr(dir, '/') = '\0';
    return 1;
}

/* The engine's path: gpumerge/ beside the library, then GM_ENGINE_DIR; 0 (and
 * why_not) when it is in neither. */
static int find_engine(char *path, size_t size)
{
    char self[PATH_MAX];
    int known = own_dir(self, sizeof self);
    if ((known && engine_at(self, "gpumerge/", path, size)) ||
        engine_at(GM_ENGINE_DIR, "", path, size))
        return 1;
    snprintf(why_not, sizeof why_not, "no usable CUDA device: the CUDA engine (%s) is "
             "neither in gpumerge/ beside libgpumerge.so (%.200s) nor in %.200s", ENGINE_NAME,
             known ? self : "its path is unknown", GM_ENGINE_DIR);
    return 0;
}
#else
/* The engine's path: beside the program, in ../lib/gpumerge/ from it, then
 * GM_ENGINE_DIR; 0 (and why_not) when it is in none. */
static int find_engine(char *path, size_t size)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        snprintf(why_not, sizeof why_not, "no usable CUDA device: the program's own path is "
                 "unknown, so %s is not found", ENGINE_NAME);
        return 0;
    }
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    if (engine_at(self, "", path, size) || engine_at(self, "../lib/gpumerge/", path, size) ||
        engine_at(GM_ENGINE_DIR, "", path, size))
        return 1;
    snprintf(why_not, sizeof why_not, "no usable CUDA device: the CUDA engine (%s) is "
             "neither beside the program, nor in ../lib/gpumerge, nor in %s", ENGINE_NAME,
             GM_ENGINE_DIR);
    return 0;
}
#endif

static void try_load(void)
{
    char path[PATH_MAX + 64];
    if (!find_engine(path, sizeof path))
        return;
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(why_not, sizeof why_not, "no usable CUDA device: cannot load the CUDA "
                 "engine: %.400s", dlerror());
        return;
    }
    /* POSIX lets a function pointer pass through void *: dlsym's own contract */
    *(void **)&engine.probe = need(lib, "gm_gpu_probe");
    *(void **)&engine.select = need(lib, "gm_gpu_select");
    *(void **)&engine.warm_start = need(lib, "gm_gpu_warm_start");
    *(void **)&engine.probe_done = need(lib, "gm_gpu_probe_done");
    *(void **)&engine.teardown = need(lib, "gm_gpu_teardown");
    *(void **)&engine.teardown_begin = need(lib, "gm_gpu_teardown_begin");
    *(void **)&engine.trace_push = need(lib, "gm_trace_push");
    *(void **)&engine.trace_pop = need(lib, "gm_trace_pop");
    *(void **)&engine.merge = need(lib, "gm_gpu_merge");
    *(void **)&engine.sort = need(lib, "gm_gpu_sort");
    *(void **)&engine.sort_text = need(lib, "gm_gpu_sort_text");
    *(void **)&engine.sort_records = need(lib, "gm_gpu_sort_records");
    *(void **)&engine.sort_lines = need(lib, "gm_gpu_sort_lines");
    *(void **)&engine.lines_fit = need(lib, "gm_gpu_lines_fit");
    *(void **)&engine.sort_device = need(lib, "gm_gpu_sort_device");
    *(void **)&engine.merge_device = need(lib, "gm_gpu_merge_device");
    if (why_not[0])
        return;
    engine.select(chosen);
}

static void load(void)
{
    try_load();
    __atomic_store_n(&state, why_not[0] ? FAILED : LOADED, __ATOMIC_RELEASE);
}

/* Loads the engine (once); 1 when it is there to call. */
static int ready(void)
{
    pthread_once(&load_once, load);
    return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == LOADED;
}

/* Whether it was loaded already; never loads it. */
static int was_loaded(void)
{
    return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == LOADED;
}

static int not_loaded(gm_status *st)
{
    return gm_fail(st, GM_ENODEV, "%s", why_not);
}

int gm_gpu_probe(gm_gpu_info *info, gm_status *st)
{
    if (ready())
        return engine.probe(info, st);
    if (info)
        memset(info, 0, sizeof *info); /* no CUDA error behind the words */
    return not_loaded(st);
}

void gm_gpu_select(int index)
{
    if (was_loaded())
        engine.select(index);
    else
        chosen = index;
}

int gm_gpu_built(void)
{
    return 1;
}

void gm_gpu_warm_start(void)
{
    if (ready())
        engine.warm_start();
}

int gm_gpu_driver_loaded(void)
{
    return access("/dev/nvidiactl", F_OK) == 0 ||
           access("/proc/driver/nvidia/version", F_OK) == 0;
}

int gm_gpu_probe_done(void)
{
    int now = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    return now == LOADED ? engine.probe_done() : now == FAILED; /* a failed load is a
                                                                  finished probe */
}

double gm_gpu_teardown(void)
{
    return was_loaded() ? engine.teardown() : 0;
}

void gm_gpu_teardown_begin(void)
{
    if (was_loaded())
        engine.teardown_begin();
}

void gm_trace_push(const char *name)
{
    if (was_loaded())
        engine.trace_push(name);
}

void gm_trace_pop(void)
{
    if (was_loaded())
        engine.trace_pop();
}

int gm_gpu_merge(gm_keys *keys, const int64_t *offsets, int nruns, int reverse,
                 gm_kernel kernel, gm_gpu_times *times, gm_status *st)
{
    if (!ready())
        return not_loaded(st);
    return engine.merge(keys, offsets, nruns, reverse, kernel, times, st);
}

int gm_gpu_sort(gm_keys *keys, int reverse, int unique, gm_kernel kernel,
                gm_gpu_times *times, gm_status *st)
{
    if (!ready())
        return not_loaded(st);
    return engine.sort(keys, reverse, unique, kernel, times, st);
}

int gm_gpu_sort_text(const gm_text_job *job, gm_text_result *res, gm_gpu_times *times,
                     gm_status *st)
{
    if (!ready()) {
        memset(res, 0, sizeof *res);
        return not_loaded(st);
    }
    return engine.sort_text(job, res, times, st);
}

int gm_gpu_sort_records(const gm_gpu_rec_job *job, gm_gpu_times *times, gm_status *st)
{
    if (!ready())
        return not_loaded(st);
    return engine.sort_records(job, times, st);
}

int gm_gpu_sort_lines(const gm_gpu_lines_job *job, gm_gpu_lines_result *res,
                      gm_gpu_times *times, gm_status *st)
{
    if (!ready()) {
        memset(res, 0, sizeof *res);
        memset(times, 0, sizeof *times);
        return not_loaded(st);
    }
    return engine.sort_lines(job, res, times, st);
}

int gm_gpu_lines_fit(const gm_keyspec *ks, uint64_t bytes, uint64_t lines, gm_status *st)
{
    return ready() ? engine.lines_fit(ks, bytes, lines, st) : not_loaded(st);
}

int gm_gpu_sort_device(void *keys, int64_t n, gm_width width, int reverse, int unique,
                       int64_t *n_out, void *stream, gm_status *st)
{
    if (!ready())
        return not_loaded(st);
    return engine.sort_device(keys, n, width, reverse, unique, n_out, stream, st);
}

int gm_gpu_merge_device(const void *const *arrays, const int64_t *lens, int k, gm_width width,
                        void *out, int reverse, int unique, int64_t *n_out, void *stream,
                        gm_status *st)
{
    if (!ready())
        return not_loaded(st);
    return engine.merge_device(arrays, lens, k, width, out, reverse, unique, n_out, stream, st);
}
