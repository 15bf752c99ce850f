#!/usr/bin/env bash
# bench/gpu.sh - the GPU end to end against the CPU engine and cat, each pair in
# the same run and on the same files (in memory: /dev/shm when it has room):
#   start-up:  a 3-line sort under --device=cpu, auto and gpu (median of 11 runs);
#   pipes:     cat r | gpumerge sort -  against  gpumerge sort r, and
#              gpumerge sort r | cat  against  cat r | cat  (the pipe alone);
#   large:     N_BIG lines (int32 keys, then int64 keys with -w) sorted by
#              --device=gpu and --device=cpu (REPEAT_BIG runs each).
# Outputs are compared with each other (the CPU engine is the reference: e2e.sh
# checks it against GNU sort). Times are medians.
#
# Usage: bench/gpu.sh [N]    environment: DEVICES (default "cpu gpu auto"; cpu
#        first), GPUMERGE, GEN, REPEAT (3), N_BIG (0 = skip; 1000000000 for 1 G
#        lines), BIG_KEYS ("int32 int64": the widths of the large runs), REPEAT_BIG
#        (1), DIR.
set -euo pipefail

N=${1:-100000000}
DEVICES=${DEVICES:-cpu gpu auto}
REPEAT=${REPEAT:-3}
N_BIG=${N_BIG:-0}
BIG_KEYS=${BIG_KEYS:-int32 int64}
REPEAT_BIG=${REPEAT_BIG:-1}
GPUMERGE=$(realpath "${GPUMERGE:-./gpumerge}")
GEN=$(realpath "${GEN:-build/bench/gen}")
export LC_ALL=C
if [ -z "${DIR:-}" ]; then
    root=${TMPDIR:-/tmp}
    need=$(( (N > N_BIG ? N : N_BIG) / 1000 * 90 ))
    if [ -d /dev/shm ] && [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -gt "$need" ]; then
        root=/dev/shm
    fi
    DIR=$(mktemp -d "$root/gpumerge-gpu.XXXXXX")
    trap 'rm -rf "$DIR"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
fi

. "$(dirname "$0")/median.sh"
export DIR GPUMERGE # for the commands hyperfine runs in a child bash
median() { shown "$(median_runs "$REPEAT" "$@")"; } # of REPEAT runs: median (min-max)
same() { cmp -s "$1" "$2" || { echo "MISMATCH: $1 and $2 differ" >&2; exit 1; }; }
row() { printf '%-58s %s\n' "$1" "$2"; }

echo "machine: $(nproc) cores; $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1); $(date -u +%Y-%m-%d)"

# --- start-up
printf '3\n1\n2\n' >"$DIR/three"
three() { "$GPUMERGE" sort --device="$1" "$DIR/three" >/dev/null; }
REPEAT_SAVED=$REPEAT REPEAT=11
for d in $DEVICES; do row "3-line sort --device=$d" "$(median three "$d")"; done
REPEAT=$REPEAT_SAVED

# --- pipes
R=$DIR/r
"$GEN" "$N" >"$R"
export R
file_sort() { "$GPUMERGE" sort --device="$1" "$R" -o "$DIR/out.$1"; }
pipe_in() { cat "$R" | "$GPUMERGE" sort --device="$1" - -o "$DIR/pin.$1"; }
pipe_out() { "$GPUMERGE" sort --device="$1" "$R" | cat >"$DIR/pout.$1"; }
cat_cat() { cat "$R" | cat >"$DIR/catcat"; }
echo "N=$N lines, median (min-max) of $REPEAT"
row "cat r | cat > out" "$(median cat_cat)"
for d in $DEVICES; do
    row "gpumerge sort --device=$d r -o out" "$(median file_sort "$d")"
    row "cat r | gpumerge sort --device=$d - -o out" "$(median pipe_in "$d")"
    row "gpumerge sort --device=$d r | cat > out" "$(median pipe_out "$d")"
    same "$DIR/out.cpu" "$DIR/out.$d"
    same "$DIR/out.cpu" "$DIR/pin.$d"
    same "$DIR/out.cpu" "$DIR/pout.$d"
done
rm -f "$R" "$DIR"/out.* "$DIR"/pin.* "$DIR"/pout.* "$DIR/catcat"

# --- large
if [ "$N_BIG" -gt 0 ]; then
    REPEAT=$REPEAT_BIG
    for keys in $BIG_KEYS; do
        w=
        [ "$keys" = int64 ] && w=-w
        "$GEN" $w "$N_BIG" >"$R"
        echo "N_BIG=$N_BIG lines ($keys keys), median (min-max) of $REPEAT"
        for d in $DEVICES; do
            [ "$d" = auto ] && continue
            row "gpumerge sort --device=$d r -o out" "$(median file_sort "$d")"
            same "$DIR/out.cpu" "$DIR/out.$d"
        done
        rm -f "$R" "$DIR"/out.*
    done
fi
