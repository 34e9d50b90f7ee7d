#!/bin/bash
# Runs every command that README.md shows after a "$ " prompt, from the
# repository root, so that the README stays true.  A command must exit 0,
# unless its line ends with "# status: A|B" listing the statuses it may
# give here.  Lines shown below a command, up to the next prompt or the end
# of the block, must each appear in its output ("..." stands for lines
# left out).
set -u
cd "$(dirname "$0")/.."
pass=0 fail=0
run_one() {
	local cmd=$1 expect=$2 shown=$3 out rc ok=1 why="" line
	out=$(timeout 120 bash -c "$cmd" 2>&1 </dev/null)
	rc=$?
	if ! [[ "|$expect|" == *"|$rc|"* ]]; then
		ok=0 why="exit $rc, expected $expect"
	fi
	while IFS= read -r line; do
		[ -z "$line" ] || [[ "$line" == *...* ]] && continue
		if ! grep -qxF -- "$line" <<<"$out"; then
			ok=0 why="$why; output lacks: $line"
		fi
	done <<<"$shown"
	if [ $ok = 1 ]; then
		echo "PASS readme: $cmd"; pass=$((pass + 1))
	else
		echo "FAIL readme: $cmd: $why"; echo "$out" | head -20 | sed 's/^/    | /'
		fail=$((fail + 1))
	fi
}
cmd="" expect=0 shown="" inblock=0
flush() { [ -n "$cmd" ] && run_one "$cmd" "$expect" "$shown"; cmd="" shown=""; }
while IFS= read -r line; do
	if [[ "$line" == '```'* ]]; then
		flush; inblock=$((1 - inblock)); continue
	fi
	[ $inblock = 1 ] || continue
	if [[ "$line" == '$ '* ]]; then
		flush
		cmd=${line#\$ } expect=0
		if [[ "$cmd" =~ \#\ status:\ ([0-9|]+)$ ]]; then
			expect=${BASH_REMATCH[1]}; cmd=${cmd%%#*}
		fi
	elif [ -n "$cmd" ]; then
		shown+="$line"$'\n'
	fi
done < README.md
flush
echo "$pass passed, $fail failed"
[ $fail = 0 ]
