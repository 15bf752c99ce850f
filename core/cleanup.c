/*
 * cleanup.c - the registry of temporary files and the signal handlers that
 * remove them (see cleanup.h).
 *
 * The registry is a fixed table of path copies, changed only with the handled
 * signals blocked, so the handler always sees a consistent table and calls only
 * async-signal-safe functions (unlink, sigaction, raise).
 */
#define _POSIX_C_SOURCE 200809L
#include "cleanup.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_TEMPS = 4096 };

static char *temps[MAX_TEMPS];
static volatile sig_atomic_t ntemps;
static int installed;

static const int caught[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGALRM, SIGUSR1,
                              SIGUSR2, SIGXFSZ, SIGXCPU, SIGVTALRM, SIGPROF, SIGPOLL,
                              SIGPIPE };
#define NCAUGHT ((int)(sizeof caught / sizeof caught[0]))

static sigset_t caught_set(void)
{
    sigset_t s;
    sigemptyset(&s);
    for (int i = 0; i < NCAUGHT; i++)
        sigaddset(&s, caught[i]);
    return s;
}

static void on_signal(int sig)
{
    for (int i = 0; i < ntemps; i++)
        if (temps[i])
            unlink(temps[i]);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

int gm_cleanup_install(gm_status *st)
{
    (void)st;
    if (installed)
        return GM_OK;
    installed = 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_mask = caught_set();
    for (int i = 0; i < NCAUGHT; i++) {
        struct sigaction old;
        if (sigaction(caught[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue; /* ignored by whoever started us (nohup, a shell's trap ''): keep */
        sigaction(caught[i], &sa, NULL);
    }
    return GM_OK;
}

/* Runs with the caught signals blocked, so the handler never sees a half change. */
static sigset_t block(void)
{
    sigset_t s = caught_set(), old;
    pthread_sigmask(SIG_BLOCK, &s, &old);
    return old;
}

static void unblock(sigset_t old)
{
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int gm_temp_register(const char *path, gm_status *st)
{
    char *copy = strdup(path);
    if (!copy)
        return gm_fail(st, GM_ENOMEM, "out of memory");
    sigset_t old = block();
    int slot = -1;
    for (int i = 0; i < ntemps && slot < 0; i++)
        if (!temps[i])
            slot = i;
    if (slot < 0 && ntemps < MAX_TEMPS)
        slot = ntemps++;
    if (slot >= 0)
        temps[slot] = copy;
    unblock(old);
    if (slot < 0) {
        free(copy);
        return gm_fail(st, GM_ENOMEM, "too many temporary files");
    }
    return GM_OK;
}

static void drop(const char *path, int do_unlink)
{
    sigset_t old = block();
    if (do_unlink)
        unlink(path);
    for (int i = 0; i < ntemps; i++)
        if (temps[i] && strcmp(temps[i], path) == 0) {
            free(temps[i]);
            temps[i] = NULL;
            break;
        }
    unblock(old);
}

void gm_temp_remove(const char *path)
{
    drop(path, 1);
}

void gm_temp_forget(const char *path)
{
    drop(path, 0);
}

int gm_temp_create(const char *dir, const char *prefix, int *fd, char **path,
                   gm_status *st)
{
    if (!dir || !*dir)
        dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    size_t len = strlen(dir) + strlen(prefix) + 8;
    char *p = malloc(len);
    if (!p)
        return gm_fail(st, GM_ENOMEM, "out of memory");
    snprintf(p, len, "%s/%sXXXXXX", dir, prefix);
    sigset_t old = block(); /* created and registered as one step */
    int f = mkstemp(p);
    int err = errno;
    int rc = f < 0 ? GM_EIO : gm_temp_register(p, st);
    if (f >= 0 && rc != GM_OK) {
        unlink(p);
        close(f);
    }
    unblock(old);
    if (f < 0) {
        free(p);
        return gm_fail(st, GM_EIO, "cannot create a temporary file in %s: %s", dir,
                       strerror(err));
    }
    if (rc != GM_OK) {
        free(p);
        return rc;
    }
    *fd = f;
    *path = p;
    return GM_OK;
}
