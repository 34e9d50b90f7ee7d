#!/bin/sh
# The workload that produced profiles/gcc-12.profile: Debian 12's gcc 12
# compiling and linking two C programs with the options people use, under
# xom learn, through both doors, in the emulated-PKU guest.  Run it from
# the repository with
#   make vm-progs && tests/vm/run -- sh /xom/tests/learn/gcc-12-workload.sh
# it prints the profile between "-- profile" and "-- end" (see
# profiles/README.md).  The plans come from the host (make vm-progs builds
# them into build/tests/learn/cache), as in tests/cmd/guest-learn.sh.
set -u
cd /xom 2>/dev/null || cd "$(dirname "$0")/../.."
xom=$PWD/build/xom src=$PWD/tests/learn
tmp=$(mktemp -d)
mkdir -p "$tmp/cache" && cp -a build/tests/learn/cache/xom "$tmp/cache/" &&
	chmod 700 "$tmp/cache/xom"
cp "$src/hello.c" "$src/big.c" "$tmp/"
export XDG_CACHE_HOME=$tmp/cache XDG_CONFIG_HOME=$tmp/config
out=gcc-12.profile
cd "$tmp"
for door in preload audit; do
	for opts in "-O2" "-O0 -g" "-O3 -g" "-Os" "-O2 -fno-pie -no-pie" "-O2 -fPIC -shared"; do
		for f in hello.c big.c; do
			"$xom" learn -o "$out" --door $door -- gcc $opts $f -o prog 2>&1 |
				grep -v '^xom: allowed read'
		done
	done
done
echo "-- profile"
cat "$out"
echo "-- end"
"$xom" profile show "./$out"
