#!/bin/bash
# tests/cmd/native-demo.sh - The code-disclosure demo (demo/): its attack
# works on the unprotected victim, and fails under xom run where the CPU
# has keys.  Part of make check-cmd (tests/cmd/native.sh runs every part);
# it runs on any machine, and a check that needs protection keys skips
# with the reason.
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/cmd/native-lib.sh

# Every gadget is found, a pop gadget perhaps with harmless pops before its
# ret (glibc 2.41 has no "pop rdx; ret"), and the chain gives each of those
# extra pops a filler word.
test_demo_unprotected() {
	local g extra filler
	run_rc demo-attack-works-unprotected 0 "$B/demo/attacker" "$B/demo/victim" || return
	for g in "pop rdi" "pop rsi" "pop rdx" "pop rax" syscall ret; do
		grep -qE "^attacker:   $g +at 0x[0-9a-f]+: $g(; pop (rbx|rcx|rbp|r[0-9]+))*(; ret)?\$" "$tmp/out" ||
			{ t_fail demo-attack-works-unprotected "no $g gadget: $(tail -5 "$tmp/out")"; return; }
	done
	extra=$(grep -E "^attacker:   pop [a-z]+ +at 0x" "$tmp/out" | grep -o "; pop " | wc -l)
	filler=$(grep -c "filler for pop" "$tmp/out")
	has "$tmp/out" "attack succeeded" && [ "$extra" = "$filler" ] && t_pass demo-attack-works-unprotected ||
		t_fail demo-attack-works-unprotected "$extra extra pops, $filler filler words: $(tail -5 "$tmp/out")"
}

test_demo_protected() {
	if [ "$pku" = 0 ]; then
		t_skip demo-attack-fails-protected "this CPU has no protection keys (the VM suite runs this half)"
		return
	fi
	run_rc demo-attack-fails-protected 1 "$B/demo/attacker" "$xom" run -- "$B/demo/victim" || return
	has "$tmp/out" "attack failed" && has "$tmp/err" "xom: blocked read of" &&
		t_pass demo-attack-fails-protected || t_fail demo-attack-fails-protected "$(cat "$tmp/out" "$tmp/err" | tail -5)"
}

for t in test_demo_unprotected test_demo_protected; do
	$t
done
t_summary
