#!/bin/sh
# Installs the Debian packages that one part of xom needs, if any are missing.
# Usage: tests/deps.sh GROUP...   (groups: build, vm, demo, static, bench, fuzz, peers, deb, debtest)
#        tests/deps.sh --list GROUP...   prints the packages, installs nothing
# Prints nothing when everything is present, so `make` stays quiet.  Each
# group names everything it needs beyond a minimal Debian 12 or 13
# (debootstrap --variant=minbase) with make and git; tests/fresh-debian.sh
# and tests/debian13.sh prove it.
set -eu

# Package names that differ between Debian releases are found rather than
# written down: each is a dependency of a package that has the same name on
# every release (python3 depends on python3.11 on Debian 12 and on
# python3.13 on Debian 13).  dep_of PKG PATTERN prints the first dependency
# of PKG whose name matches the extended regular expression PATTERN, from
# dpkg when PKG is installed, else from apt's package lists (refreshed once
# when they are empty, as on a fresh machine, where we are root).
refreshed=0
dep_of() {
	local d
	d=$(dpkg-query -W -f='${Depends}' "$1" 2>/dev/null | tr ',|' '\n\n' |
		awk -v p="^($2)\$" '$1 ~ p { print $1; exit }')
	if [ -z "$d" ]; then
		d=$(apt_dep "$1" "$2")
		if [ -z "$d" ] && [ "$refreshed" = 0 ] && [ "$(id -u)" = 0 ]; then
			refreshed=1
			apt-get update -qq >&2 || true
			d=$(apt_dep "$1" "$2")
		fi
	fi
	[ -n "$d" ] || { echo "tests/deps.sh: cannot find which package $1 depends on for '$2'" >&2; exit 2; }
	echo "$d"
}
apt_dep() {
	apt-cache depends "$1" 2>/dev/null |
		awk -v p="^($2)\$" '$1 ~ /Depends:$/ && $2 ~ p { print $2; exit }'
}

# Debian's default Python (python3.11), its standard library and its tests.
python_pkgs() {
	local py
	py=$(dep_of python3 'python3[.][0-9]+') || exit 2
	echo "$py lib$py-stdlib lib$py-testsuite"
}

# FFmpeg's scaling and resampling libraries and libx264, whose sonames
# change with FFmpeg's major versions (libswscale6, libswscale8).
ffmpeg_pkgs() {
	local sws swr avc x264
	sws=$(dep_of ffmpeg 'libswscale[0-9]+') || exit 2
	swr=$(dep_of ffmpeg 'libswresample[0-9]+') || exit 2
	avc=$(dep_of ffmpeg 'libavcodec[0-9]+') || exit 2
	x264=$(dep_of "$avc" 'libx264-[0-9]+') || exit 2
	echo "$sws $swr $x264"
}

# libFuzzer for the default clang (clang-14's libclang-rt-14-dev), and the
# C++ library of the default gcc, which clang links against.
fuzz_pkgs() {
	local clang gcc
	clang=$(dep_of clang 'clang-[0-9]+') || exit 2
	gcc=$(dep_of gcc 'gcc-[0-9]+') || exit 2
	echo "libclang-rt-${clang#clang-}-dev libstdc++-${gcc#gcc-}-dev"
}

pkgs_for() {
	case "$1" in
	# The compiler and the libraries the parts link, libc.a for the static
	# program that `xom run` must refuse, binutils' strip/readelf/nm for
	# the scanner tests, and libcrypto, which the scanner tests and the
	# example scan of docs/scanner.md (libssl3 is a virtual package on Debian 13,
	# provided by libssl3t64: see installed() below).
	build) echo "gcc make libc6-dev binutils pkg-config libcapstone-dev libelf-dev zlib1g-dev libssl3" ;;
	# QEMU and what tests/vm/run and tests/vm/fetch use (cpio; xz and zstd
	# unpack the 6.1 and 6.12 kernels), and the packages of the programs that tests/vm/files.list
	# copies into the guest: coreutils' ls and sha256sum and libc-bin's
	# iconv and gconv modules are in every Debian system; these are not,
	# nor are the codec programs and libraries of tests/scan/vm-codecs.sh,
	# nor the real-program corpus of tests/vm/corpus-files.list (ffmpeg,
	# Python's regression tests, git, sqlite3), nor the gcc that
	# tests/cmd/guest-learn.sh compiles with, nor the systemd, timesyncd,
	# dbus, crun and mount of the services boot
	# (tests/vm/services-files.list).
	vm)    py=$(python_pkgs) && ff=$(ffmpeg_pkgs) || exit 2
	       echo "qemu-system-x86 cpio xz-utils zstd gcc binutils libc6-dev openssl python3 $py perl gpg git dash bash coreutils tar util-linux aom-tools dav1d vpx-tools ffmpeg $ff sqlite3 systemd systemd-timesyncd dbus crun mount" ;;
	# `make demo` on a machine without keys: QEMU and what tests/vm/fetch
	# needs for the kernel and busybox, nothing that the suite's guest
	# copies (tests/vm/run --demo).
	demo)  echo "qemu-system-x86 cpio xz-utils zstd" ;;
	# The static programs that the guest's tests of xom run build besides
	# glibc's -static and -static-pie ones: the probe with musl, and a Go
	# program (the Go toolchain is large, about 330 MB installed, so it
	# is needed only for the VM suite).
	static) echo "musl-tools golang-go" ;;
	# objdump (binutils) is the scan-speed baseline, gnuplot draws the
	# coverage plot, valgrind (callgrind) counts instructions and strace
	# the runtime's system calls.
	bench) echo "python3 gnuplot-nox binutils time valgrind strace" ;;
	# libFuzzer is in clang's runtime package; clang links it against
	# libstdc++.
	fuzz)  fz=$(fuzz_pkgs) || exit 2
	       echo "clang $fz" ;;
	# The peers' own test suites that tests/peers/native.sh runs without
	# and with xom: Python's regression tests, for the version that
	# python3 is (3.11 on Debian 12), and GLib's installed tests.
	peers) py=$(python_pkgs) || exit 2
	       echo "python3 ${py##* } libglib2.0-tests" ;;
	# make deb: debhelper and dpkg-buildpackage build the packages
	# (debian/; dpkg-checkbuilddeps wants build-essential by name),
	# lintian checks them; git lists the tree's files.
	deb)   echo "build-essential debhelper dpkg-dev fakeroot lintian git" ;;
	# make check-deb: a Debian 12 root to install the packages into.
	debtest) echo "debootstrap" ;;
	*) echo "tests/deps.sh: unknown group '$1'" >&2; exit 64 ;;
	esac
}

list=0
[ "${1:-}" = --list ] && { list=1; shift; }
[ $# -gt 0 ] || { echo "usage: tests/deps.sh [--list] GROUP... (build, vm, demo, static, bench, fuzz, peers, deb, debtest)" >&2; exit 64; }
if [ "$list" = 1 ]; then
	all=""
	for g in "$@"; do all="$all $(pkgs_for "$g")" || exit 2; done
	echo "$all" | tr ' ' '\n' | sed '/^$/d' | sort -u | tr '\n' ' '
	echo
	exit 0
fi

# installed PKG: whether PKG, or a package that provides it, is installed.
# A virtual package (libssl3 on Debian 13) is never installed itself, and
# apt-get install picks its one provider.
provided=""
installed() {
	local st
	st=$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true)
	[ "$st" = installed ] && return 0
	[ -n "$provided" ] || provided=$(dpkg-query -W -f='${db:Status-Status} ${Provides}\n' 2>/dev/null |
		awk '$1 == "installed" { $1 = ""; print }' | tr ',' '\n' | awk '{ print $1 }' | sort -u)
	echo "$provided" | grep -qxF -- "$1"
}

missing=""
for g in "$@"; do
	pkgs=$(pkgs_for "$g")
	for p in $pkgs; do
		installed "$p" || missing="$missing $p"
	done
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "xom: missing Debian packages:$missing" >&2
	echo "xom: install them with: sudo apt-get install$missing" >&2
	exit 2
fi
echo "xom: installing Debian packages:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# The package lists of a fresh machine may be empty or stale; refresh once.
apt-get update -qq >&2 || true
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >&2
