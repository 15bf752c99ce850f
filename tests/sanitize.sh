#!/usr/bin/env bash
# tests/sanitize.sh - compute-sanitizer (memcheck, racecheck, synccheck) over every
# GPU kernel: gpumerge merge and sort with --device=gpu, for each --kernel, key
# width and direction, with -u, on small inputs whose sizes straddle the tiles.
# Each run is one process (Criterion's forked test processes are not followed by
# the sanitizer), and its output is checked against GNU sort too. The paths the
# small sizes would not pick run in gpumerge_forced, the test build of gpumerge
# whose leading options force them (tests/gpumerge_forced.c).
#
# The sort's text path (the kernels of cuda/text_parse.cu and text_format.cu) runs
# in every sort above, files being its input, and on its own below: blanks, signs,
# leading zeros, CRLF, blank lines, a last line without its newline, int64 keys, -z, -r,
# -u, its copies forced into small pieces (under --strict, which takes those
# forms), the same lines outside --strict (the device declines them and the
# records path sorts them, as sort -n does), and a declined line under --strict
# (the run then takes the CPU's path and exits 2 with the line's message).
#
# The kernels' key-value forms (the records path's sort of key prefixes and line
# indices), which no command line reaches, run in gpupairs (tests/gpupairs.c): each
# key type, kernel and forced path on small cases, checked against the host.
#
# The records path's sort on the device runs on lines of fields (id,ts,payload with
# shared timestamps; numbers, units, words, CRLF, blank lines, NULs with -z) under
# several orders: as they come (the text in device memory, cuda/resident.cu), the
# same with small staging and output pieces forced, and with small blocks, staging
# pieces and budget forced (the chunk sort of cuda/records.cu: many blocks a chunk,
# several chunks and runs), each output checked against sort's.
#
# Usage: tests/sanitize.sh [TOOL...]    (default: memcheck racecheck synccheck)
#        env: GPUMERGE, GPUMERGE_FORCED, GPUPAIRS (the binaries), SAN_SEED,
#             SAN_KERNELS (default "basic tiled tiled4 tiledp1 tiledp8 circular circular3"),
#             SAN_PARTS (default "integer text records pairs": which of them run)
set -euo pipefail
G=${GPUMERGE:-./gpumerge}
GF=${GPUMERGE_FORCED:-build/tests/gpumerge_forced}
GP=${GPUPAIRS:-build/tests/gpupairs}
SAN=${SANITIZER:-compute-sanitizer}
tools=("$@")
[ ${#tools[@]} -gt 0 ] || tools=(memcheck racecheck synccheck)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export LC_ALL=C

# int32 and int64 inputs: 3 sorted runs (ascending and descending) and one unsorted.
# Fresh inputs every run; the seed is printed so a failure can be replayed
# (SAN_SEED=N tests/sanitize.sh).
seed=${SAN_SEED:-$RANDOM}
echo "inputs from seed $seed"
# A key in eight is the largest, one the smallest (stretches of keys equal to the
# one that sorts last, which the block sort pads with), printed as text, since
# awk's numbers are doubles.
gen() { # gen COUNT WIDE FILE
    seed=$((seed + 1))
    awk -v n="$1" -v wide="$2" -v seed="$seed" 'BEGIN { srand(seed);
        top = wide ? "9223372036854775807" : "2147483647";
        bottom = wide ? "-9223372036854775808" : "-2147483648";
        for (i = 0; i < n; i++) {
            x = rand();
            if (x < 0.125) { print top; continue }
            if (x < 0.25) { print bottom; continue }
            v = int((rand() - 0.5) * 200000);
            if (wide) v = v * 4294967296 + int(rand() * 1000);
            if (v == 0) v = 0; # no "-0": our output is canonical, sort echoes its input
            printf "%.0f\n", v } }' >"$3"
}
for w in 0 1; do
    gen 40009 $w "$dir/r$w" # 5 and 9 block-sort tiles: two- and four-way passes run
    gen 1919 $w "$dir/a$w"
    gen 3841 $w "$dir/b$w"
    gen 700 $w "$dir/c$w"
    for f in a b c; do
        sort -n "$dir/$f$w" >"$dir/$f$w.up"
        sort -n -r "$dir/$f$w" >"$dir/$f$w.down"
    done
done

# The text path's inputs: a messy file of 30000 lines (tiles of 4 KiB, formats
# of 2048 keys), its -z form, a short one without its last newline, a bad one.
awk -v seed="$seed" 'BEGIN { srand(seed); split("+5|007|-0| 12 |\t-3\t|4\r|||9223372036854775807|-9223372036854775808|+000000000000000000000042", f, "|");
    for (i = 0; i < 30000; i++) {
        x = rand();
        if (x < 0.1) { print f[1 + int(rand() * 11)]; continue }
        printf "%d\n", int((rand() - 0.5) * 4000000000) } }' >"$dir/t"
tr '\n\0' '\0\n' <"$dir/t" >"$dir/tz"
printf '8\n-1\n 2' >"$dir/t2"
printf '1\n2\nx1\n' >"$dir/tbad"

# The records path's inputs: events whose timestamps many lines share, lines of
# mixed fields (each also NUL-terminated), and lines that share long heads.
awk -v seed="$seed" 'BEGIN { srand(seed);
    for (i = 0; i < 20000; i++) {
        printf "%d,%d,", int(rand() * 100000), 1700000000 + int(rand() * 400);
        n = int(rand() * 12); for (k = 0; k < n; k++) printf "%c", 97 + int(rand() * 26);
        printf "\n" } }' >"$dir/ev"
awk -v seed="$seed" 'BEGIN { srand(seed + 7); split("abc|-|1K|2M|-3G|007|1.50|-0|0.0|-.5|99999999999999999999999|12345678901234567.5", f, "|");
    for (i = 0; i < 15000; i++) {
        x = rand();
        if (x < 0.03) { print ""; continue }
        nf = 1 + int(rand() * 3); line = "";
        for (k = 0; k < nf; k++) {
            y = rand();
            v = y < 0.2 ? f[1 + int(rand() * 12)] : y < 0.4 ? sprintf("%.3f", (rand() - 0.5) * 100) : int((rand() - 0.5) * 60);
            line = line (k ? (rand() < 0.5 ? "," : " ") : "") v }
        if (rand() < 0.05) line = line "\r";
        print line } }' >"$dir/fl"
# lines whose ids many share and whose next bytes often agree too (the device's
# refinement rounds order them)
awk -v seed="$seed" 'BEGIN { srand(seed + 11);
    for (i = 0; i < 20000; i++) {
        id = int(rand() * 150);
        if (rand() < 0.5) printf "%08d,1700%06d,%c\n", id, int(rand() * 2000), 97 + int(rand() * 2);
        else printf "%08d,the same twenty-six bytes,%d\n", id, int(rand() * 9) } }' >"$dir/hd"
tr '\n' '\0' <"$dir/ev" >"$dir/evz"
tr '\n' '\0' <"$dir/fl" >"$dir/flz"

want_part() { [[ " ${SAN_PARTS:-integer text records} " == *" $1 "* ]]; }

fail=0
for tool in "${tools[@]}"; do
    runs=0 wrong=0 trun=0 rrun=0
    # tiled4: the sort with --kernel=tiled and its four-way passes forced (by size
    # they start at 256 MB of keys); tiledp1, tiledp8: --kernel=tiled with the
    # coarse partition kernel, one lane or 8 a tile, and its blocks' windows (by
    # size a partition starts past 1024 tiles; below, "tiled" has each block
    # search for itself); circular3: --kernel=circular with three blocks, so that
    # each walks many tiles.
    want_part integer &&
    for kernel in ${SAN_KERNELS:-basic tiled tiled4 tiledp1 tiledp8 circular circular3}; do
        force=""
        [ $kernel = tiled4 ] && force=--sort-ways=4
        [ $kernel = tiledp1 ] && force=--partition=1
        [ $kernel = tiledp8 ] && force=--partition=8
        [ $kernel = circular3 ] && force=--circular-blocks=3
        bin=$G
        [ -n "$force" ] && bin="$GF $force"
        for w in 0 1; do
            for dirn in up down; do
                r=""
                [ $dirn = down ] && r=-r
                ins="$dir/a$w.$dirn $dir/b$w.$dirn $dir/c$w.$dirn"
                for op in "merge $r" "merge $r -u" "sort $r" "sort $r -u"; do
                    set -- $op
                    [ $kernel = tiled4 ] && [ "$1" = merge ] && continue
                    case $kernel in
                    tiled*) k=tiled ;;
                    circular*) k=circular ;;
                    *) k=$kernel ;;
                    esac
                    what="$(basename "${bin%% *}") ${force:+$force }$op --kernel=$k"
                    if [ "$1" = merge ]; then files=$ins; else files=$dir/r$w; fi
                    # The result goes to a file (-o) and the sanitizer's report to a
                    # log, so neither can be mistaken for the other.
                    rm -f "$dir/out"
                    if ! "$SAN" --tool "$tool" \
                        --error-exitcode 1 --print-limit 10 --log-file "$dir/log" \
                        $bin $op --device=gpu --kernel=${k} -o "$dir/out" $files \
                        2>"$dir/err"; then
                        echo "FAIL: $tool: $what (int$((32 + 32 * w)))"
                        tail -n 20 "$dir/log" "$dir/err"
                        fail=1
                        continue
                    fi
                    sort_args="-n $r"
                    [ "$1" = merge ] && sort_args="-m $sort_args"
                    case "$op" in *-u*) sort_args="$sort_args -u" ;; esac
                    if ! sort $sort_args $files | cmp -s - "$dir/out"; then
                        echo "WRONG: $what (int$((32 + 32 * w)))"
                        wrong=$((wrong + 1))
                        if [ -n "${SAN_KEEP:-}" ]; then # keep the evidence
                            mkdir -p "$SAN_KEEP"
                            cp $files "$SAN_KEEP/" && cp "$dir/out" "$SAN_KEEP/out.$kernel.$1$r"
                        fi
                        fail=1
                    fi
                    runs=$((runs + 1))
                done
            done
        done
    done
    # the text path
    want_part text &&
    for zr in "" "-z" "-r" "-u" "-r -u"; do
        f="$dir/t $dir/t2"
        [ "$zr" = -z ] && f=$dir/tz
        rm -f "$dir/out"
        if ! "$SAN" --tool "$tool" --error-exitcode 1 --print-limit 10 --log-file "$dir/log" \
            $GF --text-chunk=4096 sort --strict $zr --device=gpu -o "$dir/out" $f \
            2>"$dir/err"; then
            echo "FAIL: $tool: text path sort $zr"
            tail -n 20 "$dir/log" "$dir/err"
            fail=1
            continue
        fi
        if ! $G sort --strict $zr --device=cpu $f | cmp -s - "$dir/out"; then
            echo "WRONG: text path sort $zr"
            wrong=$((wrong + 1))
            fail=1
        fi
        trun=$((trun + 1))
    done
    # outside --strict the device declines the messy lines, and the records path
    # sorts them as sort does
    if ! want_part text; then
        :
    elif ! "$SAN" --tool "$tool" --error-exitcode 1 --print-limit 10 --log-file "$dir/log" \
        $GF --text-chunk=4096 sort --device=gpu -o "$dir/out" "$dir/t" "$dir/t2" \
        2>"$dir/err"; then
        echo "FAIL: $tool: text path, lines declined to the records path"
        tail -n 20 "$dir/log" "$dir/err"
        fail=1
    elif ! sort -n "$dir/t" "$dir/t2" | cmp -s - "$dir/out"; then
        echo "WRONG: text path, lines declined to the records path"
        wrong=$((wrong + 1))
        fail=1
    else
        trun=$((trun + 1))
    fi
    st=2
    want_part text && { st=0
    "$SAN" --tool "$tool" --error-exitcode 99 --print-limit 10 --log-file "$dir/log" \
        $G sort --strict --device=gpu -o "$dir/out" "$dir/t" "$dir/tbad" 2>"$dir/err" || st=$?; }
    if ! want_part text; then
        :
    elif [ $st != 2 ] || ! grep -q "tbad:3: not an integer: 'x1'" "$dir/err"; then
        echo "FAIL: $tool: text path, declined line: exit $st"
        tail -n 20 "$dir/log" "$dir/err"
        fail=1
    else
        trun=$((trun + 1))
    fi
    # the records path's sort on the device
    want_part records &&
    for rc in "ev|-t, -k2,2n" "ev|-t, -k2,2nr -s" "ev|-t, -k2,2n -u" "ev|-t, -k1,1 -k2,2n" \
              "fl|-n" "fl|-h -r" "fl|-k2,2 -k1,1n" "fl|-b -k2,2n -k3 -u" \
              "evz|-z -t, -k2,2n" "flz|-z -n -s" "hd|-n" "hd|-n -r" "hd|-k1" "hd|-f" \
              "hd|-f -r" "ev|-f" "hd|-V" "fl|-V -r" "ev|-t, -k3V -s" "ev|-V" "hd|-d" \
              "fl|-i -r" "ev|-t, -k3,3d"; do
        f=$dir/${rc%%|*} args=${rc#*|}
        for forced in "" "--lines-piece=4096 --text-chunk=1000" \
                      "--records-block=3000 --text-chunk=1000"; do
            small=""
            [[ "$forced" == --records* ]] && small="-S 256K --batch-size=3"
            rm -f "$dir/out"
            # shellcheck disable=SC2086
            if ! "$SAN" --tool "$tool" --error-exitcode 1 --print-limit 10 --log-file "$dir/log" \
                $GF $forced sort --device=gpu $small -v $args -o "$dir/out" "$f" 2>"$dir/err"; then
                echo "FAIL: $tool: records sort $args ${forced:+($forced)}"
                tail -n 20 "$dir/log" "$dir/err"
                fail=1
                continue
            fi
            # shellcheck disable=SC2086
            if ! sort $args "$f" | cmp -s - "$dir/out" || ! grep -q "sorted on the GPU" "$dir/err"; then
                echo "WRONG: records sort $args ${forced:+($forced)}"
                tail -n 5 "$dir/err"
                wrong=$((wrong + 1))
                fail=1
            fi
            rrun=$((rrun + 1))
        done
    done
    # the key-value kernels
    pmsg="no pairs"
    if want_part pairs && ! "$SAN" --tool "$tool" --error-exitcode 1 --print-limit 10 --log-file "$dir/log" \
        $GP "$seed" >"$dir/out" 2>"$dir/err"; then
        echo "FAIL: $tool: key-value kernels (gpupairs $seed)"
        tail -n 20 "$dir/log" "$dir/out" "$dir/err"
        fail=1
    elif want_part pairs; then
        pmsg=$(cat "$dir/out")
    fi
    echo "$tool: $runs runs without a sanitizer error, $wrong of them with output unlike sort's" \
        "or the CPU's; $trun text path runs; $rrun records runs; $pmsg"
done
exit $fail
