/*
 * flow.S - code addresses loaded into registers, with known answers: what
 * the register is then used for decides whether the bytes it points at
 * are read as data.
 *
 * Each item is a function that loads the address of something one page
 * after it; the test driver checks the page "function + 1 page".  The
 * things loaded carry no symbol and no CFI, so only the instructions can
 * tell what they are.  Items 1-5 load code, which must become
 * execute-only; items 6-12 load tables, which must stay readable, and the
 * bytes of most of those tables are real instructions (cl_bytes), so that
 * a scanner that looks at the bytes alone would call them code.
 */

/* Bytes that read as a small function: mov $1,%eax; ret; padded. */
.macro cl_bytes label
	.p2align 12, 0xcc
\label:
	movl	$1, %eax
	addl	%edi, %eax
	ret
	.fill	64, 1, 0xcc
.endm

.macro item name
	.p2align 12, 0xcc
	.type \name, @function
\name:
	.cfi_startproc
.endm

.macro end_item name
	.cfi_endproc
	.size \name, . - \name
.endm

/* A page of code with CFI: an entry that ends the table before it. */
.macro pad name
	item \name
	.fill	4095, 1, 0x90
	ret
	end_item \name
.endm

	.text

/* 1. A function pointer stored into a structure, as DSP init code does:
 *    the target has no symbol and no CFI, and reads as a function. */
	item store_fp
	leaq	.Lsse_fn(%rip), %rcx
	movq	%rcx, 16(%rdi)
	leaq	.Lsse_fn2(%rip), %rcx
	movq	%rcx, 24(%rdi)
	ret
	end_item store_fp
	.p2align 12, 0xcc
.Lsse_fn:
	movdqu	(%rsi), %xmm0
	paddw	%xmm1, %xmm0
	movdqu	%xmm0, (%rdi)
	ret
	.p2align 4, 0xcc
.Lsse_fn2:
	pxor	%xmm0, %xmm0
	ret

/* 2. A continuation label: loaded, then a shared tail jumps through it. */
	item cont
	leaq	.Lcont(%rip), %r8
	jmp	.Ltail
.Ltail:
	movq	%rdi, %rax
	jmp	*%r8
	.p2align 12, 0xcc
.Lcont:
	addq	$1, %rax
	ret
	end_item cont

/* 3. A PIC base: base + displacement reads .rodata, not the code there. */
	item pic_base
	leaq	.Lbase(%rip), %rax
	movl	ro_tab - .Lbase(%rax,%rdi,4), %eax
	ret
	.p2align 12, 0xcc
.Lbase:
	ret
	end_item pic_base

/* 4. A jump table in .rodata, its offsets taken from a code label. */
	item jt_ro
	leaq	.Lj(%rip), %rax
	movzwl	jt - .Lj(%rax,%rdi,2), %ecx
	addq	%rax, %rcx
	jmp	*%rcx
	.p2align 12, 0xcc
.Lj:
	movl	$1, %eax
	ret
.Lj2:
	movl	$2, %eax
	ret
	end_item jt_ro

/* 5. A dispatcher that returns the function it chose. */
	item pick_fn
	leaq	.Lchosen(%rip), %rax
	ret
	end_item pick_fn
	.p2align 12, 0xcc
.Lchosen:
	movl	%edi, %eax
	imull	%esi, %eax
	ret

/* 5b. A call to abort() with the pointer live: nothing follows it. */
	item noreturn
	leaq	.Lnr(%rip), %rcx
	movq	%rcx, (%rdi)
	testl	%esi, %esi
	jne	1f
	call	abort@PLT
1:	ret
	end_item noreturn
	.p2align 12, 0xcc
.Lnr:
	movl	%esi, %eax
	ret

/* 6. A table passed to memcpy: the callee reads it, whatever its bytes. */
	item to_memcpy
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	leaq	.Lmc(%rip), %rsi
	movl	$64, %edx
	call	memcpy@PLT
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	ret
	end_item to_memcpy
	cl_bytes .Lmc

/* 7. A table reached through a copy of the register. */
	item two_regs
	leaq	.Ltwo(%rip), %rax
	movq	%rax, %rcx
	movl	(%rcx,%rdi,4), %eax
	ret
	end_item two_regs
	cl_bytes .Ltwo

/* 8. A table read with an index scaled by 8. */
	item scaled8
	leaq	.Lsc8(%rip), %rax
	movq	(%rax,%rdi,8), %rax
	ret
	end_item scaled8
	cl_bytes .Lsc8

/* 9. A table read inside code with neither CFI nor a function symbol. */
	pad pad_nc
	.p2align 12, 0xcc
nocfi:
	leaq	.Lnc(%rip), %rax
	testl	%edi, %edi
	je	1f
	movl	8(%rax), %eax
1:	ret
	cl_bytes .Lnc

	pad pad_st

/* 10. A table stored into a structure: its bytes do not read as code. */
	item store_tab
	leaq	.Lst(%rip), %rcx
	movq	%rcx, (%rdi)
	ret
	end_item store_tab
	.p2align 12, 0xcc
.Lst:
	.long	1, 2, 3, 4, 0, 0, 0, 0

/* 11. Spilled to the stack, the address may come back anywhere. */
	item spill
	leaq	.Lsp(%rip), %rax
	movq	%rax, -8(%rsp)
	movq	-8(%rsp), %rdx
	movl	(%rdx), %eax
	ret
	end_item spill
	cl_bytes .Lsp

/* 12. A table left in a scratch register at the return of code without
 *     CFI: an internal helper may hand it to its caller that way. */
/* 12b. A table kept in a callee-saved register across a call to another
 *      object's function, and read after it. */
	item across_call
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	leaq	.Lac(%rip), %rbx
	call	ext_fn@PLT
	movl	(%rbx), %eax
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	ret
	end_item across_call
	cl_bytes .Lac

	pad pad_hl
	.p2align 12, 0xcc
helper:
	leaq	.Lhl(%rip), %r10
	ret
	cl_bytes .Lhl

/* 12c. A table read at its base, the base then returned in rdx as the
 *      second half of a returned pair: the read decides, the return does
 *      not make it a returned function pointer. */
	pad pad_rr
	item read_ret
	leaq	.Lrr(%rip), %rdx
	movl	(%rdx,%rdi,4), %eax
	ret
	end_item read_ret
	cl_bytes .Lrr

/* 1b. A function pointer stored to a function that runs unrolled for
 *     12 KiB before its return, as hand-written SIMD code does. */
	pad pad_lf
	item long_fn
	leaq	.Llf(%rip), %rcx
	movq	%rcx, 8(%rdi)
	ret
	end_item long_fn
	.p2align 12, 0xcc
.Llf:
	.rept	3072
	paddw	%xmm1, %xmm0
	.endr
	ret

/* 10b. A stored pointer to 12 KiB of bytes that decode as instructions
 *      but never return before the next entry. */
	pad pad_lt
	item long_tab
	leaq	.Llt(%rip), %rcx
	movq	%rcx, 8(%rdi)
	ret
	end_item long_tab
	.p2align 12, 0xcc
.Llt:
	.rept	3072
	paddw	%xmm1, %xmm0
	.endr

/* ---- the stack: spilled, pushed, reloaded, popped ---------------------- */

/* 13. A function pointer of a CPU-dispatch setup function: loaded early,
 *     kept on the stack while other code runs, reloaded and stored into a
 *     global table.  The target has no symbol and no CFI. */
	pad pad_ss
	item spill_store
	subq	$40, %rsp
	.cfi_adjust_cfa_offset 40
	leaq	.Lss(%rip), %rax
	movq	%rax, 16(%rsp)
	movq	%rdi, 24(%rsp)
	xorl	%eax, %eax
	movups	%xmm0, (%rsp)
	testl	%esi, %esi
	je	1f
	movq	16(%rsp), %rdx
	movq	%rdx, 8(%rdi)
1:	addq	$40, %rsp
	.cfi_adjust_cfa_offset -40
	ret
	end_item spill_store
	.p2align 12, 0xcc
.Lss:
	movdqu	(%rsi), %xmm0
	psubw	%xmm1, %xmm0
	movdqu	%xmm0, (%rdi)
	ret

/* 14. x86inc's continuation: the label pushed, a shared tail called
 *     through another register that returns through r8, then popped and
 *     jumped through.  No CFI. */
	pad pad_pc
	.p2align 12, 0xcc
push_cont:
	leaq	.Lpc(%rip), %r8
	leaq	.Lpc_tail(%rip), %rcx
	pushq	%r8
	leaq	1f(%rip), %r8
	jmp	*%rcx
1:	popq	%r8
	jmp	*%r8
.Lpc_tail:
	movq	%rdi, %rax
	jmp	*%r8
	.p2align 12, 0xcc
.Lpc:
	addq	$1, %rax
	ret

/* 15. Spilled, reloaded, then read through. */
	pad pad_sr
	item spill_read
	subq	$24, %rsp
	.cfi_adjust_cfa_offset 24
	leaq	.Lsr(%rip), %rax
	movq	%rax, 8(%rsp)
	xorl	%eax, %eax
	movq	8(%rsp), %rdx
	movl	(%rdx), %eax
	addq	$24, %rsp
	.cfi_adjust_cfa_offset -24
	ret
	end_item spill_read
	cl_bytes .Lsr

/* 16. Spilled, reloaded and passed to memcpy. */
	pad pad_sm
	item spill_memcpy
	subq	$24, %rsp
	.cfi_adjust_cfa_offset 24
	leaq	.Lsm(%rip), %rax
	movq	%rax, 8(%rsp)
	movq	8(%rsp), %rsi
	movl	$64, %edx
	call	memcpy@PLT
	addq	$24, %rsp
	.cfi_adjust_cfa_offset -24
	ret
	end_item spill_memcpy
	cl_bytes .Lsm

/* 17. Spilled, reloaded, copied to a second register and read. */
	pad pad_s2
	item spill_two
	subq	$24, %rsp
	.cfi_adjust_cfa_offset 24
	leaq	.Ls2(%rip), %rax
	movq	%rax, (%rsp)
	movq	(%rsp), %rcx
	movq	%rcx, %rdx
	movl	(%rdx,%rdi,4), %eax
	addq	$24, %rsp
	.cfi_adjust_cfa_offset -24
	ret
	end_item spill_two
	cl_bytes .Ls2

/* 18. Pushed, popped and read with an index scaled by 8. */
	pad pad_s8
	item spill_scaled8
	leaq	.Ls8(%rip), %rax
	pushq	%rax
	.cfi_adjust_cfa_offset 8
	xorl	%eax, %eax
	popq	%rax
	.cfi_adjust_cfa_offset -8
	movq	(%rax,%rdi,8), %rax
	ret
	end_item spill_scaled8
	cl_bytes .Ls8

/* 19. Pushed and popped in code with no CFI, then read. */
	pad pad_sn
	.p2align 12, 0xcc
spill_nocfi:
	leaq	.Lsn(%rip), %r8
	pushq	%r8
	leaq	.Lsn_tail(%rip), %rcx
	jmp	*%rcx
.Lsn_tail:
	popq	%r8
	movl	8(%r8), %eax
	ret
	cl_bytes .Lsn

/* 20. Pushed, popped into another register and read. */
	pad pad_po
	item push_other
	leaq	.Lpo(%rip), %rax
	pushq	%rax
	.cfi_adjust_cfa_offset 8
	popq	%rcx
	.cfi_adjust_cfa_offset -8
	movzbl	3(%rcx), %eax
	ret
	end_item push_other
	cl_bytes .Lpo

/* 21. Spilled and reloaded into a store: the bytes do not read as code. */
	pad pad_sd
	item spill_data
	subq	$24, %rsp
	.cfi_adjust_cfa_offset 24
	leaq	.Lsd(%rip), %rax
	movq	%rax, 8(%rsp)
	movq	8(%rsp), %rdx
	movq	%rdx, (%rdi)
	addq	$24, %rsp
	.cfi_adjust_cfa_offset -24
	ret
	end_item spill_data
	.p2align 12, 0xcc
.Lsd:
	.long	1, 2, 3, 4, 0, 0, 0, 0

/* 22. Spilled where another register points: read through that one. */
	pad pad_sa
	item spill_alias
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	subq	$16, %rsp
	.cfi_adjust_cfa_offset 16
	leaq	8(%rsp), %rbx
	leaq	.Lsa(%rip), %rax
	movq	%rax, 8(%rsp)
	movq	(%rbx), %rcx
	movl	(%rcx), %eax
	movq	8(%rsp), %rdx
	movq	%rdx, (%rdi)
	addq	$16, %rsp
	.cfi_adjust_cfa_offset -16
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	ret
	end_item spill_alias
	cl_bytes .Lsa

/* 23. Spilled where a call to another object finds its stack arguments. */
	pad pad_sg
	item spill_arg
	subq	$24, %rsp
	.cfi_adjust_cfa_offset 24
	leaq	.Lsg(%rip), %rax
	movq	%rax, (%rsp)
	xorl	%eax, %eax
	call	ext_fn@PLT
	movq	(%rsp), %rdx
	movq	%rdx, (%rdi)
	addq	$24, %rsp
	.cfi_adjust_cfa_offset -24
	ret
	end_item spill_arg
	cl_bytes .Lsg

/* 23b. Spilled, reloaded and stored as a pointer, but also read from the
 *      slot into a vector register, and from there read through. */
	pad pad_sv
	item spill_vecread
	subq	$24, %rsp
	.cfi_adjust_cfa_offset 24
	leaq	.Lsv(%rip), %rax
	movq	%rax, 8(%rsp)
	movq	8(%rsp), %rdx
	movq	%rdx, (%rdi)
	movq	8(%rsp), %xmm0
	movq	%xmm0, %rcx
	movl	(%rcx), %eax
	addq	$24, %rsp
	.cfi_adjust_cfa_offset -24
	ret
	end_item spill_vecread
	cl_bytes .Lsv

/* 24. Spilled and never reloaded: nothing shows what it is. */
	pad pad_sx
	item spill_dead
	leaq	.Lsx(%rip), %rax
	movq	%rax, -8(%rsp)
	xorl	%eax, %eax
	ret
	end_item spill_dead
	cl_bytes .Lsx

/* ---- instructions that Capstone 4 cannot decode ------------------------ */

/* 25. A PIC base read through by EVEX and VEX loads with a 32-bit
 *     displacement, which Capstone 4 cannot decode: .rodata is read, not
 *     the code at the base. */
	pad pad_rd
	item raw_ro
	leaq	.Lxr(%rip), %r11
	vpbroadcastd ro_tab - .Lxr(%r11,%r10,4), %zmm24
	vpbroadcastd ro_tab - .Lxr(%r11), %xmm24
	{vex} vpdpwssd ro_tab - .Lxr(%r11), %ymm1, %ymm0
	ret
	end_item raw_ro
	.p2align 12, 0xcc
.Lxr:
	ret

/* 25b. The same load, whose displacement leads from the base to bytes of
 *      the code one page on: those are read. */
	pad pad_rn
	item raw_near
	leaq	.Lrn(%rip), %rax
	vpbroadcastd 0x1000(%rax), %xmm24
	ret
	end_item raw_near
	cl_bytes .Lrn
	pad pad_rn2

/* 25c. A VEX load with an 8-bit displacement from the base. */
	item raw_vex8
	leaq	.Lv8(%rip), %rax
	{vex} vpdpwssd 0x20(%rax), %ymm1, %ymm0
	ret
	end_item raw_vex8
	cl_bytes .Lv8

/* 25d. An EVEX load whose 8-bit displacement is scaled by 64 (disp8*N):
 *      127 * 64 bytes on, it reads the second page of the table, which no
 *      entry ends. */
	pad pad_e8
	item raw_evex8
	leaq	.Le8(%rip), %rax
	vpdpwssd 0x1fc0(%rax), %zmm1, %zmm0
	ret
	end_item raw_evex8
	cl_bytes .Le8
	.p2align 12, 0xcc
	.fill	64, 1, 0xcc

/* 26. A continuation label kept in r8 across an AVX-512 gather whose
 *     vector index (ymm24) has the number of r8: the index names no
 *     general register, so nothing reads through r8. */
	pad pad_vs
	.p2align 12, 0xcc
vsib_cont:
	leaq	.Lvs(%rip), %r8
	kxnorb	%k1, %k1, %k1
	vpgatherdq (%rdi,%ymm24,1), %zmm22{%k1}
	jmp	*%r8
	.p2align 12, 0xcc
.Lvs:
	addq	$1, %rax
	ret

/* 26b. A gather whose base is the loaded address: the bytes there are
 *      read. */
	pad pad_vb
	item vsib_base
	leaq	.Lvb(%rip), %rdi
	kxnorb	%k1, %k1, %k1
	vpgatherdq (%rdi,%ymm24,1), %zmm22{%k1}
	ret
	end_item vsib_base
	cl_bytes .Lvb

/* 27. A PIC base plus an index, formed by lea and read through: .rodata
 *     is read, not the code at the base (dav1d's filter tables). */
	pad pad_fw
	item fwd_ro
	leaq	.Lfw(%rip), %r11
	leaq	ro_tab - .Lfw(%r11,%rdi,4), %rax
	movl	(%rax), %ecx
	movl	4(%rax), %eax
	ret
	end_item fwd_ro
	.p2align 12, 0xcc
.Lfw:
	ret

/* 27b. The same, but the lea moves the base away and the read's own
 *      displacement brings it back to the table at the base. */
	pad pad_fb
	item fwd_back
	leaq	.Lfb(%rip), %r11
	leaq	0x3000(%r11,%rdi,4), %rax
	movl	-0x3000(%rax), %eax
	ret
	end_item fwd_back
	cl_bytes .Lfb

/* 28. A function pointer stored after 5000 instructions (more than the
 *     walk's first budget of 4096): nothing was read through it on the
 *     way, so the walk goes on to the store. */
	pad pad_lw
	item long_walk
	leaq	.Llw(%rip), %rax
	.rept	5000
	nop
	.endr
	movq	%rax, 16(%rdi)
	ret
	end_item long_walk
	.p2align 12, 0xcc
.Llw:
	movl	%edi, %eax
	ret

/* 28b. The same walk, which ends in a read through the address. */
	pad pad_lr
	item long_read
	leaq	.Llr(%rip), %rax
	.rept	5000
	nop
	.endr
	movl	(%rax), %eax
	ret
	end_item long_read
	cl_bytes .Llr

/* 29. A PIC base plus an index, read through by an EVEX load whose 8-bit
 *     displacement is scaled (disp8*N) and Capstone 4 cannot decode:
 *     whatever N, the read stays in .rodata.  (25d is the case whose
 *     scaled displacement reaches the code.) */
	pad pad_fe
	item fwd_evex8
	leaq	.Lfe(%rip), %r11
	leaq	ro_tab - .Lfe(%r11,%rdi,4), %r10
	vpbroadcastw 2(%r10), %zmm25
	ret
	end_item fwd_evex8
	.p2align 12, 0xcc
.Lfe:
	ret

/* 30. A function pointer stored, then a call through the PLT with the
 *     address still in rax: the callee gets al at most, no address. */
	pad pad_pr
	item plt_rax
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	movq	%rdi, %rbx
	leaq	.Lpr(%rip), %rax
	movq	%rax, 16(%rdi)
	xorl	%edi, %edi
	call	ext_fn@PLT
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	ret
	end_item plt_rax
	.p2align 12, 0xcc
.Lpr:
	movl	%edi, %eax
	ret

/* 30b. The same with the address in r10, which a callee may read (the
 *      static chain): the bytes, which read as code, stay a table. */
	pad pad_pt
	item plt_r10
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	leaq	.Lpt(%rip), %r10
	movq	%r10, 16(%rdi)
	xorl	%edi, %edi
	call	ext_fn@PLT
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	ret
	end_item plt_r10
	cl_bytes .Lpt

/* 31. A function pointer stored and left in rdx, where ten paths that
 *     each load another address into rax join at the return: the offset
 *     of rdx never changed, so it is returned as it was loaded. */
	pad pad_jr
	item join_ret
	leaq	.Ljr(%rip), %rdx
	movq	%rdx, 8(%rdi)
	cmpl	$0, %esi
	jne	10f
	leaq	ro_tab+0(%rip), %rax
	movq	%rax, 16(%rdi)
	jmp	.Ljr_out
10:
	cmpl	$1, %esi
	jne	11f
	leaq	ro_tab+4(%rip), %rax
	movq	%rax, 16(%rdi)
	jmp	.Ljr_out
11:
	cmpl	$2, %esi
	jne	12f
	leaq	ro_tab+8(%rip), %rax
	movq	%rax, 16(%rdi)
	jmp	.Ljr_out
12:
	cmpl	$3, %esi
	jne	13f
	leaq	ro_tab+12(%rip), %rax
	movq	%rax, 16(%rdi)
	jmp	.Ljr_out
13:
	cmpl	$4, %esi
	jne	14f
	leaq	ro_tab+16(%rip), %rax
	movq	%rax, 16(%rdi)
	jmp	.Ljr_out
14:
	cmpl	$5, %esi
	jne	15f
	leaq	ro_tab+20(%rip), %rax
	movq	%rax, 16(%rdi)
	jmp	.Ljr_out
15:
	cmpl	$6, %esi
	jne	16f
	leaq	ro_tab+24(%rip), %rax
	movq	%rax, 16(%rdi)
	jmp	.Ljr_out
16:
	cmpl	$7, %esi
	jne	17f
	leaq	ro_tab+28(%rip), %rax
	movq	%rax, 16(%rdi)
	jmp	.Ljr_out
17:
	cmpl	$8, %esi
	jne	18f
	leaq	ro_tab+32(%rip), %rax
	movq	%rax, 16(%rdi)
	jmp	.Ljr_out
18:
	cmpl	$9, %esi
	jne	19f
	leaq	ro_tab+36(%rip), %rax
	movq	%rax, 16(%rdi)
	jmp	.Ljr_out
19:
.Ljr_out:
	ret
	end_item join_ret
	.p2align 12, 0xcc
.Ljr:
	movl	%edi, %eax
	ret

/* 31b. The same join, and then a read through rdx: a table. */
	pad pad_jd
	item join_read
	leaq	.Ljd(%rip), %rdx
	movq	%rdx, 8(%rdi)
	cmpl	$0, %esi
	jne	10f
	leaq	ro_tab+0(%rip), %rax
	movq	%rax, 16(%rdi)
	jmp	.Ljd_out
10:
	cmpl	$1, %esi
	jne	11f
	leaq	ro_tab+4(%rip), %rax
	movq	%rax, 16(%rdi)
	jmp	.Ljd_out
11:
	cmpl	$2, %esi
	jne	12f
	leaq	ro_tab+8(%rip), %rax
	movq	%rax, 16(%rdi)
	jmp	.Ljd_out
12:
	cmpl	$3, %esi
	jne	13f
	leaq	ro_tab+12(%rip), %rax
	movq	%rax, 16(%rdi)
	jmp	.Ljd_out
13:
	cmpl	$4, %esi
	jne	14f
	leaq	ro_tab+16(%rip), %rax
	movq	%rax, 16(%rdi)
	jmp	.Ljd_out
14:
	cmpl	$5, %esi
	jne	15f
	leaq	ro_tab+20(%rip), %rax
	movq	%rax, 16(%rdi)
	jmp	.Ljd_out
15:
	cmpl	$6, %esi
	jne	16f
	leaq	ro_tab+24(%rip), %rax
	movq	%rax, 16(%rdi)
	jmp	.Ljd_out
16:
	cmpl	$7, %esi
	jne	17f
	leaq	ro_tab+28(%rip), %rax
	movq	%rax, 16(%rdi)
	jmp	.Ljd_out
17:
	cmpl	$8, %esi
	jne	18f
	leaq	ro_tab+32(%rip), %rax
	movq	%rax, 16(%rdi)
	jmp	.Ljd_out
18:
	cmpl	$9, %esi
	jne	19f
	leaq	ro_tab+36(%rip), %rax
	movq	%rax, 16(%rdi)
	jmp	.Ljd_out
19:
.Ljd_out:
	movl	(%rdx), %eax
	ret
	end_item join_read
	cl_bytes .Ljd

/* 32. A function pointer stored through rbp, which holds a structure's
 *     address: nothing in the function copies rsp, so rbp is no frame
 *     pointer (FFmpeg's DSP init code). */
	pad pad_sb
	item store_rbp
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	movq	%rdi, %rbp
	leaq	.Lsb(%rip), %rax
	movq	%rax, 8(%rbp)
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	ret
	end_item store_rbp
	.p2align 12, 0xcc
.Lsb:
	movl	%edi, %eax
	ret

/* 32b. The same store into a frame that rbp points at, reloaded and
 *      read through: a table. */
	pad pad_sf
	item spill_rbp
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	movq	%rsp, %rbp
	subq	$16, %rsp
	leaq	.Lsf(%rip), %rax
	movq	%rax, -8(%rbp)
	movq	-8(%rbp), %rcx
	movl	(%rcx), %eax
	leave
	.cfi_adjust_cfa_offset -8
	ret
	end_item spill_rbp
	cl_bytes .Lsf

/* 33. A return address by hand: lea of the instruction right after an
 *     indirect jump, handed over in r8 (x86inc calls a shared tail that
 *     returns through r8 this way).  The lea and the jump end the page,
 *     so the label starts the next one. */
	pad pad_jb
	item jmp_back
	.fill	4096 - 9, 1, 0x90
	leaq	1f(%rip), %r8
	jmp	*%rcx
	end_item jmp_back
1:
	movl	%edi, %eax
	ret

/* 33b. The same hand-over, but what follows the jump does not read as a
 *      function (zeros): a table, as before. */
	pad pad_jz
	item jmp_back_zero
	.fill	4096 - 9, 1, 0x90
	leaq	1f(%rip), %r8
	jmp	*%rcx
	end_item jmp_back_zero
1:
	.fill	64, 1, 0

/* 33c. An address past the jump's end, where a function could begin (16
 *      bytes on): only the very next instruction is a return address. */
	pad pad_jf
	item jmp_far
	.fill	4096 - 9, 1, 0x90
	leaq	2f(%rip), %r8
	jmp	*%rcx
	end_item jmp_far
	movl	%edi, %eax
	ret
	.p2align 4, 0xcc
2:
	addl	%esi, %eax
	ret

/* 34. A function that lets rsp out (the address of a local passed on)
 *     and fills a global table through rbp, which it sets only to the
 *     table's address (lea x(%rip), %rbp): the store is no spill. */
	pad pad_rg
	item rbp_global
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	leaq	8(%rsp), %rdi
	leaq	gtab(%rip), %rbp
	leaq	.Lrg(%rip), %rax
	movq	%rax, 8(%rbp)
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	ret
	end_item rbp_global
	.p2align 12, 0xcc
.Lrg:
	movl	%edi, %eax
	ret

/* 34b. rbp set from a register that holds a stack address: the store is
 *      a spill, reloaded and read through.  A table. */
	pad pad_rs
	item rbp_stack
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	subq	$16, %rsp
	.cfi_adjust_cfa_offset 16
	leaq	8(%rsp), %rcx
	movq	%rcx, %rbp
	leaq	.Lrs(%rip), %rax
	movq	%rax, (%rbp)
	movq	(%rbp), %rdx
	movl	(%rdx), %eax
	addq	$16, %rsp
	.cfi_adjust_cfa_offset -16
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	ret
	end_item rbp_stack
	cl_bytes .Lrs

/* 34c. rbp given rsp by a push and a pop, then the same spill: a table. */
	pad pad_rp
	item rbp_pushpop
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	leaq	gtab(%rip), %rbp
	pushq	%rsp
	.cfi_adjust_cfa_offset 8
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	leaq	.Lrp(%rip), %rax
	movq	%rax, -8(%rbp)
	movq	-8(%rbp), %rdx
	movl	(%rdx), %eax
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	ret
	end_item rbp_pushpop
	cl_bytes .Lrp

/* 35. A stored pointer to a 3DNow! routine (xvidcore's, chosen by CPUID
 *     on a K6): code. */
	pad pad_3d
	item store_3dnow
	leaq	.L3d(%rip), %rax
	movq	%rax, 16(%rdi)
	ret
	end_item store_3dnow
	.p2align 12, 0xcc
.L3d:
	movq	(%rsi), %mm0
	pavgusb	(%rdx), %mm0
	movq	%mm0, (%rdi)
	femms
	ret

/* 35b. The same, but the bytes run into hlt before any return: a
 *      table, 3DNow! or not. */
	pad pad_3h
	item store_3dnow_hlt
	leaq	.L3h(%rip), %rax
	movq	%rax, 16(%rdi)
	ret
	end_item store_3dnow_hlt
	.p2align 12, 0xcc
.L3h:
	pavgusb	(%rdx), %mm0
	hlt
	ret

/* 36. A PIC base in the index of an unscaled access, the table's offset
 *     in the base (x264's CABAC code): .rodata is read, not the code. */
	pad pad_is
	item idx_swap
	leaq	.Lis(%rip), %rsi
	movzbl	ro_tab - .Lis(%rdx,%rsi,1), %eax
	ret
	end_item idx_swap
	.p2align 12, 0xcc
.Lis:
	ret

/* 36b. The same with the index scaled by 2: the address means nothing
 *      known, and the bytes stay a table. */
	pad pad_i2
	item idx_scaled
	leaq	.Li2(%rip), %rsi
	movzwl	ro_tab - .Li2(%rdx,%rsi,2), %eax
	ret
	end_item idx_scaled
	cl_bytes .Li2

/* 36c. Unscaled, with no displacement to move it: the read is of the
 *      bytes at the address, a table. */
	pad pad_ic
	item idx_code
	leaq	.Lic(%rip), %rsi
	movzbl	(%rdx,%rsi,1), %eax
	ret
	end_item idx_code
	cl_bytes .Lic

/* 37. An exported function of this same file, reached through the PLT
 *     like another object's, but hand-written to take its table in rax:
 *     the PLT alone does not make a callee keep to the ABI. */
	pad pad_pl
	item plt_local
	leaq	.Lpl(%rip), %rax
	call	own_rax@PLT
	ret
	end_item plt_local
	cl_bytes .Lpl
	.globl	own_rax
	item own_rax
	movdqu	(%rax), %xmm0
	ret
	end_item own_rax

/* 38. A helper that never assigns rbp spills the address through its
 *     caller's frame pointer; the caller reloads it and reads: a table. */
	pad pad_rc
	item rbp_caller
	leaq	.Lrc(%rip), %rax
	movq	%rax, -8(%rbp)
	xorl	%eax, %eax
	ret
	end_item rbp_caller
	cl_bytes .Lrc
	item rbp_caller_user
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	movq	%rsp, %rbp
	subq	$16, %rsp
	call	rbp_caller
	movq	-8(%rbp), %rcx
	movl	(%rcx), %eax
	leave
	.cfi_adjust_cfa_offset -8
	ret
	end_item rbp_caller_user

/* 38b. rbp given a stack address by a push of another register and a
 *      pop, then the spill, reloaded and read: a table. */
	pad pad_ro
	item rbp_popped
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	leaq	gtab(%rip), %rbp
	subq	$16, %rsp
	leaq	8(%rsp), %rcx
	pushq	%rcx
	popq	%rbp
	leaq	.Lro(%rip), %rax
	movq	%rax, (%rbp)
	movq	(%rbp), %rdx
	movl	(%rdx), %eax
	addq	$16, %rsp
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	ret
	end_item rbp_popped
	cl_bytes .Lro

/* 38c. A frame-pointer spill in a function that holds a sized local
 *      symbol: the whole function is checked, prologue included. */
	pad pad_fn_nest
	item rbp_nested
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	movq	%rsp, %rbp
	subq	$16, %rsp
	jmp	1f
	.type	rbp_nested_inner, @function
rbp_nested_inner:
	pxor	%xmm0, %xmm0
	ret
	.size	rbp_nested_inner, . - rbp_nested_inner
1:	call	rbp_nested_inner
	leaq	.Lfnn(%rip), %rax
	movq	%rax, -8(%rbp)
	movq	-8(%rbp), %rcx
	movl	(%rcx), %eax
	movq	%rbp, %rsp
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	ret
	end_item rbp_nested
	cl_bytes .Lfnn

/* 38d. The same spill, reached after a detour past the function's end
 *      that makes the code between two entries be checked first: the
 *      function's own extent must still be the one that decides. */
	pad pad_fn_det
	item rbp_detour
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	movq	%rsp, %rbp
	subq	$16, %rsp
	.type	rbp_detour_alt, @function
rbp_detour_alt:
	leaq	.Lfnd(%rip), %rax
	jmp	2f
3:	movq	%rax, -8(%rbp)
	movq	-8(%rbp), %rcx
	movl	(%rcx), %eax
	movq	%rbp, %rsp
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	ret
	end_item rbp_detour
2:	movq	%rax, -64(%rsp)
	movq	%rcx, -64(%rsp)
	jmp	3b
	cl_bytes .Lfnd

/* 38e. No CFI and no sizes, as NASM writes: a second entry between the
 *      prologue and the spill.  A table. */
	.p2align 12, 0xcc
	.type	rbp_nocfi, @function
rbp_nocfi:
	pushq	%rbp
	movq	%rsp, %rbp
	subq	$16, %rsp
	jmp	1f
	.globl	rbp_nocfi_b
	.type	rbp_nocfi_b, @function
rbp_nocfi_b:
	pushq	%rbp
	movq	%rdi, %rbp
1:	leaq	.Lrf(%rip), %rax
	movq	%rax, -8(%rbp)
	movq	-8(%rbp), %rcx
	movl	(%rcx), %eax
	movq	%rbp, %rsp
	popq	%rbp
	ret
	cl_bytes .Lrf

/* 39. A function pointer stored, then left in rdx across calloc(n, size),
 *     which takes two arguments: rdx does not reach it (swr_init calls
 *     av_calloc so). */
	pad pad_ca
	item alloc_arg
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	movq	%rdi, %rbx
	leaq	.Lca(%rip), %rdx
	movq	%rdx, 16(%rbx)
	movl	$4, %esi
	movl	$1, %edi
	call	calloc@PLT
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	ret
	end_item alloc_arg
	.p2align 12, 0xcc
.Lca:
	movl	%edi, %eax
	ret

/* 39b. The same address as calloc's second argument: passed, a table. */
	pad pad_cb
	item alloc_in_arg
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	leaq	.Lcb(%rip), %rsi
	movq	%rsi, 16(%rdi)
	movl	$1, %edi
	call	calloc@PLT
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	ret
	end_item alloc_in_arg
	cl_bytes .Lcb

/* 39c. The same store, then rdx at a call of a function whose arguments
 *      are not known (memcpy takes three): a table. */
	pad pad_cc
	item alloc_unknown
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	leaq	.Lcc(%rip), %rdx
	movq	%rdx, 16(%rdi)
	call	memcpy@PLT
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	ret
	end_item alloc_unknown
	cl_bytes .Lcc

/* 40. glibc 2.41's printf: a computed goto.  The label is loaded twice.
 *     One load adds an offset read from .rodata and jumps through the
 *     sum; the other, where the offset folded to zero, jumps through the
 *     label itself, and the code there runs on with the register still
 *     holding it and passes it to a call (a variadic function spills it).
 *     Only ever jumped through: code. */
	.macro cgoto_body lab, ro
	leaq	\lab(%rip), %rdx
	cmpb	$1, %dil
	ja	1f
	movzbl	%dil, %eax
	leaq	\ro(%rip), %rcx
	movslq	(%rcx,%rax,4), %rdx
	leaq	\lab(%rip), %rax
	addq	%rax, %rdx
	xorl	%eax, %eax
	jmp	*%rdx
1:	jmp	*%rdx
	.endm
	.macro cgoto_target lab
	.p2align 12, 0xcc
\lab:
	call	memcpy@PLT
	ret
	.endm

	pad pad_cg
	item cgoto
	cgoto_body .Lcg, cg_ro
	cgoto_target .Lcg
	movl	$2, %eax
	ret
	end_item cgoto

/* 40b. The same, and a third load reads through the label: a table. */
	pad pad_cgr
	item cgoto_read
	leaq	.Lcgr(%rip), %rsi
	movl	(%rsi), %r9d
	cgoto_body .Lcgr, cgr_ro
	cgoto_target .Lcgr
	end_item cgoto_read

/* 40c. The same, but the label's register is spilled to the stack before
 *      the computed jump: what else reads the slot is not known.  A
 *      table. */
	pad pad_cgs
	item cgoto_spill
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	leaq	.Lcgs(%rip), %rax
	movq	%rax, (%rsp)
	movslq	cgs_ro(%rip), %rdx
	addq	%rax, %rdx
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	jmp	*%rdx
	leaq	.Lcgs(%rip), %rdx
	jmp	*%rdx
	cgoto_target .Lcgs
	end_item cgoto_spill

/* 40d. Added to, then read through instead of jumped through: a table
 *      indexed from the label.  The label's other load is jumped
 *      through as in 40. */
	pad pad_cgd
	item cgoto_deref
	leaq	.Lcgd(%rip), %rax
	addq	%rdi, %rax
	movl	(%rax), %r9d
	leaq	.Lcgd(%rip), %rdx
	jmp	*%rdx
	cgoto_target .Lcgd
	end_item cgoto_deref

/* 40e. The base of a computed goto that the code at the label reads
 *      through the register it was jumped through, at an offset not
 *      known: a table. */
	pad pad_cgx
	item cgoto_self
	cgoto_body .Lcgx, cgx_ro
	.p2align 12, 0xcc
.Lcgx:
	addq	%rdi, %rdx
	movl	(%rdx), %eax
	ret
	end_item cgoto_self

/* 40f. glibc's shape in code with neither CFI nor a function symbol, where
 *      no calling convention says what a call reads: a table. */
	pad pad_cgn
	.p2align 12, 0xcc
cgoto_nocfi:
	cgoto_body .Lcgn, cgn_ro
	cgoto_target .Lcgn

/* 40g. The base of a computed goto whose other load, jumped through, is
 *      then an unscaled index of a read at a known place in the code: a
 *      table. */
	pad pad_cgb
	item cgoto_base
	cgoto_body .Lcgb, cgb_ro
	.p2align 12, 0xcc
.Lcgb:
	movl	(%rcx,%rdx), %eax
	ret
	end_item cgoto_base

/* 40h. The base of a computed goto in a function with CFI, loaded and
 *      jumped through unchanged by code without CFI, after which the code
 *      at the label passes the register to a call: no convention says the
 *      register died at the jump there.  A table. */
	pad pad_cgm
	item cgoto_mixed
	cgoto_body .Lcgm, cgm_ro
	cgoto_target .Lcgm
	end_item cgoto_mixed
	.p2align 12, 0xcc
cgoto_mixed_nocfi:
	leaq	.Lcgm(%rip), %rdx
	jmp	*%rdx

	pad pad_last

	.section .rodata, "a"
	.p2align 4
ro_tab:
	.long	1, 2, 3, 4
jt:
	.short	.Lj - .Lj, .Lj2 - .Lj
cg_ro:
	.long	0, 0
cgr_ro:
	.long	0, 0
cgx_ro:
	.long	0, 0
cgn_ro:
	.long	0, 0
cgb_ro:
	.long	0, 0
cgm_ro:
	.long	0, 0
cgs_ro:
	.long	1

	.data
	.p2align 4
gtab:
	.quad	0, 0, 0, 0

	.section .note.GNU-stack, "", @progbits
