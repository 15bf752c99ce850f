#!/usr/bin/env bash
# bench/kv-check.sh - the GPU check of the key-value kernels, on a GPU machine,
# from the repository root: builds what it needs (GPU_ARCHS, default 90), then runs
# the stages named (default: tests sanitize bench), each writing its log to $OUT
# (default ./kv-out) and a line to $OUT/summary.txt.
#
#   tests      the GPU suite's key-value cases (test_gpu --filter 'gpu/pairs*'),
#              then the whole GPU suite with GM_TEST_SMALL=1 (the keys-only kernels
#              share their code with the pairs')
#   sanitize   compute-sanitizer memcheck, racecheck and synccheck over gpupairs
#              (every key type, kernel and forced path of the pairs); SAN_TOOLS
#              picks the tools (to split them between commands)
#   sanitize-all  make sanitize: every kernel, keys-only and pairs (long)
#   bench      build/bench/kernels 28 pairs (against CUB), then the keys-only
#              merge and sort at 2^24 (to compare with main's)
#
# Usage: bash bench/kv-check.sh [STAGE...]     exit status: 0 when every stage passed
set -u
OUT=${OUT:-./kv-out}
ARCHS=${GPU_ARCHS:-90}
mkdir -p "$OUT"
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(tests sanitize bench)
fail=0
note() { echo "$*" | tee -a "$OUT/summary.txt"; }

make -s GPU_ARCHS="$ARCHS" gpumerge build/tests/gpumerge_forced build/tests/test_gpu \
    build/tests/gpupairs build/bench/kernels >"$OUT/build.log" 2>&1 ||
    { note "build failed: $OUT/build.log"; tail -n 30 "$OUT/build.log"; exit 1; }
nvidia-smi -L >"$OUT/device.txt" 2>&1

for stage in "${stages[@]}"; do
    case $stage in
    tests)
        if GM_TEST_REQUIRE_GPU=1 build/tests/test_gpu --filter 'gpu/pairs*' --verbose \
            >"$OUT/test_pairs.log" 2>&1; then note "tests: pairs passed"
        else note "tests: pairs FAILED ($OUT/test_pairs.log)"; fail=1; fi
        if GM_TEST_REQUIRE_GPU=1 GM_TEST_SMALL=1 GPUMERGE=$PWD/gpumerge TESTDATA=$PWD/testdata \
            build/tests/test_gpu --verbose >"$OUT/test_gpu_small.log" 2>&1; then
            note "tests: whole GPU suite (small) passed"
        else note "tests: whole GPU suite (small) FAILED ($OUT/test_gpu_small.log)"; fail=1; fi
        ;;
    sanitize)
        for tool in ${SAN_TOOLS:-memcheck racecheck synccheck}; do
            if compute-sanitizer --tool $tool --error-exitcode 1 --print-limit 20 \
                build/tests/gpupairs 7 >"$OUT/sanitize-$tool.log" 2>&1; then
                note "sanitize: $tool clean: $(tail -n 1 "$OUT/sanitize-$tool.log")"
            else note "sanitize: $tool FAILED ($OUT/sanitize-$tool.log)"; fail=1; fi
        done
        ;;
    sanitize-all)
        if make -s GPU_ARCHS="$ARCHS" sanitize >"$OUT/sanitize-all.log" 2>&1; then
            note "sanitize-all: passed: $(grep -c 'runs without' "$OUT/sanitize-all.log") tools"
        else note "sanitize-all: FAILED ($OUT/sanitize-all.log)"; fail=1; fi
        ;;
    bench)
        BENCH_TSV="$OUT/bench-pairs.tsv" build/bench/kernels 28 pairs >"$OUT/bench-pairs.log" 2>&1 ||
            { note "bench: pairs FAILED ($OUT/bench-pairs.log)"; fail=1; }
        grep -E 'WRONG|target' "$OUT/bench-pairs.log" | tee -a "$OUT/summary.txt"
        build/bench/kernels 24 merge >"$OUT/bench-keys-merge.log" 2>&1 || fail=1
        build/bench/kernels 24 sort >"$OUT/bench-keys-sort.log" 2>&1 || fail=1
        note "bench: keys-only at 2^24 in $OUT/bench-keys-*.log"
        ;;
    *)
        note "unknown stage $stage"; fail=1 ;;
    esac
done
exit $fail
