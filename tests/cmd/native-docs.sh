#!/bin/bash
# tests/cmd/native-docs.sh - The documentation keeps up with the option
# table (loader/options.def): the man pages and docs/usage.md list every
# key.  Part of make check-cmd (tests/cmd/native.sh runs every part); it
# runs on any machine, and a check that needs protection keys skips with
# the reason.
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/cmd/native-lib.sh

# The built page: every key of options.def with its values, and clean roff.
test_man() {
	local page=$B/xom.1 c kv n w
	[ -s "$page" ] || { t_fail man-pages-list-every-option "$page was not built"; return; }
	sed 's/\\-/-/g; s/\\f[BIR]//g; s/\\e/\\/g' "$page" >"$tmp/man"
	for c in "xom run" "xom scan" "xom check" "xom status" "xom cache build" \
		"xom cache stats" "xom cache prune" /var/cache/xom XOM_OPTIONS \
		"xom enable --system" "xom disable --system" "xom status --system" \
		"xom check [--conf FILE]" /etc/ld.so.preload "xom.conf (5)" \
		"xom learn" "xom profile show" "xom profile merge" "xom profile install" \
		/var/cache/xom/profiles; do
		has "$tmp/man" "$c" || { t_fail man-pages-list-every-option "$page does not mention $c"; return; }
	done
	sed 's/\\-/-/g; s/\\f[BIR]//g; s/\\e/\\/g' "$B/xom.conf.5" >"$tmp/man5"
	for c in /etc/xom.conf "PATTERN OPTIONS" "xom check --conf" "exclude=libGLdispatch.so*" \
		"require=1"; do
		has "$tmp/man5" "$c" || { t_fail man-pages-list-every-option "xom.conf.5 does not mention $c"; return; }
	done
	for kv in $(option_keys); do
		has "$tmp/man5" "$kv" || { t_fail man-pages-list-every-option "xom.conf.5 does not list $kv"; return; }
	done
	n=0
	for kv in $(option_keys); do
		n=$((n + 1))
		has "$tmp/man" "$kv" || { t_fail man-pages-list-every-option "$page does not list $kv"; return; }
	done
	[ "$n" -gt 0 ] && [ "$n" = "$(grep -c '^XOM_OPT(' loader/options.def)" ] ||
		{ t_fail man-pages-list-every-option "read $n keys from loader/options.def"; return; }
	! has "$page" "@XOM_OPTIONS_KEYS@" || { t_fail man-pages-list-every-option "the key list was not filled in"; return; }
	if command -v groff >/dev/null; then
		w=$(groff -man -Tutf8 -ww -z "$page" "$B/xom.conf.5" 2>&1)
		[ -z "$w" ] || { t_fail man-pages-list-every-option "groff: $w"; return; }
	fi
	t_pass man-pages-list-every-option
}

# docs/usage.md's table of XOM_OPTIONS has a row for every key of options.def,
# and no row for a key that is not there.
test_readme_keys() {
	local k rows
	for k in $(option_keys | sed 's/=.*//'); do
		grep -q "^| \`$k\` |" docs/usage.md || { t_fail usage-doc-lists-every-option "docs/usage.md has no row for $k"; return; }
	done
	rows=$(sed -n '/^## XOM_OPTIONS/,/^## /p' docs/usage.md | grep -c '^| `')
	[ "$rows" = "$(grep -c '^XOM_OPT(' loader/options.def)" ] ||
		{ t_fail usage-doc-lists-every-option "$rows rows in docs/usage.md's table"; return; }
	t_pass usage-doc-lists-every-option
}

for t in test_man test_readme_keys; do
	$t
done
t_summary
