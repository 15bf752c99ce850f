#!/bin/bash
# bench/experiments/gpu_text.sh - runs the gpu_text experiment on a GPU machine, in
# the folder that holds the built binary: the host self-test, the checks and the
# benchmark at LINES (default 100 M), then compute-sanitizer memcheck and racecheck
# on small sizes. Logs go to OUT (default .). About two minutes at most.
out=$(realpath "${OUT:-.}")
cd "$(dirname "$0")" || exit 1
lines=${1:-100000000}
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
st=0
run() { # name seconds command...: runs, keeps its log, reports its status
    local name=$1 secs=$2; shift 2
    timeout "$secs" "$@" > "$out/$name.log" 2>&1; local rc=$?
    echo "== $name: exit $rc"; [ "$rc" = 0 ] || st=1
}
run host-selftest 10 ./gpu_text --host-selftest
run gpu_text 80 ./gpu_text "$lines"
cat "$out/gpu_text.log"
run memcheck 25 "$cs" --tool memcheck --leak-check full --error-exitcode 9 ./gpu_text 100000 20 1
tail -n 5 "$out/memcheck.log"
run racecheck 12 "$cs" --tool racecheck --error-exitcode 9 ./gpu_text 10000 6 1
tail -n 5 "$out/racecheck.log"
exit $st
