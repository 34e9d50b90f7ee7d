#!/bin/bash
# tests/cmd/native-store.sh - The shared plan stores (xom cache --system
# and --store): root's alone, trusted only where nobody else can write,
# read before the user's cache, and never taking a forged plan for libc.
# Part of make check-cmd (tests/cmd/native.sh runs every part); it runs on
# any machine, and a check that needs protection keys skips with the
# reason.
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/cmd/native-lib.sh

# The system store is root's: as anyone else, --system and --store refuse.
test_cache_system_root() {
	local nobody
	if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
		run_rc cache-system-needs-root 2 "$xom" cache build --system && has "$tmp/err" "run this as root" &&
			t_pass cache-system-needs-root || t_fail cache-system-needs-root "$(cat "$tmp/err")"
		return
	fi
	nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
	if ! $nobody "$xom" --version >/dev/null 2>&1; then
		t_skip cache-system-needs-root "user 65534 cannot run $xom (a folder above it is private)"
		return
	fi
	for args in "build --system" "build --store $tmp/s $probe" "prune --system"; do
		# shellcheck disable=SC2086
		HOME=$tmp XDG_CACHE_HOME= run_rc "cache-system-needs-root[$args]" 2 $nobody "$xom" cache $args || return
		has "$tmp/err" "must be root's: run this as root" ||
			{ t_fail cache-system-needs-root "$args: $(cat "$tmp/err")"; return; }
	done
	[ ! -e "$tmp/s" ] && t_pass cache-system-needs-root || t_fail cache-system-needs-root "$tmp/s was made"
}

# --system's walk: every dynamically linked x86-64 object of the system
# folders, each once, and nothing static, relocatable or of debug files.
test_cache_system_walk() {
	local st
	XOM_OPTIONS=store=$tmp/never run_rc cache-system-walk-lists-dynamic-objects 0 "$xom" cache build --system --dry-run || return
	sort "$tmp/out" >"$tmp/walk"
	[ -z "$(uniq -d "$tmp/walk")" ] || { t_fail cache-system-walk-lists-dynamic-objects "listed twice: $(uniq -d "$tmp/walk" | head -3)"; return; }
	for f in /usr/bin/ls "$(realpath /lib/x86_64-linux-gnu/libc.so.6)" "$(realpath /lib64/ld-linux-x86-64.so.2)"; do
		grep -qx "$f" "$tmp/walk" || { t_fail cache-system-walk-lists-dynamic-objects "$f not listed"; return; }
	done
	grep -qE '\.o$|^/usr/lib/debug/|^/bin/|^/lib/' "$tmp/walk" &&
		{ t_fail cache-system-walk-lists-dynamic-objects "$(grep -E '\.o$|^/usr/lib/debug/|^/bin/|^/lib/' "$tmp/walk" | head -3)"; return; }
	# A static program of the system, if there is one (ldconfig, static-pie
	# on Debian 12), is not listed.
	st=$(file -L /sbin/ldconfig 2>/dev/null | grep -q 'static' && realpath /sbin/ldconfig)
	[ -z "$st" ] || ! grep -qx "$st" "$tmp/walk" ||
		{ t_fail cache-system-walk-lists-dynamic-objects "static $st listed"; return; }
	while IFS= read -r f; do
		case $(od -An -c -N4 "$f" | tr -d ' ') in
		177ELF) ;;
		*) t_fail cache-system-walk-lists-dynamic-objects "$f is not ELF"; return ;;
		esac
	done < <(head -n 200 "$tmp/walk")
	grep -q "^xom: $(wc -l <"$tmp/walk") files to scan (.* MB) into $tmp/never; 0 already current$" "$tmp/err" &&
		[ ! -e "$tmp/never" ] && t_pass cache-system-walk-lists-dynamic-objects || t_fail cache-system-walk-lists-dynamic-objects "$(cat "$tmp/err")"
}

# A system-style store that the runtime will not trust is said before the
# build, not after minutes of it.
test_cache_store_warned_first() {
	[ "$(id -u)" = 0 ] || { t_skip cache-store-warned-first "needs root (a store of another user's)"; return; }
	local st=$tmp/ust/store
	mkdir -p -m 755 "$tmp/ust" && chown nobody "$tmp/ust"
	"$xom" cache build --store "$st" "$probe" >"$tmp/out" 2>"$tmp/err"
	head -n 1 "$tmp/err" | grep -q "^xom: the runtime will not read $st as its system store: $tmp/ust belongs to uid [0-9]*, not root$" &&
		[ "$(grep -c "will not read" "$tmp/err")" = 1 ] && grep -q "^xom: [1-9][0-9]* plans\{0,1\} built" "$tmp/err" &&
		t_pass cache-store-warned-first || t_fail cache-store-warned-first "$(tr '\n' '|' <"$tmp/err")"
}

# A root-owned store: written with modes every user can read, whatever the
# umask; read by the runtime with no helper run; ignored when a folder above
# it is group-writable, silently unless verbose.
test_cache_system_store() {
	local r
	shared_store cache-system-store || return
	mkdir -m 755 "$r/p"
	(umask 077; "$xom" cache build -q --store "$r/p/store" "$cache/cacheprog") ||
		{ t_fail cache-system-store "build: exit $?"; rm -rf "$r"; return; }
	if [ "$(stat -c %a "$r/p/store")" = 755 ] && [ "$(stat -c %a "$r/p/store/syms")" = 755 ] &&
		[ "$(stat -c %a "$r/p/store/plans")" = 644 ] &&
		[ -z "$(find "$r/p/store/syms" -type f ! -perm 644)" ]; then
		t_pass cache-system-store-modes
	else
		t_fail cache-system-store-modes "$(ls -lR "$r/p/store" | head -8)"
	fi
	XDG_CACHE_HOME=$tmp/sys-user XOM_OPTIONS=store=$r/p/store:backend=none:verbose=1 \
		LD_PRELOAD=$B/libxom.so "$cache/cacheprog" >"$tmp/out" 2>"$tmp/err"
	[ "$(cat "$tmp/out")" = "cache value 7" ] && ! has "$tmp/err" scanning && ! has "$tmp/err" ignored &&
		[ ! -e "$tmp/sys-user/xom/plans" ] && grep -q "libcachedep.so: [0-9]* pages* execute-only" "$tmp/err" &&
		t_pass cache-system-store-read || t_fail cache-system-store-read "$(cat "$tmp/err")"
	# The build keeps a set of plans for each program's start-up, which its
	# next run reads at once: with every plan alone damaged, nothing is
	# scanned and each object is still protected (from the set's copies).
	(umask 077; "$xom" cache build -q --store "$r/p/sets" "$cache/cacheprog" /bin/true) ||
		{ t_fail cache-system-store-sets "build: exit $?"; rm -rf "$r"; return; }
	for f in cacheprog libcachedep.so libc.so.6 libxom.so; do
		"$B/tests/runtime/xomtest" damage "$r/p/sets/plans" alone "$f" >/dev/null
	done
	XDG_CACHE_HOME=$tmp/sys-sets XOM_OPTIONS=store=$r/p/sets:backend=none:verbose=1 \
		LD_PRELOAD=$B/libxom.so "$cache/cacheprog" >"$tmp/out" 2>"$tmp/err"
	[ "$(grep -ao XOMPSET1 "$r/p/sets/plans" | wc -l)" = 2 ] &&
		[ "$(cat "$tmp/out")" = "cache value 7" ] && ! has "$tmp/err" scanning &&
		grep -q "libcachedep.so: [0-9]* pages* execute-only" "$tmp/err" &&
		grep -q "cacheprog: [0-9]* pages* execute-only" "$tmp/err" &&
		t_pass cache-system-store-sets || t_fail cache-system-store-sets "$(grep -ao XOMPSET1 "$r/p/sets/plans" | wc -l) sets: $(cat "$tmp/err")"
	# A user's build makes the set as the runtime makes the batch: without
	# the objects its options exclude (here XOM_OPTIONS), whose keys the
	# batch leaves out.  With the other plans alone damaged, a run with the
	# same options finds the set and scans nothing.
	XDG_CACHE_HOME=$tmp/sets-ex XOM_OPTIONS='exclude=libcachedep.so*' \
		"$xom" cache build -q "$cache/cacheprog" ||
		{ t_fail cache-sets-exclude "build: exit $?"; rm -rf "$r"; return; }
	for f in cacheprog libc.so.6 libxom.so; do
		"$B/tests/runtime/xomtest" damage "$tmp/sets-ex/xom/plans" alone "$f" >/dev/null
	done
	XDG_CACHE_HOME=$tmp/sets-ex XOM_OPTIONS='store=off:backend=none:verbose=1:exclude=libcachedep.so*' \
		LD_PRELOAD=$B/libxom.so "$cache/cacheprog" >"$tmp/out" 2>"$tmp/err"
	[ "$(cat "$tmp/out")" = "cache value 7" ] && ! has "$tmp/err" scanning &&
		grep -q "cacheprog: [0-9]* pages* execute-only" "$tmp/err" &&
		has "$tmp/err" "libcachedep.so: excluded" &&
		t_pass cache-sets-exclude || t_fail cache-sets-exclude "$(cat "$tmp/err")"
	# The system store comes first, also for a batch that has a set of its
	# plans in the user's cache: with every plan there, the set's copies too,
	# made to disagree with its file, each object still gets the system's.
	XDG_CACHE_HOME=$tmp/sys-set XOM_OPTIONS=store=off:backend=none \
		LD_PRELOAD=$B/libxom.so "$cache/cacheprog" >/dev/null 2>&1
	"$B/tests/runtime/xomtest" tamper "$tmp/sys-set/xom/plans" >/dev/null
	XDG_CACHE_HOME=$tmp/sys-set XOM_OPTIONS=store=$r/p/store:backend=none:verbose=1 \
		LD_PRELOAD=$B/libxom.so "$cache/cacheprog" >"$tmp/out" 2>"$tmp/err"
	[ "$(cat "$tmp/out")" = "cache value 7" ] && ! has "$tmp/err" "differ" &&
		[ "$(grep -ao XOMPSET1 "$tmp/sys-set/xom/plans" | wc -l)" = 1 ] &&
		grep -q "libcachedep.so: [0-9]* pages* execute-only" "$tmp/err" &&
		t_pass cache-system-store-first || t_fail cache-system-store-first "$(cat "$tmp/err")"
	chmod 775 "$r/p"
	XDG_CACHE_HOME=$tmp/sys-user2 XOM_OPTIONS=store=$r/p/store:backend=none:verbose=1 \
		LD_PRELOAD=$B/libxom.so "$cache/cacheprog" >"$tmp/out" 2>"$tmp/err"
	has "$tmp/err" "plan store $r/p/store/plans ignored: its directories are not root's alone" &&
		has "$tmp/err" "scanning" && t_pass cache-system-store-untrusted ||
		t_fail cache-system-store-untrusted "$(cat "$tmp/err")"
	XDG_CACHE_HOME=$tmp/sys-user3 XOM_OPTIONS=store=$r/p/store:backend=none \
		LD_PRELOAD=$B/libxom.so "$cache/cacheprog" >"$tmp/out" 2>"$tmp/err"
	[ ! -s "$tmp/err" ] && t_pass cache-system-store-quiet || t_fail cache-system-store-quiet "$(cat "$tmp/err")"
	"$xom" cache stats --store "$r/p/store" >"$tmp/out"
	has "$tmp/out" "ignored       $r/p is writable by its group (mode 0775)" &&
		t_pass cache-system-store-stats || t_fail cache-system-store-stats "$(cat "$tmp/out")"
	chmod 1777 "$r/p"
	"$xom" cache stats --store "$r/p/store" >"$tmp/out"
	has "$tmp/out" "ignored       $r/p is writable by everyone (mode 1777)" &&
		t_pass cache-system-store-stats-everyone ||
		t_fail cache-system-store-stats-everyone "$(cat "$tmp/out")"
	chmod 755 "$r/p"
	# prune --store: as root, the store's own kind.
	run_rc cache-system-store-prune 0 "$xom" cache prune --store "$r/p/store" &&
		has "$tmp/err" "dropped 0 plans" && t_pass cache-system-store-prune ||
		t_fail cache-system-store-prune "$(cat "$tmp/err")"
	rm -rf "$r"
}

# A copy of libc that claims libc's build-id, with the same program
# headers (no section headers: the scanner leaves most of its pages
# readable) or with DF_TEXTREL set.  The runtime cannot tell the first from
# libc by what is mapped (formats/xom_plan.h), so the stores must: a
# build counts a plan as current for libc only when it fits libc's own
# bytes, and then libc's plan replaces the copy's; and a shared store takes
# no plan by build-id from a file that someone other than root could have
# put there.  Each time libc must end up planned as from itself.
test_cache_forged() {
	local r libc want forge=$B/tests/runtime/xomtest
	libc_pages() { sed -n 's/^xom: .*\/libc\.so\.6: \([0-9]*\) pages\{0,1\} execute-only.*/\1/p' "$tmp/err" | sort -u; }
	run_true() { # run_true CACHE STORE: /bin/true planned, nothing applied
		XDG_CACHE_HOME=$1 XOM_OPTIONS=store=$2:backend=none:verbose=1 LD_PRELOAD=$B/libxom.so \
			/bin/true >"$tmp/out" 2>"$tmp/err"
	}
	run_true "$tmp/fg-genuine" off
	libc=$(sed -n 's/^xom: \(\/.*\/libc\.so\.6\): [0-9]* pages.*/\1/p' "$tmp/err")
	want=$(libc_pages)
	if [ -z "$libc" ] || [ -z "$want" ] || [ "$want" -lt 100 ]; then
		t_fail cache-forged "no plan of libc to compare with: $(cat "$tmp/err")"
		return
	fi
	"$forge" forge noshdr "$libc" "$tmp/fg-copy.so" >/dev/null
	# The user's own cache: the copy first, then the program.
	XDG_CACHE_HOME=$tmp/fg-user "$xom" cache build -q "$tmp/fg-copy.so"
	XDG_CACHE_HOME=$tmp/fg-user "$xom" cache build -n /bin/true >"$tmp/out" 2>"$tmp/err"
	grep -qx "$(realpath "$libc")" "$tmp/out" && t_pass cache-forged-not-current ||
		t_fail cache-forged-not-current "libc ($libc) not to be scanned: $(cat "$tmp/out" "$tmp/err")"
	XDG_CACHE_HOME=$tmp/fg-user "$xom" cache build -q /bin/true
	run_true "$tmp/fg-user" off
	[ "$(libc_pages)" = "$want" ] && ! has "$tmp/err" scanning && t_pass cache-forged-replaced ||
		t_fail cache-forged-replaced "want $want pages of libc: $(cat "$tmp/err")"
	shared_store cache-forged-shared || return
	mkdir -m 755 "$r/p" "$r/p/copy"
	"$forge" forge noshdr "$libc" "$r/p/copy/libc.so.6" >/dev/null
	"$forge" forge textrel "$libc" "$tmp/fg-textrel.so" >/dev/null
	# From a folder that others can write: left out, said.
	"$xom" cache build -q --store "$r/p/s" "$tmp/fg-textrel.so" >"$tmp/out" 2>"$tmp/err"
	has "$tmp/err" "$tmp/fg-textrel.so: left out of the shared store: it or a folder above it is not root's alone" &&
		! grep -aq "fg-textrel.so" "$r/p/s/plans" 2>/dev/null && t_pass cache-forged-shared-left-out ||
		t_fail cache-forged-shared-left-out "stderr: $(cat "$tmp/err"); its plans in the store: $(grep -ac fg-textrel.so "$r/p/s/plans" 2>&1)"
	# Root's own copy goes in, and libc's own plan then replaces it.
	"$xom" cache build -q --store "$r/p/s" "$r/p/copy/libc.so.6"
	"$xom" cache build -n --store "$r/p/s" /bin/true >"$tmp/out" 2>"$tmp/err"
	local listed=$(grep -cx "$(realpath "$libc")" "$tmp/out")
	"$xom" cache build -q --store "$r/p/s" /bin/true
	run_true "$tmp/fg-shared" "$r/p/s"
	[ "$listed" = 1 ] && [ "$(libc_pages)" = "$want" ] && ! has "$tmp/err" scanning &&
		[ ! -e "$tmp/fg-shared/xom/plans" ] && t_pass cache-forged-shared ||
		t_fail cache-forged-shared "libc listed to scan: $listed; want $want pages: $(cat "$tmp/err")"
	rm -rf "$r"
}

# The runtime's default system store is /var/cache/xom, and xom cache
# stats lists exactly the runtime's stores in its order.
test_cache_stores() {
	XDG_CACHE_HOME=$tmp/u XDG_RUNTIME_DIR=$tmp/rr run_rc cache-stats-lists-runtime-stores 0 "$xom" cache stats || return
	[ "$(grep -c ' store  ' "$tmp/out")" = 3 ] &&
		sed -n 1p "$tmp/out" | grep -qx "system store  /var/cache/xom" &&
		grep -qx "user store  $tmp/u/xom" "$tmp/out" && grep -qx "fallback store  $tmp/rr/xom" "$tmp/out" ||
		{ t_fail cache-stats-lists-runtime-stores "$(cat "$tmp/out")"; return; }
	XDG_CACHE_HOME=$tmp/u XOM_OPTIONS=store=off:cache=off run_rc cache-stats-lists-runtime-stores 0 "$xom" cache stats &&
		grep -q "^system store  (none)" "$tmp/out" && grep -q "^user store  (none)" "$tmp/out" &&
		t_pass cache-stats-lists-runtime-stores || t_fail cache-stats-lists-runtime-stores "off: $(cat "$tmp/out")"
	"$xom" check | grep -Eq '^  store +default +/var/cache/xom$' && t_pass check-store-default ||
		t_fail check-store-default "$("$xom" check | grep store)"
}

for t in test_cache_system_root test_cache_system_walk test_cache_store_warned_first test_cache_system_store test_cache_forged test_cache_stores; do
	$t
done
t_summary
