/*
 * streamopen.c - the streaming data plane's inputs (stream_impl.h): every input
 * opened before anything is written, those past the first pass closed until
 * their turn (as coreutils' sort keeps within NMERGE descriptors), and the read
 * and parse stages of one block, timed apart.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device/gpu.h"
#include "stream/stream_impl.h"
#include "base/util.h"

int gm_stream_input_open(struct stream *s, int i, size_t block, gm_status *st)
{
    gm_input *in = &s->ins[i];
    double a = gm_now();
    int rc = GM_OK;
    if (!s->open[i]) {
        rc = gm_input_open(in, s->names[i], st);
        if (!rc)
            rc = gm_input_range(in, s->cfg, i, st);
        if (rc)
            gm_input_close(in);
        else
            s->open[i] = 1;
        in->drained = s->drained[i];
    }
    in->zero = s->cfg->zero_terminated;
    in->line_max = s->plan->budget; /* a line must fit in the memory budget */
    in->ahead = s->plan->read_ahead;
    in->threads = s->plan->threads; /* --parallel governs the preads too */
    if (!rc)
        rc = gm_input_start(in, block, st);
    s->stats->open += gm_now() - a;
    return rc;
}

void gm_stream_input_close(struct stream *s, int i)
{
    if (!s->open[i])
        return;
    double a = gm_now();
    gm_input_close(&s->ins[i]);
    s->open[i] = 0;
    s->stats->cleanup += gm_now() - a;
}

/* Whether fd is not a regular file: a pipe, socket or device, which is not
 * closed before its turn (what it holds would be lost). */
static int is_stream(int fd)
{
    struct stat sb;
    return fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode);
}

/* Bytes of in from its offset to its end, or -1 when it cannot seek. */
/* A stream held past the first pass takes the descriptor of the last regular
 * input of that pass still open, closed now until its batch comes, so that
 * opening the inputs after it finds one free. */
static void give_way(struct stream *s, int keep)
{
    for (int i = keep - 1; i >= 0; i--) {
        if (s->open[i] && s->ins[i].fd > STDIN_FILENO && !is_stream(s->ins[i].fd)) {
            gm_stream_input_close(s, i);
            return;
        }
    }
}

static int64_t bytes_left(const gm_input *in)
{
    int fd = in->fd;
    off_t at = lseek(fd, 0, SEEK_CUR);
    if (at >= 0 && in->end >= 0)
        return in->end > at ? in->end - at : 0;
    off_t end = at >= 0 ? lseek(fd, 0, SEEK_END) : -1;
    if (at >= 0 && end >= at && lseek(fd, at, SEEK_SET) == at)
        return end - at;
    return -1;
}

/* Every input is opened before anything is written, so a missing one stops the
 * run first. Those of a merge's first pass stay open (all of them when they are
 * one pass, as an input that is the output needs), and as many of a sort's or a
 * check's as descriptors allow (a sort reads them one at a time); the rest are
 * closed and opened again by name when their turn comes, but for pipes and
 * devices (streams), which would lose what they hold. What the opening tells goes
 * to the plan (gm_plan_inputs). */
int gm_stream_open_inputs(struct stream *s, gm_status *st)
{
    gm_plan *p = s->plan;
    int keep = s->op == GM_OP_MERGE ? p->fan_in : p->fds, streams = 0, have_stdin = 0;
    int rc = GM_OK;
    int64_t total = 0;
    uint64_t regular = 0; /* bounds the output, for -o's space check */
    for (int i = 0; i < s->nnames && !rc; i++) {
        if (strcmp(s->names[i], "-") == 0) { /* a second "-" reads what the first left */
            s->drained[i] = (unsigned char)have_stdin;
            have_stdin = 1;
        }
        rc = gm_input_open(&s->ins[i], s->names[i], st);
        if (!rc)
            rc = gm_input_range(&s->ins[i], s->cfg, i, st);
        if (rc) {
            gm_input_close(&s->ins[i]);
            break;
        }
        s->open[i] = 1;
        s->ins[i].drained = s->drained[i];
        int64_t size = bytes_left(&s->ins[i]);
        if (size >= 0 && !s->drained[i])
            regular += (uint64_t)size + 1; /* + a last newline that may be missing */
        if (size < 0 || total < 0)
            total = -1;
        else if (!s->drained[i])
            total += size;
        if (i >= keep && s->ins[i].fd > STDIN_FILENO) {
            if (is_stream(s->ins[i].fd)) {
                streams++;
                give_way(s, keep);
            } else
                gm_stream_input_close(s, i);
        }
    }
    gm_plan_inputs(p, total, regular, streams);
    if (streams > 0) { /* they take their descriptors from every pass */
        int held = s->op == GM_OP_MERGE ? p->fan_in : p->fds - streams;
        for (int i = held > 0 ? held : 0; i < keep && i < s->nnames; i++)
            if (s->open[i] && s->ins[i].fd > STDIN_FILENO && !is_stream(s->ins[i].fd))
                gm_stream_input_close(s, i);
    }
    return rc;
}

/* The read and parse stages for one block of in (keys onto kb), timed apart; then
 * whether --device=gpu's start-up has failed meanwhile (its error first). */
int gm_stream_read_keys(struct stream *s, gm_input *in, const gm_parse_opts *o, gm_keybuf *kb,
                        gm_status *st)
{
    int64_t before = kb ? kb->n : 0, lines = in->line;
    gm_block b;
    double a = gm_now();
    gm_trace_push("read");
    int rc = gm_input_next(in, &b, st);
    gm_trace_pop();
    double c = gm_now();
    s->stats->read += c - a;
    if (!rc) {
        gm_trace_push("parse");
        rc = gm_input_parse_block(in, &b, o, kb, st);
        gm_trace_pop();
        s->stats->parse += gm_now() - c;
        if (rc == GM_ERECORDS) {
            s->declined = in;
            s->declined_block = b;
            return rc;
        }
    }
    s->stats->keys += kb ? kb->n - before : in->line - lines; /* a check keeps no keys */
    int drc = gm_stream_device_check(s, rc != GM_OK, st);
    return drc ? drc : rc;
}
