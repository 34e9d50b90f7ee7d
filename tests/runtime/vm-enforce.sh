#!/bin/sh
# Enforcement in the emulated-PKU guest (tests/vm/guest.list): reads of
# protected code die with xom's line and SIGSEGV, protected runs show in
# smaps, real programs print the same with and without xom, audit mode and
# its profile, threads with dlopen/dlclose, fork+exec, and the program's own
# SIGSEGV handler.  Usage: tests/runtime/vm-enforce.sh [part]
# Parts (each under the guest's 120 s per program): warm, enforce, real.
R=$(cd "$(dirname "$0")/../.." && pwd)
B=$R/build
P=$B/libxom.so A=$B/libxom-audit.so T=$B/tests/runtime/xomtest
LIB=$B/tests/runtime/libtarget.so
W=/tmp/xom-vm
mkdir -p "$W"
# One cache for every part: the guest's files have their own inodes, so the
# first part builds the plans (slowly, under TCG) and the others reuse them.
export XDG_CACHE_HOME=$W/cache
unset XOM_OPTIONS
part=${1:-enforce}
fail=0
ok() { echo "PASS $1"; }
no() { echo "FAIL $1: $2"; fail=1; }
sk() { echo "SKIP $1: $2"; }
check() { if eval "$2"; then ok "$1"; else no "$1" "$3"; fi; }
both() { # both DOOR OPTIONS PROGRAM...: runs it through one door
	d=$1 o=$2; shift 2
	if [ "$d" = preload ]; then
		XOM_OPTIONS=$o LD_PRELOAD=$P "$@" >"$W/out" 2>"$W/err"
	elif [ "$d" = audit ]; then
		XOM_OPTIONS=$o LD_AUDIT=$A "$@" >"$W/out" 2>"$W/err"
	else
		XOM_OPTIONS=$o LD_AUDIT=$A LD_PRELOAD=$P "$@" >"$W/out" 2>"$W/err"
	fi
	rc=$?
}

if ! "$T" haspku; then
	no pku "this guest has no protection keys (pkey_alloc fails)"
	exit 1
fi

PY=/usr/bin/python3.11
PYCODE='import hashlib, zlib, json; d = json.dumps({"a": [1, 2, 3]}); print(hashlib.sha256(zlib.compress(d.encode())).hexdigest(), json.loads(d))'
PLCODE='my %h = map { $_ => $_ ** 2 } 1..20; print join(",", map { "$_=$h{$_}" } sort { $a <=> $b } keys %h), "\n"'
KEY=000102030405060708090a0b0c0d0e0f
real_cmds() {
	# Files that nothing in the guest changes: a listing of / moves with
	# /proc's link count and what the suite writes to /tmp.
	echo "ls-l|/usr/bin/ls -l --time-style=+ /usr/bin/ls /usr/bin/sha256sum /usr/bin/perl $R/tests/vm"
	echo "sha256sum|/usr/bin/sha256sum $B/libxom.so $B/xom-plan"
	echo "python3|$PY -S -c '$PYCODE'"
	echo "perl|/usr/bin/perl -e '$PLCODE'"
	echo "openssl-enc|/usr/bin/openssl enc -aes-128-cbc -K $KEY -iv $KEY -in $B/libxom.so | /usr/bin/openssl enc -d -aes-128-cbc -K $KEY -iv $KEY | /usr/bin/sha256sum"
	echo "openssl-dgst|/usr/bin/openssl dgst -sha256 -sha512 $B/libxom.so"
	echo "iconv|echo hello | /usr/bin/iconv -f UTF-8 -t IBM037 | /usr/bin/sha256sum"
}

case $part in
warm)
	# Builds every plan once, through the audit module, which sees every
	# object, gconv modules included.
	start=$(date +%s)
	real_cmds | while IFS='|' read -r name cmd; do
		XOM_OPTIONS=backend=none LD_AUDIT=$A sh -c "$cmd" >/dev/null 2>"$W/err-$name"
	done
	XOM_OPTIONS=backend=none LD_AUDIT=$A "$T" maps "$LIB" >/dev/null 2>&1
	XOM_OPTIONS=backend=none LD_AUDIT=$A "$T" maps iconv >/dev/null 2>&1
	n=$(ls "$XDG_CACHE_HOME/xom" 2>/dev/null | wc -l)
	check warm-cache '[ "$n" -ge 15 ]' "$n plans: $(cat $W/err-* | head -5)"
	echo "# warm: $n plans in $(( $(date +%s) - start )) s"
	;;
enforce)
	for d in preload audit both; do
		both $d "" "$T" self
		check "enforce-self-$d" '[ $rc = 139 ] && [ "$(grep -c "^xom: " $W/err)" = 1 ] && grep -Eq "^xom: blocked read of 0x[0-9a-f]+ \($T\+0x[0-9a-f]+, in xom_test_target\) by instruction at 0x[0-9a-f]+ \($T\+0x[0-9a-f]+, in (main|read_self)(\+0x[0-9a-f]+)?\), pid [0-9]+$" $W/err' "rc $rc, $(grep -c . $W/err) lines: $(cat $W/err)"
		both $d "" "$T" libc
		check "enforce-libc-$d" '[ $rc = 139 ] && grep -Eq "^xom: blocked read of 0x[0-9a-f]+ \(/[^ ]*libc.so.6\+0x[0-9a-f]+, in [^)]+\) by instruction at 0x[0-9a-f]+ \($T\+0x[0-9a-f]+, in [^)]+\), pid [0-9]+$" $W/err' "rc $rc, stderr: $(cat $W/err)"
		both $d "" "$T" call
		check "call-works-$d" '[ $rc = 0 ] && [ ! -s $W/err ]' "rc $rc, stderr: $(cat $W/err)"
		both $d "" "$T" maps "$LIB" xomtest libc.so.6 ld-linux-x86-64.so.2 libtarget.so
		sed "s/ maps-/ maps-$d-/" "$W/out"
		[ $rc = 0 ] || [ -s "$W/out" ] || no "maps-$d" "rc $rc: $(cat $W/err)"
		both $d "" "$T" handler
		sed "s/ own-handler/ own-handler-$d/" "$W/out"
		[ -s "$W/out" ] || no "own-handler-$d" "rc $rc: $(cat $W/err)"
		# Two threads' worth of TCG time is plenty to interleave; the
		# native suite runs the 8-thread loop longer.
		both $d "" "$T" threads "$LIB" 8 1 1
		sed "s/ dlopen-threads/ dlopen-threads-$d/" "$W/out"
		[ -s "$W/out" ] || no "dlopen-threads-$d" "rc $rc: $(cat $W/err)"
	done
	both audit "" "$T" maps iconv IBM037.so
	sed "s/ maps-/ maps-audit-/" "$W/out"
	for f in fork vfork; do
		both preload "" "$T" $f
		cat "$W/out"
		[ -s "$W/out" ] || no $f-exec "rc $rc: $(cat $W/err)"
	done
	for d in preload audit; do
		rm -f "$W/profile"
		both $d "mode=audit:profile=$W/profile" "$T" audit
		check "audit-survives-$d" '[ $rc = 0 ] && grep -q survived $W/out && grep -q "^xom: allowed read of .*in xom_test_target" $W/err' "rc $rc: $(cat $W/err)"
		check "audit-profile-$d" '[ $(wc -l <$W/profile) -ge 2 ] && grep -Eq "^[0-9a-f]{40} 0x[0-9a-f]+000$" $W/profile' "profile: $(cat $W/profile)"
		both $d "profile=$W/profile" "$T" audit
		check "enforce-with-profile-$d" '[ $rc = 0 ] && grep -q survived $W/out && [ ! -s $W/err ]' "rc $rc: $(cat $W/err)"
		both $d "" "$T" audit
		check "enforce-without-profile-$d" '[ $rc = 139 ]' "rc $rc: $(cat $W/err)"
	done
	;;
real)
	real_cmds | while IFS='|' read -r name cmd; do
		sh -c "$cmd" >"$W/ref" 2>"$W/ref-err"
		for d in preload audit; do
			if [ $d = preload ]; then
				LD_PRELOAD=$P sh -c "$cmd" >"$W/got" 2>"$W/got-err"
			else
				LD_AUDIT=$A sh -c "$cmd" >"$W/got" 2>"$W/got-err"
			fi
			if [ ! -s "$W/ref" ]; then
				no "same-output-$name-$d" "no output without xom: $(head -c 300 $W/ref-err)"
			elif cmp -s "$W/ref" "$W/got" && ! grep -q "^xom: " "$W/got-err"; then
				ok "same-output-$name-$d"
			else
				no "same-output-$name-$d" "$(diff "$W/ref" "$W/got" | head -c 300) $(head -c 300 $W/got-err)"
			fi
		done
	done
	;;
*)
	echo "usage: vm-enforce.sh warm|enforce|real" >&2
	exit 2
	;;
esac
exit $fail
