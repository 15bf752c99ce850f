/*
 * streamsort.c - the streaming data plane's sort (stream.h): parsed keys fill a
 * chunk as large as the budget allows (plan.h); a full chunk is sorted by the
 * engine and spilled as a run; at the end the runs are merged with the fan-in
 * (streampass.c), as coreutils' sort.c does, and sqlite's vdbesort.c keeps its
 * runs compact and binary. Input that fits one chunk is sorted in memory and
 * written, without a temporary file. Regular files whose text fits the text
 * path's limit may first go to the GPU as text (textsort.h).
 */
#include <stdlib.h>

#include "stream/handover.h"
#include "device/gpu.h"
#include "base/progress.h"
#include "stream/stream_impl.h"
#include "stream/textsort.h"
#include "base/util.h"

/* The sort's chunk, the engine's scratch and the runs spilled so far. */
struct sorter {
    gm_keybuf kb;   /* the chunk's keys; filled by sort_input, emptied by spill */
    void *scratch;  /* the engine's other buffer; scratch_room, swapped by spill */
    size_t scratch_bytes; /* bytes scratch holds; scratch_room */
    gm_runfile *runs; /* the runs spilled, in order; grown by spill */
    int nruns, cap; /* runs written, and room for; spill */
    int sized;      /* kb's room set from the first block's keys per byte */
    int64_t held;   /* the inputs' bytes whose keys kb holds, for --progress; added by
                     * sort_input, taken by sorted */
};

/* The first count of kb's keys are sorted: their share of the bytes held goes
 * to --progress (all of them when count is every key held). */
static void sorted(struct sorter *so, int64_t count)
{
    int64_t n = so->kb.n, bytes = so->held;
    if (count < n)
        bytes = (int64_t)((double)so->held * (double)count / (double)n);
    gm_progress_sorted(bytes);
    so->held -= bytes;
}

/* The scratch of room for need bytes. */
static int scratch_room(struct sorter *so, size_t need, gm_status *st)
{
    if (need <= so->scratch_bytes)
        return GM_OK;
    gm_buf_free(so->scratch);
    so->scratch = gm_buf_alloc(need, "sorting", st);
    so->scratch_bytes = so->scratch ? need : 0;
    return so->scratch ? GM_OK : GM_ENOMEM;
}

/* Sorts the first count keys of the chunk and writes them as a new run; the rest
 * moves to the front of the chunk. */
static int spill(struct stream *s, struct sorter *so, int64_t count, gm_status *st)
{
    gm_keybuf *kb = &so->kb;
    int rc = scratch_room(so, (size_t)count * kb->width, st);
    if (rc)
        return rc;
    if (so->nruns == so->cap) {
        int c = so->cap ? so->cap * 2 : 16;
        gm_runfile *r = realloc(so->runs, (size_t)c * sizeof *r);
        if (!r)
            return gm_fail(st, GM_ENOMEM, "out of memory sorting");
        so->runs = r;
        so->cap = c;
    }
    gm_keys keys = { kb->data, count, kb->width };
    void *other = so->scratch;
    rc = gm_stream_engine(s, GM_OP_SORT, &keys, &other, NULL, 1, st);
    if (rc)
        return rc;
    sorted(so, count);
    gm_runfile *r = &so->runs[so->nruns];
    rc = gm_run_create(r, &s->temps, st);
    if (rc)
        return rc;
    so->nruns++;
    s->stats->runs++;
    gm_progress_run_written();
    double a = gm_now();
    rc = gm_run_put(r, &keys, st);
    if (!rc)
        rc = gm_run_rewind(r, st);
    s->stats->spill += gm_now() - a;
    /* The keys' buffer stays kb's; the other one is the scratch again. */
    so->scratch = keys.data == kb->data ? other : keys.data;
    gm_keybuf_consume(kb, count);
    return rc;
}

/* Size the chunk once from the first block's keys per byte: a buffer that grows
 * as it fills is moved and loses its huge pages. */
static int size_chunk(struct stream *s, struct sorter *so, const gm_input *in, gm_status *st)
{
    gm_keybuf *kb = &so->kb;
    so->sized = 1;
    double per_byte = (double)kb->n / (double)in->bytes;
    int64_t block = (int64_t)s->plan->sort_block;
    int64_t want = (int64_t)(per_byte * 1.05 * (double)s->plan->total_bytes) + block;
    /* no more keys than the inputs have lines: a small input gets a small buffer */
    int64_t most = s->plan->total_bytes / 2 + 1;
    if (want > most)
        want = most;
    if (want > kb->limit)
        want = kb->limit;
    return want > kb->cap ? gm_keybuf_reserve(kb, want - kb->n, kb->width, st) : GM_OK;
}

/* Reads input i to its end into the chunk, spilling every full chunk as a run. */
static int sort_input(struct stream *s, struct sorter *so, int i, gm_status *st)
{
    gm_keybuf *kb = &so->kb;
    gm_input *in = &s->ins[i];
    gm_parse_opts o = { s->nthreads, 0, s->mask, 0, !s->cfg->strict };
    int rc = gm_stream_input_open(s, i, s->plan->sort_block, st);
    while (!rc && !in->eof) {
        int64_t before = in->bytes;
        rc = gm_stream_read_keys(s, in, &o, kb, st);
        so->held += in->bytes - before;
        if (!rc && !s->warm && s->plan->total_bytes < 0) /* a pipe: the keys so far */
            s->warm = gm_engine_warm(s->cfg, GM_OP_SORT, kb->n, s->nthreads);
        if (!rc && !so->sized && s->plan->total_bytes > 0 && kb->n > 0)
            rc = size_chunk(s, so, in, st);
        int64_t chunk = s->plan->chunk_keys[kb->width == GM_I64];
        /* A chunk the GPU sorts must also fit in its memory (known once the
         * start-up is: it is waited for before a chunk that may be cut). */
        if (!rc && !s->device_known && kb->n >= chunk)
            rc = gm_stream_device_check(s, 1, st);
        int64_t device = s->device_cap[kb->width == GM_I64];
        if (device > 0 && device < chunk)
            chunk = device;
        while (!rc && (kb->n > chunk || (kb->n == chunk && !in->eof)))
            rc = spill(s, so, chunk, st);
    }
    return rc;
}

/* Everything fits: sort in memory and write, no temporary file. */
static int sort_in_memory(struct stream *s, struct sorter *so, gm_status *st)
{
    gm_keybuf *kb = &so->kb;
    int rc = scratch_room(so, (size_t)kb->n * kb->width, st);
    gm_keys keys = { kb->data, kb->n, kb->width };
    if (!rc)
        rc = gm_stream_engine(s, GM_OP_SORT, &keys, &so->scratch, NULL, 1, st);
    if (!rc)
        sorted(so, kb->n);
    if (!rc) {
        /* The sort's other buffer goes back before the output is written, so
         * that the output's pages (a file's page cache, a pipe's reader) can
         * reuse its memory rather than the system's fresh pages. */
        double a = gm_now();
        gm_buf_free(so->scratch);
        so->scratch = NULL;
        so->scratch_bytes = 0;
        s->stats->cleanup += gm_now() - a;
    }
    if (!rc) {
        s->w->unique = s->cfg->unique && !s->stats->rep.deduplicated;
        rc = gm_stream_to_writer(s, NULL, &keys, st);
    }
    kb->data = keys.data;
    if (keys.width > s->stats->width)
        s->stats->width = keys.width;
    return rc;
}

/* After the last input: the chunk sorted in memory, or spilled and the runs
 * merged into the output. */
static int sort_finish(struct stream *s, struct sorter *so, gm_status *st)
{
    gm_keybuf *kb = &so->kb;
    int rc = gm_stream_device_check(s, 1, st); /* the GPU's chunk limit, had the start-up
                                                 * ended after the last block */
    int64_t device = s->device_cap[kb->width == GM_I64];
    while (!rc && device > 0 && kb->n > device)
        rc = spill(s, so, device, st);
    if (rc)
        return rc;
    if (so->nruns == 0)
        return sort_in_memory(s, so, st);
    if (kb->n > 0)
        rc = spill(s, so, kb->n, st);
    double a = gm_now();
    gm_keybuf_free(kb);
    gm_buf_free(so->scratch);
    so->scratch = NULL;
    s->stats->cleanup += gm_now() - a;
    if (!rc) {
        rc = gm_stream_merge_runs(s, so->runs, so->nruns, st);
        so->nruns = 0;
    }
    return rc;
}

int gm_stream_sort(struct stream *s, gm_status *st)
{
    /* The GPU may take the text (pipes are read whole for it); when it does not,
     * every input is where it was, or has its bytes back. */
    int rc = gm_text_sort(s->cfg, s->plan, s->ins, s->nnames, s->w, s->stats, st);
    if (rc != GM_ETEXT)
        return rc;
    struct sorter so = { { NULL, 0, 0, 0, GM_I32 }, NULL, 0, NULL, 0, 0, 0, 0 };
    so.kb.limit = s->plan->chunk_keys[0] + (int64_t)s->plan->sort_block;
    rc = GM_OK;
    int handed = 0;
    for (int i = 0; i < s->nnames && !rc; i++) {
        rc = sort_input(s, &so, i, st);
        if (rc == GM_ERECORDS) {
            gm_stream_say_records(s, &s->ins[i]);
            rc = gm_stream_device_check(s, 1, st);
            s->stats->handed_over = 1;
            if (!rc)
                rc = gm_handover_sort(s->cfg, s->ins, s->open, s->names, s->nnames, i,
                                      &s->declined_block, &so.kb, so.runs, so.nruns, s->w, st);
            handed = 1;
            break;
        }
        gm_stream_input_close(s, i);
    }
    gm_progress_read_done();
    if (!rc && !handed)
        rc = sort_finish(s, &so, st);
    double a = gm_now();
    gm_trace_push("clean-up");
    for (int i = 0; i < so.nruns; i++)
        gm_run_remove(&so.runs[i]);
    free(so.runs);
    gm_keybuf_free(&so.kb);
    gm_buf_free(so.scratch);
    gm_trace_pop();
    s->stats->cleanup += gm_now() - a;
    return rc;
}
