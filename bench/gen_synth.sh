#!/bin/sh
# Writes a C file with N generated functions, for the scale benchmark:
#   gen_synth.sh N OUT.c
# Each function mixes arithmetic, a loop, a call, a switch (which gcc may
# turn into a jump table in .rodata) and a string, so that the code looks
# like ordinary compiled C to the scanner; at -O1 each is a few hundred bytes.
set -eu
n=$1
awk -v n="$n" 'BEGIN {
	print "#include <string.h>"
	print "unsigned long sink;"
	for (i = 0; i < n; i++) {
		printf "__attribute__((noinline)) unsigned long f%d(unsigned long a, unsigned long b)\n{\n", i
		printf "\tunsigned long r = a * %d + b;\n", i * 7 + 3
		printf "\tfor (unsigned long k = 0; k < (b & 15); k++)\n"
		printf "\t\tr = (r << 3) ^ (r >> 5) ^ (k * %d);\n", i + 11
		printf "\tswitch (a & 7) {\n"
		for (c = 0; c < 7; c++)
			printf "\tcase %d: r += %d; break;\n", c, (i * 13 + c * 17) % 1000
		printf "\tdefault: r ^= strlen(\"f%d\");\n\t}\n", i
		if (i > 0)
			printf "\tif (r & 1)\n\t\tr += f%d(r, a);\n", i - 1
		printf "\tsink += r;\n\treturn r;\n}\n"
	}
}' >"$2"
