/*
 * compat_parse.c - the command line parsed as GNU sort parses it, gm_cli_parse
 * called directly to see what reaches gm_config: the mode (-m, -c, -C, --check's
 * arguments, a subcommand or a file), the operands, -S's sizes and suffixes, the
 * last -T, abbreviations, --parallel, --help ending the parse, the obsolete keys
 * +POS1 [-POS2] as the keys they stand for.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../cli/options.h"
#include "compat_cases.h"
#include "helpers.h"

/* Parses a command line given as one string of words without quotes. */
int parse(const char *line, gm_cli *cli, gm_status *st)
{
    static char buf[1024];
    static char *argv[64];
    snprintf(buf, sizeof buf, "%s", line);
    int argc = 0;
    argv[argc++] = "gpumerge";
    for (char *w = strtok(buf, " "); w && argc < 63; w = strtok(NULL, " "))
        argv[argc++] = w;
    argv[argc] = NULL;
    st->code = GM_OK;
    st->msg[0] = '\0';
    return gm_cli_parse(argc, argv, cli, st);
}

Test(compat, parse_modes_and_operands)
{
    static const struct {
        const char *line;
        gm_op op;
        int have_op, nfiles, quiet;
        const char *first;
    } cases[] = {
        { "", GM_OP_SORT, 0, 0, 0, NULL },
        { "-n f", GM_OP_SORT, 0, 1, 0, "f" },
        { "-m a b", GM_OP_MERGE, 0, 2, 0, "a" },
        { "-c f", GM_OP_CHECK, 0, 1, 0, "f" },
        { "-C f", GM_OP_CHECK, 0, 1, 1, "f" },
        { "--check=quiet f", GM_OP_CHECK, 0, 1, 1, "f" },
        { "--check=silent f", GM_OP_CHECK, 0, 1, 1, "f" },
        { "--check=s f", GM_OP_CHECK, 0, 1, 1, "f" },
        { "--check=diagnose-first f", GM_OP_CHECK, 0, 1, 0, "f" },
        { "--check f", GM_OP_CHECK, 0, 1, 0, "f" },
        { "-c -m f", GM_OP_CHECK, 0, 1, 0, "f" }, /* sort -c -m checks */
        { "-c -c f", GM_OP_CHECK, 0, 1, 0, "f" },
        { "merge a b", GM_OP_MERGE, 1, 2, 0, "a" },
        { "-r sort x", GM_OP_SORT, 1, 1, 0, "x" },
        { "sort x -r", GM_OP_SORT, 1, 1, 0, "x" },
        { "x sort", GM_OP_SORT, 0, 2, 0, "x" },   /* only the first operand */
        { "-- sort x", GM_OP_SORT, 0, 2, 0, "sort" }, /* after --: a file */
        { "./sort", GM_OP_SORT, 0, 1, 0, "./sort" },
        { "-o merge sort x", GM_OP_SORT, 1, 1, 0, "x" }, /* -o's argument */
        { "check -C a b c", GM_OP_CHECK, 1, 3, 1, "a" },
        { "merge -m a", GM_OP_MERGE, 1, 1, 0, "a" },
        { "- -", GM_OP_SORT, 0, 2, 0, "-" },
        { "-rn -- -r", GM_OP_SORT, 0, 1, 0, "-r" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gm_cli cli;
        gm_status st;
        int rc = parse(cases[i].line, &cli, &st);
        cr_assert_eq(rc, GM_OK, "'%s': %s", cases[i].line, st.msg);
        cr_expect_eq(cli.op, cases[i].op, "'%s': op %d", cases[i].line, cli.op);
        cr_expect_eq(cli.have_op, cases[i].have_op, "'%s': have_op", cases[i].line);
        cr_expect_eq(cli.nfiles, cases[i].nfiles, "'%s': %d files", cases[i].line, cli.nfiles);
        cr_expect_eq(cli.config.check_quiet, cases[i].quiet, "'%s': quiet", cases[i].line);
        if (cases[i].first && cli.nfiles > 0)
            cr_expect_str_eq(cli.files[0], cases[i].first, "'%s'", cases[i].line);
        gm_cli_free(&cli);
    }
}

Test(compat, parse_values_reach_the_config)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t tenth = (size_t)((double)pages * (double)page * 10 / 100);
    static const struct {
        const char *line;
        size_t buffer;
    } sizes[] = {
        { "-S 1", 1024 },           { "-S1b", 1 },          { "-S 32b", 32 },
        { "-S 1K", 1024 },          { "-S 1k", 1024 },      { "-S 3M", 3u << 20 },
        { "-S 2G", (size_t)2 << 30 }, { "--buffer-size=1T", (size_t)1 << 40 },
        { "-S K", 1024 },           { "-S 1M -S 1K", 1u << 20 }, /* the largest wins */
        { "-S 1K -S 1M", 1u << 20 }, { "--buf=7b", 7 },  { "-S ' 5'", 5 * 1024 },
        { "-S 0", 1 },              { "-S 0b", 1 },         /* sort's smallest, not "automatic" */
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        gm_cli cli;
        gm_status st;
        char line[64];
        /* "' 5'" stands for the argument " 5" (a leading blank, as strtoumax takes) */
        if (strstr(sizes[i].line, "' 5'")) {
            char *argv[] = { "gpumerge", "-S", " 5", NULL };
            cr_assert_eq(gm_cli_parse(3, argv, &cli, &st), GM_OK, "%s", st.msg);
        } else {
            snprintf(line, sizeof line, "%s", sizes[i].line);
            cr_assert_eq(parse(line, &cli, &st), GM_OK, "'%s': %s", line, st.msg);
        }
        cr_expect_eq(cli.config.buffer_size, sizes[i].buffer, "'%s': %zu", sizes[i].line,
                     cli.config.buffer_size);
        gm_cli_free(&cli);
    }
    gm_cli cli;
    gm_status st;
    cr_assert_eq(parse("-S 10%", &cli, &st), GM_OK, "%s", st.msg);
    cr_expect_eq(cli.config.buffer_size, tenth);
    gm_cli_free(&cli);

    cr_assert_eq(parse("-T /a --temporary-directory=/b -T/c --batch-size=7 --parallel=3 "
                       "--progress -s -n -b -f --sort=numeric --stable --numeric-sort "
                       "--ignore-leading-blanks --ignore-case -v -r -u -o out",
                       &cli, &st),
                 GM_OK, "%s", st.msg);
    cr_expect_str_eq(cli.config.tmpdir, "/c", "the last -T is used");
    cr_expect_eq(cli.config.batch_size, 7);
    cr_expect_eq(cli.config.threads, 3);
    cr_expect_eq(cli.config.progress, 1);
    cr_expect_eq(cli.config.verbose, 1);
    cr_expect_eq(cli.config.reverse, 1);
    cr_expect_eq(cli.config.unique, 1);
    cr_expect_str_eq(cli.config.output, "out");
    cr_expect_eq(cli.config.zero_terminated, 0);
    cr_expect_eq(cli.nfiles, 0);
    gm_cli_free(&cli);

    cr_assert_eq(parse("--parallel=99999999999999999999999", &cli, &st), GM_OK, "%s", st.msg);
    cr_expect_eq(cli.config.threads, 4096, "a huge --parallel is as many as allowed");
    gm_cli_free(&cli);
    cr_assert_eq(parse("--threads=5 --p=2", &cli, &st), GM_OK, "%s", st.msg);
    cr_expect_eq(cli.config.threads, 2, "--p is sort's --parallel");
    gm_cli_free(&cli);
    cr_assert_eq(parse("--dev=cpu --ker=tiled --th=6", &cli, &st), GM_OK, "%s", st.msg);
    cr_expect_eq(cli.config.device, GM_DEVICE_CPU);
    cr_expect_eq(cli.config.kernel, GM_KERNEL_TILED);
    cr_expect_eq(cli.config.threads, 6);
    gm_cli_free(&cli);
    cr_assert_eq(parse("-o x -o x f", &cli, &st), GM_OK, "the same -o twice: %s", st.msg);
    gm_cli_free(&cli);
    cr_assert_eq(parse("--help --frobnicate", &cli, &st), GM_OK, "%s", st.msg);
    cr_expect_eq(cli.show_help, 1, "--help ends the parse, as in sort");
    gm_cli_free(&cli);
}

/* +POS1 [-POS2] reach the keys as the -k they stand for: +F.C is -k F+1.C+1, and
 * -F ends after field F (character 0), -F.C at character C of field F+1; a word
 * that is no +POS1 is a file, and so is one after "--". */
Test(compat, parse_obsolete_keys)
{
    static const struct {
        const char *line;
        int nkeys, nfiles;
        size_t sword, schar, eword, echar;
        int skipsblanks, skipeblanks, reverse;
    } cases[] = {
        { "+1 -2", 1, 0, 1, 0, 1, 0, 0, 0, 0 },
        { "+1.2 -3", 1, 0, 1, 2, 2, 0, 0, 0, 0 },
        { "+0.1b -0.3", 1, 0, 0, 1, 0, 3, 1, 0, 0 },
        { "+1 -0", 1, 0, 1, 0, 0, 0, 0, 0, 0 },
        { "+2 -3.1br f", 1, 1, 2, 0, 3, 1, 0, 1, 1 },
        { "+3", 1, 0, 3, 0, SIZE_MAX, 0, 0, 0, 0 },
        { "f +1 -2", 1, 1, 1, 0, 1, 0, 0, 0, 0 },
        { "+ +x +1x +1. -- +1", 0, 5, 0, 0, 0, 0, 0, 0, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gm_cli cli;
        gm_status st;
        cr_assert_eq(parse(cases[i].line, &cli, &st), GM_OK, "'%s': %s", cases[i].line, st.msg);
        cr_expect_eq(cli.nfiles, cases[i].nfiles, "'%s': %d files", cases[i].line, cli.nfiles);
        if (cases[i].nkeys) { /* the keys as parsed, before gm_keyspec_finish's own */
            const gm_keydef *k = &cli.keyspec.keys[0];
            cr_expect_eq(k->sword, cases[i].sword, "'%s': sword %zu", cases[i].line, k->sword);
            cr_expect_eq(k->schar, cases[i].schar, "'%s': schar %zu", cases[i].line, k->schar);
            cr_expect_eq(k->eword, cases[i].eword, "'%s': eword %zu", cases[i].line, k->eword);
            cr_expect_eq(k->echar, cases[i].echar, "'%s': echar %zu", cases[i].line, k->echar);
            cr_expect_eq(k->skipsblanks, cases[i].skipsblanks, "'%s': b on POS1", cases[i].line);
            cr_expect_eq(k->skipeblanks, cases[i].skipeblanks, "'%s': b on POS2", cases[i].line);
            cr_expect_eq(k->reverse, cases[i].reverse, "'%s': r", cases[i].line);
        } else {
            cr_expect_eq(cli.keyspec.keys[0].sword, 0, "'%s': the whole line", cases[i].line);
            cr_expect_eq(cli.keyspec.keys[0].eword, SIZE_MAX, "'%s'", cases[i].line);
        }
        gm_cli_free(&cli);
    }
    gm_cli cli;
    gm_status st;
    cr_assert_eq(setenv("_POSIX2_VERSION", "200112", 1), 0);
    cr_assert_eq(parse("+1 f", &cli, &st), GM_OK, "%s", st.msg);
    cr_expect_eq(cli.nfiles, 2, "POSIX 1003.1-2001: +1 is a file");
    gm_cli_free(&cli);
    cr_assert_eq(unsetenv("_POSIX2_VERSION"), 0);
    cr_assert_eq(parse("+1 -2x", &cli, &st), GM_EUSAGE);
    cr_expect_str_eq(st.msg, "stray character in field spec: invalid field specification '-2x'");
    gm_cli_free(&cli);
    cr_assert_eq(parse("--strict +1", &cli, &st), GM_EUSAGE);
    cr_expect_str_eq(st.msg, "options '--strict' and '+1' are incompatible: --strict takes "
                             "lines of one integer each");
    gm_cli_free(&cli);
}
