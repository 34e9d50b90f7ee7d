#!/bin/sh
# Installs the Debian packages that one part of xom needs, if any are missing.
# Usage: tests/deps.sh GROUP...   (groups: build, vm, bench, fuzz)
# Prints nothing when everything is present, so `make` stays quiet.
set -eu

pkgs_for() {
	case "$1" in
	build) echo "libcapstone-dev libelf-dev pkg-config libssl3" ;;
	vm)    echo "qemu-system-x86 cpio xz-utils aom-tools dav1d vpx-tools libx264-164 libswscale6 libswresample4" ;;
	bench) echo "gnuplot-nox binutils time python3" ;;
	fuzz)  echo "clang libclang-rt-14-dev" ;;
	*) echo "tests/deps.sh: unknown group '$1'" >&2; exit 64 ;;
	esac
}

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
