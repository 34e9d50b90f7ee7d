#!/bin/bash
# tests/cmd/native-scan.sh - xom scan: the same output as xom-scan, and a
# FIFO refused at once (by xom scan, xom cache build and xom-scan alike).
# Part of make check-cmd (tests/cmd/native.sh runs every part); it runs on
# any machine, and a check that needs protection keys skips with the
# reason.
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/cmd/native-lib.sh

test_scan() {
	local f rc1 rc2 opt
	for opt in "" --json --map; do
		for f in "$probe" /bin/true /etc/passwd; do
			"$B/xom-scan" $opt "$f" >"$tmp/a" 2>"$tmp/ae"; rc1=$?
			"$xom" scan $opt "$f" >"$tmp/b" 2>"$tmp/be"; rc2=$?
			if [ "$rc1" != "$rc2" ] || ! cmp -s "$tmp/a" "$tmp/b" || ! cmp -s "$tmp/ae" "$tmp/be"; then
				t_fail scan-matches-xom-scan "xom scan $opt $f differs from xom-scan (exit $rc2 vs $rc1)"
				return
			fi
		done
	done
	run_rc scan-matches-xom-scan 64 "$xom" scan --bogus || return
	# A static program's share comes with the line that says the doors
	# never reach it; its stdout and status stay the scanner's.
	for f in "$B/tests/cmd/probe-static" "$B/tests/cmd/probe-static-pie"; do
		"$B/xom-scan" "$f" >"$tmp/a" 2>/dev/null; rc1=$?
		"$xom" scan "$f" >"$tmp/b" 2>"$tmp/be"; rc2=$?
		[ "$rc1" = "$rc2" ] && cmp -s "$tmp/a" "$tmp/b" &&
			[ "$(cat "$tmp/be")" = "xom: $f: statically linked: LD_PRELOAD, LD_AUDIT and /etc/ld.so.preload never load xom into it, so only \`xom run\` applies this plan, from outside, where the CPU has keys" ] ||
			{ t_fail scan-matches-xom-scan "static $f: exit $rc2 vs $rc1: $(cat "$tmp/be")"; return; }
	done
	t_pass scan-matches-xom-scan
}

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
			{ t_fail fifo-refused-at-once "xom $c: rc $rc: $(tr '\n' '|' <"$tmp/err")"; return; }
	done
	timeout 20 "$B/xom-scan" "$tmp/fifo2" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc = 1 ] || { t_fail fifo-refused-at-once "xom-scan: rc $rc: $(tr '\n' '|' <"$tmp/err")"; return; }
	t_pass fifo-refused-at-once
}

for t in test_scan test_fifo; do
	$t
done
t_summary
