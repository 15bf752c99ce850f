/*
 * compat_cases.h - what the compatibility suite's files share: gpumerge and LC_ALL=C
 * sort run in a folder on the same arguments (standard input from /dev/null
 * unless the arguments redirect it), sort's standard error as gpumerge words it,
 * their results compared, and a command line parsed by gm_cli_parse. parse lives
 * in compat_parse.c, the others in test_compat.c.
 */
#ifndef GM_TEST_COMPAT_CASES_H
#define GM_TEST_COMPAT_CASES_H

#include "../cli/options.h"
#include "helpers.h"

/* Runs "gpumerge ARGS", or "LC_ALL=C sort ARGS", in dir. */
cmd_result gm(const char *dir, const char *args);
cmd_result sort_sh(const char *dir, const char *args);
/* sort's standard error as gpumerge words it: "sort:" and "Try 'sort --help'"
 * renamed. malloc'd. */
char *as_ours(const char *err);
/* The exit status, and standard output and error unless NULL; what names the
 * run in a failure. */
void assert_result(cmd_result *r, int status, const char *out, const char *err,
                   const char *what);
/* gpumerge ARGS and sort SORT_ARGS in dir: the same status, output and (after
 * renaming) error output. */
void same_as_sort(const char *dir, const char *args, const char *sort_args);
/* The same, where gpumerge's standard error begins with notice (its line about
 * its default order) and goes on as sort's. */
void same_as_sort_noting(const char *dir, const char *args, const char *sort_args,
                         const char *notice);
/* Parses a command line given as one string of words without quotes. */
int parse(const char *line, gm_cli *cli, gm_status *st);

#endif
