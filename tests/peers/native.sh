#!/bin/sh
# The differential run of peers' own test suites (make check-peers): Python's
# regression tests (tests/peers/python.list) and GLib's installed tests
# (tests/peers/glib.list) run three times on this machine: without xom,
# through the preload door (LD_PRELOAD=libxom.so) and through the audit door
# (LD_AUDIT=libxom-audit.so), with XOM_OPTIONS=backend=none (every object
# planned, nothing applied: this needs no protection keys).  xom must be
# invisible to its host, so every case must end the same way in all three
# runs; tests/peers/results.py compares them case by case.
#
# One result line per test program (a regrtest module, a GLib program):
#   PASS python test_mmap: 44 cases alike in all three runs (36 ran, 8 skipped)
#   FAIL python test_ctypes: ... cases differ (plain / preload / audit): NAME (ok / error / ok); ...
#   SKIP python test_x: skipped whole in all three runs: REASON
# and lines that prove each door really was in the processes (a canary run
# the same way, which must find the door's library in its own mappings and
# in its child's, and the runtime's totals line), and that no "xom:" line
# reached the output of any test.
#
# Usage: tests/peers/native.sh [python|glib]...   (default: both)
# PEERS_ONLY="test_mmap test_ctypes" tests/peers/native.sh python runs only
# those programs of the suite named.
# PEERS_PYTHON (default /usr/bin/python3) is the interpreter whose tests run.
# PEERS_JOBS (default 8) runs that many test programs at once: most of
# these tests wait on timers and children, not on the CPU.  The work files
# stay in $B/tests/peers/work for a look after a failure.
R=$(cd "$(dirname "$0")/../.." && pwd)
SELF=$R/tests/peers/native.sh
B=${B:-build}
case $B in /*) ;; *) B=$R/$B ;; esac
P=$B/libxom.so A=$B/libxom-audit.so
# The work files: a folder named work, which the guest archive leaves out.
W=$B/tests/peers/work
PY=${PEERS_PYTHON:-/usr/bin/python3}
GLIB_TESTS=/usr/share/installed-tests/glib
RUNS="plain preload audit"
# What every run gets in XOM_OPTIONS (the canary adds verbose=2 for once).
xom_opts=backend=none

# in_door RUN [VAR=VALUE]... CMD [ARG]...: CMD in a clean environment, the
# same for every run but for the door.  The environment is made from
# nothing, so that the caller's (PYTHONUNBUFFERED, a virtual environment,
# a preload of its own) cannot change what the tests decide.  The plan
# cache is this suite's own.
in_door() {
	d=$1
	shift
	set -- PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$W/$d/home" \
		TMPDIR="$W/$d/tmp" LANG=C.UTF-8 TERM=xterm \
		XDG_CACHE_HOME="$W/cache" XOM_OPTIONS="$xom_opts" "$@"
	case $d in
	preload) set -- LD_PRELOAD="$P" "$@" ;;
	audit) set -- LD_AUDIT="$A" "$@" ;;
	esac
	env -i "$@"
}

# job python|glib RUN NAME: one test program in one run, its outcome in
# $W/SUITE/RUN/NAME.res (tests/peers/results.py's plain form).
job() {
	o=$W/$1/$2
	case $1 in
	python)
		# A module that this Python no longer has (3.13 dropped
		# _xxsubinterpreters and spwd) is reported, not run.
		if ! "$PY" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("test." + sys.argv[1]) is None)' "$3" 2>/dev/null; then
			printf '*\tskipped: this Python (%s) has no test.%s\n' "$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" "$3" >"$o/$3.res"
			return
		fi
		# One regrtest run per module: each has its own exit status and
		# output, and a crash names its module.  -v shows which case was
		# running when a run died.  regrtest's own timeout dumps the
		# stacks first; timeout(1) is the backstop.
		(cd "$W/$2/tmp" && timeout -k 10 360 "$SELF" in_door "$2" "$PY" -m test \
			--timeout 300 -v -u curses --junit-xml "$o/$3.xml" "$3") \
			>"$o/$3.log" 2>&1 </dev/null
		rc=$?
		"$PY" "$R/tests/peers/results.py" regrtest "$3" "$rc" "$o/$3.log" "$o/$3.xml" >"$o/$3.res"
		;;
	glib)
		# The program named by the test's own .test file, with the
		# folders GLib's test framework reads its data from.
		if [ ! -r "$GLIB_TESTS/$3.test" ]; then
			printf '*\tskipped: this GLib has no such test (%s)\n' "$GLIB_TESTS/$3.test" >"$o/$3.res"
			return
		fi
		exe=$(sed -n 's/^Exec=//p' "$GLIB_TESTS/$3.test")
		# shellcheck disable=SC2086
		(cd "$W/$2/tmp" && timeout -k 10 300 "$SELF" in_door "$2" \
			G_TEST_SRCDIR="${exe%/*}" G_TEST_BUILDDIR="${exe%/*}" $exe --tap) \
			>"$o/$3.tap" 2>"$o/$3.err" </dev/null
		rc=$?
		"$PY" "$R/tests/peers/results.py" tap "$3" "$rc" "$o/$3.tap" >"$o/$3.res"
		;;
	esac
}

# The entry points that xargs and timeout(1) call back into.
case ${1:-} in
--job) shift; job "$@"; exit ;;
in_door) shift; in_door "$@"; exit ;;
esac

. "$R/tests/lib.sh"

# The programs of a suite: its list, or PEERS_ONLY (names separated by
# spaces) to run a few again after a failure.
names() {
	if [ -n "${PEERS_ONLY:-}" ]; then
		printf '%s\n' $PEERS_ONLY
	else
		sed 's/#.*//' "$R/tests/peers/$1.list" | awk 'NF { print $1 }'
	fi
}

# canary RUN: a Python run the same way as the tests, which lists the xom
# libraries mapped into itself and into a child it starts (regrtest's
# tests start children the same way), then `cat /proc/self/maps` for a
# C program, then the runtime's own totals line with verbose=2.
canary() {
	d=$1
	case $d in
	plain) want=none ;;
	preload) want=libxom.so ;;
	audit) want=libxom-audit.so ;;
	esac
	code='import os, re, subprocess, sys
with open("/proc/self/maps") as f:
    mine = " ".join(sorted(set(re.findall(r"/(libxom[-\w]*\.so)$", f.read(), re.M)))) or "none"
if sys.argv[1:] == ["child"]:
    print(mine)
else:
    child = subprocess.run([sys.executable, "-c", os.environ["CANARY"], "child"],
                           capture_output=True, text=True)
    print(mine, child.stdout.strip())'
	got=$(in_door "$d" CANARY="$code" "$PY" -c "$code" 2>&1)
	maps=$(in_door "$d" cat /proc/self/maps 2>&1 | grep -o 'libxom[-a-z]*\.so$' | sort -u | tr '\n' ' ')
	maps=${maps% }
	t_check "canary $d: $want in python, its child and cat" \
		'[ "$got" = "$want $want" ] && [ "${maps:-none}" = "$want" ]' \
		"python and its child have: $got; cat has: ${maps:-none}"
	[ "$d" = plain ] && return
	xom_opts=backend=none:verbose=2
	said=$(in_door "$d" "$PY" -c pass 2>&1)
	xom_opts=backend=none
	t_check "canary $d: the runtime planned python's objects" \
		'printf "%s\n" "$said" | grep -Eq "^xom: [0-9]+ objects protected: [0-9]+ pages execute-only"' \
		"verbose=2 said: $(printf '%s' "$said" | tail -n 3)"
}

# leaks SUITE RUN: no "xom:" line in anything the tests printed; with
# backend=none the runtime has nothing to say.
leaks() {
	f=$(grep -lE '(^|>|&#10;)xom: ' "$W/$1/$2"/* 2>/dev/null | head -n 3)
	t_check "$1 $2: no xom: line in the tests' output" '[ -z "$f" ]' \
		"in $(echo $f): $(grep -hE '(^|>|&#10;)xom: ' $f | head -n 3 | cut -c1-200)"
}

# suite SUITE: every test program of SUITE in all three runs, PEERS_JOBS
# at a time, the three runs of a program side by side; then the verdicts.
suite() {
	s=$1
	for d in $RUNS; do
		mkdir -p "$W/$s/$d" "$W/$d/home" "$W/$d/tmp"
	done
	for n in $(names "$s"); do
		for d in $RUNS; do echo "$s $d $n"; done
	done | xargs -P "${PEERS_JOBS:-8}" -L 1 "$SELF" --job
	# A program whose results were never written is a failure, not a
	# program left out of the comparison.
	for n in $(names "$s"); do
		for d in $RUNS; do
			[ -s "$W/$s/$d/$n.res" ] || t_fail "$s $n" "no results from the $d run"
		done
	done
	"$PY" "$R/tests/peers/results.py" compare "$W/$s/plain" "$W/$s/preload" "$W/$s/audit" >"$W/$s/verdicts"
	while read -r verdict line; do
		case $verdict in
		pass) t_pass "$s $line" ;;
		skip) t_skip "$s ${line%%: *}" "${line#*: }" ;;
		fail) t_fail "$s ${line%%: *}" "${line#*: }" ;;
		total) echo "# $s: $line" ;;
		esac
	done <"$W/$s/verdicts"
	for d in preload audit; do leaks "$s" "$d"; done
}

start=$(date +%s)
rm -rf "$W"
mkdir -p "$W/cache"
for d in $RUNS; do mkdir -p "$W/$d/home" "$W/$d/tmp"; done
if [ ! -r "$P" ] || [ ! -r "$A" ]; then
	t_fail setup "$P or $A is missing: run make"
	t_summary
	exit 1
fi
for d in $RUNS; do canary "$d"; done

for s in ${*:-python glib}; do
	case $s in
	python)
		v=$("$PY" -c 'import sys, test.libregrtest, os.path; print("%d.%d %s" % (sys.version_info[:2] + (os.path.dirname(test.__file__),)))' 2>&1)
		if [ $? != 0 ]; then
			t_fail "python regrtest" "$PY has no regression tests (tests/deps.sh peers installs them): $v"
			continue
		fi
		echo "# python: $PY is Python ${v%% *}, its tests are in ${v#* }"
		;;
	glib)
		if [ ! -d "$GLIB_TESTS" ]; then
			t_fail "glib tests" "no $GLIB_TESTS (tests/deps.sh peers installs libglib2.0-tests)"
			continue
		fi
		;;
	*) echo "usage: tests/peers/native.sh [python|glib]..." >&2; exit 64 ;;
	esac
	t0=$(date +%s)
	suite "$s"
	echo "# $s: three runs in $(( $(date +%s) - t0 )) s"
done
echo "# check-peers: $(( $(date +%s) - start )) s in all, ${PEERS_JOBS:-8} programs at a time"
t_summary
