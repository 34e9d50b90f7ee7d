/*
 * surface.S - one readable page with a known number of ret gadget
 * candidates (see scan/surface.c for the definition).
 *
 * read_tab reads the table on the page after it, so that page alone stays
 * readable: 4096 readable executable bytes.  The table is filled with 06,
 * which does not decode in 64-bit mode, so a C3 counts only when the few
 * bytes written before it decode.  Three of the seven C3 bytes do:
 *   90 c3        nop; ret                     yes
 *   06 06 c3     nothing before it decodes    no
 *   c3 c3        a ret before a ret           no (twice)
 *   eb 00 c3     a jump before it             no
 *   48 89 c3     mov needs the C3 as ModRM    no
 *   5d c3        pop %rbp; ret                yes
 *   31 c0 c3     xor %eax,%eax; ret           yes
 *
 * Built with -DTAB_IN_RODATA (and -z noseparate-code), the table is in
 * .rodata inside the executable segment instead: its page then stays
 * readable under the section-level method too, which leaves .text alone.
 */
	.text
	.p2align 12, 0xcc
	.type read_tab, @function
read_tab:
	.cfi_startproc
	leaq	.Ltab(%rip), %rax
	movl	(%rax,%rdi,4), %eax
	ret
	.cfi_endproc
	.size read_tab, . - read_tab

#ifdef TAB_IN_RODATA
	.section .rodata, "a"
	.p2align 12
#else
	.p2align 12, 0xcc
#endif
.Ltab:
	.byte	0x06, 0x90, 0xc3
	.byte	0x06, 0x06, 0x06, 0xc3
	.byte	0x06, 0xc3, 0xc3
	.byte	0x06, 0xeb, 0x00, 0xc3
	.byte	0x06, 0x48, 0x89, 0xc3
	.byte	0x06, 0x5d, 0xc3
	.byte	0x06, 0x31, 0xc0, 0xc3
	.fill	4096 - 26, 1, 0x06

#ifdef TAB_IN_RODATA
	.text
#endif
	.p2align 12, 0xcc
	.type after, @function
after:
	.cfi_startproc
	.fill	4095, 1, 0x90
	ret
	.cfi_endproc
	.size after, . - after

	.section .note.GNU-stack, "", @progbits
