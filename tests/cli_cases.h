/*
 * cli_cases.h - what the CLI suite's files share: gpumerge run in a folder with the
 * suite's device (--device=gpu under GM_TEST_DEVICE=gpu), its exit status and
 * output checked, and whether the gpumerge under test can use a GPU here. The
 * functions live in test_cli.c.
 */
#ifndef GM_TEST_CLI_CASES_H
#define GM_TEST_CLI_CASES_H

#include "helpers.h"

/* Runs "gpumerge SUBCOMMAND [--device=gpu] REST" in dir. */
cmd_result gm(const char *dir, const char *subcommand, const char *rest);
/* The exit status, and standard output and error unless NULL. */
void assert_result(cmd_result *r, int status, const char *out, const char *err);
/* Whether the gpumerge under test can use a GPU here (asked of the program, as a
 * user would, rather than of CUDA inside this test's process). */
int gpu_usable(void);

#endif
