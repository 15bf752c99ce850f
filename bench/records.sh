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
#   merge             the two halves of the lines, each sorted by -t, -k2,2n, merged
#                     by gpumerge merge and sort -m against cat of the two halves
#
# Usage: bench/records.sh [N]    environment: DEVICES (default cpu), REPEAT (5),
#        REPEAT_GNU (GNU sort's runs, default REPEAT), GPUMERGE, PEERS (a folder whose
#        node_modules holds @duckdb/node-api and nodejs-polars: `npm install --prefix
#        DIR @duckdb/node-api nodejs-polars@0.25.2 nodejs-polars-linux-x64-gnu@0.25.2`;
#        unset: no peers), ONLY (a space-separated subset of: field reverse unique
#        whole merge peers), DIR (a scratch folder to use and keep).
set -euo pipefail

N=${1:-10000000}
DEVICES=${DEVICES:-cpu}
REPEAT=${REPEAT:-5}
ONLY=${ONLY:-field reverse unique whole merge peers}
PROG=${GPUMERGE:-./gpumerge}
SCRATCH=gpumerge-records
. "$(dirname "$0")/csvorders.sh"

# run_merge OPTIONS...: IN's two halves, each sorted by OPTIONS, merged by them
gm_merge() { rm -f "$DIR/gm"; "$PROG" merge "$@" "$DIR/half1" "$DIR/half2" -o "$DIR/gm"; }
gnu_merge() { sort -m "$@" "$DIR/half1" "$DIR/half2" -o "$DIR/gnu"; }
cat_halves() { cat "$DIR/half1" "$DIR/half2" >"$DIR/cat"; }
run_merge() {
    local half=$((N / 2)) t_gnu t_halves t
    head -n "$half" "$IN" | sort "$@" --parallel="$P" -o "$DIR/half1"
    tail -n +"$((half + 1))" "$IN" | sort "$@" --parallel="$P" -o "$DIR/half2"
    t_halves=$(median_time cat_halves)
    printf '%-48s %s\n' "cat half1 half2 > out" "$(shown "$t_halves")"
    t_gnu=$(median_time gnu_merge "$@")
    printf '%-48s %s\n' "sort -m $* half1 half2" "$(shown "$t_gnu")"
    t=$(median_time gm_merge "$@")
    same merge "$DIR/gnu" "$DIR/gm"
    printf '%-48s %s   %sx sort -m, %sx cat\n' "$(basename "$PROG") merge $* half1 half2" \
        "$(shown "$t")" "$(ratio "$t_gnu" "$t")" "$(ratio "$t" "$t_halves")"
    rm -f "$DIR/half1" "$DIR/half2"
}

for what in $ONLY; do
    case $what in
    field) run_order field -t, -k2,2n ;;
    reverse) run_order reverse -t, -k2,2nr -s ;;
    unique) run_order unique -u -t, -k2,2n ;;
    whole) run_order whole -n ;;
    merge) run_merge -t, -k2,2n ;;
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
