/*
 * fakegpu.c - a stand-in device for the sort in device memory, so that the host's
 * side of it (core/records/recdev.c, recdevsort.c, recrange.c, recwalk.c) runs
 * where no GPU is: linked with cuda/gpu_stub.c built with GM_FAKE_LINES into
 * gpumerge_fakegpu (test_recrange). Its probe always finds the device (every
 * other entry point is the stub's, which has none); gm_gpu_lines_fit says a text fits while
 * twice its bytes and 64 bytes a line stay within GM_FAKE_DEVICE_BYTES (no bound
 * when unset), and gm_gpu_sort_lines declines what does not fit, then takes the
 * text through the job's reads in pieces of GM_FAKE_PIECE bytes (default 1000),
 * sorts it with the CPU's records sort and hands the lines to the job's sink:
 * what the host sends and receives is what it would with a device. -u keeps the
 * first line of each run of equal keys, as the device does. GM_FAKE_WINDOW sets
 * the windows the sort by ranges reads in, GM_FAKE_HOST_MEMORY the host's memory
 * it counts on, and GM_FAKE_CHANGE=FILE:OFFSET:BYTE
 * writes that byte into FILE once the first sort has read its text, as if another
 * program changed the input between two passes.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/keys/keys.h"
#include "../core/read/lines.h"
#include "../core/records/records.h"
#include "../core/sort/recsort.h"
#include "../cuda/gpu.h"

static uint64_t env_bytes(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtoull(v, NULL, 10) : dflt;
}

static int probed;

int gm_gpu_probe(gm_gpu_info *info, gm_status *st)
{
    (void)st;
    probed = 1;
    if (info) {
        memset(info, 0, sizeof *info);
        snprintf(info->name, sizeof info->name, "a stand-in device (tests/fakegpu.c)");
        info->free_bytes = info->total_bytes = (size_t)env_bytes("GM_FAKE_DEVICE_BYTES", 1 << 30);
    }
    return GM_OK;
}

int gm_gpu_probe_done(void)
{
    return probed;
}

int gm_gpu_lines_fit(const gm_keyspec *ks, uint64_t bytes, uint64_t lines, gm_status *st)
{
    (void)ks;
    uint64_t cap = env_bytes("GM_FAKE_DEVICE_BYTES", UINT64_MAX);
    if (2 * bytes + 64 * lines > cap)
        return gm_fail(st, GM_ETEXT, "text path: data does not fit in GPU memory (fake: %llu "
                       "bytes, %llu lines)", (unsigned long long)bytes,
                       (unsigned long long)lines);
    return GM_OK;
}

/* The sorted lines to the sink, -u's later equal keys left out. */
static int put_lines(const gm_gpu_lines_job *job, const gm_recs *v, gm_gpu_lines_result *res,
                     gm_status *st)
{
    const gm_keyspec *ks = job->ks;
    const gm_rec *last = NULL;
    int rc = GM_OK;
    for (size_t i = 0; i < v->n && !rc; i++) {
        const gm_rec *r = &v->r[i];
        size_t len = gm_rec_len(r, ks->eol);
        if (ks->unique && last &&
            gm_key_cmp(ks, gm_rec_line(last), gm_rec_len(last, ks->eol), gm_rec_line(r), len) == 0)
            continue;
        last = r;
        rc = job->sink(job->sink_ctx, (const char *)gm_rec_line(r), len + 1, st);
        res->written++;
        res->bytes += len + 1;
    }
    return rc;
}

/* GM_FAKE_CHANGE, once. */
static void change_input(void)
{
    static int done;
    const char *v = getenv("GM_FAKE_CHANGE");
    char path[4096];
    long long off;
    int byte;
    if (done || !v || sscanf(v, "%4095[^:]:%lld:%d", path, &off, &byte) != 3)
        return;
    done = 1;
    int fd = open(path, O_WRONLY);
    unsigned char c = (unsigned char)byte;
    if (fd >= 0) {
        if (pwrite(fd, &c, 1, off) != 1)
            done = 2;
        close(fd);
    }
}

int gm_gpu_sort_lines(const gm_gpu_lines_job *job, gm_gpu_lines_result *res,
                      gm_gpu_times *times, gm_status *st)
{
    memset(res, 0, sizeof *res);
    memset(times, 0, sizeof *times);
    int rc = gm_gpu_lines_fit(job->ks, job->bytes, job->lines_hint / 5 * 4, st);
    if (rc)
        return rc;
    unsigned char *text = malloc(job->bytes ? job->bytes : 1);
    if (!text)
        return gm_fail(st, GM_ENOMEM, "out of memory (fake device)");
    size_t piece = (size_t)env_bytes("GM_FAKE_PIECE", 1000);
    for (uint64_t at = 0; at < job->bytes && !rc; at += piece) {
        size_t n = job->bytes - at < piece ? (size_t)(job->bytes - at) : piece;
        rc = job->read(job->read_ctx, text + at, n, st);
    }
    change_input();
    gm_recs v = { NULL, 0, 0, 0 };
    gm_lines_block b = { 1, (size_t)job->bytes, (size_t)job->bytes, text, NULL, 0 };
    if (!rc)
        rc = gm_lines_split(job->ks, &b, &v, 1, st);
    if (!rc)
        rc = gm_recsort(job->ks, v.r, v.n, 1, SIZE_MAX, st);
    res->lines = v.n;
    if (!rc)
        rc = put_lines(job, &v, res, st);
    gm_recs_free(&v);
    free(text);
    return rc;
}

/* GM_FAKE_WINDOW: the windows the sort by ranges reads in; GM_FAKE_HOST_MEMORY:
 * the host's memory it counts on (records.h). */
__attribute__((constructor)) static void fake_window(void)
{
    gm_records_test_window((size_t)env_bytes("GM_FAKE_WINDOW", 0));
    gm_records_test_memory(env_bytes("GM_FAKE_HOST_MEMORY", 0));
}
