#!/usr/bin/env bash
# bench/iofloor.sh - the output floor of this machine: how fast N bytes of
# gpumerge-like text can be put into a tmpfs file, a disk file and a pipe
# (bench/iofloor's strategies), and, in the same run, what the usual tools do
# with the same bytes: cat FILE > file, cat FILE | cat > /dev/null, dd bs=16M.
# Pipes are timed into two consumers: cat > /dev/null (128 KiB reads) and
# iofloor -C (1 MiB reads). Every row goes into one TSV (iofloor's columns); a
# summary of the best per target follows.
#
# Usage: bench/iofloor.sh [BYTES]    (default 1.1e9, gpumerge's output for 100 M
#        int32 lines)
# Environment: IOFLOOR (the program, default build/bench/iofloor), REPEAT
#        (runs per strategy, median; default 5), TSV (where the table goes,
#        default build/bench/iofloor.tsv), SHM_ROOT (default /dev/shm, or $TMPDIR
#        or /tmp where /dev/shm is too small, as long as it is tmpfs), DISK_ROOT
#        (default $TMPDIR or /tmp where that is not tmpfs, else build/ here).
# Scratch folders are made in SHM_ROOT and DISK_ROOT and removed when the script
# ends, however it ends.
set -euo pipefail

N=${1:-1100000000}
REPEAT=${REPEAT:-5}
IOFLOOR=${IOFLOOR:-build/bench/iofloor}
TSV=${TSV:-build/bench/iofloor.tsv}
avail_kb() { df -Pk "$1" | awk 'NR == 2 { print $4 }'; }
need_kb=$((N / 1024 * 5 / 2)) # the output and the peers' source, with room to spare
if [ -z "${SHM_ROOT:-}" ]; then
    for d in /dev/shm "${TMPDIR:-/tmp}" /tmp; do
        if [ -d "$d" ] && [ "$(stat -f -c %T "$d")" = tmpfs ] && [ "$(avail_kb "$d")" -gt "$need_kb" ]; then
            SHM_ROOT=$d
            break
        fi
    done
    [ -n "${SHM_ROOT:-}" ] || { echo "iofloor.sh: no tmpfs with $need_kb kB free (set SHM_ROOT)" >&2; exit 2; }
fi
if [ -z "${DISK_ROOT:-}" ]; then
    DISK_ROOT=${TMPDIR:-/tmp}
    if [ "$(stat -f -c %T "$DISK_ROOT")" = tmpfs ]; then
        DISK_ROOT=build
    fi
fi
export LC_ALL=C
[ -x "$IOFLOOR" ] || { echo "iofloor.sh: no $IOFLOOR (make $IOFLOOR)" >&2; exit 2; }
mkdir -p "$(dirname "$TSV")" "$DISK_ROOT"
printf 'target\tfs\tstrategy\tthreads\tblock\tmedian_s\tGBps\tmin_s\tmax_s\tnote\n' >"$TSV"

shm= disk=
trap 'rm -rf "$shm" "$disk"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
shm=$(mktemp -d "$SHM_ROOT/iofloor.XXXXXX")
disk=$(mktemp -d "$DISK_ROOT/iofloor.XXXXXX")

echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(uname -r), $N bytes, median of $REPEAT"
echo "== tmpfs: $shm ($(stat -f -c %T "$shm")); disk: $disk ($(stat -f -c %T "$disk"))"
grep -E '^(MemTotal|MemAvailable|Dirty|Writeback):' /proc/meminfo | tr -s ' ' | paste -sd ' '
echo "vm.dirty_ratio $(cat /proc/sys/vm/dirty_ratio), dirty_background_ratio" \
    "$(cat /proc/sys/vm/dirty_background_ratio), dirty_expire_centisecs" \
    "$(cat /proc/sys/vm/dirty_expire_centisecs)"

FILE_S=write,falloc-write,overwrite,pwrite,mmap,mmap-huge,mmap-falloc,mmap-populate
FILE_S=$FILE_S,mmap-huge-populate
PIPE_S=write,write-bigpipe,vmsplice,vmsplice-bigpipe,vmsplice-fresh
run() { "$IOFLOOR" -n "$N" -r "$REPEAT" -o "$TSV" "$@"; }

# ---------------------------------------------------------------- the peers

"$IOFLOOR" -g "$shm/src" -n "$N"
bytes=$(stat -c %s "$shm/src")

# peer LABEL NAME DEST CMD...: median of REPEAT runs of CMD (DEST removed before
# each, outside the timing, and compared with the source after the last).
peer() {
    local label=$1 name=$2 dest=$3 times=() t0 t1
    shift 3
    for _ in $(seq "$REPEAT"); do
        [ "$dest" = - ] || rm -f "$dest"
        t0=$(date +%s.%N)
        "$@"
        t1=$(date +%s.%N)
        times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')")
    done
    local note="-"
    if [ "$dest" != - ]; then
        cmp -s "$shm/src" "$dest" || { echo "iofloor.sh: $name: wrong bytes" >&2; exit 1; }
        note="read back ok"
        rm -f "$dest"
    fi
    printf '%s\n' "${times[@]}" | sort -g | awk -v l="$label" -v n="$name" -v b="$bytes" \
        -v note="$note" '{ a[NR] = $1 } END {
            m = a[int((NR + 1) / 2)]
            fs = l == "tmpfs" ? "tmpfs" : l == "disk" ? "disk" : "pipe"
            printf "%s\t%s\tpeer: %s\t1\t0\t%.4f\t%.3f\t%.4f\t%.4f\t%s\n", l, fs, n, m,
                b / m / 1e9, a[1], a[NR], note }' >>"$TSV"
}
src=$shm/src
cat_to() { cat "$src" >"$1"; }
dd_to() { dd if="$src" of="$1" bs=16M status=none; }
cat_cat() { cat "$src" | cat >/dev/null; }
cat_1m() { cat "$src" | "$IOFLOOR" -C -b 1M 2>/dev/null; }
peer tmpfs "cat FILE > file" "$shm/peer" cat_to "$shm/peer"
peer tmpfs "dd bs=16M" "$shm/peer" dd_to "$shm/peer"
sync -f "$disk"
peer disk "cat FILE > file" "$disk/peer" cat_to "$disk/peer"
peer disk "dd bs=16M" "$disk/peer" dd_to "$disk/peer"
peer pipe-cat "cat FILE | cat > /dev/null" - cat_cat
peer pipe-1M "cat FILE | 1 MiB reader" - cat_1m

# ---------------------------------------------------------------- iofloor

echo; run -l tmpfs -s "$FILE_S" "$shm/out"
echo; run -l pipe-cat -s "$PIPE_S" - | cat >/dev/null
sync -f "$disk"
echo; run -l disk -s "$FILE_S" "$disk/out"
# The second consumer reads 1 MiB at a time and counts what came: every byte the
# writer's timed runs sent.
echo; run -l pipe-1M -s "$PIPE_S" - 2>"$shm/writer.err" | "$IOFLOOR" -C -b 1M 2>"$shm/reader.err"
cat "$shm/writer.err"
sent=$(sed -n 's/^iofloor: wrote \([0-9]*\) bytes.*/\1/p' "$shm/writer.err")
got=$(sed -n 's/^iofloor -C: read \([0-9]*\) bytes.*/\1/p' "$shm/reader.err")
[ "$sent" = "$got" ] || { echo "iofloor.sh: the 1 MiB reader got $got bytes of $sent" >&2; exit 1; }
echo "the 1 MiB reader got all $got bytes"

# ---------------------------------------------------------------- summary

echo
echo "== every row (GB/s = 1e9 bytes/s): $TSV"
awk -F'\t' 'NR > 1 && $6 != "n/a" {
        b = $5 == 0 ? "-" : $5 / 1048576 "M"
        printf "%-9s %-28s %3s %5s %8s %7s\n", $1, $3, $4, b, $6, $7 }' "$TSV"
echo
# The references are left out of the floor: overwrite (the file's pages already
# there) and vmsplice from reused pages (a reader that splices them on, as pv or
# tee do, would see them change).
echo "== the floor per target (the references left out), and the fastest peer"
awk -F'\t' 'NR > 1 && $6 != "n/a" && $10 !~ /^reference/ {
        peer = $3 ~ /^peer:/
        k = $1 SUBSEP peer
        if (!(k in best) || $7 + 0 > best[k] + 0) { best[k] = $7; what[k] = $3 " T=" $4 " block=" $5 }
        labels[$1] = 1 }
    END { for (l in labels)
              printf "%-9s floor %6s GB/s (%s), 1.3x of it: %.3f s; peer %6s GB/s (%s)\n", l,
                     best[l SUBSEP 0], what[l SUBSEP 0], 1.3 * n / best[l SUBSEP 0] / 1e9,
                     best[l SUBSEP 1], what[l SUBSEP 1] }' n="$bytes" "$TSV" | sort
echo "for $bytes bytes; the fastest reference per target:"
awk -F'\t' '$10 ~ /^reference/ && $6 != "n/a" && (!($1 in best) || $7 + 0 > best[$1] + 0) {
        best[$1] = $7; what[$1] = $3 " block=" $5 }
    END { for (l in best) printf "%-9s %6s GB/s (%s)\n", l, best[l], what[l] }' "$TSV" | sort
