/*
 * reader.c - stage 1, read (see reader.h for the contract): the reader object, its
 * two slots handed out in turn, the reader thread, and the rest handed to the
 * records path. readfill.c fills a slot.
 *
 * The slots come from gm_buf_alloc, so they can become pinned memory. For a pipe
 * or a device a thread fills them in turn; the consumer takes a full one, the
 * reader refills the other. The thread is cancelled only inside read(2), so closing
 * an input whose writer never ends (yes | gpumerge merge - | head) does not hang.
 * A regular file needs no thread: the consumer fills the other slot with the
 * parallel pread when it asks for a block, which on many cores reads several times
 * faster than one thread can. Where the consumer has other work between blocks (a
 * merge on four threads or more: on two, a reader thread competes with the parser
 * for the cores) a reader thread reads ahead with plain preads instead, so the next
 * block is read while the current one is parsed, merged and written.
 */
#define _GNU_SOURCE
#include "read/reader.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read/reader_impl.h"
#include "base/progress.h"
#include "base/util.h"

static size_t forced_block;
static int forced_read_ahead;

void gm_input_test_block_size(size_t bytes) { forced_block = bytes; }
void gm_input_test_read_ahead(int on) { forced_read_ahead = on; }

enum { DEFAULT_BLOCK = 8 << 20 };

static void *reader_main(void *arg)
{
    struct gm_reader *rd = arg;
    int old;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    const struct slot *prev = NULL;
    for (int j = 0;; j ^= 1) {
        struct slot *s = &rd->s[j];
        pthread_mutex_lock(&rd->lock);
        while (s->full && !rd->stop)
            pthread_cond_wait(&rd->cv, &rd->lock);
        int stop = rd->stop;
        pthread_mutex_unlock(&rd->lock);
        if (stop)
            return NULL;
        int err = gm_reader_fill(rd, s, prev);
        pthread_mutex_lock(&rd->lock);
        s->err = err;
        s->full = 1;
        pthread_cond_broadcast(&rd->cv);
        pthread_mutex_unlock(&rd->lock);
        if (err || s->eof)
            return NULL;
        prev = s;
    }
}

int gm_input_start(gm_input *in, size_t block_bytes, gm_status *st)
{
    if (in->rd)
        return GM_OK;
    if (forced_block)
        block_bytes = forced_block;
    if (block_bytes < 16)
        block_bytes = 16;
    struct gm_reader *rd = calloc(1, sizeof *rd);
    if (!rd)
        return gm_fail(st, GM_ENOMEM, "out of memory reading %s", in->shown);
    rd->in = in;
    rd->cur = -1;
    pthread_mutex_init(&rd->lock, NULL);
    pthread_cond_init(&rd->cv, NULL);
    in->rd = rd;
    for (int i = 0; i < 2; i++) {
        rd->s[i].buf = gm_buf_alloc(block_bytes, "reading", st);
        if (!rd->s[i].buf)
            return GM_ENOMEM;
        rd->s[i].cap = block_bytes;
    }
    if (in->drained) {
        rd->s[0].full = 1;
        rd->s[0].eof = 1;
        return GM_OK;
    }
    struct stat sb;
    int known = fstat(in->fd, &sb) == 0;
    if (known && S_ISREG(sb.st_mode)) {
        off_t at = lseek(in->fd, 0, SEEK_CUR);
        if (at >= 0) {
            rd->regular = 1;
            rd->start = at;
            int64_t end = gm_input_end(in, (int64_t)sb.st_size);
            rd->size = end > at ? end : at;
            in->size = rd->size - at;
            if (!in->ahead && !forced_read_ahead)
                return GM_OK; /* read in gm_input_next, no thread */
        }
    } else if (known) {
        gm_pipe_enlarge(in->fd, &sb);
    }
    rd->started = 1; /* before the thread, which reads it */
    if (gm_thread_start(&rd->tid, reader_main, rd) != 0) {
        rd->started = 0;
        return gm_fail(st, GM_ENOMEM, "cannot start a reader for %s", in->shown);
    }
    return GM_OK;
}

/* Hands the filled slot s (the reader's next) out as block b, or its error err. */
static int hand_out(gm_input *in, struct slot *s, int err, gm_block *b, gm_status *st)
{
    struct gm_reader *rd = in->rd;
    if (err == GM_LINE_TOO_LONG) /* the block's first line: those before are counted */
        return gm_fail(st, GM_EINPUT, "%s:%lld: line longer than the memory budget (-S)",
                       in->shown, (long long)in->line + 1);
    if (err) {
        *st = rd->st;
        return err;
    }
    rd->cur = rd->next;
    rd->next ^= 1;
    b->text = s->buf;
    b->len = s->len;
    b->eof = s->eof;
    rd->ended = s->eof;
    in->bytes += (int64_t)s->len;
    gm_progress_read((int64_t)s->len);
    return GM_OK;
}

int gm_input_next(gm_input *in, gm_block *b, gm_status *st)
{
    if (!in->rd) {
        int rc = gm_input_start(in, DEFAULT_BLOCK, st);
        if (rc)
            return rc;
    }
    struct gm_reader *rd = in->rd;
    if (rd->ended) { /* after the last block: empty ones */
        b->text = rd->s[0].buf;
        b->len = 0;
        b->eof = 1;
        return GM_OK;
    }
    double t0 = gm_now();
    if (rd->regular && !rd->started) { /* fill the other slot here; the current one holds the carry */
        struct slot *s = &rd->s[rd->next];
        int err = gm_reader_fill(rd, s, rd->cur >= 0 ? &rd->s[rd->cur] : NULL);
        in->wait += gm_now() - t0;
        return hand_out(in, s, err, b, st);
    }
    pthread_mutex_lock(&rd->lock);
    if (rd->cur >= 0) {
        rd->s[rd->cur].full = 0;
        rd->cur = -1;
        pthread_cond_broadcast(&rd->cv);
    }
    struct slot *s = &rd->s[rd->next];
    while (!s->full)
        pthread_cond_wait(&rd->cv, &rd->lock);
    pthread_mutex_unlock(&rd->lock);
    in->wait += gm_now() - t0;
    return hand_out(in, s, s->err, b, st);
}

void gm_input_stop_reading(gm_input *in)
{
    struct gm_reader *rd = in->rd;
    if (rd && rd->started) {
        pthread_mutex_lock(&rd->lock);
        rd->stop = 1;
        pthread_cond_broadcast(&rd->cv);
        pthread_mutex_unlock(&rd->lock);
        pthread_cancel(rd->tid); /* acts only inside read(2) */
        pthread_join(rd->tid, NULL);
    }
    if (rd) {
        for (int i = 0; i < 2; i++)
            gm_buf_free(rd->s[i].buf);
        pthread_cond_destroy(&rd->cv);
        pthread_mutex_destroy(&rd->lock);
        free(rd);
        in->rd = NULL;
    }
    gm_buf_free(in->prefix.buf); /* after the thread, which may be copying from it */
    in->prefix.buf = NULL;
}

/* The reader stops after the fill it is in (none is cut short, so no byte read
 * from the descriptor is lost) and is joined. */
static void drain_reader(struct gm_reader *rd)
{
    if (!rd->started)
        return;
    pthread_mutex_lock(&rd->lock);
    rd->stop = 1;
    pthread_cond_broadcast(&rd->cv);
    pthread_mutex_unlock(&rd->lock);
    pthread_join(rd->tid, NULL);
    rd->started = 0;
}

/* Appends n bytes at p to *buf (length *len, room *cap). Returns 0 or -1. */
static int append_bytes(char **buf, size_t *len, size_t *cap, const char *p, size_t n)
{
    if (n == 0)
        return 0;
    if (*len + n > *cap) {
        size_t want = (*len + n) * 2 + 64;
        char *q = realloc(*buf, want);
        if (!q)
            return -1;
        *buf = q;
        *cap = want;
    }
    memcpy(*buf + *len, p, n);
    *len += n;
    return 0;
}

int gm_input_take_rest(gm_input *in, const gm_block *b, char **buf, size_t *len,
                       gm_status *st)
{
    struct gm_reader *rd = in->rd;
    size_t cap = 0;
    *buf = NULL;
    *len = 0;
    int fail = 0;
    if (rd) {
        drain_reader(rd);
        const struct slot *cur = rd->cur >= 0 ? &rd->s[rd->cur] : NULL, *prev = NULL;
        if (b && b->len)
            fail |= append_bytes(buf, len, &cap, b->text, b->len);
        if (cur) {
            fail |= append_bytes(buf, len, &cap, cur->buf + cur->len, cur->carry);
            prev = cur;
        }
        /* the slots filled ahead and not handed out, in order: each begins with
         * the carry of the one before it */
        for (int k = 0; k < 2 && !rd->ended && !(prev && prev->eof); k++) {
            const struct slot *s = &rd->s[rd->next ^ k];
            if (s == cur || !s->full)
                break;
            if (s->err) {
                *st = rd->st;
                free(*buf);
                *buf = NULL;
                return s->err;
            }
            size_t skip = prev ? prev->carry : 0, n = s->len + s->carry;
            if (n > skip)
                fail |= append_bytes(buf, len, &cap, s->buf + skip, n - skip);
            prev = s;
        }
        if (rd->regular)
            lseek(in->fd, rd->start + rd->total, SEEK_SET);
    }
    if (in->zero && !fail) /* the slots' bytes as they were read */
        gm_input_swap_terminators(*buf, *len);
    if (in->prefix.buf && in->prefix.at < in->prefix.end) { /* not swapped yet */
        fail |= append_bytes(buf, len, &cap, in->prefix.buf + in->prefix.at,
                             in->prefix.end - in->prefix.at);
        in->prefix.at = in->prefix.end;
    }
    if (fail) {
        free(*buf);
        *buf = NULL;
        return gm_fail(st, GM_ENOMEM, "out of memory reading %s", in->shown);
    }
    return GM_OK;
}
