/*
 * parser_cases.h - what the parser suite's files share (defined in
 * test_parser.c): a text written to a file and read back through core/input's
 * parser, its keys gathered as int64 or its status and message.
 */
#ifndef GM_TEST_PARSER_CASES_H
#define GM_TEST_PARSER_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "../core/read/input.h"

/* What a parse found: its status, and the keys gathered as int64 (wide: the
 * parser's width was int64); path is the file's, and the messages name it. */
typedef struct {
    int rc;
    gm_status st;
    int64_t *keys; /* gathered as int64 */
    int64_t n;
    int wide;
    char *path;
} parsed;

/* Parses len bytes of text from a file, with nthreads threads, ordered (and
 * mask, strict) as gm_parse_opts takes them. */
parsed parse_with(const char *text, size_t len, int nthreads, int ordered, int64_t mask,
                  int strict);
void parsed_free(parsed *p);
/* The message after "FILE:" */
const char *after_name(const parsed *p);

#endif
