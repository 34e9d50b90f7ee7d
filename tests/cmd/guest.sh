#!/bin/sh
# The xom command's tests that need protection keys; tests/vm/run runs them
# in the emulated-PKU guest (tests/vm/guest.list), from /xom.  Each test
# prints "PASS name", "FAIL name: detail" or "SKIP name: reason", and the
# last line is the summary (tests/lib.sh, at /xom/tests/lib.sh there).
set -u
cd /xom 2>/dev/null || cd "$(dirname "$0")/../.."
. tests/lib.sh
xom=$PWD/build/xom probe=$PWD/build/tests/cmd/probe demo=$PWD/build/demo
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The plans that these runs make go here, not into the user's own cache.
export XDG_CACHE_HOME=$tmp/cache

# run NAME WANT CMD...: output in $tmp/out and $tmp/err; 0 when the exit
# status is WANT, else one FAIL line.
run() {
	name=$1 want=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" = "$want" ] && return 0
	t_fail "$name" "exit status $rc, expected $want: $(tail -c 400 "$tmp/err" | tr '\n' '|')"
	return 1
}

# The harness's own pku_cpu test fails when the guest CPU lacks PKU; here
# xom check must agree that enforcement works.
test_check() {
	run cmd-check 0 "$xom" check || return
	has "$tmp/out" "cpu pku      ok" && has "$tmp/out" "pkey_alloc   ok" &&
		has "$tmp/out" "verdict      ok" && t_pass cmd-check ||
		t_fail cmd-check "$(tr '\n' '|' <"$tmp/out")"
}

test_demo() {
	run demo-unprotected 0 "$demo/attacker" "$demo/victim" || return
	has "$tmp/out" "attack succeeded" && t_pass demo-unprotected ||
		{ t_fail demo-unprotected "$(tail -n 3 "$tmp/out" | tr '\n' '|')"; return; }
	run demo-protected 1 "$demo/attacker" "$xom" run -- "$demo/victim" || return
	if has "$tmp/out" "attack failed" && has "$tmp/err" "xom: blocked read of" &&
		has "$tmp/err" "demo/victim+0x" && has "$tmp/err" "by instruction at" &&
		has "$tmp/err" "in copy_bytes" && has "$tmp/err" "xom: victim: killed by SIGSEGV"; then
		t_pass demo-protected
		# README.md shows this line: the same shape, with the names that
		# gcc 12 and gcc 14 give the page.
		grep "^xom: blocked read of" "$tmp/err" | sed 's/^/# /'
		grep -Eq '^xom: blocked read of 0x[0-9a-f]+ \(/xom/build/demo/victim\+0x1000, (in _init|no symbol)\) by instruction at 0x[0-9a-f]+ \(/xom/build/demo/victim\+0x1[0-9a-f]{3}, in copy_bytes\.constprop\.0\+0x[0-9a-f]+\), pid [0-9]+$' "$tmp/err" &&
			t_pass demo-readme-line || t_fail demo-readme-line "$(grep "blocked read" "$tmp/err")"
	else
		t_fail demo-protected "$(cat "$tmp/out" "$tmp/err" | tail -n 4 | tr '\n' '|')"
	fi
	run demo-script 0 "$demo/demo.sh" || return
	has "$tmp/out" "with xom its first" && t_pass demo-script ||
		t_fail demo-script "$(tail -n 3 "$tmp/out" | tr '\n' '|')"
}

test_run_enforce() {
	for door in "" --audit; do
		run "run-enforce$door" 139 "$xom" run $door -- "$probe" readcode || return
		has "$tmp/err" "xom: blocked read of" && has "$tmp/err" "probe+0x" &&
			has "$tmp/err" "xom: probe: killed by SIGSEGV" ||
			{ t_fail "run-enforce$door" "$(tr '\n' '|' <"$tmp/err")"; return; }
		has "$tmp/out" "read libc code" &&
			{ t_fail "run-enforce$door" "the read of code succeeded"; return; }
		t_pass "run-enforce$door"
	done
}

test_run_audit_profile() {
	run run-audit 0 "$xom" run --mode audit --profile "$tmp/prof" -- "$probe" readcode || return
	has "$tmp/out" "read libc code" && [ -s "$tmp/prof" ] ||
		{ t_fail run-audit "no profile or output: $(tr '\n' '|' <"$tmp/err")"; return; }
	t_pass run-audit
	run run-profile 0 "$xom" run --profile "$tmp/prof" -- "$probe" readcode &&
		has "$tmp/out" "read libc code" && t_pass run-profile
}

test_run_require() {
	run run-require 7 "$xom" run --require -- "$probe" exit 7 && t_pass run-require
}

test_status() {
	run status-self 0 "$xom" run -- "$xom" status --self || return
	# The line for libc has a non-zero first column and a key.
	awk '/libc\.so/ && $1 > 0 && $3 != "-" { f = 1 } END { exit !f }' "$tmp/out" &&
		awk '/build\/xom$/ && $1 > 0 { f = 1 } END { exit !f }' "$tmp/out" ||
		{ t_fail status-self "$(tr '\n' '|' <"$tmp/out")"; return; }
	t_pass status-self
	# What stays readable of libc, from its plan, is what the scanner says
	# of the file; the total line adds it up.
	local lib want_b want_g got
	lib=$(awk '/libc\.so/ { print $NF; exit }' "$tmp/out")
	"$xom" scan --json "$lib" >"$tmp/json"
	want_b=$(sed -n 's/.*"readable_bytes": *\([0-9]*\).*/\1/p' "$tmp/json" | head -n 1)
	want_g=$(sed -n 's/.*"ret_gadgets": *\([0-9]*\).*/\1/p' "$tmp/json" | head -n 1)
	got=$(awk -v l="$lib" '$NF == l { print $4 " " $5 }' "$tmp/out")
	[ -n "$want_b" ] && [ "$got" = "$want_b $want_g" ] &&
		grep -Eq '^readable to an attacker: [0-9]+ executable bytes, [0-9]+ ret gadget candidates, in the [1-9][0-9]* of [0-9]+ objects' "$tmp/out" &&
		t_pass status-surface || t_fail status-surface "libc: status '$got', scan '$want_b $want_g': $(tr '\n' '|' <"$tmp/out")"
	"$xom" run -- "$probe" sleep 20 >"$tmp/pid" &
	xpid=$!
	# Wait until the probe has started and its code is protected.
	i=0 pid=""
	while [ $i -lt 100 ]; do
		pid=$(cat "$tmp/pid")
		[ -n "$pid" ] && grep -q ' --xp ' "/proc/$pid/maps" 2>/dev/null && break
		sleep 0.2
		i=$((i + 1))
	done
	"$xom" status "$pid" >"$tmp/out" 2>&1
	rc=$?
	kill "$pid" 2>/dev/null
	wait "$xpid" 2>/dev/null
	# The probe reads its own code (probe readcode), so the scanner keeps
	# its page readable; libc's code is the page to look at.
	[ "$rc" = 0 ] && awk '/libc\.so/ && $1 > 0 && $3 != "-" { f = 1 } END { exit !f }' "$tmp/out" &&
		has "$tmp/out" "(probe)" && t_pass status-pid || t_fail status-pid "pid '$pid', exit $rc: $(tr '\n' '|' <"$tmp/out")"
}

test_check
test_demo
test_run_enforce
test_run_audit_profile
test_run_require
test_status
t_summary
