/*
 * lib_stage.c - the library suite's cases on a staged install, as a packager
 * makes one: make install DESTDIR=GM_TEST_LIB_STAGE PREFIX=GM_TEST_LIB_STAGE_PREFIX
 * (a prefix that exists only inside the stage), read through pkg-config with
 * PKG_CONFIG_SYSROOT_DIR set to the stage. The README's recipes, shared and
 * static, build and run there; the shared library finds the CUDA engine beside
 * itself; the archive carries the CUDA runtime (a CUDA build only: skipped, with
 * the reason, in a CPU-only one); every call of the header has its man3 page.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

#if !defined(GM_TEST_LIB_STAGE) || !defined(GM_TEST_LIB_STAGE_PREFIX) || !defined(GM_TEST_CUDA)
#error "the Makefile passes the staged install as GM_TEST_LIB_STAGE(_PREFIX), and GM_TEST_CUDA"
#endif
#ifndef GM_TEST_CC
#define GM_TEST_CC "cc"
#endif

#define STAGED GM_TEST_LIB_STAGE GM_TEST_LIB_STAGE_PREFIX /* the prefix, as staged */
#define PKG "PKG_CONFIG_SYSROOT_DIR='" GM_TEST_LIB_STAGE "' PKG_CONFIG_PATH= " \
            "PKG_CONFIG_LIBDIR='" STAGED "/lib/pkgconfig' pkg-config"

/* The README's recipes: a shared link (the rpath stands in for ldconfig) and a
 * static one naming the archive. */
typedef struct recipe {
    const char *name;
    const char *flags;
} recipe;

static const recipe recipes[] = {
    { "shared", "$(" PKG " --cflags --libs gpumerge) -Wl,-rpath,'" STAGED "/lib'" },
    { "static", "$(" PKG " --cflags gpumerge) "
                "$(" PKG " --static --libs gpumerge | sed 's/-lgpumerge/-l:libgpumerge.a/')" },
};

/* Runs sh -c cmd in dir; fails the test unless it exits 0. Its stdout, malloc'd. */
static char *sh_ok(const char *dir, const char *cmd)
{
    cmd_result r = run_sh(dir, cmd);
    cr_assert_eq(r.status, 0, "%s: exit %d: %s%s", cmd, r.status, r.out, r.err);
    free(r.err);
    return r.out;
}

/* Builds source with recipe's flags into dir/prog and runs it; its stdout. */
static char *build_and_run(const char *dir, const char *source, const recipe *rc)
{
    char *cmd;
    if (asprintf(&cmd, "%s -Wall -Wextra -Werror '%s' %s -o prog && ./prog", GM_TEST_CC,
                 source, rc->flags) < 0)
        abort();
    char *out = sh_ok(dir, cmd);
    free(cmd);
    return out;
}

/* The recipes by index: Criterion copies parameters into another process, where
 * recipes' pointers would not hold. */
ParameterizedTestParameters(lib, staged_recipes)
{
    static int which[] = { 0, 1 };
    return cr_make_param_array(int, which, sizeof recipes / sizeof recipes[0]);
}

/* The example and a probe, each built by the recipe against the stage and run: the
 * example's output, the probe's answer (the engine found beside the library, or a
 * CPU-only build's words), and a static program that needs no libgpumerge.so. */
ParameterizedTest(int *which, lib, staged_recipes, .timeout = 120)
{
    const recipe *rc = &recipes[*which];
    const char *t = getenv("TESTDATA");
    char *dir = scratch_dir(), *example, *probe = path_in(dir, "probe.c");
    if (asprintf(&example, "%s/../examples/example.c", t && *t ? t : "testdata") < 0)
        abort();
    char *out = build_and_run(dir, example, rc);
    cr_expect_str_eq(out, "sorted: -7 0 3 3 42\nmerged: 1 2 3 4 5 6 7 8 9\n", "%s", rc->name);
    free(out);
    out = sh_ok(dir, "readelf -d prog | grep -c 'NEEDED.*libgpumerge' || true");
    cr_expect_str_eq(out, strcmp(rc->name, "static") == 0 ? "0\n" : "1\n",
                     "%s: libgpumerge.so needed %s", rc->name, out);
    free(out);
    write_text(probe, "#include <gpumerge.h>\n#include <stdio.h>\n"
                      "int main(void) { gm_status st = { 0 };\n"
                      "  int rc = gm_device_probe(&st);\n"
                      "  printf(\"%s\\n\", rc == GM_OK ? \"usable\" : st.msg); return 0; }\n");
    out = build_and_run(dir, probe, rc);
    if (!GM_TEST_CUDA)
        cr_expect_str_eq(out, "no usable CUDA device: built without CUDA\n", "%s", rc->name);
    else
        cr_expect(strstr(out, "CUDA engine") == NULL && strstr(out, "without CUDA") == NULL,
                  "%s: the engine is not found: %s", rc->name, out);
    free(out), free(example), free(probe), free(dir);
}

/* Under the sysroot every directory pkg-config prints is inside the stage and
 * exists there. */
Test(lib, staged_flags_name_the_stage_only)
{
    char *libs = sh_ok(NULL, PKG " --cflags --static --libs gpumerge"), *save = NULL;
    int paths = 0;
    for (char *w = strtok_r(libs, " \n", &save); w; w = strtok_r(NULL, " \n", &save)) {
        if (strncmp(w, "-L", 2) != 0 && strncmp(w, "-I", 2) != 0)
            continue;
        paths++;
        cr_expect(strncmp(w + 2, STAGED "/", strlen(STAGED) + 1) == 0,
                  "%s lies outside the staged prefix %s", w, STAGED);
        char *cmd;
        if (asprintf(&cmd, "test -d '%s'", w + 2) < 0)
            abort();
        cr_expect_eq(system(cmd), 0, "%s does not exist", w);
        free(cmd);
    }
    cr_expect_eq(paths, 2, "one -I and one -L: %d paths", paths);
    free(libs);
}

/* A CUDA build: the archive holds the CUDA runtime, Libs.private names no toolkit,
 * and the shared library holds none of it (the engine beside it does). */
Test(lib, the_archive_carries_the_cuda_runtime)
{
    if (!GM_TEST_CUDA)
        cr_skip_test("a CPU-only build (no nvcc, or NVCC=): there is no CUDA runtime to link; "
                     "a CUDA build runs this case");
    char *out = sh_ok(NULL, "nm '" STAGED "/lib/libgpumerge.a' 2>/dev/null | "
                            "grep -c ' T cudaMalloc$' || true");
    cr_expect_str_eq(out, "1\n", "cudaMalloc defined in the archive: %s", out);
    free(out);
    out = sh_ok(NULL, PKG " --static --libs gpumerge");
    cr_expect(strstr(out, "cudart") == NULL, "Libs.private names the runtime: %s", out);
    free(out);
    out = sh_ok(NULL, "nm '" STAGED "/lib/libgpumerge.so' | grep -c cudaMalloc || true; "
                      "test -f '" STAGED "/lib/gpumerge/gpumerge-cuda.so' && echo engine");
    cr_expect_str_eq(out, "0\nengine\n");
    free(out);
}

/* The calls the installed header declares (a line starting with a type, the gm_
 * name before its parenthesis), sorted, one a line. malloc'd. */
static char *header_calls(void)
{
    char *h = read_file(STAGED "/include/gpumerge.h", NULL);
    cr_assert_not_null(h);
    text names = { 0 };
    for (char *line = h, *end; *line; line = end + (*end != '\0')) {
        end = line + strcspn(line, "\n");
        char *paren = memchr(line, '(', (size_t)(end - line)), *name = paren;
        if (!islower((unsigned char)line[0]) || !paren)
            continue;
        while (name > line && (isalnum((unsigned char)name[-1]) || name[-1] == '_'))
            name--;
        if (strncmp(name, "gm_", 3) == 0)
            text_putf(&names, "%.*s\n", (int)(paren - name), name);
    }
    free(h);
    cr_assert_not_null(names.buf, "no calls found in gpumerge.h");
    char *path = path_in(scratch_dir(), "calls"), *cmd;
    write_text(path, names.buf);
    if (asprintf(&cmd, "sort '%s'", path) < 0)
        abort();
    char *sorted = sh_ok(NULL, cmd);
    free(cmd), free(path), free(names.buf);
    return sorted;
}

Test(lib, every_call_has_its_man3_page)
{
    char *calls = header_calls();
    /* the pages beside gpumerge.3, each a link to it */
    char *pages = sh_ok(STAGED "/share/man/man3",
                        "for f in *.3; do [ $f = gpumerge.3 ] && continue; "
                        "[ \"$(cat $f)\" = '.so man3/gpumerge.3' ] || echo \"$f: not a link\"; "
                        "echo ${f%.3}; done | sort");
    cr_expect_str_eq(pages, calls, "man3 pages:\n%s\nthe header's calls:\n%s", pages, calls);
    /* the shared library exports the same calls, and gpumerge(3)'s NAME names them */
    char *exports = sh_ok(NULL, "nm -D --defined-only '" STAGED "/lib/libgpumerge.so' | "
                                "awk '{print $3}' | sort");
    cr_expect_str_eq(exports, calls);
    char *named = sh_ok(NULL, "sed -n '/^\\.SH NAME/,/^\\.SH/p' '" STAGED
                              "/share/man/man3/gpumerge.3' | tr -c 'a-z_\\n' ' ' | tr ' ' '\\n' "
                              "| grep '^gm_' | sort");
    cr_expect_str_eq(named, calls, "gpumerge(3)'s NAME:\n%s", named);
    /* man itself finds each one where it is installed */
    if (system("command -v man >/dev/null 2>&1") == 0) {
        char *found = sh_ok(NULL, "for f in $(ls '" STAGED "/share/man/man3' | sed -n "
                                  "'s/^\\(gm_.*\\)\\.3$/\\1/p'); do MANPATH='" STAGED
                                  "/share/man' man -w 3 $f >/dev/null && echo $f; done | sort");
        cr_expect_str_eq(found, calls, "man -w finds:\n%s", found);
        free(found);
    }
    free(calls), free(pages), free(exports), free(named);
}
