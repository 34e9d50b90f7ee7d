#!/bin/bash
# tests/cmd/native-cache.sh - xom cache build, stats and prune on the
# user's own cache: a build holds what the runtime loads, stale plans are
# counted and dropped, and prune loses nothing that programs write beside
# it.  Part of make check-cmd (tests/cmd/native.sh runs every part); it
# runs on any machine, and a check that needs protection keys skips with
# the reason.
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/cmd/native-lib.sh

test_cache_usage() {
	local args
	for args in "cache" "cache frob" "cache build" "cache build --system $probe" \
		"cache build --jobs 0 $probe" "cache build --jobs x $probe" "cache stats extra" \
		"cache stats --system" "cache stats --json --list" "cache prune --jobs 2" \
		"cache build --json $probe" "cache --frob" "cache build --store"; do
		# shellcheck disable=SC2086
		run_rc "cache-usage-error-exits-64[$args]" 64 "$xom" $args || return
		has "$tmp/err" "usage: xom cache" ||
			{ t_fail cache-usage-error-exits-64 "'xom $args': no usage line: $(cat "$tmp/err")"; return; }
	done
	run_rc cache-usage-error-exits-64 0 "$xom" cache --help &&
		has "$tmp/out" "xom cache build --system" && has "$tmp/out" "/var/cache/xom" &&
		has "$tmp/out" "Exit status" && t_pass cache-usage-error-exits-64 ||
		t_fail cache-usage-error-exits-64 "$(head -3 "$tmp/out")"
}

# The key test: after xom cache build PROG, running PROG scans nothing, and
# the cache holds exactly what the runtime loaded: the program, the library
# that only its RUNPATH finds, libc, the dynamic linker and libxom.so.
test_cache_build_closure() {
	local want got
	export XDG_CACHE_HOME=$tmp/cc XDG_RUNTIME_DIR=$tmp/cc-run
	mkdir -m 700 "$tmp/cc-run"
	run_rc cache-build-summary-line 0 "$xom" cache build "$cache/cacheprog" /bin/ls || return
	grep -Eq '^xom: [0-9]+ plans built .* into '"$tmp/cc/xom"' in .*; 0 already current; start-ups: 2 listed, 0 unchanged$' "$tmp/err" &&
		[ "$(wc -l <"$tmp/err")" = 1 ] ||
		{ t_fail cache-build-summary-line "summary: $(cat "$tmp/err")"; return; }
	cp "$tmp/cc/xom/plans" "$tmp/index-before"
	plans_of >"$tmp/plans-built"
	: >"$tmp/rt"
	for p in "$cache/cacheprog" /bin/ls; do
		XOM_OPTIONS=store=off:backend=none:verbose=1 LD_PRELOAD=$B/libxom.so "$p" >/dev/null 2>>"$tmp/rt"
	done
	if grep -q "scanning" "$tmp/rt" || ! cmp -s "$tmp/index-before" "$tmp/cc/xom/plans"; then
		t_fail cache-build-no-scan "the runtime scanned after xom cache build: $(grep scanning "$tmp/rt")"
	else
		t_pass cache-build-no-scan
	fi
	want=$(objects_of "$tmp/rt")
	got=$(sed -n 's/^current //p' "$tmp/plans-built" | while IFS= read -r p; do realpath "$p"; done | sort -u)
	[ -n "$want" ] && [ "$want" = "$got" ] && echo "$got" | grep -q "/lib/libcachedep.so$" &&
		t_pass cache-build-closure ||
		t_fail cache-build-closure "the runtime loaded: $(echo $want); the cache has: $(echo $got)"
	# Current plans are not made again.
	run_rc cache-build-skips-current 0 "$xom" cache build "$cache/cacheprog" || return
	grep -q "^xom: 0 plans built .*; [0-9]* already current; start-ups: 0 listed, 1 unchanged$" "$tmp/err" &&
		t_pass cache-build-skips-current || t_fail cache-build-skips-current "$(cat "$tmp/err")"
	export XDG_RUNTIME_DIR=$tmp/run
	export XDG_CACHE_HOME=$tmp/cache
}

# A build keeps what the dynamic linker listed (the store's listings file)
# and lists again only a program whose files, RUNPATH folders or linker
# inputs changed; the sets it records are those of a fresh listing.
test_cache_build_listings() {
	local d=$tmp/lp st=$tmp/cl/xom
	export XDG_CACHE_HOME=$tmp/cl
	mkdir -p "$d" && cp -a "$cache/cacheprog" "$cache/lib" "$d/"
	starts() { grep -q "; start-ups: $1 listed, $2 unchanged$" "$tmp/err"; }
	run_rc listings-first 0 "$xom" cache build "$d/cacheprog" /bin/ls &&
		{ starts 2 0 && [ -s "$st/listings" ] && t_pass listings-first ||
			t_fail listings-first "$(cat "$tmp/err")"; }
	run_rc listings-current 0 "$xom" cache build "$d/cacheprog" /bin/ls &&
		{ starts 0 2 && t_pass listings-current || t_fail listings-current "$(cat "$tmp/err")"; }
	cp "$st/plans" "$tmp/index-memo"
	# The same sets as when everything is listed again.
	rm "$st/listings"
	run_rc listings-same-sets 0 "$xom" cache build "$d/cacheprog" /bin/ls &&
		{ starts 2 0 && cmp -s "$tmp/index-memo" "$st/plans" && t_pass listings-same-sets ||
			t_fail listings-same-sets "$(cat "$tmp/err"); index differs: $(cmp "$tmp/index-memo" "$st/plans" 2>&1)"; }
	# A library touched, a file new in the program's RUNPATH folder: that
	# program alone is listed again.
	touch -d '2001-01-01' "$d/lib/libcachedep.so"
	run_rc listings-lib-changed 0 "$xom" cache build "$d/cacheprog" /bin/ls &&
		{ starts 1 1 && t_pass listings-lib-changed || t_fail listings-lib-changed "$(cat "$tmp/err")"; }
	: >"$d/lib/new-file"
	run_rc listings-runpath-changed 0 "$xom" cache build "$d/cacheprog" /bin/ls &&
		{ starts 1 1 && t_pass listings-runpath-changed || t_fail listings-runpath-changed "$(cat "$tmp/err")"; }
	# A build of some programs keeps the others' listings while they are
	# there.
	"$xom" cache build /bin/ls >"$tmp/out" 2>"$tmp/err"
	local kept=$(grep -c "^P .* $d/cacheprog$" "$st/listings")
	mv "$d/cacheprog" "$d/moved"
	"$xom" cache build /bin/ls >"$tmp/out" 2>"$tmp/err"
	t_check listings-kept '[ "$kept" = 1 ] && ! grep -q "^P .* $d/cacheprog$" "$st/listings" && grep -q "^P .* /bin/ls$" "$st/listings"' \
		"kept $kept: $(grep "^P" "$st/listings" | tr '\n' '|')"
	mv "$d/moved" "$d/cacheprog"
	# A file that others may write is not believed.
	chmod 666 "$st/listings"
	run_rc listings-untrusted 0 "$xom" cache build "$d/cacheprog" /bin/ls &&
		{ starts 2 0 && [ "$(stat -c %a "$st/listings")" = 644 ] && t_pass listings-untrusted ||
			t_fail listings-untrusted "$(cat "$tmp/err")"; }
	export XDG_CACHE_HOME=$tmp/cache
}

# A build keeps what it learnt of each file (the store's facts file: its
# ELF kind, key and shape) and reads a file again only when its identity
# changed.  A fact made up on purpose (another build-id) shows which
# were used: while it is, the file's plan is not found, and is made again.
test_cache_build_facts() {
	local d=$tmp/fa st=$tmp/cf/xom
	export XDG_CACHE_HOME=$tmp/cf
	mkdir -p "$d" && cp "$cache/libcache1.so" "$cache/libcache2.so" "$d/"
	built() { grep -q "^xom: $1 plans\? built " "$tmp/err"; }
	fact() { awk -v p="$d/$1" '$NF == p' "$st/facts"; }
	# A file changed in the last seconds could change again unseen.
	run_rc facts-not-fresh 0 "$xom" cache build "$d/libcache1.so" &&
		{ ! built 0 && [ -s "$st/facts" ] && [ -z "$(fact libcache1.so)" ] && t_pass facts-not-fresh ||
			t_fail facts-not-fresh "$(cat "$tmp/err"); $(cat "$st/facts" 2>&1 | head -3)"; }
	sleep 3
	run_rc facts-kept 0 "$xom" cache build "$d/libcache1.so" &&
		{ built 0 && fact libcache1.so | grep -Eq ' [0-9a-f]{40} [0-9a-f]+ /' && t_pass facts-kept ||
			t_fail facts-kept "$(cat "$tmp/err"); $(fact libcache1.so)"; }
	forge() {
		awk -v p="$d/libcache1.so" '$NF == p { $9 = "abababababababababababababababababababab" } 1' \
			"$st/facts" >"$tmp/facts" && cat "$tmp/facts" >"$st/facts"
	}
	forge
	run_rc facts-used 0 "$xom" cache build "$d/libcache1.so" &&
		{ built 1 && t_pass facts-used || t_fail facts-used "$(cat "$tmp/err"); $(fact libcache1.so)"; }
	# Not believed: a file that others may write; a file whose identity
	# moved (a touch, a chmod that only the change time shows).
	forge && chmod 666 "$st/facts"
	run_rc facts-untrusted 0 "$xom" cache build "$d/libcache1.so" &&
		{ built 0 && [ "$(stat -c %a "$st/facts")" = 644 ] && t_pass facts-untrusted ||
			t_fail facts-untrusted "$(cat "$tmp/err"); $(stat -c %a "$st/facts")"; }
	forge && touch "$d/libcache1.so"
	run_rc facts-touched 0 "$xom" cache build "$d/libcache1.so" &&
		{ built 0 && t_pass facts-touched || t_fail facts-touched "$(cat "$tmp/err")"; }
	sleep 3
	"$xom" cache build "$d/libcache1.so" "$d/libcache2.so" >"$tmp/out" 2>"$tmp/err"
	forge && chmod u+s "$d/libcache1.so"
	run_rc facts-chmod 0 "$xom" cache build "$d/libcache1.so" &&
		{ built 0 && t_pass facts-chmod || t_fail facts-chmod "$(cat "$tmp/err")"; }
	# Other bytes in the same inode (and another build-id): read again,
	# so the plan found is the new content's, made a moment ago.
	sleep 3
	"$xom" cache build "$d/libcache1.so" >"$tmp/out" 2>"$tmp/err"
	fact libcache1.so >"$tmp/fact-before"
	cat "$d/libcache2.so" >"$d/libcache1.so"
	run_rc facts-content 0 "$xom" cache build "$d/libcache1.so" &&
		{ built 0 && [ -s "$tmp/fact-before" ] && t_pass facts-content ||
			t_fail facts-content "$(cat "$tmp/err"); before: $(cat "$tmp/fact-before")"; }
	export XDG_CACHE_HOME=$tmp/cache
}

test_cache_build_errors() {
	export XDG_CACHE_HOME=$tmp/ce
	run_rc cache-build-missing 2 "$xom" cache build "$tmp/no/such" &&
		has "$tmp/err" "$tmp/no/such: no such file" && t_pass cache-build-missing ||
		t_fail cache-build-missing "$(cat "$tmp/err")"
	printf 'not elf\n' >"$tmp/notelf"
	run_rc cache-build-notelf 1 "$xom" cache build "$tmp/notelf" &&
		has "$tmp/err" "$tmp/notelf: not an x86-64 ELF" && t_pass cache-build-notelf ||
		t_fail cache-build-notelf "$(cat "$tmp/err")"
	if [ -x "$B/tests/cmd/probe-static" ]; then
		# xom run protects it from outside with this plan: the next run
		# finds it and scans nothing, where a run before the build scans.
		XDG_CACHE_HOME=$tmp/ce-static XOM_OPTIONS=backend=none:verbose=1 \
			run_rc cache-build-static 0 "$xom" run -- "$B/tests/cmd/probe-static" exit 0 &&
			has "$tmp/err" "scanning it for the first time" &&
		run_rc cache-build-static 0 "$xom" cache build "$B/tests/cmd/probe-static" &&
			has "$tmp/err" " built (" && ! has "$tmp/err" "statically linked" &&
			XOM_OPTIONS=backend=none:verbose=1 run_rc cache-build-static 0 "$xom" run -- "$B/tests/cmd/probe-static" exit 0 &&
			! has "$tmp/err" "scanning" && has "$tmp/err" "would be made execute-only" &&
			t_pass cache-build-static || t_fail cache-build-static "$(cat "$tmp/err")"
	fi
	# A program that names an audit module: listing its libraries would
	# run the module, so they are left out, and it says so.
	rm -f "$cache/audit-ran"
	env -i LD_TRACE_LOADED_OBJECTS=1 /lib64/ld-linux-x86-64.so.2 "$cache/auditprog" >/dev/null 2>&1
	if [ ! -e "$cache/audit-ran" ]; then
		t_fail cache-build-audit "the test's audit module did not run under ldd"
	else
		rm -f "$cache/audit-ran"
		run_rc cache-build-audit 1 "$xom" cache build "$cache/auditprog" &&
			has "$tmp/err" "$cache/auditprog: names audit modules (DT_AUDIT)" &&
			[ ! -e "$cache/audit-ran" ] && plans_of | grep -q "current $cache/auditprog$" &&
			t_pass cache-build-audit ||
			t_fail cache-build-audit "$( [ -e "$cache/audit-ran" ] && echo 'the audit module ran: ')$(cat "$tmp/err")"
	fi
	# The same program with its PT_DYNAMIC header cut to one entry: the
	# dynamic linker reads the section in memory up to DT_NULL, and still
	# runs the module; so must the check read it.
	cp "$cache/auditprog" "$tmp/auditprog-hidden"
	python3 - "$tmp/auditprog-hidden" <<-'PY'
	import struct, sys
	f = open(sys.argv[1], "r+b"); b = f.read()
	phoff, = struct.unpack_from("<Q", b, 32); size, n = struct.unpack_from("<HH", b, 54)
	for i in range(n):
	    at = phoff + i * size
	    if struct.unpack_from("<I", b, at)[0] == 2:         # PT_DYNAMIC
	        f.seek(at + 32); f.write(struct.pack("<Q", 16))  # p_filesz: one entry
	PY
	rm -f "$cache/audit-ran"
	run_rc cache-build-audit-hidden 1 "$xom" cache build "$tmp/auditprog-hidden" &&
		has "$tmp/err" "names audit modules (DT_AUDIT)" && [ ! -e "$cache/audit-ran" ] &&
		t_pass cache-build-audit-hidden ||
		t_fail cache-build-audit-hidden "$( [ -e "$cache/audit-ran" ] && echo 'the audit module ran: ')$(cat "$tmp/err")"
	# A library whose path leads to a FIFO would hold the listing for ever:
	# it is given up after 10 s, and the program's own plan is still made.
	mkdir -p "$tmp/fifo"
	printf 'int f(void) { return 1; }\n' >"$tmp/fifo/l.c"
	printf 'int f(void); int main(void) { return f(); }\n' >"$tmp/fifo/m.c"
	gcc -shared -fPIC -o "$tmp/fifo/l.so" -Wl,-soname,"$tmp/fifo/dep.so" "$tmp/fifo/l.c" &&
		gcc -o "$tmp/fifo/prog" "$tmp/fifo/m.c" "$tmp/fifo/l.so" && mkfifo "$tmp/fifo/dep.so" ||
		{ t_fail cache-build-hang-gives-up "cannot build the test's program"; return; }
	run_rc cache-build-hang-gives-up 1 timeout 60 "$xom" cache build "$tmp/fifo/prog" &&
		has "$tmp/err" "$tmp/fifo/prog: the dynamic linker did not finish listing its libraries in 10 s" &&
		plans_of | grep -q "current $tmp/fifo/prog$" && t_pass cache-build-hang-gives-up ||
		t_fail cache-build-hang-gives-up "$(cat "$tmp/err")"
	# A file the scanner refuses is named, and the others are kept.
	cp "$cache/libcache1.so" "$tmp/trunc.so" && truncate -s 2000 "$tmp/trunc.so"
	run_rc cache-build-bad-file-named 1 "$xom" cache build "$tmp/trunc.so" "$cache/libcache2.so" || return
	grep -q "^xom: $tmp/trunc.so: " "$tmp/err" && grep -q "could not be analysed" "$tmp/err" &&
		plans_of | grep -q "current $cache/libcache2.so$" && t_pass cache-build-bad-file-named ||
		t_fail cache-build-bad-file-named "$(cat "$tmp/err")"
	# A cache that only others may write: exit 2, said.
	mkdir -p -m 755 "$tmp/cw/xom"
	XDG_CACHE_HOME=$tmp/cw run_rc cache-build-unwritable 2 "$xom" cache build "$cache/libcache3.so" &&
		has "$tmp/err" "cannot keep plans in $tmp/cw/xom" && t_pass cache-build-unwritable ||
		t_fail cache-build-unwritable "$(cat "$tmp/err")"
	export XDG_CACHE_HOME=$tmp/cache
}

# The progress line is drawn on a terminal only; a summary line either way.
test_cache_progress() {
	if ! command -v script >/dev/null; then
		t_skip cache-progress "no script(1) to give xom a terminal"
		return
	fi
	XDG_CACHE_HOME=$tmp/cp1 script -qec "$xom cache build $cache/cacheprog" /dev/null >"$tmp/tty" 2>&1
	if grep -q "$(printf '\r')" "$tmp/tty" && grep -Eq '\[#*\.*\] [0-9]+/[0-9]+ files, [0-9]+/[0-9]+ MB' "$tmp/tty" &&
		grep -q "plans built" "$tmp/tty"; then
		t_pass cache-progress-tty
	else
		t_fail cache-progress-tty "$(tr '\r' '|' <"$tmp/tty" | head -c 300)"
	fi
	XDG_CACHE_HOME=$tmp/cp2 run_rc cache-progress-pipe 0 "$xom" cache build "$cache/cacheprog" || return
	! grep -q "$(printf '\r')" "$tmp/err" && ! grep -q "files, " "$tmp/err" &&
		[ "$(wc -l <"$tmp/err")" = 1 ] && [ ! -s "$tmp/out" ] && t_pass cache-progress-pipe ||
		t_fail cache-progress-pipe "$(tr '\r' '|' <"$tmp/err")"
	XDG_CACHE_HOME=$tmp/cp3 script -qec "$xom cache build --quiet $cache/cacheprog" /dev/null >"$tmp/tty" 2>&1
	[ ! -s "$tmp/tty" ] && t_pass cache-progress-quiet ||
		t_fail cache-progress-quiet "$(tr '\r' '|' <"$tmp/tty")"
}

# stats counts what is stale; prune drops exactly that.
test_cache_stale() {
	local s=$tmp/st
	export XDG_CACHE_HOME=$tmp/cs XDG_RUNTIME_DIR=$tmp/cs-run
	mkdir -m 700 "$tmp/cs-run"
	mkdir -p "$s"
	cp "$cache"/libcache1.so "$cache"/libcache2.so "$cache"/libcache3.so "$cache"/libcachenoid.so "$s/"
	run_rc cache-stats-counts-stale 0 "$xom" cache build "$s"/*.so || return
	n0=$(plans_of | grep -c '^current ')
	rm "$s/libcache1.so"                            # gone
	cp "$s/libcache3.so" "$s/libcache2.so.new"      # another build at the path
	mv "$s/libcache2.so.new" "$s/libcache2.so"
	touch -d @1000000000 "$s/libcachenoid.so"       # keyed by identity: changed
	run_rc cache-stats-counts-stale 0 "$xom" cache stats || return
	sed -n '/^user store/,/^fallback/p' "$tmp/out" >"$tmp/user"
	grep -Eq "^  plans +$n0 " "$tmp/user" && grep -Eq '^  stale +3: 1 file gone, 2 changed$' "$tmp/user" &&
		grep -Eq '^  symbol files +[0-9]+ \([0-9.]+ MB\), 0 that no plan names, 0 missing$' "$tmp/user" &&
		t_pass cache-stats-counts-stale || { t_fail cache-stats-counts-stale "$(cat "$tmp/user")"; return; }
	"$xom" cache stats --json >"$tmp/json"
	grep '"store": "user"' "$tmp/json" | grep -q "\"plans\": $n0, .*\"stale\": 3, \"gone\": 1, \"changed\": 2," &&
		t_pass cache-stats-json-counts-stale || t_fail cache-stats-json-counts-stale "$(cat "$tmp/json")"
	plans_of >"$tmp/before"
	grep -q "^gone $s/libcache1.so$" "$tmp/before" && grep -q "^changed $s/libcache2.so$" "$tmp/before" &&
		grep -q "^changed $s/libcachenoid.so$" "$tmp/before" && grep -q "^current $s/libcache3.so$" "$tmp/before" &&
		t_pass cache-stats-list-states || t_fail cache-stats-list-states "$(cat "$tmp/before")"
	run_rc cache-prune-drops-stale 0 "$xom" cache prune || return
	has "$tmp/err" "$tmp/cs/xom: dropped 3 plans (1 file gone, 2 changed) and 3 symbol files" &&
		has "$tmp/err" "; $((n0 - 3)) plans kept" || { t_fail cache-prune-drops-stale "$(cat "$tmp/err")"; return; }
	plans_of >"$tmp/after"
	[ "$(grep -vc '^current ' "$tmp/after")" = 0 ] && [ "$(wc -l <"$tmp/after")" = $((n0 - 3)) ] &&
		grep -q "^current $s/libcache3.so$" "$tmp/after" &&
		[ "$(grep '^current ' "$tmp/before" | sort)" = "$(sort "$tmp/after")" ] ||
		{ t_fail cache-prune-drops-stale "left: $(cat "$tmp/after")"; return; }
	# Every symbol file left belongs to a plan left, and a second prune
	# has nothing to do.
	"$xom" cache stats | grep -Eq '^  symbol files +[0-9]+ .*, 0 that no plan names, 0 missing$' &&
		run_rc cache-prune-drops-stale 0 "$xom" cache prune && has "$tmp/err" "dropped 0 plans" &&
		t_pass cache-prune-drops-stale || t_fail cache-prune-drops-stale "second prune: $(cat "$tmp/err")"
	export XDG_RUNTIME_DIR=$tmp/run
	export XDG_CACHE_HOME=$tmp/cache
}

# A program's start-up keeps a set of its plans (formats/xom_plan.h).
# A new set keeps beside it the two most recent of those that start with
# the same plan (the same program with another batch, or a library
# changed since), and drops the older; prune drops a set with any plan
# that it drops, and keeps the others.
test_cache_prune_sets() {
	local i n1 n2
	export XDG_CACHE_HOME=$tmp/cps
	sets() { grep -ao XOMPSET1 "$tmp/cps/xom/plans" | wc -l; }
	for i in 1 2 3 4 5; do
		cp "$cache/libcachenoid.so" "$tmp/set$i.so"
	done
	XOM_OPTIONS=store=off:backend=none LD_PRELOAD="$B/libxom.so $tmp/set1.so" /bin/true
	for i in 2 3 4; do
		XOM_OPTIONS=store=off:backend=none LD_PRELOAD="$B/libxom.so $tmp/set$i.so" "$probe" exit 0
	done
	n1=$(sets)
	XOM_OPTIONS=store=off:backend=none LD_PRELOAD="$B/libxom.so $tmp/set5.so" "$probe" exit 0
	n2=$(sets)
	rm "$tmp/set1.so"
	"$xom" cache prune -q
	[ "$n1" = 4 ] && [ "$n2" = 4 ] && [ "$(sets)" = 3 ] &&
		XOM_OPTIONS=store=off:backend=none:verbose=1 LD_PRELOAD="$B/libxom.so $tmp/set4.so" \
			"$probe" exit 0 2>&1 >/dev/null | grep -q "set4.so: [0-9]* pages\{0,1\} execute-only" &&
		t_pass cache-prune-keeps-recent-sets || t_fail cache-prune-keeps-recent-sets "sets: $n1, $n2, then $(sets)"
	export XDG_CACHE_HOME=$tmp/cache
}

# Prune while programs run and scan into the same store: nothing kept is
# lost, and the index is never torn.
test_cache_prune_concurrent() {
	local i n=12 pruner
	export XDG_CACHE_HOME=$tmp/cpc
	"$xom" cache build -q "$cache/libcache3.so" || { t_fail cache-prune-concurrent-loses-nothing "build"; return; }
	# The runtime's helpers add plans, one program at a time, while prune
	# runs over and over: it rewrites the index each time, since each
	# program also adds the plan of a file that is deleted right after.
	# Every plan of a file still there must survive with its symbol file.
	(while [ ! -e "$tmp/cpc-done" ]; do "$xom" cache prune -q || echo "prune failed"; done) >"$tmp/pruner" 2>&1 &
	pruner=$!
	for i in $(seq $n); do
		cp "$cache/libcachenoid.so" "$tmp/keep$i.so"
		cp "$cache/libcachenoid.so" "$tmp/gone$i.so"
		XOM_OPTIONS=store=off:backend=none:verbose=1 LD_PRELOAD="$B/libxom.so $tmp/keep$i.so $tmp/gone$i.so" \
			"$probe" exit 0 >/dev/null 2>>"$tmp/cpc-err"
		rm "$tmp/gone$i.so"
	done
	touch "$tmp/cpc-done"
	wait $pruner
	"$xom" cache prune -q
	plans_of >"$tmp/out"
	"$xom" cache stats >"$tmp/stats"
	[ "$(grep -c "^current $tmp/keep[0-9]*.so$" "$tmp/out")" = $n ] &&
		grep -q "current $cache/libcache3.so$" "$tmp/out" && ! grep -vq "^current " "$tmp/out" &&
		grep -Eq '^  symbol files .*, 0 that no plan names, 0 missing$' "$tmp/stats" &&
		[ ! -s "$tmp/pruner" ] && ! grep -q "ignored" "$tmp/cpc-err" &&
		t_pass cache-prune-concurrent-loses-nothing ||
		t_fail cache-prune-concurrent-loses-nothing "$(grep -c keep "$tmp/out") of $n plans left; not current: $(grep -v "^current " "$tmp/out" | head -3); $(grep "symbol files" "$tmp/stats"); pruner: $(head -3 "$tmp/pruner"); runtime: $(grep ignored "$tmp/cpc-err" | head -2)"
	# Prune waits for the store's lock, which writers hold while they
	# write: with the lock taken, it has not finished half a second later.
	if command -v flock >/dev/null; then
		local holder p i=0
		rm "$tmp/keep1.so"
		flock "$tmp/cpc/xom/lock" sleep 2 &
		holder=$!
		while flock -n "$tmp/cpc/xom/lock" true && [ $i -lt 100 ]; do sleep 0.02; i=$((i + 1)); done
		"$xom" cache prune -q & p=$!
		sleep 0.5
		if kill -0 $p 2>/dev/null && plans_of | grep -q "^gone $tmp/keep1.so$"; then
			wait $holder; wait $p
			plans_of | grep -q "keep1.so" && t_fail cache-prune-waits-for-lock "not pruned after the lock was free" ||
				t_pass cache-prune-waits-for-lock
		else
			wait $holder; wait $p
			t_fail cache-prune-waits-for-lock "prune did not wait for the store's lock"
		fi
	else
		t_skip cache-prune-waits-for-lock "no flock(1)"
	fi
	export XDG_CACHE_HOME=$tmp/cache
}

# Twins: two files with one build-id and one shape whose bytes differ
# (perl and perl-base ship such pairs).  The store keeps one plan for both;
# a second build finds both current, where it once scanned one of them
# again each time, taking the plan from the other.
test_cache_twins() {
	local d=$tmp/tw
	export XDG_CACHE_HOME=$tmp/ctw
	mkdir -p "$d" && cp "$cache/lib/libcachedep.so" "$d/a.so" && cp "$d/a.so" "$d/b.so" &&
		printf 'twin' >>"$d/b.so"
	# Both, and what they need (libc, the dynamic linker, libxom.so).
	run_rc twins-first 0 "$xom" cache build "$d/a.so" "$d/b.so" || return
	local n=$(sed -n 's/^xom: \([0-9]*\) plans built .*; 0 already current;.*/\1/p' "$tmp/err")
	[ "${n:-0}" -ge 2 ] && t_pass twins-first || t_fail twins-first "$(cat "$tmp/err")"
	local i
	for i in 2 3; do
		run_rc twins-current-$i 0 "$xom" cache build "$d/a.so" "$d/b.so" || return
		grep -q "^xom: 0 plans built .*; $n already current;" "$tmp/err" &&
			t_pass twins-current-$i || t_fail twins-current-$i "build $i: $(cat "$tmp/err")"
	done
	# Twins whose code differs (one build-id, one shape): never current
	# by the other's plan, which the runtime would use without a check.
	local cc=${CC:-cc}
	printf 'int f(void) { return V; }\n' >"$d/v.c"
	if "$cc" -shared -fPIC -O1 -DV=1 -Wl,--build-id=0x1234567890abcdef -o "$d/c1.so" "$d/v.c" &&
		"$cc" -shared -fPIC -O1 -DV=2 -Wl,--build-id=0x1234567890abcdef -o "$d/c2.so" "$d/v.c" &&
		[ "$(readelf -lW "$d/c1.so" | grep LOAD)" = "$(readelf -lW "$d/c2.so" | grep LOAD)" ] &&
		! cmp -s "$d/c1.so" "$d/c2.so"; then
		"$xom" cache build -q "$d/c1.so" "$d/c2.so" 2>"$tmp/err"
		run_rc twins-other-code 0 "$xom" cache build "$d/c1.so" "$d/c2.so" &&
			{ grep -q "^xom: 1 plan built " "$tmp/err" && t_pass twins-other-code ||
				t_fail twins-other-code "the twin with other code was taken as current: $(cat "$tmp/err")"; }
	else
		t_fail twins-other-code "cannot make two libraries of one build-id and shape with $cc"
	fi
	# Alone, the twin whose plan the store does not hold gets its own.
	rm -rf "$tmp/ctw"
	"$xom" cache build -q "$d/a.so" 2>"$tmp/err"
	run_rc twins-alone 0 "$xom" cache build "$d/b.so" &&
		{ grep -q "^xom: 1 plan built " "$tmp/err" && t_pass twins-alone ||
			t_fail twins-alone "$(cat "$tmp/err")"; }
	export XDG_CACHE_HOME=$tmp/cache
}

for t in test_cache_usage test_cache_build_closure test_cache_build_listings test_cache_twins test_cache_build_facts test_cache_build_errors test_cache_progress test_cache_stale test_cache_prune_sets test_cache_prune_concurrent; do
	$t
done
t_summary
