/*
 * mpi_main.c - gpumerge-mpi's entry point: gpumerge over the ranks of an MPI
 * job (`mpirun -np N gpumerge-mpi [OPTION]... [FILE]...`). With one rank it is
 * gpumerge's own main (cli/main.c, built under another name); with more, every
 * rank parses the same command line (cli/options.c), takes its GPU and its
 * share of the cores, and runs the operation across the ranks (mpi/gmpi.h).
 * Only rank 0 prints; every rank exits with the status they agreed on.
 *
 * The GPU: the rank's index among the ranks of its node picks one device of
 * CUDA_VISIBLE_DEVICES (or of the node's /dev/nvidiaN when it is unset), which
 * becomes the rank's CUDA_VISIBLE_DEVICES before CUDA starts.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <mpi.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/base/compress.h"
#include "../core/gm.h"
#include "../core/base/util.h"
#include "../mpi/gmpi.h"
#include "options.h"

enum { EXIT_OK = 0, EXIT_DISORDER = 1, EXIT_TROUBLE = 2 };

int gm_cli_main(int argc, char **argv);

/* The node's NVIDIA devices (/dev/nvidia0, /dev/nvidia1, ...). */
static int node_gpus(void)
{
    DIR *d = opendir("/dev");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        if (strncmp(e->d_name, "nvidia", 6) == 0 && e->d_name[6] >= '0' && e->d_name[6] <= '9' &&
            strspn(e->d_name + 6, "0123456789") == strlen(e->d_name + 6))
            n++;
    if (d)
        closedir(d);
    return n;
}

/* Gives the rank one GPU of its node's and returns how many ranks share the node. */
static int pick_device(MPI_Comm comm)
{
    MPI_Comm node;
    int local = 0, nlocal = 1;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        MPI_Comm_rank(node, &local);
        MPI_Comm_size(node, &nlocal);
        MPI_Comm_free(&node);
    }
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    char pick[64] = "";
    if (vis && *vis) {
        char *list = strdup(vis), *save = NULL;
        int count = 0;
        for (char *t = list ? strtok_r(list, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save))
            count++;
        free(list);
        list = strdup(vis);
        int want = count ? local % count : 0, i = 0;
        for (char *t = list ? strtok_r(list, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save))
            if (i++ == want)
                snprintf(pick, sizeof pick, "%s", t);
        free(list);
    } else {
        int n = node_gpus();
        if (n > 0)
            snprintf(pick, sizeof pick, "%d", local % n);
    }
    if (pick[0])
        setenv("CUDA_VISIBLE_DEVICES", pick, 1);
    return nlocal;
}

/* The rank's threads: its CPU affinity, or the node's cores shared by its ranks. */
static int rank_threads(int nlocal)
{
    cpu_set_t set;
    int online = gm_cpu_count(), share = online / (nlocal > 0 ? nlocal : 1);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) < share)
        share = CPU_COUNT(&set);
    return share > 0 ? share : 1;
}

static void print_message(void *ctx, gm_message kind, const char *text)
{
    (void)ctx;
    (void)kind;
    fprintf(stderr, "gpumerge: %s\n", text);
}

/* Rank 0 prints the agreed status; every rank maps it to the exit code. */
static int report(int rc, const gm_status *st, const gm_config *cfg, int rank)
{
    int code = rc == GM_OK ? EXIT_OK : rc == GM_DISORDER ? EXIT_DISORDER : EXIT_TROUBLE;
    if (rank != 0 || rc == GM_OK || rc == GM_EPIPE || (rc == GM_DISORDER && cfg->check_quiet))
        return code;
    fputs("gpumerge: ", stderr);
    fwrite(st->msg, 1, st->len ? st->len : strlen(st->msg), stderr);
    fputc(rc == GM_DISORDER && cfg->zero_terminated ? '\0' : '\n', stderr);
    fflush(stderr);
    return code;
}

static int run_ranks(int argc, char **argv, int rank, int nlocal)
{
    gm_status st = { GM_OK, "", 0 };
    gm_cli cli;
    int code = EXIT_OK;
    if (gm_cli_parse(argc, argv, &cli, &st) != GM_OK) {
        if (rank == 0)
            fprintf(stderr, "gpumerge: %s\n", st.msg);
        gm_cli_free(&cli);
        return EXIT_TROUBLE;
    }
    if (cli.show_help || cli.show_version) {
        if (rank == 0) {
            if (cli.show_help)
                gm_cli_usage(stdout);
            else
                gm_cli_version(stdout, &cli.config);
        }
        code = rank == 0 && fflush(stdout) != 0 ? EXIT_TROUBLE : EXIT_OK;
        gm_cli_free(&cli);
        return code;
    }
    if (cli.config.compress_program)
        gm_compress_signals(1); /* PROG's children waited for, with SIGPIPE as it was */
    signal(SIGPIPE, SIG_IGN); /* a closed output is EPIPE, agreed by every rank */
    gm_config *cfg = &cli.config;
    cfg->message = rank == 0 ? print_message : NULL;
    cfg->last = 1;
    if (cfg->threads == 0)
        cfg->threads = rank_threads(nlocal);
    if (cli.op == GM_OP_CHECK && cli.nfiles > 1) { /* each input, as gpumerge checks them */
        for (int i = 0; i < cli.nfiles; i++) {
            int c = report(gm_mpi_run(GM_OP_CHECK, cfg, &cli.files[i], 1, MPI_COMM_WORLD, &st),
                           &st, cfg, rank);
            if (c == EXIT_TROUBLE || (c == EXIT_DISORDER && cfg->check_quiet)) {
                code = c;
                break;
            }
            if (c == EXIT_DISORDER)
                code = c;
        }
    } else {
        code = report(gm_mpi_run(cli.op, cfg, cli.files, cli.nfiles, MPI_COMM_WORLD, &st), &st,
                      cfg, rank);
    }
    gm_cli_free(&cli);
    return code;
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "gpumerge: MPI_Init failed\n");
        return EXIT_TROUBLE;
    }
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int code;
    if (size == 1) {
        code = gm_cli_main(argc, argv);
    } else {
        int nlocal = pick_device(MPI_COMM_WORLD);
        code = run_ranks(argc, argv, rank, nlocal);
    }
    fflush(stdout);
    MPI_Finalize();
    return code;
}
