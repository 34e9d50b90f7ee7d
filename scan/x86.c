/*
 * x86.c - x86-64 decoding helpers that disasm.c and flow.c share (see
 * x86.h).  Pure functions of their arguments: no struct scan, no state, so
 * that scans on several threads can call them at once.
 */
#include <string.h>

#include "x86.h"

/*
 * Capstone 4 formats every instruction as text (mnemonic and operands)
 * while it decodes: cs_disasm_iter() calls the handle's printer, which for
 * x86 also fills the operand details, through vsnprintf.  The scanner's
 * sweep reads none of that text and, in position-independent code, none of
 * the operands either: it needs only what the decoder itself stores (id,
 * groups, ModRM, displacement, immediate offsets).  The printer is a
 * function pointer in the handle, the third field of Capstone 4.0's
 * struct cs_struct (cs_priv.h), after two enums.  x86_quiet() swaps it for
 * one that prints nothing, but only when this library is Capstone 4.0, the
 * handle's first fields read back as what cs_open() was given, and decoding
 * two known instructions afterwards yields exactly the fields that are
 * expected, with no operands (the old printer is really gone).  Otherwise
 * the handle is left as it was and the caller keeps the full decode.
 */
struct cs_head {
	cs_arch arch;
	cs_mode mode;
	void (*printer)(void *mci, void *stream, void *info);
};

static void print_nothing(void *mci, void *stream, void *info)
{
	(void)mci, (void)stream, (void)info;
}

static bool decodes_as(csh h, cs_insn *in, const char *bytes, size_t n,
                       unsigned id, uint8_t modrm, int64_t disp, uint8_t imm_off)
{
	const uint8_t *code = (const uint8_t *)bytes;
	uint64_t pc = 0x1000;
	const cs_x86 *x = &in->detail->x86;

	return cs_disasm_iter(h, &code, &n, &pc, in) && !n && in->id == id &&
	       x->op_count == 0 && x->modrm == modrm && x->disp == disp &&
	       x->encoding.imm_offset == imm_off && in->mnemonic[0] == 0;
}

bool x86_quiet(csh h, cs_insn *in)
{
	struct cs_head *head = (struct cs_head *)(uintptr_t)h;
	int major = 0, minor = 0;
	void (*old)(void *, void *, void *);

	cs_version(&major, &minor);
	if (major != 4 || minor != 0 || !head || head->arch != CS_ARCH_X86 ||
	    head->mode != CS_MODE_64 || !head->printer)
		return false;
	old = head->printer;
	head->printer = print_nothing;
	if (decodes_as(h, in, "\x48\x8d\x05\x10\x00\x00\x00", 7, X86_INS_LEA,
	               0x05, 0x10, 0) &&
	    decodes_as(h, in, "\xe8\x10\x00\x00\x00", 5, X86_INS_CALL, 0, 0, 1) &&
	    x86_in_group(in->detail, CS_GRP_CALL))
		return true;
	head->printer = old;
	return false;
}

/* Family + 1 of each Capstone register (0: not a general-purpose register),
 * and 1 << 7 on the 64-bit and 32-bit forms.  A table indexed by register,
 * because the sweep asks for every operand of every instruction. */
#define F(n) ((n) + 1)
#define W 0x80
static const uint8_t fam_of[X86_REG_ENDING] = {
	[X86_REG_RAX] = F(0) | W, [X86_REG_EAX] = F(0) | W, [X86_REG_AX] = F(0),
	[X86_REG_AL] = F(0), [X86_REG_AH] = F(0),
	[X86_REG_RCX] = F(1) | W, [X86_REG_ECX] = F(1) | W, [X86_REG_CX] = F(1),
	[X86_REG_CL] = F(1), [X86_REG_CH] = F(1),
	[X86_REG_RDX] = F(2) | W, [X86_REG_EDX] = F(2) | W, [X86_REG_DX] = F(2),
	[X86_REG_DL] = F(2), [X86_REG_DH] = F(2),
	[X86_REG_RBX] = F(3) | W, [X86_REG_EBX] = F(3) | W, [X86_REG_BX] = F(3),
	[X86_REG_BL] = F(3), [X86_REG_BH] = F(3),
	[X86_REG_RSP] = F(4) | W, [X86_REG_ESP] = F(4) | W, [X86_REG_SP] = F(4),
	[X86_REG_SPL] = F(4),
	[X86_REG_RBP] = F(5) | W, [X86_REG_EBP] = F(5) | W, [X86_REG_BP] = F(5),
	[X86_REG_BPL] = F(5),
	[X86_REG_RSI] = F(6) | W, [X86_REG_ESI] = F(6) | W, [X86_REG_SI] = F(6),
	[X86_REG_SIL] = F(6),
	[X86_REG_RDI] = F(7) | W, [X86_REG_EDI] = F(7) | W, [X86_REG_DI] = F(7),
	[X86_REG_DIL] = F(7),
	[X86_REG_R8] = F(8) | W, [X86_REG_R8D] = F(8) | W, [X86_REG_R8W] = F(8),
	[X86_REG_R8B] = F(8),
	[X86_REG_R9] = F(9) | W, [X86_REG_R9D] = F(9) | W, [X86_REG_R9W] = F(9),
	[X86_REG_R9B] = F(9),
	[X86_REG_R10] = F(10) | W, [X86_REG_R10D] = F(10) | W,
	[X86_REG_R10W] = F(10), [X86_REG_R10B] = F(10),
	[X86_REG_R11] = F(11) | W, [X86_REG_R11D] = F(11) | W,
	[X86_REG_R11W] = F(11), [X86_REG_R11B] = F(11),
	[X86_REG_R12] = F(12) | W, [X86_REG_R12D] = F(12) | W,
	[X86_REG_R12W] = F(12), [X86_REG_R12B] = F(12),
	[X86_REG_R13] = F(13) | W, [X86_REG_R13D] = F(13) | W,
	[X86_REG_R13W] = F(13), [X86_REG_R13B] = F(13),
	[X86_REG_R14] = F(14) | W, [X86_REG_R14D] = F(14) | W,
	[X86_REG_R14W] = F(14), [X86_REG_R14B] = F(14),
	[X86_REG_R15] = F(15) | W, [X86_REG_R15D] = F(15) | W,
	[X86_REG_R15W] = F(15), [X86_REG_R15B] = F(15),
	[X86_REG_RIP] = F(X86_FAM_RIP) | W, [X86_REG_EIP] = F(X86_FAM_RIP) | W,
};
#undef F
#undef W

unsigned x86_fam(unsigned reg)
{
	unsigned f = reg < X86_REG_ENDING ? fam_of[reg] & 0x7f : 0;

	return f ? f - 1 : X86_FAM_NONE;
}

bool x86_fam_wide(unsigned reg)
{
	return reg < X86_REG_ENDING && (fam_of[reg] & 0x80);
}

bool x86_is_reg64(unsigned reg)
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

bool x86_in_group(const cs_detail *d, uint8_t group)
{
	return memchr(d->groups, group, d->groups_count) != NULL;
}

bool x86_is_branch(const cs_detail *d)
{
	for (uint8_t i = 0; i < d->groups_count; i++)
		if (d->groups[i] == CS_GRP_JUMP || d->groups[i] == CS_GRP_CALL)
			return true;
	return false;
}

/*
 * Capstone 4 cannot decode a share of the AVX2 and AVX-512 instructions
 * that a current libc uses (about 800 in Debian 12's libc.so.6), and a
 * sweep that skipped one byte there would fall out of step and read
 * garbage as references.  The VEX (C4, C5) and EVEX (62) encodings have a
 * regular length, so that much is decoded here: prefix, opcode, ModRM, SIB,
 * displacement and immediate.
 */
static size_t vex_length(const uint8_t *p, size_t left, uint64_t pc,
                         uint64_t *rip, size_t *modrm_at)
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
	if (modrm_at)
		*modrm_at = n;
	modrm = p[n++];
	mod = modrm >> 6, rm = modrm & 7;
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

size_t x86_raw_length(const uint8_t *p, size_t left, uint64_t pc, uint64_t *rip,
                      size_t *modrm)
{
	*rip = 0;
	if (modrm)
		*modrm = 0;
	if (left >= 3 && p[0] == 0x0f && p[1] == 0x01 && (p[2] == 0xee || p[2] == 0xef))
		return 3;
	return vex_length(p, left, pc, rip, modrm);
}

bool x86_implausible(const cs_insn *in, bool amd3dnow)
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
		    (in->detail->groups[i] == X86_GRP_3DNOW && !amd3dnow))
			return true;
	return false;
}
