#!/bin/sh
# The codec libraries under enforcement, in the emulated-PKU guest
# (tests/vm/guest.list): each program's output is byte-identical with and
# without xom, and the codec library really was execute-only while it ran
# (the probe, tests/runtime/probe.c, counts at exit the pages of its code
# that the kernel refuses to read).  libaom, libdav1d and libvpx run
# through their commands; libx264, libswscale and libswresample through
# convert.c, which drives their APIs.  Inputs are generated here: a 64x64 Y4M clip of three frames of
# random pixels, written once per run and shared by both runs.
# Usage: tests/scan/vm-codecs.sh warm|run
#   warm  builds the plans of the libraries (slow under TCG; its own part,
#         so that each stays under the guest's 120 s per program)
#   run   the comparisons
R=$(cd "$(dirname "$0")/../.." && pwd)
B=$R/build
P=$B/libxom.so PR=$B/tests/runtime/libxomprobe.so CV=$B/tests/scan/convert
W=/tmp/xom-codecs
mkdir -p "$W"
export XDG_CACHE_HOME=$W/cache
unset XOM_OPTIONS
. "$R/tests/lib.sh"

# xomrun CMD...: CMD under xom and the probe; the probe's lines in $W/probe.
xomrun() {
	rm -f "$W/probe"
	XOM_PROBE_OUT=$W/probe LD_PRELOAD="$P $PR" "$@"
}

# The probe's "UNREADABLE TOTAL" for the object whose path contains $1.
pages_of() {
	grep "$1" "$W/probe" 2>/dev/null | head -n 1 | awk '{ print $2 " " $3 }'
}

# case NAME LIB OUT CMD...: CMD writes OUT; runs it plain and under xom,
# compares OUT, and checks that LIB had execute-only pages.
case_() {
	name=$1 lib=$2 out=$3
	shift 3
	command -v "$1" >/dev/null || { t_skip "$name" "$1 is not in the guest"; return; }
	rm -f "$out"
	if ! "$@" >"$W/plain.log" 2>&1 || [ ! -s "$out" ]; then
		t_fail "$name" "fails without xom: $(tail -n 1 "$W/plain.log")"
		return
	fi
	mv "$out" "$W/plain.out"
	if ! xomrun "$@" >"$W/xom.log" 2>&1 || [ ! -s "$out" ]; then
		t_fail "$name" "fails under xom: $(tail -n 2 "$W/xom.log" | tr '\n' ' ')"
		return
	fi
	if ! cmp -s "$out" "$W/plain.out"; then
		t_fail "$name" "output differs under xom"
		return
	fi
	set -- $(pages_of "$lib")
	if [ -z "${1:-}" ] || [ "$1" = 0 ]; then
		t_fail "$name" "$lib was not execute-only (probe: ${1:-none} of ${2:-?} pages)"
		return
	fi
	t_pass "$name: same output under xom, $lib $1 of $2 exec pages execute-only"
}

# A Y4M clip: header, then three frames of 64x64 4:2:0 random pixels.
make_clip() {
	{
		printf 'YUV4MPEG2 W64 H64 F5:1 Ip A1:1 C420jpeg\n'
		for f in 1 2 3; do
			printf 'FRAME\n'
			head -c 6144 /dev/urandom
		done
	} >"$W/in.y4m"
}

if [ ! -r "$P" ] || [ ! -r "$PR" ]; then
	t_fail setup "$P or $PR is missing"
	exit 1
fi
case ${1:-run} in
warm)
	# The first run of each program builds the plans of what it loads.
	for p in /usr/bin/aomenc /usr/bin/dav1d /usr/bin/aomdec /usr/bin/vpxenc \
		 /usr/bin/vpxdec; do
		[ -x "$p" ] && xomrun "$p" --help >/dev/null 2>&1
	done
	xomrun "$CV" scale >/dev/null 2>&1
	xomrun "$CV" resample >/dev/null 2>&1
	xomrun "$CV" x264 >/dev/null 2>&1
	if [ -d "$W/cache" ]; then
		t_pass "warm: plans built for the codec programs"
	else
		t_fail warm "no plan cache in $W/cache"
	fi ;;
run)
	make_clip
	case_ "aomenc (libaom encode)" libaom "$W/clip.ivf" \
		/usr/bin/aomenc --rt --cpu-used=10 --threads=1 --limit=3 --ivf \
		-o "$W/clip.ivf" "$W/in.y4m"
	# Both decoders read the clip that the plain run encoded.
	[ -s "$W/plain.out" ] && cp "$W/plain.out" "$W/av1.ivf"
	if [ -s "$W/av1.ivf" ]; then
		case_ "dav1d (libdav1d decode)" libdav1d "$W/dec.y4m" \
			/usr/bin/dav1d --threads 1 -q -i "$W/av1.ivf" -o "$W/dec.y4m"
		case_ "aomdec (libaom decode)" libaom "$W/dec2.y4m" \
			/usr/bin/aomdec --rawvideo -o "$W/dec2.y4m" "$W/av1.ivf"
	else
		t_skip "decoders" "no AV1 clip to decode"
	fi
	case_ "swscale (yuv420p to rgb24, bicubic)" libswscale "$W/scale.txt" \
		sh -c "$CV scale >$W/scale.txt"
	case_ "swresample (stereo float 48k to mono s16 22.05k)" libswresample \
		"$W/resample.txt" sh -c "$CV resample >$W/resample.txt"
	# The x264 command and ffmpeg load 137 and 215 libraries, too many for
	# the guest under TCG: libx264 is driven through its API instead.
	case_ "libx264 encode (ultrafast, one thread)" libx264 "$W/x264.txt" \
		sh -c "$CV x264 >$W/x264.txt 2>/dev/null"
	case_ "vpxenc (libvpx VP9 encode)" libvpx "$W/clip.webm" \
		/usr/bin/vpxenc --codec=vp9 --rt --cpu-used=8 --threads=1 --limit=3 \
		--ivf -o "$W/clip.webm" "$W/in.y4m"
	[ -s "$W/plain.out" ] && cp "$W/plain.out" "$W/vp9.ivf"
	if [ -s "$W/vp9.ivf" ]; then
		case_ "vpxdec (libvpx VP9 decode)" libvpx "$W/dec3.y4m" \
			/usr/bin/vpxdec --rawvideo -o "$W/dec3.y4m" "$W/vp9.ivf"
	else
		t_skip "vpxdec" "no VP9 clip to decode"
	fi ;;
*)
	t_fail usage "tests/scan/vm-codecs.sh warm|run"
esac
t_summary
