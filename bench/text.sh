#!/usr/bin/env bash
# bench/text.sh - gpusort's text orders end to end: N lines `id,ts,payload` (about 47
# bytes; build/bench/gen -c) sorted file to file, against `LC_ALL=C sort
# --parallel=$(nproc)`, cat, and, where asked, the dataframe peers ordering the
# same lines by their bytes (DuckDB and Polars from npm, bench/peers.mjs; pyarrow,
# bench/arrow_cupy.py --lines). Every output is compared with GNU sort's; each
# time is the median of REPEAT runs with its range (bench/median.sh).
#
#   bytes    (no option: whole-line byte order)
#   field    -t, -k3,3 -s
#   fold     -f
#   version  -V
#   month    -M
#   dict     -d
#
# Usage: bench/text.sh [N]    environment: DEVICES (default "cpu"), REPEAT (5),
#        REPEAT_GNU (GNU sort's runs, default REPEAT), GPUSORT (./gpusort), ONLY (a
#        subset of: bytes field fold version month dict peers arrow), PEERS (a folder
#        whose node_modules holds @duckdb/node-api and nodejs-polars, as
#        bench/records.sh says), DIR (a scratch folder to use and keep).
set -euo pipefail

N=${1:-5000000}
DEVICES=${DEVICES:-cpu}
REPEAT=${REPEAT:-5}
ONLY=${ONLY:-bytes field fold version month dict peers}
GPUSORT=${GPUSORT:-./gpusort}
GEN=${GEN:-build/bench/gen}
HERE=$(cd "$(dirname "$0")" && pwd)
if [ -z "${DIR:-}" ]; then
    root=${TMPDIR:-/tmp}
    if [ -d /dev/shm ] && [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -gt $((N / 1000 * 200)) ]; then
        root=/dev/shm
    fi
    DIR=$(mktemp -d "$root/gpumerge-text.XXXXXX")
    trap 'rm -rf "$DIR"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
fi
export LC_ALL=C
mkdir -p "$DIR"
IN=$DIR/in.$N.csv
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
gm_sort() { local d=$1; shift; rm -f "$DIR/gm"; "$GPUSORT" --device="$d" "$@" "$IN" -o "$DIR/gm"; }
peer() { PEERS=$PEERS node "$HERE/peers.mjs" "$1" "$IN" "$DIR/peer"; }
arrow() { python3 "$HERE/arrow_cupy.py" --lines "$IN" "$DIR/peer" >"$DIR/arrow.log"; }

export IN DIR P GPUSORT PEERS HERE
echo "machine: $P cores, $(uname -m); N=$N lines ($(du -h "$IN" | cut -f1)); median (min-max)" \
    "of $REPEAT$(command -v hyperfine >/dev/null && [ -z "${NO_HYPERFINE:-}" ] && echo " by hyperfine");" \
    "$(date -u +%Y-%m-%d)"
t_cat=$(median_time cat_in)
printf '%-40s %s\n' "cat in > out" "$(shown "$t_cat")"
run_order() { # run_order NAME OPTIONS...
    local name=$1
    shift
    local t_gnu
    t_gnu=$(median_time gnu_sort "$@")
    printf '%-40s %s\n' "sort $* --parallel=$P" "$(shown "$t_gnu")"
    for d in $DEVICES; do
        local t
        t=$(median_time gm_sort "$d" "$@")
        same "$name" "$DIR/gnu" "$DIR/gm"
        printf '%-40s %s   %sx sort, %sx cat\n' "gpusort --device=$d $*" "$(shown "$t")" \
            "$(ratio "$t_gnu" "$t")" "$(ratio "$t" "$t_cat")"
        [ "$name" = bytes ] && t_gm_bytes=$t
    done
    [ "$name" = bytes ] && cp "$DIR/gnu" "$DIR/gnu.bytes"
    return 0
}
peers_bytes() { # the peers against GNU sort's byte order (run first when absent)
    [ -n "$t_gm_bytes" ] || run_order bytes
    local e t
    for e in "$@"; do
        if [ "$e" = arrow ]; then
            t=$(median_time arrow)
        else
            t=$(median_time peer "$e-bytes")
        fi
        same "$e" "$DIR/gnu.bytes" "$DIR/peer"
        printf '%-40s %s   %sx gpusort --device=%s\n' "$e (read, sort by bytes, write)" \
            "$(shown "$t")" "$(ratio "$t" "$t_gm_bytes")" "${DEVICES##* }"
    done
}
t_gm_bytes=
for what in $ONLY; do
    case $what in
    bytes) run_order bytes ;;
    field) run_order field -t, -k3,3 -s ;;
    fold) run_order fold -f ;;
    version) run_order version -V ;;
    month) run_order month -M ;;
    dict) run_order dict -d ;;
    peers) [ -n "${PEERS:-}" ] && peers_bytes duckdb polars ;;
    arrow) peers_bytes arrow ;;
    esac
done
