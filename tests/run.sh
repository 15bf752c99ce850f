#!/bin/sh
# tests/run.sh - runs the Criterion suites named as arguments, one after the
# other, each with its own output, and ends with the totals on one line of their
# own, "N passed, N failed, N skipped", which CI reads. The counts come from each
# suite's "Synthesis" line (tests that crashed count as failed) and its [SKIP]
# lines; a suite that ends without a Synthesis line counts as one failure.
# Exit status: 0 when every suite passed, else 1.
#
# Usage: tests/run.sh SUITE...   (the Makefile sets GPUMERGE and TESTDATA)
log=$(mktemp "${TMPDIR:-/tmp}/gpumerge-tests.XXXXXX") || exit 1
trap 'rm -f "$log" "$log.rc"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
passed=0 failed=0 skipped=0 status=0
for t in "$@"; do
    echo "== $t"
    { "$t" --jobs=2 --verbose 2>&1; echo $? >"$log.rc"; } | tee "$log"
    [ "$(cat "$log.rc")" = 0 ] || status=1
    synthesis=$(sed -n 's/.*Synthesis: Tested: \([0-9]*\) | Passing: \([0-9]*\) | Failing: \([0-9]*\) | Crashing: \([0-9]*\).*/\2 \3 \4/p' "$log" | tail -n 1)
    if [ -z "$synthesis" ]; then
        echo "$t: no Synthesis line: counted as one failure"
        failed=$((failed + 1))
        status=1
        continue
    fi
    read -r pass fail crash <<END
$synthesis
END
    passed=$((passed + pass))
    failed=$((failed + fail + crash))
    skipped=$((skipped + $(grep -c '^\[SKIP\]' "$log")))
done
echo "$passed passed, $failed failed, $skipped skipped"
exit $status
