# bench/median.sh - sourced by the benchmark scripts: the median wall time of runs.
#
# median_runs N CMD...: runs CMD N times and prints the median wall time in seconds
# (with VERBOSE_TIMES set, every run's time goes to standard error too).
median_runs() {
    local n=$1 times=()
    shift
    for _ in $(seq "$n"); do
        local t0 t1
        t0=$(date +%s.%N)
        "$@"
        t1=$(date +%s.%N)
        times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')")
    done
    [ -n "${VERBOSE_TIMES:-}" ] && echo "$* ${times[*]}" >&2
    printf '%s\n' "${times[@]}" | sort -g | awk '{ a[NR] = $1 } END { printf "%.3f", a[int((NR + 1) / 2)] }'
}
