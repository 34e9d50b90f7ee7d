# tests/cmd/native-lib.sh - what the parts of make check-cmd share (the
# tests/cmd/native-*.sh that tests/cmd/native.sh runs), and check-static
# (tests/cmd/native-static.sh) too: a scratch folder for each suite, with
# its own plan cache, and the helpers that run xom and wait on the
# programs it starts.  Sourced by each, after tests/lib.sh, from the top
# of the checkout (bash).
B=${B:-build}
xom=$B/xom probe=$B/tests/cmd/probe
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The plans that these runs make go here, not into the user's own cache.
export XDG_CACHE_HOME=$tmp/cache
# The fallback for plans too: /tmp/xom-UID is shared with every other run.
export XDG_RUNTIME_DIR=$tmp/run
mkdir -m 700 "$XDG_RUNTIME_DIR"

# run_rc NAME WANT_RC CMD...: runs CMD with output in $tmp/out and $tmp/err,
# and checks its exit status.  Returns 0 when it matched, else says FAIL.
run_rc() {
	local name=$1 want=$2 rc
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" != "$want" ]; then
		t_fail "$name" "exit status $rc, expected $want; stderr: $(head -c 300 "$tmp/err")"
		return 1
	fi
	return 0
}
# wait_for FILE TEXT: waits up to 10 s until FILE contains TEXT.
wait_for() {
	local i=0
	while ! has "$1" "$2" 2>/dev/null; do
		[ $i -ge 200 ] && return 1
		sleep 0.05
		i=$((i + 1))
	done
}
# started FILE: waits up to 10 s until "probe sleep" has written its
# process ID into FILE, and prints it.
started() {
	local i=0
	while [ ! -s "$1" ]; do
		[ $i -ge 200 ] && return 1
		sleep 0.05
		i=$((i + 1))
	done
	cat "$1"
}
# sleeper NAME: starts "xom run -- probe sleep 30" in the background, its
# stderr in $tmp/err, and sets xpid (xom) and pid (the probe).  Says FAIL
# NAME and returns 1 if the probe never starts.
sleeper() {
	rm -f "$tmp/pid"
	"$xom" run -- "$probe" sleep 30 >"$tmp/pid" 2>"$tmp/err" &
	xpid=$!
	pid=$(started "$tmp/pid") && return 0
	t_fail "$1" "the probe never started"
	kill -KILL "$xpid"
	return 1
}
# state PID: the process's state letter (R, S, T, Z...), or "gone".
state() {
	local s
	s=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) && echo "${s%% *}" || echo gone
}
# wait_state PID LETTERS: waits up to 10 s until state PID is one of LETTERS.
wait_state() {
	local i=0
	while ! case $(state "$1") in [$2]*) true ;; *) false ;; esac; do
		[ $i -ge 200 ] && return 1
		sleep 0.05
		i=$((i + 1))
	done
}
# finish PID: waits up to 10 s for the background job PID to end, kills it
# if it has not (a broken xom must fail the test, not hang it), and gives
# its exit status.
finish() {
	wait_state "$1" Zg || kill -KILL "$1" 2>/dev/null
	wait "$1"
}
# wait_comm PID NAME: waits up to 10 s until process PID runs NAME (its
# exec has happened).
wait_comm() {
	local i=0
	while [ "$(cat "/proc/$1/comm" 2>/dev/null)" != "$2" ] && [ $i -lt 200 ]; do
		sleep 0.05; i=$((i + 1))
	done
}
# The keys of loader/options.def, one "key=values" a line.
option_keys() {
	sed -n 's/^XOM_OPT(\([a-z_]*\), *[A-Z_]*, *[^,]*, *"\([^"]*\)".*/\1=\2/p' loader/options.def
}

# Whether this machine has keys (xom check's verdict).
pku=0
"$xom" check >/dev/null 2>&1 && pku=1

# The cache test's programs and libraries (tests/cmd/cmd-tests.mk).
cache=$(realpath "$B/tests/cmd/cache")
# objects_of FILE: the real paths of the objects that the runtime's verbose
# lines in FILE name ("xom: PATH: N pages execute-only..."), sorted.
objects_of() {
	sed -n 's/^xom: \(.*\): [0-9]* pages* execute-only.*/\1/p' "$1" |
		while IFS= read -r p; do realpath "$p"; done | sort -u
}
# plans_of [STATS OPTIONS]: "STATE PATH" of every plan, sorted by path.
plans_of() { "$xom" cache stats --list "$@" | cut -d' ' -f2- | sort -k2; }
# A folder that the runtime trusts as a system store's parent: root's, and
# nobody else can write to it or anything above it (not /tmp).
trusted_dir() {
	local d base
	[ "$(id -u)" = 0 ] || return 1
	for base in /run /var/cache /var/tmp; do
		d=$(mktemp -d "$base/xom-test.XXXXXX" 2>/dev/null) || continue
		if "$xom" cache stats --store "$d" >/dev/null 2>&1 && trusted_path "$d"; then
			echo "$d"
			return 0
		fi
		rmdir "$d"
	done
	return 1
}
# shared_store NAME: sets r to a folder made by trusted_dir, for a store
# that the runtime shares; where there can be none (the build lies under
# a folder others can write, or no root), says SKIP NAME and returns 1.
shared_store() {
	if ! root_alone "$B"; then
		t_skip "$1" "the build ($B) lies under a folder others can write, whose files a shared store does not take"
		return 1
	fi
	if ! r=$(trusted_dir); then
		t_skip "$1" "needs root and a root-owned folder (/run, /var/cache) for a trusted store"
		return 1
	fi
}
# trusted_path DIR: DIR and every folder above it are root's, mode g-w,o-w.
trusted_path() {
	local p=$1
	while :; do
		[ "$(stat -c %u "$p")" = 0 ] && [ $(( 0$(stat -c %a "$p") & 022 )) = 0 ] || return 1
		[ "$p" = / ] && return 0
		p=$(dirname "$p")
	done
}
