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
# has FILE TEXT: FILE contains TEXT (fixed string).
has() { grep -qF -- "$2" "$1"; }
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
	for c in run scan check status; do
		grep -q "^  $c " "$tmp/out" || { t_fail help "no '$c' line in xom --help"; return; }
	done
	for c in run scan check status; do
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
		"status" "status abc" "status 1 2" "status --self 1" "scan" "help frob"; do
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

test_run_static() {
	if [ ! -x "$B/tests/cmd/probe-static" ]; then
		t_skip run-static "no static libc (libc6-dev's libc.a) to build a static program"
		return
	fi
	run_rc run-static 126 "$xom" run -- "$B/tests/cmd/probe-static" exit 0 &&
		has "$tmp/err" "statically linked" && t_pass run-static ||
		t_fail run-static "no 'statically linked' in: $(cat "$tmp/err")"
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
	if [ -x "$B/tests/cmd/probe-static" ]; then
		run_rc run-script 126 "$xom" run -- "$tmp/s-static" || return
		has "$tmp/err" "its interpreter $B/tests/cmd/probe-static: " ||
			{ t_fail run-script "$(cat "$tmp/err")"; return; }
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
	sleeper run-stop || return
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
	run_rc scan 64 "$xom" scan --bogus && t_pass scan
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
	d=$(mktemp -d /tmp/xom-fb.XXXXXX) && chmod 755 "$d" && mkdir -m 755 "$d/home" &&
		mkdir -m 700 "$d/run" && chown 65534:65534 "$d/run" || { t_fail check-fallback "setup"; return; }
	$u env -i PATH=/usr/bin:/bin HOME=$d/home XDG_RUNTIME_DIR=$d/run "$xom" check >"$tmp/out" 2>&1
	local said
	said=$(grep "^cache " "$tmp/out")
	case $said in
	*"$d/home/.cache/xom: cannot be created; new plans go to $d/run/xom instead") ;;
	*) t_fail check-fallback "xom check: $said"; rm -rf "$d"; return ;;
	esac
	local i
	for i in 1 2; do
		$u env -i PATH=/usr/bin:/bin HOME=$d/home XDG_RUNTIME_DIR=$d/run XOM_OPTIONS=backend=none:store=off \
			LD_PRELOAD=$B/libxom.so /bin/true 2>"$tmp/rt$i"
	done
	if [ -s "$d/run/xom/plans" ] && [ ! -e "$d/home/.cache/xom" ] &&
		[ "$(grep -c "keeping them in $d/run/xom" "$tmp/rt1")" = 1 ] && [ ! -s "$tmp/rt2" ]; then
		t_pass check-fallback
	else
		t_fail check-fallback "fallback $(ls "$d/run/xom" 2>&1 | tr '\n' ' '); first run: $(cat "$tmp/rt1"); second: $(cat "$tmp/rt2")"
	fi
	rm -rf "$d"
}

test_status() {
	local pid
	run_rc status 0 "$xom" status --self || return
	has "$tmp/out" "$(realpath "$xom")" && has "$tmp/out" "libc.so" &&
		has "$tmp/out" "total:" || { t_fail status "$(cat "$tmp/out")"; return; }
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

# Only --xp with a non-zero key counts as execute-only (on made-up smaps
# text, since this kernel may show no keys).
test_status_count() {
	"$B/tests/cmd/status_count" >"$tmp/out" 2>&1 && t_pass status-count ||
		t_fail status-count "$(cat "$tmp/out")"
}

test_install() {
	local f inst=$tmp/inst
	make --no-print-directory -s install B="$B" PREFIX="$inst" >"$tmp/out" 2>&1 ||
		{ t_fail install "$(tail -3 "$tmp/out")"; return; }
	for f in bin/xom bin/xom-scan lib/xom/libxom.so lib/xom/libxom-audit.so \
		lib/xom/xom-plan lib/xom/libxom-scan.so share/man/man1/xom.1; do
		[ -e "$inst/$f" ] || { t_fail install "$f not installed"; return; }
	done
	cmp -s "$inst/share/man/man1/xom.1" "$B/xom.1" ||
		{ t_fail install "the installed man page is not the built one"; return; }
	run_rc install 0 "$inst/bin/xom" run -- "$probe" env LD_PRELOAD || return
	has "$tmp/out" "LD_PRELOAD=$inst/lib/xom/libxom.so" ||
		{ t_fail install "installed xom uses $(cat "$tmp/out")"; return; }
	"$inst/bin/xom" check >"$tmp/out" 2>&1
	has "$tmp/out" "$inst/lib/xom/xom-plan" || { t_fail install "check: $(cat "$tmp/out")"; return; }
	run_rc install 0 "$inst/bin/xom" scan "$probe" || return
	t_pass install
	# uninstall removes exactly that: a file of someone else's stays.
	touch "$inst/bin/other"
	make --no-print-directory -s uninstall B="$B" PREFIX="$inst" >"$tmp/out" 2>&1 ||
		{ t_fail uninstall "$(tail -3 "$tmp/out")"; return; }
	f=$(cd "$inst" && find . ! -type d | sort | tr '\n' ' ')
	[ "$f" = "./bin/other " ] && [ ! -e "$inst/lib/xom" ] && t_pass uninstall ||
		t_fail uninstall "left behind: $f$( [ -e "$inst/lib/xom" ] && echo ' lib/xom/')"
}

# The built page: every key of options.def with its values, and clean roff.
test_man() {
	local page=$B/xom.1 c kv n w
	[ -s "$page" ] || { t_fail man "$page was not built"; return; }
	sed 's/\\-/-/g; s/\\f[BIR]//g; s/\\e/\\/g' "$page" >"$tmp/man"
	for c in "xom run" "xom scan" "xom check" "xom status" XOM_OPTIONS; do
		has "$tmp/man" "$c" || { t_fail man "$page does not mention $c"; return; }
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
		w=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
		[ -z "$w" ] || { t_fail man "groff: $w"; return; }
	fi
	t_pass man
}

# README.md's table of XOM_OPTIONS has a row for every key of options.def,
# and no row for a key that is not there.
test_readme_keys() {
	local k rows
	for k in $(option_keys | sed 's/=.*//'); do
		grep -q "^| \`$k\` |" README.md || { t_fail readme-keys "README.md has no row for $k"; return; }
	done
	rows=$(sed -n '/^### XOM_OPTIONS/,/^## /p' README.md | grep -c '^| `')
	[ "$rows" = "$(grep -c '^XOM_OPT(' loader/options.def)" ] ||
		{ t_fail readme-keys "$rows rows in README.md's table"; return; }
	t_pass readme-keys
}

# ---- the demo ----------------------------------------------------------------

test_demo_unprotected() {
	run_rc demo-unprotected 0 "$B/demo/attacker" "$B/demo/victim" || return
	has "$tmp/out" "attack succeeded" && has "$tmp/out" "pop rdi; ret  at 0x" &&
		has "$tmp/out" "syscall       at 0x" && t_pass demo-unprotected ||
		t_fail demo-unprotected "$(tail -5 "$tmp/out")"
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
	test_run_stop test_run_tty test_run_env test_run_nopku test_scan test_check \
	test_check_values test_check_options test_check_cache test_check_fallback test_status \
	test_status_gone test_status_count test_install test_man test_readme_keys \
	test_demo_unprotected test_demo_protected; do
	$t
done
t_summary
