/*
 * gadgets.S - WRPKRU and XRSTOR byte sequences, aligned and not.  The
 * offsets from g_func are fixed by the encodings and listed in the driver:
 *   +0  b8 0f 01 ef 00   mov $0xef010f,%eax  WRPKRU bytes at +1, unaligned
 *   +5  0f 01 ef         wrpkru              aligned
 *   +8  0f ae 2f         xrstor (%rdi)       aligned
 *   +11 b8 0f ae 2f 00   mov $0x2fae0f,%eax  XRSTOR bytes at +12, unaligned
 *   +16 0f ae e8         lfence              mod=3: not an XRSTOR
 *   +19 48 0f ae 2f      xrstor64 (%rdi)     XRSTOR bytes at +20
 *   +23 0f ae 68 10      xrstor 0x10(%rax)   mod=1, aligned
 *   +27 c3               ret
 */
	.text
	.p2align 12, 0xcc
	.type	g_func, @function
g_func:
	.cfi_startproc
	movl	$0x00ef010f, %eax
	wrpkru
	xrstor	(%rdi)
	movl	$0x002fae0f, %eax
	lfence
	xrstor64 (%rdi)
	xrstor	0x10(%rax)
	ret
	.cfi_endproc
	.size	g_func, . - g_func

	.p2align 12, 0xcc
	.type	g_pad, @function
g_pad:
	.cfi_startproc
	.fill	4095, 1, 0x90
	ret
	.cfi_endproc
	.size	g_pad, . - g_pad

/* WRPKRU bytes in read-only data: outside the executable segment when the
 * file is linked with separate-code, so they must not be listed then. */
	.section .rodata, "a"
	.p2align 4
	.globl	g_ro
	.type	g_ro, @object
g_ro:
	.byte	0x0f, 0x01, 0xef, 0x00
	.size	g_ro, . - g_ro

	.section .note.GNU-stack, "", @progbits
