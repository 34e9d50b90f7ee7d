/*
 * flow.h - what flow.c, flowop.c, flowstack.c, flowwin.c and flowinsn.c
 * share: the compact form of one decoded instruction, and the state of the
 * stage.  Not installed.
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
	FO_POP,         /* dst = the stack */
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
	bool disp8n;            /* ... but is disp times an N from 1 to 64 (EVEX) */
	bool raw;               /* measured by x86.c: registers written unknown */
	bool mwrite;            /* the memory operand is written, not read */
	bool scale1;            /* the index is not scaled: base and index swap */
};

/* ---- flow.c's state, which flowwin.c reads and keeps --------------------- */

#define STEP_BUDGET 4096        /* instructions followed per address */
#define STEP_BUDGET_CLEAN 16384 /* while nothing was read through it */
#define WIDEN_AFTER 8           /* visits of one instruction before widen() */
#define SEEN_BITS 15
#define SEEN_SLOTS (1u << SEEN_BITS)    /* above STEP_BUDGET_CLEAN */
#define MAX_DEPTH 4             /* calls followed into and back */
#define CHUNK 128               /* bytes decoded at a time */
#define WINDOW_MAX (1u << 18)   /* instructions kept decoded */
#define PLAUSIBLE_BYTES 65536
#define PLAUSIBLE_INSNS 16384

enum {
	OUT_UNKNOWN = 1,        /* a use that proves nothing */
	OUT_DATA = 2,           /* read through it, where is not known */
	OUT_STORED = 4,         /* stored into memory as a pointer */
	OUT_JUMPED = 8,         /* jumped or called through, unchanged */
	OUT_ELSEWHERE = 16,     /* the base of a read outside the code */
	OUT_ESCAPED = 32,       /* left in a scratch register at a return */
	OUT_SELF = 64,          /* read at a known place that holds the address */
	OUT_COMPUTED = 128,     /* jumped through at an offset not known, in
	                           code with CFI: the base of a computed goto */
};

/* Caller-saved registers that carry no value back by the ABI: rcx, rsi,
 * rdi, r8-r11. */
#define ABI_SCRATCH 0x0fc2
#define CALLEE_SAVED 0xf028     /* rbx, rbp, r12-r15 */
#define NOT_ARGS 0x0801         /* rax, r11: clobbered, not passed */

#define NSLOTS 4                /* stack slots that may hold the address */

struct st {
	uint16_t live, any;     /* hold the address; of those, at unknown offsets */
	uint16_t cst;           /* hold another code address, loaded on this path */
	uint16_t fwd;           /* of the any ones: at off plus an index (flowop.c) */
	uint8_t slive, sany;    /* slots that hold it; of those, at unknown offsets */
	uint8_t pad[6];
	int64_t off[16];        /* offsets of the live, known ones; else 0 */
	uint64_t cval[16];      /* the addresses in cst; else 0 */
	int32_t spos[NSLOTS];   /* where each live slot is, from rsp; else 0 */
	int32_t soff[NSLOTS];   /* the offsets of the live, known ones; else 0 */
};

/* A stretch of code (a function's extent, or the code between two
 * entries) and whether any of its instructions lets rsp out of rsp. */
struct frame {
	uint64_t start, end;
	bool ok;
	bool rbp_global;        /* rbp only ever a global's address, or popped */
	bool rbp_set;           /* rbp assigned here (not only popped) */
	uint8_t pad[5];
};

struct path {
	uint64_t pc;
	uint64_t ret[MAX_DEPTH];
	uint32_t depth, pad;
	struct st st;
};

struct flow {
	struct scan *s;
	csh h;
	cs_insn *in;
	struct vec win, tmp;    /* struct fin: the decoded window, sorted */
	struct vec spans;       /* struct xom_range: what win covers */
	uint64_t plo, phi;      /* its region */
	const struct region *reg;
	/* the address being followed */
	uint64_t t0, at;
	uint8_t reason;
	bool abi;
	unsigned out, steps;
	size_t refs0;            /* refs before the address was followed */
	struct vec work;        /* struct path */
	struct path *seen;
	uint64_t *visit_pc;     /* SEEN_SLOTS: how often each pc was reached */
	uint32_t *visit_n;
	uint64_t *visit_where;  /* where_digest() at the first visit */
	uint32_t *gen, curgen;
	bool spilled;           /* the address was put on the stack */
	bool consume;           /* a jump through a register ends its life */
	struct vec frames;      /* struct frame: code checked for stack addresses */
	struct vec code;        /* uint64_t: found to be code */
	struct vec data;        /* uint64_t: kept as tables */
	int rc;
};

static inline uint16_t bit(unsigned fam)
{
	return fam < 16 ? (uint16_t)(1u << fam) : 0;
}

static inline bool flow_in_region(const struct flow *f, uint64_t a)
{
	return a >= f->plo && a < f->phi;
}

static inline void unknown(struct flow *f) { f->out |= OUT_UNKNOWN; }

static inline bool tracked(const struct st *st, unsigned r) { return st->live & bit(r); }
static inline bool exact(const struct st *st, unsigned r)
{
	return tracked(st, r) && !(st->any & bit(r));
}

static inline void kill(struct st *st, unsigned r)
{
	st->live &= (uint16_t)~bit(r), st->any &= (uint16_t)~bit(r);
	st->fwd &= (uint16_t)~bit(r);
	if (r < 16)
		st->off[r] = 0;
}

static inline void set_exact(struct st *st, unsigned r, int64_t off)
{
	if (r >= 16)
		return;
	st->live |= bit(r), st->any &= (uint16_t)~bit(r);
	st->fwd &= (uint16_t)~bit(r);
	st->off[r] = off;
}

static inline void set_any(struct st *st, unsigned r)
{
	if (r >= 16)
		return;
	st->live |= bit(r), st->any |= bit(r);
	st->fwd &= (uint16_t)~bit(r);
	st->off[r] = 0;
}

/* r holds the address plus off plus an index that is not known: to every
 * use but a read through it (flow_check_access()), an unknown offset. */
static inline void set_fwd(struct st *st, unsigned r, int64_t off)
{
	if (r >= 16)
		return;
	set_any(st, r);
	st->fwd |= bit(r);
	st->off[r] = off;
}

static inline bool holds(const struct st *st) { return st->live || st->slive; }

/* flowstack.c */
bool flow_stack_op(struct flow *f, const struct fin *x, struct st *st);
void flow_stack_call(struct flow *f, struct st *st);
void flow_stack_ret(struct flow *f, struct st *st);
void flow_stack_abi_call(struct flow *f, struct st *st);
void flow_stack_left(struct flow *f, const struct st *st, bool jump);
void flow_stack_widen(struct st *st);
bool flow_stack_closed(struct flow *f, uint64_t pc);

/* flowop.c */
void flow_check_access(struct flow *f, const struct fin *x, const struct st *st);
void flow_apply_op(struct flow *f, const struct fin *x, struct st *st);
void flow_track_consts(const struct fin *x, struct st *st);

/* flowwin.c */
const struct fin *flow_fin_at(struct flow *f, uint64_t pc);
void flow_enter_region(struct flow *f, const struct cand *c);
bool flow_in_plt(const struct flow *f, uint64_t a);
bool flow_plt_noreturn(struct flow *f, uint64_t a);
bool flow_plt_extern(struct flow *f, uint64_t a, unsigned *nargs);
bool flow_plausible(struct flow *f, uint64_t t);

/* flowinsn.c */
void fin_from_insn(struct fin *f, const cs_insn *in);
void fin_from_raw(struct fin *f, const uint8_t *p, size_t n, uint64_t pc,
                  uint64_t rip, size_t modrm_at);
void fin_bad(struct fin *f, uint64_t pc);

#endif
