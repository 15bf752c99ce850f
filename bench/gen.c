/*
 * gen.c - writes N random signed 32-bit integers (64-bit with -w), one per line,
 * to standard output: the benchmarks' input, made at the speed of memory rather than at the
 * speed of shuf and awk. A xorshift64* generator (Vigna) seeded from the command
 * line, so a run is reproducible.
 *
 * With -c it writes N CSV records "id,ts,payload" instead (about 47 bytes a line:
 * an 8-digit id, a 10-digit epoch second within one day, so that many lines share
 * a second, and 26 random letters), the records path's benchmark input.
 *
 * Usage: gen [-w | -c] N [SEED]
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

/* Writes one CSV record at p and returns the end. */
static char *put_csv(char *p)
{
    uint64_t r = next();
    p += sprintf(p, "%08llu,%llu,", (unsigned long long)(10000000 + r % 90000000),
                 (unsigned long long)(1700000000 + (r >> 32) % 86400));
    uint64_t letters = next();
    for (int i = 0; i < 26; i++) {
        if (i == 13)
            letters = next();
        *p++ = (char)('a' + letters % 26);
        letters /= 26;
    }
    *p++ = '\n';
    return p;
}

int main(int argc, char **argv)
{
    int wide = argc > 1 && strcmp(argv[1], "-w") == 0;
    int csv = argc > 1 && strcmp(argv[1], "-c") == 0;
    argv += wide + csv;
    argc -= wide + csv;
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: gen [-w | -c] N [SEED]\n");
        return 2;
    }
    long long n = atoll(argv[1]);
    state = argc == 3 ? strtoull(argv[2], NULL, 10) * 2654435761u + 1 : 88172645463325252ULL;
    static char buf[1 << 20];
    size_t at = 0;
    for (long long i = 0; i < n; i++) {
        if (csv) {
            at = (size_t)(put_csv(buf + at) - buf);
        } else {
            uint64_t r = next();
            at = (size_t)(put(buf + at, wide ? (int64_t)r : (int32_t)(r >> 32)) - buf);
        }
        if (at > sizeof buf - 64 || i == n - 1) {
            if (fwrite(buf, 1, at, stdout) != at) {
                perror("gen: write");
                return 2;
            }
            at = 0;
        }
    }
    return fflush(stdout) == 0 ? 0 : 2;
}
