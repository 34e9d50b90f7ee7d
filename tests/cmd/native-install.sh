#!/bin/bash
# tests/cmd/native-install.sh - make install, install-system and
# uninstall: what they write and where, and the apt hook they install.
# Part of make check-cmd (tests/cmd/native.sh runs every part); it runs on
# any machine, and a check that needs protection keys skips with the
# reason.
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/cmd/native-lib.sh

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
		{ t_fail install-lays-out-prefix "$(tail -3 "$tmp/out")"; return; }
	# Outside DESTDIR+PREFIX: only the folders above PREFIX.
	out=$(cd "$d" && find . -mindepth 1 | sed 's|^\.||' | grep -vx -e /opt -e "$p" | grep -v "^$p/" || true)
	t_check install-within-prefix '[ -z "$out" ]' "written outside $p: $(echo $out)"
	for f in bin/xom bin/xom-scan lib/xom/libxom.so lib/xom/libxom-audit.so \
		lib/xom/xom-plan lib/xom/libxom-scan.so lib/xom/xom-apt-hook share/man/man1/xom.1 \
		share/man/man5/xom.conf.5 $(cd profiles && ls -- *.profile | sed 's|^|share/xom/profiles/|') \
		$(sed -n 's/^program \([0-9a-f]*\) .*/lib\/xom\/profiles\/\1/p' profiles/*.profile); do
		[ -e "$inst/$f" ] || { t_fail install-lays-out-prefix "$f not installed"; return; }
	done
	cmp -s "$inst/share/man/man1/xom.1" "$B/xom.1" &&
		cmp -s "$inst/share/man/man5/xom.conf.5" "$B/xom.conf.5" ||
		{ t_fail install-lays-out-prefix "the installed man pages are not the built ones"; return; }
	run_rc install-lays-out-prefix 0 "$inst/bin/xom" run -- "$probe" env LD_PRELOAD || return
	has "$tmp/out" "LD_PRELOAD=$inst/lib/xom/libxom.so" ||
		{ t_fail install-lays-out-prefix "installed xom uses $(cat "$tmp/out")"; return; }
	"$inst/bin/xom" check >"$tmp/out" 2>&1
	has "$tmp/out" "$inst/lib/xom/xom-plan" || { t_fail install-lays-out-prefix "check: $(cat "$tmp/out")"; return; }
	run_rc install-lays-out-prefix 0 "$inst/bin/xom" scan "$probe" || return
	t_pass install-lays-out-prefix

	# install-system: what it wrote outside PREFIX is exactly what it lists.
	mkdir -p "$d/etc/apt/apt.conf.d"
	make --no-print-directory -s install-system B="$B" DESTDIR="$d" PREFIX="$p" >"$tmp/out" 2>&1 ||
		{ t_fail install-system-lists "$(tail -3 "$tmp/out")"; return; }
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
		{ t_fail install-system-keeps-xom-conf "a second install-system replaced xom.conf: $(cat "$d/etc/xom.conf")"; return; }
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
		[ ! -e "$d/var/cache/xom/profiles" ] && t_pass uninstall-removes-only-its-own ||
		t_fail uninstall-removes-only-its-own "left behind: $f$( [ -e "$inst/lib/xom" ] && echo ' lib/xom/')"
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

for t in test_install test_cache_hook; do
	$t
done
t_summary
