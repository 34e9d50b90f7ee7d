#!/bin/bash
# xom learn and xom profile on any machine (make check-learn): the profile
# format, merge, show, install, learn's plumbing, and the runtime finding a
# program's profile by itself (with backend=none, which plans and counts
# without protection keys).  What needs the keys runs in the guest
# (tests/cmd/guest-learn.sh).  The last line is "N passed, N failed, N
# skipped" (tests/lib.sh).
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
B=${B:-build}
xom=$PWD/$B/xom probe=$PWD/$B/tests/cmd/probe lib=$PWD/$B/libxom.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME=$tmp/cache XDG_CONFIG_HOME=$tmp/config XDG_RUNTIME_DIR=$tmp/run
mkdir -m 700 "$XDG_RUNTIME_DIR"
unset XOM_OPTIONS
# Whether this machine has keys (xom check's verdict).
pku=0
"$xom" check >/dev/null 2>&1 && pku=1

# run NAME WANT CMD...: output in $tmp/out and $tmp/err; 0 when the exit
# status is WANT, else one FAIL line.
run() {
	local name=$1 want=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" = "$want" ] && return 0
	t_fail "$name" "exit status $rc, expected $want: $(head -c 400 "$tmp/err" | tr '\n' '|')"
	return 1
}
build_id() { readelf -n "$1" | sed -n 's/.*Build ID: //p'; }

probe_id=$(build_id "$probe")
libc=/lib/x86_64-linux-gnu/libc.so.6
libc_id=$(build_id "$libc")
# code_page LIB: the second page of LIB's executable segment, which its
# plan makes execute-only.
code_page() {
	local seg
	seg=$(readelf -lW "$1" | awk '$1 == "LOAD" && / R E / { print $3; exit }')
	printf '0x%x' $(( (seg + 0x1fff) & ~0xfff ))
}
libc_page=$(code_page "$libc")
# A library that the probe does not need, which it loads with dlopen.
libz=$(readlink -f /lib/x86_64-linux-gnu/libz.so.1)
libz_id=$(build_id "$libz")

test_usage() {
	run learn-usage 64 "$xom" learn || return
	run learn-usage 64 "$xom" learn --door sideways -- "$probe" exit 0 || return
	has "$tmp/err" "--door: 'sideways' is neither preload nor audit" || { t_fail learn-usage "$(cat "$tmp/err")"; return; }
	run learn-usage 64 "$xom" profile frobnicate || return
	run learn-usage 0 "$xom" learn --help && has "$tmp/out" "usage: xom learn" &&
		run learn-usage 0 "$xom" profile --help && has "$tmp/out" "usage: xom profile show" &&
		t_pass learn-usage
}

test_merge() {
	cat >"$tmp/a" <<-EOF
	# first
	program 1111 /bin/one
	aaaa 0x3000 /lib/a.so # read of /lib/a.so+0x3010, in f by /lib/b.so+0x20, no symbol
	aaaa 0x1000 /lib/a.so
	program 2222 /bin/two
	aaaa 0x1000 /lib/a.so
	EOF
	cat >"$tmp/b" <<-EOF
	program 1111 /bin/one
	aaaa 0x1000 /lib/a.so # a later reason
	bbbb 0x7fff /lib/b.so
	EOF
	run profile-merge 0 "$xom" profile merge "$tmp/m" "$tmp/a" "$tmp/b" || return
	grep -v '^#' "$tmp/m" >"$tmp/got"
	cat >"$tmp/want" <<-EOF
	program 1111 /bin/one
	aaaa 0x1000 /lib/a.so # a later reason
	aaaa 0x3000 /lib/a.so # read of /lib/a.so+0x3010, in f by /lib/b.so+0x20, no symbol
	bbbb 0x7000 /lib/b.so
	program 2222 /bin/two
	aaaa 0x1000 /lib/a.so
	EOF
	cmp -s "$tmp/got" "$tmp/want" && has "$tmp/err" "4 pages from 2 profiles (1 repeated)" ||
		{ t_fail profile-merge "got: $(tr '\n' '|' <"$tmp/got") err: $(cat "$tmp/err")"; return; }
	# OUT may be one of the inputs; merging again changes nothing.
	run profile-merge 0 "$xom" profile merge "$tmp/m" "$tmp/m" "$tmp/a" || return
	grep -v '^#' "$tmp/m" | cmp -s - "$tmp/want" && t_pass profile-merge ||
		t_fail profile-merge "again: $(tr '\n' '|' <"$tmp/m")"
}

test_malformed() {
	printf 'program 1111 /bin/one\naaaa 0x1000\naaaa 4096 /lib/a.so\n' >"$tmp/bad"
	run profile-malformed 1 "$xom" profile show "$tmp/bad" || return
	has "$tmp/err" "$tmp/bad:3: not a profile line" && t_pass profile-malformed ||
		t_fail profile-malformed "$(cat "$tmp/err")"
}

test_show() {
	"$xom" cache build "$libc" >/dev/null 2>&1
	printf 'program %s %s\n%s %s %s # read of %s+%s, in f by %s+0x10, no symbol\n' \
		"$probe_id" "$probe" "$libc_id" "$libc_page" "$libc" "$libc" "$libc_page" "$probe" >"$tmp/p"
	run profile-show 0 "$xom" profile show "$tmp/p" || return
	local exec xo
	exec=$("$xom" scan --json "$libc" | sed -n 's/.*"exec_pages": *\([0-9]*\).*/\1/p')
	xo=$("$xom" scan --json "$libc" | sed -n 's/.*"xom_pages": *\([0-9]*\).*/\1/p')
	has "$tmp/out" "program $probe (build-id $probe_id)" &&
		has "$tmp/out" "  $libc (build-id $libc_id): 1 page kept readable; $((xo - 1)) of $exec code pages stay execute-only" &&
		has "$tmp/out" "    $libc_page  read of $libc+$libc_page, in f by" &&
		t_pass profile-show || t_fail profile-show "$(tr '\n' '|' <"$tmp/out")"
}

test_install() {
	run profile-install 0 "$xom" profile install --dir "$tmp/dir" "$tmp/a" || return
	[ -f "$tmp/dir/1111" ] && [ -f "$tmp/dir/2222" ] &&
		[ "$(grep -v '^#' "$tmp/dir/1111" | tr '\n' '|')" = "program 1111 /bin/one|aaaa 0x1000 /lib/a.so|aaaa 0x3000 /lib/a.so # read of /lib/a.so+0x3010, in f by /lib/b.so+0x20, no symbol|" ] ||
		{ t_fail profile-install "$(ls "$tmp/dir" | tr '\n' ' ') $(cat "$tmp/dir/1111" | tr '\n' '|')"; return; }
	# Pages for every program have no file of their own.
	printf 'aaaa 0x1000 /lib/a.so\n' >"$tmp/global"
	run profile-install 1 "$xom" profile install --dir "$tmp/dir2" "$tmp/global" || return
	has "$tmp/err" "is for every program" && [ ! -e "$tmp/dir2" ] && t_pass profile-install ||
		t_fail profile-install "$(cat "$tmp/err")"
}

test_learn() {
	if [ "$pku" = 0 ]; then
		# No protection keys here: no page would be made execute-only and
		# no read seen.  learn refuses before PROG runs, and writes nothing.
		run learn-nokeys 2 "$xom" learn -o "$tmp/l.profile" -- /bin/sh -c "touch $tmp/mark; exit 5" || return
		[ ! -e "$tmp/l.profile" ] && [ ! -e "$tmp/mark" ] &&
			has "$tmp/err" "xom: learn: nothing can be learned here: pkey_alloc fails" &&
			[ ! -e "$XDG_CONFIG_HOME/xom/profiles" ] && t_pass learn-nokeys ||
			t_fail learn-nokeys "$(cat "$tmp/err" | tr '\n' '|') $(ls "$tmp")"
		t_skip learn-plumbing "no protection keys here (xom check); tests/cmd/guest-learn.sh learns under emulated keys"
		return
	fi
	# What is checked is the plumbing: PROG's status, and the file.
	run learn-plumbing 5 "$xom" learn -o "$tmp/l.profile" -- "$probe" exit 5 || return
	if has "$tmp/l.profile" "# learned by: xom learn -- $probe exit 5" &&
		grep -q "^xom: learn: [0-9]* pages\? read, [0-9]* of them new, added to $tmp/l.profile$" "$tmp/err"; then :; else
		t_fail learn-plumbing "$(cat "$tmp/l.profile" "$tmp/err" | tr '\n' '|')"; return
	fi
	# Without -o: the profile folder, one file named by PROG's build-id.
	run learn-plumbing 0 "$xom" learn --door audit -- "$probe" exit 0 || return
	local f=$XDG_CONFIG_HOME/xom/profiles/$probe_id
	[ -f "$f" ] && has "$f" "program $probe_id $probe" && has "$f" "# learned by: xom learn --door audit -- $probe exit 0" &&
		[ "$(stat -c %a "$XDG_CONFIG_HOME/xom/profiles")" = 700 ] && t_pass learn-plumbing ||
		t_fail learn-plumbing "$(ls -la "$XDG_CONFIG_HOME/xom/profiles" 2>&1 | tr '\n' '|')"
	run learn-notfound 127 "$xom" learn -- no-such-program-here && t_pass learn-notfound
	# What xom run refuses (a folder) leaves no profile behind.
	run learn-refused 126 "$xom" learn -o "$tmp/r.profile" -- "$tmp" || return
	[ ! -e "$tmp/r.profile" ] && ! grep -q "pages\? read" "$tmp/err" && t_pass learn-refused ||
		t_fail learn-refused "$(cat "$tmp/err" | tr '\n' '|')"
}

# kept_in OBJ OPTIONS PROBE-ARGS...: how many of OBJ's pages the runtime
# kept readable in a dry run of the probe.
kept_in() {
	local obj=$1 opts=$2
	shift 2
	XOM_OPTIONS=backend=none:verbose=1${opts:+:$opts} LD_PRELOAD=$lib "$probe" "$@" 2>"$tmp/err"
	sed -n "s|^xom: $obj: [0-9]* pages execute-only, \([0-9]*\) kept readable.*|\1|p" "$tmp/err"
}
# kept [OPTIONS]: libc's, when the probe just exits.
kept() { kept_in "$libc" "${1:-}" exit 0; }
# kept_dlopen: libz's, which the probe loads with dlopen (a batch of its
# own, after start-up's).
kept_dlopen() { kept_in "$libz" "" dlopen "$libz"; }

test_runtime() {
	local dir=$XDG_CONFIG_HOME/xom/profiles base with
	rm -rf "$dir"
	base=$(kept)
	[ -n "$base" ] || { t_fail runtime-profile "no line for libc: $(cat "$tmp/err")"; return; }
	mkdir -p -m 700 "$dir"
	printf 'program %s %s\n%s %s %s\n' "$probe_id" "$probe" "$libc_id" "$libc_page" "$libc" >"$dir/$probe_id"
	with=$(kept)
	[ "$with" = $((base + 1)) ] && t_pass runtime-profile ||
		{ t_fail runtime-profile "libc kept $with, $base without the profile: $(cat "$tmp/err")"; return; }
	[ "$(kept profiles=off)" = "$base" ] && t_pass runtime-profiles-off ||
		t_fail runtime-profiles-off "$(cat "$tmp/err")"
	# Not yours alone: ignored.
	chmod 666 "$dir/$probe_id"
	[ "$(kept)" = "$base" ] && t_pass runtime-profile-untrusted ||
		t_fail runtime-profile-untrusted "$(cat "$tmp/err")"
	chmod 644 "$dir/$probe_id"
	chmod 777 "$dir"
	[ "$(kept)" = "$base" ] && t_pass runtime-profile-folder-untrusted ||
		t_fail runtime-profile-folder-untrusted "$(cat "$tmp/err")"
	chmod 700 "$dir"
	# The program's file serves every batch, a dlopen's too (a folder is
	# asked again only while it has the file).
	local zbase
	zbase=$(kept_dlopen)
	printf 'program %s %s\n%s %s %s\n' "$probe_id" "$probe" "$libz_id" "$(code_page "$libz")" "$libz" >"$dir/$probe_id"
	[ -n "$zbase" ] && [ "$(kept_dlopen)" = $((zbase + 1)) ] && [ "$(kept)" = "$base" ] &&
		t_pass runtime-profile-dlopen ||
		t_fail runtime-profile-dlopen "libz kept $(kept_dlopen), $zbase without the profile: $(cat "$tmp/err")"
	# Another program's section: not for this one.
	printf 'program 1111 /bin/other\n%s %s %s\n' "$libc_id" "$libc_page" "$libc" >"$dir/$probe_id"
	[ "$(kept)" = "$base" ] && t_pass runtime-profile-scope ||
		t_fail runtime-profile-scope "$(cat "$tmp/err")"
	# Stale: libc's path under another build-id; one line, nothing kept.
	printf 'program %s %s\n%s %s %s\n%s 0x%x %s\n' "$probe_id" "$probe" \
		0123456789abcdef0123456789abcdef01234567 "$libc_page" "$libc" \
		0123456789abcdef0123456789abcdef01234567 $((libc_page + 4096)) "$libc" >"$dir/$probe_id"
	with=$(kept)
	[ "$with" = "$base" ] && [ "$(grep -c "its object $libc is for build 0123456789abcdef0123456789abcdef01234567, not for the file loaded now ($libc_id); ignored" "$tmp/err")" = 1 ] &&
		t_pass runtime-profile-stale || t_fail runtime-profile-stale "kept $with (base $base): $(cat "$tmp/err")"
	rm -rf "$dir"
}

for t in test_usage test_merge test_malformed test_show test_install test_learn test_runtime; do
	$t
done
t_summary
