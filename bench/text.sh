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
PROG=${GPUSORT:-./gpusort}
SCRATCH=gpumerge-text
. "$(dirname "$0")/csvorders.sh"
arrow() { python3 "$HERE/arrow_cupy.py" --lines "$IN" "$DIR/peer" >"$DIR/arrow.log"; }

t_gm_bytes=
bytes_order() { # byte order, kept for the peers: the last device's time, sort's output
    run_order bytes
    t_gm_bytes=$t_last
    cp "$DIR/gnu" "$DIR/gnu.bytes"
}
peers_bytes() { # the peers against GNU sort's byte order (run first when absent)
    [ -n "$t_gm_bytes" ] || bytes_order
    local e t
    for e in "$@"; do
        if [ "$e" = arrow ]; then
            t=$(median_time arrow)
        else
            t=$(median_time peer "$e-bytes")
        fi
        same "$e" "$DIR/gnu.bytes" "$DIR/peer"
        printf '%-48s %s   %sx gpusort --device=%s\n' "$e (read, sort by bytes, write)" \
            "$(shown "$t")" "$(ratio "$t" "$t_gm_bytes")" "${DEVICES##* }"
    done
}
for what in $ONLY; do
    case $what in
    bytes) bytes_order ;;
    field) run_order field -t, -k3,3 -s ;;
    fold) run_order fold -f ;;
    version) run_order version -V ;;
    month) run_order month -M ;;
    dict) run_order dict -d ;;
    peers) if [ -n "${PEERS:-}" ]; then peers_bytes duckdb polars; fi ;;
    arrow) peers_bytes arrow ;;
    esac
done
