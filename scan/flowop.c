/*
 * flowop.c - what one instruction does to the registers that flow.c
 * follows: the uses that decide a verdict (a memory access through the
 * address, a store of it, a read the model does not cover) and how the
 * address and the other loaded code addresses move between registers.
 *
 * Calls: util.c only; no state beyond the path's.
 */
#include "flow.h"

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

/* A read at ea plus an index that is not known: from ea on to the next
 * entry in an exec segment, elsewhere outside every one. */
static void indexed_read(struct flow *f, uint64_t ea)
{
	if (exec_seg_at(f->s, ea)) {
		if (ea <= f->t0)
			f->out |= OUT_SELF;
		push_data_ref(f, ea, 0);
	} else {
		f->out |= OUT_ELSEWHERE;
	}
}

/* Whether an exec segment holds any byte that an EVEX access with a
 * scaled 8-bit displacement (disp8*N, N from 1 to 64) from base may read. */
static bool exec_between(const struct flow *f, uint64_t base, const struct fin *x)
{
	const struct xom_segment *g = f->s->segs.p;
	int64_t a = x->disp, b = x->disp * 64;
	uint64_t lo = base + (uint64_t)(a < b ? a : b);
	uint64_t hi = base + (uint64_t)(a < b ? b : a) + x->msize;

	for (size_t i = 0; i < f->s->segs.n; i++)
		if (lo < g[i].vaddr + g[i].memsz && g[i].vaddr < hi)
			return true;
	return false;
}

/*
 * A memory operand built from the address.  With a known offset and no
 * tracked index the effective address is known, less the index: in an
 * exec segment it is data, outside every one it is a read elsewhere.  An
 * untracked index is assumed not to carry a read from .rodata back into
 * the code (tables are indexed forward from their base); a tracked one, or
 * an unknown offset, leaves the address unknown, and the read is data.
 * A base that a lea built with such an index (st->fwd) is read as that
 * index would have been.
 */
void flow_check_access(struct flow *f, const struct fin *x, const struct st *st)
{
	bool bt = tracked(st, x->base), it = tracked(st, x->index);
	bool fwd = bt && (st->fwd & bit(x->base));
	uint64_t ea;

	if (!bt && !it)
		return;
	/* disp(%rdx,%rsi,1) with the address in rsi: an unscaled index is a
	 * base like the other, and is judged as one. */
	if (it && !bt && x->scale1 && x->base < 16) {
		struct fin y = *x;
		y.base = x->index, y.index = x->base;
		flow_check_access(f, &y, st);
		return;
	}
	if (x->seg) {
		unknown(f);
		return;
	}
	if (bt && !it && (fwd || exact(st, x->base)) && x->disp8n &&
	    !exec_between(f, f->t0 + (uint64_t)st->off[x->base], x)) {
		f->out |= OUT_ELSEWHERE;
		return;
	}
	if (fwd && !it && !x->nodisp) {
		indexed_read(f, f->t0 + (uint64_t)st->off[x->base] + (uint64_t)x->disp);
		return;
	}
	if (!bt || it || !exact(st, x->base) || x->nodisp) {
		f->out |= OUT_DATA;
		return;
	}
	ea = f->t0 + (uint64_t)st->off[x->base] + (uint64_t)x->disp;
	if (x->index != X86_FAM_NONE) {
		indexed_read(f, ea);
		return;
	}
	if (exec_seg_at(f->s, ea) && ea <= f->t0 && f->t0 - ea < x->msize)
		f->out |= OUT_SELF;
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
	} else if (bt && !it && exact(st, x->base) && x->dwide) {
		/* lea disp(%base,%index,s): a read through the result is
		 * judged as the read with that index would have been. */
		set_fwd(st, x->dst, st->off[x->base] + x->disp);
	} else if (bt || it) {
		set_any(st, x->dst);
	} else {
		overwrite(f, st, x);
	}
}

void flow_apply_op(struct flow *f, const struct fin *x, struct st *st)
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
	case FO_POP:
		/* What flowstack.c does not know came off the stack is
		 * unrelated to the address. */
		overwrite(f, st, x);
		return;
	case FO_STORE:
		/* Spilled where flowstack.c cannot follow it, it may come
		 * back in any register.  rbp is taken for a frame pointer
		 * unless nothing in the function copies rsp. */
		if (!tracked(st, x->src))
			return;
		if (!x->swide || x->base == X86_RSP ||
		    (x->base == X86_RBP && !flow_stack_closed(f, x->addr)))
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
		/* flowstack.c follows the pushes it can. */
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
 * The other code addresses that RIP-relative leas load on the path: an
 * indirect jump or call through one of them goes to a known place, and the
 * path follows it (x86inc's lea .Lcont(%rip), %r8; jmp .Ltail, where the
 * shared tail ends in jmp *%r8).  Any write to a register forgets its
 * address; an instruction whose writes are unknown forgets them all.
 */
void flow_track_consts(const struct fin *x, struct st *st)
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

