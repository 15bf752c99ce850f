/*
 * gen.c - writes N random signed 32-bit integers (64-bit with -w), one per line,
 * to standard output: the benchmarks' input, made at the speed of memory rather than at the
 * speed of shuf and awk. A xorshift64* generator (Vigna) seeded from the command
 * line, so a run is reproducible.
 *
 * Usage: gen [-w] N [SEED]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t state;

static uint64_t next(void)
{
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1DULL;
}

/* Writes v in decimal at p and returns the end. */
static char *put(char *p, int64_t v)
{
    uint64_t u = v < 0 ? 0u - (uint64_t)v : (uint64_t)v;
    if (v < 0)
        *p++ = '-';
    char tmp[20];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    while (n)
        *p++ = tmp[--n];
    *p++ = '\n';
    return p;
}

int main(int argc, char **argv)
{
    int wide = argc > 1 && strcmp(argv[1], "-w") == 0;
    argv += wide;
    argc -= wide;
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: gen [-w] N [SEED]\n");
        return 2;
    }
    long long n = atoll(argv[1]);
    state = argc == 3 ? strtoull(argv[2], NULL, 10) * 2654435761u + 1 : 88172645463325252ULL;
    static char buf[1 << 20];
    size_t at = 0;
    for (long long i = 0; i < n; i++) {
        uint64_t r = next();
        at = (size_t)(put(buf + at, wide ? (int64_t)r : (int32_t)(r >> 32)) - buf);
        if (at > sizeof buf - 32 || i == n - 1) {
            if (fwrite(buf, 1, at, stdout) != at) {
                perror("gen: write");
                return 2;
            }
            at = 0;
        }
    }
    return fflush(stdout) == 0 ? 0 : 2;
}
