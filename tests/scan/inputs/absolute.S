/*
 * absolute.S - a non-PIE executable that names tables in .text by absolute
 * address, as non-PIC code and its switch tables do.  Each table is one page
 * after the previous item, starting at _start + 1 page; see the test driver.
 * Tables carry no symbol, so only the instructions can reveal them, and
 * each is read through the register that holds its address: an address
 * loaded and never used reads nothing.
 */
	.text
	.globl	_start
	.p2align 12, 0xcc
	.type	_start, @function
_start:
	.cfi_startproc
	movl	$.Ltab_imm32, %eax		/* 32-bit immediate, */
	movl	(%rax,%rdi,4), %ecx		/* read through */
	movabsq	$.Ltab_imm64, %rax		/* 64-bit immediate, */
	movl	8(%rax), %ecx			/* read through */
	movl	.Ltab_disp(,%rdi,4), %eax	/* absolute displacement */
	movl	$cb_abs, %edi			/* a function pointer: not data */
	movl	$60, %eax
	syscall
	.cfi_endproc
	.size	_start, . - _start

	.p2align 12, 0xcc
.Ltab_imm32:
	.fill	1024, 4, 1
	.p2align 12, 0xcc
.Ltab_imm64:
	.fill	1024, 4, 1
	.p2align 12, 0xcc
.Ltab_disp:
	.fill	1024, 4, 1

/* cb_abs is at _start + 4 pages and must stay execute-only. */
	.p2align 12, 0xcc
	.type	cb_abs, @function
cb_abs:
	.cfi_startproc
	.fill	4095, 1, 0x90
	ret
	.cfi_endproc
	.size	cb_abs, . - cb_abs

	.p2align 12, 0xcc
	.type	pad_abs, @function
pad_abs:
	.cfi_startproc
	.fill	4095, 1, 0x90
	ret
	.cfi_endproc
	.size	pad_abs, . - pad_abs

	.section .note.GNU-stack, "", @progbits
