/*
 * cleanup.c - the registry of temporary files and the signal handlers that
 * remove them (see cleanup.h); the list of signals is coreutils' sort's.
 *
 * The handler may run on any thread, at any moment, also while another thread
 * changes the registry, so it takes no lock and calls only async-signal-safe
 * functions (unlink, nanosleep, sigaction, sigprocmask, raise). The registry is a table of
 * path pointers read and written atomically: a writer fills a slot or empties
 * it with one atomic store, under a mutex that only writers take. A removed path
 * is freed only when no handler has started; otherwise it is left to the ending
 * process, so a handler never reads freed memory (the counter is raised before
 * the handler reads a slot and read after the writer empties it, both sequentially
 * consistent, so one of the two sees the other).
 */
#define _GNU_SOURCE
#include "base/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"

enum { MAX_TEMPS = 4096 };

static char *temps[MAX_TEMPS]; /* each slot read and written with __atomic */
static int ntemps;             /* slots ever used (atomic) */
static int handling;           /* handlers that have started (atomic) */
static int changing;           /* threads between block() and unblock() (atomic) */
static int installed;          /* atomic */
static pthread_mutex_t writers = PTHREAD_MUTEX_INITIALIZER;

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

/* Removes every registered file, then ends the process by the same signal with
 * its default action, so the parent sees how we died (a shell prints nothing for
 * SIGPIPE, and 128 + the signal's number is the status). */
static void unlink_all(void)
{
    int n = __atomic_load_n(&ntemps, __ATOMIC_SEQ_CST);
    for (int i = 0; i < n; i++) {
        char *p = __atomic_load_n(&temps[i], __ATOMIC_SEQ_CST);
        if (p)
            unlink(p);
    }
}

static void on_signal(int sig)
{
    __atomic_add_fetch(&handling, 1, __ATOMIC_SEQ_CST);
    unlink_all();
    /* Another thread may be creating a file and registering it, its signals
     * blocked: it goes on meanwhile, so the handler waits for it (at most a
     * second) and removes what it registered. A thread that enters that step
     * from now on sees handling raised and creates nothing (refused()); one that
     * left it since the first pass registered before this second one. */
    struct timespec ms = { 0, 1000000 };
    for (int i = 0; i < 1000 && __atomic_load_n(&changing, __ATOMIC_SEQ_CST) > 0; i++)
        nanosleep(&ms, NULL);
    unlink_all();
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    sigprocmask(SIG_UNBLOCK, &s, NULL); /* this thread's mask: the signal is blocked here */
    raise(sig);
}

int gm_cleanup_install(gm_status *st)
{
    (void)st;
    if (__atomic_exchange_n(&installed, 1, __ATOMIC_SEQ_CST))
        return GM_OK;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_mask = caught_set(); /* one handler at a time on a thread */
    for (int i = 0; i < NCAUGHT; i++) {
        struct sigaction old;
        if (sigaction(caught[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue; /* ignored by whoever started us (nohup, a shell's trap ''): keep */
        sigaction(caught[i], &sa, NULL);
    }
    return GM_OK;
}

/* Blocks the caught signals on this thread, so that a file is never created
 * without being registered, nor removed but still registered; counted, so that
 * a handler on another thread waits for the section to end. */
static sigset_t block(void)
{
    sigset_t s = caught_set(), old;
    pthread_sigmask(SIG_BLOCK, &s, &old);
    __atomic_add_fetch(&changing, 1, __ATOMIC_SEQ_CST);
    return old;
}

/* Ends the section. Where a handler has started meanwhile, the process is ending
 * by its signal: this thread waits for that end instead of going on to report a
 * file it was refused, so that the status is the signal's, never an error's. */
static void unblock(sigset_t old)
{
    __atomic_sub_fetch(&changing, 1, __ATOMIC_SEQ_CST);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    while (__atomic_load_n(&handling, __ATOMIC_SEQ_CST) > 0)
        pause();
}

sigset_t gm_cleanup_block(void)
{
    return block();
}

void gm_cleanup_unblock(sigset_t old)
{
    unblock(old);
}

/* Whether a handler has started: a file made now could outlive the process, so
 * none is made. Called between block() and unblock(): the section's count is
 * raised before this reads the handlers' (both sequentially consistent), so
 * either this sees the handler or the handler waits for the section. */
static int refused(void)
{
    return __atomic_load_n(&handling, __ATOMIC_SEQ_CST) > 0;
}

int gm_temp_register(const char *path, gm_status *st)
{
    if (refused())
        return gm_fail(st, GM_EIO, "cannot create temporary file %s: the process is ending on "
                       "a signal", path);
    char *copy = strdup(path);
    if (!copy)
        return gm_fail(st, GM_ENOMEM, "out of memory");
    pthread_mutex_lock(&writers);
    int n = __atomic_load_n(&ntemps, __ATOMIC_SEQ_CST), slot = -1;
    for (int i = 0; i < n && slot < 0; i++)
        if (!__atomic_load_n(&temps[i], __ATOMIC_SEQ_CST))
            slot = i;
    if (slot < 0 && n < MAX_TEMPS)
        slot = n;
    if (slot >= 0) {
        __atomic_store_n(&temps[slot], copy, __ATOMIC_SEQ_CST);
        if (slot == n)
            __atomic_store_n(&ntemps, n + 1, __ATOMIC_SEQ_CST);
    }
    pthread_mutex_unlock(&writers);
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
        unlink(path); /* first: a signal now still finds it registered */
    char *gone = NULL;
    pthread_mutex_lock(&writers);
    int n = __atomic_load_n(&ntemps, __ATOMIC_SEQ_CST);
    for (int i = 0; i < n && !gone; i++) {
        char *p = __atomic_load_n(&temps[i], __ATOMIC_SEQ_CST);
        if (p && strcmp(p, path) == 0) {
            __atomic_store_n(&temps[i], NULL, __ATOMIC_SEQ_CST);
            gone = p;
        }
    }
    pthread_mutex_unlock(&writers);
    if (gone && __atomic_load_n(&handling, __ATOMIC_SEQ_CST) == 0)
        free(gone); /* else a handler may be reading it, and the process is ending */
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
    int f = refused() ? -1 : mkostemp(p, O_CLOEXEC);
    int err = f < 0 && refused() ? EINTR : errno;
    int rc = f < 0 ? GM_EIO : gm_temp_register(p, st);
    if (f >= 0 && rc != GM_OK) {
        unlink(p);
        close(f);
    }
    unblock(old);
    if (f < 0) {
        char shown[512];
        free(p);
        /* sort's words, the folder always quoted as sort quotes it */
        gm_quote(dir, shown, sizeof shown);
        int quoted = shown[0] == '\'' || shown[0] == '"';
        return gm_fail(st, GM_EIO, "cannot create temporary file in %s%s%s: %s",
                       quoted ? "" : "'", shown, quoted ? "" : "'", strerror(err));
    }
    if (rc != GM_OK) {
        free(p);
        return rc;
    }
    *fd = f;
    *path = p;
    return GM_OK;
}
