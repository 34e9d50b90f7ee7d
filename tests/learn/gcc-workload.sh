#!/bin/sh
# The workload of tests/learn/gcc-12-workload.sh for another release's gcc,
# in the emulated-PKU guest: with --chroot ARCHIVE it unpacks that root
# (tests/learn/debian13-gcc.sh makes one), mounts /proc, /dev and /xom in
# it, and runs there.  gcc compiles and links tests/learn/hello.c and big.c
# with the options people use, under xom learn, through both doors; then
# the profile is printed between "-- profile" and "-- end", and three
# controls show that the runs were protected and that learning records
# reads: what xom made execute-only in gcc's programs, what xom learn
# records of the demo victim (which reads its code), and the demo.
set -u
if [ "${1:-}" = --chroot ]; then
	R=/tmp/gcc-root
	if ! { mkdir -p $R && tar -xf "$2" -C $R; }; then
		echo "cannot unpack $2"
		exit 1
	fi
	mkdir -p $R/bin $R/tmp $R/proc $R/dev $R/xom
	[ -e $R/lib64 ] || ln -s usr/lib64 $R/lib64
	[ -e $R/lib ] || ln -s usr/lib $R/lib
	cp /bin/busybox $R/bin/busybox &&
		for t in sh cat head tail grep rm mktemp cp; do ln -sf busybox $R/bin/$t; done
	if ! { mount -t proc proc $R/proc && mount --bind /dev $R/dev &&
	       mount --bind /xom $R/xom; }; then
		echo "cannot mount in $R"
		exit 1
	fi
	exec chroot $R /bin/sh /xom/tests/learn/gcc-workload.sh
fi
export PATH=/usr/bin:/bin
xom=/xom/build/xom demo=/xom/build/demo
tmp=$(mktemp -d)
export XDG_CACHE_HOME="$tmp/cache" XDG_CONFIG_HOME="$tmp/config"
cp /xom/tests/learn/hello.c /xom/tests/learn/big.c "$tmp/"
cd "$tmp" || exit 1
v=$(gcc -dumpversion)
out=gcc-${v%%.*}.profile
gcc --version | head -n 1
for door in preload audit; do
	for opts in "-O2" "-O0 -g" "-O3 -g" "-Os" "-O2 -fno-pie -no-pie" "-O2 -fPIC -shared"; do
		for f in hello.c big.c; do
			rm -f prog
			# shellcheck disable=SC2086 # the options are words
			"$xom" learn -o "$out" --door $door -- gcc $opts $f -o prog 2>&1 |
				grep -v '^xom: allowed read'
			[ -s prog ] || echo "gcc $opts $f: no output"
		done
	done
done
echo "-- profile"
cat "$out"
echo "-- end"
"$xom" profile show "./$out"
echo "-- control: execute-only pages in gcc's programs"
XOM_OPTIONS=verbose=1 "$xom" run -- gcc -O2 hello.c -o prog 2>&1 | grep 'execute-only'
echo "-- control: xom learn records the demo victim's reads of its own code"
"$xom" learn -o demo.profile -- "$demo/attacker" -q "$demo/victim" 2>&1 | grep '^xom: learn:'
echo "-- control: the demo"
"$demo/attacker" "$demo/victim" | grep -E ' pop rdx +at|attack (succeeded|failed)'
"$demo/attacker" "$xom" run -- "$demo/victim" 2>&1 | grep -E 'blocked|attack (succeeded|failed)'
