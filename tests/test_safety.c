/*
 * test_safety.c - gpumerge as a careful user and an attacker would drive it: what
 * the suite's files share (safety_cases.h), and check --device=gpu without a GPU. The
 * cases are in
 *   safety_links.c        -o through symbolic links (dangling ones too), through
 *                         open descriptors, onto an input; targets that cannot be
 *                         opened;
 *   safety_permissions.c  -o onto files the user may not write, with other owners
 *                         and hard links, in folders the user cannot write, onto a
 *                         mount point; an error at the last line of a run written
 *                         in place;
 *   safety_space.c        a nearly full file system, an output that fits nowhere
 *                         (the target left byte for byte as it was);
 *   safety_signals.c      the file size limit and every catchable signal (no
 *                         temporary file or spool may survive);
 *   safety_names.c        hostile file names in messages (compared with GNU sort's
 *                         quoting);
 *   safety_memory.c       any --parallel under a small address space, a line
 *                         longer than the memory budget.
 *
 * The permission cases run as root through an unprivileged user (setpriv
 * --reuid=nobody), and directly when the tests run unprivileged; the cases that
 * need root (other owners, a small tmpfs, a bind mount) are skipped visibly
 * without it. $GPUMERGE names the binary.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cuda/gpu.h"
#include "helpers.h"
#include "safety_cases.h"

/* ---------------------------------------------------------------- helpers */

char *fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *s;
    if (vasprintf(&s, f, ap) < 0)
        abort();
    va_end(ap);
    return s;
}

/* Runs "gpumerge ARGS" in dir through sh, with a prefix (an environment, a
 * setpriv) in front. */
static char *nobody_bin, *nobody_bin_dir; /* a copy of gpumerge nobody can run */

cmd_result gm_as(const char *dir, const char *prefix, const char *args)
{
    const char *bin =
        strncmp(prefix, "setpriv", 7) == 0 && nobody_bin ? nobody_bin : gpumerge_path();
    char *cmd = fmt("%s '%s' %s", prefix, bin, args);
    cmd_result r = run_sh(dir, cmd);
    free(cmd);
    return r;
}

cmd_result gm(const char *dir, const char *args)
{
    return gm_as(dir, "", args);
}

void expect(cmd_result *r, int status, const char *err)
{
    cr_assert_eq(r->status, status, "exit status %d, want %d; stderr: %s", r->status, status,
                 r->err);
    if (err)
        cr_assert_str_eq(r->err, err);
}

char *slurp(const char *dir, const char *name)
{
    char *p = path_in(dir, name);
    char *text = read_file(p, NULL);
    free(p);
    return text;
}

void put(const char *dir, const char *name, const char *text)
{
    char *p = path_in(dir, name);
    write_text(p, text);
    free(p);
}

struct stat stat_of(const char *dir, const char *name)
{
    char *p = path_in(dir, name);
    struct stat sb;
    cr_assert_eq(lstat(p, &sb), 0, "%s: %s", p, strerror(errno));
    free(p);
    return sb;
}

/* Names in dir, sorted and joined by spaces ("" when empty). */
char *listing(const char *dir)
{
    char *cmd = fmt("ls -A '%s' | tr '\\n' ' '", dir);
    cmd_result r = run_sh(NULL, cmd);
    free(cmd);
    free(r.err);
    return r.out;
}

void remove_tree(const char *dir)
{
    if (nobody_bin_dir) { /* and the copy of gpumerge made for nobody */
        char *bin_dir = nobody_bin_dir;
        nobody_bin_dir = NULL;
        remove_tree(bin_dir);
    }
    char *cmd = fmt("chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", dir, dir);
    cmd_result r = run_sh(NULL, cmd);
    cmd_free(&r);
    free(cmd);
}

int is_root(void)
{
    return geteuid() == 0;
}

/* The unprivileged user the permission cases run as, when we are root. */
uid_t nobody_uid;
gid_t nobody_gid;

/* The prefix that runs a command unprivileged: setpriv as nobody when we are
 * root, nothing when we are not. Skips the test when neither is possible. dir
 * (a fresh scratch folder) is made reachable and given to that user. */
const char *unprivileged(const char *dir)
{
    if (!is_root())
        return "";
    struct passwd *pw = getpwnam("nobody");
    if (!pw)
        cr_skip_test("no user 'nobody' to run the permission case as");
    struct group *gr = getgrnam("nogroup");
    nobody_uid = pw->pw_uid;
    nobody_gid = gr ? gr->gr_gid : pw->pw_gid;
    static char prefix[128];
    snprintf(prefix, sizeof prefix, "setpriv --reuid=%u --regid=%u --clear-groups",
             (unsigned)nobody_uid, (unsigned)nobody_gid);
    chmod(dir, 0755);
    if (chown(dir, nobody_uid, nobody_gid) != 0)
        cr_skip_test("cannot give a folder to nobody: %s", strerror(errno));
    /* The binary may sit where nobody cannot reach it (a clone under /root). */
    char *bin_dir = scratch_dir();
    chmod(bin_dir, 0755);
    char *bin = path_in(bin_dir, "gpumerge");
    char *copy = fmt("cp '%s' '%s' && chmod 755 '%s'", gpumerge_path(), bin, bin);
    cmd_result r = run_sh(NULL, copy);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cmd_free(&r);
    free(copy);
    nobody_bin = bin;
    nobody_bin_dir = bin_dir;
    char *probe = fmt("%s '%s' --version", prefix, bin);
    r = run_sh(dir, probe);
    free(probe);
    int ok = r.status == 0;
    cmd_free(&r);
    if (!ok)
        cr_skip_test("setpriv is missing, or nobody cannot run gpumerge");
    return prefix;
}

/* sort's message for the same arguments, with "sort:" made "gpumerge:". */
char *sort_says(const char *dir, const char *prefix, const char *args)
{
    char *cmd = fmt("%s env LC_ALL=C sort %s 2>&1 >/dev/null | sed 's/^sort:/gpumerge:/'",
                    prefix, args);
    cmd_result r = run_sh(dir, cmd);
    free(cmd);
    free(r.err);
    return r.out;
}

const char *const sorted3 = "1\n2\n3\n";

/* ---------------------------------------------------------------- errors */

Test(safety, check_with_device_gpu_and_no_gpu)
{
    gm_gpu_info info;
    gm_status st;
    if (gm_gpu_probe(&info, &st) == GM_OK)
        cr_skip_test("a GPU is present: the no-GPU error cannot be shown");
    char *dir = scratch_dir();
    put(dir, "f", "1\n2\n");
    /* The reason depends on the build (no device, or built without CUDA). */
    cmd_result r = gm(dir, "check --device=gpu f");
    expect(&r, 2, NULL);
    cr_assert(strncmp(r.err, "gpumerge: no usable CUDA device: ", 33) == 0, "%s", r.err);
    cr_assert_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "one line: %s", r.err);
    cmd_free(&r);
    remove_tree(dir);
}
