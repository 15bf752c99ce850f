/*
 * keys_cases.h - what the keys suite's files share (defined in test_keys.c):
 * lines as bytes, and whether the installed sort knows -h's units R and Q.
 */
#ifndef GM_TEST_KEYS_CASES_H
#define GM_TEST_KEYS_CASES_H

typedef const unsigned char *bytes;

/* Whether the installed sort knows -h's units R and Q (coreutils 9.2 and later):
 * cases with them are compared with an older sort only where it agrees. */
int sort_knows_rq(void);

#endif
