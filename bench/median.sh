# bench/median.sh - sourced by the benchmark scripts: the wall time of repeated runs,
# as a median with its spread.
#
# median_runs N CMD...: runs CMD N times and prints "MEDIAN MIN MAX" in seconds;
# a run that fails fails it.
# Where hyperfine is installed (Debian's package) it times the runs (in a child
# bash: a CMD that is a shell function must be exported with export -f, and the
# variables it uses with export; hyperfine subtracts the shell's own start);
# elsewhere, or with NO_HYPERFINE set, a loop here does, with bash's
# EPOCHREALTIME. With VERBOSE_TIMES set, every run's time goes to standard error.
# med "MEDIAN MIN MAX" prints the median; shown "MEDIAN MIN MAX" prints
# "MEDIAN (MIN-MAX)", for tables.
median_runs() {
    local n=$1
    shift
    if [ -z "${NO_HYPERFINE:-}" ] && command -v hyperfine >/dev/null 2>&1; then
        local json rc=0
        json=$(mktemp "${TMPDIR:-/tmp}/median.XXXXXX")
        if [ "$(type -t "$1")" = function ]; then
            export -f "$1"
        fi
        hyperfine --shell=bash --style=none --runs "$n" --export-json "$json" \
            "$(printf '%q ' "$@")" >/dev/null 2>&1 || rc=$?
        if [ "$rc" = 0 ]; then
            # the one result's fields, after its command (whose text may hold anything)
            local fields
            fields=$(tr -d ' \n' <"$json" | sed 's/.*"mean":/"mean":/')
            [ -n "${VERBOSE_TIMES:-}" ] &&
                echo "$* $(sed 's/.*"times":\[\([^]]*\)\].*/\1/' <<<"$fields")" >&2
            for key in median min max; do
                sed "s/.*\"$key\":\([-0-9.eE+]*\).*/\1/" <<<"$fields"
            done | awk '{ v[NR] = $1 } END { printf "%.3f %.3f %.3f", v[1], v[2], v[3] }'
        fi
        rm -f "$json"
        [ "$rc" = 0 ] && return 0
        echo "median_runs: hyperfine failed on '$*'; timing it here instead" >&2
    fi
    local times=() t0 t1
    for _ in $(seq "$n"); do
        t0=$EPOCHREALTIME
        "$@" || { echo "median_runs: '$*' failed" >&2; return 1; }
        t1=$EPOCHREALTIME
        times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')")
    done
    [ -n "${VERBOSE_TIMES:-}" ] && echo "$* ${times[*]}" >&2
    printf '%s\n' "${times[@]}" | sort -g |
        awk '{ a[NR] = $1 } END { m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
                                  printf "%.3f %.3f %.3f", m, a[1], a[NR] }'
}

med() { echo "${1%% *}"; }

shown() {
    local m lo hi
    read -r m lo hi <<<"$1"
    printf '%s (%s-%s)' "$m" "$lo" "$hi"
}
