#!/bin/bash
# Runs each test suite named on the command line (make targets), then prints
# what each suite did and one summary line
#   check: N passed, N failed, N skipped
# that adds up the suites' own counts.  Every suite ends its output with a
# line "N passed, N failed[, N skipped]".  A suite that could not run at all
# prints "SKIP: <reason>" instead and exits 0; it counts as a skipped suite
# (one more skip, named with its reason below the summary), never as passed.
# A suite fails if it exits non-zero, reports a failure, prints no summary,
# or ran nothing at all.
set -u
make=${MAKE:-make}

# No suite may write into the user's plan cache (~/.cache/xom): every run of
# xom here gets a scratch one, unless a suite sets its own.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/xom-check.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export XDG_CACHE_HOME=$scratch/cache

# What the summary calls a suite: check-asan runs the scanner's suite again,
# rebuilt with the sanitizers.
label() {
	case $1 in
	check-asan) echo "check-scan (asan+ubsan)" ;;
	*) echo "$1" ;;
	esac
}

total_p=0 total_f=0 total_s=0 bad="" skipped="" table=""
for t in "$@"; do
	name=$(label "$t")
	echo "== $name"
	log=$scratch/log
	$make --no-print-directory "$t" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	line=$(grep -E '^([A-Za-z-]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	skip=$(grep -E '^SKIP: ' "$log" | tail -n 1)
	p=$(sed -nE 's/.*\b([0-9]+) passed.*/\1/p' <<<"$line")
	f=$(sed -nE 's/.*\b([0-9]+) failed.*/\1/p' <<<"$line")
	s=$(sed -nE 's/.*\b([0-9]+) skipped.*/\1/p' <<<"$line")
	p=${p:-0} f=${f:-0} s=${s:-0}
	if [ -z "$line" ] && [ -n "$skip" ] && [ "$rc" = 0 ]; then
		total_s=$((total_s + 1))
		skipped="$skipped$name: ${skip#SKIP: }"$'\n'
		table+=$(printf '  %-26s not run: %s' "$name" "${skip#SKIP: }")$'\n'
		continue
	fi
	why=""
	if [ -z "$line" ]; then
		why="no summary line"
	elif [ "$p" = 0 ] && [ "$f" = 0 ] && [ "$s" = 0 ]; then
		why="ran no test"
	elif [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		why="exit status $rc"
	fi
	# A failure that the suite's own counts do not show is one more.
	[ -n "$why" ] && f=$((f + 1))
	total_p=$((total_p + p)) total_f=$((total_f + f)) total_s=$((total_s + s))
	if [ "$f" != 0 ] || [ "$rc" != 0 ]; then
		bad="$bad $t"
	fi
	table+=$(printf '  %-26s %d passed, %d failed, %d skipped%s' "$name" "$p" "$f" "$s" \
		"${why:+ ($why)}")$'\n'
	# The first failures, so that the summary alone says what went wrong.
	if [ "$f" != 0 ]; then
		table+=$(grep -E '^(not ok [0-9]+ - |FAIL )' "$log" | head -n 3 | cut -c1-150 |
			sed 's/^/      /')$'\n'
	fi
done
echo
echo "== summary"
printf '%s' "$table"
[ -n "$skipped" ] && printf 'not run: %s' "$skipped"
[ -n "$bad" ] && echo "failed suites:$bad"
echo "check: $total_p passed, $total_f failed, $total_s skipped"
[ -z "$bad" ]
