#!/bin/bash
# bench/mpi.sh - gpumerge-mpi against gpumerge and GNU sort on one host: sort of
# integer lines (the integer path) and of keyed lines (the records path), merge
# of sorted halves; each with 1, 2 and 4 ranks (RANKS), best of REPEAT
# wall-clock runs, every output compared with LC_ALL=C sort's. DEVICE (cpu,
# auto or gpu) is every run's --device. mpirun's own start-up is timed on an
# empty input and shown on a line of its own.
#
# Usage: bash bench/mpi.sh [LINES]   (default 4000000; run from the repository)
set -euo pipefail
N=${1:-4000000}
REPEAT=${REPEAT:-3}
RANKS=${RANKS:-"1 2 4"}
DEVICE=${DEVICE:-cpu}
MPIRUN=${MPIRUN:-"mpirun --allow-run-as-root --oversubscribe -q --bind-to none"}
G=${GPUMERGE:-$PWD/gpumerge}
M=${GPUMERGE_MPI:-$PWD/gpumerge-mpi}
dir=$(mktemp -d "${TMPDIR:-/tmp}/gpumerge-mpi-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"

awk -v n="$N" 'BEGIN{srand(11); for(i=0;i<n;i++) printf "%d\n", int(rand()*2e9)-1e9}' > int
awk -v n="$((N / 2))" 'BEGIN{srand(12); for(i=0;i<n;i++) printf "%d,w%d,%d\n", int(rand()*1000), int(rand()*50), int(rand()*1e6)}' > key
LC_ALL=C sort -n int > int.sorted
LC_ALL=C sort -t, -k2,2 -k3,3n key > key.sorted
split -n l/2 int.sorted half.
: > empty

best() { # best wall-clock seconds of REPEAT runs of "$@"
    local b=
    for _ in $(seq "$REPEAT"); do
        local s e
        s=$(date +%s.%N)
        "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
        e=$(date +%s.%N)
        b=$(awk -v s="$s" -v e="$e" -v b="$b" 'BEGIN { d = e - s; print (b == "" || d < b) ? d : b }')
    done
    printf '%.3f' "$b"
}

row() { # NAME REFERENCE-FILE ARGS...
    local name=$1 ref=$2
    shift 2
    printf '| %s | %s |' "$name" "$(best "$G" --device="$DEVICE" "$@")"
    for p in $RANKS; do
        $MPIRUN -np "$p" "$M" --device="$DEVICE" "$@" -o out
        [ -z "$ref" ] || cmp -s out "$ref" || { echo "differs: -np $p $*" >&2; exit 1; }
        printf ' %s |' "$(best $MPIRUN -np "$p" "$M" --device="$DEVICE" "$@" -o out)"
    done
    echo
}

echo "$N integer lines ($(stat -c %s int) bytes), $((N / 2)) keyed lines ($(stat -c %s key) bytes),"
echo "$(nproc) cores, --device=$DEVICE, best of $REPEAT"
printf '\n| command | gpumerge |'
for p in $RANKS; do printf ' -np %s |' "$p"; done
printf '\n|---|---:|'
for p in $RANKS; do printf -- '---:|'; done
echo
row "sort (integers)" int.sorted sort int
row "sort -t, -k2,2 -k3,3n (records)" key.sorted sort -t, -k2,2 -k3,3n key
row "merge of two sorted halves" int.sorted merge half.aa half.ab
row "sort of an empty file (start-up)" "" sort empty
printf '\nLC_ALL=C sort -n int: %s s\n' "$(best env LC_ALL=C sort -n int -o out)"
