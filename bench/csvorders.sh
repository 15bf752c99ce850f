# bench/csvorders.sh - sourced by bench/records.sh and bench/text.sh: N lines
# `id,ts,payload` (build/bench/gen -c) in a scratch folder, and the timing of a
# sort of them by GNU sort --parallel=$(nproc) against PROG --device=D for each of
# DEVICES, every output compared with GNU sort's (bench/median.sh's medians).
#
# Set before sourcing: N, REPEAT, DEVICES, PROG (the program run), SCRATCH (the
# scratch folder's name); optional: REPEAT_GNU, GEN, DIR, PEERS.
# It defines: IN, DIR, P, HERE, t_cat (cat's time, printed), median_time, same,
# ratio, peer, and run_order NAME OPTIONS..., which prints GNU sort's row and one
# row per device, and leaves the last device's time in t_last.
GEN=${GEN:-build/bench/gen}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -z "${DIR:-}" ]; then
    root=${TMPDIR:-/tmp}
    if [ -d /dev/shm ] && [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -gt $((N / 1000 * 200)) ]; then
        root=/dev/shm
    fi
    DIR=$(mktemp -d "$root/$SCRATCH.XXXXXX")
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
gm_sort() { local d=$1; shift; rm -f "$DIR/gm"; "$PROG" --device="$d" "$@" "$IN" -o "$DIR/gm"; }
peer() { rm -f "$DIR/peer"; PEERS=$PEERS node "$HERE/peers.mjs" "$1" "$IN" "$DIR/peer"; }

export IN DIR P PROG PEERS HERE # for the commands hyperfine runs in a child bash
echo "machine: $P cores, $(uname -m); N=$N lines ($(du -h "$IN" | cut -f1)); median (min-max)" \
    "of $REPEAT$(command -v hyperfine >/dev/null && [ -z "${NO_HYPERFINE:-}" ] && echo " by hyperfine");" \
    "$(date -u +%Y-%m-%d)"
t_cat=$(median_time cat_in)
printf '%-48s %s\n' "cat in > out" "$(shown "$t_cat")"
t_last=
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
        printf '%-48s %s   %sx sort, %sx cat\n' "$(basename "$PROG") --device=$d $*" "$(shown "$t")" \
            "$(ratio "$t_gnu" "$t")" "$(ratio "$t" "$t_cat")"
        t_last=$t
    done
}
