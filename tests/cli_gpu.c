/*
 * cli_gpu.c - choosing the device: --device=gpu without a GPU fails before any
 * output (auto quietly uses the CPU), --gpu=N with and without a GPU and what
 * --version says of the device, CUDA left unloaded where nothing needs it, and
 * data too large for the GPU's memory.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_cases.h"
#include "helpers.h"

Test(cli, gpu_requested_without_a_gpu)
{
    if (gpu_usable())
        cr_skip_test("a GPU is usable here: the no-GPU message cannot be produced");
    char *dir = scratch_dir();
    char *p = path_in(dir, "in");
    write_text(p, "2\n1\n");
    cmd_result r = run_sh(dir, "\"$GPUMERGE\" sort --device=gpu in");
    cr_assert_eq(r.status, 2);
    cr_assert(strncmp(r.err, "gpumerge: no usable CUDA device: ", 33) == 0, "%s", r.err);
    cr_assert_str_eq(r.out, "");
    cmd_free(&r);
    /* auto quietly uses the CPU */
    r = run_sh(dir, "\"$GPUMERGE\" sort --device=auto in");
    assert_result(&r, 0, "1\n2\n", "");
    cmd_free(&r);
    /* the failure comes before any output: -o is neither created nor changed, from
     * a file, a merge, a pipe, an empty input, and with -v */
    write_text(p, "1\n2\n");
    char *kept = path_in(dir, "kept");
    write_text(kept, "old\n");
    const char *cmds[] = {
        "sort --device=gpu in -o out",
        "merge --device=gpu in in -o out",
        "cat in | \"$GPUMERGE\" sort --device=gpu - -o out",
        "printf '' | \"$GPUMERGE\" sort --device=gpu -o out",
        "sort -v --device=gpu in -o out",
        "sort --device=gpu in -o kept",
        "merge --device=gpu in -o kept",
    };
    char *out = path_in(dir, "out");
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        char *cmd;
        /* a pipeline names its gpumerge itself */
        if (asprintf(&cmd, "%s%s", strchr(cmds[i], '|') ? "" : "\"$GPUMERGE\" ", cmds[i]) < 0)
            abort();
        r = run_sh(dir, cmd);
        cr_assert_eq(r.status, 2, "%s: status %d", cmds[i], r.status);
        const char *msg = strstr(r.err, "gpumerge: no usable CUDA device: ");
        cr_assert(msg != NULL && strstr(r.err, "gpumerge: total ") == NULL, "%s: %s", cmds[i],
                  r.err);
        cr_assert_str_eq(r.out, "", "%s", cmds[i]);
        cr_assert_neq(access(out, F_OK), 0, "%s created out", cmds[i]);
        char *text = read_file(kept, NULL);
        cr_assert_str_eq(text, "old\n", "%s changed kept", cmds[i]);
        free(text);
        cmd_free(&r);
        free(cmd);
    }
    free(out), free(kept), free(p), free(dir);
}

/* The engine line of --version: whether this binary has the CUDA engine. */
static int built_with_cuda(void)
{
    cmd_result r = run_sh(NULL, "\"$GPUMERGE\" --version");
    int cuda = strstr(r.out, "\nengine: CUDA ") != NULL;
    cmd_free(&r);
    return cuda;
}

/* The device line of --version (malloc'd, without its newline). */
static char *version_device(const char *args)
{
    char *cmd;
    if (asprintf(&cmd, "\"$GPUMERGE\" %s --version", args) < 0)
        abort();
    cmd_result r = run_sh(NULL, cmd);
    free(cmd);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *line = strstr(r.out, "\ndevice: ");
    cr_assert_not_null(line, "no device line: %s", r.out);
    line = strndup(line + 1, strcspn(line + 1, "\n"));
    cmd_free(&r);
    return line;
}

/* --gpu=N: a bad number is a usage error before anything is read; a good one
 * changes nothing on the CPU; --version names the device or why there is none,
 * and where no GPU is usable --device=gpu says so whatever N. */
Test(cli, gpu_choice_without_a_gpu)
{
    if (gpu_usable())
        cr_skip_test("a GPU is usable here: gpu_choice_on_a_gpu checks --gpu instead");
    char *dir = scratch_dir();
    char *p = path_in(dir, "in");
    write_text(p, "3\n1\n2\n");
    static const struct {
        const char *args, *err;
    } bad[] = {
        { "--gpu=one in", "gpumerge: invalid --gpu argument 'one'\n" },
        { "--gpu=-1 in", "gpumerge: invalid --gpu argument '-1'\n" },
        { "--gpu 99999999999 in", "gpumerge: --gpu argument '99999999999' too large\n" },
        { "--device=gpu --gpu=x in -o out", "gpumerge: invalid --gpu argument 'x'\n" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cmd_result r = gm(dir, "sort", bad[i].args);
        assert_result(&r, 2, "", bad[i].err);
        cmd_free(&r);
    }
    char *out = path_in(dir, "out");
    cr_assert_neq(access(out, F_OK), 0, "a bad --gpu created -o's file");
    /* a number, on the CPU or under auto: the sort as ever */
    const char *fine[] = { "--gpu=0 in", "--gpu=3 --device=cpu in", "--gpu 7 in", "--gpu=05 in" };
    for (size_t i = 0; i < sizeof fine / sizeof *fine; i++) {
        char *cmd;
        if (asprintf(&cmd, "\"$GPUMERGE\" sort %s", fine[i]) < 0)
            abort();
        cmd_result r = run_sh(dir, cmd);
        assert_result(&r, 0, "1\n2\n3\n", "");
        cmd_free(&r);
        free(cmd);
    }
    /* the GPU asked for: no usable device, whichever N */
    for (int n = 0; n < 3; n++) {
        char *cmd;
        if (asprintf(&cmd, "\"$GPUMERGE\" sort --device=gpu --gpu=%d in -o out", n) < 0)
            abort();
        cmd_result r = run_sh(dir, cmd);
        cr_assert_eq(r.status, 2, "%s", cmd);
        cr_assert(strncmp(r.err, "gpumerge: no usable CUDA device: ", 33) == 0, "%s", r.err);
        cr_assert_neq(access(out, F_OK), 0, "%s created out", cmd);
        cmd_free(&r);
        free(cmd);
    }
    /* --version: why there is no device, in the words --device=gpu uses */
    char *dev = version_device("--gpu=1");
    if (built_with_cuda())
        cr_assert(strncmp(dev, "device: no usable CUDA device: ", 31) == 0, "%s", dev);
    else
        cr_assert_str_eq(dev, "device: none: built without CUDA");
    free(dev);
    free(out), free(p), free(dir);
}

/* Without a driver, --version answers at once: nothing of CUDA is loaded (no
 * engine library, no runtime), as for small sorts under auto or on the CPU;
 * --device=gpu loads the engine, and a program copied without it says so. */
Test(cli, no_cuda_loaded_without_need)
{
    if (!built_with_cuda())
        cr_skip_test("CPU-only build: there is no CUDA engine to leave unloaded");
    if (access("/dev/nvidiactl", F_OK) == 0 || access("/proc/driver/nvidia/version", F_OK) == 0)
        cr_skip_test("an NVIDIA driver is loaded here: --version asks CUDA");
    /* standard input, then gpumerge's arguments */
    const char *cmds[][2] = { { "/dev/null", "--version" }, { "in3", "" }, { "in3", "sort -" },
                              { "in1000", "--device=cpu" }, { "in1000", "in1000" } };
    char *dir = scratch_dir(), *p;
    write_text(p = path_in(dir, "in3"), "3\n1\n2\n"), free(p);
    cmd_result r = run_sh(dir, "seq 1000 > in1000");
    cmd_free(&r);
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        char *cmd;
        if (asprintf(&cmd, "cat %s | LD_DEBUG=files \"$GPUMERGE\" %s 2>&1 >/dev/null "
                           "| grep -c 'gpumerge-cuda\\|libcuda'", cmds[i][0], cmds[i][1]) < 0)
            abort();
        r = run_sh(dir, cmd);
        cr_expect_str_eq(r.out, "0\n", "%s loaded CUDA", cmd);
        cmd_free(&r);
        free(cmd);
    }
    /* the GPU asked for: the engine is loaded, and says why it cannot run */
    r = run_sh(dir, "cat in3 | LD_DEBUG=files \"$GPUMERGE\" --device=gpu 2>&1 >/dev/null "
                    "| grep -c 'calling init: .*gpumerge-cuda.so'");
    cr_expect_str_eq(r.out, "1\n", "--device=gpu did not load the engine");
    cmd_free(&r);
    /* the program without its engine: the GPU is not usable, and says why */
    if (access("/usr/local/lib/gpumerge/gpumerge-cuda.so", F_OK) != 0) {
        r = run_sh(dir, "mkdir alone && cp \"$GPUMERGE\" alone/gpumerge && "
                        "alone/gpumerge --device=gpu in3");
        cr_expect_eq(r.status, 2, "%s", r.err);
        cr_expect(strncmp(r.err, "gpumerge: no usable CUDA device: the CUDA engine "
                                 "(gpumerge-cuda.so) is neither beside the program", 97) == 0,
                  "%s", r.err);
        cmd_free(&r);
        r = run_sh(dir, "alone/gpumerge in3");
        assert_result(&r, 0, "1\n2\n3\n", "");
        cmd_free(&r);
    }
    free(dir);
}

/* On a GPU machine: --gpu=N past the devices is an error under gpu and auto, and
 * --version names device 0 with its compute capability. */
Test(cli, gpu_choice_on_a_gpu)
{
    if (!gpu_usable())
        cr_skip_test("GPU case skipped: no usable CUDA device");
    char *dir = scratch_dir();
    char *p = path_in(dir, "in");
    write_text(p, "3\n1\n2\n");
    cmd_result r = gm(dir, "sort", "--device=gpu --gpu=2147483647 in -o out");
    cr_assert_eq(r.status, 2, "%s", r.err);
    cr_assert(strncmp(r.err, "gpumerge: --gpu=2147483647: no such CUDA device: ", 49) == 0,
              "%s", r.err);
    cmd_free(&r);
    char *out = path_in(dir, "out");
    cr_assert_neq(access(out, F_OK), 0, "a missing device created -o's file");
    r = run_sh(dir, "\"$GPUMERGE\" sort --device=gpu --gpu=0 in");
    assert_result(&r, 0, "1\n2\n3\n", "");
    cmd_free(&r);
    /* CUDA_VISIBLE_DEVICES hides them all: no device */
    r = run_sh(dir, "CUDA_VISIBLE_DEVICES= \"$GPUMERGE\" sort --device=gpu in");
    cr_assert_eq(r.status, 2, "%s", r.err);
    cr_assert(strncmp(r.err, "gpumerge: no usable CUDA device: ", 33) == 0, "%s", r.err);
    cmd_free(&r);
    char *dev = version_device("");
    cr_assert(strncmp(dev, "device: 0: ", 11) == 0 && strstr(dev, "compute capability "),
              "%s", dev);
    free(dev);
    dev = version_device("--gpu=2147483647");
    cr_assert(strncmp(dev, "device: --gpu=2147483647: no such CUDA device: ", 47) == 0, "%s",
              dev);
    free(dev);
    free(out), free(p), free(dir);
}

Test(cli, data_too_large_for_the_gpu)
{
    if (!gpu_usable())
        cr_skip_test("GPU case skipped: no usable CUDA device");
    if (!getenv("GPUMERGE_FORCED"))
        cr_skip_test("GPUMERGE_FORCED (make builds it) not set");
    char *dir = scratch_dir();
    char *p = path_in(dir, "in");
    write_text(p, "3\n1\n2\n");
    /* the test build of gpumerge (cuda/testing.h) makes the device look nearly full */
    cmd_result r =
        run_sh(dir, "\"$GPUMERGE_FORCED\" --gpu-memory-limit=1000 sort --device=gpu in");
    cr_assert_eq(r.status, 2, "%s", r.err);
    cr_assert(strncmp(r.err, "gpumerge: data does not fit in GPU memory: ", 43) == 0, "%s", r.err);
    cr_assert_str_eq(r.out, "");
    cmd_free(&r);
    r = run_sh(dir, "\"$GPUMERGE_FORCED\" --gpu-memory-limit=1000 merge --device=gpu in in -o out");
    cr_assert_eq(r.status, 2, "%s", r.err);
    char *out = path_in(dir, "out");
    cr_assert_neq(access(out, F_OK), 0, "no output file after the failure");
    cmd_free(&r);
    free(out), free(p), free(dir);
}
