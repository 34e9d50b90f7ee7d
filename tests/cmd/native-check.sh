#!/bin/bash
# tests/cmd/native-check.sh - xom check: its verdict, the options in
# force, a bad XOM_OPTIONS in the runtime's own words, and where plans go
# when the cache cannot be used (as the runtime itself then does). Part of
# make check-cmd (tests/cmd/native.sh runs every part); it runs on any
# machine, and a check that needs protection keys skips with the reason.
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/cmd/native-lib.sh

test_check() {
	if [ "$pku" = 1 ]; then
		run_rc check-ends-with-verdict 0 "$xom" check && has "$tmp/out" "cpu pku      ok" || return
	else
		run_rc check-ends-with-verdict 1 "$xom" check || return
		has "$tmp/out" "cpu pku      FAIL" && has "$tmp/out" "no pku" &&
			has "$tmp/out" "glibc" && has "$tmp/out" "pkey_alloc" && has "$tmp/out" "cache" ||
			{ t_fail check-ends-with-verdict "$(cat "$tmp/out")"; return; }
	fi
	tail -n 1 "$tmp/out" | grep -q '^verdict ' || { t_fail check-ends-with-verdict "the last line is no verdict"; return; }
	[ ! -s "$tmp/err" ] && t_pass check-ends-with-verdict || t_fail check-ends-with-verdict "stderr: $(cat "$tmp/err")"
}

# One line per key of options.def with the value in force and its source.
test_check_values() {
	local kv key
	XOM_OPTIONS=mode=audit:verbose=2 "$xom" check >"$tmp/out" 2>&1
	for kv in $(option_keys); do
		key=${kv%%=*}
		grep -Eq "^  $key +(default|from XOM_OPTIONS) " "$tmp/out" ||
			{ t_fail check-lists-every-option "no line for $key: $(grep '^  ' "$tmp/out" | tr '\n' '|')"; return; }
	done
	grep -Eq '^  mode +from XOM_OPTIONS +audit$' "$tmp/out" &&
		grep -Eq '^  verbose +from XOM_OPTIONS +2$' "$tmp/out" &&
		grep -Eq '^  backend +default +pkey$' "$tmp/out" && t_pass check-lists-every-option ||
		t_fail check-lists-every-option "$(grep '^  ' "$tmp/out" | tr '\n' '|')"
}

# A bad XOM_OPTIONS is reported in the runtime's own words.
test_check_options() {
	local opts words
	for opts in frob=1 mode=maybe verbose=99 cache= ; do
		XOM_OPTIONS=$opts LD_PRELOAD=$B/libxom.so "$probe" exit 0 2>"$tmp/rt" >/dev/null
		words=$(head -n 1 "$tmp/rt")
		words=${words#xom: } words=${words%; running unprotected}
		[ -n "$words" ] || { t_fail check-bad-options-in-runtime-words "the runtime said nothing about XOM_OPTIONS=$opts"; return; }
		XOM_OPTIONS=$opts run_rc check-bad-options-in-runtime-words 1 "$xom" check || return
		grep -F "XOM_OPTIONS  FAIL" "$tmp/out" | grep -qF -- "$words" ||
			{ t_fail check-bad-options-in-runtime-words "XOM_OPTIONS=$opts: the runtime says '$words'; xom check: $(grep XOM_OPTIONS "$tmp/out")"; return; }
	done
	t_pass check-bad-options-in-runtime-words
}

test_check_cache() {
	mkdir -m 755 "$tmp/c" "$tmp/c/xom" && touch "$tmp/c/xom/a" "$tmp/c/xom/b"
	XDG_RUNTIME_DIR=$tmp/run XDG_CACHE_HOME=$tmp/c "$xom" check >"$tmp/out" 2>&1
	has "$tmp/out" "$tmp/c/xom: 0 plans, read but not written: mode 0755 (plans are written only to a folder of mode 0700); new plans go to $tmp/run/xom instead" ||
		{ t_fail check-names-cache-folder "$(grep cache "$tmp/out")"; return; }
	grep -q "^store .*/var/cache/xom: " "$tmp/out" ||
		{ t_fail check-names-cache-folder "no system store line: $(grep store "$tmp/out")"; return; }
	# The runtime's rule: the last cache= wins; a relative XDG_CACHE_HOME
	# does not count.
	XOM_OPTIONS=cache=$tmp/one:cache=$tmp/two "$xom" check >"$tmp/out" 2>&1
	grep -q "^cache .*$tmp/two: not there yet" "$tmp/out" ||
		{ t_fail check-names-cache-folder "last cache=: $(grep cache "$tmp/out")"; return; }
	XDG_CACHE_HOME=rel HOME=$tmp/h "$xom" check >"$tmp/out" 2>&1
	grep -q "^cache .*$tmp/h/.cache/xom" "$tmp/out" ||
		{ t_fail check-names-cache-folder "relative XDG_CACHE_HOME: $(grep cache "$tmp/out")"; return; }
	XOM_OPTIONS=cache=off "$xom" check >"$tmp/out" 2>&1
	has "$tmp/out" "cache=off" && t_pass check-names-cache-folder || t_fail check-names-cache-folder "$(grep cache "$tmp/out")"
}

# As another user whose cache cannot be created: xom check names the
# folder the plans will go to, and the runtime puts them there and says so
# once (the next start finds them and stays quiet).
test_check_fallback() {
	local d u="setpriv --reuid=65534 --regid=65534 --clear-groups"
	if [ "$(id -u)" != 0 ]; then t_skip check-names-fallback-folder "needs root to run as another user"; return; fi
	# The programs are copied where that user can reach them: the checkout
	# may be in a folder only its owner can enter.
	d=$(mktemp -d /tmp/xom-fb.XXXXXX) && chmod 755 "$d" && mkdir -m 755 "$d/home" "$d/bin" &&
		cp "$xom" "$B/libxom.so" "$B/xom-plan" "$d/bin/" &&
		mkdir -m 700 "$d/run" && chown 65534:65534 "$d/run" || { t_fail check-names-fallback-folder "setup"; return; }
	$u env -i PATH=/usr/bin:/bin HOME=$d/home XDG_RUNTIME_DIR=$d/run "$d/bin/xom" check >"$tmp/out" 2>&1
	local said
	said=$(grep "^cache " "$tmp/out")
	case $said in
	*"$d/home/.cache/xom: cannot be created; new plans go to $d/run/xom instead") ;;
	*) t_fail check-names-fallback-folder "xom check: $said"; rm -rf "$d"; return ;;
	esac
	local i
	for i in 1 2; do
		$u env -i PATH=/usr/bin:/bin HOME=$d/home XDG_RUNTIME_DIR=$d/run XOM_OPTIONS=backend=none:store=off \
			LD_PRELOAD=$d/bin/libxom.so /bin/true 2>"$tmp/rt$i"
	done
	if [ -s "$d/run/xom/plans" ] && [ ! -e "$d/home/.cache/xom" ] &&
		[ "$(grep -c "keeping them in $d/run/xom" "$tmp/rt1")" = 1 ] && [ ! -s "$tmp/rt2" ]; then
		t_pass check-names-fallback-folder
	else
		t_fail check-names-fallback-folder "fallback $(ls "$d/run/xom" 2>&1 | tr '\n' ' '); first run: $(cat "$tmp/rt1"); second: $(cat "$tmp/rt2")"
	fi
	rm -rf "$d"
}

# A user whose home cannot be written, without XDG_RUNTIME_DIR, and whose
# /tmp/xom-UID another user made first.  With no folder of its own under
# /run/user, every start scans and says so, in one line that names the
# user who made the folder; with one (logind's, which nobody but root can
# make), plans go there, and the next start is quiet and scans nothing.
# A uid that no one uses, so that the shared /tmp/xom-UID is the test's.
test_fallback_squatted() {
	local d u s i said
	if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
		t_skip fallback-squatted-tmp-named "needs root, and setpriv, to run as other users"; return
	fi
	u=$((40000 + $$ % 20000))
	while [ -e "/tmp/xom-$u" ] || [ -e "/run/user/$u" ] || getent passwd "$u" >/dev/null ||
		getent passwd $((u + 1)) >/dev/null; do
		u=$((u + 2))
	done
	s=$((u + 1))
	d=$(mktemp -d /tmp/xom-sq.XXXXXX) && chmod 755 "$d" && mkdir -m 755 "$d/home" "$d/bin" &&
		cp "$xom" "$B/libxom.so" "$B/xom-plan" "$d/bin/" &&
		mkdir -m 700 "/tmp/xom-$u" && chown "$s:$s" "/tmp/xom-$u" ||
		{ t_fail fallback-squatted-tmp-named "setup"; rm -rf "$d" "/tmp/xom-$u"; return; }
	sq_runs() { # sq_runs N: N starts as user u, stderr of start i in $tmp/sq$i
		for i in $(seq "$1"); do
			setpriv --reuid="$u" --regid="$u" --clear-groups env -i PATH=/usr/bin:/bin \
				HOME="$d/home" XOM_OPTIONS=backend=none:store=off:verbose=1 \
				LD_PRELOAD="$d/bin/libxom.so" /bin/true 2>"$tmp/sq$i"
		done
	}
	sq_runs 2
	said=$(setpriv --reuid="$u" --regid="$u" --clear-groups env -i PATH=/usr/bin:/bin \
		HOME="$d/home" "$d/bin/xom" check 2>&1 | grep '^fallback')
	local line="cannot keep plans in the cache (.*), nor in /tmp/xom-$u (/tmp/xom-$u belongs to uid $s, not to you (uid $u): that user made it first); every start scans again\$"
	if grep -q "$line" "$tmp/sq1" && grep -q "$line" "$tmp/sq2" &&
		[ "$(grep -vc 'pages\? execute-only\|scanning' "$tmp/sq2")" = 1 ] &&
		case $said in *"/tmp/xom-$u: not used: its owner is uid $s, not you") ;; *) false ;; esac; then
		t_pass fallback-squatted-tmp-named
	else
		t_fail fallback-squatted-tmp-named "first: $(cat "$tmp/sq1"); second: $(cat "$tmp/sq2"); check: $said"
	fi
	if [ "$(stat -c '%u %a' /run/user 2>/dev/null)" != "0 755" ]; then
		t_skip fallback-run-user-keeps-plans "this machine has no /run/user of root's, mode 0755 (logind's)"
	elif mkdir -m 700 "/run/user/$u" && chown "$u:$u" "/run/user/$u"; then
		sq_runs 2
		if grep -q "keeping them in /run/user/$u/xom\$" "$tmp/sq1" && [ -s "/run/user/$u/xom/plans" ] &&
			! grep -v 'pages\? execute-only' "$tmp/sq2" | grep -q . &&
			grep -q 'libc.so.6: [0-9]* pages execute-only' "$tmp/sq2"; then
			t_pass fallback-run-user-keeps-plans
		else
			t_fail fallback-run-user-keeps-plans "first: $(cat "$tmp/sq1"); second: $(cat "$tmp/sq2")"
		fi
	else
		t_fail fallback-run-user-keeps-plans "cannot make /run/user/$u"
	fi
	rm -rf "$d" "/tmp/xom-$u" "/run/user/$u"
}

for t in test_check test_check_values test_check_options test_check_cache test_check_fallback test_fallback_squatted; do
	$t
done
t_summary
