/*
 * handover.c - the integer path giving a run to the records path part-way.
 *
 * Outside --strict the integer path serves lines that are all canonical integers
 * (the common case, and its fastest). The first other line declines its block
 * (GM_ERECORDS); what the integer path has read so far is then handed over, so no
 * input is read twice and no byte is lost, a pipe's included:
 *   - sort: the keys parsed so far (in memory and in spilled runs) are canonical
 *     lines, so their text is recovered exactly by formatting them; they go first,
 *     as a temporary file, then the rest of the declining input (its unparsed bytes
 *     and its descriptor), then the inputs after it. Lines of equal keys among them
 *     are the same bytes, and all come before the rest in input order, so the
 *     stable records sort gives sort's choice under -s and -u too.
 *   - merge: the output written so far stays; each input goes on with the text of
 *     its buffered keys, then its unparsed bytes and its descriptor, and the
 *     records merge writes on into the same writer (-u knows the last line).
 *   - check: the declining input goes on from its last canonical line.
 */
#define _GNU_SOURCE
#include "stream/handover.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "records/records.h"
#include "base/util.h"

/* Appends the text of keys [0, n) of kb to *buf (length *len, room *cap). */
static int put_keys(const gm_keybuf *kb, int64_t n, char eol, char **buf, size_t *len,
                    size_t *cap, gm_status *st)
{
    if (n == 0)
        return GM_OK;
    size_t need = *len + (size_t)n * 21;
    if (need > *cap) {
        char *p = realloc(*buf, need);
        if (!p)
            return gm_fail(st, GM_ENOMEM, "out of memory handing the lines over");
        *buf = p;
        *cap = need;
    }
    char *p = *buf + *len;
    for (int64_t i = 0; i < n; i++) {
        p = gm_format_i64(p, gm_keybuf_get(kb, i));
        *p++ = eol;
    }
    *len = (size_t)(p - *buf);
    return GM_OK;
}

/* The text of kb's keys, then in's unparsed bytes (b's too). */
static int input_source(gm_input *in, const gm_block *b, const gm_keybuf *kb, char eol,
                        gm_rec_source *src, gm_status *st)
{
    char *rest = NULL, *head = NULL;
    size_t rest_len = 0, len = 0, cap = 0;
    int rc = gm_input_take_rest(in, b, &rest, &rest_len, st);
    if (!rc && kb && kb->n > 0)
        rc = put_keys(kb, kb->n, eol, &head, &len, &cap, st);
    if (!rc && head && rest_len) {
        if (len + rest_len > cap) {
            char *p = realloc(head, len + rest_len);
            if (!p)
                rc = gm_fail(st, GM_ENOMEM, "out of memory handing the lines over");
            else
                head = p;
        }
        if (!rc) {
            memcpy(head + len, rest, rest_len);
            len += rest_len;
        }
        free(rest);
    } else if (!rc && !head) {
        head = rest;
        len = rest_len;
    } else {
        free(rest);
    }
    if (rc) {
        free(head);
        return rc;
    }
    src->name = in->name;
    src->fd = in->fd;
    src->own_fd = in->fd > STDIN_FILENO;
    in->fd = -1; /* the records path reads on from it */
    src->head = head;
    src->head_len = len;
    src->line0 = in->line - (kb ? kb->n : 0);
    src->start = 0;
    src->end = in->end;
    return GM_OK;
}

/* Input i's range (gm_config's ranges), for a source read from its name. */
static void input_range(const gm_config *cfg, int i, gm_rec_source *src)
{
    if (cfg->ranges) {
        src->start = cfg->ranges[2 * i];
        src->end = cfg->ranges[2 * i + 1];
    }
}

/* Writes the text of kb's keys to fd (path, for messages), through *text. */
static int write_keys(int fd, const char *path, const gm_keybuf *kb, char eol, char **text,
                      size_t *cap, gm_status *st)
{
    size_t len = 0;
    int rc = put_keys(kb, kb->n, eol, text, &len, cap, st);
    if (!rc && len > 0 && gm_write_all(fd, *text, len) != 0)
        rc = gm_fail(st, GM_EIO, "write failed: %s", path);
    return rc;
}

/* The keys parsed so far, in memory and in the runs, as lines of a temporary
 * file, read from its start: the sort's first source. */
static int keys_source(const gm_config *cfg, const gm_keybuf *kb, gm_runfile *runs, int nruns,
                       char eol, gm_rec_source *src, char **path, gm_status *st)
{
    int fd = -1;
    int rc = gm_temp_create(cfg->tmpdir, "gpumerge-lines.", &fd, path, st);
    char *text = NULL;
    size_t cap = 0;
    if (!rc)
        rc = write_keys(fd, *path, kb, eol, &text, &cap, st);
    for (int r = 0; r < nruns && !rc; r++) {
        gm_keybuf part = { NULL, 0, 0, 0, GM_I32 };
        while (!rc && !runs[r].eof) {
            part.n = 0;
            rc = gm_run_read(&runs[r], &part, 1 << 20, st);
            if (!rc)
                rc = write_keys(fd, *path, &part, eol, &text, &cap, st);
        }
        gm_keybuf_free(&part);
    }
    free(text);
    if (!rc && lseek(fd, 0, SEEK_SET) != 0)
        rc = gm_fail(st, GM_EIO, "cannot read: %s", *path);
    if (rc) {
        if (fd >= 0)
            close(fd);
        return rc;
    }
    *src = (gm_rec_source){ *path, fd, 1, NULL, 0, 0, 0, -1 };
    return GM_OK;
}

static void free_sources(gm_rec_source *src, int n)
{
    for (int i = 0; i < n; i++) {
        free(src[i].head);
        if (src[i].own_fd)
            close(src[i].fd);
    }
    free(src);
}

int gm_handover_sort(const gm_config *cfg, gm_input *ins, const unsigned char *open,
                     char *const *names, int nnames, int at, const gm_block *b,
                     gm_keybuf *kb, gm_runfile *runs, int nruns, gm_writer *w, gm_status *st)
{
    char eol = cfg->zero_terminated ? '\0' : '\n';
    gm_rec_source *src = calloc((size_t)(nnames - at + 1), sizeof *src);
    if (!src)
        return gm_fail(st, GM_ENOMEM, "out of memory handing the lines over");
    int n = 0, rc = GM_OK;
    char *path = NULL;
    if (kb->n > 0 || nruns > 0) {
        rc = keys_source(cfg, kb, runs, nruns, eol, &src[n], &path, st);
        n += !rc;
    }
    if (!rc) {
        rc = input_source(&ins[at], b, NULL, eol, &src[n], st);
        if (!rc)
            input_range(cfg, at, &src[n]);
        n += !rc;
    }
    for (int i = at + 1; i < nnames && !rc; i++) {
        int have = open[i] && ins[i].fd >= 0;
        src[n] = (gm_rec_source){ names[i], have ? ins[i].fd : -1,
                                  have && ins[i].fd > STDIN_FILENO, NULL, 0, 0, 0, -1 };
        input_range(cfg, i, &src[n++]);
        if (have)
            ins[i].fd = -1;
    }
    if (!rc) {
        rc = gm_records_continue(GM_OP_SORT, cfg, src, n, w, NULL, 0, st);
        free(src);
    } else {
        free_sources(src, n);
    }
    if (path) {
        gm_temp_remove(path);
        free(path);
    }
    return rc;
}

int gm_handover_start(const gm_config *cfg, gm_op op, gm_input *ins, const unsigned char *open,
                      char *const *names, int nnames, gm_writer *w, gm_status *st)
{
    gm_rec_source *src = calloc((size_t)nnames + 1, sizeof *src);
    if (!src)
        return gm_fail(st, GM_ENOMEM, "out of memory handing the lines over");
    for (int i = 0; i < nnames; i++) { /* open descriptors go along: a pipe keeps its bytes */
        int have = open[i] && ins[i].fd >= 0;
        src[i] = (gm_rec_source){ names[i], have ? ins[i].fd : -1,
                                  have && ins[i].fd > STDIN_FILENO, NULL, 0, 0, 0, -1 };
        input_range(cfg, i, &src[i]);
        if (have)
            ins[i].fd = -1;
    }
    int rc = gm_records_continue(op, cfg, src, nnames, w, NULL, 0, st);
    free(src);
    return rc;
}

int gm_handover_merge(const gm_config *cfg, gm_input *const *ins, gm_keybuf *const *kbs,
                      int n, int at, const gm_block *b, gm_writer *w, gm_status *st)
{
    char eol = cfg->zero_terminated ? '\0' : '\n';
    gm_rec_source *src = calloc((size_t)n, sizeof *src);
    if (!src)
        return gm_fail(st, GM_ENOMEM, "out of memory handing the lines over");
    int rc = GM_OK, made = 0;
    for (int i = 0; i < n && !rc; i++) {
        rc = input_source(ins[i], i == at ? b : NULL, kbs[i], eol, &src[i], st);
        made += !rc;
    }
    char last[24];
    size_t last_len = 0;
    if (w->have_last)
        last_len = (size_t)(gm_format_i64(last, w->last) - last);
    if (rc) {
        free_sources(src, made);
        return rc;
    }
    rc = gm_records_continue(GM_OP_MERGE, cfg, src, n, w, w->have_last ? last : NULL,
                             last_len, st);
    free(src);
    return rc;
}

int gm_handover_check(const gm_config *cfg, gm_input *in, const gm_block *b, gm_status *st)
{
    char eol = cfg->zero_terminated ? '\0' : '\n';
    gm_keybuf prev = { NULL, 0, 0, 0, GM_I64 };
    int64_t key = in->prev;
    if (in->have_prev)
        prev = (gm_keybuf){ &key, 1, 1, 0, GM_I64 };
    gm_rec_source src;
    int rc = input_source(in, b, in->have_prev ? &prev : NULL, eol, &src, st);
    return rc ? rc : gm_records_continue(GM_OP_CHECK, cfg, &src, 1, NULL, NULL, 0, st);
}
