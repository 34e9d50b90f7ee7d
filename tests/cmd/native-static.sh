#!/bin/bash
# xom run with statically linked programs, on any machine (make
# check-static).  Without protection keys xom must say so in one line and
# run the program unprotected, or refuse it under --require; with
# backend=none (plan everything, apply nothing) it goes through the whole
# path (seized before exec, planned, watched as its tracer) without a key,
# so that exit status, signals, stops and threads are tested here.  The
# enforcement itself is tested in the emulated-PKU guest
# (tests/cmd/guest-static.sh).  The last line is "N passed, N failed,
# N skipped" (tests/lib.sh).
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
unset XOM_OPTIONS
# The scratch folder, run_rc and the waits on started programs are the
# ones check-cmd's parts use (tests/cmd/native-lib.sh).
. tests/cmd/native-lib.sh
dyn=$B/tests/cmd/probe ptracer=$B/tests/cmd/ptracer
sprobe=$B/tests/cmd/probe-static pie=$B/tests/cmd/probe-static-pie

# xom_lines FILE: how many lines of FILE start with "xom: ".
xom_lines() { grep -c '^xom: ' "$1"; }
# sleeper NAME PROG: "xom run -- PROG sleep 30" in the background under
# backend=none; sets xpid (xom) and pid (the program).  It replaces
# native-lib.sh's, which runs the dynamic probe only.
sleeper() {
	rm -f "$tmp/pid"
	XOM_OPTIONS=backend=none "$xom" run -- "$2" sleep 30 >"$tmp/pid" 2>"$tmp/err" &
	xpid=$!
	local i=0
	while [ ! -s "$tmp/pid" ]; do
		[ $i -ge 200 ] && { t_fail "$1" "the program never started"; kill -KILL "$xpid"; return 1; }
		sleep 0.05
		i=$((i + 1))
	done
	pid=$(cat "$tmp/pid")
}

if [ ! -x "$sprobe" ] || [ ! -x "$pie" ]; then
	echo "SKIP static: no static libc (libc6-dev's libc.a) to build the static probes"
	t_skip static "no static libc (libc6-dev's libc.a) to build the static probes"
	t_summary
	exit
fi

# Without keys: one line, the program runs and keeps its status; with
# --require it is refused (126), and it never ran.
test_nopku() {
	if [ "$pku" = 1 ]; then
		t_skip static-nopku "this CPU has protection keys; the no-PKU line cannot be seen"
		return
	fi
	run_rc static-nopku 7 "$xom" run -- "$sprobe" exit 7 || return
	[ "$(xom_lines "$tmp/err")" = 1 ] && has "$tmp/err" "no memory protection keys" &&
		has "$tmp/err" "running it unprotected" ||
		{ t_fail static-nopku "not one line: $(cat "$tmp/err")"; return; }
	# Once per run: a dynamically linked program that it starts stays
	# quiet (notice=once); notice=off says nothing at all.
	run_rc static-nopku 0 "$xom" run -- "$sprobe" forkexec "$dyn" exit 0 || return
	[ "$(xom_lines "$tmp/err")" = 1 ] ||
		{ t_fail static-nopku "not once per run: $(cat "$tmp/err")"; return; }
	XOM_OPTIONS=notice=off run_rc static-nopku 0 "$xom" run -- "$sprobe" exit 0 || return
	[ "$(xom_lines "$tmp/err")" = 0 ] ||
		{ t_fail static-nopku "notice=off: $(cat "$tmp/err")"; return; }
	run_rc static-nopku 126 "$xom" run --require -- "$sprobe" env X || return
	[ "$(xom_lines "$tmp/err")" = 1 ] && has "$tmp/err" "refused (require=1)" &&
		[ ! -s "$tmp/out" ] && t_pass static-nopku ||
		t_fail static-nopku "--require: $(cat "$tmp/out" "$tmp/err")"
}

# backend=none plans the program (a plan lands in the cache) and says what
# it would protect; static and static-pie alike.
test_plan() {
	local p
	for p in "$sprobe" "$pie"; do
		XOM_OPTIONS=backend=none:verbose=1 run_rc static-plan 0 "$xom" run -- "$p" exit 0 || return
		grep -q "^xom: $(realpath "$p"): [1-9][0-9]* of [1-9][0-9]* executable pages would be made execute-only" "$tmp/err" ||
			{ t_fail static-plan "$p: $(cat "$tmp/err")"; return; }
	done
	"$xom" cache stats >"$tmp/stats" 2>&1
	[ -s "$XDG_CACHE_HOME/xom/plans" ] && t_pass static-plan ||
		t_fail static-plan "no plan in the cache: $(cat "$tmp/stats")"
}

# While it runs, xom is its tracer (it watches for blocked reads); under
# mode=off it is not.
test_traced() {
	local xpid pid tracer
	sleeper static-traced "$sprobe" || return
	tracer=$(awk '/^TracerPid:/ { print $2 }' "/proc/$pid/status")
	kill -TERM "$xpid"
	finish "$xpid"
	[ "$tracer" = "$xpid" ] || { t_fail static-traced "TracerPid $tracer, xom is $xpid"; return; }
	rm -f "$tmp/pid"
	XOM_OPTIONS=mode=off "$xom" run -- "$sprobe" sleep 30 >"$tmp/pid" 2>"$tmp/err" &
	xpid=$!
	local i=0
	while [ ! -s "$tmp/pid" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	pid=$(cat "$tmp/pid")
	tracer=$(awk '/^TracerPid:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
	kill -TERM "$xpid"
	finish "$xpid"
	[ "$tracer" = 0 ] && [ "$(cat "$tmp/err")" = "xom: probe-static: killed by SIGTERM" ] &&
		t_pass static-traced ||
		t_fail static-traced "mode=off: TracerPid '$tracer', stderr: $(cat "$tmp/err")"
}

test_status() {
	local n p
	for p in "$sprobe" "$pie"; do
		for n in 0 1 7 42 255; do
			XOM_OPTIONS=backend=none "$xom" run -- "$p" exit "$n" 2>/dev/null
			[ $? = "$n" ] || { t_fail static-status "$p: exit $n not passed through"; return; }
		done
	done
	t_pass static-status
}

test_signal() {
	XOM_OPTIONS=backend=none run_rc static-signal 139 "$xom" run -- "$sprobe" kill 11 || return
	has "$tmp/err" "xom: probe-static: killed by SIGSEGV" ||
		{ t_fail static-signal "no report line in: $(cat "$tmp/err")"; return; }
	XOM_OPTIONS=backend=none run_rc static-signal 143 "$xom" run -- "$sprobe" kill 15 || return
	has "$tmp/err" "killed by SIGTERM" && t_pass static-signal ||
		t_fail static-signal "SIGTERM not reported"
}

# Each signal sent to xom reaches the traced program once.
test_forward() {
	local sig xpid rc
	XOM_OPTIONS=backend=none "$xom" run -- "$sprobe" signals >"$tmp/sig" 2>"$tmp/sigerr" &
	xpid=$!
	wait_for "$tmp/sig" "ready" || { t_fail static-forward "the probe never started"; kill -9 $xpid; return; }
	for sig in USR1 USR2 ALRM HUP INT QUIT WINCH TERM; do
		kill -s "$sig" "$xpid" 2>/dev/null
		wait_for "$tmp/sig" "got $sig" ||
			{ t_fail static-forward "SIG$sig sent to xom did not reach the program"; kill -9 $xpid; return; }
	done
	finish "$xpid"
	rc=$?
	[ "$rc" = 0 ] && [ "$(grep -c '^got ' "$tmp/sig")" = 8 ] && t_pass static-forward ||
		t_fail static-forward "xom exit status $rc; the probe got: $(grep '^got' "$tmp/sig" | tr '\n' ' ')"
}

test_fate() {
	local xpid pid rc
	sleeper static-fate "$sprobe" || return
	kill -s USR1 "$xpid"
	finish "$xpid"
	rc=$?
	[ "$rc" = 138 ] && has "$tmp/err" "killed by SIGUSR1" && t_pass static-fate ||
		t_fail static-fate "exit status $rc, expected 138: $(cat "$tmp/err")"
}

# SIGKILL to xom kills the program too (PR_SET_PDEATHSIG, PTRACE_O_EXITKILL).
test_pdeathsig() {
	local xpid pid
	sleeper static-pdeathsig "$sprobe" || return
	kill -KILL "$xpid"
	finish "$xpid" 2>/dev/null
	wait_state "$pid" Zg && t_pass static-pdeathsig ||
		{ t_fail static-pdeathsig "the program ($pid) outlived xom: state $(state "$pid")"; kill -KILL "$pid" 2>/dev/null; }
}

# SIGTSTP stops xom with its traced program (a group-stop that xom keeps
# with PTRACE_LISTEN), SIGCONT wakes both.
test_stop() {
	local xpid pid
	set -m
	sleeper static-stop "$sprobe" || { set +m; return; }
	set +m
	kill -TSTP "$xpid"
	wait_state "$pid" tT && wait_state "$xpid" T ||
		{ t_fail static-stop "after SIGTSTP: xom $(state "$xpid"), program $(state "$pid")"; kill -9 "$xpid"; return; }
	kill -CONT "$xpid"
	wait_state "$pid" RS && wait_state "$xpid" RS ||
		{ t_fail static-stop "after SIGCONT: xom $(state "$xpid"), program $(state "$pid")"; kill -9 "$xpid"; return; }
	kill -TERM "$xpid"
	finish "$xpid"
	[ $? = 143 ] && t_pass static-stop || t_fail static-stop "SIGTERM after SIGCONT did not end it"
}

test_tty() {
	if ! command -v python3 >/dev/null; then
		t_skip static-tty "no python3 to drive a pseudo-terminal"
		return
	fi
	XOM_OPTIONS=backend=none python3 tests/cmd/ctrl-c.py "$xom" "$sprobe" >"$tmp/tty" 2>&1
	[ "$(grep -c 'got INT' "$tmp/tty")" = 1 ] && [ "$(grep -c 'got QUIT' "$tmp/tty")" = 1 ] &&
		t_pass static-tty || t_fail static-tty "$(tr '\r\n' '  ' <"$tmp/tty")"
}

# Threads (traced too) give the same output as without xom.
test_threads() {
	local p
	for p in "$sprobe" "$pie"; do
		"$p" threads 4 >"$tmp/want" 2>&1
		XOM_OPTIONS=backend=none run_rc static-threads 0 "$xom" run -- "$p" threads 4 || return
		cmp -s "$tmp/want" "$tmp/out" ||
			{ t_fail static-threads "$p: $(cat "$tmp/out")"; return; }
	done
	t_pass static-threads
}

# A dynamically linked program that a static one starts gets xom through
# the environment that xom run set.
test_forkexec() {
	local lib
	lib=$(realpath "$B/libxom.so")
	XOM_OPTIONS=backend=none run_rc static-forkexec 0 "$xom" run -- "$sprobe" forkexec "$dyn" env LD_PRELOAD || return
	has "$tmp/out" "LD_PRELOAD=$lib" && has "$tmp/out" "child exit 0" && t_pass static-forkexec ||
		t_fail static-forkexec "$(cat "$tmp/out")"
}

# A static program that execs another one in place: the new image is
# planned and protected afresh, at its own exec event.
test_exec() {
	XOM_OPTIONS=backend=none:verbose=1 run_rc static-exec 9 "$xom" run -- "$sprobe" exec "$(realpath "$pie")" exit 9 || return
	has "$tmp/err" "$(realpath "$sprobe"): " && has "$tmp/err" "$(realpath "$pie"): " &&
		[ "$(grep -c 'would be made execute-only' "$tmp/err")" = 2 ] && t_pass static-exec ||
		t_fail static-exec "$(cat "$tmp/err")"
}

# A tracer already attached (the ptracer traces xom and what it forks):
# one line, and the program runs, or is refused under --require.
test_tracer() {
	XOM_OPTIONS=backend=none run_rc static-tracer 5 "$ptracer" trace "$xom" run -- "$sprobe" exit 5 || return
	[ "$(xom_lines "$tmp/err")" = 1 ] && has "$tmp/err" "it is already traced by process" &&
		has "$tmp/err" "running it unprotected" ||
		{ t_fail static-tracer "$(cat "$tmp/err")"; return; }
	XOM_OPTIONS=backend=none run_rc static-tracer 126 "$ptracer" trace "$xom" run --require -- "$sprobe" env X || return
	has "$tmp/err" "refused (require=1)" && [ ! -s "$tmp/out" ] && t_pass static-tracer ||
		t_fail static-tracer "--require: $(cat "$tmp/out" "$tmp/err")"
}

# ptrace forbidden by a seccomp filter: the same.
test_noptrace() {
	XOM_OPTIONS=backend=none run_rc static-noptrace 6 "$ptracer" noptrace "$xom" run -- "$sprobe" exit 6 || return
	[ "$(xom_lines "$tmp/err")" = 1 ] && has "$tmp/err" "ptrace is not allowed here" &&
		has "$tmp/err" "running it unprotected" ||
		{ t_fail static-noptrace "$(cat "$tmp/err")"; return; }
	XOM_OPTIONS=backend=none run_rc static-noptrace 126 "$ptracer" noptrace "$xom" run --require -- "$sprobe" env X || return
	has "$tmp/err" "refused (require=1)" && [ ! -s "$tmp/out" ] && t_pass static-noptrace ||
		t_fail static-noptrace "--require: $(cat "$tmp/out" "$tmp/err")"
}

# Audit mode needs the runtime inside the program: refused.  Set-user-ID
# static programs are refused as before.
test_refusals() {
	run_rc static-refusals 126 "$xom" run --mode audit -- "$sprobe" exit 0 || return
	has "$tmp/err" "audit mode needs the runtime inside the program" ||
		{ t_fail static-refusals "audit: $(cat "$tmp/err")"; return; }
	cp "$sprobe" "$tmp/suid" && chmod u+s "$tmp/suid"
	XOM_OPTIONS=backend=none run_rc static-refusals 126 "$xom" run -- "$tmp/suid" exit 0 &&
		has "$tmp/err" "set-user-ID" && t_pass static-refusals ||
		t_fail static-refusals "set-user-ID: $(cat "$tmp/err")"
}

# A script whose interpreter is static: the interpreter is what is planned.
test_script() {
	printf '#!%s\n' "$(realpath "$sprobe")" >"$tmp/s-static"
	chmod +x "$tmp/s-static"
	XOM_OPTIONS=backend=none:verbose=1 run_rc static-script 2 "$xom" run -- "$tmp/s-static" || return
	has "$tmp/err" "$(realpath "$sprobe"): " && has "$tmp/err" "would be made execute-only" &&
		t_pass static-script || t_fail static-script "$(cat "$tmp/err")"
}

for t in test_nopku test_plan test_traced test_status test_signal test_forward test_fate \
	test_pdeathsig test_stop test_tty test_threads test_forkexec test_exec test_tracer test_noptrace \
	test_refusals test_script; do
	$t
done
t_summary
