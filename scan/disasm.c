/*
 * disasm.c - decodes every executable section and records each reference
 * from an instruction into the executable segments.
 *
 * The sweep is linear, but it never decodes across a known code entry: the
 * byte budget of each cs_disasm_iter() call ends at the next entry, so a
 * table inside .text can garble at most the bytes up to the next function,
 * and decoding starts afresh there.  One cs_insn is allocated for the whole
 * file (Capstone's intended loop; no per-instruction allocation).
 *
 * Reads: the image, segs, secs and e_type (elf.c); entries and funcs,
 * sorted; refs (elf.c), for relocated pointers.
 * Adds: refs from instructions; call targets; the relocated pointers that
 * decode as code, as entries (kept sorted) and call targets; the
 * instruction-start bitmap; code_bytes.
 * Calls: util.c and Capstone; nothing that decides what is data.
 *
 * The file runs a little past 500 lines.  The sweep, the lea tracker and the
 * check for relocated pointers to code share one Capstone handle, its one
 * cs_insn and the helpers that read it (is_branch, the register families);
 * split, those helpers would need a header of their own for one stage.
 */
#include <capstone/capstone.h>
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "scan.h"

struct region { uint64_t addr, size, offset; };

static int push_ref(struct scan *s, uint64_t target, uint64_t at,
                    uint32_t size, enum xom_reason reason)
{
	return scan_push_ref(s, target, size, reason, true, at);
}

static int push_call(struct scan *s, uint64_t target)
{
	return scan_push_addr(s, &s->calls, target);
}

static bool is_branch(const cs_detail *d)
{
	for (uint8_t i = 0; i < d->groups_count; i++)
		if (d->groups[i] == CS_GRP_JUMP || d->groups[i] == CS_GRP_CALL)
			return true;
	return false;
}

/* Instructions whose memory operand names an address without reading it. */
static bool reads_nothing(unsigned insn)
{
	switch (insn) {
	case X86_INS_NOP:
	case X86_INS_PREFETCH: case X86_INS_PREFETCHW:
	case X86_INS_PREFETCHNTA: case X86_INS_PREFETCHT0:
	case X86_INS_PREFETCHT1: case X86_INS_PREFETCHT2:
		return true;
	default:
		return false;
	}
}

/* The 64-bit register that reg is part of (its family's index + 1), or 0
 * for anything but a general-purpose register. */
static unsigned reg_family(unsigned reg)
{
	static const unsigned short fam[][5] = {
		{ X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL, X86_REG_AH },
		{ X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL, X86_REG_BH },
		{ X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL, X86_REG_CH },
		{ X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL, X86_REG_DH },
		{ X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL, 0 },
		{ X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL, 0 },
		{ X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL, 0 },
		{ X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL, 0 },
		{ X86_REG_R8, X86_REG_R8D, X86_REG_R8W, X86_REG_R8B, 0 },
		{ X86_REG_R9, X86_REG_R9D, X86_REG_R9W, X86_REG_R9B, 0 },
		{ X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B, 0 },
		{ X86_REG_R11, X86_REG_R11D, X86_REG_R11W, X86_REG_R11B, 0 },
		{ X86_REG_R12, X86_REG_R12D, X86_REG_R12W, X86_REG_R12B, 0 },
		{ X86_REG_R13, X86_REG_R13D, X86_REG_R13W, X86_REG_R13B, 0 },
		{ X86_REG_R14, X86_REG_R14D, X86_REG_R14W, X86_REG_R14B, 0 },
		{ X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B, 0 },
	};

	for (size_t i = 0; i < sizeof fam / sizeof fam[0]; i++)
		for (size_t k = 0; k < 5; k++)
			if (fam[i][k] && fam[i][k] == reg)
				return (unsigned)i + 1;
	return 0;
}

static uint32_t reg_bit(unsigned reg)
{
	unsigned r = reg_family(reg);

	return r ? 1u << r : 0;
}

static bool is_reg64(unsigned reg)
{
	switch (reg) {
	case X86_REG_RAX: case X86_REG_RBX: case X86_REG_RCX: case X86_REG_RDX:
	case X86_REG_RSI: case X86_REG_RDI: case X86_REG_RBP: case X86_REG_RSP:
	case X86_REG_R8: case X86_REG_R9: case X86_REG_R10: case X86_REG_R11:
	case X86_REG_R12: case X86_REG_R13: case X86_REG_R14: case X86_REG_R15:
		return true;
	default:
		return false;
	}
}

/*
 * Follows the register that a lea into the code loaded, for a few
 * straight-line instructions, to tell a code label from a table:
 *   lea L(%rip), %r9; movslq (%rdi,%rax,4), %rax; add %r9, %rax; jmp *%rax
 * jumps to L plus an offset, so L is code (glibc's vfprintf and memmove
 * do this).  Any use of the register to address memory means a table, and
 * so does anything the tracker does not understand: the lea's reference
 * stays a table unless the jump is seen.
 */
#define TRACK_WINDOW 24

struct track {
	bool live;
	uint32_t regs;          /* one bit per general-purpose register */
	uint64_t target;        /* what the lea loaded */
	unsigned left;          /* instructions still to follow */
};

static void track_start(struct track *tk, const cs_insn *in, uint64_t target)
{
	const cs_x86 *x = &in->detail->x86;

	tk->live = x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
	                is_reg64(x->operands[0].reg);
	tk->regs = tk->live ? reg_bit(x->operands[0].reg) : 0;
	tk->target = target;
	tk->left = TRACK_WINDOW;
}

static int track_insn(struct scan *s, struct track *tk, const cs_insn *in)
{
	const cs_detail *d = in->detail;
	const cs_x86 *x = &d->x86;
	uint32_t set = tk->regs, written = 0;

	if (!tk->live)
		return 0;
	if (in->id == X86_INS_LEA && x->op_count == 2 &&
	    x->operands[0].type == X86_OP_REG && is_reg64(x->operands[0].reg)) {
		const cs_x86_op *m = &x->operands[1];
		/* lea (%r9,%rcx), %rcx computes, it does not read. */
		if ((reg_bit(m->mem.base) | reg_bit(m->mem.index)) & set)
			tk->regs |= reg_bit(x->operands[0].reg);
		else
			tk->regs &= ~reg_bit(x->operands[0].reg);
		goto next;
	}
	for (uint8_t i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		if (op->type == X86_OP_MEM &&
		    ((reg_bit(op->mem.base) | reg_bit(op->mem.index)) & set))
			goto stop;      /* addresses memory: a table */
	}
	if (is_branch(d)) {
		if ((in->id == X86_INS_JMP || in->id == X86_INS_CALL) &&
		    x->op_count == 1 && x->operands[0].type == X86_OP_REG &&
		    (reg_bit(x->operands[0].reg) & set))
			return push_call(s, tk->target);
		goto stop;
	}
	if ((in->id == X86_INS_ADD || in->id == X86_INS_MOV) && x->op_count == 2 &&
	    x->operands[0].type == X86_OP_REG && x->operands[1].type == X86_OP_REG &&
	    (reg_bit(x->operands[1].reg) & set) && is_reg64(x->operands[0].reg)) {
		tk->regs |= reg_bit(x->operands[0].reg);
		goto next;
	}
	/* label + offset is still label-derived. */
	if ((in->id == X86_INS_ADD || in->id == X86_INS_SUB) && x->op_count == 2 &&
	    x->operands[0].type == X86_OP_REG && is_reg64(x->operands[0].reg) &&
	    (reg_bit(x->operands[0].reg) & set))
		goto next;
	for (uint8_t i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_REG && (x->operands[i].access & CS_AC_WRITE))
			written |= reg_bit(x->operands[i].reg);
	for (uint8_t i = 0; i < d->regs_write_count; i++)
		written |= reg_bit(d->regs_write[i]);
	tk->regs &= ~written;
	if (!tk->regs)
		goto stop;
next:
	if (--tk->left)
		return 0;
stop:
	tk->live = false;
	return 0;
}

static int note_insn(struct scan *s, struct track *tk, const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	uint64_t next = in->address + in->size;
	bool absolute = s->e_type == ET_EXEC;
	bool branch = is_branch(in->detail);
	int rc;

	for (uint8_t i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP) {
			uint64_t t = next + (uint64_t)op->mem.disp;

			if (in->id == X86_INS_LEA) {
				rc = push_ref(s, t, in->address, 0, XOM_R_TABLE);
				if (!rc && exec_seg_at(s, t))
					track_start(tk, in, t);
			}
			else if (reads_nothing(in->id))
				continue;
			else
				rc = push_ref(s, t, in->address, op->size ? op->size : 8,
				              XOM_R_RIP_LOAD);
		} else if (op->type == X86_OP_IMM && branch) {
			/* Only calls make code entries.  A jump target can be
			 * data: gas pads a large .p2align with a jmp over the
			 * padding, which lands on whatever follows, tables
			 * included.  Short calls do not exist; a garbled rel32
			 * call hitting a table's first byte is about a 1 in
			 * 2^32 chance. */
			if (in->id != X86_INS_CALL)
				continue;
			rc = push_call(s, (uint64_t)op->imm);
		} else if (op->type == X86_OP_IMM && absolute) {
			rc = push_ref(s, (uint64_t)op->imm, in->address, 0,
			              XOM_R_ABSOLUTE);
		} else if (op->type == X86_OP_MEM && absolute &&
		           op->mem.base == X86_REG_INVALID &&
		           op->mem.segment == X86_REG_INVALID) {
			uint32_t size = op->mem.index == X86_REG_INVALID
			                        ? (op->size ? op->size : 8) : 0;
			rc = push_ref(s, (uint64_t)op->mem.disp, in->address, size,
			              XOM_R_ABSOLUTE);
		} else {
			continue;
		}
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * Capstone 4 cannot decode a share of the AVX2 and AVX-512 instructions
 * that a current libc uses (about 800 in Debian 12's libc.so.6), and a
 * sweep that skipped one byte there would fall out of step and read
 * garbage as references.  The VEX (C4, C5) and EVEX (62) encodings have a
 * regular length, so that much is decoded here: prefix, opcode, ModRM, SIB,
 * displacement and immediate.  Returns the length, or 0 when this is not
 * such an instruction.  A RIP-relative operand sets *rip to its target.
 */
static size_t vex_length(const uint8_t *p, size_t left, uint64_t pc,
                         uint64_t *rip)
{
	size_t n, map;
	uint8_t op, modrm, mod, rm;

	if (left < 3)
		return 0;
	if (p[0] == 0xc5) {
		n = 2, map = 1;
	} else if (p[0] == 0xc4) {
		n = 3, map = p[1] & 0x1f;
	} else if (p[0] == 0x62) {
		if (left < 5 || (p[1] & 0x0c) || !(p[2] & 0x04))
			return 0;       /* reserved bits: not EVEX */
		n = 4, map = p[1] & 0x03;
	} else {
		return 0;
	}
	if (map < 1 || map > 3 || left < n + 2)
		return 0;
	op = p[n++];
	modrm = p[n++];
	mod = modrm >> 6, rm = modrm & 7;
	*rip = 0;
	if (mod != 3 && rm == 4) {
		if (left < n + 1)
			return 0;
		if (mod == 0 && (p[n] & 7) == 5)
			n += 4;         /* SIB with no base: disp32 */
		n++;
	}
	if (mod == 1) {
		n += 1;
	} else if (mod == 2) {
		n += 4;
	} else if (mod == 0 && rm == 5) {
		int32_t disp;
		size_t at = n;

		n += 4;
		if (left < n)
			return 0;
		memcpy(&disp, p + at, 4);
		*rip = (uint64_t)(int64_t)disp;       /* completed below */
	}
	if (map == 3 || (map == 1 && ((op >= 0x70 && op <= 0x73) ||
	                              (op >= 0xc4 && op <= 0xc6) || op == 0xc2)))
		n += 1;
	if (left < n)
		return 0;
	if (mod == 0 && rm == 5)
		*rip += pc + n;
	return n;
}

/* The length of an instruction Capstone 4 cannot decode but this file can:
 * VEX/EVEX, and rdpkru/wrpkru; 0 for anything else. */
static size_t raw_length(const uint8_t *p, size_t left, uint64_t pc,
                         uint64_t *rip)
{
	*rip = 0;
	if (left >= 3 && p[0] == 0x0f && p[1] == 0x01 && (p[2] == 0xee || p[2] == 0xef))
		return 3;
	return vex_length(p, left, pc, rip);
}

/* Decodes one region, restarting at every entry (entries sorted). */
static int sweep(struct scan *s, csh h, cs_insn *in, const struct region *r)
{
	const uint64_t *ent = s->entries.p;
	size_t ne = s->entries.n;
	uint64_t end = r->addr + r->size, addr = r->addr;
	size_t lo = count_le(ent, ne, sizeof *ent, addr);   /* next entry */
	struct track tk = { .live = false };
	int rc;

	while (addr < end) {
		uint64_t stop = lo < ne && ent[lo] < end ? ent[lo] : end;
		const uint8_t *code = s->img + r->offset + (addr - r->addr);
		size_t left = stop - addr;
		uint64_t pc = addr;

		while (left) {
			if (!cs_disasm_iter(h, &code, &left, &pc, in)) {
				uint64_t rip = 0;
				size_t n = raw_length(code, left, pc, &rip);

				tk.live = false;
				if (n) {
					scan_mark_start(s, pc);
					/* The operand size is unknown: assume a
					 * whole ZMM register. */
					if (rip && (rc = push_ref(s, rip, pc, 64,
					                          XOM_R_RIP_LOAD)))
						return rc;
				} else {
					n = 1;  /* undecodable byte: skip it */
				}
				code += n, left -= n, pc += n;
				continue;
			}
			scan_mark_start(s, in->address);
			if ((rc = track_insn(s, &tk, in)) || (rc = note_insn(s, &tk, in)))
				return rc;
		}
		tk.live = false;
		s->code_bytes += stop - addr;
		addr = stop;
		while (lo < ne && ent[lo] <= addr)
			lo++;
	}
	return 0;
}

/* Instructions that ordinary user code does not begin with: what data
 * decoded as code quickly runs into. */
static bool implausible(const cs_insn *in)
{
	switch (in->id) {
	case X86_INS_HLT: case X86_INS_IN: case X86_INS_OUT:
	case X86_INS_INSB: case X86_INS_INSW: case X86_INS_INSD:
	case X86_INS_OUTSB: case X86_INS_OUTSW: case X86_INS_OUTSD:
	case X86_INS_CLI: case X86_INS_STI: case X86_INS_INT: case X86_INS_INT1:
	case X86_INS_INT3: case X86_INS_INTO: case X86_INS_LJMP:
	case X86_INS_LCALL: case X86_INS_RETF: case X86_INS_RETFQ:
	case X86_INS_IRET: case X86_INS_IRETD: case X86_INS_IRETQ:
	case X86_INS_SAHF: case X86_INS_LAHF: case X86_INS_CMC:
		return true;
	default:
		break;
	}
	if (in->size >= 2 && in->bytes[0] == 0 && in->bytes[1] == 0)
		return true;    /* add %al,(%rax): zeros */
	for (uint8_t i = 0; i < in->detail->groups_count; i++)
		if (in->detail->groups[i] == CS_GRP_PRIVILEGE ||
		    in->detail->groups[i] == X86_GRP_3DNOW)
			return true;
	return false;
}

/*
 * Whether the bytes at target read as the start of a function: at least
 * three instructions, or two and a return or jump, none of them implausible,
 * within 64 bytes.  Used only for relocated pointers into code that no
 * symbol or FDE explains (hand-written assembly without CFI, stripped):
 * they are overwhelmingly function pointers, and a table that a relocated
 * pointer names is very unlikely to decode cleanly this far.
 */
static bool looks_like_code(struct scan *s, csh h, cs_insn *in, uint64_t target)
{
	const struct xom_segment *g = exec_seg_at(s, target);
	uint64_t pc = target, avail;
	const uint8_t *code;
	size_t left;
	unsigned n = 0;

	if (!g || target - g->vaddr >= g->filesz)
		return false;
	avail = g->filesz - (target - g->vaddr);
	code = s->img + g->offset + (target - g->vaddr);
	left = avail < 64 ? (size_t)avail : 64;
	while (left && n < 8) {
		if (!cs_disasm_iter(h, &code, &left, &pc, in)) {
			uint64_t rip;
			size_t k = vex_length(code, left, pc, &rip);
			if (!k)
				return false;
			code += k, left -= k, pc += k, n++;
			continue;
		}
		if (implausible(in))
			return false;
		n++;
		for (uint8_t i = 0; i < in->detail->groups_count; i++)
			if (in->detail->groups[i] == CS_GRP_RET ||
			    (in->id == X86_INS_JMP && in->detail->groups[i] == CS_GRP_JUMP))
				return n >= 2;
	}
	return n >= 3;
}

/* Relocated pointers that land on plausible code become code entries. */
static int find_pointed_code(struct scan *s, csh h, cs_insn *in)
{
	const struct ref *r = s->refs.p;
	size_t before = s->entries.n;

	for (size_t i = 0; i < s->refs.n; i++) {
		uint64_t *e, *c;

		if (r[i].reason != XOM_R_ABSOLUTE || r[i].has_ref || r[i].size ||
		    sorted_has_u64(s->entries.p, before, r[i].target) ||
		    scan_inside_function(s, r[i].target) ||
		    !looks_like_code(s, h, in, r[i].target))
			continue;
		if (!(e = vec_push(&s->entries)) || !(c = vec_push(&s->calls)))
			return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
		*e = *c = r[i].target;
	}
	vec_sort_u64(&s->entries);
	return 0;
}

static int collect_regions(struct scan *s, struct vec *out)
{
	const struct section *sec = s->secs.p;
	const struct xom_segment *g = s->segs.p;
	struct region *r;

	for (size_t i = 0; i < s->secs.n; i++) {
		if (!(sec[i].flags & SHF_EXECINSTR) || !(sec[i].flags & SHF_ALLOC) ||
		    sec[i].type == SHT_NOBITS || !sec[i].size)
			continue;
		const struct xom_segment *seg = exec_seg_at(s, sec[i].addr);
		/* Code outside every exec segment never runs; a section that
		 * runs past its segment's file bytes is clipped to them. */
		if (!seg)
			continue;
		uint64_t room = seg->vaddr + seg->filesz - sec[i].addr;
		if (sec[i].addr >= seg->vaddr + seg->filesz)
			continue;
		if (!(r = vec_push(out)))
			return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
		*r = (struct region){ sec[i].addr,
		                      sec[i].size < room ? sec[i].size : room,
		                      sec[i].offset };
	}
	if (s->secs.n)
		return 0;
	/* Without section headers every file byte of an exec segment is
	 * treated as code to decode. */
	for (size_t i = 0; i < s->segs.n; i++) {
		if (!(r = vec_push(out)))
			return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
		*r = (struct region){ g[i].vaddr, g[i].filesz, g[i].offset };
	}
	return 0;
}

int disasm_code(struct scan *s)
{
	struct vec regions = { .size = sizeof(struct region) };
	cs_insn *in = NULL;
	cs_err ce;
	csh h = 0;
	int rc;

	if ((rc = scan_alloc_starts(s)))
		return rc;
	if ((ce = cs_open(CS_ARCH_X86, CS_MODE_64, &h)) != CS_ERR_OK)
		return scan_fail(s, XOM_SCAN_EDISASM, "cannot start the disassembler: %s",
		                 cs_strerror(ce));
	/* Operand details are what the analysis reads; skipdata stays off so
	 * that an undecodable byte is seen and skipped one at a time. */
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	in = cs_malloc(h);
	if (!in) {
		rc = scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = collect_regions(s, &regions)))
		goto out;
	for (size_t i = 0; i < regions.n; i++)
		if ((rc = sweep(s, h, in, (struct region *)regions.p + i)))
			goto out;
	rc = find_pointed_code(s, h, in);
out:
	vec_free(&regions);
	if (in)
		cs_free(in, 1);
	cs_close(&h);
	return rc;
}
