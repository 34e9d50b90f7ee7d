/*
 * tables.S - code pages and data pages inside .text, with known answers.
 *
 * Every item starts on its own page, so the tests can say exactly which page
 * must stay readable and which must become execute-only.  The data themselves
 * carry no symbol: a symbol on a table could be taken as a hint, and the point
 * is that the scanner finds them from the instructions alone.  Instead, each
 * table sits at a fixed distance after the function that reads it; the test
 * driver computes the address as "function + N pages" (noted at each item).
 *
 * All functions are local and carry CFI, so that a stripped copy keeps their
 * bounds only in .eh_frame.  Table bytes are chosen to decode as harmless
 * instructions (add %eax,(%rax) and the like), so a disassembler that runs
 * into them cannot invent RIP-relative references elsewhere, and alignment
 * padding is int3 bytes (with NOPs gas would jump over a long padding,
 * which item 10 does on purpose).
 */

/* A function that fills exactly one page: pure code, must be execute-only. */
.macro codepage name
	.p2align 12, 0xcc
	.type \name, @function
\name:
	.cfi_startproc
	.fill 4095, 1, 0x90
	ret
	.cfi_endproc
	.size \name, . - \name
.endm


	.text

	codepage pad_first

/* 1. A 32-bit RIP-relative load; the table is at rip_load + 1 page. */
	.p2align 12, 0xcc
	.type rip_load, @function
rip_load:
	.cfi_startproc
	movl	.Ltab_rip(%rip), %eax
	ret
	.cfi_endproc
	.size rip_load, . - rip_load
	.p2align 12, 0xcc
.Ltab_rip:
	.long	1, 2, 3, 4
	codepage pad_rip

/* 2. SSE and AVX loads; tables at sse_load + 1 page and + 2 pages. */
	.p2align 12, 0xcc
	.type sse_load, @function
sse_load:
	.cfi_startproc
	movdqa	.Ltab_sse(%rip), %xmm0
	vmovdqu	.Ltab_avx(%rip), %ymm1
	paddd	%xmm1, %xmm0
	movd	%xmm0, %eax
	vzeroupper
	ret
	.cfi_endproc
	.size sse_load, . - sse_load
	.p2align 12, 0xcc
.Ltab_sse:
	.quad	1, 2
	.p2align 12, 0xcc
.Ltab_avx:
	.quad	1, 2, 3, 4
	codepage pad_sse

/* 3. lea of a table base, then an indexed load; table at lea_index + 1 page,
 *    two pages long: the table runs to the next code entry (pad_lea). */
	.p2align 12, 0xcc
	.type lea_index, @function
lea_index:
	.cfi_startproc
	leaq	.Ltab_lea(%rip), %rax
	movl	(%rax,%rdi,4), %eax
	ret
	.cfi_endproc
	.size lea_index, . - lea_index
	.p2align 12, 0xcc
.Ltab_lea:
	.fill	2048, 4, 1
	codepage pad_lea

/* 4. A base biased 8 bytes before its table, read as 8(%rax,%rcx,8).  The
 *    function is padded to the end of its page, so the biased address lies
 *    inside the function; the table is at biased + 1 page. */
	.p2align 12, 0xcc
	.type biased, @function
biased:
	.cfi_startproc
	leaq	.Ltab_bias-8(%rip), %rax
	movq	%rdi, %rcx
	movq	8(%rax,%rcx,8), %rax
	ret
	.balign	4096, 0xcc
	.cfi_endproc
	.size biased, . - biased
.Ltab_bias:
	.fill	512, 8, 1
	codepage pad_bias

/* 5. A string in .text returned to the caller; at get_str + 1 page. */
	.p2align 12, 0xcc
	.type get_str, @function
get_str:
	.cfi_startproc
	leaq	.Lmsg(%rip), %rax
	ret
	.cfi_endproc
	.size get_str, . - get_str
	.p2align 12, 0xcc
.Lmsg:
	.asciz	"a string that lives in .text"
	codepage pad_str

/* 6. A switch whose jump table of 32-bit offsets sits in .text, as
 *    hand-written assembly does; the table is at sw + 1 page. */
	.p2align 12, 0xcc
	.type sw, @function
sw:
	.cfi_startproc
	cmpq	$3, %rdi
	ja	.Ldefault
	leaq	.Lswtab(%rip), %rax
	movslq	(%rax,%rdi,4), %rdx
	addq	%rax, %rdx
	jmp	*%rdx
.Lcase0:
	movl	$10, %eax
	ret
.Lcase1:
	movl	$11, %eax
	ret
.Lcase2:
	movl	$12, %eax
	ret
.Lcase3:
	movl	$13, %eax
	ret
.Ldefault:
	xorl	%eax, %eax
	ret
	.cfi_endproc
	.size sw, . - sw
	.p2align 12, 0xcc
.Lswtab:
	.long	.Lcase0 - .Lswtab, .Lcase1 - .Lswtab
	.long	.Lcase2 - .Lswtab, .Lcase3 - .Lswtab
	codepage pad_sw

/* 7. Function pointers taken with lea are not data.  cb_a and cb_b have
 *    symbols; the third callback (at cb_b + 1 page) has only an FDE.  All
 *    three pages, and the page of reg_cb, must stay execute-only. */
	.p2align 12, 0xcc
	.type reg_cb, @function
reg_cb:
	.cfi_startproc
	leaq	cb_a(%rip), %rdi
	leaq	cb_b(%rip), %rsi
	leaq	.Lcb_c(%rip), %rdx
	jmp	*%rdx
	.cfi_endproc
	.size reg_cb, . - reg_cb
	codepage cb_a
	codepage cb_b
	.p2align 12, 0xcc
.Lcb_c:
	.cfi_startproc
	.fill	4095, 1, 0x90
	ret
	.cfi_endproc
	codepage pad_cb

/* 8. Code that reads its own instructions: a load from a function entry is
 *    a read all the same, so hookme's page must stay readable. */
	.p2align 12, 0xcc
	.type peek, @function
peek:
	.cfi_startproc
	movq	hookme(%rip), %rax
	ret
	.cfi_endproc
	.size peek, . - peek
	codepage hookme
	codepage pad_hook

/* 9. A prefetch reads nothing: the middle of prefetched is not data. */
	.p2align 12, 0xcc
	.type pf, @function
pf:
	.cfi_startproc
	prefetcht0 prefetched+2048(%rip)
	ret
	.cfi_endproc
	.size pf, . - pf
	codepage prefetched
	codepage pad_last

/* 10. For a large alignment gas pads with a jump over the padding, so this
 *     table's first byte is the target of a direct jmp; it is still a table
 *     read through lea, not code.  The table is at jpad + 1 page. */
	.p2align 12, 0xcc
	.type jpad, @function
jpad:
	.cfi_startproc
	leaq	.Ltab_jpad(%rip), %rax
	movl	(%rax,%rdi,4), %eax
	ret
	.cfi_endproc
	.size jpad, . - jpad
	.p2align 12
.Ltab_jpad:
	.fill	1024, 4, 1
	codepage pad_jpad

/* Read-only data: in the executable segment only without separate-code. */
	.section .rodata, "a"
	.p2align 12, 0xcc
	.globl	ro_data
	.type	ro_data, @object
ro_data:
	.fill	1024, 4, 0x01020304
	.size	ro_data, . - ro_data

	.section .note.GNU-stack, "", @progbits
