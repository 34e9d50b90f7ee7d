# tests/lib.sh - what every shell test suite shares: the result lines and
# the summary.  Source it (". tests/lib.sh"); it is plain POSIX sh, so the
# emulated-PKU guest's busybox runs it too.
#
#   t_pass NAME              PASS NAME
#   t_fail NAME DETAIL       FAIL NAME: DETAIL
#   t_skip NAME REASON       SKIP NAME: REASON (a reason is required)
#   t_check NAME COND DETAIL evaluates the shell condition COND: PASS or FAIL
#   t_summary                "N passed, N failed, N skipped"; status 0 when
#                            nothing failed (end a suite with: t_summary)
#   has FILE TEXT            FILE contains TEXT (a fixed string)
#   xo_pages SMAPS [PATH]    counts execute-only pages (the guest tests'
#                            proof that code was protected)
#
# The counts live in this shell, so call these from the suite's own shell,
# not from a subshell or the right side of a pipe.
t_npass=0 t_nfail=0 t_nskip=0

t_pass() { t_npass=$((t_npass + 1)); echo "PASS $1"; }
# A detail of several lines is folded into one, so that no line of it can
# read as a result of its own.
t_fail() {
	t_nfail=$((t_nfail + 1))
	echo "FAIL $1: $(printf '%s' "${2:-failed}" | tr '\n' '|')"
}
t_skip() {
	[ -n "${2:-}" ] || { t_fail "$1" "skipped without a reason"; return; }
	t_nskip=$((t_nskip + 1)); echo "SKIP $1: $2"
}
t_check() {
	if eval "$2"; then t_pass "$1"; else t_fail "$1" "$3"; fi
}
t_summary() {
	echo "$t_npass passed, $t_nfail failed, $t_nskip skipped"
	[ "$t_nfail" = 0 ]
}

has() { grep -qF -- "$2" "$1"; }

# xo_pages SMAPS [PATH]: the execute-only code pages (--xp with a non-zero
# protection key) in an smaps text, of PATH's mappings (a base name: of
# the mappings of any file of that name) or of all.
xo_pages() {
	awk -v want="${2:-}" '
		/^[0-9a-f]+-[0-9a-f]+ / {
			split($1, r, "-"); perms = $2; name = $6; base = name; sub(/.*\//, "", base)
			pages = (("0x" r[2]) - ("0x" r[1])) / 4096; next }
		/^ProtectionKey:/ {
			if (perms == "--xp" && $2 != 0 && (want == "" || name == want || base == want)) n += pages }
		END { print n + 0 }' "$1"
}

# root_alone PATH: PATH and every folder above it are root's and no one
# else can write them, which a shared store asks of the files whose
# build-id plans it takes, and the runtime of the profiles shipped beside
# it (a checkout under /tmp is not).
root_alone() {
	local p
	p=$(realpath "$1") || return 1
	while :; do
		[ "$(stat -c %u "$p")" = 0 ] && [ -z "$(find "$p" -maxdepth 0 -perm /022)" ] || return 1
		[ "$p" = / ] && return 0
		p=$(dirname "$p")
	done
}
