#!/usr/bin/env bash
# bench/e2e.sh - end-to-end benchmark of gpumerge against GNU sort and cat.
#
# Generates N random int32 lines (and two sorted files of N/2 lines), then times,
# in the same run and on the same files:
#   merge:  gpumerge merge a b    vs  LC_ALL=C sort -m -n a b   and  cat a b > out
#   sort:   gpumerge sort r       vs  LC_ALL=C sort -n --parallel=$(nproc) r
# Every output is compared with sort's. Each time is the median of REPEAT runs, with
# their range (min-max) beside it; hyperfine times them where it is installed
# (bench/median.sh).
#
# Usage: bench/e2e.sh [N]     environment: DEVICES (any of cpu gpu auto, default cpu),
#        REPEAT (default 5), REPEAT_GNU (GNU sort's runs, default REPEAT), GEN (the
#        input generator, default build/bench/gen, else shuf), GPUMERGE, DIR (a scratch folder to use and keep, inputs
#        reused from run to run). Without DIR the inputs and outputs go to a fresh
#        folder in SCRATCH_ROOT (default /dev/shm when it has room, so that every
#        command writes to memory and disk write-back does not add noise to whichever
#        command runs when it kicks in; else $TMPDIR or /tmp), removed when the
#        script ends, however it ends.
set -euo pipefail

N=${1:-10000000}
DEVICES=${DEVICES:-${DEVICE:-cpu}}
REPEAT=${REPEAT:-5}
if [ -z "${DIR:-}" ]; then
    root=${SCRATCH_ROOT:-}
    if [ -z "$root" ]; then
        root=${TMPDIR:-/tmp}
        if [ -d /dev/shm ] && [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -gt $((N / 1000 * 150)) ]; then
            root=/dev/shm
        fi
    fi
    DIR=$(mktemp -d "$root/gpumerge-bench.XXXXXX")
    trap 'rm -rf "$DIR"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
fi
GPUMERGE=${GPUMERGE:-./gpumerge}
export LC_ALL=C
mkdir -p "$DIR"

GEN=${GEN:-build/bench/gen}
gen() { # gen COUNT FILE: random signed 32-bit integers
    if [ -x "$GEN" ]; then
        "$GEN" "$1" >"$2"
    else
        shuf -r -n "$1" -i 0-4294967295 | awk '{ print $1 - 2147483648 }' >"$2"
    fi
}
if [ ! -s "$DIR/r.$N" ]; then
    echo "generating $N random lines in $DIR"
    gen "$N" "$DIR/r.$N"
    half=$((N / 2))
    head -n "$half" "$DIR/r.$N" | sort -n --parallel="$(nproc)" >"$DIR/a.$N"
    tail -n +"$((half + 1))" "$DIR/r.$N" | sort -n --parallel="$(nproc)" >"$DIR/b.$N"
fi
A=$DIR/a.$N B=$DIR/b.$N R=$DIR/r.$N OUT=$DIR/out
export A B R OUT GPUMERGE # for the commands hyperfine runs in a child bash

. "$(dirname "$0")/median.sh"
# median_time CMD...: median wall time of REPEAT runs (GNU sort's commands:
# REPEAT_GNU runs), in seconds
median_time() {
    local n=$REPEAT
    case $1 in sort_*) n=${REPEAT_GNU:-$REPEAT} ;; esac
    median_runs "$n" "$@"
}

check_same() { # check_same WHAT EXPECTED ACTUAL
    if ! cmp -s "$2" "$3"; then
        echo "MISMATCH: $1 output differs from GNU sort" >&2
        exit 1
    fi
}

cat_ab() { cat "$A" "$B" >"$OUT.cat"; }
sort_m() { sort -m -n "$A" "$B" -o "$OUT.sortm"; }
gm_merge() { "$GPUMERGE" merge --device="$1" "$A" "$B" -o "$OUT.gm"; }
sort_n() { sort -n --parallel="$(nproc)" "$R" -o "$OUT.sortn"; }
gm_sort() { "$GPUMERGE" sort --device="$1" "$R" -o "$OUT.gms"; }

t_cat=$(median_time cat_ab)
t_sortm=$(median_time sort_m)
t_sortn=$(median_time sort_n)
declare -A t_gm t_gms
for d in $DEVICES; do
    t_gm[$d]=$(median_time gm_merge "$d")
    check_same merge "$OUT.sortm" "$OUT.gm"
    t_gms[$d]=$(median_time gm_sort "$d")
    check_same sort "$OUT.sortn" "$OUT.gms"
done

ratio() { awk -v a="$(med "$1")" -v b="$(med "$2")" 'BEGIN { printf "%.2f", a / b }'; }
echo
echo "machine: $(nproc) cores, $(uname -m); N=$N lines; median (min-max) of $REPEAT" \
    "$(command -v hyperfine >/dev/null && [ -z "${NO_HYPERFINE:-}" ] && echo "by hyperfine");" \
    "$(date -u +%Y-%m-%d)"
printf '%-40s %s\n' "command" "seconds"
printf '%-40s %s\n' "cat a b > out" "$(shown "$t_cat")"
printf '%-40s %s\n' "sort -m -n a b" "$(shown "$t_sortm")"
printf '%-40s %s\n' "sort -n --parallel=$(nproc) r" "$(shown "$t_sortn")"
for d in $DEVICES; do
    printf '%-40s %s\n' "gpumerge merge --device=$d a b" "$(shown "${t_gm[$d]}")"
    printf '%-40s %s\n' "gpumerge sort --device=$d r" "$(shown "${t_gms[$d]}")"
done
echo
for d in $DEVICES; do
    echo "--device=$d: merge $(ratio "$t_sortm" "${t_gm[$d]}")x faster than sort -m -n and $(ratio "${t_gm[$d]}" "$t_cat")x the time of cat;" \
        "sort $(ratio "$t_sortn" "${t_gms[$d]}")x faster than sort -n --parallel=$(nproc)"
done
