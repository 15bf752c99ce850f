/*
 * lib_install.c - the library suite's install cases: the files make install puts
 * in the scratch prefix (names, soname, exports, the manual), gpumerge.pc's
 * answers, the library the suite's binary maps (the shared one or none), the
 * header alone in C and C++, and the README's example program built with the
 * installed flags and run.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <gpumerge.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "lib_cases.h"

#ifndef GM_TEST_LIB_ROOT
#error "the Makefile passes the library's install prefix as GM_TEST_LIB_ROOT"
#endif
#ifndef GM_TEST_CC /* the build's compiler and sanitizer flags */
#define GM_TEST_CC "cc"
#endif

/* pkg-config's answer to args about the installed gpumerge.pc, its first line.
 * malloc'd. */
char *pkg_config(const char *args)
{
    char *cmd;
    if (asprintf(&cmd, "PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config %s gpumerge",
                 GM_TEST_LIB_ROOT, args) < 0)
        abort();
    cmd_result r = run_sh(NULL, cmd);
    cr_assert_eq(r.status, 0, "pkg-config %s: %s", args, r.err);
    free(cmd), free(r.err);
    size_t len = strcspn(r.out, "\n");
    while (len > 0 && r.out[len - 1] == ' ') /* pkg-config ends with a blank */
        len--;
    r.out[len] = '\0';
    return r.out;
}

/* The one line of the source tree's VERSION ($TESTDATA's parent). malloc'd. */
static char *source_version(void)
{
    const char *t = getenv("TESTDATA");
    char *p;
    if (asprintf(&p, "%s/../VERSION", t && *t ? t : "testdata") < 0)
        abort();
    char *v = read_file(p, NULL);
    cr_assert_not_null(v, "cannot read %s", p);
    v[strcspn(v, "\n")] = '\0';
    free(p);
    return v;
}

/* Whether this process maps the shared library. */
static int maps_shared_library(void)
{
    char *maps = read_file("/proc/self/maps", NULL);
    cr_assert_not_null(maps);
    int found = strstr(maps, "/libgpumerge.so") != NULL;
    free(maps);
    return found;
}

Test(lib, linked_as_its_name_says)
{
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    cr_assert_gt(len, 0);
    exe[len] = '\0';
    int is_static = strstr(exe, "test_lib_static") != NULL;
    cr_expect_eq(maps_shared_library(), !is_static, "%s %s libgpumerge.so", exe,
                 is_static ? "maps" : "does not map");
    char *v = source_version();
    cr_expect_str_eq(gm_version(), v);
    free(v);
}

Test(lib, installed_files_names_and_exports)
{
    char *v = source_version(), *cmd;
    /* the real name, the soname's link and the development link */
    if (asprintf(&cmd,
                 "cd '%s/lib' && readlink libgpumerge.so.1 && readlink libgpumerge.so && "
                 "test -f libgpumerge.so.%s && test -f libgpumerge.a && "
                 "test -f ../include/gpumerge.h && test -f ../share/man/man3/gpumerge.3 && "
                 "readelf -d libgpumerge.so.%s | sed -n 's/.*Library soname: \\[\\(.*\\)\\]/\\1/p'",
                 GM_TEST_LIB_ROOT, v, v) < 0)
        abort();
    cmd_result r = run_sh(NULL, cmd);
    char want[256];
    snprintf(want, sizeof want, "libgpumerge.so.%s\nlibgpumerge.so.1\nlibgpumerge.so.1\n", v);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, want);
    cmd_free(&r), free(cmd);
    /* the shared library exports the header's calls and nothing else */
    if (asprintf(&cmd, "nm -D --defined-only '%s/lib/libgpumerge.so' | awk '{print $3}' | sort",
                 GM_TEST_LIB_ROOT) < 0)
        abort();
    r = run_sh(NULL, cmd);
    cr_expect_str_eq(r.out, "gm_device_name\ngm_device_probe\ngm_merge\ngm_merge_device\n"
                            "gm_sort\ngm_sort_device\ngm_version\n");
    cmd_free(&r), free(cmd);
    /* gpumerge.pc: VERSION's version, the install's paths */
    char *mod = pkg_config("--modversion"), *libs = pkg_config("--libs"),
         *cflags = pkg_config("--cflags"), *priv = pkg_config("--static --libs");
    cr_expect_str_eq(mod, v);
    snprintf(want, sizeof want, "-L%s/lib -lgpumerge", GM_TEST_LIB_ROOT);
    cr_expect_str_eq(libs, want);
    snprintf(want, sizeof want, "-I%s/include", GM_TEST_LIB_ROOT);
    cr_expect_str_eq(cflags, want);
    cr_expect(strstr(priv, "-lgpumerge") && strstr(priv, "-pthread") && strstr(priv, "-lm"),
              "%s", priv);
    free(mod), free(libs), free(cflags), free(priv), free(v);
}

/* Compiles, links and runs a program with the installed library's flags (cc: the
 * build's compiler; else c++ with the build's sanitizer flags); returns its result. */
static cmd_result build_with(const char *compiler, const char *source, const char *flags)
{
    char *dir = scratch_dir(), *cmd;
    const char *cc = GM_TEST_CC, *san = strchr(cc, ' ');
    if (asprintf(&cmd,
                 "%s%s %s '%s' $(PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --cflags --libs "
                 "gpumerge) -Wl,-rpath,'%s/lib' -o '%s/prog' && ./prog",
                 strcmp(compiler, "cc") == 0 ? cc : compiler,
                 strcmp(compiler, "cc") == 0 || !san ? "" : san, flags, source, GM_TEST_LIB_ROOT,
                 GM_TEST_LIB_ROOT, dir) < 0)
        abort();
    cmd_result r = run_sh(dir, cmd);
    free(cmd), free(dir);
    return r;
}

Test(lib, the_header_alone_in_c_and_cpp, .timeout = 60)
{
    char *dir = scratch_dir(), *c = path_in(dir, "only.c");
    write_text(c, "#include <gpumerge.h>\n"
                  "int main(void) { gm_options o = { GM_DEVICE_CPU, 0, 0, 0, 0, { 0 } };\n"
                  "  int32_t k[2] = { 2, 1 }; return gm_sort(k, 2, GM_I32, &o, 0, 0) || k[0] != 1; }\n");
    cmd_result r = build_with("cc", c, "-std=c99 -pedantic -Wall -Wextra -Werror");
    cr_expect_eq(r.status, 0, "C99: %s%s", r.out, r.err);
    cmd_free(&r);
    if (system("command -v c++ >/dev/null") == 0) {
        char *cc = path_in(dir, "only.cc");
        write_text(cc, "#include <gpumerge.h>\n"
                       "int main() { int64_t k[3] = { 3, 1, 2 }; size_t n = 0;\n"
                       "  gm_options o = {}; o.unique = 1; gm_status st;\n"
                       "  return gm_sort(k, 3, GM_I64, &o, &n, &st) != GM_OK || n != 3 || k[2] != 3; }\n");
        r = build_with("c++", cc, "-Wall -Wextra -Werror");
        cr_expect_eq(r.status, 0, "C++: %s%s", r.out, r.err);
        cmd_free(&r);
        free(cc);
    }
    free(c), free(dir);
}

Test(lib, the_readme_example_builds_and_runs, .timeout = 60)
{
    const char *t = getenv("TESTDATA");
    char *src;
    if (asprintf(&src, "%s/../examples/example.c", t && *t ? t : "testdata") < 0)
        abort();
    cmd_result r = build_with("cc", src, "-Wall -Wextra -Werror");
    cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
    cr_expect_str_eq(r.out, "sorted: -7 0 3 3 42\nmerged: 1 2 3 4 5 6 7 8 9\n");
    cmd_free(&r);
    free(src);
}
