#!/bin/bash
# tests/cmd/native-run.sh - xom run: its options, the program's exit
# status, signals passed on and reported, scripts, the programs it
# refuses, and the environment the program gets.  Part of make check-cmd
# (tests/cmd/native.sh runs every part); it runs on any machine, and a
# check that needs protection keys skips with the reason.
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/cmd/native-lib.sh

test_run_options() {
	# getopt_long: --mode=X, --mode X, -vvv; options end at PROG.
	run_rc run-options-set-xom-options 0 "$xom" run --mode=off -vvv "$probe" env XOM_OPTIONS -l || return
	has "$tmp/out" "XOM_OPTIONS=mode=off:verbose=3" && has "$tmp/out" "-l unset" ||
		{ t_fail run-options-set-xom-options "$(cat "$tmp/out")"; return; }
	run_rc run-options-set-xom-options 0 "$xom" run --mode off --verbose -- "$probe" env XOM_OPTIONS || return
	has "$tmp/out" "XOM_OPTIONS=mode=off:verbose=1" && t_pass run-options-set-xom-options ||
		t_fail run-options-set-xom-options "$(cat "$tmp/out")"
}

# A static program is no longer refused: xom protects it from outside
# (tests/cmd/native-static.sh tests that path in full).
test_run_static() {
	if [ ! -x "$B/tests/cmd/probe-static" ]; then
		t_skip run-static-not-refused "no static libc (libc6-dev's libc.a) to build a static program"
		return
	fi
	XOM_OPTIONS=backend=none run_rc run-static-not-refused 3 "$xom" run -- "$B/tests/cmd/probe-static" exit 3 &&
		! has "$tmp/err" "statically linked" && t_pass run-static-not-refused ||
		t_fail run-static-not-refused "refused or said something: $(cat "$tmp/err")"
}

test_run_setuid() {
	cp "$probe" "$tmp/probe-suid" && chmod u+s "$tmp/probe-suid"
	run_rc run-setuid-refused 126 "$xom" run -- "$tmp/probe-suid" exit 0 || return
	has "$tmp/err" "set-user-ID" || { t_fail run-setuid-refused "no 'set-user-ID' in: $(cat "$tmp/err")"; return; }
	cp "$probe" "$tmp/probe-sgid" && chmod g+s "$tmp/probe-sgid"
	run_rc run-setuid-refused 126 "$xom" run -- "$tmp/probe-sgid" exit 0 &&
		has "$tmp/err" "set-group-ID" && t_pass run-setuid-refused
}

test_run_notfound() {
	# A bare name is looked up in PATH; a name with a slash names a file.
	run_rc run-missing-program-exits-127 127 "$xom" run -- no-such-program-xom-test || return
	has "$tmp/err" "no-such-program-xom-test: command not found" ||
		{ t_fail run-missing-program-exits-127 "PATH lookup: $(cat "$tmp/err")"; return; }
	run_rc run-missing-program-exits-127 127 "$xom" run -- "$tmp/no/such" || return
	has "$tmp/err" "$tmp/no/such: no such file" && ! has "$tmp/err" "command not found" &&
		t_pass run-missing-program-exits-127 || t_fail run-missing-program-exits-127 "path: $(cat "$tmp/err")"
}

test_run_script() {
	# A script runs its interpreter, which is what xom checks.
	printf '#!/bin/sh\nexit 5\n' >"$tmp/s-sh"
	printf '#!%s\nexit 3\n' "$B/tests/cmd/probe-static" >"$tmp/s-static"
	chmod +x "$tmp/s-sh" "$tmp/s-static"
	# A static interpreter runs too (the probe's usage: 2).
	if [ -x "$B/tests/cmd/probe-static" ]; then
		XOM_OPTIONS=backend=none run_rc run-script-runs-interpreter 2 "$xom" run -- "$tmp/s-static" || return
	fi
	run_rc run-script-runs-interpreter 5 "$xom" run -- "$tmp/s-sh" && t_pass run-script-runs-interpreter
}

test_run_script_plain() {
	# No #!: execve fails with ENOEXEC, and xom runs it with /bin/sh, as a
	# shell does.
	printf 'echo "plain script $1"\nexit 6\n' >"$tmp/plain"
	chmod +x "$tmp/plain"
	run_rc run-plain-script-runs-sh 6 "$xom" run -- "$tmp/plain" arg || return
	has "$tmp/out" "plain script arg" ||
		{ t_fail run-plain-script-runs-sh "output: $(cat "$tmp/out" "$tmp/err")"; return; }
	# Binary data is not a script, for xom as for bash.
	printf 'ab\0cd\n' >"$tmp/binary"
	chmod +x "$tmp/binary"
	run_rc run-plain-script-runs-sh 126 "$xom" run -- "$tmp/binary" &&
		has "$tmp/err" "cannot execute binary file" && t_pass run-plain-script-runs-sh ||
		t_fail run-plain-script-runs-sh "binary: $(cat "$tmp/err")"
}

test_run_script_interp() {
	printf '#!/no/such/interp\nexit 0\n' >"$tmp/s-missing"
	chmod +x "$tmp/s-missing"
	run_rc run-missing-interpreter-exits-126 126 "$xom" run -- "$tmp/s-missing" &&
		has "$tmp/err" "its interpreter /no/such/interp: no such file" &&
		t_pass run-missing-interpreter-exits-126 || t_fail run-missing-interpreter-exits-126 "$(cat "$tmp/err")"
}

test_run_status() {
	local n
	for n in 0 1 7 42 255; do
		"$xom" run -- "$probe" exit "$n" 2>/dev/null
		[ $? = "$n" ] || { t_fail run-passes-exit-status "exit $n not passed through"; return; }
	done
	# PATH lookup, as a shell does it.
	run_rc run-passes-exit-status 1 "$xom" run -- false && t_pass run-passes-exit-status
}

test_run_signal() {
	run_rc run-reports-fatal-signal 139 "$xom" run -- "$probe" kill 11 || return
	has "$tmp/err" "xom: probe: killed by SIGSEGV" ||
		{ t_fail run-reports-fatal-signal "no report line in: $(cat "$tmp/err")"; return; }
	run_rc run-reports-fatal-signal 143 "$xom" run -- "$probe" kill 15 || return
	has "$tmp/err" "killed by SIGTERM" && t_pass run-reports-fatal-signal ||
		t_fail run-reports-fatal-signal "SIGTERM not reported"
}

# Each signal sent to xom reaches the program once, and xom stays until
# the program's fate (here: exit 0 after SIGTERM) decides its own.
test_run_forward() {
	local sig xpid rc
	"$xom" run -- "$probe" signals >"$tmp/sig" 2>"$tmp/sigerr" &
	xpid=$!
	wait_for "$tmp/sig" "ready" || { t_fail run-forwards-each-signal-once "the probe never started"; kill -9 $xpid; return; }
	for sig in USR1 USR2 ALRM HUP INT QUIT WINCH TERM; do
		kill -s "$sig" "$xpid" 2>/dev/null
		if wait_for "$tmp/sig" "got $sig"; then
			t_pass "run-forwards-$sig"
		else
			t_fail "run-forwards-$sig" "SIG$sig sent to xom did not reach the program"
		fi
	done
	finish "$xpid"
	rc=$?
	[ "$rc" = 0 ] && [ "$(grep -c '^got ' "$tmp/sig")" = 8 ] && t_pass run-forwards-each-signal-once ||
		t_fail run-forwards-each-signal-once "xom exit status $rc; the probe got: $(grep '^got' "$tmp/sig" | tr '\n' ' ')"
}

# A signal that kills the program gives xom's exit status.
test_run_fate() {
	local xpid pid rc
	sleeper run-exits-as-program-died || return
	kill -s USR1 "$xpid"
	finish "$xpid"
	rc=$?
	[ "$rc" = 138 ] && has "$tmp/err" "killed by SIGUSR1" && t_pass run-exits-as-program-died ||
		t_fail run-exits-as-program-died "exit status $rc, expected 138: $(cat "$tmp/err")"
}

# SIGKILL to xom kills the program too (PR_SET_PDEATHSIG).
test_run_pdeathsig() {
	local xpid pid
	sleeper run-killed-kills-program || return
	kill -KILL "$xpid"
	finish "$xpid" 2>/dev/null
	# Orphaned, it is reaped by whoever adopts it, or stays a zombie where
	# that one does not reap.
	if wait_state "$pid" Zg; then
		t_pass run-killed-kills-program
	else
		t_fail run-killed-kills-program "the program ($pid) outlived xom: state $(state "$pid")"
		kill -KILL "$pid" 2>/dev/null
	fi
}

# SIGTSTP stops xom with the program, SIGCONT wakes both.
test_run_stop() {
	local xpid pid
	# A job of its own process group, whose parent (this shell) is in
	# another: the kernel drops SIGTSTP sent to an orphaned group, which
	# the suite's own group can be when it runs without a terminal.
	set -m
	sleeper run-stops-and-continues-with-program || { set +m; return; }
	set +m
	kill -TSTP "$xpid"
	wait_state "$pid" T && wait_state "$xpid" T ||
		{ t_fail run-stops-and-continues-with-program "after SIGTSTP: xom $(state "$xpid"), program $(state "$pid")"; kill -9 "$xpid"; return; }
	kill -CONT "$xpid"
	wait_state "$pid" RS && wait_state "$xpid" RS ||
		{ t_fail run-stops-and-continues-with-program "after SIGCONT: xom $(state "$xpid"), program $(state "$pid")"; kill -9 "$xpid"; return; }
	kill -TERM "$xpid"
	finish "$xpid"
	[ $? = 143 ] && t_pass run-stops-and-continues-with-program || t_fail run-stops-and-continues-with-program "SIGTERM after SIGCONT did not end it"
}

# The terminal's Ctrl-C and Ctrl-\ reach the program once, not again
# through xom.
test_run_tty() {
	if ! command -v python3 >/dev/null; then
		t_skip run-tty-interrupt-reaches-once "no python3 to drive a pseudo-terminal"
		return
	fi
	python3 tests/cmd/ctrl-c.py "$xom" "$probe" >"$tmp/tty" 2>&1
	[ "$(grep -c 'got INT' "$tmp/tty")" = 1 ] && [ "$(grep -c 'got QUIT' "$tmp/tty")" = 1 ] &&
		t_pass run-tty-interrupt-reaches-once || t_fail run-tty-interrupt-reaches-once "$(tr '\r\n' '  ' <"$tmp/tty")"
}

test_run_env() {
	# The user's preload stays, after xom's, and is really loaded; other
	# XOM_OPTIONS keys stay, and the command line's replace the same keys.
	local lib empty=$B/tests/cmd/libempty.so
	lib=$(realpath "$B/libxom.so")
	XOM_TEST_MARK=$tmp/mark LD_PRELOAD=$empty XOM_OPTIONS=cache=off:mode=audit:verbose=0:exclude=*foo* \
		run_rc run-env-keeps-preload-and-options 0 "$xom" run --mode off -v -- "$probe" env LD_PRELOAD XOM_OPTIONS LD_AUDIT || return
	has "$tmp/out" "LD_PRELOAD=$lib:$empty" ||
		{ t_fail run-env-keeps-preload-and-options "LD_PRELOAD: $(grep LD_PRELOAD "$tmp/out")"; return; }
	grep -qx probe "$tmp/mark" 2>/dev/null ||
		{ t_fail run-env-keeps-preload-and-options "the user's preload was not loaded into the program (marks: $(cat "$tmp/mark" 2>&1))"; return; }
	has "$tmp/out" "XOM_OPTIONS=cache=off:exclude=*foo*:mode=off:verbose=1" ||
		{ t_fail run-env-keeps-preload-and-options "XOM_OPTIONS: $(grep XOM_OPTIONS "$tmp/out")"; return; }
	has "$tmp/out" "LD_AUDIT unset" || { t_fail run-env-keeps-preload-and-options "LD_AUDIT set"; return; }
	# Items are split as the runtime splits them: empty ones drop out, and
	# a key is what comes before the first '='.
	XOM_OPTIONS=::mode=audit=x::profile=$tmp/p::log=$tmp/log: \
		run_rc run-env-keeps-preload-and-options 0 "$xom" run --mode off -- "$probe" env XOM_OPTIONS || return
	has "$tmp/out" "XOM_OPTIONS=profile=$tmp/p:log=$tmp/log:mode=off" ||
		{ t_fail run-env-keeps-preload-and-options "split: $(cat "$tmp/out")"; return; }
	# A nested xom run does not add the library twice.
	run_rc run-env-keeps-preload-and-options 0 "$xom" run --mode off -- "$xom" run --mode off -- "$probe" env LD_PRELOAD || return
	[ "$(cat "$tmp/out")" = "LD_PRELOAD=$lib" ] || { t_fail run-env-keeps-preload-and-options "nested: $(cat "$tmp/out")"; return; }
	(unset LD_PRELOAD XOM_OPTIONS
	 run_rc run-env-keeps-preload-and-options 0 "$xom" run --audit --profile "$tmp/prof" -- "$probe" env LD_PRELOAD LD_AUDIT XOM_OPTIONS) ||
		{ t_fail run-env-keeps-preload-and-options "xom run --audit failed (above)"; return; }
	has "$tmp/out" "LD_AUDIT=$(realpath "$B/libxom-audit.so")" &&
		has "$tmp/out" "LD_PRELOAD=$lib" &&
		has "$tmp/out" "XOM_OPTIONS=profile=$tmp/prof" && t_pass run-env-keeps-preload-and-options ||
		t_fail run-env-keeps-preload-and-options "--audit: $(cat "$tmp/out")"
}

# A mistyped XOM_OPTIONS is refused before the program runs, as a mistyped
# --mode is: the runtime alone would run it unprotected behind one line.
test_run_bad_options() {
	XOM_OPTIONS=mode=enfroce run_rc run-refuses-bad-xom-options 64 "$xom" run -- "$probe" env XOM_OPTIONS || return
	[ ! -s "$tmp/out" ] && grep -q "^xom: run: XOM_OPTIONS: mode must be enforce, audit or off, got 'enfroce'$" "$tmp/err" ||
		{ t_fail run-refuses-bad-xom-options "the program ran, or the reason is missing: $(cat "$tmp/out" "$tmp/err" | tr '\n' '|')"; return; }
	t_pass run-refuses-bad-xom-options
}

test_run_nopku() {
	if [ "$pku" = 1 ]; then
		t_skip run-nopku-unprotected-or-refused "this CPU has protection keys; the no-PKU notice cannot be seen"
		return
	fi
	# Without PKU the runtime says so and the program runs unprotected;
	# with --require it is refused, with 126 (127 means not found).
	run_rc run-nopku-unprotected-or-refused 0 "$xom" run -- "$probe" readcode || return
	has "$tmp/err" "running unprotected" || { t_fail run-nopku-unprotected-or-refused "no notice: $(cat "$tmp/err")"; return; }
	run_rc run-nopku-unprotected-or-refused 126 "$xom" run --require -- "$probe" exit 0 && t_pass run-nopku-unprotected-or-refused
}

for t in test_run_options test_run_static test_run_setuid test_run_notfound test_run_script test_run_script_plain test_run_script_interp test_run_status test_run_signal test_run_forward test_run_fate test_run_pdeathsig test_run_stop test_run_tty test_run_env test_run_bad_options test_run_nopku; do
	$t
done
t_summary
