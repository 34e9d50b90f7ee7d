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
 *     segment: a read of .rodata or .data, nothing in the code is read
 *     (the address may be the base or an unscaled index);
 *   - a jump or call through it: code;
 *   - a jump through it plus an offset not known, in code with CFI: a
 *     computed goto's base, whose other loads lose the register at the
 *     jump (follow_bases());
 *   - a store of it into memory that is not the stack (through rbp only
 *     where flowstack.c shows rbp to be no frame pointer), a return of it
 *     by the ABI, or its hand-over as the return address of an indirect
 *     jump: a pointer, code only if the bytes there read as a function
 *     (flow_plausible());
 *   - pushed or spilled to the stack: followed in the slot while
 *     flowstack.c can prove that nothing else reaches it, and then only a
 *     use that shows code (stored, jumped through) makes it code;
 *   - anything else (returned, passed to a call, read by an instruction
 *     the model does not cover, a path too long, code that cannot be
 *     decoded): unknown, and unknown keeps the address a table that runs
 *     to the next entry, exactly as the scanner did before this stage
 *     existed.
 * A call with the register live is unknown even when the callee looks
 * harmless: memcpy(dst, table, n) is the case that must stay readable.
 * Only rax, r11 and the argument registers past those of a known
 * allocator may be live at a call to another object's function
 * (abi_call()), which reads none of them.
 *
 * Reads: the image, segs, entries, funcs, regions, cands, the
 * instruction-start bitmap.
 * Adds: refs for what is data; code entries and call targets for what is
 * code (entries re-sorted).
 * Calls: util.c, x86.c, flowinsn.c, flowop.c, flowstack.c, flowwin.c and
 * Capstone.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "flow.h"


/* ---- following one address -------------------------------------------- */

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

/* Where an indirect branch through an untracked register goes, if known. */
static bool known_target(struct flow *f, const struct fin *x, const struct st *st,
                         uint64_t *to)
{
	if (x->mem || x->src >= 16)
		return false;
	if (st->cst & bit(x->src)) {
		*to = st->cval[x->src];
		return flow_in_region(f, *to);
	}
	return lea_before(f, x, to) && flow_in_region(f, *to);
}

/* Whether a path state was seen before; records it if not.  Full states
 * are compared, so a hash collision cannot skip a path. */
static bool seen_before(struct flow *f, const struct path *p)
{
	const unsigned char *b = (const unsigned char *)p;
	uint64_t h = 1469598103934665603ull, w;
	/* The slots come last and are all zero while none is live: most
	 * states hash without them. */
	size_t n = p->st.slive ? sizeof *p : offsetof(struct path, st.spos);

	_Static_assert(sizeof *p % 8 == 0, "paths hash by words");
	_Static_assert(offsetof(struct path, st.spos) % 8 == 0 &&
	               offsetof(struct path, st.soff) + sizeof p->st.soff == sizeof *p,
	               "the slots end the path");
	for (size_t i = 0; i < n; i += 8) {
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

/* A digest of what a state says about the address: where it is and at
 * which offsets, in registers and in stack slots.  The other code
 * addresses (cst) are left out. */
static uint64_t where_digest(const struct st *st)
{
	uint64_t h = (1469598103934665603ull ^
	              ((uint64_t)st->live | (uint64_t)st->any << 16 |
	               (uint64_t)st->fwd << 32 | (uint64_t)st->slive << 48 |
	               (uint64_t)st->sany << 56)) * 1099511628211ull;

	for (unsigned m = st->live; m; m &= m - 1)
		h = (h ^ (uint64_t)st->off[__builtin_ctz(m)]) * 1099511628211ull;
	for (unsigned m = st->slive, i; m; m &= m - 1) {
		i = (unsigned)__builtin_ctz(m);
		h = (h ^ ((uint64_t)(uint32_t)st->spos[i] << 32 |
		          (uint32_t)st->soff[i])) * 1099511628211ull;
	}
	return h;
}

/*
 * A loop that steps the address (add $16, %rax) reaches its head with a
 * new offset each time and would run to the budget.  After WIDEN_AFTER
 * visits of one instruction the other code addresses are forgotten, and
 * so are the offsets if they are not those of the first visit there
 * (known becomes unknown, which can only turn reads into data); then the
 * states converge.  A place that many paths join with the address where
 * it was (a function's epilogue, reached with different constants in
 * other registers) keeps its offsets: forgetting them there would make an
 * unchanged address returned in rdx look like an unknown pointer.  The
 * digest only decides what is kept exactly; the step budget still bounds
 * the walk.
 */
static void widen(struct flow *f, struct path *p)
{
	size_t k = (p->pc * 0x9e3779b97f4a7c15ull) >> (64 - SEEN_BITS);

	for (;; k = (k + 1) & (SEEN_SLOTS - 1)) {
		if (f->gen[k + SEEN_SLOTS] != f->curgen) {
			f->gen[k + SEEN_SLOTS] = f->curgen;
			f->visit_pc[k] = p->pc;
			f->visit_n[k] = 0;
			f->visit_where[k] = where_digest(&p->st);
		}
		if (f->visit_pc[k] == p->pc)
			break;
	}
	if (++f->visit_n[k] <= WIDEN_AFTER)
		return;
	for (unsigned r = 0; r < 16; r++)
		p->st.cval[r] = 0;
	p->st.cst = 0;
	if (where_digest(&p->st) == f->visit_where[k])
		return;
	for (unsigned r = 0; r < 16; r++)
		if (exact(&p->st, r))
			set_any(&p->st, r);
	flow_stack_widen(&p->st);
}

static void go(struct flow *f, const struct path *p, uint64_t pc)
{
	struct path *q;

	if (!holds(&p->st))
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
 * One escape shows what the address is: an indirect jump that hands over,
 * in scratch registers and unchanged, the address of the instruction
 * right after itself (lea 1f(%rip), %r8; jmp *%rcx; 1:), x86inc's way to
 * call a shared tail that returns through r8.  That is a return address,
 * and judge() takes it as it takes a stored pointer: code only if the
 * bytes there read as a function.
 */
static void returned(struct flow *f, const struct st *st, bool jump, uint64_t next)
{
	uint16_t vals = f->abi && !jump ? bit(0) | bit(2) : 0;
	uint16_t left = st->live & (uint16_t)~ABI_SCRATCH;
	bool back = jump && f->t0 == next && !st->any;

	for (unsigned m = st->live; back && m; m &= m - 1)
		back = st->off[__builtin_ctz(m)] == 0;
	flow_stack_left(f, st, jump);
	if (!st->live)
		return;
	if ((left & (uint16_t)~vals) || (left & st->any))
		unknown(f);
	else if (left || back)
		f->out |= OUT_STORED;
	else if (!f->abi || jump)
		f->out |= OUT_ESCAPED;
}

/*
 * A call to another object's function, which keeps to the ABI: it reads
 * its arguments (and al, and r10 for nested functions), preserves rbx,
 * rbp and r12-r15 without reading them, and clobbers the rest.  Only a
 * call through the PLT is known to be one: a function of this file may be
 * hand-written with a convention of its own (OpenSSL's AES core takes its
 * table in r14).  The address left in rax or r11 does not reach a
 * callee of another object (elf.c knows which slots those are; an exported
 * function of this file is reached through the PLT too): r11 is not read,
 * and of rax only al, the count of vector registers that a variadic callee
 * saves, which no address can be rebuilt from.  Both are clobbered, and so
 * are the argument registers past those of a callee whose arguments elf.c
 * knows (av_calloc(nmemb, size) does not read rdx).
 */
static void abi_call(struct flow *f, struct path *p, uint64_t to, uint64_t next)
{
	/* rdi, rsi, rdx, rcx, r8, r9 */
	static const uint8_t arg_reg[6] = { 7, 6, 2, 1, 8, 9 };
	uint16_t ok = CALLEE_SAVED;
	unsigned nargs;

	if ((p->st.live & (uint16_t)~CALLEE_SAVED) && flow_plt_extern(f, to, &nargs)) {
		ok |= NOT_ARGS;
		for (unsigned i = nargs; i < 6; i++)
			ok |= bit(arg_reg[i]);
	}
	if (p->st.live & (uint16_t)~ok) {
		unknown(f);
		return;
	}
	flow_stack_abi_call(f, &p->st);
	/* The callee clobbers the rest: what they held is gone. */
	for (unsigned r = 0; r < 16; r++)
		if (!(CALLEE_SAVED & bit(r))) {
			kill(&p->st, r);
			p->st.cst &= (uint16_t)~bit(r), p->st.cval[r] = 0;
		}
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
		if (flow_in_region(f, x->target))
			go(f, p, x->target);
		else
			unknown(f);
		return;
	case FK_CALL:
		if (flow_in_plt(f, x->target)) {
			if (!flow_plt_noreturn(f, x->target))
				abi_call(f, p, x->target, next);
			return;
		}
		if (!flow_in_region(f, x->target) || p->depth == MAX_DEPTH) {
			unknown(f);
			return;
		}
		p->ret[p->depth++] = next;
		flow_stack_call(f, &p->st);
		go(f, p, x->target);
		return;
	case FK_RET:
		if (p->depth) {
			uint64_t to = p->ret[--p->depth];
			p->ret[p->depth] = 0;
			flow_stack_ret(f, &p->st);
			go(f, p, to);
		} else {
			returned(f, &p->st, false, 0);
		}
		return;
	case FK_JMP_IND:
		if (!x->mem && !tracked(&p->st, x->src)) {
			uint64_t to;
			if (known_target(f, x, &p->st, &to))
				go(f, p, to);
			else
				returned(f, &p->st, true, next);
		} else if (x->mem) {
			unknown(f);
		} else if (exact(&p->st, x->src)) {
			uint64_t to = f->t0 + (uint64_t)p->st.off[x->src];
			if (to == f->t0)
				f->out |= OUT_JUMPED;
			/* The second look at a computed goto's base
			 * (follow_bases()): in compiled code the jump used
			 * the register up. */
			if (f->consume && f->abi)
				kill(&p->st, x->src);
			if (flow_in_region(f, to))
				go(f, p, to);
		} else if (f->abi) {
			f->out |= OUT_COMPUTED;
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
			flow_stack_call(f, &p->st);
			go(f, p, to);
			return;
		}
	}
		/* A callee may read what is on the stack. */
		if (x->mem || !exact(&p->st, x->src) || p->st.off[x->src] || others ||
		    p->st.slive) {
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

/*
 * How many instructions one address may be followed for; past it the
 * address is unknown.  A walk that has seen no read of the code yet may
 * run four times as long, to cross the long unrolled functions of
 * hand-written SIMD code before the address is jumped through or stored.
 * One that has seen a read keeps the short budget: running on would only
 * add reads at offsets that loops not yet widened make up (libgnutls's
 * SHA-512 code), and the verdict stays a table either way.
 */
static unsigned budget(const struct flow *f)
{
	return (f->out & OUT_DATA) || f->s->refs.n != f->refs0 ? STEP_BUDGET
	                                                       : STEP_BUDGET_CLEAN;
}

static void explore(struct flow *f, uint64_t pc, unsigned reg)
{
	struct path start = { .pc = pc };

	f->out = 0;
	f->steps = 0;
	f->refs0 = f->s->refs.n;
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

		if (++f->steps > budget(f)) {
			unknown(f);
			break;
		}
		widen(f, &p);
		if (seen_before(f, &p))
			continue;
		if (!(x = flow_fin_at(f, p.pc))) {
			unknown(f);
			break;
		}
		if (x->mem == FM_ACCESS)
			flow_check_access(f, x, &p.st);
		/* Only these can touch a slot or make one. */
		if (!((p.st.slive || x->op == FO_PUSH ||
		       (x->op == FO_STORE && x->base == X86_RSP)) &&
		      flow_stack_op(f, x, &p.st)))
			flow_apply_op(f, x, &p.st);
		flow_track_consts(x, &p.st);
		if (!(f->out & OUT_UNKNOWN) && holds(&p.st))
			control(f, x, &p);
	}
}

/* ---- verdicts ------------------------------------------------------------ */

static int push_u64(struct flow *f, struct vec *v, uint64_t x)
{
	uint64_t *p = vec_push(v);

	if (!p)
		return f->rc = scan_fail(f->s, XOM_SCAN_ENOMEM, "out of memory");
	*p = x;
	return 0;
}

/* What following one load found, kept until every load was followed. */
struct verdict {
	unsigned out;
	bool plausible;         /* the bytes there read as a function */
};

static int follow(struct flow *f, const struct cand *c, struct verdict *v)
{
	const struct fin *x;

	f->t0 = c->target, f->at = c->at, f->reason = c->reason;
	f->abi = scan_inside_function(f->s, c->at);
	flow_enter_region(f, c);
	/* A few instructions before the load, for lea_before(). */
	for (uint64_t a = c->at - (c->at - f->plo < 64 ? c->at - f->plo : 64);
	     a < c->at; a++)
		if (scan_is_start(f->s, a)) {
			flow_fin_at(f, a);
			break;
		}
	f->spilled = false;
	x = flow_fin_at(f, c->at);
	if (x && x->dst < 16)
		explore(f, c->at + x->size, x->dst);
	else
		f->out = OUT_UNKNOWN;
	if (f->rc)
		return f->rc;
	if ((f->out & OUT_ESCAPED) && !(f->out & (OUT_JUMPED | OUT_ELSEWHERE)))
		f->out |= OUT_UNKNOWN;
	/* Memory that another way into the stack could read is not always
	 * seen to be read: an address that was on the stack must show that
	 * it is code, and dying there proves nothing. */
	if (f->spilled && !(f->out & (OUT_STORED | OUT_JUMPED)))
		f->out |= OUT_UNKNOWN;
	v->out = f->out;
	v->plausible = (f->out & (OUT_STORED | OUT_JUMPED)) == OUT_STORED &&
	               flow_plausible(f, c->target);
	return 0;
}

static int judge(struct flow *f, const struct cand *c, const struct verdict *v)
{
	/* Bytes that are read where the address points are data, whatever
	 * else the address is used for: code there would be an entry that
	 * ends the table read from there. */
	if (v->out & (OUT_UNKNOWN | OUT_DATA) ||
	    ((v->out & OUT_SELF) && (v->out & (OUT_STORED | OUT_JUMPED))) ||
	    ((v->out & (OUT_STORED | OUT_JUMPED)) == OUT_STORED && !v->plausible)) {
		if ((f->rc = scan_push_ref(f->s, c->target, 0, c->reason, true, c->at)))
			return f->rc;
		return push_u64(f, &f->data, c->target);
	}
	if (v->out & (OUT_STORED | OUT_JUMPED))
		return push_u64(f, &f->code, c->target);
	return 0;       /* dead, compared, or the base of a read elsewhere */
}

/*
 * A computed goto, as GCC compiles glibc 2.41's printf: a code label is
 * loaded, an offset read from .rodata is added to it, and the sum is
 * jumped through (lea .Lbase(%rip), %rax; add %rax, %rdx; jmp *%rdx).
 * Where the offset folds to zero, another load of the same label is
 * jumped through unchanged, and the code there runs on with the register
 * still holding the label, dead to the compiler, until a call hands it to
 * a variadic function that spills it: unknown, and the label a table.
 * In compiled code the jump uses the register up: so a label that some
 * load in a function with CFI shows to be the base of a computed jump (an
 * offset not known added, then jumped through) has its other loads that
 * were jumped through, and seen to read nothing, followed again with the
 * register that a jump goes through taken as dead at its target.  Only
 * what happens after such a jump changes: a spill, a read or an unknown
 * use before it, or a copy of the address in another register, gives the
 * same verdict again; a load with any verdict of its own other than code
 * keeps the address a table (add_code()), and the refs of a first walk
 * stay.  Code without CFI keeps no convention that says a register is
 * dead, and is left as it was.
 */
static bool worth_again(const struct verdict *v)
{
	return (v->out & OUT_JUMPED) && (v->out & OUT_UNKNOWN) &&
	       !(v->out & (OUT_DATA | OUT_SELF));
}

static int follow_bases(struct flow *f, const struct cand *c, struct verdict *v,
                        size_t n)
{
	struct vec bases = { .size = sizeof(uint64_t) };
	int rc = 0;

	for (size_t i = 0; i < n && !rc; i++)
		if (v[i].out & OUT_COMPUTED)
			rc = push_u64(f, &bases, c[i].target);
	vec_sort_u64(&bases);
	f->consume = true;
	for (size_t i = 0; i < n && !rc && bases.n; i++)
		if (worth_again(&v[i]) &&
		    sorted_has_u64(bases.p, bases.n, c[i].target))
			rc = follow(f, &c[i], &v[i]);
	f->consume = false;
	vec_free(&bases);
	return rc;
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
		.frames = { .size = sizeof(struct frame) },
		.code = { .size = sizeof(uint64_t) },
		.data = { .size = sizeof(uint64_t) },
	};
	const struct cand *c = s->cands.p;
	struct verdict *v = NULL;
	cs_err ce;
	int rc = 0;

	if (!s->cands.n)
		return 0;
	vec_sort_u64(&s->noreturn_got);
	vec_sort_u64(&s->extern_got);
	if ((ce = cs_open(CS_ARCH_X86, CS_MODE_64, &f.h)) != CS_ERR_OK)
		return scan_fail(s, XOM_SCAN_EDISASM, "cannot start the disassembler: %s",
		                 cs_strerror(ce));
	cs_option(f.h, CS_OPT_DETAIL, CS_OPT_ON);
	f.in = cs_malloc(f.h);
	f.seen = malloc(SEEN_SLOTS * sizeof *f.seen);
	f.gen = calloc(2 * SEEN_SLOTS, sizeof *f.gen);
	f.visit_pc = malloc(SEEN_SLOTS * sizeof *f.visit_pc);
	f.visit_n = malloc(SEEN_SLOTS * sizeof *f.visit_n);
	f.visit_where = malloc(SEEN_SLOTS * sizeof *f.visit_where);
	if (!f.in || !f.seen || !f.gen || !f.visit_pc || !f.visit_n ||
	    !f.visit_where)
		rc = scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
	if (!rc && !(v = calloc(s->cands.n, sizeof *v)))
		rc = scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
	for (size_t i = 0; i < s->cands.n && !rc; i++)
		rc = follow(&f, &c[i], &v[i]);
	if (!rc)
		rc = follow_bases(&f, c, v, s->cands.n);
	/* The verdicts, once each load is followed for the last time.  A
	 * load followed again had added no refs the first time. */
	for (size_t i = 0; i < s->cands.n && !rc; i++)
		rc = judge(&f, &c[i], &v[i]);
	if (!rc)
		rc = add_code(&f);
	free(v);
	vec_free(&f.win);
	vec_free(&f.tmp);
	vec_free(&f.spans);
	vec_free(&f.work);
	vec_free(&f.frames);
	vec_free(&f.code);
	vec_free(&f.data);
	free(f.seen);
	free(f.gen);
	free(f.visit_pc);
	free(f.visit_n);
	free(f.visit_where);
	if (f.in)
		cs_free(f.in, 1);
	cs_close(&f.h);
	return rc;
}
