/*
 * lib_cases.h - what the library suite's files share: pkg-config's answers about
 * the installed gpumerge.pc (lib_install.c).
 */
#ifndef GM_TEST_LIB_CASES_H
#define GM_TEST_LIB_CASES_H

/* pkg-config's answer to args about the installed gpumerge.pc, its first line.
 * malloc'd. */
char *pkg_config(const char *args);

#endif
