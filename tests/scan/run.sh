#!/bin/bash
# Tests of build/xom-scan against inputs with known answers.
# Usage: tests/scan/run.sh BUILDDIR
#
# The inputs are built here from tests/scan/inputs/*.S, so every expected
# answer follows from a few lines of assembly.  Each check prints
# "PASS name" or "FAIL name: detail", and the run ends with
# "N passed, N failed, N skipped".  Exit status 0 when nothing failed.
#
# Environment: CC (default gcc) builds the inputs; SANFLAGS says whether
# xom-scan was built with sanitizers, which changes how memory is limited.
set -u

B=${1:?usage: tests/scan/run.sh BUILDDIR}
SRC=$(cd "$(dirname "$0")" && pwd)
SCAN=$B/xom-scan
H=$B/tests/scan                 # helpers, built by tests/scan/scan.mk
W=$H/work                       # inputs and outputs of this run
CC=${CC:-gcc}
PAGE=4096
. "$SRC/../lib.sh"

rm -rf "$W" && mkdir -p "$W/bad"

# An unbounded allocation must show up as an error, not as a machine that
# swaps.  ASan reserves terabytes of address space, so under ASan the limit
# is its own allocation cap instead of ulimit -v.
case "${SANFLAGS:-}" in
*address*)
	export ASAN_OPTIONS=allocator_may_return_null=1:max_allocation_size_mb=2048:detect_leaks=1
	export UBSAN_OPTIONS=print_stacktrace=1
	vlimit=unlimited ;;
*)	vlimit=2097152 ;;
esac

# Runs the scanner with a time and memory limit.  Sets rc, out (stdout
# file) and err (stderr file); $1 names the output files.
scan() {
	local tag=$1
	shift
	out=$W/$tag.out err=$W/$tag.err
	(ulimit -v "$vlimit"; exec timeout 10 "$SCAN" "$@") >"$out" 2>"$err"
	rc=$?
}

# Describes how the last scan died, or prints nothing if it exited normally
# without a sanitizer report.
death() {
	if [ "$rc" = 124 ]; then
		echo "timed out after 10 s"
	elif [ "$rc" -ge 128 ]; then
		echo "killed by signal $((rc - 128))"
	elif grep -qE 'Sanitizer|runtime error:' "$err"; then
		echo "sanitizer report: $(grep -m1 -E 'Sanitizer|runtime error:' "$err")"
	fi
}

first_err() { head -n 1 "$err"; }

# --- helpers for maps ---------------------------------------------------------

q() { "$H/scanq" "$@"; }

# Scans FILE into $W/TAG.out and checks the shape; returns 1 (after a FAIL)
# when there is no usable map.
map_of() {
	local tag=$1 file=$2 d msg
	scan "$tag" --json "$file"
	d=$(death)
	if [ -n "$d" ]; then
		t_fail "$tag: scan" "$d"
		return 1
	fi
	if [ "$rc" != 0 ]; then
		t_fail "$tag: scan" "exit $rc: $(first_err)"
		return 1
	fi
	if [ "$(wc -l <"$out")" != 1 ]; then
		t_fail "$tag: scan" "expected one JSON line, got $(wc -l <"$out")"
		return 1
	fi
	if ! msg=$(q "$out" check); then
		t_fail "$tag: json" "$msg"
		return 1
	fi
	t_pass "$tag: scan and json shape"
}

# Symbol address from the unstripped build.  Arguments: SYMFILE NAME.
sym() {
	nm "$1" | awk -v s="$2" '$3 == s { print "0x" $1; exit }'
}

# expect_page TAG JSON ADDR WANT [REASON]: the page holding ADDR is WANT
# (xom or readable), and if REASON is given, a data range holding ADDR has it.
expect_page() {
	local tag=$1 json=$2 addr=$3 want=$4 reason=${5:-} got r
	local a=$(printf '%#x' "$addr")
	got=$(q "$json" page "$a")
	if [ "$got" != "$want" ]; then
		r=$(q "$json" reason "$a")
		t_fail "$tag @ $a" "expected $want, got $got (reasons at that address: $r)"
		return
	fi
	if [ -n "$reason" ]; then
		r=$(q "$json" reason "$a")
		case " $r " in
		*" $reason "*) ;;
		*) t_fail "$tag @ $a" "readable as expected, but reason is '$r', expected $reason"
		   return ;;
		esac
	fi
	t_pass "$tag @ $a $want${reason:+ ($reason)}"
}

expect_ref() {
	local tag=$1 json=$2 addr=$3 want=$4 got
	got=$(q "$json" ref "$(printf '%#x' "$addr")")
	case " $got " in
	*" $(printf '%#x' "$want") "*) t_pass "$tag: ref of $(printf '%#x' "$addr")" ;;
	*) t_fail "$tag: ref of $(printf '%#x' "$addr")" "expected $(printf '%#x' "$want"), got $got" ;;
	esac
}

expect_eq() {
	if [ "$3" = "$4" ]; then t_pass "$1: $2"; else t_fail "$1: $2" "expected '$4', got '$3'"; fi
}

# --- building the inputs ------------------------------------------------------

build() {
	local out=$1
	shift
	if ! "$CC" "$@" -o "$W/$out" 2>"$W/$out.log"; then
		t_fail "build $out" "$(head -n 3 "$W/$out.log")"
		return 1
	fi
}

S=$SRC/inputs
built=1
build tables.so -shared -nostdlib -Wl,-z,separate-code "$S/tables.S" || built=0
build tables-nosep.so -shared -nostdlib -Wl,-z,noseparate-code "$S/tables.S" || built=0
build absolute -no-pie -nostdlib -Wl,-z,separate-code "$S/absolute.S" || built=0
build textrel.so -shared -nostdlib -Wl,-z,notext "$S/textrel.S" || built=0
build flow.so -shared -nostdlib -Wl,-z,separate-code "$S/flow.S" || built=0
build surface.so -shared -nostdlib -Wl,-z,separate-code "$S/surface.S" || built=0
build surface-ro.so -shared -nostdlib -Wl,-z,noseparate-code -DTAB_IN_RODATA "$S/surface.S" || built=0
build gadgets.so -shared -nostdlib -Wl,-z,separate-code "$S/gadgets.S" || built=0
build gadgets-nosep.so -shared -nostdlib -Wl,-z,noseparate-code "$S/gadgets.S" || built=0
for f in tables.so tables-nosep.so absolute gadgets.so flow.so; do
	strip --strip-all -o "$W/${f%.so}-strip${f#"${f%.so}"}" "$W/$f" || built=0
done
# A malformed file (a valid identification, the header cut short) and one
# that is not ELF at all.
head -c 40 "$W/tables.so" >"$W/truncated.so" || built=0
echo "not an ELF file" >"$W/not-elf" || built=0
if [ "$built" = 0 ] || [ ! -x "$SCAN" ]; then
	[ -x "$SCAN" ] || t_fail "setup" "$SCAN is missing"
	t_summary
	exit 1
fi

# --- command line -------------------------------------------------------------

t_usage() {
	local args
	for args in "" "--bogus $W/tables.so" "--json" "-j0 $W/tables.so" "-jx $W/tables.so"; do
		# shellcheck disable=SC2086
		scan usage $args
		if [ -n "$(death)" ]; then
			t_fail "usage: xom-scan $args" "$(death)"
		else
			expect_eq "usage" "xom-scan $args exits 64" "$rc" 64
		fi
	done
}

t_io() {
	scan io --json "$W/no-such-file"
	if [ "$rc" = 2 ] && grep -q "^xom-scan: $W/no-such-file: cannot read" "$err" &&
	   [ "$(wc -l <"$err")" = 1 ]; then
		t_pass "io: missing file is exit 2 with one 'cannot read' line"
	else
		t_fail "io: missing file" "exit $rc, stderr: $(first_err)"
	fi
	scan io --json "$W"
	if [ "$rc" = 1 ] && [ -z "$(death)" ] && [ "$(wc -l <"$err")" = 1 ] &&
	   grep -q "^xom-scan: $W: unsupported" "$err"; then
		t_pass "io: a directory is exit 1 with one 'unsupported' line"
	else
		t_fail "io: a directory" "exit $rc, stderr: $(first_err)"
	fi
}

# The exit status: 1 when a file is unsupported or malformed (the answer is
# no), 2 when a file or the environment fails (there is no answer), 64 for
# a usage error.  2 wins over 1 whatever the order of the files.
t_exit() {
	scan exit --json "$W/truncated.so"
	expect_eq "exit" "a malformed file exits 1" "$rc/$(first_err)" \
		"1/xom-scan: $W/truncated.so: malformed: truncated ELF header"
	scan exit "$W/not-elf"
	expect_eq "exit" "a file that is not ELF exits 1" "$rc" 1
	scan exit --map "$W/no-such-file"
	expect_eq "exit" "an unreadable path exits 2" "$rc" 2
	scan exit --bogus "$W/tables.so"
	expect_eq "exit" "a usage error exits 64" "$rc" 64
	scan exit --help
	expect_eq "exit" "--help exits 0 and states the codes" \
		"$rc/$(grep -c '^Exit status: 0 every file analysed; 1 ' "$out")" "0/1"
	scan exit "$W/truncated.so" "$W/no-such-file"
	expect_eq "exit" "malformed, then unreadable exits 2" "$rc" 2
	scan exit "$W/no-such-file" "$W/truncated.so"
	expect_eq "exit" "unreadable, then malformed exits 2" "$rc" 2
	if [ -w /dev/full ]; then
		(exec timeout 10 "$SCAN" --map "$W/tables.so" >/dev/full 2>"$W/exit-full.err")
		rc=$?
		expect_eq "exit" "stdout that cannot be written exits 2 with one line" \
			"$rc/$(wc -l <"$W/exit-full.err")" "2/1"
	else
		t_skip "exit: stdout that cannot be written" "no /dev/full"
	fi
}

# multi_case WANT WHAT DESC FILE...: two of the files are good and mapped,
# one error line says WHAT of the third, and the exit status is WANT.
multi_case() {
	local want=$1 what=$2 desc=$3
	shift 3
	scan multi --json "$@"
	if [ "$rc" = "$want" ] && [ "$(wc -l <"$out")" = 2 ] &&
	   [ "$(wc -l <"$err")" = 1 ] && grep -q "$what" "$err"; then
		t_pass "multi: $desc gives 2 maps, 1 error, exit $want"
	else
		t_fail "multi: $desc" "exit $rc, $(wc -l <"$out") maps, stderr: $(first_err)"
	fi
}

# Several files: every good one is mapped, the bad one named.
t_multi() {
	multi_case 2 "no-such-file: cannot read" "good, missing, good" \
		"$W/tables.so" "$W/no-such-file" "$W/gadgets.so"
	multi_case 1 "truncated.so: malformed" "good, malformed, good" \
		"$W/tables.so" "$W/truncated.so" "$W/gadgets.so"
	scan multi --json "$W/tables.so" "$W/gadgets.so"
	expect_eq "multi" "two good files exit 0 with two lines" "$rc/$(wc -l <"$out")" "0/2"
}

t_modes() {
	local m
	for m in "" "--map"; do
		# shellcheck disable=SC2086
		scan modes $m "$W/tables.so"
		if [ -z "$(death)" ] && [ "$rc" = 0 ] && [ -s "$out" ]; then
			t_pass "modes: xom-scan ${m:-(summary)} prints something, exit 0"
		else
			t_fail "modes: xom-scan ${m:-(summary)}" "exit $rc $(death) $(first_err)"
		fi
	done
}

# --- tables in .text ----------------------------------------------------------

# The answers for tables.S, page by page, as "FUNCTION PAGES WANT [REASON]":
# the page FUNCTION + PAGES*4096 must be WANT.  The page of `biased` itself
# holds the biased base address, so either answer is right there.
TABLES_EXPECT='
pad_first 0 xom
rip_load 0 xom
rip_load 1 readable rip-load
pad_rip 0 xom
sse_load 0 xom
sse_load 1 readable rip-load
sse_load 2 readable rip-load
pad_sse 0 xom
lea_index 0 xom
lea_index 1 readable table
lea_index 2 readable table
pad_lea 0 xom
biased 1 readable table
pad_bias 0 xom
get_str 0 xom
get_str 1 readable table
pad_str 0 xom
sw 0 xom
sw 1 readable table
pad_sw 0 xom
reg_cb 0 xom
cb_a 0 xom
cb_b 0 xom
cb_b 1 xom
pad_cb 0 xom
peek 0 xom
hookme 0 readable rip-load
pad_hook 0 xom
pf 0 xom
prefetched 0 xom
pad_last 0 xom
jpad 0 xom
jpad 1 readable table
pad_jpad 0 xom
'

# expect_pages TAG JSON SYMFILE EXPECT: each "FUNCTION PAGES WANT [REASON]"
# line of EXPECT holds for the page FUNCTION + PAGES * 4096.
expect_pages() {
	local tag=$1 json=$2 symf=$3 fn n want reason base
	while read -r fn n want reason; do
		[ -n "$fn" ] || continue
		base=$(sym "$symf" "$fn")
		if [ -z "$base" ]; then
			t_fail "$tag: $fn" "no symbol $fn in $symf"
			continue
		fi
		expect_page "$tag: $fn+${n}p" "$json" $((base + n * PAGE)) "$want" "$reason"
	done <<<"$4"
}

# check_tables TAG FILE SYMFILE
check_tables() {
	local tag=$1 file=$2 symf=$3 json
	map_of "$tag" "$file" || return
	json=$W/$tag.out
	expect_eq "$tag" "exec_pages" "$(q "$json" get exec_pages)" \
		"$("$H/elfq" "$file" execpages)"
	expect_pages "$tag" "$json" "$symf" "$TABLES_EXPECT"
	# The data ranges name the instruction that reads them.
	expect_ref "$tag" "$json" $(($(sym "$symf" rip_load) + PAGE)) "$(sym "$symf" rip_load)"
	expect_ref "$tag" "$json" $(($(sym "$symf" lea_index) + PAGE)) "$(sym "$symf" lea_index)"
	expect_ref "$tag" "$json" $(($(sym "$symf" get_str) + PAGE)) "$(sym "$symf" get_str)"
	expect_ref "$tag" "$json" $(($(sym "$symf" biased) + PAGE)) "$(sym "$symf" biased)"
	expect_ref "$tag" "$json" "$(sym "$symf" hookme)" "$(sym "$symf" peek)"
}

# Without separate-code the headers, .rodata and .eh_frame share the
# executable segment and must stay readable.
check_nosep_extra() {
	local tag=$1 file=$2 symf=$3 json=$W/$1.out
	expect_page "$tag: ELF header" "$json" 0 readable header
	expect_page "$tag: .rodata" "$json" "$(sym "$symf" ro_data)" readable section
	expect_page "$tag: .eh_frame" "$json" "$("$H/elfq" "$symf" section .eh_frame)" \
		readable section
}

same_readable() {
	local tag=$1 a=$2 b=$3
	if diff <(q "$a" readable) <(q "$b" readable) >"$W/$tag.diff"; then
		t_pass "$tag: stripped copy has the same readable pages"
	else
		t_fail "$tag" "readable pages differ after strip: $(tr '\n' ' ' <"$W/$tag.diff")"
	fi
}

t_tables() {
	check_tables tables.so "$W/tables.so" "$W/tables.so"
	check_tables tables-strip.so "$W/tables-strip.so" "$W/tables.so"
	[ -s "$W/tables.so.out" ] && [ -s "$W/tables-strip.so.out" ] &&
		same_readable tables-strip.so "$W/tables.so.out" "$W/tables-strip.so.out"
	check_tables tables-nosep.so "$W/tables-nosep.so" "$W/tables-nosep.so" &&
		check_nosep_extra tables-nosep.so "$W/tables-nosep.so" "$W/tables-nosep.so"
	check_tables tables-nosep-strip.so "$W/tables-nosep-strip.so" "$W/tables-nosep.so" &&
		check_nosep_extra tables-nosep-strip.so "$W/tables-nosep-strip.so" "$W/tables-nosep.so"
	[ -s "$W/tables-nosep.so.out" ] && [ -s "$W/tables-nosep-strip.so.out" ] &&
		same_readable tables-nosep-strip.so "$W/tables-nosep.so.out" "$W/tables-nosep-strip.so.out"
}

# --- code addresses in registers: what the uses say ---------------------------

# "FUNCTION PAGES WANT [REASON]" for flow.S, as for tables.S.
FLOW_EXPECT='
store_fp 0 xom
store_fp 1 xom
cont 0 xom
cont 1 xom
pic_base 0 xom
pic_base 1 xom
jt_ro 0 xom
jt_ro 1 xom
pick_fn 0 xom
pick_fn 1 xom
noreturn 0 xom
noreturn 1 xom
to_memcpy 0 xom
to_memcpy 1 readable table
two_regs 0 xom
two_regs 1 readable table
scaled8 0 xom
scaled8 1 readable table
nocfi 0 xom
nocfi 1 readable table
store_tab 0 xom
store_tab 1 readable table
spill 0 xom
spill 1 readable table
helper 0 xom
helper 1 readable table
across_call 0 xom
across_call 1 readable table
read_ret 0 xom
read_ret 1 readable table
long_fn 0 xom
long_fn 1 xom
long_fn 3 xom
long_tab 0 xom
long_tab 1 readable table
long_tab 3 readable table
spill_store 0 xom
spill_store 1 xom
push_cont 0 xom
push_cont 1 xom
spill_read 0 xom
spill_read 1 readable table
spill_memcpy 0 xom
spill_memcpy 1 readable table
spill_two 0 xom
spill_two 1 readable table
spill_scaled8 0 xom
spill_scaled8 1 readable table
spill_nocfi 0 xom
spill_nocfi 1 readable table
push_other 0 xom
push_other 1 readable table
spill_data 0 xom
spill_data 1 readable table
spill_alias 0 xom
spill_alias 1 readable table
spill_arg 0 xom
spill_arg 1 readable table
spill_vecread 0 xom
spill_vecread 1 readable table
spill_dead 0 xom
spill_dead 1 readable table
raw_ro 0 xom
raw_ro 1 xom
raw_near 0 xom
raw_near 1 xom
raw_near 2 readable table
raw_vex8 0 xom
raw_vex8 1 readable
raw_evex8 0 xom
vsib_cont 0 xom
vsib_cont 1 xom
vsib_base 0 xom
vsib_base 1 readable table
fwd_ro 0 xom
fwd_ro 1 xom
fwd_back 0 xom
fwd_back 1 readable table
plt_rax 0 xom
plt_rax 1 xom
plt_r10 0 xom
plt_r10 1 readable table
join_ret 0 xom
join_ret 1 xom
join_read 0 xom
join_read 1 readable table
store_rbp 0 xom
store_rbp 1 xom
spill_rbp 0 xom
spill_rbp 1 readable table
jmp_back 0 xom
jmp_back 1 xom
jmp_back_zero 1 readable table
jmp_far 1 readable
rbp_global 0 xom
rbp_global 1 xom
rbp_stack 0 xom
rbp_stack 1 readable table
rbp_pushpop 0 xom
rbp_pushpop 1 readable table
store_3dnow 0 xom
store_3dnow 1 xom
store_3dnow_hlt 1 readable table
idx_swap 0 xom
idx_swap 1 xom
idx_scaled 1 readable table
idx_code 1 readable table
plt_local 1 readable table
rbp_caller 1 readable table
rbp_popped 1 readable table
rbp_nested 1 readable table
rbp_detour 1 readable table
rbp_nocfi 1 readable table
alloc_arg 0 xom
alloc_arg 1 xom
alloc_in_arg 1 readable table
alloc_unknown 1 readable table
long_walk 0 xom
long_walk 1 xom
long_walk 2 xom
long_read 0 xom
long_read 1 xom
long_read 2 readable table
fwd_evex8 0 xom
fwd_evex8 1 xom
cgoto 0 xom
cgoto 1 xom
cgoto_read 0 xom
cgoto_read 1 readable table
cgoto_spill 0 xom
cgoto_spill 1 readable table
cgoto_deref 0 xom
cgoto_deref 1 readable table
cgoto_self 0 xom
cgoto_self 1 readable table
cgoto_nocfi 1 readable table
cgoto_base 0 xom
cgoto_base 1 readable table
cgoto_mixed 0 xom
cgoto_mixed 1 readable table
pad_last 0 xom
'

# raw_evex8 reads 64 bytes at 0x7f * 64 past a table's start, on its second
# page.  Where Capstone decodes the compressed displacement (Capstone 5),
# the read is known exactly and the first page, which nothing reads, is
# execute-only; where it does not (Capstone 4), the scanner knows only
# that the displacement is 0x7f times an N from 1 to 64, and the table runs
# from its start.  Both are safe; the helper evex8 says which is right for
# the Capstone the scanner is linked with.
check_evex8() {
	local tag=$1 json=$W/$1.out base how
	base=$(sym "$W/flow.so" raw_evex8)
	how=$("$H/evex8")
	case $how in
	exact)   expect_page "$tag: raw_evex8+1p, disp8*N decoded" "$json" \
			$((base + PAGE)) xom ;;
	inexact) expect_page "$tag: raw_evex8+1p, disp8*N measured" "$json" \
			$((base + PAGE)) readable table ;;
	*)       t_fail "$tag: raw_evex8" "evex8 answered '$how'" ;;
	esac
	expect_page "$tag: raw_evex8's read" "$json" $((base + PAGE + 0x1fc0)) \
		readable table
	expect_page "$tag: raw_evex8+2p" "$json" $((base + 2 * PAGE)) readable
}

check_flow() {
	map_of "$1" "$2" || return
	expect_pages "$1" "$W/$1.out" "$W/flow.so" "$FLOW_EXPECT"
	check_evex8 "$1"
}

t_flow() {
	check_flow flow.so "$W/flow.so"
	check_flow flow-strip.so "$W/flow-strip.so"
}

# --- non-PIE absolute addresses, text relocations -----------------------------

check_absolute() {
	local tag=$1 file=$2 s json=$W/$1.out
	map_of "$tag" "$file" || return
	s=$(sym "$W/absolute" _start)
	expect_page "$tag: _start" "$json" "$s" xom
	expect_page "$tag: mov \$imm32 table" "$json" $((s + PAGE)) readable absolute
	expect_page "$tag: movabs table" "$json" $((s + 2 * PAGE)) readable absolute
	expect_page "$tag: disp32(,%rdi,4) table" "$json" $((s + 3 * PAGE)) readable absolute
	expect_page "$tag: mov \$function" "$json" "$(sym "$W/absolute" cb_abs)" xom
	expect_page "$tag: pad_abs" "$json" "$(sym "$W/absolute" pad_abs)" xom
}

t_absolute() {
	check_absolute absolute "$W/absolute"
	check_absolute absolute-strip "$W/absolute-strip"
}

t_textrel() {
	local json=$W/textrel.so.out
	if ! readelf -d "$W/textrel.so" | grep -q TEXTREL; then
		t_fail "textrel.so" "the linker did not set DT_TEXTREL"
		return
	fi
	map_of textrel.so "$W/textrel.so" || return
	expect_eq textrel.so "no page is execute-only" "$(q "$json" get xom_pages)" 0
	expect_eq textrel.so "exec_pages" "$(q "$json" get exec_pages)" \
		"$("$H/elfq" "$W/textrel.so" execpages)"
	expect_eq textrel.so "a data range says textrel" "$(q "$json" hasreason textrel)" yes
}

# --- gadgets ------------------------------------------------------------------

# "OFFSET ANSWER" from g_func; ANSWER "xrstor" alone accepts either alignment
# (the bytes after a REX prefix: decoding from there is legal, but the
# instruction began one byte earlier).
GADGETS_EXPECT='
1 wrpkru unaligned
5 wrpkru aligned
8 xrstor aligned
12 xrstor unaligned
16 none
17 none
20 xrstor
23 xrstor aligned
'

check_gadgets() {
	local tag=$1 file=$2 symf=$3 g off want got json=$W/$1.out
	map_of "$tag" "$file" || return
	g=$(sym "$symf" g_func)
	while read -r off want; do
		[ -n "$off" ] || continue
		got=$(q "$json" gadget $((g + off)))
		case "$want" in
		xrstor) case "$got" in "xrstor aligned"|"xrstor unaligned") got=xrstor ;; esac ;;
		esac
		expect_eq "$tag" "gadget at g_func+$off" "$got" "$want"
	done <<<"$GADGETS_EXPECT"
}

t_gadgets() {
	local ro
	check_gadgets gadgets.so "$W/gadgets.so" "$W/gadgets.so" &&
		expect_eq gadgets.so "exactly 6 gadgets (.rodata is not executable)" \
			"$(q "$W/gadgets.so.out" get ngadgets)" 6
	check_gadgets gadgets-strip.so "$W/gadgets-strip.so" "$W/gadgets.so" &&
		expect_eq gadgets-strip.so "exactly 6 gadgets" \
			"$(q "$W/gadgets-strip.so.out" get ngadgets)" 6
	check_gadgets gadgets-nosep.so "$W/gadgets-nosep.so" "$W/gadgets-nosep.so" || return
	ro=$(sym "$W/gadgets-nosep.so" g_ro)
	case "$(q "$W/gadgets-nosep.so.out" gadget "$ro")" in
	wrpkru*) t_pass "gadgets-nosep.so: WRPKRU bytes in .rodata inside the exec segment" ;;
	*) t_fail "gadgets-nosep.so: .rodata gadget at $ro" "not listed" ;;
	esac
}

# The attack surface left: readable executable bytes and ret gadgets.
t_surface() {
	local json=$W/surface.so.out
	map_of surface.so "$W/surface.so" || return
	expect_eq surface.so "one readable page" "$(q "$json" get exec_pages)/$(q "$json" get xom_pages)" \
		"$(q "$json" get exec_pages)/$(($(q "$json" get exec_pages) - 1))"
	expect_eq surface.so "readable_bytes" "$(q "$json" get readable_bytes)" 4096
	expect_eq surface.so "ret_gadgets (see surface.S)" "$(q "$json" get ret_gadgets)" 3
	scan surface-text "$W/surface.so"
	expect_eq surface.so "the summary names both" \
		"$(grep -c '^  readable executable bytes: 4096, ret gadget candidates: 3$' "$out")" 1
	# The section-level method leaves .text execute-only, the table's page
	# with it (and crashes there).
	expect_eq surface.so "section-level readable bytes and gadgets" \
		"$(q "$json" get section_level.readable_bytes)/$(q "$json" get section_level.ret_gadgets)" 0/0

	# The table in .rodata, inside the one executable segment: every page
	# that stays readable holds no code, so both methods leave the same
	# bytes: the segment's, less its execute-only pages (readelf's count).
	json=$W/surface-ro.so.out
	map_of surface-ro.so "$W/surface-ro.so" || return
	local seg want
	seg=$(readelf -lW "$W/surface-ro.so" | awk '$1 == "LOAD" && $8 == "E" { print $6 }')
	want=$(( seg - 4096 * $(q "$json" get xom_pages) ))
	expect_eq surface-ro.so "readable_bytes (segment less execute-only pages)" \
		"$(q "$json" get readable_bytes)" "$want"
	expect_eq surface-ro.so "section-level readable bytes" \
		"$(q "$json" get section_level.readable_bytes)" "$want"
	local g sg
	g=$(q "$json" get ret_gadgets) sg=$(q "$json" get section_level.ret_gadgets)
	if [ "$g" -ge 3 ] && [ "$sg" = "$g" ]; then
		t_pass "surface-ro.so: section-level ret gadgets = xom's ($g, the table's 3 among them)"
	else
		t_fail "surface-ro.so: section-level ret gadgets" "xom $g, section-level $sg (want equal, >= 3)"
	fi
}

# --- real files of this system ------------------------------------------------

LIBDIR=/usr/lib/x86_64-linux-gnu
# Another release's libcrypto may be named to test it here (unpacked from
# its package: XOM_TEST_CRYPTO=/tmp/root/usr/lib/.../libcrypto.so.3).
CRYPTO=${XOM_TEST_CRYPTO:-$LIBDIR/libcrypto.so.3}

# Byte signatures of data that OpenSSL's perlasm code keeps in .text, with
# the length each covers from the match.  AES_Te holds every Te0 word
# twice; K256 and K512 are the SHA-2 round constants; the P-256 table of
# ecp_nistz256 is 37 pages and starts with the Montgomery form of G.x.
# OpenSSL 3.2 and later put those four in .rodata, where no code page holds
# them; RC4_options() still returns one of three strings kept in .text
# (3.0 and 3.5 alike).
CRYPTO_TABLES='
aes-te c66363a5c66363a5f87c7c84f87c7c84 2048
sha256-k256 982f8a4291443771cffbc0b5a5dbb5e9 256
sha512-k512 22ae28d7982f8a42cd65ef2391443771 640
ecp_nistz256_precomputed 3c14a918d430e77901b6ed5ffc95ba75 151552
rc4-options 7263342838782c696e7429007263342838782c636861722900 38
'

# Whether the bytes of a hex signature occur anywhere in a file.
in_file() {
	local pat
	pat=$(sed 's/../\\x&/g' <<<"$2")
	LC_ALL=C grep -qaP "$pat" "$1"
}

t_libcrypto() {
	local json=$W/libcrypto.out name sig len a p bad n
	if [ ! -r "$CRYPTO" ]; then
		t_skip libcrypto "$CRYPTO is not installed (Debian package libssl3)"
		return
	fi
	map_of libcrypto "$CRYPTO" || return
	while read -r name sig len; do
		[ -n "$name" ] || continue
		n=0 bad=""
		for a in $("$H/elfq" "$CRYPTO" find "$sig"); do
			n=$((n + 1))
			for ((p = a & ~(PAGE - 1); p < a + len; p += PAGE)); do
				[ "$(q "$json" page "$p")" = readable ] ||
					bad="$bad $(printf '%#x' "$p")"
			done
		done
		if [ "$n" = 0 ] && in_file "$CRYPTO" "$sig"; then
			t_skip "libcrypto: $name" "this OpenSSL keeps it outside its executable segment (3.2 and later: in .rodata)"
		elif [ "$n" = 0 ]; then
			t_skip "libcrypto: $name" "not in this build of OpenSSL"
		elif [ -n "$bad" ]; then
			t_fail "libcrypto: $name ($n copies)" "execute-only pages that hold the table:$bad"
		else
			t_pass "libcrypto: $name ($n copies) stays readable"
		fi
	done <<<"$CRYPTO_TABLES"
	coverage libcrypto "$json" 8900
}

# coverage TAG JSON MIN: xom_pages / exec_pages >= MIN / 10000.
coverage() {
	local tag=$1 json=$2 min=$3 e x
	e=$(q "$json" get exec_pages) x=$(q "$json" get xom_pages)
	if [ "$e" -gt 0 ] && [ $((x * 10000)) -ge $((min * e)) ]; then
		t_pass "$tag: $x of $e exec pages xom (need $((min / 100)).$((min % 100 / 10))%)"
	else
		t_fail "$tag: coverage" "$x of $e exec pages xom, need $((min / 100)).$((min % 100 / 10))%"
	fi
}

t_libc() {
	local libc=$LIBDIR/libc.so.6 f
	map_of libc "$libc" && coverage libc "$W/libc.out" 9950
	# Other files of this system: each must scan cleanly.
	# Capstone's soname follows its major version (4 on Debian 12, 5 on 13).
	for f in /usr/bin/true "$LIBDIR/ld-linux-x86-64.so.2" "$LIBDIR/libm.so.6" \
		 "$LIBDIR/libelf.so.1" "$LIBDIR"/libcapstone.so.[0-9] "$LIBDIR/libz.so.1" \
		 "$LIBDIR/libstdc++.so.6"; do
		if [ -r "$f" ]; then
			map_of "system $(basename "$f")" "$(readlink -f "$f")"
		else
			t_skip "system $(basename "$f")" "not installed here"
		fi
	done
}

# Several threads give the very same map: the sweep is cut at entries and
# put back together in order (libc and libcrypto are cut in two and three).
t_threads() {
	local f
	for f in "$LIBDIR/libc.so.6" "$CRYPTO"; do
		f=$(readlink -f "$f")
		[ -r "$f" ] || continue
		scan threads-1 --json -j 1 "$f"
		cp "$out" "$W/threads-1.json"
		scan threads-4 --json -j4 "$f"
		if [ "$rc" = 0 ] && [ -s "$out" ] && cmp -s "$out" "$W/threads-1.json"; then
			t_pass "threads: $(basename "$f") maps the same with -j 1 and -j4"
		else
			t_fail "threads: $(basename "$f")" "-j 4 differs from -j 1 (exit $rc $(death))"
		fi
	done
	scan threads-bad -j 0 "$W/tables.so"
	expect_eq threads "-j 0 is a usage error" "$rc" 64
}

# --- malformed inputs ---------------------------------------------------------

# check_case NAME FILE EXPECT KEYWORD: see tests/scan/corrupt.c for EXPECT.
check_case() {
	local name=$1 file=$2 expect=$3 kw=$4 d line msg tag="bad: $1"
	scan "bad/$name" --json "$file"
	d=$(death)
	if [ -n "$d" ]; then
		t_fail "$tag" "$d"
		return
	fi
	line=$(first_err)
	case "$expect" in
	any)
		if [ "$rc" = 0 ]; then
			expect=ok
		else
			expect=error
		fi ;;
	esac
	case "$expect" in
	ok*)
		if [ "$rc" != 0 ]; then
			t_fail "$tag" "expected a map, got exit $rc: $line"
			return
		fi
		if ! msg=$(q "$out" check); then
			t_fail "$tag" "exit 0 but the map is not well formed: $msg"
			return
		fi
		case "$expect" in
		ok-allread|ok-reason:*)
			if [ "$(q "$out" get xom_pages)" != 0 ]; then
				t_fail "$tag" "expected no execute-only page, got $(q "$out" get xom_pages)"
				return
			fi ;;
		esac
		case "$expect" in
		ok-reason:*)
			if [ "$(q "$out" hasreason "${expect#ok-reason:}")" != yes ]; then
				t_fail "$tag" "no data range with reason ${expect#ok-reason:}"
				return
			fi ;;
		esac
		t_pass "$tag ($expect)" ;;
	*)
		local pre
		case "$expect" in
		error) pre='(malformed|unsupported)' ;;
		*) pre=$expect ;;
		esac
		if [ "$rc" != 1 ]; then
			t_fail "$tag" "expected exit 1 ($expect), got exit $rc${line:+: $line}"
		elif [ "$(wc -l <"$err")" != 1 ]; then
			t_fail "$tag" "expected one line on stderr, got $(wc -l <"$err")"
		elif ! grep -qE "^xom-scan: $file: $pre" "$err"; then
			t_fail "$tag" "expected 'xom-scan: FILE: $expect...', got: $line"
		elif [ "$kw" != - ] && ! grep -qiF -- "$kw" "$err"; then
			t_fail "$tag" "message lacks '$kw': $line"
		else
			t_pass "$tag ($expect${kw:+, $kw})"
		fi ;;
	esac
}

run_corpus() {
	local mode=$1 input=$2 name expect kw
	shift 2
	if ! "$H/corrupt" "$mode" "$input" "$W/bad" "$@" >"$W/bad-$mode.list"; then
		t_fail "corrupt $mode" "could not write the corpus"
		return
	fi
	while IFS=$'\t' read -r name expect kw; do
		check_case "$name" "$W/bad/$name" "$expect" "$kw"
	done <"$W/bad-$mode.list"
}

t_malformed() {
	run_corpus headers "$W/tables.so"
	run_corpus ehframe "$W/tables-strip.so"
	run_corpus nosep "$W/tables-nosep.so"
}

# Random corruptions: only "no crash, no hang, no runaway memory" is asked.
# Three hundred PASS lines would drown the rest, so they count as one.
t_random() {
	local nf0=$t_nfail np0=$t_npass name expect kw bad
	mkdir -p "$W/bad/r" "$W/bad/s"
	if ! { "$H/corrupt" random "$W/tables.so" "$W/bad/r" 150 0x5eed |
			sed 's|^|r/|' &&
	       "$H/corrupt" random "$W/tables-strip.so" "$W/bad/s" 150 0xface |
			sed 's|^|s/|'; } >"$W/bad-random.list"; then
		t_fail "corrupt random" "could not write the corpus"
		return
	fi
	while IFS=$'\t' read -r name expect kw; do
		check_case "$name" "$W/bad/$name" "$expect" "$kw" >"$W/bad-random.last"
		grep '^FAIL' "$W/bad-random.last"
	done <"$W/bad-random.list"
	bad=$((t_nfail - nf0))
	t_npass=$np0
	[ "$bad" = 0 ] &&
		t_pass "random corruptions: $(wc -l <"$W/bad-random.list") files, no crash, hang or runaway memory"
}

t_usage
t_io
t_exit
t_multi
t_modes
t_tables
t_flow
t_absolute
t_textrel
t_gadgets
t_surface
t_libcrypto
t_libc
t_threads
t_malformed
t_random

t_summary
