/*
 * gm.c - the three operations of gm.h as one pipeline:
 *
 *   open every input (a missing or unreadable one stops us before anything is
 *   written) -> load and parse each on all cores -> choose the key width -> gather
 *   the keys into one array (inputs back to back: the runs of a merge) -> engine
 *   (CPU or GPU) -> format and write -> rename -o's temporary file into place.
 *   The -o file is opened right after the inputs, before anything is read
 *   (core/outfile.h); signal handlers that remove temporary files are installed
 *   first of all (core/cleanup.h).
 *
 * Each stage is timed for -v.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../cuda/gpu.h"
#include "cleanup.h"
#include "engine.h"
#include "gm.h"
#include "input.h"
#include "output.h"
#include "util.h"

struct timing {
    double read, parse, gather, engine, format, write, output;
};

/* Opens all inputs; on failure closes those opened and returns the error. */
static int open_inputs(gm_input *ins, char *const *names, int n, gm_status *st)
{
    for (int i = 0; i < n; i++) {
        int rc = gm_input_open(&ins[i], names[i], st);
        if (rc) {
            for (int j = 0; j <= i; j++)
                gm_input_close(&ins[j]);
            return rc;
        }
    }
    return GM_OK;
}

static void close_inputs(gm_input *ins, int n)
{
    for (int i = 0; i < n; i++)
        gm_input_close(&ins[i]);
}

static int check_inputs(const gm_config *cfg, gm_input *ins, int n, int nthreads,
                        gm_status *st)
{
    gm_parse_opts o = { nthreads, 1, cfg->reverse ? -1 : 0, cfg->unique };
    for (int i = 0; i < n; i++) {
        int rc = gm_input_load(&ins[i], st);
        if (!rc)
            rc = gm_input_split(&ins[i], nthreads, st);
        if (!rc)
            rc = gm_input_parse(&ins[i], &o, NULL, st);
        gm_input_close(&ins[i]);
        if (rc)
            return rc;
    }
    return GM_OK;
}

static void print_report(const gm_config *cfg, const char *what, int nins, const gm_keys *k,
                         int nthreads, const gm_engine_report *rep, const struct timing *t)
{
    if (!cfg->verbose)
        return;
    gm_say(cfg, GM_MSG_VERBOSE, "plan: %s %d input%s, %lld keys, int%d, %s, %d thread%s", what, nins,
           nins == 1 ? "" : "s", (long long)k->n, (int)k->width * 8,
           rep->device == GM_DEVICE_GPU ? "gpu" : "cpu", nthreads, nthreads == 1 ? "" : "s");
    gm_say(cfg, GM_MSG_VERBOSE, "device: %s", rep->reason);
    if (rep->device == GM_DEVICE_GPU)
        gm_say(cfg, GM_MSG_VERBOSE, "gpu: %s, kernel %s, %d merge pass%s%s", rep->gpu_name,
               gm_kernel_name(rep->kernel), rep->passes, rep->passes == 1 ? "" : "es",
               rep->deduplicated ? ", -u on the device" : "");
    gm_say(cfg, GM_MSG_VERBOSE, "time: read %.3f s", t->read);
    gm_say(cfg, GM_MSG_VERBOSE, "time: parse %.3f s (and %.3f s to gather the keys)", t->parse, t->gather);
    if (rep->device == GM_DEVICE_GPU)
        gm_say(cfg, GM_MSG_VERBOSE, "time: %s %.3f s (host to device %.3f s, kernels %.3f s, device to host %.3f s)",
               what, t->engine, rep->h2d, rep->kernel_s, rep->d2h);
    else
        gm_say(cfg, GM_MSG_VERBOSE, "time: %s %.3f s", what, t->engine);
    gm_say(cfg, GM_MSG_VERBOSE, "time: format %.3f s, write %.3f s (overlapped: %.3f s in all)", t->format,
           t->write, t->output);
}

/* Loads, parses and gathers every input into *keys (inputs back to back; offsets
 * gets nnames + 1 entries). Closes the inputs. */
static int read_keys(gm_input *ins, int nnames, int merging, const gm_config *cfg,
                     int nthreads, gm_keys *keys, int64_t *offsets, struct timing *t,
                     gm_status *st)
{
    int rc = GM_OK;
    /* Load every input and count its lines: room for the int32 keys. */
    int64_t lines = 0;
    for (int i = 0; i < nnames && !rc; i++) {
        double a = gm_now();
        rc = gm_input_load(&ins[i], st);
        double b = gm_now();
        if (!rc)
            rc = gm_input_split(&ins[i], nthreads, st);
        t->read += b - a;
        t->parse += gm_now() - b;
        lines += ins[i].nlines;
    }
    int32_t *keys32 = rc ? NULL : gm_alloc((size_t)(lines ? lines : 1) * sizeof *keys32, st);
    if (!rc && !keys32)
        rc = GM_ENOMEM;

    /* Parse each input into its place; the width is int64 if any key needs it. */
    gm_parse_opts o = { nthreads, merging, cfg->reverse ? -1 : 0, 0 };
    int64_t total = 0, line_at = 0;
    int wide = 0;
    double a = gm_now();
    for (int i = 0; i < nnames && !rc; i++) {
        rc = gm_input_parse(&ins[i], &o, keys32 + line_at, st);
        if (rc == GM_DISORDER) /* an unsorted merge input is an error, not a finding */
            rc = st->code = GM_EINPUT;
        line_at += ins[i].nlines;
        total += ins[i].nkeys;
        wide |= ins[i].wide;
    }
    t->parse += gm_now() - a;

    a = gm_now();
    keys->n = total;
    keys->width = wide ? GM_I64 : GM_I32;
    keys->data = keys32;
    if (!rc && wide) {
        keys->data = gm_alloc((size_t)total * sizeof(int64_t), st);
        if (!keys->data)
            rc = GM_ENOMEM;
    }
    if (!rc) {
        int64_t at = 0;
        for (int i = 0; i < nnames; i++) {
            offsets[i] = at;
            gm_input_gather(&ins[i], keys->width, (char *)keys->data + (size_t)at * keys->width,
                            nthreads);
            at += ins[i].nkeys;
        }
        offsets[nnames] = at;
    }
    if (keys->data != keys32)
        free(keys32);
    if (rc) {
        free(keys->data);
        keys->data = NULL;
    }
    close_inputs(ins, nnames);
    t->gather = gm_now() - a;
    return rc;
}

/* The inputs' size where it is known (regular files): the output is no longer. */
static uint64_t input_bytes(const gm_input *ins, int n)
{
    uint64_t sum = 0;
    for (int i = 0; i < n; i++) {
        struct stat sb;
        if (fstat(ins[i].fd, &sb) == 0 && S_ISREG(sb.st_mode))
            sum += (uint64_t)sb.st_size + 1; /* + a last newline that may be missing */
    }
    return sum;
}

int gm_run(gm_op c, const gm_config *cfg, char *const *names, int nnames, gm_status *st)
{
    static char *const stdin_name[] = { "-" };
    gm_cleanup_install(st); /* temporary files never outlive a signal */
    gm_fill_std_fds();
    if (nnames == 0) {
        names = stdin_name;
        nnames = 1;
    }
    int nthreads = cfg->threads > 0 ? cfg->threads : gm_cpu_count();
    struct timing t;
    memset(&t, 0, sizeof t);

    gm_input *ins = calloc((size_t)nnames, sizeof *ins);
    int64_t *offsets = calloc((size_t)nnames + 1, sizeof *offsets);
    if (!ins || !offsets) {
        free(ins);
        free(offsets);
        return gm_fail(st, GM_ENOMEM, "out of memory");
    }
    int rc = open_inputs(ins, names, nnames, st);
    /* The output is opened (not truncated) before any input is read, as sort does:
     * an unwritable -o stops us at once. */
    gm_output out;
    if (!rc && c != GM_OP_CHECK) {
        rc = gm_output_open_sized(&out, cfg->output, input_bytes(ins, nnames), st);
        if (rc)
            close_inputs(ins, nnames);
    }
    if (!rc && cfg->device == GM_DEVICE_GPU) {
        /* Fail before reading gigabytes if the GPU cannot be used at all (check too). */
        gm_gpu_info info;
        rc = gm_gpu_probe(&info, st);
        if (rc) {
            close_inputs(ins, nnames);
            if (c != GM_OP_CHECK)
                gm_output_abort(&out);
        }
    }
    if (!rc && c == GM_OP_CHECK)
        rc = check_inputs(cfg, ins, nnames, nthreads, st);
    if (rc || c == GM_OP_CHECK) {
        free(ins);
        free(offsets);
        return rc;
    }

    gm_keys keys = { NULL, 0, GM_I32 };
    rc = read_keys(ins, nnames, c == GM_OP_MERGE, cfg, nthreads, &keys, offsets, &t, st);
    free(ins);
    void *scratch = NULL;
    if (!rc) {
        scratch = gm_alloc((size_t)(keys.n ? keys.n : 1) * keys.width, st);
        if (!scratch)
            rc = GM_ENOMEM;
    }

    gm_engine_report rep;
    memset(&rep, 0, sizeof rep);
    if (!rc) {
        double a = gm_now();
        rc = gm_engine_run(cfg, c, &keys, &scratch,
                           offsets, nnames, nthreads, &rep, st);
        t.engine = gm_now() - a;
        if (!rc) {
            gm_output_stats os;
            a = gm_now();
            rc = gm_output_write(&out, &keys, cfg->unique && !rep.deduplicated, nthreads,
                                 &os, st);
            if (!rc)
                rc = gm_output_commit(&out, st);
            t.output = gm_now() - a;
            t.format = os.format_cpu / nthreads;
            t.write = os.write;
        }
    }
    if (rc)
        gm_output_abort(&out);
    else if (out.file.kind == GM_OUTFILE_IN_PLACE)
        gm_say(cfg, GM_MSG_VERBOSE, "output: %s written in place: %s", out.shown, out.file.why);
    free(keys.data);
    free(scratch);
    free(offsets);
    if (!rc)
        print_report(cfg, c == GM_OP_MERGE ? "merge" : "sort", nnames, &keys, nthreads, &rep, &t);
    return rc;
}
