/*
 * reader_impl.h - the reader's private types, shared by reader.c (the slots handed
 * out, the reader thread) and readfill.c (filling one slot with whole lines).
 */
#ifndef GM_READER_IMPL_H
#define GM_READER_IMPL_H

#include <pthread.h>
#include <stdint.h>

#include "read/input.h"

/* One of an input's two block buffers. */
struct slot {
    char *buf;     /* gm_buf_alloc'd (gm_input_start), grown by grow_slot (readfill.c) */
    size_t cap;    /* buf's bytes (gm_input_start, grow_slot) */
    size_t len;    /* bytes of whole lines */
    size_t carry;  /* bytes of a partial line after them */
    int eof;       /* the input ends with this block (gm_reader_fill) */
    int full;      /* handed to the consumer, not yet released */
    int err;       /* the reader failed here (status in rd->st) */
};

/* A slot's error for a line longer than gm_input.line_max: its message is written
 * when the block is handed out, once the lines before it are counted. */
enum { GM_LINE_TOO_LONG = -1 };

/* Fields the thread and the consumer share are under lock: the slots' full and
 * err, stop. The rest belongs to whichever side fills (the thread once started). */
struct gm_reader {
    gm_input *in;  /* the input read (gm_input_start) */
    pthread_t tid; /* the reader thread, when started (gm_input_start) */
    int started;   /* the thread runs, until joined (gm_input_start, drain_reader) */
    pthread_mutex_t lock; /* guards the shared fields named above (gm_input_start) */
    pthread_cond_t cv;    /* signals a slot filled or released, or stop */
    struct slot s[2]; /* the two block buffers, filled in turn */
    int cur;       /* slot held by the consumer, or -1 */
    int next;      /* slot the consumer takes next */
    int stop;      /* the thread is to stop (gm_input_stop_reading, drain_reader) */
    int ended;     /* the last block has been handed out */
    int regular;   /* a regular file: read in the caller by parallel preads */
    int64_t start, size; /* a regular file's first offset and where reading ends (gm_input_start) */
    int64_t total; /* bytes read so far */
    gm_status st;  /* the failure a slot's err tells of (gm_reader_fill) */
};

/* Fills slot s (taking prev's partial line first, prev NULL: none) with whole
 * lines: the prefix first, then preads or read(2)s. Returns 0; GM_LINE_TOO_LONG;
 * or an error code with rd->st set. */
int gm_reader_fill(struct gm_reader *rd, struct slot *s, const struct slot *prev);

#endif
