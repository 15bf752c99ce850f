/*
 * safety_cases.h - what the safety suite's files share: gpumerge run in a scratch folder
 * (as this user, or unprivileged through setpriv), its exit status and message
 * checked, files put, read, stat'ed and listed there, and GNU sort's message for
 * the same arguments. The functions live in test_safety.c.
 */
#ifndef GM_TEST_SAFETY_CASES_H
#define GM_TEST_SAFETY_CASES_H

#include <sys/stat.h>
#include <sys/types.h>

#include "helpers.h"

/* A formatted string, malloc'd. */
char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
/* Runs "gpumerge ARGS" in dir through sh, with a prefix (an environment, a
 * setpriv) in front; gm: with none. */
cmd_result gm_as(const char *dir, const char *prefix, const char *args);
cmd_result gm(const char *dir, const char *args);
/* The exit status, and the standard error unless err is NULL. */
void expect(cmd_result *r, int status, const char *err);
/* dir/name's contents (malloc'd, NULL when absent), written as text, lstat'ed. */
char *slurp(const char *dir, const char *name);
void put(const char *dir, const char *name, const char *text);
struct stat stat_of(const char *dir, const char *name);
/* Names in dir, sorted and joined by spaces ("" when empty). */
char *listing(const char *dir);
/* Removes dir whatever its modes (and the copy of gpumerge made for nobody). */
void remove_tree(const char *dir);
int is_root(void);

/* The unprivileged user the permission cases run as, when we are root. */
extern uid_t nobody_uid;
extern gid_t nobody_gid;
/* The prefix that runs a command unprivileged: setpriv as nobody when we are
 * root, nothing when we are not. Skips the test when neither is possible. dir
 * (a fresh scratch folder) is made reachable and given to that user. */
const char *unprivileged(const char *dir);
/* sort's message for the same arguments, with "sort:" made "gpumerge:". */
char *sort_says(const char *dir, const char *prefix, const char *args);

/* "1\n2\n3\n": what the cases' three-line inputs sort to. */
extern const char *const sorted3;

#endif
