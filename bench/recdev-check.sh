#!/usr/bin/env bash
# bench/recdev-check.sh - the GPU check of the records path's sort on the device
# (cuda/records.cu, core/device/recgpu.c), run from the repository root on a machine
# with a GPU after `make GPU_ARCHS=90`:
#   1. the suites that reach it: test_recgpu (the CLI against sort with
#      --device=gpu, as the inputs come and with small blocks, pieces and budget
#      forced), test_records, test_keys, and test_lines with --device=gpu (lines
#      handed over from the integer path to records sorted on the device);
#   2. compute-sanitizer memcheck, racecheck and synccheck over small records
#      sorts through the new kernels (tests/sanitize.sh's records part);
#   3. bench/records.sh at 20 M and 100 M lines `-t, -k2,2n` (and -s, -u at
#      20 M) with --device=cpu and --device=gpu against GNU sort --parallel=16,
#      and one -v run of each device for the stages' times.
# Everything is logged into $OUT (default ./recdev-check.out); the last lines
# of summary.txt say what passed.
#
# Usage: bench/recdev-check.sh    environment: OUT, GPU_ARCHS (90), SIZES
#        ("20000000 100000000"), REPEAT (3), SKIP (a subset of: tests sanitize bench)
set -uo pipefail

OUT=${OUT:-./recdev-check.out}
GPU_ARCHS=${GPU_ARCHS:-90}
SIZES=${SIZES:-20000000 100000000}
REPEAT=${REPEAT:-3}
SKIP=${SKIP:-}
mkdir -p "$OUT"
summary=$OUT/summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
skipped() { [[ " $SKIP " == *" $1 "* ]]; }

{
    date -u
    nvidia-smi 2>&1 | head -20
    git log --oneline -1
} >"$OUT/machine.txt" 2>&1

export GPU_ARCHS
make -j"$(nproc)" GPU_ARCHS="$GPU_ARCHS" gpumerge build/bench/gen >"$OUT/build.log" 2>&1 ||
    { say "FAIL: build (build.log)"; exit 1; }
make -j"$(nproc)" GPU_ARCHS="$GPU_ARCHS" build/tests/gpumerge_forced build/tests/test_recgpu \
    build/tests/test_records build/tests/test_keys build/tests/test_lines >>"$OUT/build.log" 2>&1 ||
    say "FAIL: the test binaries do not build (build.log): the suites and the forced sanitizer runs fail"
./gpumerge --version >>"$OUT/machine.txt" 2>&1
export GPUMERGE=$PWD/gpumerge GPUMERGE_FORCED=$PWD/build/tests/gpumerge_forced \
    TESTDATA=$PWD/testdata LC_ALL=C

# 1. the suites
if ! skipped tests; then
    for t in recgpu records keys lines; do
        dev=""
        [ $t = lines ] && dev=gpu
        if GM_TEST_DEVICE=$dev build/tests/test_$t --verbose >"$OUT/test_$t.log" 2>&1; then
            say "pass: test_$t: $(grep -h 'Synthesis' "$OUT/test_$t.log" | tail -1)"
        else
            say "FAIL: test_$t (test_$t.log): $(grep -h 'Synthesis' "$OUT/test_$t.log" | tail -1)"
        fi
    done
    grep -h "Skipping\|SKIP" "$OUT"/test_recgpu.log | head -5 >>"$summary"
fi

# 2. compute-sanitizer over the records kernels
if ! skipped sanitize; then
    if SAN_PARTS=records bash tests/sanitize.sh memcheck racecheck synccheck \
        >"$OUT/sanitize.log" 2>&1; then
        say "pass: compute-sanitizer: $(grep -h 'records runs' "$OUT/sanitize.log" | tr '\n' ' ')"
    else
        say "FAIL: compute-sanitizer (sanitize.log)"
    fi
fi

# 3. times against the CPU and GNU sort
if ! skipped bench; then
    root=/dev/shm
    [ -d $root ] || root=${TMPDIR:-/tmp}
    scratch=$(mktemp -d "$root/recdev-check.XXXXXX")
    trap 'rm -rf "$scratch"' EXIT
    for n in $SIZES; do
        only=field
        [ "$n" -le 20000000 ] && only="field reverse unique"
        if DIR=$scratch DEVICES="cpu gpu" ONLY=$only REPEAT=$REPEAT REPEAT_GNU=1 \
            bash bench/records.sh "$n" >"$OUT/bench-$n.log" 2>&1; then
            say "pass: bench/records.sh $n"
        else
            say "FAIL: bench/records.sh $n (bench-$n.log)"
        fi
        sed 's/^/    /' "$OUT/bench-$n.log" >>"$summary"
        for d in cpu gpu; do
            ./gpumerge --device=$d -v -t, -k2,2n "$scratch/in.$n.csv" -o "$scratch/v.out" \
                >"$OUT/verbose-$d-$n.log" 2>&1
        done
        grep -hE "gpumerge: (engine|sort|total) " "$OUT/verbose-gpu-$n.log" | sed 's/^/    gpu -v: /' >>"$summary"
        rm -f "$scratch"/in.*.csv "$scratch"/gnu "$scratch"/gm "$scratch"/cat "$scratch"/v.out
    done
fi
echo "summary: $summary"
! grep -q "^FAIL" "$summary"
