/*
 * device.cuh - device management (device.cu): the facts the probe learns about the
 * device, the choices a test may force, device buffers released on every path,
 * and the frame of one GPU job (its buffers, stream, and timed copies in and out).
 */
#ifndef GM_CUDA_DEVICE_CUH
#define GM_CUDA_DEVICE_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include <atomic>
#include <vector>

#include "check.cuh"
#include "gpu.h"
#include "testing.h"

/* What the probe learned, once per process. */
struct device_facts {
    int sm_count;                  /* the device's multiprocessors (the probe, device.cu) */
    int arch;                      /* the architecture of the code running: 750, 800, 900 */
    bool dependent_launch;         /* programmatic dependent launches: sm_90 and later */
};
extern device_facts gm_facts;

/* The choices forced by the tests (testing.h): all zero in the shipped binary. */
extern gm_gpu_choices gm_forced;

/* Set once CUDA's start-up has been asked for (the probe, the warm start), for
 * testing.h's gm_gpu_test_cuda_touched. */
extern std::atomic<bool> gm_cuda_touched;

/* Device allocations released when the scope ends, whatever the path. Each has 16
 * bytes of slack after its last key: the chunked loads copy whole 16-byte chunks. */
struct device_buffers {
    std::vector<void *> ptrs; /* the allocations, freed with it (alloc) */
    device_buffers() = default;
    device_buffers(const device_buffers &) = delete;
    device_buffers &operator=(const device_buffers &) = delete;
    ~device_buffers()
    {
        for (void *p : ptrs)
            cudaFree(p);
    }
    template <typename T> int alloc(T **p, size_t count, gm_status *st)
    {
        void *raw = nullptr;
        GM_CUDA(cudaMalloc(&raw, count * sizeof(T) + 16), st);
        ptrs.push_back(raw);
        *p = (T *)raw;
        return GM_OK;
    }
};

/* An NVTX range (gm_trace_push) over a scope. */
struct trace_range {
    explicit trace_range(const char *name) { gm_trace_push(name); }
    ~trace_range() { gm_trace_pop(); }
    trace_range(const trace_range &) = delete;
    trace_range &operator=(const trace_range &) = delete;
};

/* The index of the device the probe chose (--gpu=N; 0 by default). */
int probed_device_index();

/* Makes the probed device current in the calling thread for a scope, and the
 * thread's own device current again after it: the probe may have run on another
 * thread (the warm start), and a library caller may have chosen another device
 * for its own work. */
struct on_probed_device {
    int callers = 0;       /* the thread's device before the scope (the constructor) */
    bool changed = false;  /* the probed device was made current: restore callers */
    on_probed_device()
    {
        const int want = probed_device_index();
        if (cudaGetDevice(&callers) == cudaSuccess && callers != want)
            changed = cudaSetDevice(want) == cudaSuccess;
        cudaGetLastError();
    }
    ~on_probed_device()
    {
        if (changed)
            cudaSetDevice(callers);
    }
    on_probed_device(const on_probed_device &) = delete;
    on_probed_device &operator=(const on_probed_device &) = delete;
};

/* Fails with GM_EDEVMEM unless need bytes fit in the device's free memory. */
int check_fits(size_t need, gm_status *st);

/* Events for the stages of one job, destroyed with it. */
struct event_set {
    /* before and after the copy in, before and after the copy out (create; device_job) */
    cudaEvent_t e[4] = { nullptr, nullptr, nullptr, nullptr };
    event_set() = default;
    event_set(const event_set &) = delete;
    event_set &operator=(const event_set &) = delete;
    ~event_set()
    {
        for (cudaEvent_t x : e)
            if (x)
                cudaEventDestroy(x);
    }
    int create(gm_status *st)
    {
        for (cudaEvent_t &x : e)
            GM_CUDA(cudaEventCreate(&x), st);
        return GM_OK;
    }
};

/* Seconds on the host's monotonic clock (the host-side stage times). */
double host_seconds();

/* Elapsed seconds between two recorded events. */
double elapsed_seconds(cudaEvent_t a, cudaEvent_t b);

/* The frame every GPU merge or sort shares: two key buffers (the keys and their
 * partner for ping-pong passes), co-rank scratch, and the timed copies in and out.
 * Everything is released when it goes out of scope. */
template <typename K> struct device_job {
    device_buffers mem;                /* the job's device allocations (start) */
    event_set ev;                      /* the copies' timing events (start, finish) */
    K *keys = nullptr, *other = nullptr; /* the keys and their ping-pong partner (start) */
    int64_t *coranks = nullptr;        /* co-rank scratch of ncor entries (start) */
    cudaStream_t s = 0;                /* the stream the job runs on: the default one */

    /* Checks that 2 n keys, ncor co-ranks and extra bytes fit, allocates the first
     * three, and copies the host's keys in. */
    int start(const gm_keys *host, int64_t ncor, size_t extra, gm_status *st)
    {
        size_t n = (size_t)host->n;
        int rc;
        {
            trace_range range("gpu: allocate");
            rc = check_fits(2 * n * sizeof(K) + (size_t)ncor * sizeof(int64_t) + extra, st);
            if (rc || (rc = mem.alloc(&keys, n, st)) || (rc = mem.alloc(&other, n, st)) ||
                (rc = mem.alloc(&coranks, (size_t)ncor, st)) || (rc = ev.create(st)))
                return rc;
        }
        trace_range range("gpu: host to device");
        GM_CUDA(cudaEventRecord(ev.e[0], s), st);
        GM_CUDA(cudaMemcpyAsync(keys, host->data, n * sizeof(K), cudaMemcpyHostToDevice, s), st);
        GM_CUDA(cudaEventRecord(ev.e[1], s), st);
        return GM_OK;
    }

    /* Copies count keys from result back to the host, waits, and fills times. */
    int finish(gm_keys *host, const K *result, int64_t count, gm_gpu_times *times,
               gm_status *st)
    {
        trace_range range("gpu: device to host (after the kernels)");
        GM_CUDA(cudaEventRecord(ev.e[2], s), st);
        GM_CUDA(cudaMemcpyAsync(host->data, result, (size_t)count * sizeof(K),
                                cudaMemcpyDeviceToHost, s),
                st);
        GM_CUDA(cudaEventRecord(ev.e[3], s), st);
        GM_CUDA(cudaEventSynchronize(ev.e[3]), st);
        host->n = count;
        times->h2d = elapsed_seconds(ev.e[0], ev.e[1]);
        times->kernel = elapsed_seconds(ev.e[1], ev.e[2]);
        times->d2h = elapsed_seconds(ev.e[2], ev.e[3]);
        return GM_OK;
    }
};

#endif
