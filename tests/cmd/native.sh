#!/bin/bash
# The xom command's tests that run on any machine (make check-cmd).  Checks
# that need protection keys skip here with the reason; they run in the
# emulated-PKU VM through tests/cmd/guest.sh.  The last line is
# "N passed, N failed, N skipped" (tests/lib.sh).
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
B=${B:-build}
xom=$B/xom probe=$B/tests/cmd/probe
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The plans that these runs make go here, not into the user's own cache.
export XDG_CACHE_HOME=$tmp/cache
# The fallback for plans too: /tmp/xom-UID is shared with every other run.
export XDG_RUNTIME_DIR=$tmp/run
mkdir -m 700 "$XDG_RUNTIME_DIR"

# run_rc NAME WANT_RC CMD...: runs CMD with output in $tmp/out and $tmp/err,
# and checks its exit status.  Returns 0 when it matched, else says FAIL.
run_rc() {
	local name=$1 want=$2 rc
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" != "$want" ]; then
		t_fail "$name" "exit status $rc, expected $want; stderr: $(head -c 300 "$tmp/err")"
		return 1
	fi
	return 0
}
# wait_for FILE TEXT: waits up to 10 s until FILE contains TEXT.
wait_for() {
	local i=0
	while ! has "$1" "$2" 2>/dev/null; do
		[ $i -ge 200 ] && return 1
		sleep 0.05
		i=$((i + 1))
	done
}
# started FILE: waits up to 10 s until "probe sleep" has written its
# process ID into FILE, and prints it.
started() {
	local i=0
	while [ ! -s "$1" ]; do
		[ $i -ge 200 ] && return 1
		sleep 0.05
		i=$((i + 1))
	done
	cat "$1"
}
# sleeper NAME: starts "xom run -- probe sleep 30" in the background, its
# stderr in $tmp/err, and sets xpid (xom) and pid (the probe).  Says FAIL
# NAME and returns 1 if the probe never starts.
sleeper() {
	rm -f "$tmp/pid"
	"$xom" run -- "$probe" sleep 30 >"$tmp/pid" 2>"$tmp/err" &
	xpid=$!
	pid=$(started "$tmp/pid") && return 0
	t_fail "$1" "the probe never started"
	kill -KILL "$xpid"
	return 1
}
# state PID: the process's state letter (R, S, T, Z...), or "gone".
state() {
	local s
	s=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) && echo "${s%% *}" || echo gone
}
# wait_state PID LETTERS: waits up to 10 s until state PID is one of LETTERS.
wait_state() {
	local i=0
	while ! case $(state "$1") in [$2]*) true ;; *) false ;; esac; do
		[ $i -ge 200 ] && return 1
		sleep 0.05
		i=$((i + 1))
	done
}
# finish PID: waits up to 10 s for the background job PID to end, kills it
# if it has not (a broken xom must fail the test, not hang it), and gives
# its exit status.
finish() {
	wait_state "$1" Zg || kill -KILL "$1" 2>/dev/null
	wait "$1"
}
# The keys of loader/options.def, one "key=values" a line.
option_keys() {
	sed -n 's/^XOM_OPT(\([a-z_]*\), *[A-Z_]*, *[^,]*, *"\([^"]*\)".*/\1=\2/p' loader/options.def
}

pku=0
"$xom" check >/dev/null 2>&1 && pku=1

# ---- help and usage errors -------------------------------------------------

test_help() {
	run_rc help 0 "$xom" --help || return
	local c
	for c in run scan check status cache enable disable learn profile; do
		grep -q "^  $c " "$tmp/out" || { t_fail help "no '$c' line in xom --help"; return; }
	done
	# Whole synopses (profile's second line too), none wider than 80.
	grep -q "^ *install \[--system | --dir DIR\] PROFILE\.\.\.$" "$tmp/out" &&
		awk 'length($0) > 80 { bad = 1 } END { exit bad }' "$tmp/out" ||
		{ t_fail help "a synopsis cut short, or a line over 80 columns: $(awk 'length($0) > 80' "$tmp/out" | head -n 2)"; return; }
	for c in run scan check status cache enable disable learn profile; do
		run_rc help 0 "$xom" "$c" --help || return
		has "$tmp/out" "usage: xom $c" || { t_fail help "xom $c --help has no usage line"; return; }
		"$xom" help "$c" | cmp -s - "$tmp/out" || { t_fail help "xom help $c differs from xom $c --help"; return; }
	done
	run_rc help 0 "$xom" --version && has "$tmp/out" "xom " && t_pass help
}

test_usage() {
	local args
	for args in "" "frob" "--frob" "run" "run --frob x" "run --mode maybe true" \
		"run --mode" "run --audit=1 true" "run -x true" "check extra" "check --frob" \
		"status" "status abc" "status 1 2" "status --self 1" "status --json 1" \
		"status --system 1" "enable" "enable --frob" "disable --system x" \
		"disable --system --force" "check --conf" "scan" "help frob"; do
		# shellcheck disable=SC2086
		run_rc "usage[$args]" 64 "$xom" $args || return
		has "$tmp/err" "xom" && has "$tmp/err" "usage:" ||
			{ t_fail usage "'xom $args': no message with usage line"; return; }
	done
	run_rc usage 64 "$xom" frob && has "$tmp/err" "unknown command 'frob'" ||
		{ t_fail usage "unknown command not named"; return; }
	run_rc usage 64 "$xom" run --frob x && has "$tmp/err" "unknown option '--frob'" ||
		{ t_fail usage "unknown option not named"; return; }
	# --mode is checked by the runtime's own parser, in its words.
	run_rc usage 64 "$xom" run --mode maybe true &&
		has "$tmp/err" "mode must be enforce, audit or off, got 'maybe'" && t_pass usage ||
		t_fail usage "--mode maybe: $(cat "$tmp/err")"
}

# ---- xom run ---------------------------------------------------------------

test_run_options() {
	# getopt_long: --mode=X, --mode X, -vvv; options end at PROG.
	run_rc run-options 0 "$xom" run --mode=off -vvv "$probe" env XOM_OPTIONS -l || return
	has "$tmp/out" "XOM_OPTIONS=mode=off:verbose=3" && has "$tmp/out" "-l unset" ||
		{ t_fail run-options "$(cat "$tmp/out")"; return; }
	run_rc run-options 0 "$xom" run --mode off --verbose -- "$probe" env XOM_OPTIONS || return
	has "$tmp/out" "XOM_OPTIONS=mode=off:verbose=1" && t_pass run-options ||
		t_fail run-options "$(cat "$tmp/out")"
}

# A static program is no longer refused: xom protects it from outside
# (tests/cmd/native-static.sh tests that path in full).
test_run_static() {
	if [ ! -x "$B/tests/cmd/probe-static" ]; then
		t_skip run-static "no static libc (libc6-dev's libc.a) to build a static program"
		return
	fi
	XOM_OPTIONS=backend=none run_rc run-static 3 "$xom" run -- "$B/tests/cmd/probe-static" exit 3 &&
		! has "$tmp/err" "statically linked" && t_pass run-static ||
		t_fail run-static "refused or said something: $(cat "$tmp/err")"
}

test_run_setuid() {
	cp "$probe" "$tmp/probe-suid" && chmod u+s "$tmp/probe-suid"
	run_rc run-setuid 126 "$xom" run -- "$tmp/probe-suid" exit 0 || return
	has "$tmp/err" "set-user-ID" || { t_fail run-setuid "no 'set-user-ID' in: $(cat "$tmp/err")"; return; }
	cp "$probe" "$tmp/probe-sgid" && chmod g+s "$tmp/probe-sgid"
	run_rc run-setuid 126 "$xom" run -- "$tmp/probe-sgid" exit 0 &&
		has "$tmp/err" "set-group-ID" && t_pass run-setuid
}

test_run_notfound() {
	# A bare name is looked up in PATH; a name with a slash names a file.
	run_rc run-notfound 127 "$xom" run -- no-such-program-xom-test || return
	has "$tmp/err" "no-such-program-xom-test: command not found" ||
		{ t_fail run-notfound "PATH lookup: $(cat "$tmp/err")"; return; }
	run_rc run-notfound 127 "$xom" run -- "$tmp/no/such" || return
	has "$tmp/err" "$tmp/no/such: no such file" && ! has "$tmp/err" "command not found" &&
		t_pass run-notfound || t_fail run-notfound "path: $(cat "$tmp/err")"
}

test_run_script() {
	# A script runs its interpreter, which is what xom checks.
	printf '#!/bin/sh\nexit 5\n' >"$tmp/s-sh"
	printf '#!%s\nexit 3\n' "$B/tests/cmd/probe-static" >"$tmp/s-static"
	chmod +x "$tmp/s-sh" "$tmp/s-static"
	# A static interpreter runs too (the probe's usage: 2).
	if [ -x "$B/tests/cmd/probe-static" ]; then
		XOM_OPTIONS=backend=none run_rc run-script 2 "$xom" run -- "$tmp/s-static" || return
	fi
	run_rc run-script 5 "$xom" run -- "$tmp/s-sh" && t_pass run-script
}

test_run_script_plain() {
	# No #!: execve fails with ENOEXEC, and xom runs it with /bin/sh, as a
	# shell does.
	printf 'echo "plain script $1"\nexit 6\n' >"$tmp/plain"
	chmod +x "$tmp/plain"
	run_rc run-script-plain 6 "$xom" run -- "$tmp/plain" arg || return
	has "$tmp/out" "plain script arg" ||
		{ t_fail run-script-plain "output: $(cat "$tmp/out" "$tmp/err")"; return; }
	# Binary data is not a script, for xom as for bash.
	printf 'ab\0cd\n' >"$tmp/binary"
	chmod +x "$tmp/binary"
	run_rc run-script-plain 126 "$xom" run -- "$tmp/binary" &&
		has "$tmp/err" "cannot execute binary file" && t_pass run-script-plain ||
		t_fail run-script-plain "binary: $(cat "$tmp/err")"
}

test_run_script_interp() {
	printf '#!/no/such/interp\nexit 0\n' >"$tmp/s-missing"
	chmod +x "$tmp/s-missing"
	run_rc run-script-interp 126 "$xom" run -- "$tmp/s-missing" &&
		has "$tmp/err" "its interpreter /no/such/interp: no such file" &&
		t_pass run-script-interp || t_fail run-script-interp "$(cat "$tmp/err")"
}

test_run_status() {
	local n
	for n in 0 1 7 42 255; do
		"$xom" run -- "$probe" exit "$n" 2>/dev/null
		[ $? = "$n" ] || { t_fail run-status "exit $n not passed through"; return; }
	done
	# PATH lookup, as a shell does it.
	run_rc run-status 1 "$xom" run -- false && t_pass run-status
}

test_run_signal() {
	run_rc run-signal 139 "$xom" run -- "$probe" kill 11 || return
	has "$tmp/err" "xom: probe: killed by SIGSEGV" ||
		{ t_fail run-signal "no report line in: $(cat "$tmp/err")"; return; }
	run_rc run-signal 143 "$xom" run -- "$probe" kill 15 || return
	has "$tmp/err" "killed by SIGTERM" && t_pass run-signal ||
		t_fail run-signal "SIGTERM not reported"
}

# Each signal sent to xom reaches the program once, and xom stays until
# the program's fate (here: exit 0 after SIGTERM) decides its own.
test_run_forward() {
	local sig xpid rc
	"$xom" run -- "$probe" signals >"$tmp/sig" 2>"$tmp/sigerr" &
	xpid=$!
	wait_for "$tmp/sig" "ready" || { t_fail run-forward "the probe never started"; kill -9 $xpid; return; }
	for sig in USR1 USR2 ALRM HUP INT QUIT WINCH TERM; do
		kill -s "$sig" "$xpid" 2>/dev/null
		if wait_for "$tmp/sig" "got $sig"; then
			t_pass "run-forward-$sig"
		else
			t_fail "run-forward-$sig" "SIG$sig sent to xom did not reach the program"
		fi
	done
	finish "$xpid"
	rc=$?
	[ "$rc" = 0 ] && [ "$(grep -c '^got ' "$tmp/sig")" = 8 ] && t_pass run-forward ||
		t_fail run-forward "xom exit status $rc; the probe got: $(grep '^got' "$tmp/sig" | tr '\n' ' ')"
}

# A signal that kills the program gives xom's exit status.
test_run_fate() {
	local xpid pid rc
	sleeper run-fate || return
	kill -s USR1 "$xpid"
	finish "$xpid"
	rc=$?
	[ "$rc" = 138 ] && has "$tmp/err" "killed by SIGUSR1" && t_pass run-fate ||
		t_fail run-fate "exit status $rc, expected 138: $(cat "$tmp/err")"
}

# SIGKILL to xom kills the program too (PR_SET_PDEATHSIG).
test_run_pdeathsig() {
	local xpid pid
	sleeper run-pdeathsig || return
	kill -KILL "$xpid"
	finish "$xpid" 2>/dev/null
	# Orphaned, it is reaped by whoever adopts it, or stays a zombie where
	# that one does not reap.
	if wait_state "$pid" Zg; then
		t_pass run-pdeathsig
	else
		t_fail run-pdeathsig "the program ($pid) outlived xom: state $(state "$pid")"
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
	sleeper run-stop || { set +m; return; }
	set +m
	kill -TSTP "$xpid"
	wait_state "$pid" T && wait_state "$xpid" T ||
		{ t_fail run-stop "after SIGTSTP: xom $(state "$xpid"), program $(state "$pid")"; kill -9 "$xpid"; return; }
	kill -CONT "$xpid"
	wait_state "$pid" RS && wait_state "$xpid" RS ||
		{ t_fail run-stop "after SIGCONT: xom $(state "$xpid"), program $(state "$pid")"; kill -9 "$xpid"; return; }
	kill -TERM "$xpid"
	finish "$xpid"
	[ $? = 143 ] && t_pass run-stop || t_fail run-stop "SIGTERM after SIGCONT did not end it"
}

# The terminal's Ctrl-C and Ctrl-\ reach the program once, not again
# through xom.
test_run_tty() {
	if ! command -v python3 >/dev/null; then
		t_skip run-tty "no python3 to drive a pseudo-terminal"
		return
	fi
	python3 tests/cmd/ctrl-c.py "$xom" "$probe" >"$tmp/tty" 2>&1
	[ "$(grep -c 'got INT' "$tmp/tty")" = 1 ] && [ "$(grep -c 'got QUIT' "$tmp/tty")" = 1 ] &&
		t_pass run-tty || t_fail run-tty "$(tr '\r\n' '  ' <"$tmp/tty")"
}

# A mistyped XOM_OPTIONS is refused before the program runs, as a mistyped
# --mode is: the runtime alone would run it unprotected behind one line.
test_run_bad_options() {
	XOM_OPTIONS=mode=enfroce run_rc run-bad-options 64 "$xom" run -- "$probe" env XOM_OPTIONS || return
	[ ! -s "$tmp/out" ] && grep -q "^xom: run: XOM_OPTIONS: mode must be enforce, audit or off, got 'enfroce'$" "$tmp/err" ||
		{ t_fail run-bad-options "the program ran, or the reason is missing: $(cat "$tmp/out" "$tmp/err" | tr '\n' '|')"; return; }
	t_pass run-bad-options
}

test_run_env() {
	# The user's preload stays, after xom's, and is really loaded; other
	# XOM_OPTIONS keys stay, and the command line's replace the same keys.
	local lib empty=$B/tests/cmd/libempty.so
	lib=$(realpath "$B/libxom.so")
	XOM_TEST_MARK=$tmp/mark LD_PRELOAD=$empty XOM_OPTIONS=cache=off:mode=audit:verbose=0:exclude=*foo* \
		run_rc run-env 0 "$xom" run --mode off -v -- "$probe" env LD_PRELOAD XOM_OPTIONS LD_AUDIT || return
	has "$tmp/out" "LD_PRELOAD=$lib:$empty" ||
		{ t_fail run-env "LD_PRELOAD: $(grep LD_PRELOAD "$tmp/out")"; return; }
	grep -qx probe "$tmp/mark" 2>/dev/null ||
		{ t_fail run-env "the user's preload was not loaded into the program (marks: $(cat "$tmp/mark" 2>&1))"; return; }
	has "$tmp/out" "XOM_OPTIONS=cache=off:exclude=*foo*:mode=off:verbose=1" ||
		{ t_fail run-env "XOM_OPTIONS: $(grep XOM_OPTIONS "$tmp/out")"; return; }
	has "$tmp/out" "LD_AUDIT unset" || { t_fail run-env "LD_AUDIT set"; return; }
	# Items are split as the runtime splits them: empty ones drop out, and
	# a key is what comes before the first '='.
	XOM_OPTIONS=::mode=audit=x::profile=$tmp/p::log=$tmp/log: \
		run_rc run-env 0 "$xom" run --mode off -- "$probe" env XOM_OPTIONS || return
	has "$tmp/out" "XOM_OPTIONS=profile=$tmp/p:log=$tmp/log:mode=off" ||
		{ t_fail run-env "split: $(cat "$tmp/out")"; return; }
	# A nested xom run does not add the library twice.
	run_rc run-env 0 "$xom" run --mode off -- "$xom" run --mode off -- "$probe" env LD_PRELOAD || return
	[ "$(cat "$tmp/out")" = "LD_PRELOAD=$lib" ] || { t_fail run-env "nested: $(cat "$tmp/out")"; return; }
	(unset LD_PRELOAD XOM_OPTIONS
	 run_rc run-env 0 "$xom" run --audit --profile "$tmp/prof" -- "$probe" env LD_PRELOAD LD_AUDIT XOM_OPTIONS) ||
		{ t_fail run-env "xom run --audit failed (above)"; return; }
	has "$tmp/out" "LD_AUDIT=$(realpath "$B/libxom-audit.so")" &&
		has "$tmp/out" "LD_PRELOAD=$lib" &&
		has "$tmp/out" "XOM_OPTIONS=profile=$tmp/prof" && t_pass run-env ||
		t_fail run-env "--audit: $(cat "$tmp/out")"
}

test_run_nopku() {
	if [ "$pku" = 1 ]; then
		t_skip run-nopku "this CPU has protection keys; the no-PKU notice cannot be seen"
		return
	fi
	# Without PKU the runtime says so and the program runs unprotected;
	# with --require it is refused, with 126 (127 means not found).
	run_rc run-nopku 0 "$xom" run -- "$probe" readcode || return
	has "$tmp/err" "running unprotected" || { t_fail run-nopku "no notice: $(cat "$tmp/err")"; return; }
	run_rc run-nopku 126 "$xom" run --require -- "$probe" exit 0 && t_pass run-nopku
}

# ---- xom scan, check, status -------------------------------------------------

test_scan() {
	local f rc1 rc2 opt
	for opt in "" --json --map; do
		for f in "$probe" /bin/true /etc/passwd; do
			"$B/xom-scan" $opt "$f" >"$tmp/a" 2>"$tmp/ae"; rc1=$?
			"$xom" scan $opt "$f" >"$tmp/b" 2>"$tmp/be"; rc2=$?
			if [ "$rc1" != "$rc2" ] || ! cmp -s "$tmp/a" "$tmp/b" || ! cmp -s "$tmp/ae" "$tmp/be"; then
				t_fail scan "xom scan $opt $f differs from xom-scan (exit $rc2 vs $rc1)"
				return
			fi
		done
	done
	run_rc scan 64 "$xom" scan --bogus || return
	# A static program's share comes with the line that says the doors
	# never reach it; its stdout and status stay the scanner's.
	for f in "$B/tests/cmd/probe-static" "$B/tests/cmd/probe-static-pie"; do
		"$B/xom-scan" "$f" >"$tmp/a" 2>/dev/null; rc1=$?
		"$xom" scan "$f" >"$tmp/b" 2>"$tmp/be"; rc2=$?
		[ "$rc1" = "$rc2" ] && cmp -s "$tmp/a" "$tmp/b" &&
			[ "$(cat "$tmp/be")" = "xom: $f: statically linked: LD_PRELOAD, LD_AUDIT and /etc/ld.so.preload never load xom into it, so only \`xom run\` applies this plan, from outside, where the CPU has keys" ] ||
			{ t_fail scan "static $f: exit $rc2 vs $rc1: $(cat "$tmp/be")"; return; }
	done
	t_pass scan
}

test_check() {
	if [ "$pku" = 1 ]; then
		run_rc check 0 "$xom" check && has "$tmp/out" "cpu pku      ok" || return
	else
		run_rc check 1 "$xom" check || return
		has "$tmp/out" "cpu pku      FAIL" && has "$tmp/out" "no pku" &&
			has "$tmp/out" "glibc" && has "$tmp/out" "pkey_alloc" && has "$tmp/out" "cache" ||
			{ t_fail check "$(cat "$tmp/out")"; return; }
	fi
	tail -n 1 "$tmp/out" | grep -q '^verdict ' || { t_fail check "the last line is no verdict"; return; }
	[ ! -s "$tmp/err" ] && t_pass check || t_fail check "stderr: $(cat "$tmp/err")"
}

# One line per key of options.def with the value in force and its source.
test_check_values() {
	local kv key
	XOM_OPTIONS=mode=audit:verbose=2 "$xom" check >"$tmp/out" 2>&1
	for kv in $(option_keys); do
		key=${kv%%=*}
		grep -Eq "^  $key +(default|from XOM_OPTIONS) " "$tmp/out" ||
			{ t_fail check-values "no line for $key: $(grep '^  ' "$tmp/out" | tr '\n' '|')"; return; }
	done
	grep -Eq '^  mode +from XOM_OPTIONS +audit$' "$tmp/out" &&
		grep -Eq '^  verbose +from XOM_OPTIONS +2$' "$tmp/out" &&
		grep -Eq '^  backend +default +pkey$' "$tmp/out" && t_pass check-values ||
		t_fail check-values "$(grep '^  ' "$tmp/out" | tr '\n' '|')"
}

# A bad XOM_OPTIONS is reported in the runtime's own words.
test_check_options() {
	local opts words
	for opts in frob=1 mode=maybe verbose=99 cache= ; do
		XOM_OPTIONS=$opts LD_PRELOAD=$B/libxom.so "$probe" exit 0 2>"$tmp/rt" >/dev/null
		words=$(head -n 1 "$tmp/rt")
		words=${words#xom: } words=${words%; running unprotected}
		[ -n "$words" ] || { t_fail check-options "the runtime said nothing about XOM_OPTIONS=$opts"; return; }
		XOM_OPTIONS=$opts run_rc check-options 1 "$xom" check || return
		grep -F "XOM_OPTIONS  FAIL" "$tmp/out" | grep -qF -- "$words" ||
			{ t_fail check-options "XOM_OPTIONS=$opts: the runtime says '$words'; xom check: $(grep XOM_OPTIONS "$tmp/out")"; return; }
	done
	t_pass check-options
}

test_check_cache() {
	mkdir -m 755 "$tmp/c" "$tmp/c/xom" && touch "$tmp/c/xom/a" "$tmp/c/xom/b"
	XDG_RUNTIME_DIR=$tmp/run XDG_CACHE_HOME=$tmp/c "$xom" check >"$tmp/out" 2>&1
	has "$tmp/out" "$tmp/c/xom: 0 plans, read but not written: mode 0755 (plans are written only to a folder of mode 0700); new plans go to $tmp/run/xom instead" ||
		{ t_fail check-cache "$(grep cache "$tmp/out")"; return; }
	grep -q "^store .*/var/cache/xom: " "$tmp/out" ||
		{ t_fail check-cache "no system store line: $(grep store "$tmp/out")"; return; }
	# The runtime's rule: the last cache= wins; a relative XDG_CACHE_HOME
	# does not count.
	XOM_OPTIONS=cache=$tmp/one:cache=$tmp/two "$xom" check >"$tmp/out" 2>&1
	grep -q "^cache .*$tmp/two: not there yet" "$tmp/out" ||
		{ t_fail check-cache "last cache=: $(grep cache "$tmp/out")"; return; }
	XDG_CACHE_HOME=rel HOME=$tmp/h "$xom" check >"$tmp/out" 2>&1
	grep -q "^cache .*$tmp/h/.cache/xom" "$tmp/out" ||
		{ t_fail check-cache "relative XDG_CACHE_HOME: $(grep cache "$tmp/out")"; return; }
	XOM_OPTIONS=cache=off "$xom" check >"$tmp/out" 2>&1
	has "$tmp/out" "cache=off" && t_pass check-cache || t_fail check-cache "$(grep cache "$tmp/out")"
}

# As another user whose cache cannot be created: xom check names the
# folder the plans will go to, and the runtime puts them there and says so
# once (the next start finds them and stays quiet).
test_check_fallback() {
	local d u="setpriv --reuid=65534 --regid=65534 --clear-groups"
	if [ "$(id -u)" != 0 ]; then t_skip check-fallback "needs root to run as another user"; return; fi
	# The programs are copied where that user can reach them: the checkout
	# may be in a folder only its owner can enter.
	d=$(mktemp -d /tmp/xom-fb.XXXXXX) && chmod 755 "$d" && mkdir -m 755 "$d/home" "$d/bin" &&
		cp "$xom" "$B/libxom.so" "$B/xom-plan" "$d/bin/" &&
		mkdir -m 700 "$d/run" && chown 65534:65534 "$d/run" || { t_fail check-fallback "setup"; return; }
	$u env -i PATH=/usr/bin:/bin HOME=$d/home XDG_RUNTIME_DIR=$d/run "$d/bin/xom" check >"$tmp/out" 2>&1
	local said
	said=$(grep "^cache " "$tmp/out")
	case $said in
	*"$d/home/.cache/xom: cannot be created; new plans go to $d/run/xom instead") ;;
	*) t_fail check-fallback "xom check: $said"; rm -rf "$d"; return ;;
	esac
	local i
	for i in 1 2; do
		$u env -i PATH=/usr/bin:/bin HOME=$d/home XDG_RUNTIME_DIR=$d/run XOM_OPTIONS=backend=none:store=off \
			LD_PRELOAD=$d/bin/libxom.so /bin/true 2>"$tmp/rt$i"
	done
	if [ -s "$d/run/xom/plans" ] && [ ! -e "$d/home/.cache/xom" ] &&
		[ "$(grep -c "keeping them in $d/run/xom" "$tmp/rt1")" = 1 ] && [ ! -s "$tmp/rt2" ]; then
		t_pass check-fallback
	else
		t_fail check-fallback "fallback $(ls "$d/run/xom" 2>&1 | tr '\n' ' '); first run: $(cat "$tmp/rt1"); second: $(cat "$tmp/rt2")"
	fi
	rm -rf "$d"
}

# A user whose home cannot be written, without XDG_RUNTIME_DIR, and whose
# /tmp/xom-UID another user made first.  With no folder of its own under
# /run/user, every start scans and says so, in one line that names the
# user who made the folder; with one (logind's, which nobody but root can
# make), plans go there, and the next start is quiet and scans nothing.
# A uid that no one uses, so that the shared /tmp/xom-UID is the test's.
test_fallback_squatted() {
	local d u s i said
	if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
		t_skip fallback-squatted "needs root, and setpriv, to run as other users"; return
	fi
	u=$((40000 + $$ % 20000))
	while [ -e "/tmp/xom-$u" ] || [ -e "/run/user/$u" ] || getent passwd "$u" >/dev/null ||
		getent passwd $((u + 1)) >/dev/null; do
		u=$((u + 2))
	done
	s=$((u + 1))
	d=$(mktemp -d /tmp/xom-sq.XXXXXX) && chmod 755 "$d" && mkdir -m 755 "$d/home" "$d/bin" &&
		cp "$xom" "$B/libxom.so" "$B/xom-plan" "$d/bin/" &&
		mkdir -m 700 "/tmp/xom-$u" && chown "$s:$s" "/tmp/xom-$u" ||
		{ t_fail fallback-squatted "setup"; rm -rf "$d" "/tmp/xom-$u"; return; }
	sq_runs() { # sq_runs N: N starts as user u, stderr of start i in $tmp/sq$i
		for i in $(seq "$1"); do
			setpriv --reuid="$u" --regid="$u" --clear-groups env -i PATH=/usr/bin:/bin \
				HOME="$d/home" XOM_OPTIONS=backend=none:store=off:verbose=1 \
				LD_PRELOAD="$d/bin/libxom.so" /bin/true 2>"$tmp/sq$i"
		done
	}
	sq_runs 2
	said=$(setpriv --reuid="$u" --regid="$u" --clear-groups env -i PATH=/usr/bin:/bin \
		HOME="$d/home" "$d/bin/xom" check 2>&1 | grep '^fallback')
	local line="cannot keep plans in the cache (.*), nor in /tmp/xom-$u (/tmp/xom-$u belongs to uid $s, not to you (uid $u): that user made it first); every start scans again\$"
	if grep -q "$line" "$tmp/sq1" && grep -q "$line" "$tmp/sq2" &&
		[ "$(grep -vc 'pages\? execute-only\|scanning' "$tmp/sq2")" = 1 ] &&
		case $said in *"/tmp/xom-$u: not used: its owner is uid $s, not you") ;; *) false ;; esac; then
		t_pass fallback-squatted
	else
		t_fail fallback-squatted "first: $(cat "$tmp/sq1"); second: $(cat "$tmp/sq2"); check: $said"
	fi
	if [ "$(stat -c '%u %a' /run/user 2>/dev/null)" != "0 755" ]; then
		t_skip fallback-run-user "this machine has no /run/user of root's, mode 0755 (logind's)"
	elif mkdir -m 700 "/run/user/$u" && chown "$u:$u" "/run/user/$u"; then
		sq_runs 2
		if grep -q "keeping them in /run/user/$u/xom\$" "$tmp/sq1" && [ -s "/run/user/$u/xom/plans" ] &&
			! grep -v 'pages\? execute-only' "$tmp/sq2" | grep -q . &&
			grep -q 'libc.so.6: [0-9]* pages execute-only' "$tmp/sq2"; then
			t_pass fallback-run-user
		else
			t_fail fallback-run-user "first: $(cat "$tmp/sq1"); second: $(cat "$tmp/sq2")"
		fi
	else
		t_fail fallback-run-user "cannot make /run/user/$u"
	fi
	rm -rf "$d" "/tmp/xom-$u" "/run/user/$u"
}

test_status() {
	local pid
	run_rc status 0 "$xom" status --self || return
	has "$tmp/out" "$(realpath "$xom")" && has "$tmp/out" "libc.so" &&
		has "$tmp/out" "total:" || { t_fail status "$(cat "$tmp/out")"; return; }
	# xom itself runs without a plan in force: its readable pages are
	# what an attacker can read, not "0 bytes".
	local n
	n=$(sed -n 's/^total: [0-9]* code pages execute-only, \([0-9]*\) readable, .*/\1/p' "$tmp/out")
	[ "${n:-0}" -gt 0 ] && grep -q "^readable to an attacker: all $n readable code pages ($((n * 4096)) bytes); no object has a plan in force" "$tmp/out" ||
		{ t_fail status "self: $(grep -E '^(total|readable)' "$tmp/out" | tr '\n' '|')"; return; }
	# The child must not run this shell's EXIT trap if it dies before its
	# exec, and is looked at only once it is sleep.
	(trap - EXIT; exec sleep 30) &
	pid=$!
	local i=0
	while [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != sleep ] && [ $i -lt 200 ]; do
		sleep 0.05; i=$((i + 1))
	done
	run_rc status 0 "$xom" status "$pid"
	kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
	has "$tmp/out" "process $pid (sleep)" && t_pass status ||
		t_fail status "status PID: $(head -2 "$tmp/out")"
}

test_status_gone() {
	local pid
	(exit 0) & pid=$!
	wait "$pid"
	run_rc status-gone 1 "$xom" status "$pid" || return
	has "$tmp/err" "process $pid: no such process" || { t_fail status-gone "$(cat "$tmp/err")"; return; }
	run_rc status-gone 1 "$xom" status 999999999 &&
		has "$tmp/err" "no such process" && t_pass status-gone
}

# xom status reads each mapped file's key through the mapping itself
# (/proc/PID/map_files), never through the name that smaps shows, which
# belongs to the process's owner: here another user's program whose file
# was removed, and "FILE (deleted)" made a link to a FIFO.  A writer
# blocked on the FIFO is let through by any open of it.  Root's status
# must not open it, nor hang, and must find the plan of the file really
# mapped ("?": found, but not in force); the owner's own status, which
# may not use map_files, must not open it either.
test_status_replaced() {
	local d u="setpriv --reuid=65534 --regid=65534 --clear-groups" pid w i rc rc2 col col2
	if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
		t_skip status-replaced "needs root, and setpriv, to run a process as another user"; return
	fi
	d=$(mktemp -d /tmp/xom-st.XXXXXX) && chmod 755 "$d" && mkdir -m 755 "$d/bin" &&
		cp "$xom" "$d/bin/" && cp "$(command -v sleep)" "$d/prog" && mkfifo "$d/fifo" &&
		"$xom" cache build "$d/prog" >/dev/null 2>&1 ||
		{ t_fail status-replaced "setup"; rm -rf "$d"; return; }
	$u "$d/prog" 60 & pid=$!
	i=0
	while [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != prog ] && [ $i -lt 200 ]; do
		sleep 0.05; i=$((i + 1))
	done
	rm "$d/prog" && ln -s fifo "$d/prog (deleted)"
	(exec 3>"$d/fifo"; echo opened >"$d/opened") & w=$!
	timeout 20 "$xom" status "$pid" >"$tmp/out" 2>"$tmp/err"; rc=$?
	timeout 20 $u "$d/bin/xom" status "$pid" >"$tmp/out2" 2>"$tmp/err2"; rc2=$?
	sleep 0.3
	col=$(grep -F "$d/prog (deleted)" "$tmp/out" | awk '{ print $4 }')
	col2=$(grep -F "$d/prog (deleted)" "$tmp/out2" | awk '{ print $4 }')
	if [ ! -e "$d/opened" ] && [ $rc = 0 ] && [ "$col" = "?" ] && [ $rc2 = 0 ] && [ "$col2" = "-" ]; then
		t_pass status-replaced
	else
		t_fail status-replaced "FIFO opened: $([ -e "$d/opened" ] && echo yes || echo no); root: exit $rc, '$col', $(head -c 400 "$tmp/out" "$tmp/err"); owner: exit $rc2, '$col2', $(head -c 300 "$tmp/err2")"
	fi
	(: <>"$d/fifo") 2>/dev/null
	kill "$pid" "$w" 2>/dev/null; wait "$pid" "$w" 2>/dev/null
	rm -rf "$d"
}

# Only --xp with a non-zero key counts as execute-only (on made-up smaps
# text, since this kernel may show no keys).
test_status_count() {
	"$B/tests/cmd/status_count" >"$tmp/out" 2>&1 && t_pass status-count ||
		t_fail status-count "$(cat "$tmp/out")"
}

# make install with a scratch DESTDIR and PREFIX: everything it writes
# lies under DESTDIR+PREFIX, whatever the system-wide variables' defaults.
# make install-system writes xom.conf, the shipped profiles and the apt
# configuration, and lists each of those paths; uninstall takes the
# preload line out first, then removes exactly what was installed.
test_install() {
	local f d=$tmp/dest p=/opt/xomtest inst out listed rc
	inst=$d$p
	mkdir -p "$d"
	make --no-print-directory -s install B="$B" DESTDIR="$d" PREFIX="$p" >"$tmp/out" 2>&1 ||
		{ t_fail install "$(tail -3 "$tmp/out")"; return; }
	# Outside DESTDIR+PREFIX: only the folders above PREFIX.
	out=$(cd "$d" && find . -mindepth 1 | sed 's|^\.||' | grep -vx -e /opt -e "$p" | grep -v "^$p/" || true)
	t_check install-within-prefix '[ -z "$out" ]' "written outside $p: $(echo $out)"
	for f in bin/xom bin/xom-scan lib/xom/libxom.so lib/xom/libxom-audit.so \
		lib/xom/xom-plan lib/xom/libxom-scan.so lib/xom/xom-apt-hook share/man/man1/xom.1 \
		share/man/man5/xom.conf.5 $(cd profiles && ls -- *.profile | sed 's|^|share/xom/profiles/|') \
		$(sed -n 's/^program \([0-9a-f]*\) .*/lib\/xom\/profiles\/\1/p' profiles/*.profile); do
		[ -e "$inst/$f" ] || { t_fail install "$f not installed"; return; }
	done
	cmp -s "$inst/share/man/man1/xom.1" "$B/xom.1" &&
		cmp -s "$inst/share/man/man5/xom.conf.5" "$B/xom.conf.5" ||
		{ t_fail install "the installed man pages are not the built ones"; return; }
	run_rc install 0 "$inst/bin/xom" run -- "$probe" env LD_PRELOAD || return
	has "$tmp/out" "LD_PRELOAD=$inst/lib/xom/libxom.so" ||
		{ t_fail install "installed xom uses $(cat "$tmp/out")"; return; }
	"$inst/bin/xom" check >"$tmp/out" 2>&1
	has "$tmp/out" "$inst/lib/xom/xom-plan" || { t_fail install "check: $(cat "$tmp/out")"; return; }
	run_rc install 0 "$inst/bin/xom" scan "$probe" || return
	t_pass install

	# install-system: what it wrote outside PREFIX is exactly what it lists.
	mkdir -p "$d/etc/apt/apt.conf.d"
	make --no-print-directory -s install-system B="$B" DESTDIR="$d" PREFIX="$p" >"$tmp/out" 2>&1 ||
		{ t_fail install-system "$(tail -3 "$tmp/out")"; return; }
	listed=$(sed -n '/^written outside PREFIX:$/,$p' "$tmp/out" | sed -n 's/^  //p' | sort)
	out=$(find "$d" ! -type d | grep -v "^$inst/" | sort)
	t_check install-system-lists '[ -n "$listed" ] && [ "$listed" = "$out" ] &&
		grep -qx "$d/etc/xom.conf" <<<"$listed" && grep -qx "$d/etc/apt/apt.conf.d/90xom" <<<"$listed" &&
		grep -q "^$d/var/cache/xom/profiles/[0-9a-f]*$" <<<"$listed"' \
		"listed [$(echo $listed)], written [$(echo $out)]"
	# The administrator's own xom.conf is never replaced, nor listed.
	echo "/usr/bin/mine off" >"$d/etc/xom.conf"
	make --no-print-directory -s install-system B="$B" DESTDIR="$d" PREFIX="$p" >"$tmp/out" 2>&1 &&
		[ "$(cat "$d/etc/xom.conf")" = "/usr/bin/mine off" ] && ! grep -q "^  $d/etc/xom.conf" "$tmp/out" ||
		{ t_fail install-system "a second install-system replaced xom.conf: $(cat "$d/etc/xom.conf")"; return; }
	rm "$d/etc/xom.conf"

	# uninstall, with this PREFIX's libxom.so in the preload list: the line
	# goes first (xom disable --system, root's), or nothing goes.
	printf '/usr/lib/other.so\n%s/lib/xom/libxom.so\n' "$p" >"$d/etc/ld.so.preload"
	touch "$inst/bin/other"
	make --no-print-directory -s uninstall B="$B" DESTDIR="$d" PREFIX="$p" >"$tmp/out" 2>&1
	rc=$?
	if [ "$(id -u)" = 0 ]; then
		t_check uninstall-disables-first '[ $rc = 0 ] && [ "$(cat "$d/etc/ld.so.preload")" = /usr/lib/other.so ] &&
			has "$tmp/out" "disable --system --file $d/etc/ld.so.preload"' \
			"rc $rc, preload [$(cat "$d/etc/ld.so.preload")]: $(tail -3 "$tmp/out")"
	else
		t_check uninstall-disables-first '[ $rc != 0 ] && [ -e "$inst/lib/xom/libxom.so" ] &&
			grep -qx "$p/lib/xom/libxom.so" "$d/etc/ld.so.preload" && has "$tmp/out" "nothing removed"' \
			"not root: rc $rc, $(tail -3 "$tmp/out")"
		rm "$d/etc/ld.so.preload"
		make --no-print-directory -s uninstall B="$B" DESTDIR="$d" PREFIX="$p" >"$tmp/out" 2>&1
	fi
	rm -f "$d/etc/ld.so.preload"
	# uninstall removes exactly that: a file of someone else's stays.
	f=$(cd "$d" && find . ! -type d | sort | tr '\n' ' ')
	[ "$f" = "./opt/xomtest/bin/other " ] && [ ! -e "$inst/lib/xom" ] && [ ! -e "$inst/share/xom" ] &&
		[ ! -e "$d/var/cache/xom/profiles" ] && t_pass uninstall ||
		t_fail uninstall "left behind: $f$( [ -e "$inst/lib/xom" ] && echo ' lib/xom/')"
}

# The built page: every key of options.def with its values, and clean roff.
test_man() {
	local page=$B/xom.1 c kv n w
	[ -s "$page" ] || { t_fail man "$page was not built"; return; }
	sed 's/\\-/-/g; s/\\f[BIR]//g; s/\\e/\\/g' "$page" >"$tmp/man"
	for c in "xom run" "xom scan" "xom check" "xom status" "xom cache build" \
		"xom cache stats" "xom cache prune" /var/cache/xom XOM_OPTIONS \
		"xom enable --system" "xom disable --system" "xom status --system" \
		"xom check [--conf FILE]" /etc/ld.so.preload "xom.conf (5)" \
		"xom learn" "xom profile show" "xom profile merge" "xom profile install" \
		/var/cache/xom/profiles; do
		has "$tmp/man" "$c" || { t_fail man "$page does not mention $c"; return; }
	done
	sed 's/\\-/-/g; s/\\f[BIR]//g; s/\\e/\\/g' "$B/xom.conf.5" >"$tmp/man5"
	for c in /etc/xom.conf "PATTERN OPTIONS" "xom check --conf" "exclude=libGLdispatch.so*" \
		"require=1"; do
		has "$tmp/man5" "$c" || { t_fail man "xom.conf.5 does not mention $c"; return; }
	done
	for kv in $(option_keys); do
		has "$tmp/man5" "$kv" || { t_fail man "xom.conf.5 does not list $kv"; return; }
	done
	n=0
	for kv in $(option_keys); do
		n=$((n + 1))
		has "$tmp/man" "$kv" || { t_fail man "$page does not list $kv"; return; }
	done
	[ "$n" -gt 0 ] && [ "$n" = "$(grep -c '^XOM_OPT(' loader/options.def)" ] ||
		{ t_fail man "read $n keys from loader/options.def"; return; }
	! has "$page" "@XOM_OPTIONS_KEYS@" || { t_fail man "the key list was not filled in"; return; }
	if command -v groff >/dev/null; then
		w=$(groff -man -Tutf8 -ww -z "$page" "$B/xom.conf.5" 2>&1)
		[ -z "$w" ] || { t_fail man "groff: $w"; return; }
	fi
	t_pass man
}

# docs/usage.md's table of XOM_OPTIONS has a row for every key of options.def,
# and no row for a key that is not there.
test_readme_keys() {
	local k rows
	for k in $(option_keys | sed 's/=.*//'); do
		grep -q "^| \`$k\` |" docs/usage.md || { t_fail readme-keys "docs/usage.md has no row for $k"; return; }
	done
	rows=$(sed -n '/^## XOM_OPTIONS/,/^## /p' docs/usage.md | grep -c '^| `')
	[ "$rows" = "$(grep -c '^XOM_OPT(' loader/options.def)" ] ||
		{ t_fail readme-keys "$rows rows in docs/usage.md's table"; return; }
	t_pass readme-keys
}

# ---- xom cache ---------------------------------------------------------------

cache=$(realpath "$B/tests/cmd/cache")
# objects_of FILE: the real paths of the objects that the runtime's verbose
# lines in FILE name ("xom: PATH: N pages execute-only..."), sorted.
objects_of() {
	sed -n 's/^xom: \(.*\): [0-9]* pages* execute-only.*/\1/p' "$1" |
		while IFS= read -r p; do realpath "$p"; done | sort -u
}
# plans_of [STATS OPTIONS]: "STATE PATH" of every plan, sorted by path.
plans_of() { "$xom" cache stats --list "$@" | cut -d' ' -f2- | sort -k2; }
# A folder that the runtime trusts as a system store's parent: root's, and
# nobody else can write to it or anything above it (not /tmp).
trusted_dir() {
	local d base
	[ "$(id -u)" = 0 ] || return 1
	for base in /run /var/cache /var/tmp; do
		d=$(mktemp -d "$base/xom-test.XXXXXX" 2>/dev/null) || continue
		if "$xom" cache stats --store "$d" >/dev/null 2>&1 && trusted_path "$d"; then
			echo "$d"
			return 0
		fi
		rmdir "$d"
	done
	return 1
}
# trusted_path DIR: DIR and every folder above it are root's, mode g-w,o-w.
trusted_path() {
	local p=$1
	while :; do
		[ "$(stat -c %u "$p")" = 0 ] && [ $(( 0$(stat -c %a "$p") & 022 )) = 0 ] || return 1
		[ "$p" = / ] && return 0
		p=$(dirname "$p")
	done
}

. tests/cmd/native-system.sh

test_cache_usage() {
	local args
	for args in "cache" "cache frob" "cache build" "cache build --system $probe" \
		"cache build --jobs 0 $probe" "cache build --jobs x $probe" "cache stats extra" \
		"cache stats --system" "cache stats --json --list" "cache prune --jobs 2" \
		"cache build --json $probe" "cache --frob" "cache build --store"; do
		# shellcheck disable=SC2086
		run_rc "cache-usage[$args]" 64 "$xom" $args || return
		has "$tmp/err" "usage: xom cache" ||
			{ t_fail cache-usage "'xom $args': no usage line: $(cat "$tmp/err")"; return; }
	done
	run_rc cache-usage 0 "$xom" cache --help &&
		has "$tmp/out" "xom cache build --system" && has "$tmp/out" "/var/cache/xom" &&
		has "$tmp/out" "Exit status" && t_pass cache-usage ||
		t_fail cache-usage "$(head -3 "$tmp/out")"
}

# The key test: after xom cache build PROG, running PROG scans nothing, and
# the cache holds exactly what the runtime loaded: the program, the library
# that only its RUNPATH finds, libc, the dynamic linker and libxom.so.
test_cache_build_closure() {
	local want got
	export XDG_CACHE_HOME=$tmp/cc XDG_RUNTIME_DIR=$tmp/cc-run
	mkdir -m 700 "$tmp/cc-run"
	run_rc cache-build 0 "$xom" cache build "$cache/cacheprog" /bin/ls || return
	grep -Eq '^xom: [0-9]+ plans built .* into '"$tmp/cc/xom"' in .*; 0 already current; start-ups: 2 listed, 0 unchanged$' "$tmp/err" &&
		[ "$(wc -l <"$tmp/err")" = 1 ] ||
		{ t_fail cache-build "summary: $(cat "$tmp/err")"; return; }
	cp "$tmp/cc/xom/plans" "$tmp/index-before"
	plans_of >"$tmp/plans-built"
	: >"$tmp/rt"
	for p in "$cache/cacheprog" /bin/ls; do
		XOM_OPTIONS=store=off:backend=none:verbose=1 LD_PRELOAD=$B/libxom.so "$p" >/dev/null 2>>"$tmp/rt"
	done
	if grep -q "scanning" "$tmp/rt" || ! cmp -s "$tmp/index-before" "$tmp/cc/xom/plans"; then
		t_fail cache-build-no-scan "the runtime scanned after xom cache build: $(grep scanning "$tmp/rt")"
	else
		t_pass cache-build-no-scan
	fi
	want=$(objects_of "$tmp/rt")
	got=$(sed -n 's/^current //p' "$tmp/plans-built" | while IFS= read -r p; do realpath "$p"; done | sort -u)
	[ -n "$want" ] && [ "$want" = "$got" ] && echo "$got" | grep -q "/lib/libcachedep.so$" &&
		t_pass cache-build-closure ||
		t_fail cache-build-closure "the runtime loaded: $(echo $want); the cache has: $(echo $got)"
	# Current plans are not made again.
	run_rc cache-build-current 0 "$xom" cache build "$cache/cacheprog" || return
	grep -q "^xom: 0 plans built .*; [0-9]* already current; start-ups: 0 listed, 1 unchanged$" "$tmp/err" &&
		t_pass cache-build-current || t_fail cache-build-current "$(cat "$tmp/err")"
	export XDG_RUNTIME_DIR=$tmp/run
	export XDG_CACHE_HOME=$tmp/cache
}

# A build keeps what the dynamic linker listed (the store's listings file)
# and lists again only a program whose files, RUNPATH folders or linker
# inputs changed; the sets it records are those of a fresh listing.
test_cache_build_listings() {
	local d=$tmp/lp st=$tmp/cl/xom
	export XDG_CACHE_HOME=$tmp/cl
	mkdir -p "$d" && cp -a "$cache/cacheprog" "$cache/lib" "$d/"
	starts() { grep -q "; start-ups: $1 listed, $2 unchanged$" "$tmp/err"; }
	run_rc listings-first 0 "$xom" cache build "$d/cacheprog" /bin/ls &&
		{ starts 2 0 && [ -s "$st/listings" ] && t_pass listings-first ||
			t_fail listings-first "$(cat "$tmp/err")"; }
	run_rc listings-current 0 "$xom" cache build "$d/cacheprog" /bin/ls &&
		{ starts 0 2 && t_pass listings-current || t_fail listings-current "$(cat "$tmp/err")"; }
	cp "$st/plans" "$tmp/index-memo"
	# The same sets as when everything is listed again.
	rm "$st/listings"
	run_rc listings-same-sets 0 "$xom" cache build "$d/cacheprog" /bin/ls &&
		{ starts 2 0 && cmp -s "$tmp/index-memo" "$st/plans" && t_pass listings-same-sets ||
			t_fail listings-same-sets "$(cat "$tmp/err"); index differs: $(cmp "$tmp/index-memo" "$st/plans" 2>&1)"; }
	# A library touched, a file new in the program's RUNPATH folder: that
	# program alone is listed again.
	touch -d '2001-01-01' "$d/lib/libcachedep.so"
	run_rc listings-lib-changed 0 "$xom" cache build "$d/cacheprog" /bin/ls &&
		{ starts 1 1 && t_pass listings-lib-changed || t_fail listings-lib-changed "$(cat "$tmp/err")"; }
	: >"$d/lib/new-file"
	run_rc listings-runpath-changed 0 "$xom" cache build "$d/cacheprog" /bin/ls &&
		{ starts 1 1 && t_pass listings-runpath-changed || t_fail listings-runpath-changed "$(cat "$tmp/err")"; }
	# A build of some programs keeps the others' listings while they are
	# there.
	"$xom" cache build /bin/ls >"$tmp/out" 2>"$tmp/err"
	local kept=$(grep -c "^P .* $d/cacheprog$" "$st/listings")
	mv "$d/cacheprog" "$d/moved"
	"$xom" cache build /bin/ls >"$tmp/out" 2>"$tmp/err"
	t_check listings-kept '[ "$kept" = 1 ] && ! grep -q "^P .* $d/cacheprog$" "$st/listings" && grep -q "^P .* /bin/ls$" "$st/listings"' \
		"kept $kept: $(grep "^P" "$st/listings" | tr '\n' '|')"
	mv "$d/moved" "$d/cacheprog"
	# A file that others may write is not believed.
	chmod 666 "$st/listings"
	run_rc listings-untrusted 0 "$xom" cache build "$d/cacheprog" /bin/ls &&
		{ starts 2 0 && [ "$(stat -c %a "$st/listings")" = 644 ] && t_pass listings-untrusted ||
			t_fail listings-untrusted "$(cat "$tmp/err")"; }
	export XDG_CACHE_HOME=$tmp/cache
}

test_cache_build_errors() {
	export XDG_CACHE_HOME=$tmp/ce
	run_rc cache-build-missing 2 "$xom" cache build "$tmp/no/such" &&
		has "$tmp/err" "$tmp/no/such: no such file" && t_pass cache-build-missing ||
		t_fail cache-build-missing "$(cat "$tmp/err")"
	printf 'not elf\n' >"$tmp/notelf"
	run_rc cache-build-notelf 1 "$xom" cache build "$tmp/notelf" &&
		has "$tmp/err" "$tmp/notelf: not an x86-64 ELF" && t_pass cache-build-notelf ||
		t_fail cache-build-notelf "$(cat "$tmp/err")"
	if [ -x "$B/tests/cmd/probe-static" ]; then
		# xom run protects it from outside with this plan: the next run
		# finds it and scans nothing, where a run before the build scans.
		XDG_CACHE_HOME=$tmp/ce-static XOM_OPTIONS=backend=none:verbose=1 \
			run_rc cache-build-static 0 "$xom" run -- "$B/tests/cmd/probe-static" exit 0 &&
			has "$tmp/err" "scanning it for the first time" &&
		run_rc cache-build-static 0 "$xom" cache build "$B/tests/cmd/probe-static" &&
			has "$tmp/err" " built (" && ! has "$tmp/err" "statically linked" &&
			XOM_OPTIONS=backend=none:verbose=1 run_rc cache-build-static 0 "$xom" run -- "$B/tests/cmd/probe-static" exit 0 &&
			! has "$tmp/err" "scanning" && has "$tmp/err" "would be made execute-only" &&
			t_pass cache-build-static || t_fail cache-build-static "$(cat "$tmp/err")"
	fi
	# A program that names an audit module: listing its libraries would
	# run the module, so they are left out, and it says so.
	rm -f "$cache/audit-ran"
	env -i LD_TRACE_LOADED_OBJECTS=1 /lib64/ld-linux-x86-64.so.2 "$cache/auditprog" >/dev/null 2>&1
	if [ ! -e "$cache/audit-ran" ]; then
		t_fail cache-build-audit "the test's audit module did not run under ldd"
	else
		rm -f "$cache/audit-ran"
		run_rc cache-build-audit 1 "$xom" cache build "$cache/auditprog" &&
			has "$tmp/err" "$cache/auditprog: names audit modules (DT_AUDIT)" &&
			[ ! -e "$cache/audit-ran" ] && plans_of | grep -q "current $cache/auditprog$" &&
			t_pass cache-build-audit ||
			t_fail cache-build-audit "$( [ -e "$cache/audit-ran" ] && echo 'the audit module ran: ')$(cat "$tmp/err")"
	fi
	# The same program with its PT_DYNAMIC header cut to one entry: the
	# dynamic linker reads the section in memory up to DT_NULL, and still
	# runs the module; so must the check read it.
	cp "$cache/auditprog" "$tmp/auditprog-hidden"
	python3 - "$tmp/auditprog-hidden" <<-'PY'
	import struct, sys
	f = open(sys.argv[1], "r+b"); b = f.read()
	phoff, = struct.unpack_from("<Q", b, 32); size, n = struct.unpack_from("<HH", b, 54)
	for i in range(n):
	    at = phoff + i * size
	    if struct.unpack_from("<I", b, at)[0] == 2:         # PT_DYNAMIC
	        f.seek(at + 32); f.write(struct.pack("<Q", 16))  # p_filesz: one entry
	PY
	rm -f "$cache/audit-ran"
	run_rc cache-build-audit-hidden 1 "$xom" cache build "$tmp/auditprog-hidden" &&
		has "$tmp/err" "names audit modules (DT_AUDIT)" && [ ! -e "$cache/audit-ran" ] &&
		t_pass cache-build-audit-hidden ||
		t_fail cache-build-audit-hidden "$( [ -e "$cache/audit-ran" ] && echo 'the audit module ran: ')$(cat "$tmp/err")"
	# A library whose path leads to a FIFO would hold the listing for ever:
	# it is given up after 10 s, and the program's own plan is still made.
	mkdir -p "$tmp/fifo"
	printf 'int f(void) { return 1; }\n' >"$tmp/fifo/l.c"
	printf 'int f(void); int main(void) { return f(); }\n' >"$tmp/fifo/m.c"
	gcc -shared -fPIC -o "$tmp/fifo/l.so" -Wl,-soname,"$tmp/fifo/dep.so" "$tmp/fifo/l.c" &&
		gcc -o "$tmp/fifo/prog" "$tmp/fifo/m.c" "$tmp/fifo/l.so" && mkfifo "$tmp/fifo/dep.so" ||
		{ t_fail cache-build-hang "cannot build the test's program"; return; }
	run_rc cache-build-hang 1 timeout 60 "$xom" cache build "$tmp/fifo/prog" &&
		has "$tmp/err" "$tmp/fifo/prog: the dynamic linker did not finish listing its libraries in 10 s" &&
		plans_of | grep -q "current $tmp/fifo/prog$" && t_pass cache-build-hang ||
		t_fail cache-build-hang "$(cat "$tmp/err")"
	# A file the scanner refuses is named, and the others are kept.
	cp "$cache/libcache1.so" "$tmp/trunc.so" && truncate -s 2000 "$tmp/trunc.so"
	run_rc cache-build-bad 1 "$xom" cache build "$tmp/trunc.so" "$cache/libcache2.so" || return
	grep -q "^xom: $tmp/trunc.so: " "$tmp/err" && grep -q "could not be analysed" "$tmp/err" &&
		plans_of | grep -q "current $cache/libcache2.so$" && t_pass cache-build-bad ||
		t_fail cache-build-bad "$(cat "$tmp/err")"
	# A cache that only others may write: exit 2, said.
	mkdir -p -m 755 "$tmp/cw/xom"
	XDG_CACHE_HOME=$tmp/cw run_rc cache-build-unwritable 2 "$xom" cache build "$cache/libcache3.so" &&
		has "$tmp/err" "cannot keep plans in $tmp/cw/xom" && t_pass cache-build-unwritable ||
		t_fail cache-build-unwritable "$(cat "$tmp/err")"
	export XDG_CACHE_HOME=$tmp/cache
}

# The progress line is drawn on a terminal only; a summary line either way.
test_cache_progress() {
	if ! command -v script >/dev/null; then
		t_skip cache-progress "no script(1) to give xom a terminal"
		return
	fi
	XDG_CACHE_HOME=$tmp/cp1 script -qec "$xom cache build $cache/cacheprog" /dev/null >"$tmp/tty" 2>&1
	if grep -q "$(printf '\r')" "$tmp/tty" && grep -Eq '\[#*\.*\] [0-9]+/[0-9]+ files, [0-9]+/[0-9]+ MB' "$tmp/tty" &&
		grep -q "plans built" "$tmp/tty"; then
		t_pass cache-progress-tty
	else
		t_fail cache-progress-tty "$(tr '\r' '|' <"$tmp/tty" | head -c 300)"
	fi
	XDG_CACHE_HOME=$tmp/cp2 run_rc cache-progress-pipe 0 "$xom" cache build "$cache/cacheprog" || return
	! grep -q "$(printf '\r')" "$tmp/err" && ! grep -q "files, " "$tmp/err" &&
		[ "$(wc -l <"$tmp/err")" = 1 ] && [ ! -s "$tmp/out" ] && t_pass cache-progress-pipe ||
		t_fail cache-progress-pipe "$(tr '\r' '|' <"$tmp/err")"
	XDG_CACHE_HOME=$tmp/cp3 script -qec "$xom cache build --quiet $cache/cacheprog" /dev/null >"$tmp/tty" 2>&1
	[ ! -s "$tmp/tty" ] && t_pass cache-progress-quiet ||
		t_fail cache-progress-quiet "$(tr '\r' '|' <"$tmp/tty")"
}

# stats counts what is stale; prune drops exactly that.
test_cache_stale() {
	local s=$tmp/st
	export XDG_CACHE_HOME=$tmp/cs XDG_RUNTIME_DIR=$tmp/cs-run
	mkdir -m 700 "$tmp/cs-run"
	mkdir -p "$s"
	cp "$cache"/libcache1.so "$cache"/libcache2.so "$cache"/libcache3.so "$cache"/libcachenoid.so "$s/"
	run_rc cache-stale 0 "$xom" cache build "$s"/*.so || return
	n0=$(plans_of | grep -c '^current ')
	rm "$s/libcache1.so"                            # gone
	cp "$s/libcache3.so" "$s/libcache2.so.new"      # another build at the path
	mv "$s/libcache2.so.new" "$s/libcache2.so"
	touch -d @1000000000 "$s/libcachenoid.so"       # keyed by identity: changed
	run_rc cache-stale 0 "$xom" cache stats || return
	sed -n '/^user store/,/^fallback/p' "$tmp/out" >"$tmp/user"
	grep -Eq "^  plans +$n0 " "$tmp/user" && grep -Eq '^  stale +3: 1 file gone, 2 changed$' "$tmp/user" &&
		grep -Eq '^  symbol files +[0-9]+ \([0-9.]+ MB\), 0 that no plan names, 0 missing$' "$tmp/user" &&
		t_pass cache-stats || { t_fail cache-stats "$(cat "$tmp/user")"; return; }
	"$xom" cache stats --json >"$tmp/json"
	grep '"store": "user"' "$tmp/json" | grep -q "\"plans\": $n0, .*\"stale\": 3, \"gone\": 1, \"changed\": 2," &&
		t_pass cache-stats-json || t_fail cache-stats-json "$(cat "$tmp/json")"
	plans_of >"$tmp/before"
	grep -q "^gone $s/libcache1.so$" "$tmp/before" && grep -q "^changed $s/libcache2.so$" "$tmp/before" &&
		grep -q "^changed $s/libcachenoid.so$" "$tmp/before" && grep -q "^current $s/libcache3.so$" "$tmp/before" &&
		t_pass cache-stats-list || t_fail cache-stats-list "$(cat "$tmp/before")"
	run_rc cache-prune 0 "$xom" cache prune || return
	has "$tmp/err" "$tmp/cs/xom: dropped 3 plans (1 file gone, 2 changed) and 3 symbol files" &&
		has "$tmp/err" "; $((n0 - 3)) plans kept" || { t_fail cache-prune "$(cat "$tmp/err")"; return; }
	plans_of >"$tmp/after"
	[ "$(grep -vc '^current ' "$tmp/after")" = 0 ] && [ "$(wc -l <"$tmp/after")" = $((n0 - 3)) ] &&
		grep -q "^current $s/libcache3.so$" "$tmp/after" &&
		[ "$(grep '^current ' "$tmp/before" | sort)" = "$(sort "$tmp/after")" ] ||
		{ t_fail cache-prune "left: $(cat "$tmp/after")"; return; }
	# Every symbol file left belongs to a plan left, and a second prune
	# has nothing to do.
	"$xom" cache stats | grep -Eq '^  symbol files +[0-9]+ .*, 0 that no plan names, 0 missing$' &&
		run_rc cache-prune 0 "$xom" cache prune && has "$tmp/err" "dropped 0 plans" &&
		t_pass cache-prune || t_fail cache-prune "second prune: $(cat "$tmp/err")"
	export XDG_RUNTIME_DIR=$tmp/run
	export XDG_CACHE_HOME=$tmp/cache
}

# A program's start-up keeps a set of its plans (formats/xom_plan.h).
# A new set keeps beside it the two most recent of those that start with
# the same plan (the same program with another batch, or a library
# changed since), and drops the older; prune drops a set with any plan
# that it drops, and keeps the others.
test_cache_prune_sets() {
	local i n1 n2
	export XDG_CACHE_HOME=$tmp/cps
	sets() { grep -ao XOMPSET1 "$tmp/cps/xom/plans" | wc -l; }
	for i in 1 2 3 4 5; do
		cp "$cache/libcachenoid.so" "$tmp/set$i.so"
	done
	XOM_OPTIONS=store=off:backend=none LD_PRELOAD="$B/libxom.so $tmp/set1.so" /bin/true
	for i in 2 3 4; do
		XOM_OPTIONS=store=off:backend=none LD_PRELOAD="$B/libxom.so $tmp/set$i.so" "$probe" exit 0
	done
	n1=$(sets)
	XOM_OPTIONS=store=off:backend=none LD_PRELOAD="$B/libxom.so $tmp/set5.so" "$probe" exit 0
	n2=$(sets)
	rm "$tmp/set1.so"
	"$xom" cache prune -q
	[ "$n1" = 4 ] && [ "$n2" = 4 ] && [ "$(sets)" = 3 ] &&
		XOM_OPTIONS=store=off:backend=none:verbose=1 LD_PRELOAD="$B/libxom.so $tmp/set4.so" \
			"$probe" exit 0 2>&1 >/dev/null | grep -q "set4.so: [0-9]* pages\{0,1\} execute-only" &&
		t_pass cache-prune-sets || t_fail cache-prune-sets "sets: $n1, $n2, then $(sets)"
	export XDG_CACHE_HOME=$tmp/cache
}

# Prune while programs run and scan into the same store: nothing kept is
# lost, and the index is never torn.
test_cache_prune_concurrent() {
	local i n=12 pruner
	export XDG_CACHE_HOME=$tmp/cpc
	"$xom" cache build -q "$cache/libcache3.so" || { t_fail cache-prune-concurrent "build"; return; }
	# The runtime's helpers add plans, one program at a time, while prune
	# runs over and over: it rewrites the index each time, since each
	# program also adds the plan of a file that is deleted right after.
	# Every plan of a file still there must survive with its symbol file.
	(while [ ! -e "$tmp/cpc-done" ]; do "$xom" cache prune -q || echo "prune failed"; done) >"$tmp/pruner" 2>&1 &
	pruner=$!
	for i in $(seq $n); do
		cp "$cache/libcachenoid.so" "$tmp/keep$i.so"
		cp "$cache/libcachenoid.so" "$tmp/gone$i.so"
		XOM_OPTIONS=store=off:backend=none:verbose=1 LD_PRELOAD="$B/libxom.so $tmp/keep$i.so $tmp/gone$i.so" \
			"$probe" exit 0 >/dev/null 2>>"$tmp/cpc-err"
		rm "$tmp/gone$i.so"
	done
	touch "$tmp/cpc-done"
	wait $pruner
	"$xom" cache prune -q
	plans_of >"$tmp/out"
	"$xom" cache stats >"$tmp/stats"
	[ "$(grep -c "^current $tmp/keep[0-9]*.so$" "$tmp/out")" = $n ] &&
		grep -q "current $cache/libcache3.so$" "$tmp/out" && ! grep -vq "^current " "$tmp/out" &&
		grep -Eq '^  symbol files .*, 0 that no plan names, 0 missing$' "$tmp/stats" &&
		[ ! -s "$tmp/pruner" ] && ! grep -q "ignored" "$tmp/cpc-err" &&
		t_pass cache-prune-concurrent ||
		t_fail cache-prune-concurrent "$(grep -c keep "$tmp/out") of $n plans left; not current: $(grep -v "^current " "$tmp/out" | head -3); $(grep "symbol files" "$tmp/stats"); pruner: $(head -3 "$tmp/pruner"); runtime: $(grep ignored "$tmp/cpc-err" | head -2)"
	# Prune waits for the store's lock, which writers hold while they
	# write: with the lock taken, it has not finished half a second later.
	if command -v flock >/dev/null; then
		local holder p i=0
		rm "$tmp/keep1.so"
		flock "$tmp/cpc/xom/lock" sleep 2 &
		holder=$!
		while flock -n "$tmp/cpc/xom/lock" true && [ $i -lt 100 ]; do sleep 0.02; i=$((i + 1)); done
		"$xom" cache prune -q & p=$!
		sleep 0.5
		if kill -0 $p 2>/dev/null && plans_of | grep -q "^gone $tmp/keep1.so$"; then
			wait $holder; wait $p
			plans_of | grep -q "keep1.so" && t_fail cache-prune-lock "not pruned after the lock was free" ||
				t_pass cache-prune-lock
		else
			wait $holder; wait $p
			t_fail cache-prune-lock "prune did not wait for the store's lock"
		fi
	else
		t_skip cache-prune-lock "no flock(1)"
	fi
	export XDG_CACHE_HOME=$tmp/cache
}

# The system store is root's: as anyone else, --system and --store refuse.
test_cache_system_root() {
	local nobody
	if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
		run_rc cache-system-root 2 "$xom" cache build --system && has "$tmp/err" "run this as root" &&
			t_pass cache-system-root || t_fail cache-system-root "$(cat "$tmp/err")"
		return
	fi
	nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
	if ! $nobody "$xom" --version >/dev/null 2>&1; then
		t_skip cache-system-root "user 65534 cannot run $xom (a folder above it is private)"
		return
	fi
	for args in "build --system" "build --store $tmp/s $probe" "prune --system"; do
		# shellcheck disable=SC2086
		HOME=$tmp XDG_CACHE_HOME= run_rc "cache-system-root[$args]" 2 $nobody "$xom" cache $args || return
		has "$tmp/err" "must be root's: run this as root" ||
			{ t_fail cache-system-root "$args: $(cat "$tmp/err")"; return; }
	done
	[ ! -e "$tmp/s" ] && t_pass cache-system-root || t_fail cache-system-root "$tmp/s was made"
}

# --system's walk: every dynamically linked x86-64 object of the system
# folders, each once, and nothing static, relocatable or of debug files.
test_cache_system_walk() {
	local st
	XOM_OPTIONS=store=$tmp/never run_rc cache-system-walk 0 "$xom" cache build --system --dry-run || return
	sort "$tmp/out" >"$tmp/walk"
	[ -z "$(uniq -d "$tmp/walk")" ] || { t_fail cache-system-walk "listed twice: $(uniq -d "$tmp/walk" | head -3)"; return; }
	for f in /usr/bin/ls "$(realpath /lib/x86_64-linux-gnu/libc.so.6)" "$(realpath /lib64/ld-linux-x86-64.so.2)"; do
		grep -qx "$f" "$tmp/walk" || { t_fail cache-system-walk "$f not listed"; return; }
	done
	grep -qE '\.o$|^/usr/lib/debug/|^/bin/|^/lib/' "$tmp/walk" &&
		{ t_fail cache-system-walk "$(grep -E '\.o$|^/usr/lib/debug/|^/bin/|^/lib/' "$tmp/walk" | head -3)"; return; }
	# A static program of the system, if there is one (ldconfig, static-pie
	# on Debian 12), is not listed.
	st=$(file -L /sbin/ldconfig 2>/dev/null | grep -q 'static' && realpath /sbin/ldconfig)
	[ -z "$st" ] || ! grep -qx "$st" "$tmp/walk" ||
		{ t_fail cache-system-walk "static $st listed"; return; }
	while IFS= read -r f; do
		case $(od -An -c -N4 "$f" | tr -d ' ') in
		177ELF) ;;
		*) t_fail cache-system-walk "$f is not ELF"; return ;;
		esac
	done < <(head -n 200 "$tmp/walk")
	grep -q "^xom: $(wc -l <"$tmp/walk") files to scan (.* MB) into $tmp/never; 0 already current$" "$tmp/err" &&
		[ ! -e "$tmp/never" ] && t_pass cache-system-walk || t_fail cache-system-walk "$(cat "$tmp/err")"
}

# A root-owned store: written with modes every user can read, whatever the
# umask; read by the runtime with no helper run; ignored when a folder above
# it is group-writable, silently unless verbose.

# A system-style store that the runtime will not trust is said before the
# build, not after minutes of it.
# A FIFO is refused at once: an open without O_NONBLOCK waited forever
# for a writer.
test_fifo() {
	local rc
	mkfifo "$tmp/fifo2"
	for c in "scan" "cache build"; do
		# shellcheck disable=SC2086
		timeout 20 "$xom" $c "$tmp/fifo2" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		[ $rc = 1 ] && grep -q "$tmp/fifo2: .*not a regular file" "$tmp/err" ||
			{ t_fail fifo "xom $c: rc $rc: $(tr '\n' '|' <"$tmp/err")"; return; }
	done
	timeout 20 "$B/xom-scan" "$tmp/fifo2" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc = 1 ] || { t_fail fifo "xom-scan: rc $rc: $(tr '\n' '|' <"$tmp/err")"; return; }
	t_pass fifo
}

test_cache_store_warned_first() {
	[ "$(id -u)" = 0 ] || { t_skip cache-store-warned-first "needs root (a store of another user's)"; return; }
	local st=$tmp/ust/store
	mkdir -p -m 755 "$tmp/ust" && chown nobody "$tmp/ust"
	"$xom" cache build --store "$st" "$probe" >"$tmp/out" 2>"$tmp/err"
	head -n 1 "$tmp/err" | grep -q "^xom: the runtime will not read $st as its system store: $tmp/ust belongs to uid [0-9]*, not root$" &&
		[ "$(grep -c "will not read" "$tmp/err")" = 1 ] && grep -q "^xom: [1-9][0-9]* plans\{0,1\} built" "$tmp/err" &&
		t_pass cache-store-warned-first || t_fail cache-store-warned-first "$(tr '\n' '|' <"$tmp/err")"
}

test_cache_system_store() {
	local r
	if ! root_alone "$B"; then
		t_skip cache-system-store "the build ($B) lies under a folder others can write, whose files a shared store does not take"
		return
	fi
	if ! r=$(trusted_dir); then
		t_skip cache-system-store "needs root and a root-owned folder (/run, /var/cache) for a trusted store"
		return
	fi
	mkdir -m 755 "$r/p"
	(umask 077; "$xom" cache build -q --store "$r/p/store" "$cache/cacheprog") ||
		{ t_fail cache-system-store "build: exit $?"; rm -rf "$r"; return; }
	if [ "$(stat -c %a "$r/p/store")" = 755 ] && [ "$(stat -c %a "$r/p/store/syms")" = 755 ] &&
		[ "$(stat -c %a "$r/p/store/plans")" = 644 ] &&
		[ -z "$(find "$r/p/store/syms" -type f ! -perm 644)" ]; then
		t_pass cache-system-store-modes
	else
		t_fail cache-system-store-modes "$(ls -lR "$r/p/store" | head -8)"
	fi
	XDG_CACHE_HOME=$tmp/sys-user XOM_OPTIONS=store=$r/p/store:backend=none:verbose=1 \
		LD_PRELOAD=$B/libxom.so "$cache/cacheprog" >"$tmp/out" 2>"$tmp/err"
	[ "$(cat "$tmp/out")" = "cache value 7" ] && ! has "$tmp/err" scanning && ! has "$tmp/err" ignored &&
		[ ! -e "$tmp/sys-user/xom/plans" ] && grep -q "libcachedep.so: [0-9]* pages* execute-only" "$tmp/err" &&
		t_pass cache-system-store-read || t_fail cache-system-store-read "$(cat "$tmp/err")"
	# The build keeps a set of plans for each program's start-up, which its
	# next run reads at once: with every plan alone damaged, nothing is
	# scanned and each object is still protected (from the set's copies).
	(umask 077; "$xom" cache build -q --store "$r/p/sets" "$cache/cacheprog" /bin/true) ||
		{ t_fail cache-system-store-sets "build: exit $?"; rm -rf "$r"; return; }
	for f in cacheprog libcachedep.so libc.so.6 libxom.so; do
		"$B/tests/runtime/xomtest" damage "$r/p/sets/plans" alone "$f" >/dev/null
	done
	XDG_CACHE_HOME=$tmp/sys-sets XOM_OPTIONS=store=$r/p/sets:backend=none:verbose=1 \
		LD_PRELOAD=$B/libxom.so "$cache/cacheprog" >"$tmp/out" 2>"$tmp/err"
	[ "$(grep -ao XOMPSET1 "$r/p/sets/plans" | wc -l)" = 2 ] &&
		[ "$(cat "$tmp/out")" = "cache value 7" ] && ! has "$tmp/err" scanning &&
		grep -q "libcachedep.so: [0-9]* pages* execute-only" "$tmp/err" &&
		grep -q "cacheprog: [0-9]* pages* execute-only" "$tmp/err" &&
		t_pass cache-system-store-sets || t_fail cache-system-store-sets "$(grep -ao XOMPSET1 "$r/p/sets/plans" | wc -l) sets: $(cat "$tmp/err")"
	# A user's build makes the set as the runtime makes the batch: without
	# the objects its options exclude (here XOM_OPTIONS), whose keys the
	# batch leaves out.  With the other plans alone damaged, a run with the
	# same options finds the set and scans nothing.
	XDG_CACHE_HOME=$tmp/sets-ex XOM_OPTIONS='exclude=libcachedep.so*' \
		"$xom" cache build -q "$cache/cacheprog" ||
		{ t_fail cache-sets-exclude "build: exit $?"; rm -rf "$r"; return; }
	for f in cacheprog libc.so.6 libxom.so; do
		"$B/tests/runtime/xomtest" damage "$tmp/sets-ex/xom/plans" alone "$f" >/dev/null
	done
	XDG_CACHE_HOME=$tmp/sets-ex XOM_OPTIONS='store=off:backend=none:verbose=1:exclude=libcachedep.so*' \
		LD_PRELOAD=$B/libxom.so "$cache/cacheprog" >"$tmp/out" 2>"$tmp/err"
	[ "$(cat "$tmp/out")" = "cache value 7" ] && ! has "$tmp/err" scanning &&
		grep -q "cacheprog: [0-9]* pages* execute-only" "$tmp/err" &&
		has "$tmp/err" "libcachedep.so: excluded" &&
		t_pass cache-sets-exclude || t_fail cache-sets-exclude "$(cat "$tmp/err")"
	# The system store comes first, also for a batch that has a set of its
	# plans in the user's cache: with every plan there, the set's copies too,
	# made to disagree with its file, each object still gets the system's.
	XDG_CACHE_HOME=$tmp/sys-set XOM_OPTIONS=store=off:backend=none \
		LD_PRELOAD=$B/libxom.so "$cache/cacheprog" >/dev/null 2>&1
	"$B/tests/runtime/xomtest" tamper "$tmp/sys-set/xom/plans" >/dev/null
	XDG_CACHE_HOME=$tmp/sys-set XOM_OPTIONS=store=$r/p/store:backend=none:verbose=1 \
		LD_PRELOAD=$B/libxom.so "$cache/cacheprog" >"$tmp/out" 2>"$tmp/err"
	[ "$(cat "$tmp/out")" = "cache value 7" ] && ! has "$tmp/err" "differ" &&
		[ "$(grep -ao XOMPSET1 "$tmp/sys-set/xom/plans" | wc -l)" = 1 ] &&
		grep -q "libcachedep.so: [0-9]* pages* execute-only" "$tmp/err" &&
		t_pass cache-system-store-first || t_fail cache-system-store-first "$(cat "$tmp/err")"
	chmod 775 "$r/p"
	XDG_CACHE_HOME=$tmp/sys-user2 XOM_OPTIONS=store=$r/p/store:backend=none:verbose=1 \
		LD_PRELOAD=$B/libxom.so "$cache/cacheprog" >"$tmp/out" 2>"$tmp/err"
	has "$tmp/err" "plan store $r/p/store/plans ignored: its directories are not root's alone" &&
		has "$tmp/err" "scanning" && t_pass cache-system-store-untrusted ||
		t_fail cache-system-store-untrusted "$(cat "$tmp/err")"
	XDG_CACHE_HOME=$tmp/sys-user3 XOM_OPTIONS=store=$r/p/store:backend=none \
		LD_PRELOAD=$B/libxom.so "$cache/cacheprog" >"$tmp/out" 2>"$tmp/err"
	[ ! -s "$tmp/err" ] && t_pass cache-system-store-quiet || t_fail cache-system-store-quiet "$(cat "$tmp/err")"
	"$xom" cache stats --store "$r/p/store" >"$tmp/out"
	has "$tmp/out" "ignored       $r/p is writable by its group (mode 0775)" &&
		t_pass cache-system-store-stats || t_fail cache-system-store-stats "$(cat "$tmp/out")"
	chmod 755 "$r/p"
	# prune --store: as root, the store's own kind.
	run_rc cache-system-store-prune 0 "$xom" cache prune --store "$r/p/store" &&
		has "$tmp/err" "dropped 0 plans" && t_pass cache-system-store-prune ||
		t_fail cache-system-store-prune "$(cat "$tmp/err")"
	rm -rf "$r"
}

# A copy of libc that claims libc's build-id, with the same program
# headers (no section headers: the scanner leaves most of its pages
# readable) or with DF_TEXTREL set.  The runtime cannot tell the first from
# libc by what is mapped (formats/xom_plan.h), so the stores must: a
# build counts a plan as current for libc only when it fits libc's own
# bytes, and then libc's plan replaces the copy's; and a shared store takes
# no plan by build-id from a file that someone other than root could have
# put there.  Each time libc must end up planned as from itself.
test_cache_forged() {
	local r libc want forge=$B/tests/runtime/xomtest
	libc_pages() { sed -n 's/^xom: .*\/libc\.so\.6: \([0-9]*\) pages\{0,1\} execute-only.*/\1/p' "$tmp/err" | sort -u; }
	run_true() { # run_true CACHE STORE: /bin/true planned, nothing applied
		XDG_CACHE_HOME=$1 XOM_OPTIONS=store=$2:backend=none:verbose=1 LD_PRELOAD=$B/libxom.so \
			/bin/true >"$tmp/out" 2>"$tmp/err"
	}
	run_true "$tmp/fg-genuine" off
	libc=$(sed -n 's/^xom: \(\/.*\/libc\.so\.6\): [0-9]* pages.*/\1/p' "$tmp/err")
	want=$(libc_pages)
	if [ -z "$libc" ] || [ -z "$want" ] || [ "$want" -lt 100 ]; then
		t_fail cache-forged "no plan of libc to compare with: $(cat "$tmp/err")"
		return
	fi
	"$forge" forge noshdr "$libc" "$tmp/fg-copy.so" >/dev/null
	# The user's own cache: the copy first, then the program.
	XDG_CACHE_HOME=$tmp/fg-user "$xom" cache build -q "$tmp/fg-copy.so"
	XDG_CACHE_HOME=$tmp/fg-user "$xom" cache build -n /bin/true >"$tmp/out" 2>"$tmp/err"
	grep -qx "$(realpath "$libc")" "$tmp/out" && t_pass cache-forged-not-current ||
		t_fail cache-forged-not-current "libc ($libc) not to be scanned: $(cat "$tmp/out" "$tmp/err")"
	XDG_CACHE_HOME=$tmp/fg-user "$xom" cache build -q /bin/true
	run_true "$tmp/fg-user" off
	[ "$(libc_pages)" = "$want" ] && ! has "$tmp/err" scanning && t_pass cache-forged-replaced ||
		t_fail cache-forged-replaced "want $want pages of libc: $(cat "$tmp/err")"
	if ! root_alone "$B"; then
		t_skip cache-forged-shared "the build ($B) lies under a folder others can write, whose files a shared store does not take"
		return
	fi
	if ! r=$(trusted_dir); then
		t_skip cache-forged-shared "needs root and a root-owned folder (/run, /var/cache) for a trusted store"
		return
	fi
	mkdir -m 755 "$r/p" "$r/p/copy"
	"$forge" forge noshdr "$libc" "$r/p/copy/libc.so.6" >/dev/null
	"$forge" forge textrel "$libc" "$tmp/fg-textrel.so" >/dev/null
	# From a folder that others can write: left out, said.
	"$xom" cache build -q --store "$r/p/s" "$tmp/fg-textrel.so" >"$tmp/out" 2>"$tmp/err"
	has "$tmp/err" "$tmp/fg-textrel.so: left out of the shared store: it or a folder above it is not root's alone" &&
		! grep -aq "fg-textrel.so" "$r/p/s/plans" 2>/dev/null && t_pass cache-forged-shared-left-out ||
		t_fail cache-forged-shared-left-out "stderr: $(cat "$tmp/err"); its plans in the store: $(grep -ac fg-textrel.so "$r/p/s/plans" 2>&1)"
	# Root's own copy goes in, and libc's own plan then replaces it.
	"$xom" cache build -q --store "$r/p/s" "$r/p/copy/libc.so.6"
	"$xom" cache build -n --store "$r/p/s" /bin/true >"$tmp/out" 2>"$tmp/err"
	local listed=$(grep -cx "$(realpath "$libc")" "$tmp/out")
	"$xom" cache build -q --store "$r/p/s" /bin/true
	run_true "$tmp/fg-shared" "$r/p/s"
	[ "$listed" = 1 ] && [ "$(libc_pages)" = "$want" ] && ! has "$tmp/err" scanning &&
		[ ! -e "$tmp/fg-shared/xom/plans" ] && t_pass cache-forged-shared ||
		t_fail cache-forged-shared "libc listed to scan: $listed; want $want pages: $(cat "$tmp/err")"
	rm -rf "$r"
}

# The runtime's default system store is /var/cache/xom, and xom cache
# stats lists exactly the runtime's stores in its order.
test_cache_stores() {
	XDG_CACHE_HOME=$tmp/u XDG_RUNTIME_DIR=$tmp/rr run_rc cache-stores 0 "$xom" cache stats || return
	[ "$(grep -c ' store  ' "$tmp/out")" = 3 ] &&
		sed -n 1p "$tmp/out" | grep -qx "system store  /var/cache/xom" &&
		grep -qx "user store  $tmp/u/xom" "$tmp/out" && grep -qx "fallback store  $tmp/rr/xom" "$tmp/out" ||
		{ t_fail cache-stores "$(cat "$tmp/out")"; return; }
	XDG_CACHE_HOME=$tmp/u XOM_OPTIONS=store=off:cache=off run_rc cache-stores 0 "$xom" cache stats &&
		grep -q "^system store  (none)" "$tmp/out" && grep -q "^user store  (none)" "$tmp/out" &&
		t_pass cache-stores || t_fail cache-stores "off: $(cat "$tmp/out")"
	"$xom" check | grep -Eq '^  store +default +/var/cache/xom$' && t_pass check-store-default ||
		t_fail check-store-default "$("$xom" check | grep store)"
}

# The apt hook: installed with make install install-system, it runs xom cache build and
# prune on the system store with its arguments, logs what they said, and
# exits 0 whatever happens, so that apt never fails because of xom.
test_cache_hook() {
	local inst=$tmp/hinst hook
	# Everything under $inst: the system's own /etc/xom.conf and profile
	# folder are not the test's to write.
	mkdir -p "$inst/apt.conf.d"
	make --no-print-directory -s install install-system B="$B" PREFIX="$inst" XOM_CONF="$inst/etc/xom.conf" SYSTEM_PROFILES="$inst/profiles" \
		APT_CONF_D="$inst/apt.conf.d" >"$tmp/out" 2>&1 ||
		{ t_fail cache-hook "$(tail -3 "$tmp/out")"; return; }
	hook=$inst/lib/xom/xom-apt-hook
	[ -x "$hook" ] && grep -q "^xom=$inst/bin/xom$" "$hook" &&
		grep -q "DPkg::Post-Invoke.*$hook" "$inst/apt.conf.d/90xom" ||
		{ t_fail cache-hook-installed "$(ls -l "$inst/lib/xom" "$inst/apt.conf.d")"; return; }
	t_pass cache-hook-installed
	# The installed xom stands in for itself, recording its arguments and
	# failing.
	mv "$inst/bin/xom" "$inst/bin/xom.real"
	printf '#!/bin/sh\necho "args: $*"\nexit 2\n' >"$inst/bin/xom"
	chmod 755 "$inst/bin/xom"
	XOM_OPTIONS=store=/elsewhere XOM_HOOK_LOG=$tmp/hook.log "$hook" --store "$tmp/hs" >"$tmp/out" 2>&1
	rc=$?
	# The command that apt runs after dpkg, as the installed 90xom gives
	# it to sh: it must start the hook (its log says so), print nothing
	# and succeed.
	line=$(sed -n 's/^DPkg::Post-Invoke { "\(.*\)"; };$/\1/p' "$inst/apt.conf.d/90xom")
	XOM_HOOK_LOG=$tmp/apt.log sh -c "$line" >"$tmp/apt.out" 2>&1
	arc=$?
	[ -n "$line" ] && [ $arc = 0 ] && [ ! -s "$tmp/apt.out" ] &&
		grep -q "args: cache build --system" "$tmp/apt.log" 2>/dev/null &&
		t_pass cache-hook-apt-runs ||
		t_fail cache-hook-apt-runs "line [$line], exit $arc, out $(cat "$tmp/apt.out"), log $(cat "$tmp/apt.log" 2>/dev/null)"
	[ $rc = 0 ] && [ ! -s "$tmp/out" ] && grep -qx "args: cache build --system --store $tmp/hs" "$tmp/hook.log" &&
		grep -qx "args: cache prune --system --store $tmp/hs" "$tmp/hook.log" &&
		grep -q "exit status 2" "$tmp/hook.log" && t_pass cache-hook-fails-safe ||
		t_fail cache-hook-fails-safe "rc $rc, out $(cat "$tmp/out"), log $(cat "$tmp/hook.log")"
	# No xom (uninstalled), and a log it cannot write: still 0.
	rm "$inst/bin/xom"
	XOM_HOOK_LOG=/nonexistent/dir/log "$hook" >"$tmp/out" 2>&1
	rc=$?
	mv "$inst/bin/xom.real" "$inst/bin/xom"
	XOM_HOOK_LOG=/nonexistent/dir/log "$hook" >/dev/null 2>&1
	[ $rc = 0 ] && [ $? = 0 ] && t_pass cache-hook-no-xom || t_fail cache-hook-no-xom "rc $rc"
	make --no-print-directory -s uninstall B="$B" PREFIX="$inst" XOM_CONF="$inst/etc/xom.conf" SYSTEM_PROFILES="$inst/profiles" \
		APT_CONF_D="$inst/apt.conf.d" >"$tmp/out" 2>&1
	[ ! -e "$hook" ] && [ ! -e "$inst/apt.conf.d/90xom" ] && t_pass cache-hook-uninstalled ||
		t_fail cache-hook-uninstalled "$(ls -R "$inst")"
	# Without a folder for it, install says so and goes on.
	make --no-print-directory -s install install-system B="$B" PREFIX="$inst" XOM_CONF="$inst/etc/xom.conf" SYSTEM_PROFILES="$inst/profiles" \
		APT_CONF_D="$inst/none" >"$tmp/out" 2>&1 &&
		has "$tmp/out" "not installing the apt hook: $inst/none" && [ ! -e "$inst/none" ] &&
		t_pass cache-hook-no-apt || t_fail cache-hook-no-apt "$(cat "$tmp/out")"
	make --no-print-directory -s uninstall B="$B" PREFIX="$inst" XOM_CONF="$inst/etc/xom.conf" SYSTEM_PROFILES="$inst/profiles" \
		APT_CONF_D="$inst/none" >/dev/null 2>&1
}

# ---- the demo ----------------------------------------------------------------

# Every gadget is found, a pop gadget perhaps with harmless pops before its
# ret (glibc 2.41 has no "pop rdx; ret"), and the chain gives each of those
# extra pops a filler word.
test_demo_unprotected() {
	local g extra filler
	run_rc demo-unprotected 0 "$B/demo/attacker" "$B/demo/victim" || return
	for g in "pop rdi" "pop rsi" "pop rdx" "pop rax" syscall ret; do
		grep -qE "^attacker:   $g +at 0x[0-9a-f]+: $g(; pop (rbx|rcx|rbp|r[0-9]+))*(; ret)?\$" "$tmp/out" ||
			{ t_fail demo-unprotected "no $g gadget: $(tail -5 "$tmp/out")"; return; }
	done
	extra=$(grep -E "^attacker:   pop [a-z]+ +at 0x" "$tmp/out" | grep -o "; pop " | wc -l)
	filler=$(grep -c "filler for pop" "$tmp/out")
	has "$tmp/out" "attack succeeded" && [ "$extra" = "$filler" ] && t_pass demo-unprotected ||
		t_fail demo-unprotected "$extra extra pops, $filler filler words: $(tail -5 "$tmp/out")"
}

test_demo_protected() {
	if [ "$pku" = 0 ]; then
		t_skip demo-protected "this CPU has no protection keys (the VM suite runs this half)"
		return
	fi
	run_rc demo-protected 1 "$B/demo/attacker" "$xom" run -- "$B/demo/victim" || return
	has "$tmp/out" "attack failed" && has "$tmp/err" "xom: blocked read of" &&
		t_pass demo-protected || t_fail demo-protected "$(cat "$tmp/out" "$tmp/err" | tail -5)"
}

for t in test_help test_usage test_run_options test_run_static test_run_setuid \
	test_run_notfound test_run_script test_run_script_plain test_run_script_interp \
	test_run_status test_run_signal test_run_forward test_run_fate test_run_pdeathsig \
	test_run_stop test_run_tty test_run_env test_run_bad_options test_run_nopku test_scan test_check \
	test_check_values test_check_options test_check_cache test_check_fallback \
	test_fallback_squatted test_status \
	test_status_gone test_status_replaced test_status_count test_install test_man test_readme_keys \
	test_cache_usage test_cache_build_closure test_cache_build_listings test_cache_build_errors \
	test_cache_progress test_cache_stale test_cache_prune_sets test_cache_prune_concurrent \
	test_cache_system_root test_cache_system_walk test_cache_store_warned_first test_fifo test_cache_system_store test_cache_forged \
	test_cache_stores test_cache_hook \
	test_enable test_enable_refuses test_status_system test_check_conf test_check_folders \
	test_check_conf_require test_require_rescue test_require_secure test_check_secure \
	test_demo_unprotected test_demo_protected; do
	$t
done
system_cleanup
t_summary
