#!/bin/sh
# scan_ratio.sh - the scanner's instruction count against a bare Capstone
# decode of the same bytes, measured with callgrind (instructions, not
# time: the same on a busy machine as on an idle one).
#
#   bench/scan_ratio.sh [-B BUILDDIR] FILE...
#
# For each file one line:
#   FILE scan_ir=N decode_ir=N quiet_ir=N ratio=R quiet_ratio=Q
# scan_ir counts `xom-scan --json FILE >/dev/null`; decode_ir counts
# `capstone_decode FILE`, Capstone's detail decode with its text printer;
# quiet_ir counts `capstone_decode -q FILE`, the same decode with the
# printer turned off as the scanner's sweep turns it off.  ratio is
# scan_ir / decode_ir and quiet_ratio scan_ir / quiet_ir: the second
# compares the same Capstone calls on both sides (both are 0 where this
# Capstone's printer cannot be turned off: only 4.0's can).  Needs valgrind; BUILDDIR
# defaults to build.  Exit status 0, 1 if a run failed, 64 on usage.
set -eu

B=build
if [ "${1:-}" = -B ]; then
	B=${2:?usage: scan_ratio.sh [-B BUILDDIR] FILE...}
	shift 2
fi
[ $# -gt 0 ] || { echo "usage: scan_ratio.sh [-B BUILDDIR] FILE..." >&2; exit 64; }
for p in "$B/xom-scan" "$B/bench/capstone_decode"; do
	[ -x "$p" ] || { echo "scan_ratio.sh: $p is missing (make bench-progs)" >&2; exit 1; }
done
command -v valgrind >/dev/null || { echo "scan_ratio.sh: valgrind is missing" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ir CMD...: the total instruction count of one run of CMD.
ir() {
	valgrind --tool=callgrind --callgrind-out-file="$tmp/out" "$@" \
		>/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; return 1; }
	awk '/^(summary|totals):/ { print $2; exit }' "$tmp/out"
}

status=0
for f in "$@"; do
	if ! s=$(ir "$B/xom-scan" --json "$f") || ! d=$(ir "$B/bench/capstone_decode" "$f"); then
		echo "scan_ratio.sh: $f: a run failed" >&2
		status=1
		continue
	fi
	# Only Capstone 4.0's printer can be switched off (scan/x86.c
	# x86_quiet): elsewhere the quiet figures are 0, "not measured".
	q=0
	if "$B/bench/capstone_decode" -q /dev/null 2>&1 | grep -q 'cannot be quieted'; then
		:
	elif ! q=$(ir "$B/bench/capstone_decode" -q "$f"); then
		echo "scan_ratio.sh: $f: a run failed" >&2
		status=1
		continue
	fi
	awk -v f="$f" -v s="$s" -v d="$d" -v q="$q" 'BEGIN {
		printf "%s scan_ir=%s decode_ir=%s quiet_ir=%s ratio=%.3f quiet_ratio=%.3f\n",
		       f, s, d, q, s / d, q ? s / q : 0 }'
done
exit $status
