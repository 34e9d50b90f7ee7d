#!/bin/bash
# Runs each test suite named on the command line (make targets), then prints
# one summary.  Every suite ends its output with a line
#   N passed, N failed[, N skipped]
# and a suite that could not run at all prints "SKIP: <reason>".
set -u
make=${MAKE:-make}
total_p=0 total_f=0 total_s=0 bad=""
for t in "$@"; do
	echo "== $t"
	log=$(mktemp)
	$make --no-print-directory "$t" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	line=$(grep -E '^([A-Za-z-]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	skip=$(grep -E '^SKIP: ' "$log" | tail -n 1)
	rm -f "$log"
	p=$(sed -nE 's/.*\b([0-9]+) passed.*/\1/p' <<<"$line")
	f=$(sed -nE 's/.*\b([0-9]+) failed.*/\1/p' <<<"$line")
	s=$(sed -nE 's/.*\b([0-9]+) skipped.*/\1/p' <<<"$line")
	total_p=$((total_p + ${p:-0})) total_f=$((total_f + ${f:-0}))
	total_s=$((total_s + ${s:-0}))
	if [ -n "$skip" ] && [ -z "$line" ] && [ "$rc" = 0 ]; then
		total_s=$((total_s + 1)); echo "   ($t: ${skip})"
	elif [ "$rc" != 0 ] || [ -z "$line" ] || [ "${f:-0}" != 0 ]; then
		bad="$bad $t"
		[ -z "$line" ] && [ "$rc" = 0 ] && echo "$t: no summary line" && total_f=$((total_f + 1))
		[ "$rc" != 0 ] && [ "${f:-0}" = 0 ] && total_f=$((total_f + 1))
	fi
done
echo
[ -n "$bad" ] && echo "failed suites:$bad"
echo "check: $total_p passed, $total_f failed, $total_s skipped"
[ -z "$bad" ]
