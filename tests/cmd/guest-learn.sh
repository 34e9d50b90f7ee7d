#!/bin/sh
# xom learn and profiles, on Debian's gcc (issue 15), in the emulated-PKU
# guest (tests/vm/guest.list).  gcc 12's cc1 reads the first bytes of its
# own function output_section_asm_op when it assembles a global variable
# (tests/learn/hello.c): without a profile the compile is blocked, with the
# shipped one (profiles/gcc-12.profile) it works through both doors
# while the rest of cc1 stays execute-only, which a probe proves page by
# page: a key that let reads through would count no unreadable page.
# Each test prints "PASS name", "FAIL name: detail" or "SKIP name: reason".
# Two parts, so that each stays within the guest's time for one program:
#   guest-learn.sh learn      the compile blocked, and xom learn
#   guest-learn.sh profiles   the shipped profile (beside the library and in
#                             the system store) and the user's, found by
#                             themselves, and a stale one
set -u
part=${1:-}
case $part in learn|profiles) ;; *) echo "usage: $0 learn|profiles" >&2; exit 64 ;; esac
cd /xom 2>/dev/null || cd "$(dirname "$0")/../.."
. tests/lib.sh
xom=$PWD/build/xom probe=$PWD/build/tests/cmd/probe
pageprobe=$PWD/build/tests/runtime/libxomprobe.so
# gcc says where its cc1 is (gcc 14 keeps it under /usr/libexec); the
# profile shipped for this gcc's major version holds what cc1 reads: the
# page, the read's offset and the function, which the tests expect.
cc1=$(gcc -print-prog-name=cc1)
gccv=$(gcc -dumpversion)
shipped=$PWD/build/profiles/gcc-$gccv.profile
tmp=$(mktemp -d)
# The system store's profiles folder: root's, as the runtime requires.
sysprof=/var/cache/xom/profiles
trap 'rm -rf "$tmp" "$sysprof"' EXIT
# gcc's plans, made on the host (tests/cmd/cmd-tests.mk): scanning cc1
# here would take a minute.  A cache of our own, and a profile folder of
# our own.
mkdir -p "$tmp/cache"
cp -a build/tests/learn/cache/xom "$tmp/cache/" 2>/dev/null && chmod 700 "$tmp/cache/xom"
export XDG_CACHE_HOME=$tmp/cache XDG_CONFIG_HOME=$tmp/config
unset XOM_OPTIONS
cp tests/learn/hello.c "$tmp/"
# A gcc for which no profile is shipped (build/profiles holds a copy of
# each) reads none of its own code (gcc 14, profiles/README.md): that is
# what the learn part checks then, and there is no profile to find.
noprofile=0
if [ -x /usr/bin/gcc ] && ls build/profiles/*.profile >/dev/null 2>&1 && [ ! -e "$shipped" ]; then
	noprofile=1
	if [ $part = profiles ]; then
		t_skip gcc-profiles "no profile is shipped for gcc $gccv: it reads none of its own code (profiles/README.md)"
		t_summary
		exit 0
	fi
fi
cd "$tmp" || exit 1

err() { tail -c 600 "$tmp/err" | tr '\n' '|'; }
for f in "$cc1" /usr/bin/gcc "$pageprobe" "$shipped" build-plans; do
	case $f in
	build-plans) [ -s "$tmp/cache/xom/plans" ] && continue ;;
	"$shipped") { [ $noprofile = 1 ] || [ -e "$f" ]; } && continue ;;
	*) [ -e "$f" ] && continue ;;
	esac
	t_fail gcc-setup "missing: $f (make vm-progs builds the plans and the profile copy; tests/vm/files.list copies gcc)"
	t_summary
	exit 1
done

# What the compiled program prints, as the plain compile gives it.
echo "hello, world 42" >"$tmp/want"

# cc1's code pages and the execute-only ones, by its plan.
"$xom" scan --json "$cc1" >"$tmp/cc1.json"
cc1_exec=$(sed -n 's/.*"exec_pages": *\([0-9]*\).*/\1/p' "$tmp/cc1.json")
cc1_xom=$(sed -n 's/.*"xom_pages": *\([0-9]*\).*/\1/p' "$tmp/cc1.json")

# run_gcc NAME DOOR [XOM_OPTIONS]: compiles hello.c under xom run with the
# page probe in every process (its counts in $tmp/probe-NAME); rc, out, err.
run_gcc() {
	rm -f "$tmp/probe-$1" a.out
	XOM_PROBE_OUT=$tmp/probe-$1 LD_PRELOAD=$pageprobe XOM_OPTIONS=${3:-} \
		"${runxom:-$xom}" run $2 -- gcc -O2 hello.c >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# cc1's line of a probe file: "[main] UNREADABLE PAGES" with cc1's count
# of code pages (the probe names every main program [main]).
cc1_probe() {
	awk -v n="$cc1_exec" '$1 == "[main]" && $3 == n { print $2; exit }' "$1"
}

# ---- a gcc that reads none of its code: it compiles under xom, through
# both doors and without a profile, with cc1 execute-only, and learning
# the compile records no page.
if [ $noprofile = 1 ]; then
	for d in preload audit; do
		door=; [ $d = audit ] && door=--audit
		run_gcc "none-$d" "$door" profiles=off
		n=$(cc1_probe "$tmp/probe-none-$d")
		if [ $rc = 0 ] && [ -x a.out ] && ./a.out >"$tmp/got" && cmp -s "$tmp/want" "$tmp/got" &&
			[ "${n:-0}" -gt 0 ] && ! grep -q "^xom: " "$tmp/err"; then
			t_pass "gcc-$gccv-runs-$d"
		else
			t_fail "gcc-$gccv-runs-$d" "rc $rc, cc1 execute-only pages: ${n:-none}: $(err)"
		fi
	done
	"$xom" learn -o "$tmp/gcc.profile" -- gcc -O2 hello.c >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc = 0 ] && grep -q "^xom: learn: 0 pages read" "$tmp/err" && ! grep -qv '^#' "$tmp/gcc.profile" &&
		t_pass "gcc-$gccv-learns-nothing" || t_fail "gcc-$gccv-learns-nothing" "rc $rc: $(err)"
	t_summary
	exit 0
fi

# What the shipped profile says cc1 reads: its page (0xe93000 for gcc 12),
# the read's offset up to its last digit (0xe9375) and the function.
page=$(awk '$1 ~ /^[0-9a-f]+$/ && length($1) == 40 { print $2; exit }' "$shipped")
at=$(sed -n 's/^[0-9a-f]* 0x[0-9a-f]* [^ ]* # read of [^ ]*+\(0x[0-9a-f]*\)[0-9a-f], in .*/\1/p' "$shipped" | head -n 1)
fn=$(sed -n 's/^[0-9a-f]* 0x[0-9a-f]* [^ ]* # read of [^ ]*, in \([^ ]*\) by .*/\1/p' "$shipped" | head -n 1)
if [ -z "$page" ] || [ -z "$at" ] || [ -z "$fn" ]; then
	t_fail gcc-setup "cannot read cc1's page, offset and function from $shipped: '$page' '$at' '$fn'"
	t_summary
	exit 1
fi

# The issue's line: cc1's read of its own code, by libc's strcmp, which
# is a local function of the stripped libc: no symbol covers it, and none
# may be named.
blocked_line="^xom: blocked read of 0x[0-9a-f]+ \\($cc1\\+$at[0-9a-f], in $fn\\) by instruction at 0x[0-9a-f]+ \\(/[^ ]*libc\\.so\\.6\\+0x[0-9a-f]+, no symbol\\), pid [0-9]+\$"

if [ $part = learn ]; then
# The plain compile, without xom.
gcc -O2 hello.c -o plain >"$tmp/out" 2>"$tmp/err" && ./plain >"$tmp/got" &&
	cmp -s "$tmp/want" "$tmp/got" && t_pass gcc-plain ||
	t_fail gcc-plain "$(err)"

# ---- without a profile: blocked, with the issue's line ----------------------
for d in preload audit; do
	door=; [ $d = audit ] && door=--audit
	run_gcc "none-$d" "$door" profiles=off
	if [ $rc != 0 ] && grep -Eq "$blocked_line" "$tmp/err" && [ ! -e a.out ]; then
		t_pass "gcc-blocked-$d"
	else
		t_fail "gcc-blocked-$d" "rc $rc: $(err)"
	fi
done

# ---- xom learn ----------------------------------------------------------------
# A program that reads no code: an empty profile, in the file -o names and
# (without -o) in the profile folder under the program's build-id.
"$xom" learn -o "$tmp/empty.profile" -- "$probe" exit 0 >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc = 0 ] && [ -f "$tmp/empty.profile" ] && ! grep -qv '^#' "$tmp/empty.profile" &&
	grep -q "^xom: learn: 0 pages read" "$tmp/err"; then
	t_pass learn-empty
else
	t_fail learn-empty "rc $rc: $(err) profile: $(tr '\n' '|' <"$tmp/empty.profile")"
fi
"$xom" learn -- "$probe" exit 3 >"$tmp/out" 2>"$tmp/err"
rc=$?
# The file xom profile show finds for the probe is the one learn wrote.
id=$("$xom" profile show "$probe" 2>/dev/null | sed -n 's/^your profile .*\/\([0-9a-f]*\):$/\1/p')
f=$XDG_CONFIG_HOME/xom/profiles/$id
t_check learn-empty-folder '[ $rc = 3 ] && [ -n "$id" ] && [ -f "$f" ] && [ "$(grep -vc "^#" "$f")" = 1 ] && grep -q "^program $id " "$f"' \
	"rc $rc, id '$id': $(ls -l "$XDG_CONFIG_HOME/xom/profiles" 2>&1 | tr '\n' '|') $(err)"

# gcc: learns the page, says why, and what stays protected.
for d in preload audit; do
	rm -f "$tmp/learned-$d"
	"$xom" learn -o "$tmp/learned-$d" --door $d -- gcc -O2 hello.c -o learned \
		>"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc = 0 ] && grep -Eq "^[0-9a-f]{40} $page $cc1 # read of $cc1\+$at[0-9a-f], in $fn by /[^ ]*libc\.so\.6\+0x[0-9a-f]+, no symbol$" "$tmp/learned-$d" &&
		[ "$(grep -vc '^#' "$tmp/learned-$d")" = 2 ] &&
		grep -q "^xom: learn: 1 page read, 1 of them new" "$tmp/err" &&
		grep -q "^  $cc1 (build-id [0-9a-f]*): 1 page kept readable; $((cc1_xom - 1)) of $cc1_exec code pages stay execute-only" "$tmp/err" &&
		grep -q "^    $page  read of .*in $fn by " "$tmp/err"; then
		t_pass "learn-gcc-$d"
	else
		t_fail "learn-gcc-$d" "rc $rc: $(err) profile: $(tr '\n' '|' <"$tmp/learned-$d")"
	fi
done
# What was learned here is what was shipped.
"$xom" profile merge "$tmp/m1" "$tmp/learned-preload" "$tmp/learned-audit" 2>/dev/null
"$xom" profile merge "$tmp/m2" "$shipped" 2>/dev/null
t_check learn-gcc-shipped 'grep -v "^#" "$tmp/m1" | cut -d" " -f1-3 >"$tmp/c1" && grep -v "^#" "$tmp/m2" | cut -d" " -f1-3 >"$tmp/c2" && [ -s "$tmp/c1" ] && cmp -s "$tmp/c1" "$tmp/c2"' \
	"learned: $(tr '\n' '|' <"$tmp/m1" 2>/dev/null), shipped: $(tr '\n' '|' <"$tmp/m2" 2>/dev/null)"

fi

if [ $part = profiles ]; then
# ---- the shipped profile, beside the library -----------------------------------
# The build's runtime finds it in build/profiles, one file per program,
# as an installed one finds it in lib/xom/profiles.
rm -rf "$sysprof"
run_gcc beside ""
got=$(cc1_probe "$tmp/probe-beside")
t_check gcc-shipped-beside '[ $rc = 0 ] && [ -x a.out ] && ./a.out >"$tmp/got" && cmp -s "$tmp/want" "$tmp/got" && ! grep -q "^xom: blocked" "$tmp/err" && [ "$got" = $((cc1_xom - 1)) ]' \
	"rc $rc, cc1 unreadable '$got' of $cc1_exec (want $((cc1_xom - 1))): $(err)"
# The other sources, through a copy of the runtime that has no profiles
# beside it (in a folder that is root's alone, as the runtime requires).
rt=/xom/build/tests/learn/runtime
rm -rf "$rt" && mkdir -p -m 755 "$rt" &&
	cp /xom/build/xom /xom/build/libxom.so /xom/build/libxom-audit.so \
		/xom/build/xom-plan /xom/build/libxom-scan.so "$rt/"
runxom=$rt/xom
trap 'rm -rf "$tmp" "$sysprof" "$rt"' EXIT

# ---- the shipped profile, from the system store --------------------------------
"$xom" profile install --system "$shipped" >"$tmp/out" 2>"$tmp/err"
rc=$?
t_check profile-install-system '[ $rc = 0 ] && [ -f "$sysprof/$(sed -n "s/^program \([0-9a-f]*\) .*/\1/p" "$shipped")" ]' "$(err)"
"$xom" profile show "$cc1" >"$tmp/show" 2>&1
share=$(sed -n 's/.*: 1 page kept readable; \([0-9]* of [0-9]* code pages stay execute-only ([0-9.]*%)\)$/\1/p' "$tmp/show")
t_check profile-show-prog '[ -n "$share" ] && grep -q "^system profile $sysprof/" "$tmp/show"' "$(tr '\n' '|' <"$tmp/show")"
for d in preload audit; do
	door=; [ $d = audit ] && door=--audit
	run_gcc "shipped-$d" "$door"
	got=$(cc1_probe "$tmp/probe-shipped-$d")
	if [ $rc = 0 ] && [ -x a.out ] && ./a.out >"$tmp/got" && cmp -s "$tmp/want" "$tmp/got" &&
		! grep -q "^xom: blocked" "$tmp/err" && [ "$got" = $((cc1_xom - 1)) ]; then
		t_pass "gcc-shipped-$d"
		echo "# gcc-shipped-$d: cc1 $got of $cc1_exec code pages unreadable ($share by the plan and the profile)"
	else
		t_fail "gcc-shipped-$d" "rc $rc, cc1 unreadable '$got' of $cc1_exec (want $((cc1_xom - 1))): $(err)"
	fi
done
# (That a folder or file others can write is ignored, and a program's
# section of another program, is checked without keys by
# tests/cmd/native-learn.sh, which counts the pages kept readable.)

# ---- your own profile, found by itself ------------------------------------------
rm -rf "$sysprof" "$XDG_CONFIG_HOME/xom/profiles"
"$xom" profile install "$shipped" >"$tmp/out" 2>"$tmp/err"
run_gcc user ""
got=$(cc1_probe "$tmp/probe-user")
t_check profile-user '[ $rc = 0 ] && [ -x a.out ] && [ "$got" = $((cc1_xom - 1)) ]' "rc $rc, cc1 unreadable '$got': $(err)"
pf=$(ls "$XDG_CONFIG_HOME"/xom/profiles/* | head -n 1)
# A stale item (cc1's page under another build-id): ignored, with one line.
sed "s/^[0-9a-f]\{40\} $page /0123456789abcdef0123456789abcdef01234567 $page /" "$pf" >"$pf.new" &&
	mv "$pf.new" "$pf" && chmod 644 "$pf"
run_gcc stale ""
t_check profile-stale '[ $rc != 0 ] && [ "$(grep -c "^xom: profile .*: its object $cc1 is for build 0123456789abcdef0123456789abcdef01234567, not for the file loaded now ([0-9a-f]*); ignored$" "$tmp/err")" = 1 ] && grep -Eq "$blocked_line" "$tmp/err"' "rc $rc: $(err)"
fi

t_summary
