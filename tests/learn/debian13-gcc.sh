#!/bin/bash
# Learns what Debian 13's gcc 14 reads of its own code, from a Debian 12
# machine: the packages that compile and link a C program (gcc 14,
# binutils, libc6-dev and what they load) are downloaded from trixie and
# unpacked, never installed; the emulated-PKU guest chroots into them, so
# that every program runs at its own path with trixie's dynamic linker and
# libraries, and tests/learn/gcc-workload.sh runs there: the workload that
# produced profiles/gcc-12.profile, under real (emulated) keys.  It prints
# the guest's output; the profile, if any page was read, lies between
# "-- profile" and "-- end" (see profiles/README.md).
#
#   tests/learn/debian13-gcc.sh        (from the repository, after make)
#
# trixie's package lists are read through a source list of their own under
# the build folder, so the machine's apt configuration stays as it is.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${B:-build}
d=$(mkdir -p "$B/learn-d13" && cd "$B/learn-d13" && pwd)
# Pruned from every archive tests/vm/run builds of build/: the root goes
# only into this boot's.
w=$d/work
mkdir -p "$w/apt/lists/partial" "$w/apt/cache/archives/partial" "$w/debs"

packages="gcc-14 gcc-14-x86-64-linux-gnu cpp-14 cpp-14-x86-64-linux-gnu gcc-14-base
	libgcc-14-dev binutils binutils-x86-64-linux-gnu binutils-common libbinutils
	libctf-nobfd0 libctf0 libgprofng0 libsframe1 libjansson4 libc6 libc6-dev
	libc-dev-bin linux-libc-dev libcrypt1 libcrypt-dev libgcc-s1 libstdc++6
	libisl23 libmpc3 libmpfr6 libgmp10 libzstd1 zlib1g"

# The Debian mirror that the machine uses for bookworm (as tests/vm/fetch).
# shellcheck disable=SC2016 # apt's own placeholders
mirror=$(apt-get indextargets --format '$(RELEASE) $(REPO_URI)' 2>/dev/null |
	awk '$1 == "bookworm" { print $2; exit }')
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian/
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main" \
	>"$w/apt/sources.list"
apt=(-o Dir::Etc::SourceList="$w/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o Dir::State::Lists="$w/apt/lists" -o Dir::State::status=/dev/null
	-o Dir::Cache="$w/apt/cache" -o APT::Architecture=amd64)
if [ ! -s "$w/root.tar" ]; then
	apt-get "${apt[@]}" update -q >&2
	# apt-get download writes into the current directory.  As root it
	# warns that the sandbox user cannot write there; that is harmless.
	# shellcheck disable=SC2086
	(cd "$w/debs" && apt-get "${apt[@]}" download -q $packages 2>&1 |
		grep -v '^W: Download is performed unsandboxed' >&2) || true
	rm -rf "$w/root" && mkdir -p "$w/root"
	for p in $packages; do
		deb=$(find "$w/debs" -name "${p}_*.deb" | head -n 1)
		[ -n "$deb" ] || { echo "debian13-gcc: cannot download $p" >&2; exit 2; }
		dpkg-deb -x "$deb" "$w/root"
	done
	# Documentation and the sanitizers' archives are not needed to build a
	# program, and the archive has to fit in the guest's memory.
	rm -rf "$w/root/usr/share" "$w/root/usr/lib/gcc/x86_64-linux-gnu/14/"lib*san*
	ln -sf gcc-14 "$w/root/usr/bin/gcc"
	tar -C "$w/root" -cf "$w/root.tar" .
	rm -rf "$w/root" "$w/debs"
fi
echo "# Debian 13's gcc 14 and binutils, unpacked: $w/root.tar" >"$w/files.list"
echo "$w/root.tar" >>"$w/files.list"
make -s all
tests/vm/run --files "$w/files.list" --mem 3072M --prog-timeout 2400 --timeout 2500 \
	-- sh /xom/tests/learn/gcc-workload.sh --chroot "$w/root.tar"
