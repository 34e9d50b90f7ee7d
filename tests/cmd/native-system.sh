#!/bin/bash
# tests/cmd/native-system.sh - the system-wide commands: xom enable and
# disable --system on a file of their own (--file; never this machine's
# /etc/ld.so.preload), xom status --system, and xom check's reading of
# xom.conf.  Part of make check-cmd (tests/cmd/native.sh runs every part).
# Enforcement under /etc/ld.so.preload itself is tested in the guest
# (tests/cmd/guest-system.sh).
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/cmd/native-lib.sh

# An installation in a folder that every program could load a library
# from (root's, nobody else can write it or anything above it); sets sysi.
system_install() {
	[ -n "${sysi:-}" ] && return 0
	sysi=$(trusted_dir) || return 1
	make --no-print-directory -s install B="$B" PREFIX="$sysi" APT_CONF_D= XOM_CONF= \
		SYSTEM_PROFILES="$sysi/profiles" \
		>"$tmp/install.out" 2>&1 || { cat "$tmp/install.out" >&2; return 1; }
	chmod 755 "$sysi"
}
system_cleanup() { [ -n "${sysi:-}" ] && rm -rf "$sysi"; }

test_enable() {
	local f=$tmp/etc/ld.so.preload lib force="" rc
	if [ "$(id -u)" != 0 ] || ! system_install; then
		t_skip enable-disable-round-trip "needs root and a folder that only root can write to"
		return
	fi
	lib=$sysi/lib/xom/libxom.so
	mkdir -p "$tmp/etc"
	# Where programs could not get a key (here: a seccomp filter refuses
	# pkey_alloc), every program would print the runtime's notice: enable
	# refuses, and --force overrides it.
	rm -f "$f"
	"$B/tests/runtime/xomtest" nopkey EPERM "$sysi/bin/xom" enable --system --file "$f" \
		>"$tmp/out" 2>"$tmp/err"; rc=$?
	[ $rc = 1 ] && has "$tmp/err" "not enabling (--force" && has "$tmp/err" "  | xom: " && [ ! -e "$f" ] ||
		{ t_fail enable-refuses-notice "rc $rc: $(cat "$tmp/err")"; return; }
	"$B/tests/runtime/xomtest" nopkey EPERM "$sysi/bin/xom" enable --system --force --file "$f" \
		>"$tmp/out" 2>"$tmp/err"; rc=$?
	[ $rc = 0 ] && [ "$(cat "$f")" = "$lib" ] ||
		{ t_fail enable-refuses-notice "--force: rc $rc: $(cat "$tmp/err")"; return; }
	rm -f "$f"
	t_pass enable-refuses-notice
	printf '/usr/lib/other.so  # a comment\n/usr/lib/more.so:/usr/lib/third.so\n' >"$f"
	cp "$f" "$tmp/orig"
	chmod 600 "$f"
	"$sysi/bin/xom" enable --system --file "$f" >"$tmp/out" 2>"$tmp/err"; rc=$?
	# Without protection keys the same.
	if [ "$pku" = 0 ]; then
		[ $rc = 1 ] && has "$tmp/err" "not enabling (--force" && cmp -s "$f" "$tmp/orig" ||
			{ t_fail enable-refuses-nopku "rc $rc: $(cat "$tmp/err")"; return; }
		force=--force
		"$sysi/bin/xom" enable --system $force --file "$f" >"$tmp/out" 2>"$tmp/err"; rc=$?
	fi
	# The test run's verdict: a clean run where the CPU has PKU; without
	# it, the notice that every program would print, shown and overridden.
	if [ "$pku" = 1 ]; then
		ran="checked: /usr/bin/cat runs with $lib preloaded and maps it"
	else
		ran="xom: this CPU has no memory protection keys (PKU); running unprotected"
	fi
	[ $rc = 0 ] && has "$tmp/err" "enabled: $f now lists $lib" &&
		[ "$(cat "$f")" = "$(cat "$tmp/orig")
$lib" ] && [ "$(stat -c %a "$f")" = 644 ] && [ "$(stat -c %u "$f")" = 0 ] &&
		has "$tmp/err" "$ran" ||
		{ t_fail enable-adds-library-line "rc $rc, file: $(cat "$f" | tr '\n' '|'), mode $(stat -c %a "$f"): $(cat "$tmp/err")"; return; }
	cp "$f" "$tmp/enabled"
	run_rc enable-twice-changes-nothing 0 "$sysi/bin/xom" enable --system $force --file "$f" || return
	has "$tmp/err" "already enabled: $f lists $lib" && cmp -s "$f" "$tmp/enabled" ||
		{ t_fail enable-twice-changes-nothing "$(cat "$tmp/err")"; return; }
	run_rc disable-restores-file 0 "$sysi/bin/xom" disable --system --file "$f" || return
	cmp -s "$f" "$tmp/orig" && has "$tmp/err" "removed $lib from $f" ||
		{ t_fail disable-restores-file "left: $(cat "$f" | tr '\n' '|'): $(cat "$tmp/err")"; return; }
	run_rc disable-twice-changes-nothing 0 "$sysi/bin/xom" disable --system --file "$f" || return
	has "$tmp/err" "already disabled: $f lists no libxom.so" && cmp -s "$f" "$tmp/orig" ||
		{ t_fail disable-twice-changes-nothing "$(cat "$tmp/err")"; return; }
	# From no file to one line, and back to no file.
	rm -f "$f"
	run_rc enable-creates-file 0 "$sysi/bin/xom" enable --system $force --file "$f" || return
	[ "$(cat "$f")" = "$lib" ] || { t_fail enable-creates-file "$(cat "$f")"; return; }
	run_rc disable-removes-emptied-file 0 "$sysi/bin/xom" disable --system --file "$f" || return
	[ ! -e "$f" ] && has "$tmp/err" "disabled: removed $f" ||
		{ t_fail disable-removes-emptied-file "$(cat "$tmp/err")"; return; }
	t_pass enable-disable-round-trip
}

# What enable must refuse: not root, a library others could replace, a
# library that does not load, a file of another name.
test_enable_refuses() {
	local f=$tmp/etc/ld.so.preload bad rc
	if [ "$(id -u)" != 0 ] || ! system_install; then
		t_skip enable-refuses-unsafe-setups "needs root and a folder that only root can write to"
		return
	fi
	mkdir -p "$tmp/etc"
	rm -f "$f"
	run_rc enable-not-root 2 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$sysi/bin/xom" enable --system --file "$f" || return
	has "$tmp/err" "only root can change $f" && [ ! -e "$f" ] ||
		{ t_fail enable-not-root "$(cat "$tmp/err")"; return; }
	run_rc enable-file-name 64 "$sysi/bin/xom" enable --system --file "$tmp/etc/passwd" || return
	run_rc enable-needs-system 64 "$sysi/bin/xom" enable || return
	# A copy whose folder others may write to.
	bad=$(mktemp -d "$sysi/bad.XXXXXX")
	cp -a "$sysi/bin" "$sysi/lib" "$bad/"
	chmod 775 "$bad/lib/xom"
	run_rc enable-writable 1 "$bad/bin/xom" enable --system --force --file "$f" || return
	has "$tmp/err" "not root's alone" && [ ! -e "$f" ] ||
		{ t_fail enable-writable "$(cat "$tmp/err")"; return; }
	# A library that is not one: the dynamic linker says so and skips it.
	chmod 755 "$bad/lib/xom"
	echo "not a library" >"$bad/lib/xom/libxom.so"
	run_rc enable-broken 1 "$bad/bin/xom" enable --system --force --file "$f" || return
	has "$tmp/err" "did not map it; not enabling" && has "$tmp/err" "cannot be preloaded" && [ ! -e "$f" ] ||
		{ t_fail enable-broken "$(cat "$tmp/err")"; return; }
	# One cut short past its headers: Debian 12's dynamic linker maps it
	# and every program dies by SIGBUS.
	head -c 4096 "$sysi/lib/xom/libxom.so" >"$bad/lib/xom/libxom.so"
	run_rc enable-truncated 1 "$bad/bin/xom" enable --system --force --file "$f" || return
	has "$tmp/err" "preloaded died by signal 7; not enabling" && [ ! -e "$f" ] ||
		{ t_fail enable-truncated "$(cat "$tmp/err")"; return; }
	rm -rf "$bad"
	t_pass enable-refuses-unsafe-setups
}

# Every process, with what protects it: a probe under xom run says
# preload, a plain sleep none.
test_status_system() {
	local pid plain
	rm -f "$tmp/pid"
	"$xom" run -- "$probe" sleep 30 >"$tmp/pid" 2>/dev/null &
	local xpid=$!
	pid=$(started "$tmp/pid") || { t_fail status-system-names-protection "the probe never started"; kill "$xpid"; return; }
	(trap - EXIT; exec sleep 30) &
	plain=$!
	wait_comm "$plain" sleep
	"$xom" status --system >"$tmp/out" 2>"$tmp/err"; local rc=$?
	"$xom" status --system --json >"$tmp/json" 2>>"$tmp/err"
	kill "$xpid" "$plain" 2>/dev/null; wait "$xpid" "$plain" 2>/dev/null
	[ $rc = 0 ] && grep -Eq "^ *$pid  preload " "$tmp/out" && grep -Eq "^ *$plain  none " "$tmp/out" &&
		grep -q '^total: [0-9]* processes: [1-9][0-9]* preload, ' "$tmp/out" &&
		grep -q "^{\"pid\": $pid, .*\"protected_by\": \"preload\"" "$tmp/json" &&
		grep -q "^{\"pid\": $plain, .*\"protected_by\": \"none\"" "$tmp/json" &&
		tail -n 1 "$tmp/json" | grep -q '^{"total": {"processes": [1-9]' ||
		{ t_fail status-system-names-protection "rc $rc: $(grep -E "^ *($pid|$plain) |^total" "$tmp/out" | tr '\n' '|') $(cat "$tmp/err")"; return; }
	if [ "$pku" = 1 ] && ! grep -Eq "^ *$pid  preload +[1-9][0-9]* " "$tmp/out"; then
		t_fail status-system-names-protection "no execute-only page in the probe: $(grep -E "^ *$pid " "$tmp/out")"
		return
	fi
	t_pass status-system-names-protection
}

# xom check reads xom.conf by the runtime's parser: each rule, matched or
# not, and the file's owner and mode.
test_check_conf() {
	local c=$tmp/conf/xom.conf verdict
	mkdir -p -m 755 "$tmp/conf"
	cp etc/xom.conf "$c"
	"$xom" check --conf "$c" >"$tmp/out" 2>&1
	# A user's copy is not root's: the runtime would ignore it, and xom
	# check says so, but reads its rules all the same.
	local owner="^xom.conf     ok    $c: root's, mode 0644"
	[ "$(id -u)" = 0 ] || owner="^xom.conf     FAIL  $c: ignored by the runtime, which says so in every process: it or $tmp/conf is not root's"
	grep -q "$owner" "$tmp/out" &&
		grep -q '^  line [0-9]*  *ok    \* exclude=libGLdispatch.so\*$' "$tmp/out" &&
		! grep -q '^  line.*FAIL' "$tmp/out" ||
		{ t_fail check-conf-shipped "$(grep -i conf "$tmp/out" | tr '\n' '|')"; return; }
	# The verdict names the first failure: without PKU, the CPU's; for a
	# user, the file's owner.
	verdict="a rule of xom.conf is invalid"
	[ "$(id -u)" = 0 ] || verdict="xom.conf is ignored"
	[ "$pku" = 1 ] || verdict="the CPU has no pku"
	printf '/usr/bin/a off\n/usr/bin/b mode=bogus\n/usr/bin/c mode=audit verbose=1\n/usr/bin/d\nrel verbose=1\n' >"$c"
	"$xom" check --conf "$c" >"$tmp/out" 2>&1
	grep -q "^  line 1  *ok    /usr/bin/a off" "$tmp/out" &&
		grep -q "^  line 2  *FAIL  /usr/bin/b mode=bogus: mode must be enforce, audit or off, got 'bogus'" "$tmp/out" &&
		grep -q "^  line 3  *FAIL  .*unexpected 'verbose=1' after the options" "$tmp/out" &&
		grep -q "^  line 4  *FAIL  /usr/bin/d: expected options or off" "$tmp/out" &&
		grep -q "^  line 5  *note  rel verbose=1: never matches" "$tmp/out" &&
		grep -q "^verdict      FAIL  .*$verdict" "$tmp/out" ||
		{ t_fail check-conf-rules "$(grep -i 'conf\|line\|verdict' "$tmp/out" | tr '\n' '|')"; return; }
	if [ "$(id -u)" = 0 ]; then
		chmod 666 "$c"
		"$xom" check --conf "$c" >"$tmp/out" 2>&1
		grep -q "^xom.conf     FAIL  $c: ignored by the runtime" "$tmp/out" ||
			{ t_fail check-conf-mode "$(grep -i conf "$tmp/out" | tr '\n' '|')"; return; }
	fi
	t_pass check-conf-reads-rules
	# A file the user names must be there; only the default may be missing.
	"$xom" check --conf "$tmp/conf/missing.conf" >"$tmp/out" 2>&1
	rc=$?
	grep -q "^xom.conf     FAIL  $tmp/conf/missing.conf: No such file or directory$" "$tmp/out" &&
		[ $rc = 1 ] ||
		{ t_fail check-conf-missing "rc $rc: $(grep -i 'conf\|verdict' "$tmp/out" | tr '\n' '|')"; return; }
	t_pass check-conf-missing
}

# xom check shows where each folder is, and why a cache is not used.
test_check_folders() {
	local rc
	env -u XDG_CONFIG_HOME -u XDG_CACHE_HOME HOME=/nonexistent/home XOM_OPTIONS= "$xom" check >"$tmp/out" 2>&1
	grep -q '^  profiles   default           /nonexistent/home/.config/xom/profiles$' "$tmp/out" &&
		grep -q '^  cache      default           /nonexistent/home/.cache/xom$' "$tmp/out" ||
		{ t_fail check-names-each-folder "$(grep -E '^  (profiles|cache) ' "$tmp/out" | tr '\n' '|')"; return; }
	XOM_OPTIONS=cache=relative "$xom" check >"$tmp/out" 2>&1
	grep -q '^cache        note  none: cache=relative is not an absolute path, so the runtime uses no cache' "$tmp/out" ||
		{ t_fail check-names-each-folder "cache=relative: $(grep -E '^cache ' "$tmp/out")"; return; }
	"$xom" check >"$tmp/out" 2>&1
	rc=$?
	if [ "$pku" = 1 ]; then
		! grep -q '^next ' "$tmp/out" || { t_fail check-names-each-folder "a next step where the CPU has keys"; return; }
	else
		[ $rc = 1 ] && grep -q '^next         protection keys come with .*`make demo`' "$tmp/out" &&
			tail -n 1 "$tmp/out" | grep -q '^verdict      FAIL' ||
			{ t_fail check-names-each-folder "no next step without keys: rc $rc: $(tail -n 2 "$tmp/out" | tr '\n' '|')"; return; }
	fi
	t_pass check-names-each-folder
}

# xom check reads a require=1 rule for what it does on this machine: where
# no key can be had, it refuses every program it matches, shells included.
test_check_conf_require() {
	local c=$tmp/conf/require.conf sh nokey=""
	mkdir -p -m 755 "$tmp/conf"
	sh=$(readlink -f /bin/sh)
	# Where the CPU has keys, a seccomp filter takes them away.
	[ "$pku" = 1 ] && nokey="$B/tests/runtime/xomtest nopkey EPERM"
	printf '* require=1\n/opt/xom-test/* require=1\n/opt/xom-test/none/* require=1:backend=none\n/opt/xom-test/off/* require=1:mode=off\n' >"$c"
	$nokey "$xom" check --conf "$c" >"$tmp/out" 2>&1
	grep -q "^  line 1  *FAIL  \* require=1: refuses every program it matches here (exit 126), since .*: no new shell starts (it matches $sh); the xom command itself still runs (xom disable --system), and xom.require=0 on the kernel command line waives require=1" "$tmp/out" &&
		grep -q "^  line 2  *FAIL  /opt/xom-test/\* require=1: refuses every program it matches here (exit 126), since [^:]*; the xom command" "$tmp/out" &&
		grep -q "^  line 3  *ok    /opt/xom-test/none/\* require=1:backend=none$" "$tmp/out" &&
		grep -q "^  line 4  *ok    /opt/xom-test/off/\* require=1:mode=off$" "$tmp/out" ||
		{ t_fail check-conf-require "$(grep 'line\|verdict' "$tmp/out" | tr '\n' '|')"; return; }
	t_pass check-conf-require
}

# A mount namespace of the test's own whose /etc is an overlay of this
# machine's, with the files of a folder of the test's on top: /etc/xom.conf
# and /etc/ld.so.preload exist there only, and the machine's /etc is never
# written.  etc_ns UPPER COMMANDS runs the bash command lines as root
# there; once ld.so.preload lists xom, only builtins and the programs
# under test run in it.
etc_ns_ok() {
	[ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v setpriv >/dev/null &&
		mkdir -p "$tmp/probe-up" "$tmp/probe-up.work" &&
		unshare -m sh -c "mount -t overlay overlay -o lowerdir=/etc,upperdir=$tmp/probe-up,workdir=$tmp/probe-up.work /etc" 2>/dev/null
}
etc_ns() {
	local up=$1
	shift
	rm -rf "$up.work" && mkdir -p "$up.work"
	unshare -m bash -c "$* "
}
etc_mount() { echo "mount -t overlay overlay -o lowerdir=/etc,upperdir=$1,workdir=$1.work /etc"; }

# With a rule that refuses every program (no keys to be had, or, where
# there are, an invalid option under require=1) and xom in
# /etc/ld.so.preload: the xom command still runs, and so xom disable
# --system gives the machine back; the kernel command line's
# xom.require=0 waives require=1 everywhere; enable refuses to install
# what would refuse its own test program, unless --force.
test_require_rescue() {
	local up=$tmp/rescue lib rule r
	if ! etc_ns_ok || ! system_install; then
		t_skip require-rescue "needs root, unshare and an overlay over /etc in a mount namespace"
		return
	fi
	lib=$sysi/lib/xom/libxom.so
	rule='* require=1'
	[ "$pku" = 1 ] && rule='* require=1:bogus=1'
	rm -rf "$up" && mkdir -m 755 "$up" && echo "$rule" >"$up/xom.conf" && echo "$lib" >"$up/ld.so.preload" &&
		chmod 644 "$up/xom.conf" "$up/ld.so.preload" || { t_fail require-rescue "setup"; return; }
	r=$tmp/r && rm -rf "$r" && mkdir "$r"
	etc_ns "$up" "$(etc_mount "$up") || exit 9
		/bin/true 2>$r/true.err; echo \$? >$r/true.rc
		XOM_OPTIONS=require=0 /bin/true 2>$r/env.err; echo \$? >$r/env.rc
		$sysi/bin/xom disable --system >$r/disable.out 2>$r/disable.err; echo \$? >$r/disable.rc
		[ -e /etc/ld.so.preload ]; echo \$? >$r/listed.rc
		/bin/true 2>$r/after.err; echo \$? >$r/after.rc"
	[ "$(cat "$r/true.rc")" = 126 ] && has "$r/true.err" "xom: refusing to run: " ||
		{ t_fail require-rescue "the rule did not refuse /bin/true: rc $(cat "$r/true.rc"): $(cat "$r/true.err")"; return; }
	# A program's own user may waive it (not the caller of a set-user-ID
	# program: test_require_secure).
	t_check require-rescue-env '[ "$(cat "$r/env.rc")" = 0 ]' "rc $(cat "$r/env.rc"): $(cat "$r/env.err")"
	t_check require-rescue-xom-runs '[ "$(cat "$r/disable.rc")" = 0 ] && has "$r/disable.err" "running unprotected: require=1 does not apply to the xom command itself" &&
		has "$r/disable.err" "disabled: removed /etc/ld.so.preload" && [ "$(cat "$r/listed.rc")" = 1 ] &&
		[ "$(cat "$r/after.rc")" = 0 ]' \
		"disable: rc $(cat "$r/disable.rc"), listed $(cat "$r/listed.rc"), then true $(cat "$r/after.rc"): $(cat "$r/disable.err")"
	# The kernel command line's word, as the boot loader would give it.
	echo "$lib" >"$up/ld.so.preload"
	echo "BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro xom.require=0 quiet" >"$r/cmdline"
	etc_ns "$up" "mount --bind $r/cmdline /proc/cmdline && $(etc_mount "$up") || exit 9
		/bin/true 2>$r/word.err; echo \$? >$r/word.rc"
	cp "$r/word.err" "$r/word1.err"
	cp "$r/word.rc" "$r/word1.rc"
	# Only the whole word counts.
	echo "ro xom.require=00 noxom.require=0" >"$r/cmdline"
	etc_ns "$up" "mount --bind $r/cmdline /proc/cmdline && $(etc_mount "$up") || exit 9
		/bin/true 2>$r/word.err; echo \$? >$r/word.rc"
	t_check require-rescue-kernel-word '[ "$(cat "$r/word1.rc")" = 0 ] && has "$r/word1.err" "running unprotected: require=1 is waived by xom.require=0 on the kernel command line" &&
		[ "$(grep -c "^xom: " "$r/word1.err")" = 1 ] && [ "$(cat "$r/word.rc")" = 126 ]' \
		"rc $(cat "$r/word1.rc"): $(cat "$r/word1.err"); not the word: rc $(cat "$r/word.rc")"
	# enable's test run meets the rule: refused, unless --force.
	rm -f "$up/ld.so.preload" "$r/ld.so.preload"
	etc_ns "$up" "$(etc_mount "$up") || exit 9
		$sysi/bin/xom enable --system --file $r/ld.so.preload >$r/en.out 2>$r/en.err; echo \$? >$r/en.rc
		[ -e $r/ld.so.preload ]; echo \$? >$r/en.listed
		$sysi/bin/xom enable --system --force --file $r/ld.so.preload >$r/force.out 2>$r/force.err; echo \$? >$r/force.rc"
	[ "$(cat "$r/en.rc")" = 1 ] && [ "$(cat "$r/en.listed")" = 1 ] &&
		has "$r/en.err" "preloaded was refused (exit 126):" && has "$r/en.err" "  | xom: refusing to run: " &&
		has "$r/en.err" "would be refused so, no new shell or login included; not enabling (--force" ||
		{ t_fail require-enable-refuses "rc $(cat "$r/en.rc"), listed $(cat "$r/en.listed"): $(cat "$r/en.err")"; return; }
	[ "$(cat "$r/force.rc")" = 0 ] && [ "$(cat "$r/ld.so.preload" 2>/dev/null)" = "$lib" ] &&
		has "$r/force.err" "enabling all the same" ||
		{ t_fail require-enable-refuses "--force: rc $(cat "$r/force.rc"): $(cat "$r/force.err")"; return; }
	t_pass require-enable-refuses
}

# The rescue is root's: the caller of a set-user-ID program cannot waive
# require=1 through its environment, but the kernel's word can.
test_require_secure() {
	local up=$tmp/secure r=$tmp/sr rule='mode=enforce:require=1' s
	if ! etc_ns_ok || ! system_install; then
		t_skip require-secure "needs root, unshare and an overlay over /etc in a mount namespace"
		return
	fi
	[ "$pku" = 1 ] && rule='mode=enforce:require=1:bogus=1'
	s=$(mktemp -d "$sysi/suid.XXXXXX") && chmod 755 "$s" && cp /bin/cat "$s/cat" && chmod 4755 "$s/cat" &&
		rm -rf "$up" "$r" && mkdir -m 755 "$up" && mkdir "$r" &&
		printf '* mode=off\n%s/cat %s\n' "$s" "$rule" >"$up/xom.conf" && echo "$sysi/lib/xom/libxom.so" >"$up/ld.so.preload" &&
		chmod 644 "$up/xom.conf" "$up/ld.so.preload" || { t_fail require-secure "setup"; return; }
	echo "ro quiet" >"$r/plain"
	echo "ro xom.require=0 quiet" >"$r/word"
	for c in plain word; do
		etc_ns "$up" "mount --bind $r/$c /proc/cmdline && $(etc_mount "$up") || exit 9
			setpriv --reuid=65534 --regid=65534 --clear-groups env XOM_OPTIONS=require=0:mode=off \
				$s/cat /proc/self/status >$r/$c.out 2>$r/$c.err; echo \$? >$r/$c.rc"
	done
	[ "$(cat "$r/plain.rc")" = 126 ] && has "$r/plain.err" "xom: refusing to run: " &&
		has "$r/plain.err" "ignored in a secure-execution program" ||
		{ t_fail require-secure-caller "rc $(cat "$r/plain.rc"): $(cat "$r/plain.err")"; return; }
	t_pass require-secure-caller
	[ "$(cat "$r/word.rc")" = 0 ] && grep -Eq "^Uid:[[:space:]]+65534[[:space:]]+0[[:space:]]" "$r/word.out" &&
		has "$r/word.err" "require=1 is waived by xom.require=0 on the kernel command line" ||
		{ t_fail require-secure-kernel-word "rc $(cat "$r/word.rc"): $(cat "$r/word.err") $(grep ^Uid "$r/word.out")"; return; }
	t_pass require-secure-kernel-word
	rm -rf "$s"
}

# Under xom in every program, xom check names the set-user-ID,
# set-group-ID and file-capability programs whose plans (or those of what
# they load) the system store lacks: they scan at every run.  A set-user-ID
# copy of the probe appears in /usr/local/bin (an overlay, in the
# namespace only); the store gets the plans of every other such program
# this test can find, then the probe's.
test_check_secure() {
	local up=$tmp/cs st r m1 m2 n1 progs
	if ! etc_ns_ok || ! system_install || ! [ -d /usr/local/bin ] || ! st=$(trusted_dir); then
		t_skip check-secure-counts-unplanned-setid "needs root, unshare, an overlay over /etc in a mount namespace, and /usr/local/bin"
		return
	fi
	r=$tmp/csr
	rm -rf "$up" "$r" && mkdir -m 755 "$up" "$up.bin" && mkdir "$r" && mkdir -p "$up.bin.work" &&
		echo "$sysi/lib/xom/libxom.so" >"$up/ld.so.preload" && echo '* mode=off' >"$up/xom.conf" &&
		chmod 644 "$up/ld.so.preload" "$up/xom.conf" && cp "$probe" "$up.bin/xom-suid-probe" &&
		chmod 4755 "$up.bin/xom-suid-probe" || { t_fail check-secure-counts-unplanned-setid "setup"; rm -rf "$st"; return; }
	chmod 755 "$st"
	progs=$(find /usr/lib /usr/lib64 /usr/bin /usr/sbin /usr/libexec /usr/local -type f -perm /6000 2>/dev/null
		command -v getcap >/dev/null && getcap -r /usr/lib /usr/lib64 /usr/bin /usr/sbin /usr/libexec /usr/local 2>/dev/null | cut -d' ' -f1)
	# shellcheck disable=SC2086
	"$sysi/bin/xom" cache build -q --store "$st/s" $progs >/dev/null 2>&1
	check() { # check NAME: xom check in the namespace, with the store
		etc_ns "$up" "$(etc_mount "$up") && mount -t overlay overlay -o lowerdir=/usr/local/bin,upperdir=$up.bin,workdir=$up.bin.work /usr/local/bin || exit 9
			XOM_OPTIONS=store=$st/s $sysi/bin/xom check >$r/$1 2>&1"
	}
	count() { sed -nE "s/^set-ID       note  ([0-9]+) of ([0-9]+) set-user-ID.*/\\$2/p" "$r/$1"; }
	check before
	# The probe's plan is made where the namespace shows it, in root's
	# /usr/local/bin: a shared store takes build-id plans only from files
	# that root alone can change, which the overlay's upper folder is not.
	etc_ns "$up" "mount -t overlay overlay -o lowerdir=/usr/local/bin,upperdir=$up.bin,workdir=$up.bin.work /usr/local/bin || exit 9
		$sysi/bin/xom cache build -q --store $st/s /usr/local/bin/xom-suid-probe >/dev/null 2>&1"
	check after
	m1=$(count before 1) n1=$(count before 2) m2=$(count after 1)
	rm -rf "$st"
	if ! grep -q '^set-ID  ' "$r/before" || [ -z "$m1" ]; then
		t_fail check-secure-counts-unplanned-setid "before the probe's plan: $(grep '^set-ID' "$r/before")"
	elif [ "$m1" = 1 ]; then
		t_check check-secure-counts-unplanned-setid 'grep -q "^set-ID       note  1 of $n1 set-user-ID, set-group-ID and file-capability programs lack plans in $st/s, so each of their runs scans, .*: /usr/local/bin/xom-suid-probe (xom-suid-probe); root: xom cache build --system$" "$r/before" &&
			grep -q "^set-ID       ok    $n1 set-user-ID, set-group-ID and file-capability programs: $st/s has the plans of each and of what it loads$" "$r/after"' \
			"$(grep '^set-ID' "$r/before" "$r/after")"
	else
		# This machine has such programs that the test could not find
		# (file capabilities without getcap): the probe's plan is one less.
		t_check check-secure-counts-unplanned-setid '[ "$m2" = $((m1 - 1)) ]' "$(grep '^set-ID' "$r/before" "$r/after")"
	fi
}

for t in test_enable test_enable_refuses test_status_system test_check_conf test_check_folders \
	test_check_conf_require test_require_rescue test_require_secure test_check_secure; do
	$t
done
system_cleanup
t_summary
