/*
 * input.c - an input (see input.h): opened, each block parsed into keys, closed.
 * A block is cut into chunks of whole lines (about a megabyte, at least four per
 * thread) whose lines are counted first, so that every chunk knows its first line
 * number and where its keys go; the chunks are parsed on the pool (parse.c); their
 * problems are checked in file order, the order across chunks and blocks too; and
 * the keys are gathered, without the gaps of blank lines, onto the end of the
 * caller's key buffer. The reading is reader.c's.
 */
#define _GNU_SOURCE
#include "read/input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read/parse.h"
#include "base/util.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

int gm_input_open(gm_input *in, const char *name, gm_status *st)
{
    memset(in, 0, sizeof *in);
    in->fd = -1;
    in->size = -1;
    in->end = -1;
    in->name = name;
    gm_quote(name, in->shown, sizeof in->shown);
    if (strcmp(name, "-") == 0) {
        in->fd = STDIN_FILENO;
    } else {
        in->fd = open(name, O_RDONLY | O_CLOEXEC);
        /* sort's words: "cannot read" for what its check of the inputs finds,
         * "open failed" for running out of descriptors as it opens them */
        if (in->fd < 0)
            return gm_fail(st, GM_EIO, "%s: %s: %s",
                           errno == EMFILE || errno == ENFILE ? "open failed" : "cannot read",
                           in->shown, strerror(errno));
    }
    struct stat sb;
    if (fstat(in->fd, &sb) != 0)
        return gm_fail(st, GM_EIO, "cannot read: %s: %s", in->shown, strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return gm_fail(st, GM_EIO, "read failed: %s: %s", in->shown, strerror(EISDIR));
    return GM_OK;
}

int gm_input_range(gm_input *in, const gm_config *cfg, int i, gm_status *st)
{
    if (!cfg->ranges)
        return GM_OK;
    off_t lo = (off_t)cfg->ranges[2 * i];
    if (lseek(in->fd, lo, SEEK_SET) != lo)
        return gm_fail(st, GM_EIO, "cannot read: %s: %s", in->shown, strerror(errno));
    in->end = cfg->ranges[2 * i + 1];
    return GM_OK;
}

void gm_input_close(gm_input *in)
{
    gm_input_stop_reading(in);
    struct gm_input_work *w = &in->work;
    if (w->chunks) {
        for (int c = 0; c < w->chunk_cap; c++)
            free(w->chunks[c].wide);
        free(w->chunks);
        w->chunks = NULL;
    }
    gm_buf_free(w->stage);
    w->stage = NULL;
    w->stage_cap = 0;
    if (in->fd > STDIN_FILENO)
        close(in->fd);
    in->fd = -1;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* Number of newlines in [p, end), sixteen bytes at a time with SSE2 (part of every
 * x86-64): each compare gives -1 per newline byte, subtracted into byte counters
 * that are summed (psadbw) before they can overflow. */
static int64_t count_newlines(const char *p, const char *end)
{
    const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
    int64_t n = 0;
    while (end - p >= 16) {
        __m128i counts = zero;
        for (int round = 0; round < 255 && end - p >= 16; round++, p += 16)
            counts = _mm_sub_epi8(counts, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), nl));
        __m128i sums = _mm_sad_epu8(counts, zero);
        n += _mm_cvtsi128_si64(sums) + _mm_extract_epi16(sums, 4);
    }
    for (; p < end; p++)
        n += *p == '\n';
    return n;
}
#else
/* Number of newlines in [p, end), eight bytes at a time: a byte of w ^ "\n\n..." is
 * zero exactly where w holds a newline; the exact zero-byte test sets its high
 * bit, and the bits are summed per byte lane (at most 255 rounds) before the lanes
 * are added up. */
static int64_t count_newlines(const char *p, const char *end)
{
    const uint64_t nl = 0x0A0A0A0A0A0A0A0AULL, low7 = 0x7F7F7F7F7F7F7F7FULL;
    int64_t n = 0;
    while (end - p >= 8) {
        uint64_t lanes = 0;
        for (int round = 0; round < 255 && end - p >= 8; round++, p += 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            uint64_t x = w ^ nl;
            uint64_t zero = ~(((x & low7) + low7) | x) & ~low7; /* 0x80 per zero byte */
            lanes += zero >> 7;
        }
        /* Pairs of byte lanes into 16-bit lanes (at most 510 each), then their sum. */
        uint64_t pairs = (lanes & 0x00FF00FF00FF00FFULL) + ((lanes >> 8) & 0x00FF00FF00FF00FFULL);
        n += (int64_t)((pairs * 0x0001000100010001ULL) >> 48);
    }
    for (; p < end; p++)
        n += *p == '\n';
    return n;
}
#endif

static void count_lines(void *ctx, int index)
{
    struct gm_chunk *ch = &((gm_input *)ctx)->work.chunks[index];
    ch->lines = count_newlines(ch->begin, ch->end) + (ch->end[-1] != '\n');
}

/* Cuts the block into chunks of whole lines and counts their lines. Returns the
 * block's line count, or -1 when out of memory. */
static int64_t split_block(gm_input *in, const gm_block *b, int nthreads)
{
    in->work.nchunks = 0;
    if (b->len == 0)
        return 0;
    /* About 1 MiB a chunk, at least 4 per thread when the block is large enough. */
    size_t target = b->len / ((size_t)nthreads * 4) + 1;
    if (target > (1u << 20))
        target = 1u << 20;
    if (target < (1u << 16))
        target = 1u << 16;
    size_t max_chunks = b->len / target + 1;
    if ((int)max_chunks > in->work.chunk_cap) {
        struct gm_chunk *c = realloc(in->work.chunks, max_chunks * sizeof *c);
        if (!c)
            return -1;
        memset(c + in->work.chunk_cap, 0, (max_chunks - (size_t)in->work.chunk_cap) * sizeof *c);
        in->work.chunks = c;
        in->work.chunk_cap = (int)max_chunks;
    }
    const char *p = b->text, *end = b->text + b->len;
    int c = 0;
    while (p < end) {
        const char *cut = (size_t)(end - p) > target ? p + target : end;
        if (cut < end) {
            const char *nl = memchr(cut, '\n', (size_t)(end - cut));
            cut = nl ? nl + 1 : end;
        }
        struct gm_chunk *ch = &in->work.chunks[c];
        int64_t *wide = ch->wide, wide_cap = ch->wide_cap;
        memset(ch, 0, sizeof *ch);
        ch->wide = wide; /* kept for reuse; "in use" is told by wide_used below */
        ch->wide_cap = wide_cap;
        ch->begin = p;
        ch->end = cut;
        c++;
        p = cut;
    }
    in->work.nchunks = c;
    gm_parallel_for(nthreads, in->work.nchunks, count_lines, in);
    int64_t lines = 0;
    for (c = 0; c < in->work.nchunks; c++) {
        in->work.chunks[c].line0 = lines;
        lines += in->work.chunks[c].lines;
    }
    return lines;
}

/* Makes the staging area hold lines int32 keys. Returns GM_OK or GM_ENOMEM. */
static int stage_room(gm_input *in, int64_t lines, gm_status *st)
{
    if (lines <= in->work.stage_cap)
        return GM_OK;
    int32_t *p = gm_buf_resize(in->work.stage, (size_t)lines * sizeof *p, "parsing", st);
    if (!p)
        return GM_ENOMEM;
    in->work.stage = p;
    in->work.stage_cap = lines;
    return GM_OK;
}

/* The chunks' outcomes in file order: the first problem (with the order across
 * chunks and from the block before), else the keys' places (key0), their count and
 * whether one is wide. Returns GM_OK or the problem's status. The last key moves
 * on only with a block taken whole: a block declined for the records path hands
 * them all its lines, to be checked after the block before's last key. */
static int check_chunks(gm_input *in, const gm_block *b, const gm_parse_opts *o,
                        int64_t *nkeys, int *wide, gm_status *st)
{
    *nkeys = 0;
    *wide = 0;
    int64_t prev = in->prev;
    int have_prev = in->have_prev;
    for (int c = 0; c < in->work.nchunks; c++) {
        struct gm_chunk *ch = &in->work.chunks[c];
        if (ch->alloc_failed)
            return gm_fail(st, GM_ENOMEM, "out of memory parsing %s", in->shown);
        if (o->ordered && have_prev && ch->n > 0) {
            int64_t x = prev ^ o->mask, y = ch->first ^ o->mask;
            if (y < x || (o->strict && y == x))
                return gm_parse_report(in, b, GM_PROB_DISORDER,
                                       in->line + ch->line0 + ch->first_line, ch->first_text, st);
        }
        if (ch->prob != GM_PROB_NONE)
            return gm_parse_report(in, b, ch->prob, in->line + ch->line0 + ch->prob_line,
                                   ch->prob_text, st);
        if (ch->n > 0) {
            prev = ch->last;
            have_prev = 1;
        }
        *wide |= ch->wide_used;
        ch->key0 = *nkeys;
        *nkeys += ch->n;
    }
    in->prev = prev;
    in->have_prev = have_prev;
    return GM_OK;
}

/* Gathers the block's nkeys keys (line-indexed at dest, or in the chunks' wide
 * buffers) without the gaps of blank lines onto the end of kb. direct: dest is
 * kb's own free tail. Returns GM_OK or GM_ENOMEM. */
static int gather(gm_input *in, gm_keybuf *kb, int32_t *dest, int direct, int wide,
                  int64_t lines, int64_t nkeys, gm_status *st)
{
    const struct gm_chunk *chunks = in->work.chunks;
    if (direct && !wide) { /* close the gaps, moving left chunk by chunk */
        for (int c = 0; c < in->work.nchunks; c++) {
            const struct gm_chunk *ch = &chunks[c];
            if (ch->key0 != ch->line0 && ch->n > 0)
                memmove(dest + ch->key0, dest + ch->line0, (size_t)ch->n * sizeof *dest);
        }
        kb->n += nkeys;
        return GM_OK;
    }
    if (direct) { /* a wide key: the int32 keys go to the staging area first */
        int rc = stage_room(in, lines, st);
        if (rc)
            return rc;
        memcpy(in->work.stage, dest, (size_t)lines * sizeof *dest);
    }
    int rc = gm_keybuf_reserve(kb, nkeys, wide ? GM_I64 : GM_I32, st);
    if (rc)
        return rc;
    for (int c = 0; c < in->work.nchunks; c++) {
        const struct gm_chunk *ch = &chunks[c];
        const int32_t *s = in->work.stage + ch->line0;
        if (kb->width == GM_I32) {
            memcpy((int32_t *)kb->data + kb->n + ch->key0, s, (size_t)ch->n * sizeof *s);
        } else {
            int64_t *d = (int64_t *)kb->data + kb->n + ch->key0;
            if (ch->wide_used)
                memcpy(d, ch->wide, (size_t)ch->n * sizeof *d);
            else
                for (int64_t t = 0; t < ch->n; t++)
                    d[t] = s[t];
        }
    }
    kb->n += nkeys;
    return GM_OK;
}

int gm_input_parse_block(gm_input *in, const gm_block *b, const gm_parse_opts *o,
                         gm_keybuf *kb, gm_status *st)
{
    in->eof = b->eof;
    int64_t lines = split_block(in, b, o->nthreads);
    if (lines < 0)
        return gm_fail(st, GM_ENOMEM, "out of memory parsing %s", in->shown);
    if (lines == 0)
        return GM_OK;
    /* An int32 key buffer takes the keys straight into its free tail (line-indexed,
     * closed up below); an int64 one through the staging area. */
    int32_t *dest = NULL;
    int direct = kb && (kb->width != GM_I64);
    if (direct) {
        int rc = gm_keybuf_reserve(kb, lines, GM_I32, st);
        if (rc)
            return rc;
        dest = (int32_t *)kb->data + kb->n;
    } else if (kb) {
        int rc = stage_room(in, lines, st);
        if (rc)
            return rc;
        dest = in->work.stage;
    }
    struct gm_parse_job job = { in, o, b->text, b->text + b->len, dest };
    gm_parallel_for(o->nthreads, in->work.nchunks, gm_parse_task(), &job);

    int64_t nkeys;
    int wide;
    int rc = check_chunks(in, b, o, &nkeys, &wide, st);
    if (rc)
        return rc;
    in->line += lines;
    return kb ? gather(in, kb, dest, direct, wide, lines, nkeys, st) : GM_OK;
}

int gm_input_read_keys(gm_input *in, const gm_parse_opts *o, gm_keybuf *kb, gm_status *st)
{
    gm_block b;
    int rc = gm_input_next(in, &b, st);
    return rc ? rc : gm_input_parse_block(in, &b, o, kb, st);
}

int64_t gm_input_chunk_first_line(const gm_input *in, int c)
{
    if (c < 0 || c >= in->work.nchunks)
        return -1;
    int64_t before = 0;
    for (int i = 0; i < in->work.nchunks; i++)
        before += in->work.chunks[i].lines;
    return in->line - before + in->work.chunks[c].line0 + 1;
}
