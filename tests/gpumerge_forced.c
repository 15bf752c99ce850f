/*
 * gpumerge_forced.c - gpumerge with GPU choices forced, for tests/sanitize.sh and
 * the CLI suite: its leading options set them through cuda/testing.h, and the rest
 * of the command line goes to gpumerge's own main (cli/main.c, built as
 * gm_cli_main), so that small inputs reach the paths the size would not pick.
 *
 *   gpumerge_forced [--sort-ways=2|4] [--partition=none|1|8|32]
 *                   [--circular-blocks=N] [--gpu-memory-limit=BYTES]
 *                   [--serial-launches] [--text-chunk=BYTES] [--block-size=BYTES]
 *                   [--driver-loaded] [--progress-tick=MS] [--records-block=BYTES]
 *                   [--records-window=BYTES] [--lines-piece=BYTES]
 *                   GPUMERGE-ARGUMENTS...
 *
 * --block-size sets the size of the text blocks the inputs are read and parsed in
 * (core/read/input.h), so that block boundaries fall inside lines and keys.
 * --records-block sets the size of the blocks the records path's sort reads
 * (core/records/records.h), so that a chunk sorted on the device holds many of them.
 * --records-window sets the windows in which the sort in device memory by ranges
 * of keys reads its inputs (core/records/records.h), so that lines cross windows.
 * --driver-loaded has auto read a pipe whole for the GPU's text path as on a
 * machine with a GPU, and give the bytes back to the streaming sort.
 * --progress-tick sets --progress's period (core/base/progress.h), so that a short run
 * says many lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/read/input.h"
#include "../core/base/progress.h"
#include "../core/records/records.h"
#include "../cuda/testing.h"

int gm_cli_main(int argc, char **argv);

/* The number after prefix in arg, or -1 if arg does not start with prefix. */
static long long value_of(const char *arg, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(arg, prefix, n) != 0)
        return -1;
    char *end;
    long long v = strtoll(arg + n, &end, 10);
    if (*end || v < 0) {
        fprintf(stderr, "gpumerge_forced: bad value in %s\n", arg);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    gm_gpu_choices c = { 0 };
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        const char *a = argv[i];
        long long v;
        if ((v = value_of(a, "--sort-ways=")) >= 0 && (v == 2 || v == 4))
            c.sort_ways = (int)v;
        else if (strcmp(a, "--partition=none") == 0)
            c.partition = GM_PARTITION_NONE;
        else if ((v = value_of(a, "--partition=")) >= 0 && (v == 1 || v == 8 || v == 32))
            c.partition = v == 1 ? GM_PARTITION_LANES_1
                          : v == 8 ? GM_PARTITION_LANES_8 : GM_PARTITION_LANES_32;
        else if ((v = value_of(a, "--circular-blocks=")) > 0)
            c.circular_blocks = (int)v;
        else if ((v = value_of(a, "--gpu-memory-limit=")) > 0)
            c.memory_limit = (size_t)v;
        else if ((v = value_of(a, "--text-chunk=")) > 0)
            c.text_chunk = (size_t)v;
        else if ((v = value_of(a, "--lines-piece=")) > 0)
            c.lines_piece = (size_t)v;
        else if ((v = value_of(a, "--block-size=")) > 0)
            gm_input_test_block_size((size_t)v);
        else if ((v = value_of(a, "--records-block=")) > 0)
            gm_records_test_block((size_t)v);
        else if ((v = value_of(a, "--records-window=")) > 0)
            gm_records_test_window((size_t)v);
        else if (strcmp(a, "--serial-launches") == 0)
            c.serial_launches = 1;
        else if ((v = value_of(a, "--progress-tick=")) > 0)
            gm_progress_test_tick((int)v);
        else if (strcmp(a, "--driver-loaded") == 0)
            c.driver_loaded = 1;
        else
            break; /* gpumerge's own options */
    }
    gm_gpu_force(&c);
    argv[i - 1] = argv[0];
    return gm_cli_main(argc - (i - 1), argv + (i - 1));
}
