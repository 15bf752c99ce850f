/*
 * safety_signals.c - gpumerge stopped from outside: past the file size limit
 * (SIGXFSZ) and by every catchable signal while it writes, no temporary file,
 * new target or spool survives, and an existing target is left as it was; the
 * temporary file's name never holds the target's.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../core/base/cleanup.h"
#include "helpers.h"
#include "safety_cases.h"

Test(safety, file_size_limit_leaves_no_temporary, .timeout = 60)
{
    char *dir = scratch_dir();
    char *big = path_in(dir, "big");
    rng g;
    rng_seed(&g, 25);
    enum { N = 100000 };
    int64_t *k = malloc(N * sizeof *k);
    for (int i = 0; i < N; i++)
        k[i] = rng_range(&g, -1000000000, 1000000000);
    write_keys(big, k, N);
    /* ulimit -f counts 512-byte blocks here: 100 kB, well below the output. */
    cmd_result r = gm_as(dir, "ulimit -f 200;", "sort big -o new");
    cr_assert_eq(r.status, 128 + SIGXFSZ, "status %d; stderr: %s", r.status, r.err);
    cr_assert_str_eq(listing(dir), "big ", "neither the new file nor a temporary");
    cmd_free(&r);
    put(dir, "old", "old\n");
    r = gm_as(dir, "ulimit -f 200;", "sort big -o old");
    cr_assert_eq(r.status, 128 + SIGXFSZ, "status %d; stderr: %s", r.status, r.err);
    cr_assert_str_eq(slurp(dir, "old"), "old\n");
    cr_assert_str_eq(listing(dir), "big old ");
    cmd_free(&r);
    free(k);
    free(big);
    remove_tree(dir);
}

static const int signals[] = { SIGHUP, SIGINT, SIGPIPE, SIGQUIT, SIGTERM, SIGALRM, SIGUSR1,
                               SIGUSR2, SIGXFSZ, SIGXCPU, SIGVTALRM, SIGPROF, SIGPOLL };

/* The one temporary file in dir whose name starts with prefix, or NULL. */
static char *find_temporary(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    char *found = NULL;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            found = strdup(e->d_name);
    if (d)
        closedir(d);
    return found;
}

/* Starts gpumerge sort on a fifo we hold open (so it waits for the rest of its
 * input) with -o target, waits for its temporary file, sends sig, and returns
 * how it ended; *tmp gets the temporary file's name. With spool_dir (a target
 * written in place), -T names it and the file waited for is the spool there. */
static int signal_run(const char *dir, const char *target, int sig, const char *spool_dir,
                      char **tmp)
{
    char *fifo = path_in(dir, "in"), *out = path_in(dir, target);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) { /* as a shell would start it: default dispositions */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        for (int s = 1; s < 32; s++)
            signal(s, SIG_DFL);
        int null = open("/dev/null", O_RDWR);
        dup2(null, 1);
        dup2(null, 2);
        if (spool_dir)
            execl(gpumerge_path(), "gpumerge", "sort", "--device=cpu", "-T", spool_dir, fifo,
                  "-o", out, (char *)NULL);
        else
            execl(gpumerge_path(), "gpumerge", "sort", "--device=cpu", fifo, "-o", out,
                  (char *)NULL);
        _exit(127);
    }
    int w = open(fifo, O_WRONLY);
    cr_assert_geq(w, 0);
    cr_assert_eq(write(w, "2\n1\n", 4), 4);
    *tmp = NULL;
    for (int i = 0; i < 1000 && !*tmp; i++) {
        struct timespec ms = { 0, 10 * 1000 * 1000 };
        nanosleep(&ms, NULL);
        *tmp = spool_dir ? find_temporary(spool_dir, "gpumerge-out.")
                         : find_temporary(dir, ".gpumerge-");
    }
    kill(pid, sig);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    close(w);
    unlink(fifo);
    free(fifo);
    free(out);
    return status;
}

Test(safety, every_signal_leaves_no_temporary, .timeout = 120)
{
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        int sig = signals[i];
        char *dir = scratch_dir();
        char *tmp;
        /* A new target: created at once (as sort does), removed on the signal. */
        int status = signal_run(dir, "out", sig, NULL, &tmp);
        cr_assert_not_null(tmp, "signal %d: no temporary file appeared", sig);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == sig,
                  "signal %d: ended with status %#x", sig, status);
        cr_assert_str_eq(listing(dir), "", "signal %d: files left behind", sig);
        free(tmp);
        /* An existing target: untouched. */
        put(dir, "out", "old\n");
        status = signal_run(dir, "out", sig, NULL, &tmp);
        cr_assert_not_null(tmp);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == sig);
        cr_assert_str_eq(listing(dir), "out ", "signal %d: files left behind", sig);
        cr_assert_str_eq(slurp(dir, "out"), "old\n");
        free(tmp);
        /* Written in place (another hard link): the spool in -T's folder goes too. */
        char *out = path_in(dir, "out"), *link_to = path_in(dir, "link"), *t = path_in(dir, "t");
        cr_assert_eq(link(out, link_to), 0);
        cr_assert_eq(mkdir(t, 0755), 0);
        status = signal_run(dir, "out", sig, t, &tmp);
        cr_assert_not_null(tmp, "signal %d: no spool appeared", sig);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == sig);
        cr_assert_str_eq(listing(t), "", "signal %d: the spool is left", sig);
        cr_assert_str_eq(listing(dir), "link out t ");
        cr_assert_str_eq(slurp(dir, "out"), "old\n");
        free(tmp);
        free(out);
        free(link_to);
        free(t);
        remove_tree(dir);
    }
}

Test(safety, temporary_name_is_never_the_output)
{
    char *dir = scratch_dir();
    char *tmp;
    int status = signal_run(dir, "out.txt", SIGTERM, NULL, &tmp);
    cr_assert(WIFSIGNALED(status));
    cr_assert_not_null(tmp);
    cr_assert_eq(strlen(tmp), strlen(".gpumerge-XXXXXX"), "%s", tmp);
    cr_assert_null(strstr(tmp, "out"), "%s must not hold the target's name", tmp);
    free(tmp);
    remove_tree(dir);
}

/* Threads that create temporary files without pause while a signal ends the
 * process: a file created after the handler has started would outlive it, so
 * none may be made then, and every one made before is removed. */
struct creator {
    const char *dir;
    int started; /* atomic */
};

static void *create_forever(void *arg)
{
    struct creator *c = arg;
    __atomic_add_fetch(&c->started, 1, __ATOMIC_SEQ_CST);
    for (;;) {
        int fd;
        char *path;
        gm_status st;
        if (gm_temp_create(c->dir, "gpumerge-run.", &fd, &path, &st) == GM_OK) {
            close(fd);
            free(path); /* registered: the handler removes it */
        }
    }
    return NULL;
}

Test(safety, no_temporary_is_made_once_a_signal_is_handled, .timeout = 120)
{
    char *dir = scratch_dir();
    for (int round = 0; round < 40; round++) {
        pid_t pid = fork();
        cr_assert_neq(pid, -1);
        if (pid == 0) {
            gm_status st;
            gm_cleanup_install(&st);
            struct creator c = { dir, 0 };
            pthread_t t[4];
            for (int i = 0; i < 4; i++)
                pthread_create(&t[i], NULL, create_forever, &c);
            while (__atomic_load_n(&c.started, __ATOMIC_SEQ_CST) < 4)
                sched_yield();
            struct timespec wait = { 0, (round % 8 + 1) * 250 * 1000 };
            nanosleep(&wait, NULL);
            kill(getpid(), SIGTERM);
            for (;;)
                pause();
        }
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "status %#x", status);
        cr_assert_str_eq(listing(dir), "", "round %d: temporary files left behind", round);
    }
    remove_tree(dir);
}
