#!/bin/sh
# The real-program corpus in the emulated-PKU guest (tests/vm/corpus.list):
# ffmpeg encoding and decoding video and audio, a slice of Python's own
# regression tests, git, sqlite3 and perl's core modules.  Each case runs
# without xom, then through each door (LD_PRELOAD=libxom.so, and
# LD_AUDIT=libxom-audit.so), both times with the probe (libxomprobe.so,
# tests/runtime/probe.c) preloaded.  A case passes when its output is the
# same as without xom, no "xom:" line was printed, and the probe, which tries
# to copy every code page out with write(2) as the process exits, found the
# code of every main program of the run, of libc, of the dynamic linker and
# of the case's own libraries unreadable.  A key that let reads through, or
# pages left readable, makes those counts zero and the case fail; the control
# case checks that on every run with backend=none.
# Inputs are generated here (lavfi test sources, a SQL script and a perl
# script in tests/corpus/); the right answer is the run without xom.
# The plans come from the host (tests/vm/run builds them for
# tests/vm/corpus-files.list into /var/cache/xom-host); warm adds the few
# objects that only the guest has.
# Usage: tests/corpus/vm-corpus.sh warm|ffmpeg|python|tools
R=$(cd "$(dirname "$0")/../.." && pwd)
B=$R/build
. "$R/tests/lib.sh"
P=$B/libxom.so A=$B/libxom-audit.so PROBE=$B/tests/runtime/libxomprobe.so
# One plan cache for every part; each part's files in a folder of its own,
# so that a part that overran its time cannot write into the next one's.
C=/tmp/xom-corpus W=/tmp/xom-corpus/${1:-none}
mkdir -p "$W"
export XDG_CACHE_HOME=$C/cache XDG_RUNTIME_DIR=$C/run
[ -d "$C/run" ] || mkdir -m 700 "$C/run"
unset XOM_OPTIONS LD_PRELOAD LD_AUDIT
# The guest has no system store; the user's cache holds the host's plans.
export XOM_OPTIONS=store=off
HOSTPLANS=/var/cache/xom-host/xom
# Debian's python3 is python3.11 on Debian 12 and python3.13 on Debian 13.
PY=$(readlink -f /usr/bin/python3)
FF="/usr/bin/ffmpeg -nostdin -y -hide_banner -loglevel error -fflags +bitexact -threads 1"

err() { head -c 400 "$1" | tr '\n' '|'; }

# The probe's lines are "PATH UNREADABLE TOTAL", "[main]" for a main
# program; an object is named by a part of its path, such as libavcodec.
# probe_ok FILE NAME...: the lines name at least one main program, libc,
# the dynamic linker and each NAME, and every line of those has unreadable
# code pages.
probe_ok() {
	f=$1
	shift
	[ -s "$f" ] && awk -v want="$*" '
		BEGIN { n = split("[main] libc.so ld-linux " want, name, " ") }
		{ for (i = 1; i <= n; i++) if (i == 1 ? $1 == name[1] : index($1, name[i])) { seen[i] = 1; if ($2 == 0) bad++ } }
		END { for (i = 1; i <= n; i++) if (!seen[i]) bad++; exit bad != 0 }' "$f"
}

# pages NAME: "UNREADABLE/TOTAL" of the first probe line that names NAME,
# the first main program's for "[main]".
pages() {
	awk -v p="$1" '(p == "[main]" ? $1 == p : index($1, p)) { print $2 "/" $3; exit }' "$W/probe"
}

# run_door DOOR CMD: CMD through the door (plain, preload, audit, none: the
# preload door with backend=none, which makes no page execute-only), output
# in $W/got, errors in $W/got-err, the probe's lines in $W/probe.
run_door() {
	rm -f "$W/probe"
	case $1 in
	plain) sh -c "$2" ;;
	preload) XOM_PROBE_OUT=$W/probe LD_PRELOAD="$P $PROBE" sh -c "$2" ;;
	audit) XOM_PROBE_OUT=$W/probe LD_AUDIT=$A LD_PRELOAD=$PROBE sh -c "$2" ;;
	none) XOM_OPTIONS=$XOM_OPTIONS:backend=none XOM_PROBE_OUT=$W/probe \
		LD_PRELOAD="$P $PROBE" sh -c "$2" ;;
	esac >"$W/got" 2>"$W/got-err"
}

# case_ NAME "LIBS" CMD: CMD without xom, then through each door; LIBS are
# the patterns of the objects (beside the main program, libc and the
# dynamic linker) whose code must have been unreadable.
case_() {
	name=$1 libs=$2 cmd=$3
	s=$(date +%s)
	run_door plain "$cmd"
	mv "$W/got" "$W/ref"
	times="without xom $(( $(date +%s) - s )) s"
	if [ ! -s "$W/ref" ]; then
		t_fail "$name" "no output without xom: $(err "$W/got-err")"
		return
	fi
	for d in preload audit; do
		s=$(date +%s)
		run_door $d "$cmd"
		times="$times, $d $(( $(date +%s) - s )) s"
		t=$name-$d
		if ! cmp -s "$W/ref" "$W/got"; then
			t_fail "$t" "output differs: $(diff "$W/ref" "$W/got" | head -c 300) $(err "$W/got-err")"
		elif grep -q "^xom: " "$W/got-err"; then
			t_fail "$t" "xom said: $(grep "^xom: " "$W/got-err" | head -n 3)"
		elif ! probe_ok "$W/probe" $libs; then
			t_fail "$t" "same output, but not execute-only: $(tr '\n' '|' <"$W/probe" 2>/dev/null | head -c 600)"
		else
			x=""
			for l in $libs; do x="$x, $l $(pages "$l")"; done
			t_pass "$t (main $(pages '[main]')$x code pages unreadable)"
		fi
	done
	echo "# $name: $times"
}

# The cases.  Each command prints what it made, by hash where it is binary.
# ffmpeg: one Matroska file from generated sources, with H.264 (libx264),
# MPEG-4 (FFmpeg's own and libxvidcore's) video, MP3 (libmp3lame) and Opus
# (libopus) audio, then its
# packets and its decoded frames hashed (framemd5), in two runs of ffmpeg:
# each loads 215 libraries, which costs seconds under TCG.
ff_work() {
	echo "rm -f $W/all.mkv && $FF -f lavfi -i testsrc=size=64x48:rate=5:duration=0.6 -f lavfi -i sine=frequency=440:duration=0.5:sample_rate=22050 -f lavfi -i sine=frequency=330:duration=0.5:sample_rate=48000 -map 0:v -map 0:v -map 0:v -map 1:a -map 2:a -c:v:0 libx264 -preset ultrafast -c:v:1 mpeg4 -c:v:2 libxvid -flags:v +bitexact -c:a:0 libmp3lame -b:a:0 32k -c:a:1 libopus -b:a:1 24k -flags:a +bitexact $W/all.mkv && $FF -i $W/all.mkv -map 0 -c copy -f framemd5 $W/pk.txt -map 0 -f framemd5 $W/dec.txt && cat $W/pk.txt $W/dec.txt"
}
# Python's regression tests print timings, load averages and the pid's
# folder; the results and the counts are what is compared.  The slice runs
# in a few seconds under TCG (test_json, test_struct and test_re would
# take 55 more).
PYTESTS="test_bisect test_binascii test_base64 test_textwrap test_operator test_fractions"
py_tests() {
	echo "cd $W && PYTHONHASHSEED=0 $PY -S -m test -v $PYTESTS 2>&1 | grep -E ' \\.\\.\\. |^(OK|FAILED)|^Ran [0-9]+ tests|tests? OK|Tests result' | sed -E 's/^(Ran [0-9]+ tests?) in .*/\\1/'"
}
git_work() {
	g="GIT_AUTHOR_NAME=Ann GIT_AUTHOR_EMAIL=ann@example.org GIT_COMMITTER_NAME=Ann GIT_COMMITTER_EMAIL=ann@example.org GIT_AUTHOR_DATE=@1000000000+0000 GIT_COMMITTER_DATE=@1000000000+0000 GIT_CONFIG_NOSYSTEM=1 HOME=$W/home /usr/bin/git --no-pager"
	echo "rm -rf $W/repo $W/home && mkdir -p $W/repo $W/home && cd $W/repo && $g init -q -b main . && printf 'one\ntwo\nthree\n' >a.txt && seq 1 200 >n.txt && $g add . && $g commit -q -m first && sed -i 's/two/TWO/' a.txt && seq 150 250 >n.txt && printf 'new\n' >b.txt && $g add -A && $g commit -q -m second && $g log --stat --format='%H %an %ad %s' --date=iso && $g diff HEAD~1 HEAD && $g cat-file -p HEAD^{tree} && $g status --short --branch"
}
sqlite_work() { echo "/usr/bin/sqlite3 :memory: <$R/tests/corpus/corpus.sql"; }
perl_work() { echo "/usr/bin/perl $R/tests/corpus/corpus.pl"; }

if [ ! -r "$P" ] || [ ! -r "$A" ] || [ ! -r "$PROBE" ]; then
	t_fail setup "$P, $A or $PROBE is missing"
	t_summary
	exit 1
fi

case ${1:-} in
warm)
	# The host's plans, then those of what only the guest has: the probe,
	# the audit module.
	s=$(date +%s)
	rm -rf "$C/cache" && mkdir -p "$C/cache"
	if [ ! -s "$HOSTPLANS/plans" ]; then
		t_fail warm-host-plans "no plans from the host in $HOSTPLANS (tests/vm/run builds them)"
	else
		cp -a "$HOSTPLANS" "$C/cache/"
		"$B/xom" cache build -q "$PROBE" "$A" >"$W/got" 2>"$W/got-err"
		rc=$?
		"$B/xom" cache stats >"$W/stats" 2>&1
		t_check warm-host-plans '[ $rc = 0 ] && [ $(ls "$C/cache/xom/syms" | wc -l) -ge 200 ]' "rc $rc: $(err "$W/got-err") $(err "$W/stats")"
	fi
	echo "# warm: $(ls "$C/cache/xom/syms" 2>/dev/null | wc -l) symbol files, $(( $(date +%s) - s )) s"
	;;
ffmpeg)
	case_ ffmpeg "libavcodec libavformat libavfilter libx264 libxvidcore libmp3lame libopus" "$(ff_work)"
	# Every stream was made and decoded.
	t_check ffmpeg-streams '[ $(grep -Ec "^#codec_id [0-4]: (h264|mpeg4|mp3|opus)$" "$W/ref") = 5 ] && [ $(grep -c "^#codec_id" "$W/ref") = 10 ]' "$(grep "^#codec_id" "$W/ref" | tr '\n' '|')"
	;;
python)
	# Extension modules that the slice loads on Python 3.11 and 3.13 alike
	# (3.13 no longer imports _testcapi here).
	case_ python-regrtest "_decimal.cpython _bz2.cpython" "$(py_tests)"
	# The slice really ran: every test file passed, none was skipped whole
	# (3.13 frames the result line in "==").
	t_check python-regrtest-ran 'grep -Eq "^(== )?Tests result: SUCCESS" "$W/ref" && [ $(grep -c " \.\.\. ok" "$W/ref") -ge 300 ]' "$(grep -c " \.\.\. ok" "$W/ref") tests passed: $(tail -n 5 "$W/ref" | tr '\n' '|')"
	;;
tools)
	case_ git "libz.so libpcre2-8" "$(git_work)"
	case_ sqlite3 libsqlite3 "$(sqlite_work)"
	case_ perl-modules "SHA.so Storable.so POSIX.so Util.so Dumper.so" "$(perl_work)"
	# The control: with backend=none nothing is execute-only, and the same
	# check must say so (the probe reads every page).
	run_door plain "$(sqlite_work)"
	mv "$W/got" "$W/ref"
	run_door none "$(sqlite_work)"
	t_check probe-sees-readable-code '[ -s "$W/ref" ] && cmp -s "$W/ref" "$W/got" && [ -s "$W/probe" ] && ! probe_ok "$W/probe" libsqlite3' "the check passed, or the run failed: $(tr '\n' '|' <"$W/probe" 2>/dev/null | head -c 400) $(err "$W/got-err")"
	;;
*)
	echo "usage: tests/corpus/vm-corpus.sh warm|ffmpeg|python|tools" >&2
	exit 2
	;;
esac
t_summary
