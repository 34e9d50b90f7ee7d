#!/bin/sh
# demo.sh - the code-disclosure demo: one attack, run without and with xom.
# It runs from build/demo (natively, or at /xom/build/demo in the
# emulated-PKU VM).  Exit status 0 when both halves end as expected: the
# attack succeeds without xom and is stopped with it.
set -u
d=$(cd "$(dirname "$0")" && pwd)
xom=$d/../xom

cat <<'TEXT'
== The demo ==
victim   a small service with an information-leak bug: it greets each client
         with a "session id" that is really a code address, and for the
         request "ADDR LEN" it sends back the LEN bytes at ADDR.
attacker uses only that bug, the way a just-in-time code-reuse (JIT-ROP)
         attack does: from the one leaked pointer it reads the victim's code,
         follows a call into libc, reads libc's code page by page, and looks
         for the gadgets a ROP chain needs (pop rdi; ret, syscall, ...).
         Address randomisation does not stop it: it reads where things are.
xom      makes code pages executable but unreadable with protection keys.
         The program still runs its code; it can no longer read it.

TEXT

if "$xom" check >/dev/null 2>&1; then
	pku=1
else
	pku=0
	echo "note: this CPU cannot enforce execute-only code (see: xom check), so the"
	echo "second half will show the attack succeeding too."
	echo
fi

echo "== 1. Without xom:  attacker victim"
"$d/attacker" "$d/victim"
rc1=$?
echo
echo "== 2. With xom:  attacker xom run -- victim"
"$d/attacker" "$xom" run -- "$d/victim"
rc2=$?
echo

if [ "$rc1" = 0 ] && [ "$rc2" = 1 ]; then
	echo "== Result: without xom the attacker found its gadgets; with xom its first"
	echo "   read of code was blocked, the victim died, and the attack failed."
	exit 0
fi
if [ "$pku" = 0 ] && [ "$rc1" = 0 ]; then
	echo "== Result: the attack succeeded both times, as it must on a CPU without"
	echo "   protection keys.  Run 'make demo' to see it stopped (in a VM if need be)."
	exit 0
fi
echo "== Result: unexpected (attacker exit status $rc1 without xom, $rc2 with xom)."
exit 1
