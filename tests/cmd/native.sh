#!/bin/bash
# make check-cmd: the xom command's tests that run on any machine.  They
# are split by what they prove, one part per command or claim
# (tests/cmd/native-PART.sh, sharing tests/cmd/native-lib.sh); this runs
# each part in a shell of its own, and its last line adds up theirs:
# "N passed, N failed, N skipped" (tests/lib.sh), as tests/check.sh reads
# it.  A part that ends without its own summary line counts as one
# failure.  Checks that need protection keys skip here with the reason;
# they run in the emulated-PKU VM through tests/cmd/guest.sh.
#
# Usage: B=build tests/cmd/native.sh [PART]...   (default: every part)
set -u
cd "$(dirname "$0")/../.."
parts="cli run scan check status cache store system install docs demo"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
np=0 nf=0 ns=0

# Every native-*.sh is a part of this suite, the shared helpers, or a
# suite of another target (check-static, check-learn): a new file that is
# none of these would never run.
if [ $# = 0 ]; then
	for f in tests/cmd/native-*.sh; do
		p=${f#tests/cmd/native-} p=${p%.sh}
		case " $parts lib static learn " in
		*" $p "*) ;;
		*) echo "FAIL native-parts-listed: $f is run by no target"; nf=$((nf + 1)) ;;
		esac
	done
fi

for p in ${*:-$parts}; do
	f=tests/cmd/native-$p.sh
	echo "== $f"
	bash "$f" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$out" | tail -n 1)
	if [ -z "$line" ]; then
		echo "FAIL native-$p: no summary line (exit status $rc)"
		nf=$((nf + 1))
		continue
	fi
	read -r p1 _ f1 _ s1 _ <<<"$line"
	np=$((np + p1)) nf=$((nf + f1)) ns=$((ns + s1))
	if [ "$rc" != 0 ] && [ "$f1" = 0 ]; then
		echo "FAIL native-$p: exit status $rc with no failure counted"
		nf=$((nf + 1))
	fi
done
echo "$np passed, $nf failed, $ns skipped"
[ "$nf" = 0 ]
