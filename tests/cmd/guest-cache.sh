#!/bin/sh
# xom cache in the emulated-PKU guest (tests/vm/guest.list), where the
# system store is the guest's own /var/cache/xom and root owns everything:
# with the store built, the first run of an installed program finds every
# plan there, so no helper runs (no "scanning" line, the user's cache stays
# empty), and its code really is execute-only.  Each test prints "PASS
# name", "FAIL name: detail" or "SKIP name: reason" (tests/lib.sh).
#
# Under TCG the scanner is slow, so the store is built for a handful of
# programs (xom cache build --store DIR PROG...) rather than the whole
# --system walk, whose listing is checked with --dry-run.
set -u
cd /xom 2>/dev/null || cd "$(dirname "$0")/../.."
. tests/lib.sh
B=$PWD/build
xom=$B/xom P=$B/libxom.so PROBE=$B/tests/runtime/libxomprobe.so
S=/var/cache/xom
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; chmod 755 / /var 2>/dev/null' EXIT
unset XOM_OPTIONS LD_PRELOAD LD_AUDIT
export XDG_RUNTIME_DIR=$tmp/run
mkdir -m 700 "$tmp/run"
err() { tail -c 400 "$tmp/err" | tr '\n' '|'; }
# probe_ok FILE: libxomprobe.so found the main program's, libc's and the
# dynamic linker's code unreadable (tests/runtime/vm-enforce.sh).
probe_ok() {
	[ -s "$1" ] && awk '
		/^\[main\] / || /libc\.so/ || /ld-linux/ { n++; if ($2 == 0) bad++ }
		END { exit !(n > 0 && bad == 0) }' "$1"
}

# What the programs do, without xom and with it.
cmds() {
	echo "ls|/usr/bin/ls -1 /xom/tests/cmd"
	echo "sha256sum|/usr/bin/sha256sum $B/libxom.so"
	echo "iconv|echo hello | /usr/bin/iconv -f UTF-8 -t IBM037 | /usr/bin/sha256sum"
	echo "perl|/usr/bin/perl -e 'print join(\",\", map { \$_ * 2 } 1..5), \"\\n\"'"
}

# ---- the --system walk, listed ---------------------------------------------
"$xom" cache build --system --dry-run >"$tmp/walk" 2>"$tmp/err"
rc=$?
bb=$(readlink -f /bin/busybox)
t_check cache-system-walk-guest '[ $rc = 0 ] && grep -qx /usr/bin/ls "$tmp/walk" && grep -qx /usr/bin/perl "$tmp/walk" && ! grep -qx "$bb" "$tmp/walk" && [ ! -e $S ]' \
	"rc $rc, $(wc -l <"$tmp/walk") files, busybox ($bb) listed: $(grep -cx "$bb" "$tmp/walk"): $(err)"

# ---- the store, built --------------------------------------------------------
rm -rf "$S"
start=$(date +%s)
"$xom" cache build --store "$S" /usr/bin/ls /usr/bin/sha256sum /usr/bin/iconv /usr/bin/perl \
	/usr/lib/x86_64-linux-gnu/gconv/IBM037.so "$PROBE" >"$tmp/out" 2>"$tmp/err"
rc=$?
secs=$(( $(date +%s) - start ))
t_check cache-store-built '[ $rc = 0 ] && [ -s $S/plans ] && [ "$(stat -c %a $S)" = 755 ] && [ "$(stat -c %a $S/plans)" = 644 ] && [ "$(stat -c %u $S/plans)" = 0 ]' "rc $rc: $(err)"
echo "# store built in $secs s: $(cat "$tmp/err")"
"$xom" cache stats >"$tmp/out" 2>&1
t_check cache-store-default '[ "$(sed -n 1p "$tmp/out")" = "system store  /var/cache/xom" ] && ! grep -q ignored "$tmp/out"' "$(tr '\n' '|' <"$tmp/out")"

# ---- first runs: nothing scanned, and protected -------------------------------
cmds >"$tmp/cmds"
n=0
while IFS='|' read -r name cmd; do
	n=$((n + 1))
	sh -c "$cmd" >"$tmp/ref" 2>/dev/null
	rm -f "$tmp/probe"
	XDG_CACHE_HOME=$tmp/cache$n XOM_OPTIONS=verbose=1 XOM_PROBE_OUT=$tmp/probe \
		LD_PRELOAD="$P $PROBE" sh -c "$cmd" >"$tmp/got" 2>"$tmp/err"
	t=cache-first-run-$name
	if [ ! -s "$tmp/ref" ] || ! cmp -s "$tmp/ref" "$tmp/got"; then
		t_fail $t "output differs: $(head -c 200 "$tmp/got") $(err)"
	elif has "$tmp/err" "scanning" || [ -e "$tmp/cache$n/xom/plans" ]; then
		t_fail $t "a helper ran: $(err)"
	elif ! grep -q "pages* execute-only" "$tmp/err" || ! probe_ok "$tmp/probe"; then
		t_fail $t "not execute-only: $(tr '\n' '|' <"$tmp/probe" 2>/dev/null) $(err)"
	else
		t_pass "$t ($(awk '/^\[main\]/ { printf "%s/%s ", $2, $3 }' "$tmp/probe")main code pages unreadable, no scan)"
	fi
done <"$tmp/cmds"
# Through xom run, with its default options.
XDG_CACHE_HOME=$tmp/cache-run "$xom" run -v -- /usr/bin/ls /xom >"$tmp/out" 2>"$tmp/err"
rc=$?
t_check cache-first-run-xom-run '[ $rc = 0 ] && ! has "$tmp/err" scanning && [ ! -e "$tmp/cache-run/xom/plans" ] && has "$tmp/err" "/usr/bin/ls: "' "rc $rc: $(err)"

# ---- a store the runtime must not trust ----------------------------------------
for d in /var /; do
	chmod 775 "$d"
	XDG_CACHE_HOME=$tmp/cache-untrusted XOM_OPTIONS=verbose=1 LD_PRELOAD=$P /usr/bin/sha256sum "$P" >/dev/null 2>"$tmp/err"
	rc=$?
	chmod 755 "$d"
	t_check "cache-store-untrusted[$d]" '[ $rc = 0 ] && has "$tmp/err" "plan store $S/plans ignored: its directories are not root'"'"'s alone" && has "$tmp/err" scanning' "rc $rc: $(err)"
	rm -rf "$tmp/cache-untrusted"
done

# ---- prune of the system store ----------------------------------------------------
# A library without a build-id, its plan keyed by the file's identity.
if ! cp "$B/tests/cmd/cache/libcachenoid.so" "$tmp/noid.so" 2>"$tmp/err"; then
	t_fail cache-prune-system "no test library: $(err)"
elif ! "$xom" cache build -q --store "$S" "$tmp/noid.so" 2>"$tmp/err"; then
	t_fail cache-prune-system "cache build failed: $(err)"
else
	rm "$tmp/noid.so"
	"$xom" cache prune --system >"$tmp/out" 2>"$tmp/err"
	rc=$?
	t_check cache-prune-system '[ $rc = 0 ] && has "$tmp/err" "$S: dropped 1 plan (1 file gone, 0 changed)"' "rc $rc: $(err)"
fi

t_summary
