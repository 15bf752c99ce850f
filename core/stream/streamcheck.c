/*
 * streamcheck.c - the streaming data plane's check (stream.h), as sort -c: each
 * input is read block by block and its keys checked in order by the parser,
 * without an engine or an output; the first disorder ends it. A line that is not
 * a canonical integer hands the check to the records path from that line on.
 */
#include "stream/handover.h"
#include "stream/stream_impl.h"
#include "base/util.h"

int gm_stream_check(struct stream *s, gm_status *st)
{
    gm_parse_opts o = { s->nthreads, 1, s->mask, s->cfg->unique, !s->cfg->strict };
    int rc = GM_OK;
    for (int i = 0; i < s->nnames && !rc; i++) {
        rc = gm_stream_input_open(s, i, s->plan->sort_block, st);
        while (!rc && !s->ins[i].eof) {
            rc = gm_stream_read_keys(s, &s->ins[i], &o, NULL, st);
        }
        if (rc == GM_ERECORDS) {
            gm_stream_say_records(s, &s->ins[i]);
            s->stats->handed_over = 1;
            rc = gm_handover_check(s->cfg, &s->ins[i], &s->declined_block, st);
        }
        gm_stream_input_close(s, i);
    }
    return rc;
}
