#!/bin/sh
# Runs libFuzzer targets (tests/fuzz/fuzz.mk builds them) for a while each.
# Usage: tests/fuzz/run.sh BUILD SECONDS TARGET...
#   TARGET: scan, plan, store, profile or conf.
# Each target starts from its corpus (kept and grown in BUILD/fuzz between
# runs), its seeds (made from real files by fuzz.mk) and the inputs of the
# crashes it once had (tests/fuzz/regress/TARGET, run first, every time).
# One line per target: PASS with the executions and the corpus size, or
# FAIL with the end of its log (the crash input is BUILD/fuzz/TARGET-*);
# then "N passed, N failed", which tests/check.sh collects.
B=$1 secs=$2
shift 2
R=$(cd "$(dirname "$0")/../.." && pwd)
pass=0 fail=0
# The store target writes an index now and then: into memory if it can,
# in a folder of this run's, removed at the end (a crash leaves its own).
base=/tmp
if [ -d /dev/shm ] && [ -w /dev/shm ]; then base=/dev/shm; fi
TMPDIR=$(mktemp -d "$base/xom-fuzz.XXXXXX") || exit 2
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT
for t in "$@"; do
	case $t in
	scan) corpus=$B/fuzz/corpus seeds=$B/fuzz/seeds max=262144 ;;
	plan) corpus=$B/fuzz/corpus-$t seeds=$B/fuzz/seeds-$t max=262144 ;;
	store) corpus=$B/fuzz/corpus-$t seeds=$B/fuzz/seeds-$t max=65536 ;;
	profile|conf) corpus=$B/fuzz/corpus-$t seeds=$B/fuzz/seeds-$t max=16384 ;;
	*) echo "run.sh: no fuzz target $t" >&2; exit 64 ;;
	esac
	mkdir -p "$corpus"
	regress=
	[ -d "$R/tests/fuzz/regress/$t" ] && regress=$R/tests/fuzz/regress/$t
	log=$B/fuzz/$t.log
	# -rss_limit_mb turns an unbounded allocation into a reported failure;
	# -timeout one input that runs away.
	if "$B/fuzz/fuzz_$t" -max_total_time="$secs" -max_len=$max -rss_limit_mb=2048 \
		-timeout=10 -print_final_stats=1 -artifact_prefix="$B/fuzz/$t-" \
		"$corpus" "$seeds" $regress >"$log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		echo "PASS fuzz_$t: $secs s, ${runs:-?} inputs, corpus $(ls "$corpus" | wc -l), no crash"
		pass=$((pass + 1))
	else
		tail -n 30 "$log"
		echo "FAIL fuzz_$t: see $log"
		fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"
[ $fail = 0 ]
