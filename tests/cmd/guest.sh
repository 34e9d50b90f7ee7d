#!/bin/sh
# The xom command's tests that need protection keys; tests/vm/run runs them
# in the emulated-PKU guest (tests/vm/guest.list), from /xom.  Each test
# prints "PASS name", "FAIL name: detail" or "SKIP name: reason".
set -u
cd /xom 2>/dev/null || cd "$(dirname "$0")/../.."
xom=$PWD/build/xom probe=$PWD/build/tests/cmd/probe demo=$PWD/build/demo
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok()  { echo "PASS $1"; }
bad() { echo "FAIL $1: $2"; }
has() { grep -qF -- "$2" "$1"; }
# run NAME WANT CMD...: output in $tmp/out and $tmp/err; 0 when the exit
# status is WANT, else one FAIL line.
run() {
	name=$1 want=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" = "$want" ] && return 0
	bad "$name" "exit status $rc, expected $want: $(tail -c 400 "$tmp/err" | tr '\n' '|')"
	return 1
}

# The harness's own pku_cpu test fails when the guest CPU lacks PKU; here
# xom check must agree that enforcement works.
t_check() {
	run cmd-check 0 "$xom" check || return
	has "$tmp/out" "cpu pku      ok" && has "$tmp/out" "pkey_alloc   ok" &&
		has "$tmp/out" "verdict      ok" && ok cmd-check ||
		bad cmd-check "$(tr '\n' '|' <"$tmp/out")"
}

t_demo() {
	run demo-unprotected 0 "$demo/attacker" "$demo/victim" || return
	has "$tmp/out" "attack succeeded" && ok demo-unprotected ||
		{ bad demo-unprotected "$(tail -n 3 "$tmp/out" | tr '\n' '|')"; return; }
	run demo-protected 1 "$demo/attacker" "$xom" run -- "$demo/victim" || return
	if has "$tmp/out" "attack failed" && has "$tmp/err" "xom: blocked read of" &&
		has "$tmp/err" "demo/victim+0x" && has "$tmp/err" "by instruction at" &&
		has "$tmp/err" "in copy_bytes" && has "$tmp/err" "xom: victim: killed by SIGSEGV"; then
		ok demo-protected
	else
		bad demo-protected "$(cat "$tmp/out" "$tmp/err" | tail -n 4 | tr '\n' '|')"
	fi
	run demo-script 0 "$demo/demo.sh" || return
	has "$tmp/out" "with xom its first" && ok demo-script ||
		bad demo-script "$(tail -n 3 "$tmp/out" | tr '\n' '|')"
}

t_run_enforce() {
	for door in "" --audit; do
		run "run-enforce$door" 139 "$xom" run $door -- "$probe" readcode || return
		has "$tmp/err" "xom: blocked read of" && has "$tmp/err" "probe+0x" &&
			has "$tmp/err" "xom: probe: killed by SIGSEGV" ||
			{ bad "run-enforce$door" "$(tr '\n' '|' <"$tmp/err")"; return; }
		has "$tmp/out" "read libc code" &&
			{ bad "run-enforce$door" "the read of code succeeded"; return; }
		ok "run-enforce$door"
	done
}

t_run_audit_profile() {
	run run-audit 0 "$xom" run --mode audit --profile "$tmp/prof" -- "$probe" readcode || return
	has "$tmp/out" "read libc code" && [ -s "$tmp/prof" ] ||
		{ bad run-audit "no profile or output: $(tr '\n' '|' <"$tmp/err")"; return; }
	ok run-audit
	run run-profile 0 "$xom" run --profile "$tmp/prof" -- "$probe" readcode &&
		has "$tmp/out" "read libc code" && ok run-profile
}

t_run_require() {
	run run-require 7 "$xom" run --require -- "$probe" exit 7 && ok run-require
}

t_status() {
	run status-self 0 "$xom" run -- "$xom" status --self || return
	# The line for libc has a non-zero first column and a key.
	awk '/libc\.so/ && $1 > 0 && $3 != "-" { f = 1 } END { exit !f }' "$tmp/out" &&
		awk '/build\/xom$/ && $1 > 0 { f = 1 } END { exit !f }' "$tmp/out" ||
		{ bad status-self "$(tr '\n' '|' <"$tmp/out")"; return; }
	ok status-self
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
		has "$tmp/out" "(probe)" && ok status-pid || bad status-pid "pid '$pid', exit $rc: $(tr '\n' '|' <"$tmp/out")"
}

t_check
t_demo
t_run_enforce
t_run_audit_profile
t_run_require
t_status
