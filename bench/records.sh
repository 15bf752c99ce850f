#!/usr/bin/env bash
# bench/records.sh - the records path end to end: N lines `id,ts,payload` (about 47
# bytes; ts a 10-digit epoch second, so many lines share one; build/bench/gen -c)
# sorted file to file by a field, against GNU sort, cat, and, where installed,
# DuckDB and Polars doing the same stable sort (bench/peers.mjs). Every output is
# compared with GNU sort's; each time is the median of REPEAT runs with their range
# (min-max), timed by hyperfine where it is installed (bench/median.sh).
#
#   -t, -k2,2n        gpumerge and sort; the stable peers against sort -s
#   -t, -k2,2nr -s    gpumerge and sort
#   -u -t, -k2,2n     gpumerge and sort
#   -n (whole line)   gpumerge and sort
#
# Usage: bench/records.sh [N]    environment: DEVICES (default cpu), REPEAT (5),
#        REPEAT_GNU (GNU sort's runs, default REPEAT), GPUMERGE, PEERS (a folder whose
#        node_modules holds @duckdb/node-api and nodejs-polars: `npm install --prefix
#        DIR @duckdb/node-api nodejs-polars@0.25.2 nodejs-polars-linux-x64-gnu@0.25.2`;
#        unset: no peers), ONLY (a space-separated subset of: field reverse unique
#        whole peers), DIR (a scratch folder to use and keep).
set -euo pipefail

N=${1:-10000000}
DEVICES=${DEVICES:-cpu}
REPEAT=${REPEAT:-5}
ONLY=${ONLY:-field reverse unique whole peers}
GPUMERGE=${GPUMERGE:-./gpumerge}
GEN=${GEN:-build/bench/gen}
HERE=$(cd "$(dirname "$0")" && pwd)
if [ -z "${DIR:-}" ]; then
    root=${TMPDIR:-/tmp}
    if [ -d /dev/shm ] && [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -gt $((N / 1000 * 200)) ]; then
        root=/dev/shm
    fi
    DIR=$(mktemp -d "$root/gpumerge-records.XXXXXX")
    trap 'rm -rf "$DIR"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
fi
export LC_ALL=C
mkdir -p "$DIR"
IN=$DIR/in.$N.csv  # Polars reads a string without .csv as the text itself
[ -s "$IN" ] || "$GEN" -c "$N" >"$IN"
. "$HERE/median.sh"
P=$(nproc)

median_time() {
    local n=$REPEAT
    case $1 in gnu_*) n=${REPEAT_GNU:-$REPEAT} ;; esac
    median_runs "$n" "$@"
}
same() { # same WHAT EXPECTED ACTUAL
    cmp -s "$2" "$3" || { echo "MISMATCH: $1 differs from GNU sort" >&2; exit 1; }
}
ratio() { awk -v a="$(med "$1")" -v b="$(med "$2")" 'BEGIN { printf "%.1f", a / b }'; }

cat_in() { cat "$IN" >"$DIR/cat"; }
gnu_sort() { sort "$@" --parallel="$P" "$IN" -o "$DIR/gnu"; }
gm_sort() { local d=$1; shift; rm -f "$DIR/gm"; "$GPUMERGE" --device="$d" "$@" "$IN" -o "$DIR/gm"; }
peer() { PEERS=$PEERS node "$HERE/peers.mjs" "$1" "$IN" "$DIR/peer"; }

export IN DIR P GPUMERGE PEERS HERE # for the commands hyperfine runs in a child bash
echo "machine: $P cores, $(uname -m); N=$N lines ($(du -h "$IN" | cut -f1)); median (min-max)" \
    "of $REPEAT$(command -v hyperfine >/dev/null && [ -z "${NO_HYPERFINE:-}" ] && echo " by hyperfine");" \
    "$(date -u +%Y-%m-%d)"
t_cat=$(median_time cat_in)
printf '%-48s %s\n' "cat in > out" "$(shown "$t_cat")"
run_order() { # run_order NAME OPTIONS...
    local name=$1
    shift
    local t_gnu
    t_gnu=$(median_time gnu_sort "$@")
    printf '%-48s %s\n' "sort $* --parallel=$P" "$(shown "$t_gnu")"
    for d in $DEVICES; do
        local t
        t=$(median_time gm_sort "$d" "$@")
        same "$name" "$DIR/gnu" "$DIR/gm"
        printf '%-48s %s   %sx sort, %sx cat\n' "gpumerge --device=$d $*" "$(shown "$t")" \
            "$(ratio "$t_gnu" "$t")" "$(ratio "$t" "$t_cat")"
    done
}
for what in $ONLY; do
    case $what in
    field) run_order field -t, -k2,2n ;;
    reverse) run_order reverse -t, -k2,2nr -s ;;
    unique) run_order unique -u -t, -k2,2n ;;
    whole) run_order whole -n ;;
    peers)
        [ -n "${PEERS:-}" ] || continue
        run_order stable -t, -k2,2n -s
        for e in duckdb polars; do
            t=$(median_time peer "$e")
            same "$e" "$DIR/gnu" "$DIR/peer"
            printf '%-48s %s\n' "$e (read_csv, stable sort by ts, write)" "$(shown "$t")"
        done
        ;;
    esac
done
