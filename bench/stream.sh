#!/usr/bin/env bash
# bench/stream.sh - the streaming data plane's targets, each against its peer in
# the same run and on the same files:
#   merge of two sorted files of N lines each: time and peak RSS (/usr/bin/time
#     %M) of gpumerge merge, of sort -m -n, and of BASE's merge when BASE names
#     another gpumerge binary (the in-memory merge to compare against);
#   merge of K (64) sorted files of N/K lines each, the fan-in's case: one pass
#     where sort -m makes temporary runs 16 at a time (and BASE, where given);
#   sort of N random lines under ulimit -v $VLIMIT (KB) with no options: gpumerge
#     against sort -n under the same limit;
#   cat r | gpumerge sort -  against  gpumerge sort r (and BASE's sort);
#   yes 5 | gpumerge merge - | head -n 3  (returns at once).
# Every output is compared with GNU sort's. Times are medians of REPEAT runs
# (GNU sort under the limit runs REPEAT_GNU times).
#
# Usage: bench/stream.sh [N]    environment: GPUMERGE, BASE, K (64), REPEAT (3),
#        REPEAT_GNU (1), VLIMIT (250000), DIR (scratch folder, default in /dev/shm
#        when it has room, else .bench); the folder is removed at the end unless
#        KEEP=1.
set -euo pipefail

N=${1:-20000000}
K=${K:-64}
REPEAT=${REPEAT:-3}
REPEAT_GNU=${REPEAT_GNU:-1}
VLIMIT=${VLIMIT:-250000}
GPUMERGE=$(realpath "${GPUMERGE:-./gpumerge}")
BASE=${BASE:+$(realpath "$BASE")}
if [ -z "${DIR:-}" ]; then
    DIR=.bench/stream
    if [ -d /dev/shm ] && [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -gt $((N / 1000 * 200)) ]; then
        DIR=/dev/shm/gpumerge-stream-bench
    fi
fi
export LC_ALL=C
mkdir -p "$DIR"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$DIR"' EXIT
cd "$DIR"

gen() { shuf -r -n "$1" -i 0-4294967295 | awk '{ print $1 - 2147483648 }' >"$2"; }
if [ ! -s "r.$N" ]; then
    echo "generating 3 x $N random lines in $DIR" >&2
    gen "$N" "r.$N"
    gen "$N" a.tmp && sort -n a.tmp >"a.$N" && rm a.tmp
    gen "$N" b.tmp && sort -n b.tmp >"b.$N" && rm b.tmp
fi
A=a.$N B=b.$N R=r.$N

# run REPS NAME CMD...: median wall seconds and the largest peak RSS (MB) of REPS
# runs, as "SECONDS RSS"
run() {
    local reps=$1 name=$2
    shift 2
    local times=() rss=0
    for _ in $(seq "$reps"); do
        /usr/bin/time -f '%e %M' -o time.out "$@"
        read -r t m <time.out
        times+=("$t")
        [ "$m" -gt "$rss" ] && rss=$m
    done
    local med
    med=$(printf '%s\n' "${times[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    printf '%-58s %8s %8d\n' "$name" "$med" $((rss / 1024)) >>table
}
same() { cmp -s "$1" "$2" || { echo "MISMATCH: $3" >&2; exit 1; }; }

: >table
sort -m -n "$A" "$B" >ref.merge
run "$REPEAT" "sort -m -n a b (2 x $N lines)" sort -m -n "$A" "$B" -o out.sortm
run "$REPEAT" "gpumerge merge a b" "$GPUMERGE" merge "$A" "$B" -o out.gm
same ref.merge out.gm "gpumerge merge"
if [ -n "$BASE" ]; then
    run "$REPEAT" "base gpumerge merge a b (in memory)" "$BASE" merge "$A" "$B" -o out.base
    same ref.merge out.base "base merge"
fi
rm -f ref.merge out.*

# K sorted files, each a K-th of r
if [ ! -s "k$K.1" ]; then
    split -n "l/$K" -d -a 3 "$R" part.
    i=0
    for f in part.*; do i=$((i + 1)); sort -n "$f" >"k$K.$i"; rm "$f"; done
fi
sort -m -n k$K.* >ref.merge
run "$REPEAT" "sort -m -n k1 .. k$K ($K x $((N / K)) lines)" bash -c "sort -m -n k$K.* -o out.sortm"
run "$REPEAT" "gpumerge merge k1 .. k$K" bash -c "'$GPUMERGE' merge k$K.* -o out.gm"
same ref.merge out.gm "gpumerge merge of $K"
if [ -n "$BASE" ]; then
    run "$REPEAT" "base gpumerge merge k1 .. k$K" bash -c "'$BASE' merge k$K.* -o out.base"
    same ref.merge out.base "base merge of $K"
fi
rm -f ref.merge out.*

sort -n "$R" >ref.sort
run "$REPEAT_GNU" "ulimit -v $VLIMIT; sort -n r ($N lines)" \
    bash -c "ulimit -v $VLIMIT && sort -n $R -o out.sortn"
same ref.sort out.sortn "sort -n under ulimit"
run "$REPEAT" "ulimit -v $VLIMIT; gpumerge sort r" \
    bash -c "ulimit -v $VLIMIT && '$GPUMERGE' sort $R -o out.gm"
same ref.sort out.gm "gpumerge sort under ulimit"
run "$REPEAT" "gpumerge sort r" "$GPUMERGE" sort "$R" -o out.gm
same ref.sort out.gm "gpumerge sort"
if [ -n "$BASE" ]; then
    run "$REPEAT" "base gpumerge sort r (in memory)" "$BASE" sort "$R" -o out.base
    same ref.sort out.base "base sort"
fi
run "$REPEAT" "cat r | gpumerge sort -" bash -c "cat $R | '$GPUMERGE' sort - -o out.gm"
same ref.sort out.gm "gpumerge sort -"
rm -f ref.sort out.*
run "$REPEAT" "yes 5 | gpumerge merge - | head -n 3" \
    bash -c "yes 5 | '$GPUMERGE' merge - | head -n 3 >/dev/null"

echo "machine: $(nproc) cores, $(uname -m), $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1e6 }' /proc/meminfo); $(date -u '+%Y-%m-%d %H:%M UTC'); median of $REPEAT ($REPEAT_GNU for sort under the limit)"
printf '%-58s %8s %8s\n' "command" "seconds" "peak MB"
cat table
