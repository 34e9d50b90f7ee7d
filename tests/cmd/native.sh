#!/bin/bash
# The xom command's tests that run on any machine (make check-cmd).  Checks
# that need protection keys skip here with the reason; they run in the
# emulated-PKU VM through tests/cmd/guest.sh.  The last line is
# "N passed, N failed, N skipped".
set -u
B=${B:-build}
xom=$B/xom probe=$B/tests/cmd/probe
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 skip=0

ok()   { pass=$((pass + 1)); echo "PASS $1"; }
bad()  { fail=$((fail + 1)); echo "FAIL $1: $2"; }
skp()  { skip=$((skip + 1)); echo "SKIP $1: $2"; }

# run_rc NAME WANT_RC CMD...: runs CMD with output in $tmp/out and $tmp/err,
# and checks its exit status.  Returns 0 when it matched.
run_rc() {
	local name=$1 want=$2 rc
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" != "$want" ]; then
		bad "$name" "exit status $rc, expected $want; stderr: $(head -c 300 "$tmp/err")"
		return 1
	fi
	return 0
}
# has FILE TEXT: FILE contains TEXT (fixed string).
has() { grep -qF -- "$2" "$1"; }

pku=0
"$xom" check >/dev/null 2>&1 && pku=1

# ---- help and usage errors -------------------------------------------------

t_help() {
	run_rc help 0 "$xom" --help || return
	for c in run scan check status; do
		has "$tmp/out" "$c" || { bad help "no '$c' in xom --help"; return; }
	done
	for c in run scan check status; do
		run_rc "help-$c" 0 "$xom" "$c" --help || return
		has "$tmp/out" "usage: xom $c" || { bad help "xom $c --help has no usage line"; return; }
	done
	run_rc help 0 "$xom" --version && has "$tmp/out" "xom " && ok help
}

t_usage() {
	local args
	for args in "" "frob" "--frob" "run" "run --frob x" "run --mode maybe true" \
		"check extra" "status" "status abc" "status 1 2" "scan"; do
		# shellcheck disable=SC2086
		run_rc "usage[$args]" 64 "$xom" $args || return
		has "$tmp/err" "xom" && has "$tmp/err" "usage:" ||
			{ bad usage "'xom $args': no message with usage line"; return; }
	done
	run_rc usage 64 "$xom" frob && has "$tmp/err" "unknown command 'frob'" ||
		{ bad usage "unknown command not named"; return; }
	run_rc usage 64 "$xom" run --frob x && has "$tmp/err" "unknown option '--frob'" &&
		ok usage
}

# ---- xom run ---------------------------------------------------------------

t_run_static() {
	if [ ! -x "$B/tests/cmd/probe-static" ]; then
		skp run-static "no static libc (libc6-dev's libc.a) to build a static program"
		return
	fi
	run_rc run-static 126 "$xom" run -- "$B/tests/cmd/probe-static" exit 0 &&
		has "$tmp/err" "statically linked" && ok run-static ||
		bad run-static "no 'statically linked' in: $(cat "$tmp/err")"
}

t_run_setuid() {
	cp "$probe" "$tmp/probe-suid" && chmod u+s "$tmp/probe-suid"
	run_rc run-setuid 126 "$xom" run -- "$tmp/probe-suid" exit 0 || return
	has "$tmp/err" "set-user-ID" || { bad run-setuid "no 'set-user-ID' in: $(cat "$tmp/err")"; return; }
	cp "$probe" "$tmp/probe-sgid" && chmod g+s "$tmp/probe-sgid"
	run_rc run-setgid 126 "$xom" run -- "$tmp/probe-sgid" exit 0 &&
		has "$tmp/err" "set-group-ID" && ok run-setuid
}

t_run_notfound() {
	run_rc run-notfound 127 "$xom" run -- no-such-program-xom-test &&
		has "$tmp/err" "command not found" && ok run-notfound
}

t_run_script() {
	# A script runs its interpreter, which is what xom checks.
	printf '#!%s\nexit 3\n' "$B/tests/cmd/probe-static" >"$tmp/s1"
	printf '#!/bin/sh\nexit 5\n' >"$tmp/s2"
	chmod +x "$tmp/s1" "$tmp/s2"
	if [ -x "$B/tests/cmd/probe-static" ]; then
		run_rc run-script 126 "$xom" run -- "$tmp/s1" || return
		has "$tmp/err" "interpreter" || { bad run-script "$(cat "$tmp/err")"; return; }
	fi
	run_rc run-script 5 "$xom" run -- "$tmp/s2" && ok run-script
}

t_run_status() {
	local n
	for n in 0 1 7 42 255; do
		run_rc run-status 0 true || return
		"$xom" run -- "$probe" exit "$n" 2>/dev/null
		[ $? = "$n" ] || { bad run-status "exit $n not passed through"; return; }
	done
	# PATH lookup, as a shell does it.
	run_rc run-status 1 "$xom" run -- false || return
	ok run-status
}

t_run_signal() {
	run_rc run-signal 139 "$xom" run -- "$probe" kill 11 || return
	has "$tmp/err" "xom: probe: killed by SIGSEGV" ||
		{ bad run-signal "no report line in: $(cat "$tmp/err")"; return; }
	run_rc run-signal 143 "$xom" run -- "$probe" kill 15 || return
	has "$tmp/err" "killed by SIGTERM" || { bad run-signal "SIGTERM not reported"; return; }
	ok run-signal
}

t_run_env() {
	# The user's preload stays, after xom's; other XOM_OPTIONS keys stay,
	# and the command line's replace the same keys.
	LD_PRELOAD=$B/tests/runtime/libempty.so XOM_OPTIONS=cache=off:mode=audit:verbose=0:exclude=*foo* \
		run_rc run-env 0 "$xom" run --mode off -v -- "$probe" env LD_PRELOAD XOM_OPTIONS LD_AUDIT || return
	local lib
	lib=$(realpath "$B/libxom.so")
	has "$tmp/out" "LD_PRELOAD=$lib:$B/tests/runtime/libempty.so" ||
		{ bad run-env "LD_PRELOAD: $(grep LD_PRELOAD "$tmp/out")"; return; }
	has "$tmp/out" "XOM_OPTIONS=cache=off:exclude=*foo*:mode=off:verbose=1" ||
		{ bad run-env "XOM_OPTIONS: $(grep XOM_OPTIONS "$tmp/out")"; return; }
	has "$tmp/out" "LD_AUDIT unset" || { bad run-env "LD_AUDIT set"; return; }
	# A nested xom run does not add the library twice.
	run_rc run-env 0 "$xom" run --mode off -- "$xom" run --mode off -- "$probe" env LD_PRELOAD || return
	[ "$(cat "$tmp/out")" = "LD_PRELOAD=$lib" ] || { bad run-env "nested: $(cat "$tmp/out")"; return; }
	(unset LD_PRELOAD XOM_OPTIONS
	 run_rc run-env 0 "$xom" run --audit --profile "$tmp/prof" -- "$probe" env LD_PRELOAD LD_AUDIT XOM_OPTIONS) ||
		{ bad run-env "xom run --audit failed (above)"; return; }
	has "$tmp/out" "LD_AUDIT=$(realpath "$B/libxom-audit.so")" &&
		has "$tmp/out" "LD_PRELOAD=$lib" &&
		has "$tmp/out" "XOM_OPTIONS=profile=$tmp/prof" && ok run-env ||
		bad run-env "--audit: $(cat "$tmp/out")"
}

t_run_nopku() {
	if [ "$pku" = 1 ]; then
		skp run-nopku "this CPU has protection keys; the no-PKU notice cannot be seen"
		return
	fi
	# Without PKU the runtime says so and the program runs unprotected;
	# with --require it is refused.
	run_rc run-nopku 0 "$xom" run -- "$probe" readcode || return
	has "$tmp/err" "running unprotected" || { bad run-nopku "no notice: $(cat "$tmp/err")"; return; }
	run_rc run-nopku 126 "$xom" run --require -- "$probe" exit 0 && ok run-nopku
}

# ---- xom scan, check, status -------------------------------------------------

t_scan() {
	local f rc1 rc2 opt
	for opt in "" --json --map; do
		for f in "$probe" /bin/true /etc/passwd; do
			"$B/xom-scan" $opt "$f" >"$tmp/a" 2>"$tmp/ae"; rc1=$?
			"$xom" scan $opt "$f" >"$tmp/b" 2>"$tmp/be"; rc2=$?
			if [ "$rc1" != "$rc2" ] || ! cmp -s "$tmp/a" "$tmp/b" || ! cmp -s "$tmp/ae" "$tmp/be"; then
				bad scan "xom scan $opt $f differs from xom-scan (exit $rc2 vs $rc1)"
				return
			fi
		done
	done
	run_rc scan 64 "$xom" scan --bogus && ok scan
}

t_check() {
	if [ "$pku" = 1 ]; then
		run_rc check 0 "$xom" check && has "$tmp/out" "cpu pku      ok" && ok check
		return
	fi
	run_rc check 1 "$xom" check || return
	has "$tmp/out" "cpu pku      FAIL" && has "$tmp/out" "no pku" &&
		has "$tmp/out" "glibc" && has "$tmp/out" "pkey_alloc" && has "$tmp/out" "cache" &&
		ok check || bad check "$(cat "$tmp/out")"
}

t_check_cache() {
	mkdir -m 755 "$tmp/c" "$tmp/c/xom" && touch "$tmp/c/xom/a" "$tmp/c/xom/b"
	XDG_CACHE_HOME=$tmp/c "$xom" check >"$tmp/out" 2>&1
	has "$tmp/out" "$tmp/c/xom: owner uid $(id -u) (you), mode 0755 (should be 0700), 2 entries" ||
		{ bad check-cache "$(grep cache "$tmp/out")"; return; }
	XOM_OPTIONS=cache=off "$xom" check >"$tmp/out" 2>&1
	has "$tmp/out" "cache=off" && ok check-cache || bad check-cache "$(grep cache "$tmp/out")"
}

t_status() {
	run_rc status 0 "$xom" status --self || return
	has "$tmp/out" "$(realpath "$xom")" && has "$tmp/out" "libc.so" &&
		has "$tmp/out" "total:" || { bad status "$(cat "$tmp/out")"; return; }
	sleep 5 & local pid=$!
	run_rc status 0 "$xom" status "$pid"; kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
	has "$tmp/out" "($(basename "$(realpath /bin/sleep)")" || has "$tmp/out" "(sleep)" ||
		{ bad status "status PID: $(head -2 "$tmp/out")"; return; }
	run_rc status 1 "$xom" status 999999999 && ok status
}

t_install() {
	make --no-print-directory -s install B="$B" PREFIX="$tmp/inst" >"$tmp/out" 2>&1 ||
		{ bad install "$(tail -3 "$tmp/out")"; return; }
	local f
	for f in bin/xom bin/xom-scan lib/xom/libxom.so lib/xom/libxom-audit.so \
		lib/xom/xom-plan lib/xom/libxom-scan.so share/man/man1/xom.1; do
		[ -e "$tmp/inst/$f" ] || { bad install "$f not installed"; return; }
	done
	run_rc install 0 "$tmp/inst/bin/xom" run -- "$probe" env LD_PRELOAD || return
	has "$tmp/out" "LD_PRELOAD=$tmp/inst/lib/xom/libxom.so" ||
		{ bad install "installed xom uses $(cat "$tmp/out")"; return; }
	"$tmp/inst/bin/xom" check >"$tmp/out" 2>&1
	has "$tmp/out" "$tmp/inst/lib/xom/xom-plan" || { bad install "check: $(cat "$tmp/out")"; return; }
	run_rc install 0 "$tmp/inst/bin/xom" scan "$probe" && ok install
}

t_man() {
	local c w
	for c in "xom run" "xom scan" "xom check" "xom status" XOM_OPTIONS \
		mode= backend= require= verbose= log= cache= profile= exclude=; do
		grep -q "$c" <(sed 's/\\-/-/g; s/\\f[BIR]//g' cmd/xom.1) ||
			{ bad man "cmd/xom.1 does not mention $c"; return; }
	done
	if command -v groff >/dev/null; then
		w=$(groff -man -Tutf8 -ww -z cmd/xom.1 2>&1)
		[ -z "$w" ] || { bad man "groff: $w"; return; }
	fi
	ok man
}

# ---- the demo ----------------------------------------------------------------

t_demo_unprotected() {
	run_rc demo-unprotected 0 "$B/demo/attacker" "$B/demo/victim" || return
	has "$tmp/out" "attack succeeded" && has "$tmp/out" "pop rdi; ret  at 0x" &&
		has "$tmp/out" "syscall       at 0x" && ok demo-unprotected ||
		bad demo-unprotected "$(tail -5 "$tmp/out")"
}

t_demo_protected() {
	if [ "$pku" = 0 ]; then
		skp demo-protected "this CPU has no protection keys (the VM suite runs this half)"
		return
	fi
	run_rc demo-protected 1 "$B/demo/attacker" "$xom" run -- "$B/demo/victim" || return
	has "$tmp/out" "attack failed" && has "$tmp/err" "xom: blocked read of" &&
		ok demo-protected || bad demo-protected "$(cat "$tmp/out" "$tmp/err" | tail -5)"
}

for t in t_help t_usage t_run_static t_run_setuid t_run_notfound t_run_script \
	t_run_status t_run_signal t_run_env t_run_nopku t_scan t_check t_check_cache \
	t_status t_install t_man t_demo_unprotected t_demo_protected; do
	$t
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
