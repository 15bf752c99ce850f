/*
 * compress.h - --compress-program=PROG: the children that a run's temporary file
 * is written and read through, as coreutils' sort (9.1) runs them (pipe_fork,
 * maybe_create_temp, open_temp, reap): PROG with its standard input a pipe from
 * gpumerge and its standard output the file, PROG -d with its standard input the
 * file and its standard output a pipe to gpumerge. PROG is looked up in PATH. A
 * child that cannot be executed says so itself, as sort's does ("couldn't execute
 * compress program: errno N", "couldn't execute compress program (with -d):
 * errno N") and exits 2; every child is waited for, and one that does not exit
 * with status 0 is "'PROG' [-d] terminated abnormally".
 */
#ifndef GM_COMPRESS_H
#define GM_COMPRESS_H

#include <sys/types.h>

#include "base/types.h"

/* Sets the signals that a run with PROG needs (on) and restores them (off), from
 * one thread, before and after the work: SIGCHLD to its default action, so that
 * waitpid finds the children even where the caller ignored SIGCHLD (as sort
 * does), and SIGPIPE ignored, so that a write to a PROG that has exited fails
 * with EPIPE and PROG's failure is reported, not a silent end. The children get
 * SIGPIPE's disposition from before. Calls nest: the outermost pair counts. */
void gm_compress_signals(int on);

/* Starts PROG (decompress: PROG -d) on the file fd, which stays the caller's:
 * compressing, fd becomes its standard output and *pipe_fd is the write end of
 * its standard input; decompressing, fd becomes its standard input and *pipe_fd
 * is the read end of its standard output (both close-on-exec). *pid is the
 * child. Returns GM_OK; compressing, GM_OK with *pid 0 where no process can be
 * made (the file is then written as it is, as sort goes on); decompressing,
 * GM_EIO ("couldn't create process for 'PROG' -d: REASON", errno the reason). */
int gm_compress_start(const char *prog, int decompress, int fd, int *pipe_fd, pid_t *pid,
                      gm_status *st);

/* Waits for the child pid of PROG. Returns GM_OK where it exited with status 0,
 * else GM_EIO ("'PROG' [-d] terminated abnormally", or "waiting for 'PROG' [-d]:
 * REASON"). */
int gm_compress_wait(const char *prog, pid_t pid, gm_status *st);

#endif
