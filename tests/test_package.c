/*
 * test_package.c - gpumerge as a package: --version in coreutils' shape with the
 * version of the VERSION file, the Makefile's GNU conventions (the required flags
 * kept whatever CFLAGS says, CPPFLAGS, LDFLAGS and LDLIBS on every compile and
 * link, read from `make -n`; the build message about nvcc), make install with
 * symbols, install-strip without (the library too: archive, shared library and its
 * links, header, gpumerge.pc, man page), uninstall, the installed man page's version,
 * and the bash completion run on sample command lines.
 *
 * $GPUMERGE names the binary, $TESTDATA the golden cases (its parent is the
 * source tree, where make runs).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

/* make in the source tree without the test run's own make variables. */
#define MAKE "env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make"

/* The source tree: the parent of $TESTDATA. malloc'd. */
static char *source_root(void)
{
    const char *t = getenv("TESTDATA");
    char *root = realpath(t && *t ? t : "testdata", NULL);
    cr_assert_not_null(root, "cannot resolve $TESTDATA");
    *strrchr(root, '/') = '\0';
    return root;
}

/* The one line of VERSION, without its newline. malloc'd. */
static char *version(const char *root)
{
    char *p = path_in(root, "VERSION");
    char *v = read_file(p, NULL);
    cr_assert_not_null(v, "no VERSION file");
    v[strcspn(v, "\n")] = '\0';
    cr_assert(v[0] != '\0' && strchr(v, ' ') == NULL, "VERSION: '%s'", v);
    free(p);
    return v;
}

static cmd_result run(const char *fmt, const char *a, const char *b, const char *c)
{
    char *cmd;
    if (asprintf(&cmd, fmt, a, b, c) < 0)
        abort();
    cmd_result r = run_sh(NULL, cmd);
    free(cmd);
    return r;
}

/* ---------------------------------------------------------------- --version */

Test(package, version_in_coreutils_shape)
{
    char *root = source_root(), *v = version(root);
    cmd_result r = run("'%s' --version%s%s", gpumerge_path(), "", "");
    cr_assert_eq(r.status, 0);
    cr_assert_str_eq(r.err, "");
    char *lines[8] = { 0 };
    int n = 0;
    for (char *line = strtok(r.out, "\n"); line && n < 8; line = strtok(NULL, "\n"))
        lines[n++] = line;
    cr_assert_eq(n, 7, "--version has %d lines", n);
    char first[128];
    snprintf(first, sizeof first, "gpumerge %s", v);
    cr_expect_str_eq(lines[0], first, "the name and VERSION's version");
    cr_expect(strcmp(lines[1], "engine: CPU only (built without nvcc)") == 0 ||
                  (strncmp(lines[1], "engine: CUDA ", 13) == 0 && strstr(lines[1], "sm_")),
              "%s", lines[1]);
    /* the device, or why there is none (test_cli checks the words) */
    cr_expect(strncmp(lines[2], "device: ", 8) == 0, "%s", lines[2]);
    cr_expect(strncmp(lines[3], "Copyright (C) 20", 16) == 0, "%s", lines[3]);
    cr_expect_str_eq(lines[4], "License MIT: <https://opensource.org/licenses/MIT>.");
    cr_expect_str_eq(lines[5], "This is free software: you are free to change and redistribute it.");
    cr_expect_str_eq(lines[6], "There is NO WARRANTY, to the extent permitted by law.");
    cmd_free(&r);
    /* the licence the text names is the one shipped */
    char *lic = path_in(root, "LICENSE");
    char *text = read_file(lic, NULL);
    cr_assert_not_null(text, "no LICENSE");
    cr_expect(strncmp(text, "MIT License\n", 12) == 0, "LICENSE is not MIT's");
    free(text), free(lic), free(v), free(root);
}

Test(package, help_names_everything)
{
    cmd_result r = run("'%s' --help%s%s", gpumerge_path(), "", "");
    cr_assert_eq(r.status, 0);
    static const char *const mentioned[] = { "--files0-from=F", "-C, --check=quiet", "--parallel=N",
                                             "--batch-size=NMERGE", "-S, --buffer-size=SIZE",
                                             "-T, --temporary-directory=DIR", "-z, --zero-terminated",
                                             "--progress", "Refused (exit 2)", "check each input",
                                             "help    " };
    for (size_t i = 0; i < sizeof mentioned / sizeof mentioned[0]; i++)
        cr_expect(strstr(r.out, mentioned[i]) != NULL, "--help lacks %s", mentioned[i]);
    cmd_free(&r);
}

/* ---------------------------------------------------------------- the build */

/* The lines of `make -n -B` for targets built into a scratch folder, with
 * CFLAGS, CPPFLAGS, LDFLAGS and LDLIBS given. malloc'd text. */
static char *dry_run(const char *root, const char *build, const char *vars)
{
    char *cmd;
    if (asprintf(&cmd,
                 "cd '%s' && " MAKE " -n -B BUILD='%s' PROG='%s/gpumerge' CC=cc %s "
                 "CFLAGS='-O3 -DGM_USER_CFLAGS' CPPFLAGS='-DGM_USER_CPP -I/gm/include' "
                 "LDFLAGS='-Wl,-z,now -L/gm/lib' LDLIBS=-lrt "
                 "'%s/gpumerge' '%s/tests/test_cli' '%s/tests/gpumerge_forced' "
                 "'%s/fuzz/fuzz_parse' '%s/bench/gen' '%s/bench/iofloor'",
                 root, build, build, vars, build, build, build, build, build, build) < 0)
        abort();
    cmd_result r = run_sh(NULL, cmd);
    cr_assert_eq(r.status, 0, "make -n: %s", r.err);
    free(cmd);
    free(r.err);
    return r.out;
}

static int has(const char *line, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(line, word); p; p = strstr(p + 1, word))
        if ((p == line || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

Test(package, user_flags_reach_every_compile_and_link, .timeout = 60)
{
    char *root = source_root(), *dir = scratch_dir(), *v = version(root);
    char *out = dry_run(root, dir, "NVCC=");
    char define[128];
    snprintf(define, sizeof define, "-DGM_VERSION='\"%s\"'", v);
    static const char *const always[] = { "-std=c11", "-Wall", "-Wextra", "-pthread", "-MMD",
                                          "-MP", "-O3", "-DGM_USER_CFLAGS" };
    static const char *const compiled[] = { "-DGM_USER_CPP", "-I/gm/include" };
    static const char *const linked[] = { "-Wl,-z,now", "-L/gm/lib", "-lrt", "-lm" };
    int compiles = 0, links = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "cc ", 3) != 0)
            continue;
        for (size_t i = 0; i < sizeof always / sizeof always[0]; i++)
            cr_expect(has(line, always[i]), "no %s in: %s", always[i], line);
        cr_expect(!has(line, "-O2"), "the default CFLAGS in: %s", line);
        if (has(line, "-c") || has(line, "bench/gen.c") || has(line, "bench/iofloor.c")) {
            compiles++;
            for (size_t i = 0; i < sizeof compiled / sizeof compiled[0]; i++)
                cr_expect(has(line, compiled[i]), "no %s in: %s", compiled[i], line);
            cr_expect(has(line, define), "no %s in: %s", define, line);
        }
        if (!has(line, "-c")) {
            links++;
            for (size_t i = 0; i < sizeof linked / sizeof linked[0]; i++)
                cr_expect(has(line, linked[i]), "no %s in: %s", linked[i], line);
        }
    }
    cr_expect_geq(compiles, 30, "%d compiles", compiles);
    cr_expect_eq(links, 6, "%d links", links);
    free(out);

    /* nvcc gets CPPFLAGS' -D and -I itself and the build's flags beside NVFLAGS */
    out = dry_run(root, dir, "NVCC=/bin/echo NVFLAGS=-DGM_USER_NV");
    int nv = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "/bin/echo ", 10) != 0 || !has(line, "-c"))
            continue;
        nv++;
        static const char *const nvwords[] = { "-DGM_USER_CPP", "-I/gm/include", "-DGM_USER_NV",
                                               "-std=c++17", "-MMD" };
        for (size_t i = 0; i < sizeof nvwords / sizeof nvwords[0]; i++)
            cr_expect(has(line, nvwords[i]), "no %s in: %s", nvwords[i], line);
    }
    cr_expect_geq(nv, 5, "%d nvcc compiles", nv);
    free(out);
    free(v), free(dir), free(root);
}

Test(package, build_message_says_what_became_of_nvcc, .timeout = 60)
{
    char *root = source_root(), *dir = scratch_dir();
    cmd_result found = run_sh(NULL, "command -v nvcc || ls /usr/local/cuda/bin/nvcc");
    char *out = dry_run(root, dir, "NVCC=");
    const char *msg = strstr(out, "built ");
    cr_assert_not_null(msg, "no build message: %s", out);
    if (found.status == 0) {
        found.out[strcspn(found.out, "\n")] = '\0';
        char want[512];
        snprintf(want, sizeof want, "CPU-only (NVCC is empty: %s not used;", found.out);
        cr_expect(strstr(msg, want) != NULL, "nvcc at %s: %s", found.out, msg);
    } else {
        cr_expect(strstr(msg, "CPU-only (no nvcc found;") != NULL, "%s", msg);
    }
    free(out);
    cmd_free(&found);
    free(dir), free(root);
}

/* ---------------------------------------------------------------- install */

static int has_symbols(const char *bin)
{
    cmd_result r = run("readelf -S '%s' | grep -c '\\.symtab'%s%s", bin, "", "");
    int n = atoi(r.out);
    cmd_free(&r);
    return n > 0;
}

/* make TARGET into DESTDIR dest; the binary under test installed as it is (PROG
 * and -o), the man page generated in a scratch BUILD. */
static void make_install(const char *root, const char *target, const char *dest,
                         const char *build)
{
    char *cmd;
    if (asprintf(&cmd, MAKE " -s -C '%s' NVCC= BUILD='%s' PROG='%s' -o '%s' %s DESTDIR='%s' "
                       "PREFIX=/usr",
                 root, build, gpumerge_path(), gpumerge_path(), target, dest) < 0)
        abort();
    cmd_result r = run_sh(NULL, cmd);
    cr_assert_eq(r.status, 0, "make %s: %s%s", target, r.out, r.err);
    cmd_free(&r);
    free(cmd);
}

Test(package, install_strip_and_uninstall, .timeout = 300)
{
    if (system("command -v make >/dev/null && command -v readelf >/dev/null") != 0)
        cr_skip_test("no make or readelf here");
    if (!has_symbols(gpumerge_path()))
        cr_skip_test("the binary under test has no symbols to keep");
    char *root = source_root(), *dest = scratch_dir(), *build = scratch_dir(), *v = version(root);
    char so[64];
    snprintf(so, sizeof so, "usr/lib/libgpumerge.so.%s", v);
    const char *const files[] = { "usr/bin/gpumerge", "usr/share/man/man1/gpumerge.1",
                                  "usr/share/bash-completion/completions/gpumerge",
                                  "usr/lib/libgpumerge.a", so, "usr/lib/libgpumerge.so.1",
                                  "usr/lib/libgpumerge.so", "usr/include/gpumerge.h",
                                  "usr/lib/pkgconfig/gpumerge.pc",
                                  "usr/share/man/man3/gpumerge.3",
                                  "usr/share/man/man3/gm_sort.3", "usr/bin/gpusort",
                                  "usr/share/man/man1/gpusort.1" };
    size_t nfiles = sizeof files / sizeof files[0];
    char *bin = path_in(dest, files[0]);
    static const char *const targets[] = { "install", "install-strip" };
    for (int t = 0; t < 2; t++) {
        make_install(root, targets[t], dest, build);
        for (size_t i = 0; i < nfiles; i++) {
            char *f = path_in(dest, files[i]);
            cr_expect_eq(access(f, R_OK), 0, "make %s did not install %s", targets[t], files[i]);
            free(f);
        }
        cr_expect_eq(has_symbols(bin), t == 0, "make %s: symbols %s", targets[t],
                     t == 0 ? "stripped" : "kept");
        cmd_result r = run("'%s' --version < /dev/null%s%s", bin, "", "");
        cr_expect_eq(r.status, 0, "the installed binary does not run: %s", r.err);
        cmd_free(&r);
    }
    /* the installed man page carries VERSION's version */
    char *man = path_in(dest, files[1]);
    cmd_result r = run("sed -n '/^\\.TH /p' '%s'%s%s", man, "", "");
    char want[160];
    snprintf(want, sizeof want, ".TH GPUMERGE 1 ");
    cr_expect(strncmp(r.out, want, strlen(want)) == 0, "%s", r.out);
    snprintf(want, sizeof want, " \"gpumerge %s\" ", v);
    cr_expect(strstr(r.out, want) != NULL, "the man page's .TH lacks %s: %s", want, r.out);
    cmd_free(&r);
    /* the library's pkg-config file names the install's paths */
    char *pc = path_in(dest, files[8]);
    r = run("export PKG_CONFIG_SYSROOT_DIR= PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=\"$(dirname '%s')\"; "
            "for v in prefix libdir includedir; do pkg-config --variable=$v gpumerge; done%s%s",
            pc, "", "");
    cr_expect_str_eq(r.out, "/usr\n/usr/lib\n/usr/include\n", "%s: %s", pc, r.err);
    cmd_free(&r);
    free(pc);
    r = run(MAKE " -s -C '%s' NVCC= uninstall DESTDIR='%s' PREFIX=/usr && find '%s' ! -type d | wc -l",
            root, dest, dest);
    cr_expect_eq(r.status, 0, "make uninstall: %s", r.err);
    cr_expect_str_eq(r.out, "0\n", "make uninstall left files behind");
    cmd_free(&r);
    r = run("rm -rf '%s' '%s'%s", dest, build, "");
    cmd_free(&r);
    free(man), free(bin), free(v), free(build), free(dest), free(root);
}

/* ---------------------------------------------------------------- completion */

/* Runs the completion function on the words given; returns its replies, one a line. */
static char *complete(const char *root, const char *dir, const char *words)
{
    char *cmd;
    if (asprintf(&cmd,
                 "bash -c 'source \"%s/completion/gpumerge.bash\" || exit 3; "
                 "COMP_WORDS=(%s); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _gpumerge; "
                 "printf \"%%s\\n\" \"${COMPREPLY[@]}\" | LC_ALL=C sort'",
                 root, words) < 0)
        abort();
    cmd_result r = run_sh(dir, cmd);
    cr_assert_eq(r.status, 0, "completion of %s: %s", words, r.err);
    free(cmd);
    free(r.err);
    return r.out;
}

Test(package, bash_completion)
{
    if (system("command -v bash >/dev/null") != 0)
        cr_skip_test("no bash here");
    char *root = source_root(), *dir = scratch_dir();
    char *p = path_in(dir, "numbers.txt");
    write_text(p, "1\n");
    char *q = path_in(dir, "nested");
    mkdir(q, 0755);
#define FIRST "check\nhelp\nmerge\nnested\nnumbers.txt\nsort\n"
    static const struct {
        const char *words, *want;
    } cases[] = {
        { "gpumerge \"\"", FIRST },
        { "gpumerge me", "merge\n" },
        { "gpumerge sort nu", "numbers.txt\n" },
        { "gpumerge sort \"\"", "nested\nnumbers.txt\n" },
        { "gpumerge --dev", "--device=\n" },
        { "gpumerge --device \"\"", "auto\ncpu\ngpu\n" },
        { "gpumerge --device = g", "gpu\n" },
        { "gpumerge --device=c", "--device=cpu\n" },
        { "gpumerge --kernel = \"\"", "auto\nbasic\ncircular\ntiled\n" },
        { "gpumerge --check = q", "quiet\n" },
        { "gpumerge --files0", "--files0-from=\n" },
        { "gpumerge --comp", "--compress-program=\n" },
        { "gpumerge --compress-program gzip \"\"", FIRST },
        { "gpumerge -T \"\"", "nested\n" },
        { "gpumerge -o n", "nested\nnumbers.txt\n" },
        { "gpumerge -o out \"\"", FIRST },
        { "gpumerge --pa", "--parallel=\n" },
        { "gpumerge --zero", "--zero-terminated\n" },
        /* a subcommand after an option's value, however it is split */
        { "gpumerge --device = gpu \"\"", FIRST },
        { "gpumerge --device=gpu \"\"", FIRST },
        { "gpumerge --device gpu \"\"", FIRST },
        { "gpumerge --gp", "--gpu=\n" },
        { "gpumerge --gpu 1 \"\"", FIRST },
        { "gpumerge --gpu = 1 \"\"", FIRST },
        { "gpumerge --gpu \"\"", "\n" },
        { "gpumerge --check = quiet \"\"", FIRST },
        { "gpumerge -k 2,2 \"\"", FIRST },
        { "gpumerge -nk 2 \"\"", FIRST },
        { "gpumerge -k2 -t , \"\"", FIRST },
        { "gpumerge --key = 2 \"\"", FIRST },
        { "gpumerge nu \"\"", "nested\nnumbers.txt\n" },
        { "gpumerge -- \"\"", "nested\nnumbers.txt\n" },
        /* sort's orders and keys, gpumerge's --strict */
        { "gpumerge --st", "--stable\n--strict\n" },
        { "gpumerge --ke", "--kernel=\n--key=\n" },
        { "gpumerge --fie", "--field-separator=\n" },
        { "gpumerge --gen", "--general-numeric-sort\n" },
        { "gpumerge --hu", "--human-numeric-sort\n" },
        { "gpumerge --sort=", "--sort=general-numeric\n--sort=human-numeric\n--sort=numeric\n" },
        { "gpumerge --sort = h", "human-numeric\n" },
        { "gpumerge -k \"\"", "\n" }, /* no reply: printf's one empty line */
        { "gpumerge -t \"\"", "\n" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = complete(root, dir, cases[i].words);
        cr_expect_str_eq(got, cases[i].want, "completing %s", cases[i].words);
        free(got);
    }
    /* every short option the parser takes (sort's refused ones aside) */
    char *replies = complete(root, dir, "gpumerge -"), *got;
    if (asprintf(&got, "\n%s", replies) < 0)
        abort();
    free(replies);
    static const char *const shorts[] = { "-b", "-c", "-C", "-f", "-g", "-h", "-k", "-m", "-n",
                                          "-o", "-r", "-s", "-S", "-t", "-T", "-u", "-v", "-z" };
    for (size_t i = 0; i < sizeof shorts / sizeof shorts[0]; i++) {
        char line[8];
        snprintf(line, sizeof line, "\n%s\n", shorts[i]);
        cr_expect(strstr(got, line) != NULL, "completing - lacks %s", shorts[i]);
    }
    free(got);
    free(q), free(p), free(root), free(dir);
}
