#!/bin/bash
# tests/cmd/native-cli.sh - The command line itself: xom --help names
# every command, each command's --help gives its usage, and a usage error
# exits 64 with a usage line.  Part of make check-cmd (tests/cmd/native.sh
# runs every part); it runs on any machine, and a check that needs
# protection keys skips with the reason.
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/cmd/native-lib.sh

test_help() {
	run_rc help-names-every-command 0 "$xom" --help || return
	local c
	for c in run scan check status cache enable disable learn profile; do
		grep -q "^  $c " "$tmp/out" || { t_fail help-names-every-command "no '$c' line in xom --help"; return; }
	done
	# Whole synopses (profile's second line too), none wider than 80.
	grep -q "^ *install \[--system | --dir DIR\] PROFILE\.\.\.$" "$tmp/out" &&
		awk 'length($0) > 80 { bad = 1 } END { exit bad }' "$tmp/out" ||
		{ t_fail help-names-every-command "a synopsis cut short, or a line over 80 columns: $(awk 'length($0) > 80' "$tmp/out" | head -n 2)"; return; }
	for c in run scan check status cache enable disable learn profile; do
		run_rc help-names-every-command 0 "$xom" "$c" --help || return
		has "$tmp/out" "usage: xom $c" || { t_fail help-names-every-command "xom $c --help has no usage line"; return; }
		"$xom" help "$c" | cmp -s - "$tmp/out" || { t_fail help-names-every-command "xom help $c differs from xom $c --help"; return; }
	done
	run_rc help-names-every-command 0 "$xom" --version && has "$tmp/out" "xom " && t_pass help-names-every-command
}

test_usage() {
	local args
	for args in "" "frob" "--frob" "run" "run --frob x" "run --mode maybe true" \
		"run --mode" "run --audit=1 true" "run -x true" "check extra" "check --frob" \
		"status" "status abc" "status 1 2" "status --self 1" "status --json 1" \
		"status --system 1" "enable" "enable --frob" "disable --system x" \
		"disable --system --force" "check --conf" "scan" "help frob"; do
		# shellcheck disable=SC2086
		run_rc "usage-error-exits-64[$args]" 64 "$xom" $args || return
		has "$tmp/err" "xom" && has "$tmp/err" "usage:" ||
			{ t_fail usage-error-exits-64 "'xom $args': no message with usage line"; return; }
	done
	run_rc usage-error-exits-64 64 "$xom" frob && has "$tmp/err" "unknown command 'frob'" ||
		{ t_fail usage-error-exits-64 "unknown command not named"; return; }
	run_rc usage-error-exits-64 64 "$xom" run --frob x && has "$tmp/err" "unknown option '--frob'" ||
		{ t_fail usage-error-exits-64 "unknown option not named"; return; }
	# --mode is checked by the runtime's own parser, in its words.
	run_rc usage-error-exits-64 64 "$xom" run --mode maybe true &&
		has "$tmp/err" "mode must be enforce, audit or off, got 'maybe'" && t_pass usage-error-exits-64 ||
		t_fail usage-error-exits-64 "--mode maybe: $(cat "$tmp/err")"
}

for t in test_help test_usage; do
	$t
done
t_summary
