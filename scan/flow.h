/*
 * flow.h - what flow.c and flowinsn.c share: the compact form of one
 * decoded instruction.  Not installed.
 */
#ifndef XOM_SCAN_FLOW_H
#define XOM_SCAN_FLOW_H

#include "scan.h"
#include "x86.h"

/* Where control goes after an instruction. */
enum fin_kind {
	FK_SEQ = 0,     /* the next instruction */
	FK_JMP,         /* target */
	FK_JCC,         /* target or the next instruction */
	FK_CALL,        /* target, then back to the next instruction */
	FK_RET,
	FK_JMP_IND,     /* through src, or through the memory operand */
	FK_CALL_IND,
	FK_STOP,        /* ud2, hlt, int3: nothing follows */
	FK_BAD,         /* a byte that neither Capstone nor x86.c decodes */
};

/* What an instruction does to registers, in the shapes flow.c follows. */
enum fin_op {
	FO_OTHER = 0,   /* only rd and wr are known */
	FO_NOP,         /* nop, prefetch: names an address, reads nothing */
	FO_LEA,         /* dst = base + index * scale + disp */
	FO_MOV_RR,      /* dst = src */
	FO_SET,         /* dst = something unrelated (imm in target, load, pop) */
	FO_STORE,       /* memory = src */
	FO_ADDI,        /* dst += disp */
	FO_ADD_RR,      /* dst += src */
	FO_CMP,         /* reads, writes only flags */
	FO_ZERO,        /* dst = 0 (xor, sub of itself) */
	FO_PUSH,        /* the stack = src */
	FO_XCHG,        /* dst <-> src */
};

enum fin_mem { FM_NONE = 0, FM_ACCESS, FM_ADDRESS };

struct fin {
	uint64_t addr;
	uint64_t target;        /* branch target; RIP-relative or immediate address */
	int64_t disp;           /* memory displacement; FO_ADDI's addend */
	uint16_t rd, wr;        /* families read and written, one bit each */
	uint8_t size, kind, op;
	uint8_t dst, src;       /* families, or X86_FAM_NONE */
	uint8_t base, index;    /* the memory operand's, or X86_FAM_NONE */
	uint8_t mem, msize;     /* enum fin_mem; bytes accessed */
	bool dwide, swide;      /* dst replaces the whole register; src is 64-bit */
	bool seg;               /* an fs or gs override */
	bool nodisp;            /* the displacement is unknown */
	bool raw;               /* measured by x86.c: registers written unknown */
};

void fin_from_insn(struct fin *f, const cs_insn *in);
void fin_from_raw(struct fin *f, const uint8_t *p, size_t n, uint64_t pc,
                  uint64_t rip, size_t modrm_at);
void fin_bad(struct fin *f, uint64_t pc);

#endif
