/*
 * stats.c - the run's stats for -v (stats.h): one engine call tallied, and the
 * stages' time summed.
 */
#include "plan/stats.h"

void gm_stream_tally(gm_stream_stats *t, gm_op op, int64_t n, gm_width w,
                     const gm_engine_report *rep)
{
    int gpu = rep->device == GM_DEVICE_GPU;
    t->calls[op == GM_OP_MERGE][gpu]++;
    t->startup_wait += rep->startup_wait;
    t->h2d += rep->h2d;
    t->kernel_s += rep->kernel_s;
    t->d2h += rep->d2h;
    if (!t->used_engine || n >= t->rep_keys) {
        t->rep = *rep;
        t->rep_keys = n;
    }
    t->used_engine = 1;
    if (w > t->width)
        t->width = w;
}

double gm_stream_staged(const gm_stream_stats *t)
{
    return t->open + t->read + t->parse + t->startup_wait + t->engine + t->spill + t->write +
           t->finish + t->cleanup;
}
