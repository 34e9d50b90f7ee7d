/*
 * hello.c - the C program that the gcc tests compile (tests/cmd/guest-learn.sh).
 * Its initialised global variable goes to .data, and assembling it is
 * where gcc 12's cc1 reads the first bytes of its own function
 * output_section_asm_op (through a section's union read as a named
 * section's name): the read that the shipped profile keeps readable.
 */
#include <stdio.h>

int answer = 42;

int main(void)
{
	printf("hello, world %d\n", answer);
	return 0;
}
