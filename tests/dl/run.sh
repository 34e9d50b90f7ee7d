#!/bin/sh
# The dl conformance test: tests/dl/dltest runs without xom, under the
# preload door and under the audit door (backend=none: everything is
# planned, nothing applied, so it runs on a CPU without protection keys;
# tests/vm/ runs it under real keys).  Each run must pass every case on
# its own, and the two doors must see exactly what the run without xom
# sees.
# Usage: B=build tests/dl/run.sh [enforce]
# With enforce (the emulated-PKU guest), the doors run with xom's default
# options, and each door must also have made the program's code
# execute-only: a run of the doors that protected nothing fails.
set -u
mode=${1:-native}
R=$(cd "$(dirname "$0")/../.." && pwd)
. "$R/tests/lib.sh"
B=${B:-build}
case $B in /*) ;; *) B=$R/$B ;; esac
B=$(cd "$B" && pwd)
D=$B/tests/dl
out=$(mktemp -d "${TMPDIR:-/tmp}/xom-dl.XXXXXX")
trap 'rm -rf "$out"' EXIT

run() {     # run NAME ENV...: dltest with ENV, output in $out/NAME
	name=$1
	shift
	if [ "$mode" = enforce ]; then opts=; else opts=backend=none; fi
	env LD_LIBRARY_PATH="$D/llp" XOM_OPTIONS="$opts" "$@" \
		"$D/dltest" >"$out/$name" 2>"$out/$name.err"
	echo $? >"$out/$name.rc"
}

run plain
run preload LD_PRELOAD="$B/libxom.so"
run audit LD_AUDIT="$B/libxom-audit.so"

for m in plain preload audit; do
	case $m in
	plain) want="DOORS preload=0 audit=0" ;;
	preload) want="DOORS preload=1 audit=0" ;;
	audit) want="DOORS preload=0 audit=1" ;;
	esac
	t_check "$m-door" "grep -qx '$want' '$out/$m'" \
		"expected '$want', got '$(grep DOORS "$out/$m")'; stderr: $(head -c 300 "$out/$m.err")"
	# Every case, by its known answer.
	grep -E '^(PASS|FAIL) ' "$out/$m" | while read -r res name rest; do
		echo "$res $m-${name%:} ${rest}"
	done >"$out/$m.res"
	while read -r res name rest; do
		if [ "$res" = PASS ]; then t_pass "$name"; else t_fail "$name" "$rest"; fi
	done <"$out/$m.res"
	t_check "$m-ran-all" "[ \$(grep -c '^PASS\\|^FAIL' '$out/$m') -ge 29 ]" \
		"only $(grep -c '^PASS\|^FAIL' "$out/$m") cases ran (exit $(cat "$out/$m.rc"))"
	t_check "$m-quiet" "! grep -q . '$out/$m.err'" \
		"stderr: $(head -c 300 "$out/$m.err")"
	xo=$(sed -n 's/^XO //p' "$out/$m")
	if [ "$mode" != enforce ]; then
		t_check "$m-nothing-applied" "[ '$xo' = 0 ]" "$xo execute-only pages with backend=none"
	elif [ $m = plain ]; then
		t_check "$m-unprotected" "[ '$xo' = 0 ]" "$xo execute-only pages without xom"
	else
		t_check "$m-protected" "[ '${xo:-0}' -gt 0 ]" "no execute-only pages of the program's files"
	fi
done

# What each door saw, case by case, against the run without xom.
for m in preload audit; do
	grep '^SEEN ' "$out/plain" | while IFS= read -r line; do
		name=${line#SEEN }
		name=${name%%:*}
		other=$(grep -F "SEEN $name:" "$out/$m" | head -n 1)
		if [ "$line" = "$other" ]; then
			echo "PASS $m-same-$name"
		else
			echo "FAIL $m-same-$name: without xom [${line#*: }], $m [${other#*: }]"
		fi
	done >"$out/$m.same"
	while read -r res name rest; do
		if [ "$res" = PASS ]; then t_pass "$name"; else t_fail "${name%:}" "$rest"; fi
	done <"$out/$m.same"
done
t_summary
