#!/bin/sh
# The runtime's tests that need no protection keys: options, messages, the
# plan stores, backend=none (the whole path, no protection calls), the
# doors and their stand-ins for libc, and the hardening that does not need
# enforcement to show.  Tests that need PKU skip here with the reason;
# they run in the emulated-PKU VM (tests/runtime/vm-enforce.sh).
# Usage: B=build tests/runtime/native.sh
R=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "$R/${B:-build}" && pwd)
. "$R/tests/lib.sh"
P=$B/libxom.so A=$B/libxom-audit.so T=$B/tests/runtime/xomtest
LIB=$B/tests/runtime/libtarget.so
W=$(mktemp -d) || exit 1
trap 'chmod -R u+w "$W" 2>/dev/null; rm -rf "$W"' EXIT
export XDG_CACHE_HOME=$W/cache XDG_RUNTIME_DIR=$W/run
mkdir -m 700 "$W/run"
unset XOM_OPTIONS LD_PRELOAD LD_AUDIT
# No system store here, unless a test says otherwise.
BASE=store=off
STORE=$XDG_CACHE_HOME/xom
run() { # run OPTIONS PROGRAM...: stdout in $W/out, stderr in $W/err, $rc
	o=$1; shift
	XOM_OPTIONS=$BASE${o:+:$o} LD_PRELOAD=$P "$@" >"$W/out" 2>"$W/err"; rc=$?
}
run_audit() {
	o=$1; shift
	XOM_OPTIONS=$BASE${o:+:$o} LD_AUDIT=$A "$@" >"$W/out" 2>"$W/err"; rc=$?
}
lines() { wc -l <"$1" | tr -d ' '; }
err() { head -c 600 "$W/err"; }

if "$T" haspku; then pku=1; else pku=0; fi

# ---- without PKU: the notice, require=1 ------------------------------------
if [ $pku = 0 ]; then
	run "" /bin/true
	t_check notice-names-the-cpu '[ $rc = 0 ] && [ "$(cat $W/err)" = "xom: this CPU has no memory protection keys (PKU); running unprotected" ] && [ ! -s $W/out ]' "rc $rc, stderr '$(err)'"
	run "require=1" /bin/true
	t_check require-refuses '[ $rc = 126 ] && grep -q "^xom: refusing to run: this CPU has no memory protection keys" $W/err && [ $(lines $W/err) = 1 ]' "rc $rc, stderr '$(err)'"
	run_audit "require=1" /bin/true
	t_check require-refuses-audit '[ $rc = 126 ] && grep -q "^xom: refusing to run" $W/err' "rc $rc"
else
	for t in notice-names-the-cpu require-refuses require-refuses-audit; do
		t_skip $t "this machine has protection keys"
	done
fi

# ---- PKU here, but a seccomp filter refuses pkey_alloc (containers) ----------
# The line must name the filter, not the CPU, and the kernel's own
# execute-only key protects instead.  Where the CPU has no PKU the runtime
# rightly says that first, so this needs PKU (the guest runs it too:
# tests/runtime/vm-enforce.sh filtered).
if [ $pku = 1 ]; then
	# A cache of their own, so that the cold-start tests below still
	# find libc unscanned.
	for e in EPERM ENOSYS; do
		run "cache=$W/seccomp-cache" "$T" nopkey $e /bin/echo hi
		t_check "seccomp-pkey-$e" '[ $rc = 0 ] && [ "$(cat $W/out)" = hi ] && [ $(lines $W/err) = 1 ] && grep -q "^xom: pkey_alloc is refused (.*) by a seccomp filter .*; xom makes code execute-only with the kernel.s own execute-only key (key [0-9]*) instead, by mprotect(PROT_EXEC)$" $W/err' "rc $rc, stderr '$(err)'"
	done
	run "cache=$W/seccomp-cache:require=1" "$T" nopkey EPERM /bin/echo hi
	t_check seccomp-pkey-require '[ $rc = 0 ] && [ "$(cat $W/out)" = hi ]' "rc $rc, stderr '$(err)'"
else
	for t in seccomp-pkey-EPERM seccomp-pkey-ENOSYS seccomp-pkey-require; do
		t_skip $t "this CPU has no protection keys, which the runtime names first"
	done
fi

# ---- options ------------------------------------------------------------------
for bad in "bogus=1|unknown key 'bogus'" "mode=x|mode must be enforce, audit or off, got 'x'" \
	"backend=y|backend must be pkey or none, got 'y'" "require=2|require must be 0 or 1, got '2'" \
	"verbose=z|verbose must be a number 0-9, got 'z'" "nokey|expected key=value, got 'nokey'" \
	"cache=|cache needs a directory or off" "log=/nonexistent/dir/x|cannot open log file" \
	"seal=1:mode=audit|seal=1 cannot be combined with mode=audit"; do
	opt=${bad%%|*} msg=${bad#*|}
	run "$opt" /bin/echo hi
	t_check "bad-option-$opt" '[ $rc = 0 ] && [ "$(cat $W/out)" = hi ] && grep -qF "xom: XOM_OPTIONS: $msg" $W/err && grep -q "; running unprotected$" $W/err && [ $(lines $W/err) = 1 ]' "rc $rc, stderr '$(err)'"
done
run "mode=bad:require=1" /bin/true
t_check bad-option-require '[ $rc = 126 ] && [ "$(cat $W/err)" = "xom: refusing to run: XOM_OPTIONS: mode must be enforce, audit or off, got '"'bad'"' (require=1)" ]' "rc $rc, stderr '$(err)'"

# ---- notices: one per process by default, one per run with notice=once ----
# Every process of a shell script has a reason to speak here: no PKU, or,
# with PKU, options it cannot use (an item after notice= that is invalid).
if [ $pku = 0 ]; then why=""; else why=bogus=1; fi
script='/bin/true; /bin/true | /bin/cat; (/bin/true); env'
notices() { grep -c "^xom: " "$W/err"; }
run "$why" /bin/sh -c "$script"
t_check notice-each '[ $rc = 0 ] && [ $(notices) -ge 4 ]' "$(notices) lines: $(err)"
run "notice=once${why:+:$why}" /bin/sh -c "$script"
t_check notice-once '[ $rc = 0 ] && [ $(notices) = 1 ] && grep -q "^XOM_OPTIONS=store=off:notice=done" $W/out' "$(notices) lines, $(grep XOM_OPTIONS $W/out): $(err)"
run "notice=done${why:+:$why}" /bin/sh -c "$script"
t_check notice-done '[ $rc = 0 ] && [ $(notices) = 0 ]' "$(err)"
run "notice=off${why:+:$why}" /bin/sh -c "$script"
t_check notice-off '[ $rc = 0 ] && [ $(notices) = 0 ] && grep -q "notice=off" $W/out' "$(err)"
# A refusal is not a notice: require=1 says why in every process.
run "notice=done:require=1:bogus=1" /bin/true
t_check notice-done-still-refuses '[ $rc = 126 ] && grep -q "^xom: refusing to run: XOM_OPTIONS: unknown key" $W/err' "rc $rc, $(err)"
run "mode=off" /bin/true
t_check mode-off-silent '[ $rc = 0 ] && [ ! -s $W/err ]' "rc $rc, stderr '$(err)'"

# ---- a long cold scan is announced on a terminal, and only there ---------
# Debian's python3 (python3.11 on Debian 12, python3.13 on Debian 13) and
# its libraries hold more than 4 MB of code.
PY=$(readlink -f /usr/bin/python3)
if command -v script >/dev/null && [ -x "$PY" ]; then
	tty_run() { # tty_run CACHE OPTIONS: python3 on a pseudo-terminal
		XDG_CACHE_HOME=$1 XOM_OPTIONS=$BASE:backend=none${2:+:$2} \
			script -qec "LD_PRELOAD=$P exec $PY -S -c pass" /dev/null >"$W/out" 2>&1 </dev/null
	}
	tty_run "$W/tty1" ""
	t_check cold-scan-said-on-tty 'grep -Eq "^xom: scanning [0-9]+ objects \([0-9]+ MB of code\) for the first time\.\.\." $W/out' "$(head -c 400 $W/out)"
	tty_run "$W/tty1" ""
	t_check warm-start-silent-on-tty '! grep -q "scanning" $W/out' "$(head -c 400 $W/out)"
	tty_run "$W/tty2" notice=done
	t_check cold-scan-quiet-when-done '! grep -q "scanning" $W/out' "$(head -c 400 $W/out)"
	XDG_CACHE_HOME=$W/tty3 XOM_OPTIONS=$BASE:backend=none LD_PRELOAD=$P "$PY" -S -c pass >"$W/out" 2>&1
	t_check cold-scan-quiet-off-tty '! grep -q "scanning" $W/out' "$(head -c 400 $W/out)"
else
	t_skip cold-scan-said-on-tty "needs script(1) and Debian's python3"
fi

# ---- backend=none: the whole path, no protection calls ----------------------
run "backend=none:verbose=1" /bin/echo hi
t_check stdout-clean '[ "$(cat $W/out)" = hi ]' "stdout '$(cat $W/out)'"
t_check none-plans-all 'grep -q "libc.so.6: [0-9]* pages execute-only, [0-9]* kept readable, [0-9]* protection calls\{0,1\} not made (backend=none)" $W/err && grep -q "ld-linux-x86-64.so.2: " $W/err && grep -q "/echo: " $W/err && grep -q "scanning [0-9]* objects" $W/err' "$(err)"
t_check store-created '[ "$(stat -c %a $STORE)" = 700 ] && [ -s $STORE/plans ] && [ -n "$(ls $STORE/syms)" ] && [ -z "$(find $STORE -name "*.tmp")" ]' "$(ls -la $STORE 2>&1)"
run "backend=none:verbose=1" /bin/echo hi
t_check warm-no-scan '! grep -q "scanning" $W/err && grep -q "libc.so.6: " $W/err' "$(err)"
run "backend=none:verbose=2" /bin/true
t_check verbose-totals 'grep -Eq "^xom: [0-9]+ objects protected: [0-9]+ pages execute-only, [0-9]+ kept readable, [0-9]+ protection calls, about [0-9]+ mappings added$" $W/err' "$(err)"
run "backend=none:verbose=1" "$T" call
t_check grammar '! grep -Eq "\b1 (pages|protection calls)\b" $W/err' "$(err)"
run "backend=none" "$T" cycle "$LIB" 200
t_check dlopen-cycle-preload 'grep -q "^PASS dlopen-cycle" $W/out' "$(cat $W/out; err)"
run_audit "backend=none" "$T" cycle "$LIB" 200
t_check dlopen-cycle-audit 'grep -q "^PASS dlopen-cycle" $W/out' "$(cat $W/out; err)"
# A #! script's main program is its interpreter, not the script.
printf '#!/bin/sh\necho hi\n' >"$W/script.sh" && chmod +x "$W/script.sh"
run "backend=none:verbose=1" "$W/script.sh"
dash=$(readlink -f /bin/sh)
t_check script-interpreter '[ "$(cat $W/out)" = hi ] && grep -q "^xom: $dash: [0-9]* pages execute-only" $W/err && ! grep -q "script.sh" $W/err' "$(err)"
# The dynamic linker run as a program: the main program is PROG, not ld.so.
run "backend=none:verbose=1" /lib64/ld-linux-x86-64.so.2 /bin/true
t_check ldso-as-program 'grep -Eq "^xom: /(usr/)?bin/true: [0-9]+ pages execute-only" $W/err && ! grep -q "not the one mapped" $W/err' "$(err)"
run "backend=none:verbose=1:log=$W/log" /bin/echo hi
t_check log-file '[ ! -s $W/err ] && grep -q "libc.so.6: " $W/log' "stderr '$(err)'"
run "backend=none:verbose=1:exclude=libc.so*" /bin/true
t_check exclude 'grep -q "libc.so.6: excluded; left unprotected" $W/err' "$(err)"

# ---- the stores: warm runs need no scanner; bad indexes are rebuilt --------
# A copy of the library without xom-plan beside it: a warm store must be
# enough, and a cold one must fail safe with one line (or refuse).
mkdir -p "$W/lone" && cp "$P" "$W/lone/libxom.so"
lone() { XOM_OPTIONS=$BASE:backend=none:verbose=1${1:+:$1} LD_PRELOAD=$W/lone/libxom.so /bin/true 2>"$W/err"; rc=$?; }
lone
t_check warm-needs-no-scanner '[ $rc = 0 ] && ! grep -q "no scanner" $W/err && grep -q "libc.so.6: [0-9]* pages" $W/err' "$(err)"
XDG_CACHE_HOME=$W/cold XDG_RUNTIME_DIR=$W/cold-run lone
t_check no-scanner-fails-safe '[ $rc = 0 ] && grep -q "^xom: no scanner: .*/xom-plan (no such file, errno 2); objects not in a plan store are left unprotected$" $W/err && [ $(lines $W/err) -le 2 ]' "rc $rc: $(err)"
XDG_CACHE_HOME=$W/cold XDG_RUNTIME_DIR=$W/cold-run lone require=1
t_check require-no-scanner '[ $rc = 126 ] && grep -q "refusing to run: .* cannot be protected (require=1)" $W/err' "rc $rc: $(err)"

# The profiles shipped beside the library (build/profiles, lib/xom/profiles):
# a copy of the runtime in a folder of the build, with a profile for
# /bin/true that keeps its page 0x3000 readable, found by itself; ignored
# once others may write its folder.
S=$(cd "$B" && pwd)/tests/runtime/shipped
if ! root_alone "$(dirname "$S")"; then
	t_skip shipped-profile "the build ($B) lies under a folder others can write, where the runtime takes no shipped profile"
else
	rm -rf "$S" && mkdir -p -m 755 "$S/profiles" && cp "$P" "$B/xom-plan" "$B/libxom-scan.so" "$S/"
	k=$(readelf -n "$(readlink -f /bin/true)" | sed -n 's/.*Build ID: //p')
	printf 'program %s /bin/true\n%s 0x3000 /bin/true\n' "$k" "$k" >"$S/profiles/$k"
	shipped() { XOM_OPTIONS=$BASE:backend=none:verbose=1 LD_PRELOAD=$S/libxom.so /bin/true 2>"$W/err"; rc=$?; }
	shipped
	t_check shipped-profile '[ $rc = 0 ] && grep -q "/true: [0-9]* pages\{0,1\} execute-only, 1 kept readable" $W/err' "rc $rc: $(err)"
	chmod 775 "$S/profiles"
	shipped
	t_check shipped-profile-trusted '[ $rc = 0 ] && grep -q "/true: [0-9]* pages\{0,1\} execute-only, 0 kept readable" $W/err && grep -q "profile $S/profiles/$k ignored: its folder is not root.s alone" $W/err' "rc $rc: $(err)"
	rm -rf "$S"
fi

corrupt() { # corrupt NAME REASON: after $STORE/plans was damaged
	why=$2
	run "backend=none:verbose=1" /bin/true
	t_check "store-$1" 'grep -qF "ignored: $why" $W/err && grep -q "libc.so.6: [0-9]* pages" $W/err' "$(err)"
	lone
	t_check "store-$1-rebuilt" '! grep -q "ignored" $W/err && ! grep -q "no scanner" $W/err' "$(err)"
}
IDX=$STORE/plans
printf 'YOMP' | dd of="$IDX" bs=1 seek=0 conv=notrunc 2>/dev/null
corrupt bad-magic "bad magic"
truncate -s 1000 "$IDX"
corrupt truncated "length does not match its header (truncated?)"
printf 'X' | dd of="$IDX" bs=1 seek=28 conv=notrunc 2>/dev/null
corrupt header-byte "header checksum mismatch"
if [ "$(id -u)" = 0 ]; then
	chown 65534 "$IDX"
	corrupt foreign-owner "not yours alone"
else
	t_skip store-foreign-owner "needs root to chown"
	t_skip store-foreign-owner-rebuilt "needs root to chown"
fi
chmod 666 "$IDX"
corrupt writable "not yours alone"
# A damaged plan inside a whole index: that plan is not used, it is made
# again, and the rest stay.  Its copy in the start-up's set goes too.
"$T" damage "$IDX" both libc.so.6 >/dev/null
run "backend=none:verbose=1" /bin/true
t_check store-plan-byte 'grep -q "libc.so.6: [0-9]* pages" $W/err && grep -q "scanning 1 object " $W/err' "$(err)"
# The scan kept a new set of the start-up's plans.  It is what a warm start
# reads: with the plan alone damaged, nothing is scanned...
"$T" damage "$IDX" alone libc.so.6 >/dev/null
run "backend=none:verbose=1" /bin/true
t_check store-set-used 'grep -q "libc.so.6: [0-9]* pages" $W/err && ! grep -q "scanning" $W/err' "$(err)"
# ... and a damaged copy in the set is passed over for the plan alone (both
# damaged first: the scan makes both again, then the set's copy is broken).
"$T" damage "$IDX" set libc.so.6 >/dev/null
run "backend=none:verbose=1" /bin/true
"$T" damage "$IDX" set libc.so.6 >/dev/null
run "backend=none:verbose=1" /bin/true
t_check store-set-damaged 'grep -q "libc.so.6: [0-9]* pages" $W/err && ! grep -q "scanning" $W/err && [ $(lines $W/err) = 4 ]' "$(err)"
# A small batch (up to 8 objects: /bin/true, a dlopen) reads its plans
# from the index with pread; a larger one (manyprog: 10 libraries of its
# own) maps the index.  Both must find the same plans, and both must turn
# away a damaged plan.  The tiny runtime's buffer holds one plan, so its
# small batches map the index half-way.
many() { # many CACHE OPTIONS: manyprog warm or cold, in a cache of its own
	XDG_CACHE_HOME=$1 XOM_OPTIONS=$BASE:backend=none:verbose=1${2:+:$2} LD_PRELOAD=$P \
		"$B/tests/runtime/manyprog" >"$W/out" 2>"$W/err"; rc=$?
}
many "$W/many"
many "$W/many"
t_check store-mapped-warm '[ $rc = 0 ] && [ "$(cat $W/out)" = "many 135" ] && [ $(grep -Ec "libmany[0-9].so: [0-9]+ pages? execute-only" $W/err) = 10 ] && ! grep -q scanning $W/err' "rc $rc: $(err)"
"$T" damage "$W/many/xom/plans" alone libmany3.so >/dev/null
many "$W/many"
t_check store-mapped-set-used '[ $rc = 0 ] && [ "$(cat $W/out)" = "many 135" ] && [ $(grep -Ec "libmany[0-9].so: [0-9]+ pages? execute-only" $W/err) = 10 ] && ! grep -q scanning $W/err' "rc $rc: $(err)"
"$T" damage "$W/many/xom/plans" set libmany3.so >/dev/null
many "$W/many"
t_check store-mapped-plan-byte '[ $rc = 0 ] && [ "$(cat $W/out)" = "many 135" ] && grep -q "scanning 1 object " $W/err && [ $(grep -Ec "libmany[0-9].so: [0-9]+ pages? execute-only" $W/err) = 10 ]' "rc $rc: $(err)"
# Loaded one by one after start-up, four more libraries take the table past
# the size at which it starts hashing what it knows: each sync must still
# find every known object, and say nothing of it again.
L=$B/tests/runtime
XDG_CACHE_HOME=$W/many XOM_OPTIONS=$BASE:backend=none:verbose=1 LD_PRELOAD=$P \
	"$L/manyprog" "$L/libswap1.so" "$L/libswap2.so" "$L/libbulk.so" "$L/libtarget.so" \
	>"$W/out" 2>"$W/err"; rc=$?
t_check objects-hashed '[ $rc = 0 ] && [ "$(cat $W/out)" = "many 135" ] && [ $(grep -Ec "libmany[0-9].so: [0-9]+ pages? execute-only" $W/err) = 10 ] && [ $(grep -Ec "/(libswap1|libswap2|libbulk|libtarget).so: [0-9]+ pages? execute-only" $W/err) = 4 ] && [ $(grep -c "libc.so.6: " $W/err) = 1 ]' "rc $rc: $(cat $W/out) $(err)"

# ---- no fixed number of objects ----------------------------------------------
# hugeprog needs 1,100 libraries of its own (copies of one, each its own
# file): with itself, the door's library, libc and ld.so, 1,104 objects
# with code arrive in the start-up's one batch, more than the runtime's
# own tables hold (1,024) and more files than one run of the helper
# takes.  Every one must be planned, once: libc and ld.so, which come
# last, too.  Then two libraries loaded after start-up are planned, and
# nothing known is planned again.  The audit door also plans its own
# namespace: the module and its libc (ld.so is shared).  The program is
# built here, not under build/, whose every file the emulated-PKU guests
# get: one small library compiled once, without the C library, and copied.
H=$W/hugeprog HUGE=$W/hugeprog/hugeprog
mkdir -p "$H/lib"
gcc -O2 -DHUGE_LIB -shared -fPIC -nostdlib -Wl,--build-id=none -o "$H/one.so" "$R/tests/runtime/huge.c"
i=0 libs=
while [ $i -lt 1100 ]; do cp "$H/one.so" "$H/lib/libhuge$i.so"; libs="$libs -lhuge$i"; i=$((i + 1)); done
# shellcheck disable=SC2086 # one word per library
gcc -O2 -o "$HUGE" "$R/tests/runtime/huge.c" -L"$H/lib" -Wl,--no-as-needed $libs -Wl,-rpath,"$H/lib"
huge() { # huge NAME DOOR LIBRARY CACHE OBJECTS: hugeprog cold, then warm
	name=$1 door=$2 lib=$3 cache=$4 objects=$5
	for pass in cold warm; do
		XDG_CACHE_HOME=$cache XOM_OPTIONS=$BASE:backend=none:verbose=2 env "$door=$lib" \
			"$HUGE" "$L/libswap1.so" "$L/libtarget.so" >"$W/out" 2>"$W/err"; rc=$?
		planned=$(grep -Ec "/libhuge[0-9]+\.so: 1 page execute-only" $W/err)
		distinct=$(grep -Eo "/libhuge[0-9]+\.so: 1 page execute-only" $W/err | sort -u | wc -l)
		t_check "$name-$pass" '[ $rc = 0 ] && [ "$(cat $W/out)" = "huge 2" ] && [ $planned = 1100 ] && [ $distinct = 1100 ] && grep -q "^xom: $objects objects protected: " $W/err && grep -q "/hugeprog: 1 page execute-only" $W/err && [ $(grep -Ec "/libc\.so\.6: [0-9]+ pages execute-only" $W/err) = $((objects - 1103)) ] && [ $(grep -c "/ld-linux-x86-64\.so\.2: [0-9]* pages execute-only" $W/err) = 1 ] && [ $(grep -Ec "/(libswap1|libtarget)\.so: 1 page execute-only" $W/err) = 2 ] && ! grep -q "unprotected\|cannot name" $W/err' "rc $rc, $planned planned ($distinct distinct): $(cat $W/out) $(grep -v libhuge $W/err | head -c 1500)"
	done
}
huge objects-1104-preload LD_PRELOAD "$P" "$W/huge" 1104
huge objects-1104-audit LD_AUDIT "$A" "$W/huge" 1105
# The same through runtimes with room for 8 arrivals, 16 objects and 5
# files a helper run: the batch grows inside the dynamic linker's
# callbacks, the object table maps seven blocks and its hash grows as
# often, and the cold start runs the helper 221 times.  Then the
# start-ups and the dlopen tests above, through them.
mkdir -p "$W/small"
cp "$L/libxom-small.so" "$L/libxom-audit-small.so" "$B/xom-plan" "$W/small/"
huge objects-small-tables-preload LD_PRELOAD "$W/small/libxom-small.so" "$W/huge-small" 1104
huge objects-small-tables-audit LD_AUDIT "$W/small/libxom-audit-small.so" "$W/huge-small" 1105
XDG_CACHE_HOME=$W/many XOM_OPTIONS=$BASE:backend=none:verbose=1 LD_PRELOAD=$W/small/libxom-small.so \
	"$L/manyprog" "$L/libswap1.so" "$L/libswap2.so" "$L/libbulk.so" "$L/libtarget.so" \
	>"$W/out" 2>"$W/err"; rc=$?
t_check objects-small-tables-many '[ $rc = 0 ] && [ "$(cat $W/out)" = "many 135" ] && [ $(grep -Ec "libmany[0-9].so: [0-9]+ pages? execute-only" $W/err) = 10 ] && [ $(grep -Ec "/(libswap1|libswap2|libbulk|libtarget).so: [0-9]+ pages? execute-only" $W/err) = 4 ] && [ $(grep -c "libc.so.6: " $W/err) = 1 ]' "rc $rc: $(cat $W/out) $(err)"
# (A cache of their own: a plan for libtarget.so in the main one would let
# require-dlopen-refused below plan its copy.)
for door in LD_PRELOAD LD_AUDIT; do
	if [ $door = LD_PRELOAD ]; then lib=$W/small/libxom-small.so; else lib=$W/small/libxom-audit-small.so; fi
	XDG_CACHE_HOME=$W/huge-small XOM_OPTIONS=$BASE:backend=none env "$door=$lib" \
		"$T" cycle "$LIB" 200 >"$W/out" 2>"$W/err"
	t_check "objects-small-tables-cycle-$door" 'grep -q "^PASS dlopen-cycle" $W/out' "$(cat $W/out; err)"
	XDG_CACHE_HOME=$W/huge-small XOM_OPTIONS=$BASE:backend=none env "$door=$lib" \
		"$T" threads "$LIB" 8 0.5 0 >"$W/out" 2>"$W/err"
	t_check "objects-small-tables-threads-$door" 'grep -q "^PASS dlopen-threads" $W/out' "$(cat $W/out; err)"
done
# A library unloaded and loaded again at its old address behind the door:
# the door must find the object it knows there, by its span, and not
# protect it as a new one (which would leave two entries for one mapping).
# A cache of its own: a plan for libtarget.so would let require-dlopen-refused
# below plan its copy.
XDG_CACHE_HOME=$W/reload run "backend=none:verbose=1" "$T" reload-raw "$LIB"
if grep -q "^SKIP" $W/out; then t_skip reload-known "$(sed -n 's/^SKIP reload-raw: //p' $W/out)"
else t_check reload-known '[ $rc = 0 ] && grep -q "^PASS" $W/out && [ $(grep -c "libtarget.so: [0-9]* pages\? execute-only" $W/err) = 1 ]' "rc $rc: $(cat $W/out) $(err)"; fi
# Libraries that come and go in other namespaces too, whose link maps
# the next ones reuse: each is protected once (tests/runtime/xomtest.c),
# but for L7, which libc's own dlmopen loads into another namespace behind
# the door: the preload door sees other namespaces through its dlmopen.
NS=""; for i in 0 1 2 3 4 5 6 7 8; do NS="$NS $B/tests/runtime/libmany$i.so"; done
# shellcheck disable=SC2086
XDG_CACHE_HOME=$W/ns run "backend=none:verbose=1" "$T" namespaces $NS
t_check namespaces '[ $rc = 0 ] && grep -q "^PASS" $W/out && (for i in 0 1 2 3 4 5 6 8; do [ "$(grep -c "libmany$i.so: [0-9]* pages\{0,1\} execute-only" $W/err)" = 1 ] || exit 1; done)' "rc $rc: $(cat $W/out) $(err)"
# The same after libraries without code, with another namespace's loads
# and the program's unloads behind the door that leave the counts as they
# were (tests/runtime/xomtest.c): the last library must be protected.
# E is bigger than K0 ... K4, so that it comes back at its own old place,
# under a name of a length of its own, and without malloc's per-thread
# cache (which calloc passes by), so that its link map's memory goes back
# to it.
R=$B/tests/runtime
ln -s "$R/libbulk.so" "$W/libe-of-a-length-of-its-own.so"
# shellcheck disable=SC2086
GLIBC_TUNABLES=glibc.malloc.tcache_count=0 XDG_CACHE_HOME=$W/nsd run "backend=none:verbose=1" "$T" namespaces-data $R/libmany0.so $R/libmany1.so \
	$R/libmany2.so $R/libmany3.so $R/libmany4.so $R/libmany5.so $W/libe-of-a-length-of-its-own.so $R/libmany6.so \
	$R/libdata1.so $R/libdata2.so $R/libmany7.so $R/libmany8.so $R/libmany9.so
if grep -q "^SKIP" $W/out; then t_skip namespaces-data "$(sed -n 's/^SKIP namespaces-data: //p' $W/out)"
else t_check namespaces-data '[ $rc = 0 ] && grep -q "^PASS" $W/out && [ "$(grep -c "libmany9.so: [0-9]* pages\{0,1\} execute-only" $W/err)" = 1 ]' "rc $rc: $(cat $W/out) $(err)"; fi
run "backend=none:verbose=1" /bin/true
grep -v libxom "$W/err" >"$W/err.read"
# The tiny runtime with its helper beside it; its own plan first.
mkdir -p "$W/tiny" && cp "$B/tests/runtime/libxom-tiny.so" "$B/xom-plan" "$W/tiny/"
tiny() { XOM_OPTIONS=$BASE:backend=none:verbose=1 LD_PRELOAD=$W/tiny/libxom-tiny.so /bin/true 2>"$W/err"; }
tiny; tiny
t_check store-read-outgrown '[ $(lines $W/err.read) = 3 ] && ! grep -q scanning $W/err && grep -v libxom $W/err | cmp -s - $W/err.read' "read: $(tr '\n' '|' <$W/err.read) tiny: $(err)"
run "backend=none:cache=off:verbose=1" /bin/true
t_check cache-off 'grep -q "libc.so.6: [0-9]* pages" $W/err && grep -q scanning $W/err' "$(err)"

# A cache folder that cannot be used: the plans go to the fallback, once.
chmod 755 "$STORE"
run "backend=none:verbose=1" /bin/echo hi
t_check store-not-private '[ "$(cat $W/out)" = hi ] && grep -q "cannot keep plans in the cache (.* is not a directory that only you can use (mode 0700)); keeping them in $XDG_RUNTIME_DIR/xom" $W/err && [ -s $XDG_RUNTIME_DIR/xom/plans ]' "$(err)"
XOM_OPTIONS=$BASE:backend=none:verbose=1 LD_PRELOAD=$W/lone/libxom.so /bin/echo hi >/dev/null 2>"$W/err"
t_check store-fallback-warm '! grep -q "no scanner" $W/err && ! grep -q "cannot keep" $W/err' "$(err)"

# A start-up whose plans are all in the cache, but in no set (another batch
# of the same program, here with a library preloaded, made them): the
# helper keeps its set, without a word, and the other batch's set stays
# beside it.  With every plan alone damaged, each batch still protects
# every object, from its own set, and scans nothing.
SK=$W/sets-kept SWAP=$B/tests/runtime/libswap1.so
mkdir -m 700 "$SK"
kept() { XDG_CACHE_HOME=$SK XOM_OPTIONS=$BASE:backend=none:verbose=1 LD_PRELOAD="$P${1:+ $1}" /bin/true 2>"$W/err"; }
nsets() { grep -ao XOMPSET1 "$SK/xom/plans" | wc -l; }
kept "$SWAP"; n1=$(nsets)
kept; n2=$(nsets)
t_check sets-kept-quiet '[ $n1 = 1 ] && [ $n2 = 2 ] && ! grep -q scanning $W/err && [ $(grep -vc "pages\{0,1\} execute-only" $W/err) = 0 ]' "sets $n1 then $n2: $(err)"
for f in /true libc.so.6 libxom.so ld-linux-x86-64.so.2 libswap1.so; do
	"$T" damage "$SK/xom/plans" alone "$f" >/dev/null
done
kept; a="$(cat $W/err)"
kept "$SWAP"
t_check sets-kept-both '! grep -q scanning $W/err && ! echo "$a" | grep -q scanning && grep -q "/true: [0-9]* pages\{0,1\} execute-only" $W/err && echo "$a" | grep -q "/true: [0-9]* pages\{0,1\} execute-only" && grep -q "libswap1.so: [0-9]* pages\{0,1\} execute-only" $W/err && [ $(nsets) = 2 ]' "without the library: $a; with it: $(err)"
chmod 700 "$STORE"
# XDG_CACHE_HOME=/dev/null says "no cache" (GLib's tests set it, and compare
# a child's stderr with ""): the plans go to the fallback without a word.
mkdir -p -m 700 "$W/rt-null"
XDG_CACHE_HOME=/dev/null XDG_RUNTIME_DIR=$W/rt-null XOM_OPTIONS=$BASE:backend=none LD_PRELOAD=$P /bin/echo hi >"$W/out" 2>"$W/err"
t_check cache-dev-null '[ "$(cat $W/out)" = hi ] && [ ! -s $W/err ] && [ -s $W/rt-null/xom/plans ]' "$(err)"

# ---- a copy of libc that claims its build-id ----------------------------------
# A forger's copy of libc, with libc's build-id and DF_TEXTREL set, scanned
# first into the store (by the runtime's own helper): the plan made from it
# keeps the whole file readable, and must never be libc's.  libc must be
# planned as from a store that never saw the copy, through both ways of
# reading a store (a small batch reads plans with pread, manyprog's maps
# the index), and the store must keep libc's plan beside the copy's, so
# that the next run scans nothing.
# (The audit door also plans its own namespace's libc: one number for both.)
libc_pages() { sed -n 's/^xom: .*\/libc\.so\.6: \([0-9]*\) pages\{0,1\} execute-only.*/\1/p' "$W/err" | sort -u; }
XDG_CACHE_HOME=$W/genuine run "backend=none:verbose=1" /bin/true
LIBC=$(sed -n 's/^xom: \(\/.*\/libc\.so\.6\): [0-9]* pages.*/\1/p' "$W/err")
want=$(libc_pages)
mkdir -p "$W/forged"
"$T" forge textrel "$LIBC" "$W/forged/libc.so.6" >/dev/null
forge_store() { # forge_store CACHE: the copy's plan, first in CACHE's store
	rm -rf "$1" && "$B/xom-plan" --store "$1/xom" --quiet -- "$W/forged/libc.so.6" >/dev/null
}
forge_store "$W/forge"
XDG_CACHE_HOME=$W/forge run "backend=none:verbose=1" /bin/true
t_check forged-copy-not-libcs '[ -n "$want" ] && [ "$want" -gt 0 ] && [ "$(libc_pages)" = "$want" ] && ! grep -q "text relocations" $W/err && grep -q "scanning" $W/err' "libc $LIBC, $want pages for the genuine plan: $(err)"
XDG_CACHE_HOME=$W/forge run "backend=none:verbose=1" /bin/true
t_check forged-copy-both-kept '[ "$(libc_pages)" = "$want" ] && ! grep -q scanning $W/err && grep -aq "$W/forged/libc.so.6" "$W/forge/xom/plans" && grep -aq "$LIBC" "$W/forge/xom/plans"' "$(err)"
forge_store "$W/forge-many"
many "$W/forge-many"
t_check forged-copy-mapped-index '[ $rc = 0 ] && [ "$(libc_pages)" = "$want" ] && ! grep -q "text relocations" $W/err' "rc $rc: $(err)"
forge_store "$W/forge-audit"
XDG_CACHE_HOME=$W/forge-audit run_audit "backend=none:verbose=1" /bin/true
t_check forged-copy-audit '[ "$(libc_pages)" = "$want" ] && ! grep -q "text relocations" $W/err' "$(err)"

# A plan of the format before this one, whole and sealed (in the store
# alone and in its set): not trusted, but made again, like a damaged one.
"$T" damage "$W/forge/xom/plans" old libc.so.6 >/dev/null
XDG_CACHE_HOME=$W/forge run "backend=none:verbose=1" /bin/true
t_check store-plan-old-format '[ "$(libc_pages)" = "$want" ] && grep -q "scanning 1 object " $W/err' "$(err)"
XDG_CACHE_HOME=$W/forge run "backend=none:verbose=1" /bin/true
t_check store-plan-old-format-rebuilt '[ "$(libc_pages)" = "$want" ] && ! grep -q scanning $W/err' "$(err)"

# The helper: static (no dynamic linker, so no preload can reach it).
t_check helper-static '! readelf -lW "$B/xom-plan" | grep -q INTERP' "$(readelf -lW "$B/xom-plan" | grep -i interp)"

# ---- require=1 fails closed -----------------------------------------------------
cp -r "$STORE" "$W/tampered"
"$T" tamper "$W/tampered/plans" >/dev/null
XDG_CACHE_HOME=$W/tc mkdir -p "$W/tc" && cp -r "$W/tampered" "$W/tc/xom" && chmod 700 "$W/tc/xom"
XDG_CACHE_HOME=$W/tc run "backend=none" /bin/true
t_check plan-mismatch-fails-safe '[ $rc = 0 ] && grep -q "the plan.s segments differ from the mapped ones; left unprotected" $W/err' "rc $rc: $(err)"
XDG_CACHE_HOME=$W/tc run "backend=none:require=1" /bin/true
t_check require-plan-mismatch '[ $rc = 126 ]' "rc $rc: $(err)"
# A library loaded later that cannot be protected fails the dlopen.
mkdir -p "$W/late"; cp "$LIB" "$W/late/liblate.so"
run "backend=none" "$T" call
XOM_OPTIONS=$BASE:backend=none:require=1 LD_PRELOAD=$W/lone/libxom.so XDG_CACHE_HOME=$W/cache \
	"$T" maps "$W/late/liblate.so" >"$W/out" 2>"$W/err"; rc=$?
t_check require-dlopen-refused '[ $rc != 0 ] && grep -q "dlopen .*xom: the library, or one it needs, cannot be protected (require=1)" $W/out' "rc $rc: $(cat $W/out; err)"

# ---- both doors, the audit module, the stand-ins -----------------------------
XOM_OPTIONS=$BASE:backend=none:verbose=1 LD_AUDIT=$A LD_PRELOAD=$P /bin/true 2>"$W/err"
t_check one-owner '[ $(grep -c "libxom.so: " $W/err) = 1 ] && [ $(grep -c "libc.so.6: " $W/err) = 2 ]' "$(err)"
t_check audit-namespace-planned 'grep -q "libxom-audit.so: [0-9]* pages execute-only" $W/err' "$(err)"
echo hello | XOM_OPTIONS=$BASE:backend=none:verbose=1 LD_AUDIT=$A iconv -f UTF-8 -t IBM037 >"$W/out" 2>"$W/err"
t_check audit-sees-gconv 'grep -q "gconv/IBM037.so: [0-9]* pages" $W/err && [ "$(od -An -tx1 $W/out | tr -d " ")" = 888593939625 ]' "$(err)"
for door in preload audit; do
	if [ $door = preload ]; then r=run; else r=run_audit; fi
	$r "backend=none" "$T" handler
	t_check "own-handler-$door" 'grep -q "^PASS own-handler" $W/out' "$(cat $W/out; err)"
	for f in sysv_signal bsd_signal ssignal sigset; do
		$r "backend=none" "$T" setter $f
		t_check "handler-$f-$door" 'grep -q "^PASS handler-$f" $W/out' "$(cat $W/out; err)"
	done
	$r "backend=none" "$T" nodefer
	t_check "nodefer-$door" 'grep -q "^PASS nodefer" $W/out' "$(cat $W/out; err)"
	$r "backend=none" "$T" threads "$LIB" 8 0.5 0
	t_check "dlopen-threads-$door" 'grep -q "^PASS dlopen-threads" $W/out' "$(cat $W/out; err)"
	$r "backend=none:mode=audit" "$T" call
	t_check "audit-mode-runs-$door" '[ $rc = 0 ]' "rc $rc: $(err)"
	# With backend=none the store's index stays mapped as under xom's key,
	# where the emulated-PKU guest proves it unreadable: here, no plan may
	# be anywhere else, after start-up and after a dlopen's batch.
	$r "backend=none" "$T" memscan --index-readable "$LIB"
	t_check "plans-not-in-memory-$door" 'grep -q "^PASS plans-not-in-memory.*kept [1-9]" $W/out' "$(cat $W/out; err)"
done
# mode=audit keeps none: its handler would let a read of one go through.
run "backend=none:mode=audit" "$T" memscan --index-readable "$LIB"
t_check plans-not-kept-audit-mode 'grep -q "^PASS plans-not-in-memory.*kept 0" $W/out' "$(cat $W/out; err)"
# The runtime that keeps no index (as under the kernel's key): none at all.
mkdir -p "$W/read" && cp "$B/tests/runtime/libxom-read.so" "$B/xom-plan" "$W/read/"
XOM_OPTIONS=$BASE:backend=none LD_PRELOAD=$W/read/libxom-read.so "$T" memscan "$LIB" >"$W/out" 2>"$W/err"
t_check plans-not-in-memory-read 'grep -q "^PASS plans-not-in-memory.*hidden 0, kept 0" $W/out' "$(cat $W/out; err)"
# A store rebuilt while a process runs: its next batch sees the new index,
# not the one it kept.
kept_index_changed() {
	local d=$W/kc
	rm -rf "$d" && mkdir -p "$d/cache" && cp "$LIB" "$d/libkc.so" && mkfifo "$d/go"
	for _ in 1 2; do
		XDG_CACHE_HOME=$d/cache XOM_OPTIONS=$BASE:backend=none LD_PRELOAD=$P "$T" call >/dev/null 2>&1
	done
	XDG_CACHE_HOME=$d/cache XOM_OPTIONS=$BASE:backend=none:verbose=1 LD_PRELOAD=$P \
		"$T" wait-dlopen "$d/libkc.so" <"$d/go" >"$W/out" 2>"$W/err" &
	local pid=$! i=0
	exec 9>"$d/go"
	while ! grep -q ready "$W/out" && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
	XDG_CACHE_HOME=$d/cache "$B/xom" cache build -q "$d/libkc.so" 2>"$d/build-err"
	echo >&9
	exec 9>&-
	wait $pid; rc=$?
	t_check kept-index-changed '[ $rc = 0 ] && grep -q "libkc.so: [0-9]* pages\{0,1\} execute-only" $W/err && ! grep -q scanning $W/err' \
		"rc $rc: $(cat $W/out; err; cat $d/build-err)"
}
kept_index_changed
run "backend=none" "$T" raw "$B/tests/runtime/libswap1.so"
t_check handler-raw 'grep -q "^PASS handler-raw" $W/out && grep -q "put its own back in front" $W/err' "$(cat $W/out; err)"
XOM_OPTIONS=$BASE:backend=none:verbose=1 LD_PRELOAD=$P /bin/sh -c "$T call" 2>"$W/err"; rc=$?
t_check exec-inherits '[ $rc = 0 ] && grep -q "/xomtest: " $W/err && grep -q "/dash: \|/sh: \|/bash: " $W/err' "rc $rc: $(err)"

# ---- hardening that shows without enforcement --------------------------------
# A relative LD_PRELOAD path and a chdir: the helper beside the library at
# start-up runs, not the one the new directory would name.
mkdir -p "$W/evil/build"
printf '#!/bin/sh\ntouch %s/evil-ran\nexit 1\n' "$W" >"$W/evil/build/xom-plan"
chmod +x "$W/evil/build/xom-plan"
cp "$LIB" "$W/late/libchdir.so"
(cd "$R" && XOM_OPTIONS=$BASE:backend=none LD_PRELOAD=${B#"$R"/}/libxom.so \
	"$T" chdir-dlopen "$W/evil" "$W/late/libchdir.so" >"$W/out" 2>"$W/err")
t_check helper-after-chdir '[ ! -e $W/evil-ran ] && grep -q "^PASS" $W/out && ! grep -q "analysis failed\|no scanner" $W/err' "$(cat $W/out; err)"
# Descriptor 2 closed and reused for a file: no xom line may land in it.
cp "$LIB" "$W/late/libfd2.so"
run "backend=none:verbose=1:require=0" "$T" fd2 "$W/db" "$W/late/libfd2.so"
t_check log-descriptor-reused '[ "$(cat $W/db)" = DATA ]' "the file holds: $(head -c 300 $W/db)"
# Standard descriptors closed before the program starts (GLib's spawn
# tests close stdout, then run a child through the door): the helper, the
# pipe and /dev/null land there, and the helper must start all the same
# and its plans reach the cache.  Where stderr is open, nothing is said.
for c in 1 0-1 1-2 0-1-2 2; do
	rm -f "$W/err"
	(
		for fd in $(echo $c | tr - ' '); do eval "exec $fd>&-"; done
		XDG_CACHE_HOME=$W/stdio-$c XOM_OPTIONS=$BASE:backend=none LD_PRELOAD=$P /bin/true
		echo $? >"$W/rc"
	) 2>"$W/err"
	t_check "closed-std-$c-scans" '[ "$(cat $W/rc)" = 0 ] && [ -s $W/stdio-$c/xom/plans ] && ! [ -s $W/err ]' "rc $(cat $W/rc), $(ls $W/stdio-$c/xom 2>&1 | tr '\n' ' ') stderr: $(err)"
done
# What the helper starts with, logged by helperspy beside a copy of
# libxom.so: xom sets its three standard descriptors whatever the host left
# there (stdin the read end of an empty pipe, stdout the plans' pipe,
# stderr xom's log or /dev/null), and none of the host's others reaches it:
# a host's client socket on stdin, or any descriptor it left open, must
# not be held open by a helper that may run for minutes.
spy_lib() { # spy_lib DIR: a copy of libxom.so in DIR, its helper helperspy before the real one
	mkdir -p "$1" && cp "$P" "$1/libxom.so" && cp "$B/tests/runtime/helperspy" "$1/xom-plan" &&
		cp "$B/xom-plan" "$1/xom-plan.real" && : >"$1/spy.log"
}
SP=$W/spy
spy_lib "$SP"
spy_fds() { # spy_fds SETUP [WRAP]: /bin/true through that copy, after the shell's SETUP
	rm -rf "$W/spyc" "$W/fds"
	( eval "$1"; eval "${2:-}" env XDG_CACHE_HOME="$W/spyc" XOM_OPTIONS="$BASE:backend=none" \
		LD_PRELOAD="$SP/libxom.so" /bin/true ) 2>"$W/err"
	grep '^fds ' "$SP/spy.log" | tail -n 1 >"$W/fds"
}
spy_fds "exec 0</etc/hostname 7</dev/null"
t_check helper-fds-host-left-open '[ -s $W/spyc/xom/plans ] && [ "$(cat $W/fds)" = "fds 0:pipe-r 1:pipe-w 2:file more 0" ]' \
	"the helper got [$(cat $W/fds)]: $(err)"
spy_fds "exec 0<&- 2>&-"
t_check helper-fds-host-closed '[ -s $W/spyc/xom/plans ] && [ "$(cat $W/fds)" = "fds 0:pipe-r 1:pipe-w 2:null more 0" ]' \
	"the helper got [$(cat $W/fds)]: $(err)"
# No /dev/null at all (a bare root): the helper starts, its stderr a
# descriptor where writes fail, never a file it opens itself.
if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
	t_skip helper-fds-no-dev-null "needs root and unshare -m (a mount namespace)"
else
	spy_fds "exec 2>&-" "unshare -m sh -c 'mount -t tmpfs tmpfs /dev && exec \"\$@\"' sh"
	t_check helper-fds-no-dev-null '[ -s $W/spyc/xom/plans ] && [ "$(cat $W/fds)" = "fds 0:pipe-r 1:pipe-w 2:pipe-r more 0" ]' \
		"the helper got [$(cat $W/fds)]: $(err)"
fi
# A file-size limit: writing plans must not kill the program.
run_limited() { (ulimit -f 16; XOM_OPTIONS=$BASE:backend=none LD_PRELOAD=$P XDG_CACHE_HOME=$W/small /bin/echo hello) >"$W/out" 2>"$W/err"; rc=$?; }
run_limited
t_check file-size-limit '[ $rc = 0 ] && [ "$(cat $W/out)" = hello ] && [ -z "$(find $W/small $XDG_RUNTIME_DIR -name "*.tmp" 2>/dev/null)" ]' "rc $rc: $(err)"
run_limited
t_check file-size-limit-again '[ $rc = 0 ] && [ "$(cat $W/out)" = hello ]' "rc $rc: $(err)"
# Scans in one thread while another makes libc load gconv modules, a
# fork from a third, a cancellation and a longjmp: nothing may hang.
cp "$LIB" "$W/late/libscan.so"
timeout 60 env XOM_OPTIONS=$BASE:backend=none:cache=off LD_PRELOAD=$P "$T" iconv-dlopen "$W/late/libscan.so" 3 >"$W/out" 2>"$W/err"; rc=$?
t_check no-deadlock-iconv-dlopen '[ $rc = 0 ] && grep -q "^PASS" $W/out' "rc $rc (124: hung): $(cat $W/out; err)"
BIG=$B/tests/runtime/libbulk.so
timeout 90 env XOM_OPTIONS=$BASE:backend=none:cache=off LD_PRELOAD=$P "$T" fork-scan "$BIG" 10 >"$W/out" 2>"$W/err"; rc=$?
t_check fork-during-scan '[ $rc = 0 ] && grep -q "^PASS" $W/out' "rc $rc (124: hung): $(cat $W/out; err)"
for m in cancel-scan jump-scan; do
	timeout 90 env XOM_OPTIONS=$BASE:backend=none:cache=off LD_PRELOAD=$P "$T" $m "$BIG" "$LIB" >"$W/out" 2>"$W/err"; rc=$?
	t_check "$m" '[ $rc = 0 ] && grep -q "^PASS" $W/out' "rc $rc (124: hung): $(cat $W/out; err)"
done
# A library without a build-id, renamed over by another build between its
# mapping and xom's look at the file: the plan of the file now on disk does
# not describe the bytes mapped, and is not used.
S1=$W/swap/libswap.so
mkdir -p "$W/swap"; cp "$B/tests/runtime/libswap1.so" "$S1"; cp "$B/tests/runtime/libswap2.so" "$W/swap/two.so"
XOM_SWAP_FROM=$W/swap/two.so XOM_SWAP_TO=$S1 run "backend=none:verbose=1" "$T" maps "$S1"
t_check renamed-during-dlopen 'grep -q "$S1: the file on disk is not the one mapped; left unprotected" $W/err' "$(err)"
# Removed before xom can stat it: left unprotected with one line, and
# under require=1 the dlopen fails instead.
cp "$B/tests/runtime/libswap1.so" "$S1"
XOM_SWAP_UNLINK=$S1 run "backend=none" "$T" maps "$S1"
t_check unstattable-said 'grep -q "$S1: cannot stat the file (no such file, errno 2); left unprotected" $W/err' "$(err)"
cp "$B/tests/runtime/libswap1.so" "$S1"
XOM_SWAP_UNLINK=$S1 run "backend=none:require=1" "$T" maps "$S1"
t_check require-unstattable-refused '[ $rc != 0 ] && grep -q "dlopen $S1: .*require=1" $W/out' "rc $rc: $(cat $W/out) $(err)"
# Rewritten in place, size and time kept: a new identity all the same.
cp "$B/tests/runtime/libswap1.so" "$S1"; touch -d @1000000000 "$S1"
run "backend=none:verbose=1" "$T" maps "$S1"
cat "$B/tests/runtime/libswap2.so" >"$S1"; touch -d @1000000000 "$S1"
run "backend=none:verbose=1" "$T" maps "$S1"
t_check rewritten-in-place 'grep -q "scanning 1 object" $W/err && grep -q "$S1: [0-9]* pages\{0,1\} execute-only" $W/err' "$(err)"

# ---- a set-user-ID program's scan is not its caller's to break -----------------
# xom reaches a set-user-ID program only through /etc/ld.so.preload.  Here
# that file and /etc/xom.conf exist only in a mount namespace of the test's
# own, whose /etc is an overlay of the machine's (the machine's /etc is not
# touched), with no system store (a tmpfs over /var/cache): each run scans
# through the helper.  Its caller, nobody, lowers the limits first.  A copy
# of libxom.so beside helperspy, which logs what the helper is started with
# and then runs the real one, is what the preload names.
S=$W/sec
ns() { # ns COMMAND: a shell command line, as root, in that namespace
	unshare -m sh -c "mount -t overlay overlay -o lowerdir=/etc,upperdir=$S/up,workdir=$S/work /etc &&
		mount -t tmpfs -o mode=755 tmpfs /var/cache && $1"
}
sec_run() { # sec_run ULIMIT PROG: PROG /proc/self/status and limits as nobody, after ulimit ULIMIT
	: >"$S/lib/spy.log"
	ns "setpriv --reuid=65534 --regid=65534 --clear-groups sh -c 'ulimit $1; exec $2 /proc/self/status /proc/self/limits' >$W/out 2>$W/err; echo \$? >$W/rc"
	rc=$(cat "$W/rc" 2>/dev/null)
}
planned_libc() { grep -Eq "libc.so.6: [1-9][0-9]* pages execute-only" "$W/err" && ! grep -q "analysis failed" "$W/err"; }
spy() { tail -n 1 "$S/lib/spy.log"; }
spy_sched() { tail -n 2 "$S/lib/spy.log" | head -n 1; }
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! unshare -m true 2>/dev/null; then
	why="needs root, setpriv and unshare -m (a mount namespace)"
elif ! mkdir -p "$S/lib" "$S/up" "$S/work" || ! chmod 755 "$W" "$S" "$S/lib" "$S/up" ||
	! unshare -m sh -c "mount -t overlay overlay -o lowerdir=/etc,upperdir=$S/up,workdir=$S/work /etc" 2>/dev/null; then
	why="cannot mount an overlay over /etc in a mount namespace"
else
	why=""
fi
if [ -n "$why" ]; then
	for t in secure-soft-limit secure-helper-owned secure-nonroot-soft-limit secure-hard-limit-said secure-root-hard-limit secure-files-limit secure-process-limit secure-schedule; do
		t_skip $t "$why"
	done
else
	spy_lib "$S/lib" && chmod 666 "$S/lib/spy.log"
	cp /bin/cat "$S/cat-root" && chmod 4755 "$S/cat-root"
	cp /bin/cat "$S/cat-daemon" && chown 1:1 "$S/cat-daemon" && chmod 4755 "$S/cat-daemon"
	echo "$S/lib/libxom.so" >"$S/up/ld.so.preload"
	printf '* mode=off\n%s/cat-* mode=enforce:backend=none:verbose=1\n%s/cat-daemon require=1\n' "$S" "$S" >"$S/up/xom.conf"
	chmod 644 "$S/up/ld.so.preload" "$S/up/xom.conf"
	# A lowered soft limit: the helper raises it again, and libc is planned.
	if findmnt -no OPTIONS -T "$S" | grep -qw nosuid; then
		for t in secure-soft-limit secure-helper-owned secure-nonroot-soft-limit secure-hard-limit-said secure-root-hard-limit secure-files-limit secure-process-limit secure-schedule; do
			t_skip $t "$S is on a nosuid mount"
		done
	else
		sec_run "-S -v 20000" "$S/cat-root"
		t_check secure-soft-limit '[ "$rc" = 0 ] && planned_libc' "rc $rc: $(err)"
		# The helper is root's alone (real, effective and saved user ID), so
		# nobody cannot signal it, and it dumps no core; the program itself
		# keeps its caller's user ID and limits.
		t_check secure-helper-owned 'spy | grep -q "^ids 0 0 0 as -1 -1 core 0 0$" &&
			grep -Eq "^Uid:[[:space:]]+65534[[:space:]]+0[[:space:]]+0[[:space:]]" $W/out &&
			grep -Eq "^Max address space +20480000 +unlimited +bytes" $W/out &&
			[ "$(grep "^Max core file size" $W/out)" = "$(grep "^Max core file size" /proc/self/limits)" ]' \
			"helper: $(spy); program: $(grep -E "^Uid|^Max (address|core)" $W/out)"
		# A program set-user-ID to another user (daemon), under require=1:
		# the same, with daemon's identity.
		sec_run "-S -v 20000" "$S/cat-daemon"
		t_check secure-nonroot-soft-limit '[ "$rc" = 0 ] && planned_libc && spy | grep -q "^ids 1 1 1 as -1 -1 core 0 0$"' "rc $rc, helper: $(spy): $(err)"
		# The host's own soft limits on open files and processes, which the
		# pipe and the first clone count against: raised for those calls.
		sec_run "-S -n 8; exec 3</dev/null 4</dev/null 5</dev/null" "$S/cat-root"
		t_check secure-files-limit '[ "$rc" = 0 ] && planned_libc' "rc $rc: $(err)"
		sec_run "-S -p 1" "$S/cat-daemon"
		t_check secure-process-limit '[ "$rc" = 0 ] && planned_libc' "rc $rc: $(err)"
		# A helper started at the lowest priority, on the idle policy, gets
		# the ordinary ones back (SCHED_OTHER is 0).
		sec_run "-S -c 0 && renice -n 19 \$\$ >/dev/null && chrt -i -p 0 \$\$" "$S/cat-root"
		t_check secure-schedule '[ "$rc" = 0 ] && planned_libc && spy_sched | grep -q "^sched 0 nice 0$"' \
			"rc $rc, helper: $(spy_sched): $(err)"
		# A lowered hard limit binds a program that may not raise it: one
		# line names it, and require=1 refuses the program.
		sec_run "-v 20000" "$S/cat-daemon"
		t_check secure-hard-limit-said '[ "$rc" = 126 ] && grep -q "^xom: the scanner ran short of the hard limits this program was started with, which xom cannot raise: address space 19 MB (wants 1024)$" $W/err && grep -q "^xom: refusing to run: .*cannot be protected (require=1)$" $W/err' "rc $rc: $(err)"
		# A set-user-ID-root program raises it where root may
		# (CAP_SYS_RESOURCE; some containers withhold it).
		sec_run "-v 20000" "$S/cat-root"
		if sh -c 'ulimit -H -v 20000 && ulimit -H -v unlimited' 2>/dev/null; then
			t_check secure-root-hard-limit '[ "$rc" = 0 ] && planned_libc && spy | grep -q "^ids 0 0 0 as -1 -1 "' "rc $rc, helper: $(spy): $(err)"
		else
			t_check secure-root-hard-limit '[ "$rc" = 0 ] && grep -q "ran short of the hard limits .*address space 19 MB" $W/err && grep -q "libc.so.6: analysis failed: out of memory; left unprotected" $W/err' "rc $rc (root here cannot raise a hard limit): $(err)"
		fi
	fi
fi

# ---- the kernel key's failure paths (loader/kernkey.c) ---------------------------
# Taken on any machine: kernkey-test calls the runtime under a filter like
# systemd's MemoryDenyWriteExecute=yes; the guest runs it with keys too.
c_cases() { # c_cases PROGRAM N: its PASS and FAIL lines as results, N of them
	"$B/tests/runtime/$1" >"$W/out" 2>"$W/err"; rc=$?
	n=0
	while IFS= read -r line; do
		case $line in
		"PASS "*) n=$((n + 1)); t_pass "${line#PASS }" ;;
		"FAIL "*) n=$((n + 1)); x=${line#FAIL }; t_fail "${x%%:*}" "${x#*: } $(err)" ;;
		esac
	done <"$W/out"
	[ $rc = 0 ] && [ $n = "$2" ] || t_fail "$1" "rc $rc, $n results: $(cat "$W/out") $(err)"
}
c_cases kernkey-test 6

# ---- the lock's owner in children of every kind (loader/batch.c) ----------------
c_cases lock-test 4

# ---- what needs protection keys -------------------------------------------------
for t in enforce-self enforce-libc maps real-programs fork-exec backtrace writes pkey-free map-count secure system-preload; do
	t_skip "$t" "$([ $pku = 1 ] && echo "runs in the emulated-PKU VM (tests/runtime/vm-enforce.sh)" || echo "no protection keys on this machine; runs in the emulated-PKU VM")"
done
t_summary
