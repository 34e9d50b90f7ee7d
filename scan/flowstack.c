/*
 * flowstack.c - the stack slots that hold the address flow.c follows:
 * pushed and popped, or spilled to an rsp-relative place and reloaded.
 *
 * Compiled code that loads many function pointers keeps some of them on
 * the stack until it stores them (a CPU-dispatch setup function), and
 * x86inc pushes a continuation label and pops it later to jump through it.
 * A slot is known by its place relative to rsp, which the model moves with
 * every push, pop, add or sub of an immediate to rsp, call and return; a
 * load of exactly that place gives the address back to a register, whose
 * uses then decide as anywhere else.
 *
 * A slot is followed only where nothing else can reach it:
 *   - the code around every instruction a path runs through while a slot
 *     is live (the function's extent from CFI, or else the code between
 *     two entries) never copies rsp, or an address made from it, anywhere:
 *     no other register and no memory can then point into the stack;
 *   - rsp moves only in the known ways above: any other write to rsp, an
 *     rsp-relative access whose place is not known, and one that touches a
 *     slot in part or as anything but an 8-byte load or store, is unknown;
 *   - a function of another object may read stack arguments, so a slot at
 *     or above rsp at a call through the PLT is unknown, and the slots
 *     below rsp are gone after it;
 *   - at a return, a slot at or above rsp is unknown (the caller's frame,
 *     or the return address itself: push, then ret), and at a jump to code
 *     that is not known every slot is; slots below rsp die with the frame.
 * flow.c asks more of an address that was ever on the stack: only a use
 * that shows it to be code (stored, jumped or called through) makes it
 * code, and a slot that merely dies proves nothing.
 *
 * Calls: util.c, x86.c, flowinsn.c and Capstone, on flow.c's handle.
 * Reads the instructions on its own, not through the window, so that the
 * window's instructions stay where flow.c holds them.
 */
#include "flow.h"

/* Code between two entries, or a function, longer than this is not
 * checked: its slots are unknown. */
#define FRAME_MAX (64u * 1024)

/* ---- whether anything but rsp can point into the stack ------------------ */

/* Whether an instruction copies rsp, or an address made from it, into
 * another register or into memory.  Pushes, pops, calls and returns use
 * rsp without letting it out; anything this cannot tell counts as out. */
static bool lets_rsp_out(const struct fin *x)
{
	if (x->kind == FK_BAD)
		return false;
	if (x->src == X86_RSP)
		return true;
	if (x->op == FO_XCHG && x->dst == X86_RSP)
		return true;
	if (x->op == FO_LEA && (x->base == X86_RSP || x->index == X86_RSP))
		return x->dst != X86_RSP;
	if (x->raw && (x->rd & bit(X86_RSP)))
		return true;
	return x->op == FO_OTHER && x->kind == FK_SEQ && (x->rd & bit(X86_RSP)) &&
	       x->dst != X86_RSP;
}

/* The stretch of code that holds pc: the function's extent where CFI
 * gives one, else from the entry at or before pc to the next one, within
 * the region.  Of nested extents (a sized local symbol inside a function)
 * the outermost: its ends are running maxima (scan_prepare_funcs()), so it
 * starts with the first extent that reaches past pc. */
static void frame_bounds(const struct flow *f, uint64_t pc, uint64_t *lo, uint64_t *hi)
{
	const struct scan *s = f->s;

	if (scan_inside_function(s, pc)) {
		const struct xom_range *fn = s->funcs.p;
		size_t k = count_le(fn, s->funcs.n, sizeof *fn, pc), a = 0, b = k - 1;

		while (a < b) {
			size_t m = a + (b - a) / 2;
			if (fn[m].end > pc)
				b = m;
			else
				a = m + 1;
		}
		*lo = fn[a].start, *hi = fn[k - 1].end;
	} else {
		const uint64_t *e = s->entries.p;
		size_t k = count_le(e, s->entries.n, sizeof *e, pc);
		*lo = k ? e[k - 1] : f->plo;
		*hi = k < s->entries.n ? e[k] : f->phi;
	}
	if (*lo < f->plo)
		*lo = f->plo;
	if (*hi > f->phi)
		*hi = f->phi;
}

/* Whether an instruction may leave in rbp anything but a global's address
 * or the caller's value: only a RIP-relative lea and a pop may write it. */
static bool rbp_set_otherwise(const struct fin *x)
{
	if (x->kind == FK_BAD)
		return false;
	if (!x->raw && x->dst != X86_RBP && !(x->wr & bit(X86_RBP)) &&
	    !(x->op == FO_XCHG && x->src == X86_RBP))
		return false;
	if (x->raw)
		return true;
	if (x->op == FO_LEA && x->base == X86_FAM_RIP && x->index == X86_FAM_NONE)
		return false;
	return x->op != FO_POP;
}

/* Whether an instruction gives rbp a value of this function's choosing
 * (mov %rdi, %rbp; lea x(%rip), %rbp): not a pop, not leave. */
static bool rbp_assigned(const struct fin *x)
{
	return !x->raw && x->dst == X86_RBP && x->dwide &&
	       (x->op == FO_LEA || x->op == FO_MOV_RR || x->op == FO_SET);
}

/*
 * Decodes [lo, hi) as the sweep did (restarting at every entry) and says
 * of the stretch:
 *   closed: no instruction lets rsp out;
 *   rbp_global: rbp is set only by RIP-relative lea, or by a pop in an
 *     epilogue (followed only by pops, then a return or a jump), so that it
 *     never holds a popped value that the function goes on to use;
 *   rbp_set: some instruction assigns rbp (not a pop): a stretch that never
 *     does may be using its caller's rbp, its caller's frame pointer.
 * Where the decode and the sweep's instruction starts part, all are no.
 */
static void frame_check(struct flow *f, uint64_t lo, uint64_t hi, struct frame *fr)
{
	const struct region *r = f->reg;
	const uint64_t *e = f->s->entries.p;
	size_t ne = f->s->entries.n, k = count_le(e, ne, sizeof *e, lo);
	uint64_t pc = lo;
	bool popped = false;

	fr->ok = fr->rbp_global = fr->rbp_set = false;
	if (hi - lo > FRAME_MAX)
		return;
	fr->ok = fr->rbp_global = true;
	while (pc < hi && !scan_is_start(f->s, pc))
		pc++;
	while (pc < hi && (fr->ok || fr->rbp_global)) {
		uint64_t stop = k < ne && e[k] < hi ? e[k] : hi;
		const uint8_t *code = f->s->img + r->offset + (pc - r->addr);
		size_t left = stop > pc ? (size_t)(stop - pc) : 0;

		while (left && (fr->ok || fr->rbp_global)) {
			struct fin x;
			uint64_t rip;
			size_t n, modrm;

			/* Out of step with the sweep, this decode could miss
			 * what the code really does. */
			if (!scan_is_start(f->s, pc)) {
				fr->ok = fr->rbp_global = fr->rbp_set = false;
				return;
			}
			if (cs_disasm_iter(f->h, &code, &left, &pc, f->in)) {
				fin_from_insn(&x, f->in);
			} else {
				n = x86_raw_length(code, left, pc, &rip, &modrm);
				if (n)
					fin_from_raw(&x, code, n, pc, rip, modrm);
				else
					fin_bad(&x, pc), n = 1;
				code += n, left -= n, pc += n;
			}
			if (lets_rsp_out(&x))
				fr->ok = false;
			if (rbp_assigned(&x))
				fr->rbp_set = true;
			if (rbp_set_otherwise(&x))
				fr->rbp_global = false;
			if (popped && x.op != FO_POP) {
				popped = false;
				if (x.kind != FK_RET && x.kind != FK_JMP &&
				    x.kind != FK_JMP_IND)
					fr->rbp_global = false;
			}
			if (x.op == FO_POP && x.dst == X86_RBP)
				popped = true;
		}
		while (k < ne && e[k] <= pc)
			k++;
		if (pc < stop)
			pc = stop;
	}
	if (popped)
		fr->rbp_global = false;
}

/* The stretch of code around pc, checked once per scan.  Stretches are
 * found by their bounds: a stretch decoded for another pc may hold this
 * one without being the one that frame_bounds() gives it. */
static const struct frame *frame_at(struct flow *f, uint64_t pc)
{
	const struct frame *fr = f->frames.p;
	struct frame *n;
	uint64_t lo, hi;

	frame_bounds(f, pc, &lo, &hi);
	for (size_t i = f->frames.n; i--;)
		if (fr[i].start == lo && fr[i].end == hi)
			return &fr[i];
	if (!(n = vec_push(&f->frames))) {
		f->rc = scan_fail(f->s, XOM_SCAN_ENOMEM, "out of memory");
		return NULL;
	}
	*n = (struct frame){ .start = lo, .end = hi };
	if (lo < hi)
		frame_check(f, lo, hi, n);
	return n;
}

/* Whether the code around pc keeps rsp to itself. */
static bool frame_ok(struct flow *f, uint64_t pc)
{
	const struct frame *n = frame_at(f, pc);

	return n && n->ok;
}

/* Whether a store through rbp at pc is a store into memory, as one through
 * rbx would be, and not a spill into a frame.  Only in a function whose
 * extent CFI or a symbol gives, which assigns rbp itself (a stretch that
 * never does may be storing through its caller's frame pointer), and in
 * which either nothing copies rsp, so that nothing it assigns can point
 * into its frame, or rbp is only ever a global's address (lea x(%rip),
 * %rbp), or the caller's value popped back in the epilogue: the CPU-
 * dispatch setup of FFmpeg and xvidcore, which fill tables through rbp. */
bool flow_stack_closed(struct flow *f, uint64_t pc)
{
	const struct frame *n;

	if (!scan_inside_function(f->s, pc))
		return false;
	n = frame_at(f, pc);
	return n && n->rbp_set && (n->ok || n->rbp_global);
}

/* ---- the slots ------------------------------------------------------------ */

static void drop(struct st *st, unsigned i)
{
	st->slive &= (uint8_t)~(1u << i), st->sany &= (uint8_t)~(1u << i);
	st->spos[i] = st->soff[i] = 0;
}

/* Whether a live slot overlaps [lo, lo + n). */
static bool overlaps(const struct st *st, int64_t lo, int64_t n)
{
	for (unsigned i = 0; i < NSLOTS; i++)
		if ((st->slive & (1u << i)) && st->spos[i] < lo + n && lo < (int64_t)st->spos[i] + 8)
			return true;
	return false;
}

static void drop_range(struct st *st, int64_t lo, int64_t n)
{
	for (unsigned i = 0; i < NSLOTS; i++)
		if ((st->slive & (1u << i)) && st->spos[i] < lo + n && lo < (int64_t)st->spos[i] + 8)
			drop(st, i);
}

/* The live slot at exactly pos, or -1. */
static int slot_at(const struct st *st, int64_t pos)
{
	for (unsigned i = 0; i < NSLOTS; i++)
		if ((st->slive & (1u << i)) && st->spos[i] == pos)
			return (int)i;
	return -1;
}

/* rsp moves by d bytes: every slot's place, taken from rsp, moves by -d.
 * A place that no longer fits is forgotten: unknown. */
static void shift(struct flow *f, struct st *st, int64_t d)
{
	for (unsigned i = 0; i < NSLOTS; i++) {
		int64_t to;
		if (!(st->slive & (1u << i)))
			continue;
		to = (int64_t)st->spos[i] - d;
		if (to != (int32_t)to)
			unknown(f);
		st->spos[i] = (int32_t)to;
	}
}

/* Register r is written, 8 bytes wide, to pos: the slot there holds the
 * address as r does.  Unknown when the code around is not closed or no
 * slot is free. */
static void put(struct flow *f, const struct fin *x, struct st *st, int64_t pos,
                unsigned r)
{
	drop_range(st, pos, 8);
	if (pos != (int32_t)pos || !frame_ok(f, x->addr)) {
		unknown(f);
		return;
	}
	for (unsigned i = 0; i < NSLOTS; i++) {
		if (st->slive & (1u << i))
			continue;
		st->slive |= (uint8_t)(1u << i);
		st->spos[i] = (int32_t)pos;
		if (exact(st, r) && st->off[r] == (int32_t)st->off[r])
			st->soff[i] = (int32_t)st->off[r];
		else
			st->sany |= (uint8_t)(1u << i);
		f->spilled = true;
		return;
	}
	unknown(f);
}

/* Slot i is loaded into register r. */
static void give(const struct fin *x, struct st *st, unsigned i, unsigned r)
{
	if ((st->sany & (1u << i)) || !x->dwide)
		set_any(st, r);
	else
		set_exact(st, r, st->soff[i]);
}

/* Whether an instruction writes rsp other than in the ways followed. */
static bool moves_rsp_unknown(const struct fin *x)
{
	if (x->kind != FK_SEQ)
		return false;           /* calls and returns: control() */
	if (x->op == FO_PUSH || (x->op == FO_POP && x->dst != X86_RSP))
		return false;
	if ((x->op == FO_ADDI && x->dst == X86_RSP && x->dwide) ||
	    (x->op == FO_LEA && x->dst == X86_RSP && x->base == X86_RSP &&
	     x->index == X86_FAM_NONE && x->dwide))
		return false;
	if (x->op == FO_CMP || x->op == FO_NOP)
		return false;
	return x->dst == X86_RSP || (x->wr & bit(X86_RSP)) ||
	       (x->raw && (x->rd & bit(X86_RSP)));
}

/* An rsp-relative access with slots live. */
static bool stack_access(struct flow *f, const struct fin *x, struct st *st)
{
	int64_t lo = x->disp;
	int i;

	if (x->index != X86_FAM_NONE || x->nodisp || x->seg) {
		unknown(f);
		return true;
	}
	if (x->op == FO_STORE) {
		drop_range(st, lo, x->msize);
		if (tracked(st, x->src)) {
			if (!x->swide || x->msize != 8)
				unknown(f);
			else
				put(f, x, st, lo, x->src);
		}
		return true;
	}
	if (x->op == FO_SET && x->msize == 8 && x->dst < 16 &&
	    (i = slot_at(st, lo)) >= 0) {
		give(x, st, (unsigned)i, x->dst);
		return true;
	}
	if (x->mwrite && !x->raw) {
		/* A vector register saved over a slot, say: the slot is
		 * gone, nothing was read. */
		drop_range(st, lo, x->msize);
		return false;
	}
	if (x->op != FO_NOP && overlaps(st, lo, x->msize)) {
		unknown(f);
		return true;
	}
	return false;
}

/*
 * What an instruction does to the slots, and to a register that a push
 * or a store puts on the stack or a pop or load takes off it.  True when
 * that is all the instruction does to the state; false when flow.c's
 * model of the registers must still apply it.
 */
bool flow_stack_op(struct flow *f, const struct fin *x, struct st *st)
{
	bool rspmem = x->mem == FM_ACCESS && x->base == X86_RSP;
	int i;

	if (!st->slive) {
		if (x->op == FO_PUSH && tracked(st, x->src)) {
			if (!x->swide)
				unknown(f);
			else
				put(f, x, st, 0, x->src);
			return true;
		}
		if (x->op == FO_STORE && rspmem && tracked(st, x->src)) {
			if (x->index != X86_FAM_NONE || x->nodisp || x->seg ||
			    !x->swide || x->msize != 8)
				unknown(f);
			else
				put(f, x, st, x->disp, x->src);
			return true;
		}
		return false;
	}
	if (!frame_ok(f, x->addr) || moves_rsp_unknown(x)) {
		unknown(f);
		return true;
	}
	switch (x->op) {
	case FO_PUSH:
		shift(f, st, -8);
		drop_range(st, 0, 8);
		if (tracked(st, x->src)) {
			if (!x->swide)
				unknown(f);
			else
				put(f, x, st, 0, x->src);
		}
		return true;
	case FO_POP:
		if ((i = slot_at(st, 0)) >= 0 && x->dst < 16) {
			give(x, st, (unsigned)i, x->dst);
			shift(f, st, 8);
			return true;
		}
		if (overlaps(st, 0, 8)) {
			unknown(f);
			return true;
		}
		shift(f, st, 8);
		return false;
	case FO_ADDI:
		if (x->dst == X86_RSP) {
			shift(f, st, x->disp);
			return true;
		}
		break;
	case FO_LEA:
		if (x->dst == X86_RSP) {
			shift(f, st, x->disp);
			return true;
		}
		break;
	default:
		break;
	}
	return rspmem && stack_access(f, x, st);
}

/* A call that is followed: the return address goes below rsp. */
void flow_stack_call(struct flow *f, struct st *st)
{
	if (!st->slive)
		return;
	shift(f, st, -8);
	drop_range(st, 0, 8);
}

/* A return that is followed: it pops the return address. */
void flow_stack_ret(struct flow *f, struct st *st)
{
	if (!st->slive)
		return;
	if (overlaps(st, 0, 8))
		unknown(f);
	shift(f, st, 8);
}

/* A call to another object's function, which may read stack arguments
 * and clobbers what lies below rsp. */
void flow_stack_abi_call(struct flow *f, struct st *st)
{
	for (unsigned i = 0; i < NSLOTS; i++) {
		if (!(st->slive & (1u << i)))
			continue;
		if ((int64_t)st->spos[i] + 8 > 0)
			unknown(f);
		else
			drop(st, i);
	}
}

/* A return to a caller not followed (jump false), or a jump to code that
 * is not known, with slots perhaps still live. */
void flow_stack_left(struct flow *f, const struct st *st, bool jump)
{
	for (unsigned i = 0; i < NSLOTS; i++)
		if ((st->slive & (1u << i)) && (jump || (int64_t)st->spos[i] + 8 > 0))
			unknown(f);
}

/* Forgets the offsets the slots hold, as widen() does for registers. */
void flow_stack_widen(struct st *st)
{
	st->sany |= st->slive;
	for (unsigned i = 0; i < NSLOTS; i++)
		st->soff[i] = 0;
}
