/*
 * flow.c - decides what each code address loaded into a register is, by
 * following the register through the code.
 *
 * disasm.c lists every RIP-relative lea of an address in an executable
 * segment that is not a known entry (and, in non-PIE files, every mov of
 * such an immediate).  Taken alone, such an address looks like the base of
 * a table; in hand-written assembly it is more often a function pointer
 * stored into a dispatch table, a continuation label jumped through later,
 * or a base that a displacement moves into .rodata.  From the loading
 * instruction on, every path through the code is followed (jumps, both
 * arms of conditional branches, calls into code nearby and back) with the
 * set of registers that hold the address plus a known or unknown offset.
 * Each path ends when no register holds it any more.  The uses decide:
 *   - a memory access through it whose address lies in an exec segment:
 *     data, from that address (a table, as before);
 *   - a memory access whose base plus displacement lies outside every exec
 *     segment: a read of .rodata or .data, nothing in the code is read;
 *   - a jump or call through it: code;
 *   - a store of it into memory that is not the stack: a pointer, code only
 *     if the bytes there read as a function (plausible_function());
 *   - anything else (returned, pushed, spilled, passed to a call, read by
 *     an instruction the model does not cover, a path too long, code that
 *     cannot be decoded): unknown, and unknown keeps the address a table
 *     that runs to the next entry, exactly as the scanner did before this
 *     stage existed.
 * A call with the register live is unknown even when the callee looks
 * harmless: memcpy(dst, table, n) is the case that must stay readable.
 *
 * Reads: the image, segs, entries, funcs, regions, cands, the
 * instruction-start bitmap.
 * Adds: refs for what is data; code entries and call targets for what is
 * code (entries re-sorted).
 * Calls: util.c, x86.c, flowinsn.c and Capstone.
 */
#include <stdlib.h>
#include <string.h>

#include "flow.h"

#define STEP_BUDGET 4096        /* instructions followed per address */
#define WIDEN_AFTER 8           /* visits of one instruction before widen() */
#define SEEN_SLOTS 8192         /* power of two, above STEP_BUDGET */
#define MAX_DEPTH 4             /* calls followed into and back */
#define CHUNK 128               /* bytes decoded at a time */
#define WINDOW_MAX (1u << 18)   /* instructions kept decoded */
#define PLAUSIBLE_BYTES 8192
#define PLAUSIBLE_INSNS 2048

enum {
	OUT_UNKNOWN = 1,        /* a use that proves nothing */
	OUT_DATA = 2,           /* read through it, where is not known */
	OUT_STORED = 4,         /* stored into memory as a pointer */
	OUT_JUMPED = 8,         /* jumped or called through, unchanged */
	OUT_ELSEWHERE = 16,     /* the base of a read outside the code */
	OUT_ESCAPED = 32,       /* left in a scratch register at a return */
};

/* Caller-saved registers that carry no value back by the ABI: rcx, rsi,
 * rdi, r8-r11. */
#define ABI_SCRATCH 0x0fc2
#define CALLEE_SAVED 0xf028     /* rbx, rbp, r12-r15 */

struct st {
	uint16_t live, any;     /* hold the address; of those, at unknown offsets */
	uint16_t cst, pad;      /* hold another code address, loaded on this path */
	int64_t off[16];        /* offsets of the live, known ones; else 0 */
	uint64_t cval[16];      /* the addresses in cst; else 0 */
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
	struct vec work;        /* struct path */
	struct path *seen;
	uint64_t *visit_pc;     /* SEEN_SLOTS: how often each pc was reached */
	uint32_t *visit_n;
	uint32_t *gen, curgen;
	struct vec code;        /* uint64_t: found to be code */
	struct vec data;        /* uint64_t: kept as tables */
	int rc;
};

static uint16_t bit(unsigned fam) { return fam < 16 ? (uint16_t)(1u << fam) : 0; }

/* ---- the decoded window ---------------------------------------------- */

/* Decodes from a (an instruction start of the sweep) to at least b, within
 * the region, exactly as the sweep did: restarting at every entry. */
static int decode(struct flow *f, uint64_t a, uint64_t b, struct vec *out)
{
	const struct region *r = f->reg;
	const uint64_t *e = f->s->entries.p;
	size_t ne = f->s->entries.n, k = count_le(e, ne, sizeof *e, a);
	uint64_t pc = a;

	while (pc < b && pc < f->phi) {
		uint64_t stop = k < ne && e[k] < f->phi ? e[k] : f->phi;
		const uint8_t *code = f->s->img + r->offset + (pc - r->addr);
		size_t left = stop - pc;

		while (left && pc < b) {
			struct fin *x = vec_push(out);
			uint64_t rip;
			size_t n, modrm;

			if (!x)
				return f->rc = scan_fail(f->s, XOM_SCAN_ENOMEM, "out of memory");
			if (cs_disasm_iter(f->h, &code, &left, &pc, f->in)) {
				fin_from_insn(x, f->in);
				continue;
			}
			n = x86_raw_length(code, left, pc, &rip, &modrm);
			if (n)
				fin_from_raw(x, code, n, pc, rip, modrm);
			else
				fin_bad(x, pc), n = 1;
			code += n, left -= n, pc += n;
		}
		while (k < ne && e[k] <= pc)
			k++;
	}
	return 0;
}

/* Whether the decoded window covers pc; k is the first span above pc. */
static bool covered(const struct flow *f, uint64_t pc, size_t *k)
{
	const struct xom_range *sp = f->spans.p;

	*k = count_le(sp, f->spans.n, sizeof *sp, pc);
	return *k && sp[*k - 1].end > pc;
}

/*
 * Decodes up to CHUNK bytes from pc, an instruction start of the sweep,
 * into the window, which holds such chunks sorted by address: a path that
 * jumps far decodes only what it reaches.  A chunk ends where the next one
 * begins, which decoding meets exactly: both lie on the sweep's chain.
 */
static bool decode_chunk(struct flow *f, uint64_t pc, size_t k)
{
	const struct xom_range *sp = f->spans.p;
	uint64_t end = f->phi - pc > CHUNK ? pc + CHUNK : f->phi;
	struct fin *w, *t;
	size_t at, n;
	struct xom_range *r;

	if (k < f->spans.n && sp[k].start < end)
		end = sp[k].start;
	f->tmp.n = 0;
	if (decode(f, pc, end, &f->tmp) || !f->tmp.n)
		return false;
	t = f->tmp.p;
	n = f->tmp.n;
	if (n > f->win.cap - f->win.n || f->spans.n == f->spans.cap) {
		/* Grow both once, then move the chunk in place. */
		for (size_t i = 0; i < n; i++)
			if (!vec_push(&f->win))
				goto oom;
		f->win.n -= n;
		if (!vec_push(&f->spans))
			goto oom;
		f->spans.n--;
	}
	w = f->win.p;
	at = count_le(w, f->win.n, sizeof *w, pc);
	memmove(w + at + n, w + at, (f->win.n - at) * sizeof *w);
	memcpy(w + at, t, n * sizeof *w);
	f->win.n += n;
	r = f->spans.p;
	memmove(r + k + 1, r + k, (f->spans.n - k) * sizeof *r);
	r[k] = (struct xom_range){ pc, t[n - 1].addr + t[n - 1].size };
	f->spans.n++;
	return true;
oom:
	f->rc = scan_fail(f->s, XOM_SCAN_ENOMEM, "out of memory");
	return false;
}

/* The instruction at pc, decoding more of the region when needed; NULL
 * when pc is outside it or no instruction of the sweep starts there. */
static const struct fin *fin_at(struct flow *f, uint64_t pc)
{
	const struct fin *w;
	size_t k;

	if (pc < f->plo || pc >= f->phi)
		return NULL;
	if (!covered(f, pc, &k) &&
	    (!scan_is_start(f->s, pc) || !decode_chunk(f, pc, k)))
		return NULL;
	w = f->win.p;
	k = count_le(w, f->win.n, sizeof *w, pc);
	return k && w[k - 1].addr == pc ? &w[k - 1] : NULL;
}

/* Sets the region of a candidate and keeps the window when it still
 * fits.  Paths may cross entries: decode() restarts there as the sweep
 * did, and the code on both sides is followed alike. */
static void enter_region(struct flow *f, const struct cand *c)
{
	const struct region *r = (const struct region *)f->s->regions.p + c->region;

	if (r == f->reg && f->win.n < WINDOW_MAX)
		return;
	f->reg = r, f->plo = r->addr, f->phi = r->addr + r->size;
	f->win.n = f->spans.n = 0;
}

/* ---- following one address -------------------------------------------- */

static void unknown(struct flow *f) { f->out |= OUT_UNKNOWN; }

static bool tracked(const struct st *st, unsigned r) { return st->live & bit(r); }
static bool exact(const struct st *st, unsigned r)
{
	return tracked(st, r) && !(st->any & bit(r));
}

static void kill(struct st *st, unsigned r)
{
	st->live &= (uint16_t)~bit(r), st->any &= (uint16_t)~bit(r);
	if (r < 16)
		st->off[r] = 0;
}

static void set_exact(struct st *st, unsigned r, int64_t off)
{
	if (r >= 16)
		return;
	st->live |= bit(r), st->any &= (uint16_t)~bit(r);
	st->off[r] = off;
}

static void set_any(struct st *st, unsigned r)
{
	if (r >= 16)
		return;
	st->live |= bit(r), st->any |= bit(r);
	st->off[r] = 0;
}

/* dst gets a value unrelated to the address: gone when the write replaces
 * the register, still an address at an unknown offset when it does not.
 * Compiled code (with CFI) writes a byte of a register (sete %cl) only when
 * the rest is dead, so there a partial write ends the address too. */
static void overwrite(const struct flow *f, struct st *st, const struct fin *x)
{
	if (x->dwide || f->abi)
		kill(st, x->dst);
	else if (tracked(st, x->dst))
		set_any(st, x->dst);
}

static void push_data_ref(struct flow *f, uint64_t target, uint32_t size)
{
	if (!f->rc)
		f->rc = scan_push_ref(f->s, target, size, f->reason, true, f->at);
}

/*
 * A memory operand built from the address.  With a known offset and no
 * tracked index the effective address is known, less the index: in an
 * exec segment it is data, outside every one it is a read elsewhere.  An
 * untracked index is assumed not to carry a read from .rodata back into
 * the code (tables are indexed forward from their base); a tracked one, or
 * an unknown offset, leaves the address unknown, and the read is data.
 */
static void check_access(struct flow *f, const struct fin *x, const struct st *st)
{
	bool bt = tracked(st, x->base), it = tracked(st, x->index);
	uint64_t ea;

	if (!bt && !it)
		return;
	if (x->seg) {
		unknown(f);
		return;
	}
	if (!bt || it || !exact(st, x->base) || x->nodisp) {
		f->out |= OUT_DATA;
		return;
	}
	ea = f->t0 + (uint64_t)st->off[x->base] + (uint64_t)x->disp;
	if (x->index != X86_FAM_NONE) {
		if (exec_seg_at(f->s, ea))
			push_data_ref(f, ea, 0);
		else
			f->out |= OUT_ELSEWHERE;
		return;
	}
	if (exec_seg_at(f->s, ea))
		push_data_ref(f, ea, x->msize);
	else if (exec_seg_at(f->s, ea + x->msize - 1))
		push_data_ref(f, ea + x->msize - 1, 1);
	else
		f->out |= OUT_ELSEWHERE;
}

static void apply_lea(struct flow *f, const struct fin *x, struct st *st)
{
	bool bt = tracked(st, x->base), it = tracked(st, x->index);

	if (x->base == X86_FAM_RIP) {
		if (x->target == f->t0 && x->dwide)
			set_exact(st, x->dst, 0);
		else
			overwrite(f, st, x);
	} else if (bt && !it && exact(st, x->base) && x->index == X86_FAM_NONE &&
	           x->dwide) {
		set_exact(st, x->dst, st->off[x->base] + x->disp);
	} else if (bt || it) {
		set_any(st, x->dst);
	} else {
		overwrite(f, st, x);
	}
}

static void apply_op(struct flow *f, const struct fin *x, struct st *st)
{
	uint16_t rd;

	switch (x->op) {
	case FO_NOP: case FO_CMP:
		return;
	case FO_LEA:
		apply_lea(f, x, st);
		return;
	case FO_MOV_RR:
		if (!tracked(st, x->src))
			overwrite(f, st, x);
		else if (x->swide && x->dwide && exact(st, x->src))
			set_exact(st, x->dst, st->off[x->src]);
		else
			set_any(st, x->dst);
		return;
	case FO_SET:
		if (f->reason == XOM_R_ABSOLUTE && x->mem == FM_NONE &&
		    x->target == f->t0 && x->dwide)
			set_exact(st, x->dst, 0);
		else
			overwrite(f, st, x);
		return;
	case FO_STORE:
		/* Spilled to the stack, it may come back in any register. */
		if (!tracked(st, x->src))
			return;
		if (!x->swide || x->base == X86_RSP || x->base == X86_RBP)
			unknown(f);
		else
			f->out |= OUT_STORED;
		return;
	case FO_ADDI:
		if (exact(st, x->dst) && x->dwide)
			st->off[x->dst] += x->disp;
		else if (tracked(st, x->dst))
			set_any(st, x->dst);
		return;
	case FO_ADD_RR:
		if (tracked(st, x->dst) || tracked(st, x->src))
			set_any(st, x->dst);
		return;
	case FO_ZERO:
		kill(st, x->dst);
		return;
	case FO_PUSH:
		if (tracked(st, x->src))
			unknown(f);
		return;
	case FO_XCHG: {
		struct st t = *st;
		kill(st, x->dst), kill(st, x->src);
		if (tracked(&t, x->src))
			exact(&t, x->src) ? set_exact(st, x->dst, t.off[x->src])
			                  : set_any(st, x->dst);
		if (tracked(&t, x->dst))
			exact(&t, x->dst) ? set_exact(st, x->src, t.off[x->dst])
			                  : set_any(st, x->src);
		return;
	}
	default:
		break;
	}
	/* An indirect branch reads its register: control() judges that. */
	rd = x->rd;
	if (x->kind == FK_JMP_IND || x->kind == FK_CALL_IND)
		rd &= (uint16_t)~bit(x->src);
	if (rd & st->live)
		unknown(f);
	else
		for (unsigned r = 0; r < 16; r++)
			if (x->wr & st->live & bit(r)) {
				/* Written, not read: replaced in compiled code,
				 * and in code without CFI perhaps only in part. */
				if (f->abi)
					kill(st, r);
				else
					set_any(st, r);
			}
}

/*
 * The address that an untracked register holds at an indirect jump, when a
 * RIP-relative lea loads it a few instructions before on a straight line
 * (lea .Lcont(%rip), %r8; jmp *%rcx, with %rcx set just before): x86inc's
 * way to call a shared tail that returns through %r8.  No entry may lie in
 * between, nor any instruction that is not sequential or whose writes are
 * unknown.
 */
static bool lea_before(struct flow *f, const struct fin *x, uint64_t *to)
{
	const struct fin *w = f->win.p;
	size_t i = (size_t)(x - w);

	for (unsigned n = 0; n < 8 && i; n++, i--) {
		const struct fin *r = &w[i - 1];
		bool writes = (r->dst == x->src && r->op != FO_OTHER &&
		               r->op != FO_STORE && r->op != FO_CMP &&
		               r->op != FO_PUSH && r->op != FO_NOP) ||
		              (r->op == FO_XCHG && r->src == x->src) ||
		              (r->wr & bit(x->src));

		if (r->addr + r->size != w[i].addr || r->kind != FK_SEQ || r->raw ||
		    sorted_has_u64(f->s->entries.p, f->s->entries.n, w[i].addr))
			return false;
		if (!writes)
			continue;
		if (r->op != FO_LEA || r->base != X86_FAM_RIP || !r->dwide)
			return false;
		*to = r->target;
		return true;
	}
	return false;
}

static bool in_region(const struct flow *f, uint64_t a)
{
	return a >= f->plo && a < f->phi;
}

/*
 * The other code addresses that RIP-relative leas load on the path: an
 * indirect jump or call through one of them goes to a known place, and the
 * path follows it (x86inc's lea .Lcont(%rip), %r8; jmp .Ltail, where the
 * shared tail ends in jmp *%r8).  Any write to a register forgets its
 * address; an instruction whose writes are unknown forgets them all.
 */
static void track_consts(const struct fin *x, struct st *st)
{
	bool from = x->src < 16 && (st->cst & bit(x->src));
	uint64_t v = from ? st->cval[x->src] : 0;
	uint16_t gone = x->raw ? 0xffff : x->wr | bit(x->dst);

	if (x->op == FO_XCHG)
		gone |= bit(x->src);
	for (unsigned r = 0; r < 16; r++)
		if (gone & st->cst & bit(r))
			st->cval[r] = 0;
	st->cst &= (uint16_t)~gone;
	if (x->dst >= 16 || !x->dwide)
		return;
	if (x->op == FO_LEA && x->base == X86_FAM_RIP)
		st->cst |= bit(x->dst), st->cval[x->dst] = x->target;
	else if (x->op == FO_MOV_RR && from && x->swide)
		st->cst |= bit(x->dst), st->cval[x->dst] = v;
}

/* Where an indirect branch through an untracked register goes, if known. */
static bool known_target(struct flow *f, const struct fin *x, const struct st *st,
                         uint64_t *to)
{
	if (x->mem || x->src >= 16)
		return false;
	if (st->cst & bit(x->src)) {
		*to = st->cval[x->src];
		return in_region(f, *to);
	}
	return lea_before(f, x, to) && in_region(f, *to);
}

/* Whether a path state was seen before; records it if not.  Full states
 * are compared, so a hash collision cannot skip a path. */
static bool seen_before(struct flow *f, const struct path *p)
{
	const unsigned char *b = (const unsigned char *)p;
	uint64_t h = 1469598103934665603ull, w;

	_Static_assert(sizeof *p % 8 == 0, "paths hash by words");
	for (size_t i = 0; i < sizeof *p; i += 8) {
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 1099511628211ull;
		h ^= h >> 29;
	}
	for (size_t k = h & (SEEN_SLOTS - 1);; k = (k + 1) & (SEEN_SLOTS - 1)) {
		if (f->gen[k] != f->curgen) {
			f->gen[k] = f->curgen;
			f->seen[k] = *p;
			return false;
		}
		if (!memcmp(&f->seen[k], p, sizeof *p))
			return true;
	}
}

/*
 * A loop that steps the address (add $16, %rax) reaches its head with a
 * new offset each time and would run to the budget.  After WIDEN_AFTER
 * visits of one instruction the offsets there are forgotten (known
 * becomes unknown, which can only turn reads into data) and so are the
 * other code addresses, and the states converge.
 */
static void widen(struct flow *f, struct path *p)
{
	size_t k = (p->pc * 0x9e3779b97f4a7c15ull) >> 51;   /* 13 bits */

	for (;; k = (k + 1) & (SEEN_SLOTS - 1)) {
		if (f->gen[k + SEEN_SLOTS] != f->curgen) {
			f->gen[k + SEEN_SLOTS] = f->curgen;
			f->visit_pc[k] = p->pc;
			f->visit_n[k] = 0;
		}
		if (f->visit_pc[k] == p->pc)
			break;
	}
	if (++f->visit_n[k] <= WIDEN_AFTER)
		return;
	for (unsigned r = 0; r < 16; r++) {
		if (exact(&p->st, r))
			set_any(&p->st, r);
		p->st.cval[r] = 0;
	}
	p->st.cst = 0;
}

static void go(struct flow *f, const struct path *p, uint64_t pc)
{
	struct path *q;

	if (!p->st.live)
		return;
	if (!(q = vec_push(&f->work))) {
		f->rc = scan_fail(f->s, XOM_SCAN_ENOMEM, "out of memory");
		return;
	}
	*q = *p;
	q->pc = pc;
}

/*
 * A return, or a jump to where it is not known, with the address still in
 * registers.  By the ABI, which code with CFI is taken to follow, rax and
 * rdx carry values back and the other scratch registers nothing: returned
 * unchanged, the address escapes to the caller as a stored pointer does (a
 * function returning a code pointer is common: a dispatcher's choice).
 * Code without CFI has no known convention: an address left there in a
 * scratch register escapes, and judge() accepts that only when another
 * use showed what the address is (jumped through: a continuation label
 * that outlives its function; the base of reads outside the code: a PIC
 * base).  Callee-saved registers still holding it break the ABI, and an
 * offset that is not known says nothing: both are unknown.
 */
static void returned(struct flow *f, const struct st *st, bool jump)
{
	uint16_t vals = f->abi && !jump ? bit(0) | bit(2) : 0;
	uint16_t left = st->live & (uint16_t)~ABI_SCRATCH;

	if ((left & (uint16_t)~vals) || (left & st->any))
		unknown(f);
	else if (left)
		f->out |= OUT_STORED;
	else if (!f->abi || jump)
		f->out |= OUT_ESCAPED;
}

/* Whether a call goes through the PLT, to a function of another object. */
static bool in_plt(const struct flow *f, uint64_t a)
{
	const struct section *sec = f->s->secs.p;

	for (size_t i = 0; i < f->s->secs.n; i++)
		if (!strncmp(sec[i].name, ".plt", 4) && a >= sec[i].addr &&
		    a - sec[i].addr < sec[i].size)
			return true;
	return false;
}

/* Whether the PLT entry at a jumps through the GOT slot of a function that
 * does not return (elf.c lists those): then nothing follows the call. */
static bool plt_noreturn(struct flow *f, uint64_t a)
{
	const struct xom_segment *g = exec_seg_at(f->s, a);
	const uint8_t *code;
	size_t left;
	uint64_t pc = a;

	if (!f->s->noreturn_got.n || !g || a - g->vaddr >= g->filesz)
		return false;
	code = f->s->img + g->offset + (a - g->vaddr);
	left = g->filesz - (a - g->vaddr) < 16 ? (size_t)(g->filesz - (a - g->vaddr)) : 16;
	/* endbr64 and bnd prefixes may come first; the jump is in the slot. */
	while (left && cs_disasm_iter(f->h, &code, &left, &pc, f->in)) {
		const cs_x86 *x = &f->in->detail->x86;
		if (f->in->id != X86_INS_JMP)
			continue;
		return x->op_count == 1 && x->operands[0].type == X86_OP_MEM &&
		       x->operands[0].mem.base == X86_REG_RIP &&
		       sorted_has_u64(f->s->noreturn_got.p, f->s->noreturn_got.n,
		                      pc + (uint64_t)x->operands[0].mem.disp);
	}
	return false;
}

/*
 * A call to another object's function, which keeps to the ABI: it reads
 * its arguments (and al, and r10 for nested functions), preserves rbx,
 * rbp and r12-r15 without reading them, and clobbers the rest.  Only a
 * call through the PLT is known to be one: a function of this file may be
 * hand-written with a convention of its own (OpenSSL's AES core takes its
 * table in r14).
 */
static void abi_call(struct flow *f, struct path *p, uint64_t next)
{
	if (p->st.live & (uint16_t)~CALLEE_SAVED) {
		unknown(f);
		return;
	}
	for (unsigned r = 0; r < 16; r++)
		if (!(CALLEE_SAVED & bit(r)))
			p->st.cst &= (uint16_t)~bit(r), p->st.cval[r] = 0;
	go(f, p, next);
}

/* Where control goes, with the state after the instruction. */
static void control(struct flow *f, const struct fin *x, struct path *p)
{
	uint64_t next = x->addr + x->size;
	uint16_t others = p->st.live & (uint16_t)~bit(x->src);

	switch (x->kind) {
	case FK_SEQ:
		go(f, p, next);
		return;
	case FK_JCC:
		go(f, p, next);
		/* fall through */
	case FK_JMP:
		if (in_region(f, x->target))
			go(f, p, x->target);
		else
			unknown(f);
		return;
	case FK_CALL:
		if (in_plt(f, x->target)) {
			if (!plt_noreturn(f, x->target))
				abi_call(f, p, next);
			return;
		}
		if (!in_region(f, x->target) || p->depth == MAX_DEPTH) {
			unknown(f);
			return;
		}
		p->ret[p->depth++] = next;
		go(f, p, x->target);
		return;
	case FK_RET:
		if (p->depth) {
			uint64_t to = p->ret[--p->depth];
			p->ret[p->depth] = 0;
			go(f, p, to);
		} else {
			returned(f, &p->st, false);
		}
		return;
	case FK_JMP_IND:
		if (!x->mem && !tracked(&p->st, x->src)) {
			uint64_t to;
			if (known_target(f, x, &p->st, &to))
				go(f, p, to);
			else
				returned(f, &p->st, true);
		} else if (x->mem) {
			unknown(f);
		} else if (exact(&p->st, x->src)) {
			uint64_t to = f->t0 + (uint64_t)p->st.off[x->src];
			if (to == f->t0)
				f->out |= OUT_JUMPED;
			if (in_region(f, to))
				go(f, p, to);
		}
		/* A jump to the address plus an offset: a computed jump into
		 * code, as in a switch.  The other registers that still hold
		 * the address are taken as dead at its targets, as the
		 * scanner has always taken them. */
		return;
	case FK_CALL_IND: {
		uint64_t to;
		if (!tracked(&p->st, x->src) && known_target(f, x, &p->st, &to) &&
		    p->depth < MAX_DEPTH) {
			p->ret[p->depth++] = next;
			go(f, p, to);
			return;
		}
	}
		if (x->mem || !exact(&p->st, x->src) || p->st.off[x->src] || others) {
			unknown(f);
			return;
		}
		f->out |= OUT_JUMPED;
		go(f, p, next);
		return;
	case FK_BAD:
		unknown(f);
		return;
	default:                /* FK_STOP */
		return;
	}
}

static void explore(struct flow *f, uint64_t pc, unsigned reg)
{
	struct path start = { .pc = pc };

	f->out = 0;
	f->steps = 0;
	f->work.n = 0;
	if (++f->curgen == 0) {
		memset(f->gen, 0, 2 * SEEN_SLOTS * sizeof *f->gen);
		f->curgen = 1;
	}
	set_exact(&start.st, reg, 0);
	go(f, &start, pc);
	while (f->work.n && !(f->out & OUT_UNKNOWN) && !f->rc) {
		struct path p = ((struct path *)f->work.p)[--f->work.n];
		const struct fin *x;

		if (++f->steps > STEP_BUDGET) {
			unknown(f);
			break;
		}
		widen(f, &p);
		if (seen_before(f, &p))
			continue;
		if (!(x = fin_at(f, p.pc))) {
			unknown(f);
			break;
		}
		if (x->mem == FM_ACCESS)
			check_access(f, x, &p.st);
		apply_op(f, x, &p.st);
		track_consts(x, &p.st);
		if (!(f->out & OUT_UNKNOWN) && p.st.live)
			control(f, x, &p);
	}
}

/* ---- verdicts ------------------------------------------------------------ */

/* Whether an instruction of the sweep that ends at t is one after which a
 * new function may begin: a return, a jump, a nop or int3 of padding. */
static bool after_boundary(struct flow *f, uint64_t t, const struct xom_segment *g)
{
	for (uint64_t a = t - 1; a + 15 >= t && a >= g->vaddr; a--) {
		const uint8_t *code = f->s->img + g->offset + (a - g->vaddr);
		size_t left = (size_t)(t - a);
		uint64_t pc = a;

		if (!scan_is_start(f->s, a) ||
		    !cs_disasm_iter(f->h, &code, &left, &pc, f->in) || left)
			continue;
		return x86_in_group(f->in->detail, CS_GRP_RET) ||
		       f->in->id == X86_INS_JMP || f->in->id == X86_INS_NOP ||
		       f->in->id == X86_INS_INT3;
	}
	return false;
}

/*
 * Whether the bytes at t read as a function: where a function may begin
 * (16-byte aligned, as compilers and x86inc align them, or right after a
 * return, jump or padding), in step with the sweep at every instruction,
 * nothing undecodable or implausible, and a return or an unconditional
 * jump before the next entry, within 8 KiB.  Only stored pointers need
 * this: a table whose address is stored could be read by whoever loads the
 * pointer, so the bytes themselves must speak for code.  Data rarely gets
 * far: zeros, and about one opcode in twenty of random bytes, are
 * implausible or undecodable in 64-bit mode.
 */
static bool plausible_function(struct flow *f, uint64_t t)
{
	const struct xom_segment *g = exec_seg_at(f->s, t);
	const uint64_t *e = f->s->entries.p;
	size_t k = count_le(e, f->s->entries.n, sizeof *e, t);
	uint64_t end = k < f->s->entries.n ? e[k] : UINT64_MAX, pc = t;
	const uint8_t *code;
	size_t left;

	if (!g || t - g->vaddr >= g->filesz ||
	    ((t & 15) && !after_boundary(f, t, g)))
		return false;
	left = g->filesz - (t - g->vaddr) < PLAUSIBLE_BYTES
	               ? (size_t)(g->filesz - (t - g->vaddr)) : PLAUSIBLE_BYTES;
	if (end - t < left)
		left = (size_t)(end - t);
	code = f->s->img + g->offset + (t - g->vaddr);
	for (unsigned n = 0; left && n < PLAUSIBLE_INSNS; n++) {
		uint64_t rip;
		size_t len;

		if (!scan_is_start(f->s, pc))
			return false;
		if (cs_disasm_iter(f->h, &code, &left, &pc, f->in)) {
			const cs_detail *d = f->in->detail;
			if (x86_implausible(f->in))
				return false;
			if (x86_in_group(d, CS_GRP_RET) || f->in->id == X86_INS_JMP)
				return n >= 1;
			continue;
		}
		if (!(len = x86_raw_length(code, left, pc, &rip, NULL)))
			return false;
		code += len, left -= len, pc += len;
	}
	return false;
}

static int push_u64(struct flow *f, struct vec *v, uint64_t x)
{
	uint64_t *p = vec_push(v);

	if (!p)
		return f->rc = scan_fail(f->s, XOM_SCAN_ENOMEM, "out of memory");
	*p = x;
	return 0;
}

static int judge(struct flow *f, const struct cand *c)
{
	const struct fin *x;

	f->t0 = c->target, f->at = c->at, f->reason = c->reason;
	f->abi = scan_inside_function(f->s, c->at);
	enter_region(f, c);
	/* A few instructions before the load, for lea_before(). */
	for (uint64_t a = c->at - (c->at - f->plo < 64 ? c->at - f->plo : 64);
	     a < c->at; a++)
		if (scan_is_start(f->s, a)) {
			fin_at(f, a);
			break;
		}
	x = fin_at(f, c->at);
	if (x && x->dst < 16)
		explore(f, c->at + x->size, x->dst);
	else
		f->out = OUT_UNKNOWN;
	if (f->rc)
		return f->rc;
	if ((f->out & OUT_ESCAPED) && !(f->out & (OUT_JUMPED | OUT_ELSEWHERE)))
		f->out |= OUT_UNKNOWN;
	if (f->out & (OUT_UNKNOWN | OUT_DATA) ||
	    ((f->out & (OUT_STORED | OUT_JUMPED)) == OUT_STORED &&
	     !plausible_function(f, c->target))) {
		if ((f->rc = scan_push_ref(f->s, c->target, 0, c->reason, true, c->at)))
			return f->rc;
		return push_u64(f, &f->data, c->target);
	}
	if (f->out & (OUT_STORED | OUT_JUMPED))
		return push_u64(f, &f->code, c->target);
	return 0;       /* dead, compared, or the base of a read elsewhere */
}

/* Code, unless another load of the same address kept it a table. */
static int add_code(struct flow *f)
{
	const uint64_t *c = f->code.p;

	vec_sort_u64(&f->data);
	vec_sort_u64(&f->code);
	for (size_t i = 0; i < f->code.n; i++) {
		if (sorted_has_u64(f->data.p, f->data.n, c[i]))
			continue;
		if (scan_push_addr(f->s, &f->s->entries, c[i]) ||
		    scan_push_addr(f->s, &f->s->calls, c[i]))
			return scan_fail(f->s, XOM_SCAN_ENOMEM, "out of memory");
	}
	vec_sort_u64(&f->s->entries);
	return 0;
}

int flow_resolve(struct scan *s)
{
	struct flow f = {
		.s = s,
		.win = { .size = sizeof(struct fin) },
		.tmp = { .size = sizeof(struct fin) },
		.spans = { .size = sizeof(struct xom_range) },
		.work = { .size = sizeof(struct path) },
		.code = { .size = sizeof(uint64_t) },
		.data = { .size = sizeof(uint64_t) },
	};
	const struct cand *c = s->cands.p;
	cs_err ce;
	int rc = 0;

	if (!s->cands.n)
		return 0;
	vec_sort_u64(&s->noreturn_got);
	if ((ce = cs_open(CS_ARCH_X86, CS_MODE_64, &f.h)) != CS_ERR_OK)
		return scan_fail(s, XOM_SCAN_EDISASM, "cannot start the disassembler: %s",
		                 cs_strerror(ce));
	cs_option(f.h, CS_OPT_DETAIL, CS_OPT_ON);
	f.in = cs_malloc(f.h);
	f.seen = malloc(SEEN_SLOTS * sizeof *f.seen);
	f.gen = calloc(2 * SEEN_SLOTS, sizeof *f.gen);
	f.visit_pc = malloc(SEEN_SLOTS * sizeof *f.visit_pc);
	f.visit_n = malloc(SEEN_SLOTS * sizeof *f.visit_n);
	if (!f.in || !f.seen || !f.gen || !f.visit_pc || !f.visit_n)
		rc = scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
	for (size_t i = 0; i < s->cands.n && !rc; i++)
		rc = judge(&f, &c[i]);
	if (!rc)
		rc = add_code(&f);
	vec_free(&f.win);
	vec_free(&f.tmp);
	vec_free(&f.spans);
	vec_free(&f.work);
	vec_free(&f.code);
	vec_free(&f.data);
	free(f.seen);
	free(f.gen);
	free(f.visit_pc);
	free(f.visit_n);
	if (f.in)
		cs_free(f.in, 1);
	cs_close(&f.h);
	return rc;
}
