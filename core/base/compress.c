/*
 * compress.c - the children of --compress-program (see compress.h), after
 * coreutils' sort.c 9.1: pipe_fork (a close-on-exec pipe, fork retried on EAGAIN
 * with a back-off doubling from 0.25 s, 4 tries to compress and 9 to decompress),
 * the child's async_safe_die, reap's messages. The handled signals' handlers
 * must not run in a child before it executes PROG (they would remove the
 * parent's temporary files), so every signal is blocked across fork and the
 * child sets each handled one to its default action before unblocking them.
 */
#define _GNU_SOURCE
#include "base/compress.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"

enum { EXIT_TROUBLE = 2, TRIES_COMPRESS = 4, TRIES_DECOMPRESS = 9 };

static struct sigaction saved_pipe, saved_chld; /* the outermost gm_compress_signals(1)
                                                 * to its (0) */
static int depth;                               /* calls of (1) not yet ended by (0) */
static int pipe_ignored;                        /* SIGPIPE was ignored before: keep it
                                                 * so in the children */

void gm_compress_signals(int on)
{
    if (on ? depth++ > 0 : --depth > 0)
        return;
    if (on) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sigemptyset(&sa.sa_mask);
        sa.sa_handler = SIG_IGN;
        sigaction(SIGPIPE, &sa, &saved_pipe);
        pipe_ignored = saved_pipe.sa_handler == SIG_IGN;
        sa.sa_handler = SIG_DFL;
        sigaction(SIGCHLD, &sa, &saved_chld);
    } else {
        sigaction(SIGPIPE, &saved_pipe, NULL);
        sigaction(SIGCHLD, &saved_chld, NULL);
        pipe_ignored = 0;
    }
}

/* PROG as sort names it in its messages (gnulib's quoteaf: always quoted). */
static const char *quoted(const char *prog, char *buf, size_t size)
{
    char q[480];
    gm_quote(prog, q, sizeof q);
    if (strcmp(q, prog) == 0)
        snprintf(buf, size, "'%s'", q);
    else
        snprintf(buf, size, "%s", q);
    return buf;
}

/* The child's last words, with async-signal-safe calls only (sort's
 * async_safe_die): "WHAT: errno N" and status 2. */
static _Noreturn void child_die(const char *what, int err)
{
    char num[16], *p = num + sizeof num;
    unsigned v = (unsigned)err;
    do
        *--p = (char)('0' + v % 10);
    while ((v /= 10) > 0);
    ssize_t ignored = write(STDERR_FILENO, what, strlen(what));
    ignored = write(STDERR_FILENO, ": errno ", 8);
    ignored = write(STDERR_FILENO, p, (size_t)(num + sizeof num - p));
    ignored = write(STDERR_FILENO, "\n", 1);
    (void)ignored;
    _exit(EXIT_TROUBLE);
}

/* In the child, between fork and exec (async-signal-safe calls only): the
 * handlers reset, the signal mask restored, in and out made its standard input
 * and output, PROG [-d] executed. */
static _Noreturn void child_run(const char *prog, int decompress, int in, int out,
                                const sigset_t *mask)
{
    struct sigaction sa;
    for (int sig = 1; sig < NSIG; sig++)
        if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL &&
            sa.sa_handler != SIG_IGN) {
            sa.sa_handler = SIG_DFL;
            sa.sa_flags = 0;
            sigaction(sig, &sa, NULL);
        }
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = pipe_ignored ? SIG_IGN : SIG_DFL;
    sigaction(SIGPIPE, &sa, NULL);
    sigprocmask(SIG_SETMASK, mask, NULL);
    const char *what = decompress ? "couldn't execute compress program (with -d)"
                                  : "couldn't execute compress program";
    if (dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0)
        child_die(what, errno);
    char *argv[] = { (char *)prog, decompress ? "-d" : NULL, NULL };
    execvp(prog, argv);
    child_die(what, errno);
}

/* Forks (up to tries times while fork says EAGAIN) a child that runs PROG on
 * in and out. Returns the child's pid, or -1 with errno set. */
static pid_t spawn(const char *prog, int decompress, int in, int out, int tries)
{
    struct timespec wait = { 0, 250000000 };
    sigset_t all, old;
    sigfillset(&all);
    pid_t pid = -1;
    int err = EAGAIN;
    while (tries-- > 0 && err == EAGAIN) {
        pthread_sigmask(SIG_SETMASK, &all, &old);
        pid = fork();
        if (pid == 0)
            child_run(prog, decompress, in, out, &old);
        err = errno;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (pid > 0)
            return pid;
        if (err == EAGAIN && tries > 0) {
            nanosleep(&wait, NULL);
            wait.tv_sec *= 2;
            wait.tv_nsec *= 2;
            if (wait.tv_nsec >= 1000000000) {
                wait.tv_sec += 1;
                wait.tv_nsec -= 1000000000;
            }
        }
    }
    errno = err;
    return -1;
}

int gm_compress_start(const char *prog, int decompress, int fd, int *pipe_fd, pid_t *pid,
                      gm_status *st)
{
    *pid = 0;
    *pipe_fd = -1;
    int p[2], err;
    if (pipe2(p, O_CLOEXEC) == 0) {
        pid_t child = decompress ? spawn(prog, 1, fd, p[1], TRIES_DECOMPRESS)
                                 : spawn(prog, 0, p[0], fd, TRIES_COMPRESS);
        err = errno;
        if (child > 0) {
            close(decompress ? p[1] : p[0]);
            *pipe_fd = decompress ? p[0] : p[1];
            *pid = child;
            return GM_OK;
        }
        close(p[0]);
        close(p[1]);
    } else {
        err = errno;
    }
    if (!decompress)
        return GM_OK; /* written as it is */
    char q[512];
    gm_fail(st, GM_EIO, "couldn't create process for %s -d: %s", quoted(prog, q, sizeof q),
            strerror(err));
    errno = err;
    return GM_EIO;
}

int gm_compress_wait(const char *prog, pid_t pid, gm_status *st)
{
    int status = 0;
    pid_t got;
    do
        got = waitpid(pid, &status, 0);
    while (got < 0 && errno == EINTR);
    int err = errno;
    char q[512];
    if (got < 0)
        return gm_fail(st, GM_EIO, "waiting for %s [-d]: %s", quoted(prog, q, sizeof q),
                       strerror(err));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return gm_fail(st, GM_EIO, "%s [-d] terminated abnormally", quoted(prog, q, sizeof q));
    return GM_OK;
}
