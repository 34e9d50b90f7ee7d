#!/bin/sh
# Runs in the emulated-PKU guest (tests/vm/run -- sh /xom/build/bench/vm_runtime.sh):
# CPU-bound work with and without xom's preload library, alternating, six
# rounds.  Prints "RESULT WORKLOAD plain|xom VALUE UNIT" lines for bench.py,
# and NOTE lines that it copies into the report.  Under TCG only the ratio
# of the two variants means anything.
set -u
lib=/xom/build/libxom.so
opts="cache=/tmp/xom-cache"
rounds=6
# Debian's python3 by its real name (python3.11 on Debian 12).
py="$(readlink -f /usr/bin/python3) -S -c"
loop='import time
t = time.perf_counter()
s = 0
for i in range(1000000):
    s += i * i
print(time.perf_counter() - t)'

if ! grep -qw pku /proc/cpuinfo; then
	echo "NOTE the guest CPU does not report pku; xom cannot protect anything here"
fi
# One verbose run shows that xom really protects the workload's code, and
# fills the plan cache so that no round pays for a scan.
v=$(LD_PRELOAD=$lib XOM_OPTIONS="$opts:verbose=1" openssl version 2>&1 >/dev/null)
echo "$v" | grep libcrypto | sed 's/^/NOTE guest: /'
echo "$v" | sed -nE 's/.*: ([0-9]+) pages execute-only, ([0-9]+) kept readable, ([0-9]+) protection calls.*/\1 \2 \3/p' |
	awk '{ x += $1; r += $2; c += $3; n++ }
	     END { printf "NOTE with xom, openssl start-up: %d objects, %d pages made execute-only, %d kept readable, %d protection calls\n", n, x, r, c }'
LD_PRELOAD=$lib XOM_OPTIONS="$opts" $py pass >/dev/null 2>&1

speed() {  # speed VARIANT ALG ARGS...: bytes per second for 16 KiB blocks
	v=$1 alg=$2
	shift 2
	if [ "$v" = xom ]; then
		out=$(LD_PRELOAD=$lib XOM_OPTIONS=$opts openssl speed -mr -seconds 1 -bytes 16384 "$@" 2>/dev/null)
	else
		out=$(openssl speed -mr -seconds 1 -bytes 16384 "$@" 2>/dev/null)
	fi
	b=$(echo "$out" | grep '^+F:' | tail -n 1 | cut -d: -f4)
	echo "RESULT $alg $v ${b:-0} bytes/s"
}

pyloop() {
	v=$1
	if [ "$v" = xom ]; then
		s=$(LD_PRELOAD=$lib XOM_OPTIONS=$opts $py "$loop" 2>/dev/null)
	else
		s=$($py "$loop" 2>/dev/null)
	fi
	echo "RESULT python-loop $v ${s:-0} s"
}

# The order flips every round, so that whatever running first or second
# costs falls on both variants alike.
r=0
while [ $r -lt $rounds ]; do
	if [ $((r % 2)) = 0 ]; then order="plain xom"; else order="xom plain"; fi
	for v in $order; do
		speed $v sha256 sha256
		speed $v aes-128-cbc -evp aes-128-cbc
		pyloop $v
	done
	r=$((r + 1))
done
