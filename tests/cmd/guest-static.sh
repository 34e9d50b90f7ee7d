#!/bin/sh
# xom run with statically linked programs under real keys; tests/vm/run
# runs it in the emulated-PKU guest (tests/vm/guest.list), from /xom.  Four
# kinds of static program: glibc -static, glibc -static-pie, musl and Go.
# Each must give the same output as without xom, run with its code --xp
# under a key that its thread's PKRU denies reads of, and have a read of
# its own code blocked and named in one xom: line; xom status --system
# says "outside (static)" for it and "none (static)" for the same program
# started without xom.  A read from a thread,
# from a forked child and from a dynamically linked program it execs is
# blocked too.  A stand-in that left the key readable would fail the
# pkru and read tests.  The last line is the summary (tests/lib.sh).
set -u
cd /xom 2>/dev/null || cd "$(dirname "$0")/../.."
. tests/lib.sh
xom=$PWD/build/xom dir=$PWD/build/tests/cmd
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME=$tmp/cache
unset XOM_OPTIONS

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

# same NAME ARGS...: the program's output and status are the same with
# xom as without, and xom says nothing.
same() {
	name=$1
	shift
	"$prog" "$@" >"$tmp/want" 2>&1
	wrc=$?
	"$xom" run -- "$prog" "$@" >"$tmp/got" 2>"$tmp/err"
	grc=$?
	if [ "$wrc" = "$grc" ] && cmp -s "$tmp/want" "$tmp/got" && ! grep -q '^xom: ' "$tmp/err"; then
		t_pass "$name"
	else
		t_fail "$name" "status $grc (without xom $wrc); output $(head -c 200 "$tmp/got"); stderr $(head -c 300 "$tmp/err")"
	fi
}

# protected NAME ARGS...: while "PROG ARGS" runs under xom (it prints its
# process ID first), its code is --xp with a non-zero key in smaps, and
# xom status counts it as execute-only.  Sets key.
protected() {
	name=$1
	shift
	key=""
	"$xom" run -- "$prog" "$@" >"$tmp/pid" 2>"$tmp/perr" &
	xpid=$!
	i=0 pid=""
	while [ $i -lt 100 ]; do
		pid=$(head -n 1 "$tmp/pid" 2>/dev/null)
		[ -n "$pid" ] && grep -q ' --xp ' "/proc/$pid/maps" 2>/dev/null && break
		sleep 0.2
		i=$((i + 1))
	done
	cat "/proc/$pid/smaps" >"$tmp/smaps" 2>/dev/null
	"$xom" status "$pid" >"$tmp/status" 2>&1
	# Beside it, the same program started without xom: xom status
	# --system tells them apart.
	"$prog" "$@" >"$tmp/plainpid" 2>/dev/null &
	plain=$!
	i=0
	while [ ! -s "$tmp/plainpid" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	"$xom" status --system >"$tmp/system" 2>&1
	kill "$pid" "$plain" 2>/dev/null
	wait "$xpid" 2>/dev/null
	wait "$plain" 2>/dev/null
	pages=$(xo_pages "$tmp/smaps" "$(basename "$prog")")
	key=$(awk -v want="$prog" '
		/^[0-9a-f]+-[0-9a-f]+ / { perms = $2; path = $6; next }
		/^ProtectionKey:/ { if (perms == "--xp" && path == want && $2 != 0) { print $2; exit } }' "$tmp/smaps")
	if [ "${pages:-0}" -gt 0 ] && [ -n "$key" ] &&
		awk -v p="$prog" '$NF == p && $1 > 0 { f = 1 } END { exit !f }' "$tmp/status" &&
		grep -q "^ *$pid  outside (static) *[1-9]" "$tmp/system" &&
		grep -q "^ *$plain  none (static) " "$tmp/system"; then
		t_pass "$name"
	else
		t_fail "$name" "pid '$pid' (plain $plain), $pages execute-only pages, key '$key'; status: $(tr '\n' '|' <"$tmp/status"); system: $(grep -E "^ *($pid|$plain) " "$tmp/system" | tr '\n' '|'); stderr: $(tr '\n' '|' <"$tmp/perr")"
	fi
}

# blocked NAME WANT ARGS...: "PROG ARGS" reads its own code under xom:
# status WANT, one xom: line naming the page (PROG+0x...) and the reader,
# and the read's result never printed.
blocked() {
	name=$1 want=$2
	shift 2
	run "$name" "$want" "$xom" run -- "$prog" "$@" || return
	if grep -q "^xom: blocked read of 0x[0-9a-f]* ($prog+0x[0-9a-f]*, .*) by instruction at 0x[0-9a-f]* ($prog+0x" "$tmp/err" &&
		[ "$(grep -c '^xom: blocked read' "$tmp/err")" = 1 ] && ! grep -q "read own code" "$tmp/out"; then
		t_pass "$name"
	else
		t_fail "$name" "stdout $(tr '\n' '|' <"$tmp/out"); stderr $(tr '\n' '|' <"$tmp/err")"
	fi
}

# The corpus's static program (tests/vm/corpus.list): Debian's own
# busybox-static, the guest's shell, running real applets under xom.  The
# shell's exec of another applet is an exec in place, protected afresh.
if [ "${1:-}" = busybox ]; then
	prog=$(readlink -f /bin/busybox)
	"$prog" seq 1 20000 >"$tmp/in"
	same busybox-sha256sum sha256sum "$tmp/in"
	same busybox-sort sort -r -n "$tmp/in"
	same busybox-awk awk '{ s += $1 * $1 } END { print s }' "$tmp/in"
	same busybox-sed sed -n 's/^\(1*\)2$/x\1/p' "$tmp/in"
	same busybox-sh sh -c 'i=0; while [ $i -lt 200 ]; do i=$((i + 1)); echo $((i * i)); done; echo ${#PATH}'
	same busybox-status sh -c 'exit 17'
	protected busybox-xo sh -c 'echo $$; exec /bin/busybox sleep 30'
	t_summary
	exit
fi

# seal=1: mseal (Linux 6.10 and later) on the execute-only runs, injected
# like the rest.  Where the kernel has it, a later mprotect cannot make the
# code readable again; an older kernel must say it cannot seal, and
# require=1 refuses there.  Without seal=1 the mprotect works, which shows
# that the test can tell.  guest.list runs this on 6.1, guest-6.12.list on
# 6.12.
if [ "${1:-}" = seal ]; then
	prog=$dir/probe-static
	set -- $(uname -r | sed 's/^\([0-9]*\)\.\([0-9]*\).*/\1 \2/')
	has_mseal=0
	{ [ "$1" -gt 6 ] || { [ "$1" = 6 ] && [ "$2" -ge 10 ]; }; } && has_mseal=1
	XOM_OPTIONS=seal=1 "$xom" run -- "$prog" unprotect >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $has_mseal = 1 ]; then
		t_check static-sealed '[ $rc = 139 ] && grep -q "^unprotect failed" "$tmp/out" && ! grep -q "cannot seal" "$tmp/err" && grep -q "^xom: blocked read" "$tmp/err"' \
			"rc $rc on $(uname -r): $(cat "$tmp/out" "$tmp/err" | tr '\n' '|')"
		XOM_OPTIONS=seal=1:require=1 run static-sealed-require 7 "$xom" run -- "$prog" exit 7 &&
			t_pass static-sealed-require
	else
		t_check static-seal-unsupported '[ $rc = 0 ] && grep -q "^unprotect ok" "$tmp/out" && grep -q "mseal needs Linux 6.10" "$tmp/err"' \
			"rc $rc on $(uname -r): $(cat "$tmp/out" "$tmp/err" | tr '\n' '|')"
		XOM_OPTIONS=seal=1:require=1 run static-seal-require 126 "$xom" run -- "$prog" exit 7 &&
			has "$tmp/err" "refused (require=1)" && t_pass static-seal-require ||
			t_fail static-seal-require "$(tr '\n' '|' <"$tmp/err")"
	fi
	run static-unsealed 0 "$xom" run -- "$prog" unprotect &&
		has "$tmp/out" "unprotect ok" && has "$tmp/out" "read own code" &&
		t_pass static-unsealed || t_fail static-unsealed "$(cat "$tmp/out" "$tmp/err" | tr '\n' '|')"
	t_summary
	exit
fi

# The C probe, linked three ways.
c_probe() {
	kind=$1 prog=$dir/$2
	if [ ! -x "$prog" ]; then
		t_fail "static-$kind" "$prog was not built"
		return
	fi
	same "static-$kind-same" threads 3
	same "static-$kind-status" exit 42
	protected "static-$kind-xo" sleep 30
	# The thread's PKRU denies access through the key that smaps shows
	# (the first key of a fresh process, as in the run above).
	run "static-$kind-pkru" 0 "$xom" run -- "$prog" pkru &&
		pkru=$(sed -n 's/^pkru //p' "$tmp/out") &&
		if [ -n "$key" ] && [ $(( (pkru >> (2 * key)) & 1 )) = 1 ]; then
			t_pass "static-$kind-pkru"
		else
			t_fail "static-$kind-pkru" "PKRU '$pkru' leaves key '$key' readable"
		fi
	blocked "static-$kind-read" 139 readfn
	blocked "static-$kind-threadread" 139 threadread
	# A forked child keeps the key and its PKRU: its read kills it.
	run "static-$kind-forkread" 0 "$xom" run -- "$prog" forkread &&
		has "$tmp/out" "child killed by signal 11" && ! has "$tmp/out" "child read own code" &&
		t_pass "static-$kind-forkread" ||
		t_fail "static-$kind-forkread" "$(tr '\n' '|' <"$tmp/out")"
	# A dynamically linked program that it execs gets xom through the
	# environment: its read is blocked and named by the runtime.
	run "static-$kind-forkexec" 0 "$xom" run -- "$prog" forkexec "$dir/probe" readcode &&
		has "$tmp/out" "child killed by signal 11" && has "$tmp/err" "xom: blocked read of" &&
		t_pass "static-$kind-forkexec" ||
		t_fail "static-$kind-forkexec" "$(cat "$tmp/out" "$tmp/err" | tr '\n' '|')"
}

c_probe glibc probe-static
c_probe pie probe-static-pie
c_probe musl probe-musl

# A static program that execs another in place: the new image gets a key
# of its own at its exec event, and its read is named with its own path.
prog=$dir/probe-musl
run static-exec 139 "$xom" run -- "$dir/probe-static" exec "$prog" readfn &&
	grep -q "^xom: blocked read of 0x[0-9a-f]* ($prog+0x" "$tmp/err" &&
	! has "$tmp/out" "read own code" && t_pass static-exec ||
	t_fail static-exec "$(cat "$tmp/out" "$tmp/err" | tr '\n' '|')"

# Go: its runtime runs on several threads from the start; its own SIGSEGV
# handler turns the blocked read into a fatal error (exit 2), after xom
# has named it.
prog=$dir/gostatic
if [ -x "$prog" ]; then
	same static-go-same hello
	same static-go-status exit 42
	protected static-go-xo sleep 30
	blocked static-go-read 2 readcode
else
	t_fail static-go "$prog was not built"
fi
t_summary
