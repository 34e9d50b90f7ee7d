#!/bin/sh
# Writes a program linked against N small shared objects, for the
# many-object start-up and dlopen benchmarks:
#   gen_many.sh N DIR CC
# DIR/libm000.so ... each hold a few functions (so that each has code to
# plan), DIR/libextra.so is one more that bench/dlopen_loop.c loads and
# unloads, and DIR/many is a program with all N as DT_NEEDED that calls
# one function of each and exits.
set -eu
n=$1 d=$2 cc=${3:-cc}
mkdir -p "$d"
lib() {
	awk -v id="$1" 'BEGIN {
		for (i = 0; i < 4; i++) {
			printf "unsigned long %s_%d(unsigned long a)\n{\n", id, i
			printf "\tunsigned long r = a * %d + 1;\n", i * 5 + 3
			printf "\tfor (unsigned long k = 0; k < (a & 7); k++)\n"
			printf "\t\tr ^= (r << 3) + k;\n\treturn r;\n}\n"
		}
	}' >"$d/$1.c"
	$cc -O1 -fPIC -shared -o "$d/lib$1.so" "$d/$1.c"
	rm -f "$d/$1.c"
}
i=0 names=
while [ "$i" -lt "$n" ]; do
	id=$(printf 'm%03d' "$i")
	lib "$id" &
	# Two compilers at a time: the machines this runs on are small.
	[ $((i % 2)) -eq 1 ] && wait
	names="$names $id"
	i=$((i + 1))
done
lib extra
wait
{
	echo "#include <stdio.h>"
	for id in $names; do echo "unsigned long ${id}_0(unsigned long);"; done
	echo "int main(int argc, char **argv)"
	echo "{"
	echo "	unsigned long r = (unsigned long)argc;"
	for id in $names; do echo "	r += ${id}_0(r);"; done
	echo "	if (argc > 1) printf(\"%lu\\\\n\", r);"
	echo "	return 0;"
	echo "}"
} >"$d/many.c"
libs=$(for id in $names; do printf ' -l%s' "$id"; done)
# The run path is the directory itself, wherever it is.
$cc -O1 -o "$d/many" "$d/many.c" -L"$d" -Wl,-rpath,"$(cd "$d" && pwd)" -Wl,--no-as-needed $libs
rm -f "$d/many.c"
