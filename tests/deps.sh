#!/bin/sh
# Installs the Debian packages that one part of xom needs, if any are missing.
# Usage: tests/deps.sh GROUP...   (groups: build, vm, bench, fuzz, peers)
#        tests/deps.sh --list GROUP...   prints the packages, installs nothing
# Prints nothing when everything is present, so `make` stays quiet.  Each
# group names everything it needs beyond a minimal Debian 12 (debootstrap
# --variant=minbase) with make and git; tests/fresh-debian.sh proves it.
set -eu

pkgs_for() {
	case "$1" in
	# The compiler and the libraries the parts link, libc.a for the static
	# program that `xom run` must refuse, binutils' strip/readelf/nm for
	# the scanner tests, and libcrypto, which the scanner tests and the
	# README's example scan.
	build) echo "gcc make libc6-dev binutils pkg-config libcapstone-dev libelf-dev zlib1g-dev libssl3" ;;
	# QEMU and what tests/vm/run and tests/vm/fetch use (cpio; xz and zstd
	# unpack the 6.1 and 6.12 kernels), and the packages of the programs that tests/vm/files.list
	# copies into the guest: coreutils' ls and sha256sum and libc-bin's
	# iconv and gconv modules are in every Debian system; these are not,
	# nor are the codec programs and libraries of tests/scan/vm-codecs.sh,
	# nor the real-program corpus of tests/vm/corpus-files.list (ffmpeg,
	# Python's regression tests, git, sqlite3), nor the gcc that
	# tests/cmd/guest-learn.sh compiles with, nor the systemd, crun and
	# mount of the services boot (tests/vm/services-files.list).
	vm)    echo "qemu-system-x86 cpio xz-utils zstd gcc binutils libc6-dev openssl python3 python3.11 libpython3.11-stdlib perl gpg git dash bash coreutils tar util-linux aom-tools dav1d vpx-tools libx264-164 libswscale6 libswresample4 ffmpeg libpython3.11-testsuite sqlite3 systemd crun mount" ;;
	# objdump (binutils) is the scan-speed baseline, gnuplot draws the
	# coverage plot, valgrind (callgrind) counts instructions and strace
	# the runtime's system calls.
	bench) echo "python3 gnuplot-nox binutils time valgrind strace" ;;
	# libFuzzer is in clang's runtime package; clang links it against
	# libstdc++.
	fuzz)  echo "clang libclang-rt-14-dev libstdc++-12-dev" ;;
	# The peers' own test suites that tests/peers/native.sh runs without
	# and with xom: Python's regression tests, for the version that
	# python3 is (3.11 on Debian 12), and GLib's installed tests.
	peers) echo "python3 libpython$(python_version)-testsuite libglib2.0-tests" ;;
	*) echo "tests/deps.sh: unknown group '$1'" >&2; exit 64 ;;
	esac
}

# The X.Y of Debian's python3, read from its link (python3 -> python3.11),
# so that the list is right before python3 is installed and on later
# releases; Debian 12's when there is no python3 yet.
python_version() {
	v=$(readlink /usr/bin/python3 2>/dev/null || true)
	case $v in
	python3.[0-9]*) echo "${v#python}" ;;
	*) echo 3.11 ;;
	esac
}

list=0
[ "${1:-}" = --list ] && { list=1; shift; }
[ $# -gt 0 ] || { echo "usage: tests/deps.sh [--list] GROUP... (build, vm, bench, fuzz, peers)" >&2; exit 64; }
if [ "$list" = 1 ]; then
	for g in "$@"; do pkgs_for "$g"; done | tr ' ' '\n' | sort -u | tr '\n' ' '
	echo
	exit 0
fi

missing=""
for g in "$@"; do
	for p in $(pkgs_for "$g"); do
		st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
		[ "$st" = installed ] || missing="$missing $p"
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
