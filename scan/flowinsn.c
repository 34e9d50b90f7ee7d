/*
 * flowinsn.c - the instructions that flow.c follows registers through, in
 * a compact form: what each one does to the general-purpose registers,
 * its memory operand and where control goes next.
 *
 * The form is built from Capstone's operand details, or, for the VEX and
 * EVEX instructions that Capstone 4 cannot decode, from the ModRM byte
 * (see x86_raw_length).  Whatever the form cannot express lands in the
 * catch-all masks rd and wr, which flow.c treats conservatively: a tracked
 * register that an unmodelled instruction reads makes the answer unknown.
 *
 * Calls: x86.c and Capstone only.  No state: safe on several threads.
 */
#include <string.h>

#include "flow.h"

static uint16_t fbit(unsigned fam)
{
	return fam < 16 ? (uint16_t)(1u << fam) : 0;
}

static void take_mem(struct fin *f, const cs_x86_op *op, int *nmem)
{
	unsigned b = x86_fam(op->mem.base), x = x86_fam(op->mem.index);

	if ((*nmem)++) {
		/* A second memory operand (movs, cmps): its registers count
		 * as plain reads, which flow.c does not model. */
		f->rd |= fbit(b) | fbit(x);
		return;
	}
	f->mem = FM_ACCESS;
	f->base = (uint8_t)b;
	f->index = (uint8_t)x;
	f->scale1 = op->mem.scale == 1;
	f->disp = op->mem.disp;
	f->msize = op->size ? op->size : 8;
	f->seg = op->mem.segment == X86_REG_FS || op->mem.segment == X86_REG_GS;
	if (b == X86_FAM_RIP)
		f->target = f->addr + f->size + (uint64_t)op->mem.disp;
}

/* Registers named by operands, and the implicit ones, into rd and wr. */
static void take_operands(struct fin *f, const cs_insn *in)
{
	const cs_detail *d = in->detail;
	const cs_x86 *x = &d->x86;
	int nmem = 0;

	for (uint8_t i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_MEM) {
			take_mem(f, op, &nmem);
		} else if (op->type == X86_OP_REG) {
			uint16_t b = fbit(x86_fam(op->reg));
			/* No access recorded: take it as both. */
			if (!op->access || (op->access & CS_AC_READ))
				f->rd |= b;
			if (!op->access || (op->access & CS_AC_WRITE))
				f->wr |= b;
		}
	}
	/* A move from a register to memory writes it without reading it.
	 * Capstone 4's access flags say "read" for some such stores, so the
	 * shape decides: a mov or vmov whose first (destination) operand is
	 * the only memory operand and whose other is a register. */
	f->mwrite = nmem == 1 && x->op_count == 2 && x->operands[0].type == X86_OP_MEM &&
	            x->operands[1].type == X86_OP_REG &&
	            (!strncmp(in->mnemonic, "mov", 3) || !strncmp(in->mnemonic, "vmov", 4));
	for (uint8_t i = 0; i < d->regs_read_count; i++)
		f->rd |= fbit(x86_fam(d->regs_read[i]));
	for (uint8_t i = 0; i < d->regs_write_count; i++)
		f->wr |= fbit(x86_fam(d->regs_write[i]));
}

static void take_control(struct fin *f, const cs_insn *in)
{
	const cs_detail *d = in->detail;
	const cs_x86_op *o0 = &d->x86.operands[0];
	bool imm = d->x86.op_count >= 1 && o0->type == X86_OP_IMM;
	bool reg = d->x86.op_count == 1 && o0->type == X86_OP_REG;

	switch (in->id) {
	case X86_INS_UD2: case X86_INS_HLT: case X86_INS_INT3:
		f->kind = FK_STOP;
		return;
	default:
		break;
	}
	if (x86_in_group(d, CS_GRP_RET)) {
		f->kind = FK_RET;
	} else if (x86_in_group(d, CS_GRP_CALL)) {
		f->kind = imm ? FK_CALL : FK_CALL_IND;
	} else if (in->id == X86_INS_JMP) {
		f->kind = imm ? FK_JMP : FK_JMP_IND;
	} else if (x86_in_group(d, CS_GRP_JUMP)) {
		f->kind = imm ? FK_JCC : FK_JMP_IND;
	} else {
		return;
	}
	if (imm)
		f->target = (uint64_t)o0->imm;
	if (reg)
		f->src = (uint8_t)x86_fam(o0->reg);
}

/* The register-to-register shapes that flow.c follows values through. */
static void take_op(struct fin *f, const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *a = &x->operands[0], *b = &x->operands[1];
	bool two = x->op_count == 2;
	bool rr = two && a->type == X86_OP_REG && b->type == X86_OP_REG;
	bool ri = two && a->type == X86_OP_REG && b->type == X86_OP_IMM;
	bool rm = two && a->type == X86_OP_REG && b->type == X86_OP_MEM;
	bool mr = two && a->type == X86_OP_MEM && b->type == X86_OP_REG;
	bool same = rr && x86_fam(a->reg) == x86_fam(b->reg);

	if (two && a->type == X86_OP_REG) {
		f->dst = (uint8_t)x86_fam(a->reg);
		f->dwide = x86_fam_wide(a->reg);
	}
	if (rr || mr) {
		f->src = (uint8_t)x86_fam(b->reg);
		f->swide = x86_is_reg64(b->reg);
	}
	switch (in->id) {
	case X86_INS_LEA:
		f->op = rm ? FO_LEA : FO_OTHER;
		if (rm)
			f->mem = FM_ADDRESS;
		break;
	case X86_INS_MOV: case X86_INS_MOVABS:
		f->op = rr ? FO_MOV_RR : ri || rm ? FO_SET : mr ? FO_STORE : FO_OTHER;
		if (ri)
			f->target = (uint64_t)b->imm;
		break;
	case X86_INS_MOVZX: case X86_INS_MOVSX: case X86_INS_MOVSXD:
		/* Widened from a narrower register: a pointer truncated. */
		f->swide = false;
		f->op = rr ? FO_MOV_RR : rm ? FO_SET : FO_OTHER;
		break;
	case X86_INS_ADD: case X86_INS_SUB:
		if (same && in->id == X86_INS_SUB)
			f->op = FO_ZERO;
		else if (ri)
			f->op = FO_ADDI, f->disp = in->id == X86_INS_ADD ? b->imm : -b->imm;
		else if (rr && in->id == X86_INS_ADD)
			f->op = FO_ADD_RR;
		break;
	case X86_INS_XOR:
		f->op = same ? FO_ZERO : FO_OTHER;
		break;
	case X86_INS_CMP: case X86_INS_TEST:
		f->op = FO_CMP;
		break;
	case X86_INS_PUSH:
		if (x->op_count == 1 && a->type == X86_OP_REG)
			f->op = FO_PUSH, f->src = (uint8_t)x86_fam(a->reg),
			f->swide = x86_is_reg64(a->reg);
		break;
	case X86_INS_POP:
		if (x->op_count == 1 && a->type == X86_OP_REG)
			f->op = FO_POP, f->dst = (uint8_t)x86_fam(a->reg),
			f->dwide = x86_fam_wide(a->reg);
		break;
	case X86_INS_XCHG:
		f->op = rr && f->dwide && x86_is_reg64(b->reg) ? FO_XCHG : FO_OTHER;
		break;
	case X86_INS_NOP:
	case X86_INS_PREFETCH: case X86_INS_PREFETCHW:
	case X86_INS_PREFETCHNTA: case X86_INS_PREFETCHT0:
	case X86_INS_PREFETCHT1: case X86_INS_PREFETCHT2:
		f->op = FO_NOP;
		if (f->mem)
			f->mem = FM_ADDRESS;
		break;
	default:
		break;
	}
}

void fin_from_insn(struct fin *f, const cs_insn *in)
{
	*f = (struct fin){ .addr = in->address, .size = (uint8_t)in->size,
	                   .dst = X86_FAM_NONE, .src = X86_FAM_NONE,
	                   .base = X86_FAM_NONE, .index = X86_FAM_NONE };
	take_operands(f, in);
	take_op(f, in);
	take_control(f, in);
}

/*
 * Whether a VEX or EVEX opcode names a general-purpose register in its
 * ModRM or vvvv fields: BMI (andn, bextr, blsi, bzhi, mulx, pdep, pext,
 * rorx, sarx, shlx, shrx), moves and conversions between vector and
 * general registers, inserts and extracts, mask moves, broadcasts from a
 * general register.  Every other one names only vector registers there.
 */
static bool vex_names_gpr(unsigned map, unsigned op)
{
	static const uint8_t map1[] = { 0x2a, 0x2c, 0x2d, 0x50, 0x6e, 0x78, 0x79,
	                                0x7a, 0x7b, 0x7e, 0x90, 0x91, 0x92, 0x93,
	                                0xc4, 0xc5, 0xd7 };
	static const uint8_t map2[] = { 0x7a, 0x7b, 0x7c };
	static const uint8_t map3[] = { 0x14, 0x15, 0x16, 0x17, 0x20, 0x22 };

	switch (map) {
	case 1:
		return memchr(map1, (int)op, sizeof map1) != NULL;
	case 2:
		return op >= 0xf0 || memchr(map2, (int)op, sizeof map2) != NULL;
	case 3:
		return op == 0xf0 || memchr(map3, (int)op, sizeof map3) != NULL;
	default:
		return true;
	}
}

/*
 * Whether an opcode of map 0F38 addresses memory through VSIB (a base
 * plus a vector of indices): the AVX2 and AVX-512 gathers, the AVX-512
 * scatters and their prefetches.
 */
static bool vsib(unsigned map, unsigned op)
{
	return map == 2 && ((op >= 0x90 && op <= 0x93) || (op >= 0xa0 && op <= 0xa3) ||
	                    op == 0xc6 || op == 0xc7);
}

/*
 * The displacement of a memory operand whose ModRM byte is p[modrm_at],
 * in an instruction of n bytes.  False where it is not known: EVEX scales
 * an 8-bit displacement by a size that depends on the opcode and its
 * tuple type (disp8*N), which is not decoded here.
 */
static bool raw_disp(const uint8_t *p, size_t n, size_t modrm_at, bool evex,
                     int64_t *disp)
{
	unsigned mod = p[modrm_at] >> 6, rm = p[modrm_at] & 7;
	size_t at = modrm_at + 1 + (rm == 4);
	int32_t d32;

	*disp = 0;
	if (mod == 0 && !(rm == 4 && at - 1 < n && (p[at - 1] & 7) == 5))
		return true;    /* none (rip-relative: the target says it) */
	if (mod == 1) {
		if (at + 1 > n)
			return false;
		*disp = (int8_t)p[at];
		return !evex || !*disp;
	}
	if (at + 4 > n)
		return false;
	memcpy(&d32, p + at, 4);
	*disp = d32;
	return true;
}

/*
 * An instruction that x86_raw_length() measured.  Its operands are not
 * known.  Where the opcode can name a general-purpose register, every
 * register its ModRM and VEX.vvvv fields can name counts as read and its
 * writes as unknown; the memory operand's base and index are known for
 * all, its displacement is not kept.
 */
void fin_from_raw(struct fin *f, const uint8_t *p, size_t n, uint64_t pc,
                  uint64_t rip, size_t modrm_at)
{
	unsigned mod, reg, rm, rx = 0, xx = 0, bx = 0, v = 0, map;
	bool gpr;

	*f = (struct fin){ .addr = pc, .size = (uint8_t)n, .raw = true,
	                   .dst = X86_FAM_NONE, .src = X86_FAM_NONE,
	                   .base = X86_FAM_NONE, .index = X86_FAM_NONE };
	if (!modrm_at) {                /* rdpkru, wrpkru */
		f->rd = fbit(0) | fbit(1) | fbit(2);
		f->wr = fbit(0) | fbit(2);
		return;
	}
	rx = !(p[1] & 0x80);
	if (p[0] != 0xc5) {             /* C4 and EVEX: R X B in byte 1 */
		xx = !(p[1] & 0x40), bx = !(p[1] & 0x20);
		v = (~p[2] >> 3) & 15;
		map = p[0] == 0xc4 ? p[1] & 0x1f : p[1] & 0x03;
	} else {
		v = (~p[1] >> 3) & 15;
		map = 1;
	}
	gpr = vex_names_gpr(map, p[modrm_at - 1]);
	f->raw = gpr;
	mod = p[modrm_at] >> 6, reg = (p[modrm_at] >> 3) & 7, rm = p[modrm_at] & 7;
	if (gpr)
		f->rd = fbit(reg | rx << 3) | fbit(v);
	if (mod == 3) {
		if (gpr)
			f->rd |= fbit(rm | bx << 3);
		return;
	}
	/* The access is taken as up to a whole ZMM register. */
	f->mem = FM_ACCESS;
	f->msize = 64;
	if (rm == 4 && modrm_at + 1 < n) {
		unsigned sib = p[modrm_at + 1], sb = sib & 7, si = (sib >> 3) & 7;
		if (!(mod == 0 && sb == 5))
			f->base = (uint8_t)(sb | bx << 3);
		/* VSIB's index is a vector register: no general one. */
		if ((si != 4 || xx) && !vsib(map, p[modrm_at - 1])) {
			f->index = (uint8_t)(si | xx << 3);
			f->scale1 = sib >> 6 == 0;
		}
	} else if (mod == 0 && rm == 5) {
		f->base = X86_FAM_RIP;
		f->target = rip;
	} else {
		f->base = (uint8_t)(rm | bx << 3);
	}
	/* A gather's indices may be negative and reach below its base: its
	 * address stays unknown. */
	f->nodisp = !raw_disp(p, n, modrm_at, p[0] == 0x62, &f->disp) ||
	            vsib(map, p[modrm_at - 1]);
	f->disp8n = f->nodisp && !vsib(map, p[modrm_at - 1]) && f->disp &&
	            f->disp >= -128 && f->disp < 128;
}

void fin_bad(struct fin *f, uint64_t pc)
{
	*f = (struct fin){ .addr = pc, .size = 1, .kind = FK_BAD,
	                   .dst = X86_FAM_NONE, .src = X86_FAM_NONE,
	                   .base = X86_FAM_NONE, .index = X86_FAM_NONE };
}
