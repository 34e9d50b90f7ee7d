/*
 * bulk.S - a library with a lot of code and nothing else, for the tests
 * that need a scan to take a while (a fork, a cancellation or a signal
 * during it).  About 1.6 MB of instructions: a few hundred milliseconds of
 * scanning.  Unlike the system's big libraries, it is really unloaded by
 * dlclose, so that every dlopen maps it anew.
 */
	.text
	.globl xom_bulk
	.type xom_bulk, @function
xom_bulk:
	.rept 150000
	lea 1(%rdi), %rax
	imul $3, %rax, %rax
	add %rsi, %rax
	.endr
	ret
	.size xom_bulk, .-xom_bulk
	.section .note.GNU-stack, "", @progbits
