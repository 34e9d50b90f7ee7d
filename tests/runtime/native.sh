#!/bin/sh
# The run-time tests that need no protection keys: options, messages, the
# plan cache, backend=none, and the wrappers.  Tests that need PKU skip here
# with the reason; they run in the emulated-PKU VM (tests/runtime/vm-*.sh).
# Usage: B=build tests/runtime/native.sh
B=${B:-build}
R=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "$R/$B" && pwd)
P=$B/libxom.so A=$B/libxom-audit.so T=$B/tests/runtime/xomtest
LIB=$B/tests/runtime/libtarget.so
W=$(mktemp -d) || exit 1
trap 'rm -rf "$W"' EXIT
export XDG_CACHE_HOME=$W/cache
unset XOM_OPTIONS
pass=0 fail=0 skip=0
ok() { echo "PASS $1"; pass=$((pass + 1)); }
no() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
sk() { echo "SKIP $1: $2"; skip=$((skip + 1)); }
# check NAME CONDITION-COMMAND DETAIL
check() { if eval "$2"; then ok "$1"; else no "$1" "$3"; fi; }
run() { # run OPTIONS PROGRAM...: stdout in $W/out, stderr in $W/err, $rc
	o=$1; shift
	XOM_OPTIONS=$o LD_PRELOAD=$P "$@" >"$W/out" 2>"$W/err"; rc=$?
}
run_audit() {
	o=$1; shift
	XOM_OPTIONS=$o LD_AUDIT=$A "$@" >"$W/out" 2>"$W/err"; rc=$?
}
lines() { wc -l <"$1" | tr -d ' '; }

if "$T" haspku; then pku=1; else pku=0; fi

# ---- without PKU: the notice, require=1 ----
if [ $pku = 0 ]; then
	run "" /bin/true
	check notice-line '[ $rc = 0 ] && [ "$(cat $W/err)" = "xom: protection keys are not supported by this CPU or kernel; running unprotected" ] && [ ! -s $W/out ]' "rc $rc, stderr '$(cat $W/err)'"
	run "require=1" /bin/true
	check require-refuses '[ $rc = 127 ] && grep -q "^xom: refusing to run: protection keys are not supported" $W/err && [ $(lines $W/err) = 1 ]' "rc $rc, stderr '$(cat $W/err)'"
	run_audit "require=1" /bin/true
	check require-refuses-audit '[ $rc = 127 ] && grep -q "^xom: refusing to run" $W/err' "rc $rc"
else
	sk notice-line "this machine has protection keys"
	sk require-refuses "this machine has protection keys"
	sk require-refuses-audit "this machine has protection keys"
fi

# ---- options ----
for bad in "bogus=1|unknown key 'bogus'" "mode=x|mode must be enforce, audit or off, got 'x'" \
	"backend=y|backend must be pkey or none, got 'y'" "require=2|require must be 0 or 1, got '2'" \
	"verbose=z|verbose must be a number 0-9, got 'z'" "nokey|expected key=value, got 'nokey'" \
	"cache=|cache needs a directory or off" "log=/nonexistent/dir/x|cannot open log file"; do
	opt=${bad%%|*} msg=${bad#*|}
	run "$opt" /bin/echo hi
	check "bad-option-$opt" '[ $rc = 0 ] && [ "$(cat $W/out)" = hi ] && grep -qF "xom: XOM_OPTIONS: $msg" $W/err && grep -q "^xom: XOM_OPTIONS is invalid; running unprotected$" $W/err && [ $(lines $W/err) = 2 ]' "rc $rc, stderr '$(cat $W/err)'"
done
run "mode=bad:require=1" /bin/true
check bad-option-require '[ $rc = 127 ] && grep -q "refusing to run: XOM_OPTIONS is invalid" $W/err' "rc $rc"
run "mode=off" /bin/true
check mode-off-silent '[ $rc = 0 ] && [ ! -s $W/err ]' "rc $rc, stderr '$(cat $W/err)'"

# ---- backend=none: the whole path, no protection calls ----
run "backend=none:verbose=1" /bin/echo hi
check stdout-clean '[ "$(cat $W/out)" = hi ]' "stdout '$(cat $W/out)'"
check none-plans-all 'grep -q "libc.so.6: [0-9]* pages execute-only, [0-9]* kept readable, [1-9][0-9]* protection calls not made (backend=none)" $W/err && grep -q "ld-linux-x86-64.so.2: " $W/err && grep -q "/echo: " $W/err' "$(cat $W/err)"
check cache-created '[ -d $XDG_CACHE_HOME/xom ] && [ "$(stat -c %a $XDG_CACHE_HOME/xom)" = 700 ] && [ -n "$(ls $XDG_CACHE_HOME/xom/*.plan)" ] && [ -z "$(find $XDG_CACHE_HOME/xom -name "*.plan" ! -perm 600)" ]' "$(ls -la $XDG_CACHE_HOME/xom 2>&1)"
run "backend=none" "$T" cycle "$LIB" 200
check dlopen-cycle-preload '[ $rc = 0 ] && grep -q "^PASS dlopen-cycle" $W/out' "$(cat $W/out $W/err)"
run_audit "backend=none" "$T" cycle "$LIB" 200
check dlopen-cycle-audit '[ $rc = 0 ] && grep -q "^PASS dlopen-cycle" $W/out' "$(cat $W/out $W/err)"
# A #! script's main program is its interpreter, not the script.
printf '#!/bin/sh\necho hi\n' >"$W/script.sh" && chmod +x "$W/script.sh"
run "backend=none:verbose=1" "$W/script.sh"
dash=$(readlink -f /bin/sh)
check script-interpreter '[ "$(cat $W/out)" = hi ] && grep -q "^xom: $dash: [0-9]* pages execute-only" $W/err && ! grep -q "script.sh" $W/err' "$(cat $W/err)"
run "backend=none:verbose=1:log=$W/log" /bin/echo hi
check log-file '[ ! -s $W/err ] && grep -q "libc.so.6: " $W/log' "stderr '$(cat $W/err)'"
run "backend=none:verbose=1:exclude=libc.so*" /bin/true
check exclude 'grep -q "libc.so.6: excluded; left unprotected" $W/err' "$(cat $W/err)"

# ---- the cache: warm entries need no scanner; bad entries are rebuilt ----
# A copy of the libraries without xom-plan next to them: a warm cache must
# be enough, and a cold one must fail safe with one line per object.
mkdir -p "$W/lone" && cp "$P" "$W/lone/libxom.so"
XOM_OPTIONS=backend=none:verbose=1 LD_PRELOAD=$W/lone/libxom.so /bin/true 2>"$W/err"; rc=$?
check warm-needs-no-scanner '[ $rc = 0 ] && ! grep "no scanner" $W/err | grep -qv "lone/libxom.so" && grep -q "libc.so.6: [0-9]* pages" $W/err' "$(cat $W/err)"
XDG_CACHE_HOME=$W/cold XOM_OPTIONS=backend=none LD_PRELOAD=$W/lone/libxom.so /bin/echo hi >"$W/out" 2>"$W/err"; rc=$?
check no-scanner-fails-safe '[ $rc = 0 ] && [ "$(cat $W/out)" = hi ] && grep -q "libc.so.6: no scanner: .*/xom-plan (no such file, errno 2); left unprotected" $W/err' "rc $rc: $(cat $W/err)"

libc_entry() { # the cache entry of libc
	for f in "$XDG_CACHE_HOME"/xom/*.plan; do
		if [ "$(stat -c %s "$f")" -gt 20000 ] && grep -q "__libc_start_main" "$f"; then echo "$f"; return; fi
	done
}
E=$(libc_entry)
if [ -z "$E" ]; then
	no cache-entry-libc "no cache entry for libc in $XDG_CACHE_HOME/xom"
else
	corrupt() { # corrupt NAME EXPECTED-REASON: after the corruption in $E
		why=$2
		run "backend=none:verbose=1" /bin/true
		check "cache-$1" 'grep -qF "ignored: $why; rebuilding" $W/err && grep -q "libc.so.6: [0-9]* pages" $W/err' "$(cat $W/err)"
		run "backend=none:verbose=1" /bin/true
		check "cache-$1-rebuilt" '! grep -q ignored $W/err' "$(cat $W/err)"
	}
	printf 'X' | dd of="$E" bs=1 seek=200 conv=notrunc 2>/dev/null
	corrupt flipped-byte "header checksum mismatch"
	truncate -s 1000 "$E"
	corrupt truncated "length does not match its header (truncated?)"
	printf 'YOMP' | dd of="$E" bs=1 seek=0 conv=notrunc 2>/dev/null
	corrupt bad-magic "bad magic"
	"$T" reseal "$E" 12 99 2>/dev/null
	corrupt wrong-version "made for another file or scanner version"
	if [ "$(id -u)" = 0 ]; then
		chown 65534 "$E"
		corrupt foreign-owner "owned by another user"
	else
		sk cache-foreign-owner "needs root to chown"
		sk cache-foreign-owner-rebuilt "needs root to chown"
	fi
	chmod 666 "$E"
	corrupt writable "writable by others"
	: >"$E"
	corrupt empty "truncated or oversized"
fi
chmod 755 "$XDG_CACHE_HOME/xom"
run "backend=none" /bin/echo hi
check cache-dir-not-private '[ "$(cat $W/out)" = hi ] && grep -q "cache directory .* is accessible to others (want mode 0700); plans are not cached" $W/err' "$(cat $W/err)"
chmod 700 "$XDG_CACHE_HOME/xom"
run "backend=none:cache=off:verbose=1" /bin/true
check cache-off 'grep -q "libc.so.6: [0-9]* pages" $W/err' "$(cat $W/err)"

# ---- both doors, the audit module, the wrappers ----
XOM_OPTIONS=backend=none:verbose=1 LD_AUDIT=$A LD_PRELOAD=$P /bin/true 2>"$W/err"
check one-owner '[ $(grep -c "libc.so.6: " $W/err) = 1 ] && [ $(grep -c "libxom.so: " $W/err) = 1 ]' "$(cat $W/err)"
echo hello | XOM_OPTIONS=backend=none:verbose=1 LD_AUDIT=$A iconv -f UTF-8 -t IBM037 >"$W/out" 2>"$W/err"
check audit-sees-gconv 'grep -q "gconv/IBM037.so: [0-9]* pages" $W/err && [ "$(od -An -tx1 $W/out | tr -d " ")" = 888593939625 ]' "$(cat $W/err)"
for door in preload audit; do
	if [ $door = preload ]; then r=run; else r=run_audit; fi
	$r "backend=none" "$T" handler
	check "own-handler-$door" 'grep -q "^PASS own-handler" $W/out' "$(cat $W/out $W/err)"
	$r "backend=none" "$T" threads "$LIB" 8 0.5 0
	check "dlopen-threads-$door" 'grep -q "^PASS dlopen-threads" $W/out' "$(cat $W/out $W/err)"
	$r "backend=none:mode=audit" "$T" call
	check "audit-mode-runs-$door" '[ $rc = 0 ]' "rc $rc: $(cat $W/err)"
done
XOM_OPTIONS=backend=none:verbose=1 LD_PRELOAD=$P /bin/sh -c "$T call" 2>"$W/err"; rc=$?
check exec-inherits '[ $rc = 0 ] && grep -q "/xomtest: " $W/err && grep -q "/dash: \|/sh: \|/bash: " $W/err' "rc $rc: $(cat $W/err)"

# ---- what needs protection keys ----
for t in enforce-self enforce-libc maps audit-profile real-programs fork-exec; do
	if [ $pku = 1 ]; then
		sk "$t" "runs in the emulated-PKU VM (tests/runtime/vm-enforce.sh)"
	else
		sk "$t" "no protection keys on this machine; runs in the emulated-PKU VM"
	fi
done

echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
