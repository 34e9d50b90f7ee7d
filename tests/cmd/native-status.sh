#!/bin/bash
# tests/cmd/native-status.sh - xom status: what a process has mapped and
# how much of it is execute-only, read safely even from another user's
# process.  Part of make check-cmd (tests/cmd/native.sh runs every part);
# it runs on any machine, and a check that needs protection keys skips
# with the reason.
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/cmd/native-lib.sh

test_status() {
	local pid
	run_rc status-lists-mapped-objects 0 "$xom" status --self || return
	has "$tmp/out" "$(realpath "$xom")" && has "$tmp/out" "libc.so" &&
		has "$tmp/out" "total:" || { t_fail status-lists-mapped-objects "$(cat "$tmp/out")"; return; }
	# xom itself runs without a plan in force: its readable pages are
	# what an attacker can read, not "0 bytes".
	local n
	n=$(sed -n 's/^total: [0-9]* code pages execute-only, \([0-9]*\) readable, .*/\1/p' "$tmp/out")
	[ "${n:-0}" -gt 0 ] && grep -q "^readable to an attacker: all $n readable code pages ($((n * 4096)) bytes); no object has a plan in force" "$tmp/out" ||
		{ t_fail status-lists-mapped-objects "self: $(grep -E '^(total|readable)' "$tmp/out" | tr '\n' '|')"; return; }
	# The child must not run this shell's EXIT trap if it dies before its
	# exec, and is looked at only once it is sleep.
	(trap - EXIT; exec sleep 30) &
	pid=$!
	wait_comm "$pid" sleep
	run_rc status-lists-mapped-objects 0 "$xom" status "$pid"
	kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
	has "$tmp/out" "process $pid (sleep)" && t_pass status-lists-mapped-objects ||
		t_fail status-lists-mapped-objects "status PID: $(head -2 "$tmp/out")"
}

test_status_gone() {
	local pid
	(exit 0) & pid=$!
	wait "$pid"
	run_rc status-gone-process-fails 1 "$xom" status "$pid" || return
	has "$tmp/err" "process $pid: no such process" || { t_fail status-gone-process-fails "$(cat "$tmp/err")"; return; }
	run_rc status-gone-process-fails 1 "$xom" status 999999999 &&
		has "$tmp/err" "no such process" && t_pass status-gone-process-fails
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
		t_skip status-replaced-file-not-opened "needs root, and setpriv, to run a process as another user"; return
	fi
	d=$(mktemp -d /tmp/xom-st.XXXXXX) && chmod 755 "$d" && mkdir -m 755 "$d/bin" &&
		cp "$xom" "$d/bin/" && cp "$(command -v sleep)" "$d/prog" && mkfifo "$d/fifo" &&
		"$xom" cache build "$d/prog" >/dev/null 2>&1 ||
		{ t_fail status-replaced-file-not-opened "setup"; rm -rf "$d"; return; }
	$u "$d/prog" 60 & pid=$!
	wait_comm "$pid" prog
	rm "$d/prog" && ln -s fifo "$d/prog (deleted)"
	(exec 3>"$d/fifo"; echo opened >"$d/opened") & w=$!
	timeout 20 "$xom" status "$pid" >"$tmp/out" 2>"$tmp/err"; rc=$?
	timeout 20 $u "$d/bin/xom" status "$pid" >"$tmp/out2" 2>"$tmp/err2"; rc2=$?
	sleep 0.3
	col=$(grep -F "$d/prog (deleted)" "$tmp/out" | awk '{ print $4 }')
	col2=$(grep -F "$d/prog (deleted)" "$tmp/out2" | awk '{ print $4 }')
	if [ ! -e "$d/opened" ] && [ $rc = 0 ] && [ "$col" = "?" ] && [ $rc2 = 0 ] && [ "$col2" = "-" ]; then
		t_pass status-replaced-file-not-opened
	else
		t_fail status-replaced-file-not-opened "FIFO opened: $([ -e "$d/opened" ] && echo yes || echo no); root: exit $rc, '$col', $(head -c 400 "$tmp/out" "$tmp/err"); owner: exit $rc2, '$col2', $(head -c 300 "$tmp/err2")"
	fi
	(: <>"$d/fifo") 2>/dev/null
	kill "$pid" "$w" 2>/dev/null; wait "$pid" "$w" 2>/dev/null
	rm -rf "$d"
}

# Only --xp with a non-zero key counts as execute-only (on made-up smaps
# text, since this kernel may show no keys).
test_status_count() {
	"$B/tests/cmd/status_count" >"$tmp/out" 2>&1 && t_pass status-counts-xo-pages ||
		t_fail status-counts-xo-pages "$(cat "$tmp/out")"
}

for t in test_status test_status_gone test_status_replaced test_status_count; do
	$t
done
t_summary
