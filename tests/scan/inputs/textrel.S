/*
 * textrel.S - a shared object whose .text holds an absolute pointer, so it
 * needs a relocation that the dynamic linker writes into the text (linked
 * with -z notext, which sets DT_TEXTREL).  The whole file must stay readable.
 */
	.text
	.globl	tr_get
	.p2align 12, 0xcc
	.type	tr_get, @function
tr_get:
	.cfi_startproc
	movq	tr_ptr(%rip), %rax
	ret
	.cfi_endproc
	.size	tr_get, . - tr_get

	.p2align 12, 0xcc
tr_ptr:
	.quad	tr_get

	.p2align 12, 0xcc
	.type	tr_pad, @function
tr_pad:
	.cfi_startproc
	.fill	4095, 1, 0x90
	ret
	.cfi_endproc
	.size	tr_pad, . - tr_pad

	.section .note.GNU-stack, "", @progbits
