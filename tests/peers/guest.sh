#!/bin/sh
# The differential run of Python's own regression tests under enforcement,
# in the emulated-PKU guest's corpus boot (tests/vm/corpus.list): the part of
# tests/peers/native.sh that matters most to the doors, the dynamic linker
# (ctypes, extension modules), signals (and faulthandler's SIGSEGV handler
# beside xom's), threads and children.  Each module runs without xom, then
# through LD_PRELOAD=libxom.so and LD_AUDIT=libxom-audit.so with real
# protection keys, and every case must end the same way in all three runs
# (tests/peers/results.py compares them).  Under TCG a Python start takes
# about a second, so each module runs only the classes and cases named in
# tests/peers/guest.list, and each line of that list is one program of the
# guest list, within its 120 s.
#
# Usage: tests/peers/guest.sh canary      the doors protect code in a run
#                                         made the same way as the tests
#        tests/peers/guest.sh MODULE      that module's line of guest.list
# The plan cache is the corpus's (tests/corpus/vm-corpus.sh warm fills it
# with the host's plans), so nothing is scanned here.
R=$(cd "$(dirname "$0")/../.." && pwd)
B=$R/build
. "$R/tests/lib.sh"
P=$B/libxom.so A=$B/libxom-audit.so
C=/tmp/xom-corpus W=/tmp/xom-corpus/peers
RUNS="plain preload audit"
PY=
for p in /usr/bin/python3 /usr/bin/python3.[0-9]*; do
	[ -x "$p" ] && { PY=$p; break; }
done

# in_door RUN CMD [ARG]...: as in tests/peers/native.sh, a clean
# environment that differs between the runs only in the door; the options
# are the corpus's (the guest has no system store), so the pkey backend
# enforces.
in_door() {
	d=$1
	shift
	set -- PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$W/$d/home" \
		TMPDIR="$W/$d/tmp" LANG=C.UTF-8 XDG_CACHE_HOME="$C/cache" \
		XOM_OPTIONS=store=off "$@"
	case $d in
	preload) set -- LD_PRELOAD="$P" "$@" ;;
	audit) set -- LD_AUDIT="$A" "$@" ;;
	esac
	env -i "$@"
}

for d in $RUNS; do mkdir -p "$W/$d/home" "$W/$d/tmp"; done
if [ -z "$PY" ] || [ ! -r "$P" ] || [ ! -r "$A" ] || [ ! -d "$C/cache" ]; then
	t_fail "peers setup" "no Python ($PY), $P, $A, or no plan cache in $C/cache (warm runs first)"
	t_summary
	exit 1
fi

case ${1:-} in
canary)
	# Python reads its own smaps: the execute-only pages (a non-zero
	# protection key on an --xp mapping) of itself and of libc.  Without
	# xom there are none; through each door both have some, so a door
	# that failed to load cannot pass as "no difference".
	code='import re
n = {"python": 0, "libc": 0}
name = None
with open("/proc/self/smaps") as f:
    for line in f:
        m = re.match(r"[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \S+ *(\S*)", line)
        if m:
            perms, path = m.groups()
            name = "python" if re.search(r"/python3[.0-9]*$", path) else \
                "libc" if "/libc.so" in path else None
            size = 0
        elif line.startswith("Size:"):
            size = int(line.split()[1]) // 4
        elif line.startswith("ProtectionKey:") and name and perms == "--xp" and int(line.split()[1]):
            n[name] += size
print("python %d libc %d" % (n["python"], n["libc"]))'
	for d in $RUNS; do
		got=$(in_door "$d" "$PY" -c "$code" 2>&1)
		if [ "$d" = plain ]; then
			t_check "peers canary $d: no execute-only code" '[ "$got" = "python 0 libc 0" ]' "$got"
		else
			name="peers canary $d: python's and libc's code execute-only"
			if echo "$got" | grep -Eqx "python [1-9][0-9]* libc [1-9][0-9]*"; then
				t_pass "$name ($got pages)"
			else
				t_fail "$name" "$got"
			fi
		fi
	done
	t_summary
	exit
	;;
""|-*)
	echo "usage: tests/peers/guest.sh canary|MODULE" >&2
	exit 64
	;;
esac

m=$1
# The module's options, after a "+" that marks the module as found.
args=$(sed 's/#.*//' "$R/tests/peers/guest.list" | awk -v m="$m" '$1 == m { $1 = ""; print "+" $0; exit }')
if [ -z "$args" ]; then
	t_fail "peers $m" "not in tests/peers/guest.list"
	t_summary
	exit 1
fi
args=${args#+}
times=""
for d in $RUNS; do
	o=$W/python/$d
	mkdir -p "$o"
	s=$(date +%s)
	# The patterns are -m options of regrtest; the shell must not expand
	# their stars.
	set -f
	# shellcheck disable=SC2086
	(cd "$W/$d/tmp" && in_door "$d" "$PY" -m test --timeout 100 -v \
		--junit-xml "$o/$m.xml" "$m" $args) >"$o/$m.log" 2>&1 </dev/null
	echo $? >"$o/$m.rc"
	set +f
	times="$times $d $(( $(date +%s) - s )) s"
done
echo "# $m:$times"
"$PY" "$R/tests/peers/results.py" module "$m" "$W/python/plain" "$W/python/preload" \
	"$W/python/audit" >"$W/python/$m.verdicts"
while read -r verdict line; do
	case $verdict in
	pass) t_pass "peers $line" ;;
	skip) t_skip "peers ${line%%: *}" "${line#*: }" ;;
	fail) t_fail "peers ${line%%: *}" "${line#*: }" ;;
	total) echo "# peers $m: $line" ;;
	esac
done <"$W/python/$m.verdicts"
for d in preload audit; do
	f=$(grep -lE '(^|>|&#10;)xom: ' "$W/python/$d/$m".* 2>/dev/null)
	t_check "peers $m $d: no xom: line in the tests' output" '[ -z "$f" ]' \
		"$(grep -hE '(^|>|&#10;)xom: ' $f | head -n 3 | cut -c1-200)"
done
t_summary
