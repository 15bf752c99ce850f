/*
 * cleanup.h - temporary files that must not outlive the process: the -o file
 * being written and the external sort's runs. Each is registered when created and
 * removed on success, on error, and when a catchable signal ends the process (the
 * handler unlinks every registered file, then lets the signal take its course), as
 * coreutils' sort does with its temporary files. The handler is safe on any
 * thread, also while another thread registers or removes a file.
 */
#ifndef GM_CLEANUP_H
#define GM_CLEANUP_H

#include <signal.h>

#include "base/types.h"

/* Installs the handlers (once; later calls do nothing): HUP, INT, QUIT, TERM,
 * ALRM, USR1, USR2, XFSZ, XCPU, VTALRM, PROF, POLL, and PIPE when it is not
 * ignored. Returns GM_OK. */
int gm_cleanup_install(gm_status *st);

/* Creates a new, empty file in dir (NULL: $TMPDIR, else /tmp) named
 * PREFIXXXXXXX with mkostemp (close-on-exec), registers it, and returns its
 * descriptor in *fd and its malloc'd path in *path. Returns GM_OK, GM_EIO ("cannot create a temporary
 * file in DIR: REASON") or GM_ENOMEM. */
int gm_temp_create(const char *dir, const char *prefix, int *fd, char **path,
                   gm_status *st);

/* Registers an existing path for removal on a signal, between
 * gm_cleanup_block and gm_cleanup_unblock. Returns GM_OK, GM_ENOMEM, or GM_EIO
 * once a handler has started (the caller removes the file: the process is
 * ending). gm_temp_create likewise creates nothing then. */
int gm_temp_register(const char *path, gm_status *st);

/* Blocks the handled signals on the calling thread, for a step that creates a
 * file and registers it, which a signal must not split; returns the mask that
 * gm_cleanup_unblock restores. */
sigset_t gm_cleanup_block(void);
void gm_cleanup_unblock(sigset_t old);

/* Unlinks path and forgets it. */
void gm_temp_remove(const char *path);

/* Forgets path without unlinking it (it was renamed into place). */
void gm_temp_forget(const char *path);

#endif
