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

run() {     # run NAME [LLP] ENV...: dltest with ENV, output in $out/NAME
	name=$1 llp=$2
	shift 2
	if [ "$mode" = enforce ]; then opts=; else opts=backend=none; fi
	if [ -n "$llp" ]; then set -- LD_LIBRARY_PATH="$llp" "$@"; fi
	env XOM_OPTIONS="$opts" "$@" "$D/dltest" $case >"$out/$name" 2>"$out/$name.err"
	echo $? >"$out/$name.rc"
}

# Two passes: with LD_LIBRARY_PATH (llp/, which the order case reads)
# and without.
for pass in llp plain; do
	case=
	if [ $pass = llp ]; then llp=$D/llp p=; else llp= p=nollp-; fi
	run ${p}plain "$llp"
	run ${p}preload "$llp" LD_PRELOAD="$B/libxom.so"
	run ${p}audit "$llp" LD_AUDIT="$B/libxom-audit.so"

	for m in plain preload audit; do
		case $m in
		plain) want="DOORS preload=0 audit=0" ;;
		preload) want="DOORS preload=1 audit=0" ;;
		audit) want="DOORS preload=0 audit=1" ;;
		esac
		f=$out/$p$m
		t_check "$p$m-door" "grep -qx '$want' '$f'" \
			"expected '$want', got '$(grep DOORS "$f")'; stderr: $(head -c 300 "$f.err")"
		# Every case, by its known answer.
		grep -E '^(PASS|FAIL) ' "$f" | while read -r res name rest; do
			echo "$res $p$m-${name%:} ${rest}"
		done >"$f.res"
		while read -r res name rest; do
			if [ "$res" = PASS ]; then t_pass "$name"; else t_fail "$name" "$rest"; fi
		done <"$f.res"
		t_check "$p$m-ran-all" "[ \$(grep -c '^PASS\\|^FAIL' '$f') -ge 37 ]" \
			"only $(grep -c '^PASS\|^FAIL' "$f") cases ran (exit $(cat "$f.rc"))"
		t_check "$p$m-quiet" "! grep -q . '$f.err'" \
			"stderr: $(head -c 300 "$f.err")"
		xo=$(sed -n 's/^XO //p' "$f")
		if [ "$mode" != enforce ]; then
			t_check "$p$m-nothing-applied" "[ '$xo' = 0 ]" "$xo execute-only pages with backend=none"
		elif [ $m = plain ]; then
			t_check "$p$m-unprotected" "[ '$xo' = 0 ]" "$xo execute-only pages without xom"
		else
			t_check "$p$m-protected" "[ '${xo:-0}' -gt 0 ]" "no execute-only pages of the program's files"
		fi
	done

	# What each door saw, case by case, against the run without xom.
	for m in preload audit; do
		grep '^SEEN ' "$out/${p}plain" | while IFS= read -r line; do
			name=${line#SEEN }
			name=${name%%:*}
			other=$(grep -F "SEEN $name:" "$out/$p$m" | head -n 1)
			if [ "$line" = "$other" ]; then
				echo "PASS $p$m-same-$name"
			else
				echo "FAIL $p$m-same-$name: without xom [${line#*: }], $m [${other#*: }]"
			fi
		done >"$out/$p$m.same"
		while read -r res name rest; do
			if [ "$res" = PASS ]; then t_pass "$name"; else t_fail "${name%:}" "$rest"; fi
		done <"$out/$p$m.same"
	done
done

# The preload door's one line about a -z nodefaultlib caller: once per
# process, however often it applies, and only through that door.
case=nodeflib
run ndl-plain "" 
run ndl-preload "" LD_PRELOAD="$B/libxom.so"
run ndl-audit "" LD_AUDIT="$B/libxom-audit.so"
for m in plain preload audit; do
	n=$(grep -c '^xom: .*nodefaultlib' "$out/ndl-$m.err")
	if [ $m = preload ]; then want=1; else want=0; fi
	t_check "nodeflib-said-$m" "grep -q '^PASS nodeflib' '$out/ndl-$m' && [ $n = $want ]" \
		"$n lines, $want expected: $(head -c 300 "$out/ndl-$m.err")"
done
t_summary
