/*
 * device.cu - device management: the probe that finds the chosen device (--gpu,
 * among those CUDA_VISIBLE_DEVICES leaves) and creates its context (and says in
 * words why there is none), run in the caller's thread or
 * started early in a thread of its own (the warm start), the context's teardown,
 * the mapping of CUDA errors to statuses, the check that a job fits in device
 * memory, and the device facts the launchers read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "device.cuh"
#include "kernels.cuh"

device_facts gm_facts;
gm_gpu_choices gm_forced;

int gm_cuda_fail(gm_status *st, cudaError_t err, const char *what)
{
    char call[64];
    size_t n = strcspn(what, "(");
    snprintf(call, sizeof call, "%.*s", (int)(n < 63 ? n : 63), what);
    cudaGetLastError(); /* clear a non-sticky error so later calls are not blamed */
    if (err == cudaErrorMemoryAllocation)
        return gm_fail(st, GM_EDEVMEM, "data does not fit in GPU memory (%s: %s)", call,
                       cudaGetErrorString(err));
    return gm_fail(st, GM_ECUDA, "CUDA error: %s (%s)", cudaGetErrorString(err), call);
}

bool gm_dependent_launches()
{
    return gm_facts.dependent_launch && !gm_forced.serial_launches;
}

/* ------------------------------------------------------------------ probe */

static int probe_rc;
static int probe_index; /* gm_gpu_select's choice */

int probed_device_index()
{
    return probe_index;
}
static gm_gpu_info probe_info;
static char probe_msg[512];
static std::atomic<bool> probe_finished{ false };
std::atomic<bool> gm_cuda_touched{ false };

/* Launched never: asking for its attributes tells whether the fat binary holds code
 * this device can run, and for which architecture. */
__global__ void probe_kernel() {}

/* What a failed probe means, in words a user can act on. */
static void probe_reason(cudaError_t err, const cudaDeviceProp *prop, bool have_prop, char *buf,
                         size_t size)
{
    int driver = 0, runtime = 0;
    switch (err) {
    case cudaErrorNoDevice:
        snprintf(buf, size, "no CUDA-capable device");
        return;
    case cudaErrorInsufficientDriver:
        cudaDriverGetVersion(&driver);
        cudaRuntimeGetVersion(&runtime);
        if (driver == 0)
            snprintf(buf, size, "no NVIDIA driver loaded");
        else
            snprintf(buf, size,
                     "the NVIDIA driver (CUDA %d.%d) is older than this build's CUDA runtime "
                     "(%d.%d)",
                     driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
        return;
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorInvalidDeviceFunction:
    case cudaErrorUnsupportedPtxVersion:
        if (have_prop)
            snprintf(buf, size, "this build has no code for the device (compute capability %d.%d)",
                     prop->major, prop->minor);
        else
            snprintf(buf, size, "this build has no code for the device");
        return;
    case cudaErrorDevicesUnavailable:
        snprintf(buf, size, "the CUDA device is busy or unavailable");
        return;
    default:
        snprintf(buf, size, "%s", cudaGetErrorString(err));
    }
}

/* --gpu=N past the devices CUDA sees: a usage error, named with what there is. */
static void no_such_device(int count)
{
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    char which[160] = "";
    if (visible)
        snprintf(which, sizeof which, " (CUDA_VISIBLE_DEVICES=%.100s)", visible);
    snprintf(probe_msg, sizeof probe_msg,
             "--gpu=%d: no such CUDA device: %d visible%s, numbered from 0", probe_index, count,
             which);
    snprintf(probe_info.detail, sizeof probe_info.detail, "%d CUDA devices", count);
    probe_rc = GM_EUSAGE;
}

/* How many more descriptors open(2) may hand out: RLIMIT_NOFILE less those open
 * below it (as core/base/util.h's gm_fd_room, which this layer does not see). */
static int descriptors_free()
{
    struct rlimit rl;
    long limit = 1 << 20;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)limit)
        limit = (long)rl.rlim_cur;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 0;
    long used = 0;
    while (struct dirent *e = readdir(d)) {
        long fd = atol(e->d_name);
        used += e->d_name[0] != '.' && fd != dirfd(d) && fd < limit;
    }
    closedir(d);
    return (int)(limit - used);
}

/* The probe itself, run once (std::call_once): by the first gm_gpu_probe, or by the
 * thread gm_gpu_warm_start starts, whichever comes first; the other waits for it. */
static std::once_flag probe_once;
static void probe_device()
{
    gm_cuda_touched = true;
    gm_trace_push("cuda start-up");
    double began = host_seconds();
    int count = 0;
    cudaDeviceProp prop;
    cudaFuncAttributes attr;
    bool have_prop = false;
    memset(&probe_info, 0, sizeof probe_info);
    int fds = descriptors_free();
    if (fds < GM_GPU_START_FDS) {
        snprintf(probe_msg, sizeof probe_msg,
                 "no usable CUDA device: %d file descriptors free, CUDA's start-up needs %d "
                 "(ulimit -n)", fds, GM_GPU_START_FDS);
        snprintf(probe_info.detail, sizeof probe_info.detail, "RLIMIT_NOFILE");
        probe_rc = GM_ENODEV;
        probe_info.seconds = host_seconds() - began;
        probe_finished = true;
        gm_trace_pop();
        return;
    }
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaSuccess && count == 0)
        err = cudaErrorNoDevice;
    int callers = 0; /* the device current in the probing thread, made current again */
    if (err == cudaSuccess && cudaGetDevice(&callers) != cudaSuccess)
        callers = 0;
    if (err == cudaSuccess && probe_index >= count) {
        no_such_device(count);
        probe_info.seconds = host_seconds() - began;
        probe_finished = true;
        gm_trace_pop();
        return;
    }
    if (err == cudaSuccess)
        err = cudaSetDevice(probe_index);
    if (err == cudaSuccess)
        err = cudaGetDeviceProperties(&prop, probe_index);
    have_prop = err == cudaSuccess;
    if (err == cudaSuccess)
        err = cudaFree(0); /* creates the context */
    if (err == cudaSuccess)
        err = cudaFuncGetAttributes(&attr, probe_kernel);
    if (err != cudaSuccess) {
        char reason[256];
        probe_reason(err, &prop, have_prop, reason, sizeof reason);
        snprintf(probe_msg, sizeof probe_msg, "no usable CUDA device: %s", reason);
        snprintf(probe_info.detail, sizeof probe_info.detail, "%s: %s",
                 cudaGetErrorName(err), cudaGetErrorString(err));
        cudaGetLastError();
        probe_rc = GM_ENODEV;
    } else {
        snprintf(probe_info.name, sizeof probe_info.name, "%s", prop.name);
        probe_info.index = probe_index;
        probe_info.sm_count = prop.multiProcessorCount;
        probe_info.cc_major = prop.major;
        probe_info.cc_minor = prop.minor;
        cudaMemGetInfo(&probe_info.free_bytes, &probe_info.total_bytes);
        gm_facts.sm_count = prop.multiProcessorCount;
        gm_facts.arch = attr.ptxVersion >= 90 ? 900 : attr.ptxVersion >= 80 ? 800 : 750;
        gm_facts.dependent_launch = prop.major >= 9;
        probe_rc = GM_OK;
        if (callers != 0 && cudaSetDevice(callers) != cudaSuccess)
            cudaGetLastError(); /* a library's caller keeps its device */
    }
    probe_info.seconds = host_seconds() - began;
    probe_finished = true;
    gm_trace_pop();
}

extern "C" int gm_gpu_probe(gm_gpu_info *info, gm_status *st)
{
    std::call_once(probe_once, probe_device);
    if (info)
        *info = probe_info;
    if (probe_rc != GM_OK)
        return gm_fail(st, (gm_code)probe_rc, "%s", probe_msg);
    return GM_OK;
}

extern "C" void gm_gpu_select(int index)
{
    if (!gm_cuda_touched && index >= 0)
        probe_index = index;
}

extern "C" int gm_gpu_built(void)
{
    return 1;
}

extern "C" int gm_gpu_driver_loaded(void)
{
    return gm_forced.driver_loaded || access("/dev/nvidiactl", F_OK) == 0 || access("/proc/driver/nvidia/version", F_OK) == 0;
}

extern "C" int gm_gpu_probe_done(void)
{
    return probe_finished;
}

/* ------------------------------------------------------------------ warm start */

/* Creating the CUDA context is a large part of a short run; started early in a
 * thread of its own, it overlaps whatever the caller does meanwhile (reading the
 * input). The thread is joined at exit (the handler registered before the thread
 * starts), so the process never ends under it. */
static std::thread warm_thread;
static std::once_flag warm_once;

static void join_warm_thread()
{
    if (warm_thread.joinable())
        warm_thread.join();
}

extern "C" void gm_gpu_warm_start(void)
{
    std::call_once(warm_once, [] {
        try {
            if (atexit(join_warm_thread) != 0)
                return;
            gm_cuda_touched = true;
            warm_thread = std::thread([] { std::call_once(probe_once, probe_device); });
        } catch (...) {
            /* no thread: the first gm_gpu_probe does the work instead */
        }
    });
}

/* The teardown: the context's destruction (cudaDeviceReset) takes 0.06 s on the
 * H100 and H200 machines, so the run begins it in a thread of its own once the
 * device's last work is done and finishes the output meanwhile. That thread makes
 * the device current first: a reset from a thread that never set a device returns
 * at once and leaves the destruction to exit. */
static std::thread teardown_thread;
static double teardown_took;
static bool teardown_begun;

static void tear_down()
{
    teardown_took = 0;
    join_warm_thread();
    if (!probe_finished || probe_rc != GM_OK)
        return;
    double a = host_seconds();
    gm_trace_push("cuda teardown");
    if (cudaSetDevice(probe_index) == cudaSuccess)
        cudaDeviceReset();
    gm_trace_pop();
    teardown_took = host_seconds() - a;
}

static void join_teardown_thread()
{
    if (teardown_thread.joinable())
        teardown_thread.join();
}

extern "C" void gm_gpu_teardown_begin(void)
{
    if (teardown_begun || !gm_cuda_touched)
        return;
    try {
        static bool registered = atexit(join_teardown_thread) == 0;
        if (!registered)
            return;
        teardown_thread = std::thread(tear_down);
        teardown_begun = true;
    } catch (...) {
        /* no thread: gm_gpu_teardown does it on the caller's */
    }
}

extern "C" double gm_gpu_teardown(void)
{
    /* the warm start's once_flag is left set: a warm start after this is not
     * needed (the next GPU call makes a context) and would need a new thread */
    if (teardown_begun) {
        join_teardown_thread();
        teardown_begun = false;
    } else {
        tear_down();
    }
    return teardown_took;
}

/* ------------------------------------------------------------------ memory */

int check_fits(size_t need, gm_status *st)
{
    size_t free_b = 0, total = 0;
    GM_CUDA(cudaMemGetInfo(&free_b, &total), st);
    if (gm_forced.memory_limit && gm_forced.memory_limit < free_b)
        free_b = gm_forced.memory_limit;
    if (need > free_b / 100 * 95)
        return gm_fail(st, GM_EDEVMEM,
                       "data does not fit in GPU memory: %.1f MiB needed, %.1f MiB free",
                       (double)need / 1048576.0, (double)free_b / 1048576.0);
    return GM_OK;
}

double host_seconds()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

double elapsed_seconds(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    return ms * 1e-3;
}
