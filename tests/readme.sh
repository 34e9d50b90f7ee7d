#!/bin/bash
# Runs every command that README.md and docs/*.md show after a "$ " prompt,
# from the repository root, so that what they say stays true.  Each result
# names the file and line of its command.
#
# A command must exit 0, unless its line ends with
#   # status: N                      it must exit N
#   # status: N without PKU, M with  it must exit N on a machine without
#                                    usable protection keys, M on one with
#                                    them (the pku and ospke flags of
#                                    /proc/cpuinfo)
# Each line shown below a command, up to the next prompt or the end of the
# block, must be a line of its output.  A line that is just "..." stands for
# lines left out; elsewhere in a line "..." stands for any text, e.g. a
# number that changes with the Debian point release.
#
# Commands that boot the emulated-PKU guest (tests/vm/run) are skipped, with
# the reason, under XOM_SKIP_VM=1 outside CI, as tests/vm/run skips its suite.
set -u
cd "$(dirname "$0")/.."
# The commands run xom; none may write into the user's plan cache.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/xom-readme.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export XDG_CACHE_HOME=$scratch/cache

pku=0
grep -qw pku /proc/cpuinfo 2>/dev/null && grep -qw ospke /proc/cpuinfo 2>/dev/null && pku=1
skip_vm=0
if [ "${XOM_SKIP_VM:-0}" = 1 ]; then
	case ${CI:-} in true|1|yes) ;; *) skip_vm=1 ;; esac
fi

# matches LINE OUTPUT: whether OUTPUT has LINE as one of its lines, "..." in
# LINE matching any text.
matches() {
	local pat o
	if [[ "$1" != *...* ]]; then
		grep -qxF -- "$1" <<<"$2"
		return
	fi
	pat=$(sed 's/[][\\*?]/\\&/g' <<<"$1")
	pat=${pat//.../*}
	while IFS= read -r o; do
		# shellcheck disable=SC2053
		[[ "$o" == $pat ]] && return 0
	done <<<"$2"
	return 1
}

pass=0 fail=0 skip=0
run_one() {
	local where=$1 cmd=$2 expect=$3 shown=$4 out rc ok=1 why="" line
	if [ "$skip_vm" = 1 ] && [[ "$cmd" == tests/vm/run* ]]; then
		echo "SKIP readme: $where: $cmd: XOM_SKIP_VM=1 (it boots the emulated-PKU guest)"
		skip=$((skip + 1))
		return
	fi
	# A guest may first rebuild its root (a minute or two on a busy
	# machine), then boot under emulation.
	local limit=120
	[[ "$cmd" == tests/vm/run* ]] && limit=600
	out=$(timeout $limit bash -c "$cmd" 2>&1 </dev/null)
	rc=$?
	if [ "$rc" != "$expect" ]; then
		ok=0 why="exit $rc, expected $expect"
	fi
	while IFS= read -r line; do
		[ -z "$line" ] && continue
		[[ "$line" =~ ^[[:space:]]*\.\.\.[[:space:]]*$ ]] && continue
		matches "$line" "$out" || ok=0 why="$why; output lacks: $line"
	done <<<"$shown"
	if [ $ok = 1 ]; then
		echo "PASS readme: $where: $cmd"; pass=$((pass + 1))
	else
		echo "FAIL readme: $where: $cmd: ${why#; }"; echo "$out" | head -20 | sed 's/^/    | /'
		fail=$((fail + 1))
	fi
}

# expected_status COMMENT: the status that a "# status: ..." comment asks of
# this machine; empty if the comment is malformed.
expected_status() {
	if [[ "$1" =~ ^([0-9]+)$ ]]; then
		echo "${BASH_REMATCH[1]}"
	elif [[ "$1" =~ ^([0-9]+)\ without\ PKU,\ ([0-9]+)\ with$ ]]; then
		if [ "$pku" = 1 ]; then echo "${BASH_REMATCH[2]}"; else echo "${BASH_REMATCH[1]}"; fi
	fi
}

# check FILE: runs the commands FILE shows.
check() {
	local file=$1 line cmd="" at="" expect=0 shown="" inblock=0 n=0
	flush() { [ -n "$cmd" ] && run_one "$file:$at" "$cmd" "$expect" "$shown"; cmd="" shown=""; }
	while IFS= read -r line; do
		n=$((n + 1))
		if [[ "$line" == '```'* ]]; then
			flush; inblock=$((1 - inblock)); continue
		fi
		[ $inblock = 1 ] || continue
		if [[ "$line" == '$ '* ]]; then
			flush
			cmd=${line#\$ } at=$n expect=0
			if [[ "$cmd" =~ \#\ status:\ (.*)$ ]]; then
				expect=$(expected_status "${BASH_REMATCH[1]}")
				if [ -z "$expect" ]; then
					echo "FAIL readme: $file:$n: cannot read '# status: ${BASH_REMATCH[1]}' (N, or N without PKU, M with)"
					fail=$((fail + 1)) cmd=""
					continue
				fi
				cmd=${cmd%%#*}
				cmd=${cmd%"${cmd##*[![:space:]]}"}
			fi
		elif [ -n "$cmd" ]; then
			shown+="$line"$'\n'
		fi
	done < "$file"
	flush
	[ $inblock = 0 ] || { echo "FAIL readme: $file: a code block is not closed"; fail=$((fail + 1)); }
}

shopt -s nullglob
files=(README.md docs/*.md)
for f in "${files[@]}"; do
	check "$f"
done
echo "readme: $((pass + fail + skip)) commands in ${#files[@]} files (${files[*]})"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
