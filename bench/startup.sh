#!/usr/bin/env bash
# bench/startup.sh - what a small input costs: gpumerge against `LC_ALL=C sort -n`
# and cat on 3 and 1000 lines, timed paired and interleaved. Each round runs every
# command once, in an order rotated from round to round, so that a neighbour's load
# falls on all of them alike; each command's line gives the median of its times,
# their interquartile range and their range, and the median (and interquartile
# range) over the rounds of its time divided by sort's in the same round. The
# times are wall times around each run as bash starts it (EPOCHREALTIME): the
# fork and exec of every command count alike.
#
# Usage: bench/startup.sh [ROUNDS]   (default 100) environment: GPUMERGE (default
#        ./gpumerge), CUDA_GPUMERGE (a CUDA build's program, timed beside it, e.g.
#        build-cuda/gpumerge from `make BUILD=build-cuda PROG=build-cuda/gpumerge`)
set -euo pipefail

ROUNDS=${1:-100}
GPUMERGE=${GPUMERGE:-./gpumerge}
export LC_ALL=C
DIR=$(mktemp -d "${TMPDIR:-/tmp}/gpumerge-startup.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
printf '3\n1\n2\n' >"$DIR/3"
seq 1000 | shuf --random-source=<(yes) >"$DIR/1000"

names=("LC_ALL=C sort -n" "cat" "gpumerge --device=cpu" "gpumerge (auto)")
cmds=("sort -n" "cat" "$GPUMERGE --device=cpu" "$GPUMERGE")
if [ -n "${CUDA_GPUMERGE:-}" ]; then
    names+=("CUDA build --device=cpu" "CUDA build (auto)")
    cmds+=("$CUDA_GPUMERGE --device=cpu" "$CUDA_GPUMERGE")
fi
n=${#cmds[@]}

echo "machine: $(nproc) cores, $(uname -m); $ROUNDS rounds, paired and interleaved;" \
    "$(sort --version | head -1); $(date -u +%Y-%m-%d)"
for size in 3 1000; do
    for ((i = 0; i < n; i++)); do # warm the page cache and the loader
        ${cmds[i]} "$DIR/$size" >/dev/null
        ${cmds[i]} "$DIR/$size" >/dev/null
    done
    exec 3>"$DIR/times"
    for ((r = 0; r < ROUNDS; r++)); do
        for ((k = 0; k < n; k++)); do
            i=$(((r + k) % n))
            t0=${EPOCHREALTIME/./} # microseconds, no subshell around the run
            ${cmds[i]} "$DIR/$size" >/dev/null
            t1=${EPOCHREALTIME/./}
            echo "$r $i $((t1 - t0))" >&3
        done
    done
    exec 3>&-
    echo
    printf '%-26s %10s %15s %15s   %s\n' "$size lines" "median ms" "IQR ms" "range ms" \
        "time / sort's, same round: median (IQR)"
    for ((i = 0; i < n; i++)); do
        awk -v i="$i" -v name="${names[i]}" '
            function q(a, n, p,   x) { x = 1 + (n - 1) * p; return a[int(x)] + (x - int(x)) * (a[int(x) + 1] - a[int(x)]) }
            function sorted(a, n,   j, k, t) {
                for (j = 2; j <= n; j++) { t = a[j]; for (k = j - 1; k >= 1 && a[k] > t; k--) a[k + 1] = a[k]; a[k + 1] = t }
            }
            { us[$1, $2] = $3; if ($1 + 1 > rounds) rounds = $1 + 1 }
            END {
                for (r = 0; r < rounds; r++) { t[r + 1] = us[r, i] / 1000; x[r + 1] = us[r, i] / us[r, 0] }
                sorted(t, rounds); sorted(x, rounds)
                printf "%-26s %10.3f %7.3f-%-7.3f %7.3f-%-7.3f   %.2f (%.2f-%.2f)\n", name,
                    q(t, rounds, 0.5), q(t, rounds, 0.25), q(t, rounds, 0.75), t[1], t[rounds],
                    q(x, rounds, 0.5), q(x, rounds, 0.25), q(x, rounds, 0.75)
            }' "$DIR/times"
    done
done
