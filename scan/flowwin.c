/*
 * flowwin.c - what flow.c reads the code through: the window of decoded
 * instructions (decoded as the sweep decoded them, a chunk at a time, only
 * where paths go), whether a call goes through the PLT to a function that
 * does not return, and whether bytes read as a function.
 *
 * Calls: util.c, x86.c, flowinsn.c and Capstone, on flow.c's handle.
 */
#include <string.h>

#include "flow.h"

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
const struct fin *flow_fin_at(struct flow *f, uint64_t pc)
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
void flow_enter_region(struct flow *f, const struct cand *c)
{
	const struct region *r = (const struct region *)f->s->regions.p + c->region;

	if (r == f->reg && f->win.n < WINDOW_MAX)
		return;
	f->reg = r, f->plo = r->addr, f->phi = r->addr + r->size;
	f->win.n = f->spans.n = 0;
}

/* Whether a call goes through the PLT, to a function of another object. */
bool flow_in_plt(const struct flow *f, uint64_t a)
{
	const struct section *sec = f->s->secs.p;

	for (size_t i = 0; i < f->s->secs.n; i++)
		if (!strncmp(sec[i].name, ".plt", 4) && a >= sec[i].addr &&
		    a - sec[i].addr < sec[i].size)
			return true;
	return false;
}

/* The GOT slot that the PLT entry at a jumps through. */
static bool plt_slot(struct flow *f, uint64_t a, uint64_t *slot)
{
	const struct xom_segment *g = exec_seg_at(f->s, a);
	const uint8_t *code;
	size_t left;
	uint64_t pc = a;

	if (!g || a - g->vaddr >= g->filesz)
		return false;
	code = f->s->img + g->offset + (a - g->vaddr);
	left = g->filesz - (a - g->vaddr) < 16 ? (size_t)(g->filesz - (a - g->vaddr)) : 16;
	/* endbr64 and bnd prefixes may come first; the jump is in the slot. */
	while (left && cs_disasm_iter(f->h, &code, &left, &pc, f->in)) {
		const cs_x86 *x = &f->in->detail->x86;
		if (f->in->id != X86_INS_JMP)
			continue;
		if (x->op_count != 1 || x->operands[0].type != X86_OP_MEM ||
		    x->operands[0].mem.base != X86_REG_RIP)
			return false;
		*slot = pc + (uint64_t)x->operands[0].mem.disp;
		return true;
	}
	return false;
}

/* Whether the PLT entry at a jumps through the GOT slot of a function that
 * does not return (elf.c lists those): then nothing follows the call. */
bool flow_plt_noreturn(struct flow *f, uint64_t a)
{
	uint64_t slot;

	return f->s->noreturn_got.n && plt_slot(f, a, &slot) &&
	       sorted_has_u64(f->s->noreturn_got.p, f->s->noreturn_got.n, slot);
}

/* Whether the PLT entry at a reaches a function that this file does not
 * define (elf.c lists those slots): another object's, which keeps to the
 * ABI.  *nargs: how many integer arguments it is known to take (elf.c
 * knows a few allocators by name), 6 when that is not known. */
bool flow_plt_extern(struct flow *f, uint64_t a, unsigned *nargs)
{
	const uint64_t *g = f->s->extern_got.p;
	size_t n = f->s->extern_got.n, k;
	uint64_t slot;

	if (!n || !plt_slot(f, a, &slot) || (slot & 7))
		return false;
	/* Sorted by slot: the argument count is in the low 3 bits. */
	k = count_le(g, n, sizeof *g, slot | 7);
	if (!k || (g[k - 1] & ~7ull) != slot)
		return false;
	*nargs = (g[k - 1] & 7) ? (unsigned)(g[k - 1] & 7) : 6;
	return true;
}

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
 * jump before the next entry, within 64 KiB.  Only stored pointers need
 * this: a table whose address is stored could be read by whoever loads the
 * pointer, so the bytes themselves must speak for code.  Data rarely gets
 * far: zeros, and about one opcode in twenty of random bytes, are
 * implausible or undecodable in 64-bit mode.  3DNow! passes here (a
 * stored pointer to a K6 routine is a dispatch table's entry): decoded at
 * every byte of .rodata of eight codec and crypto libraries, it is 1 in
 * 1,300 of what data decodes as, a small part of what stops data.  The limit is that large
 * because hand-written SIMD functions run unrolled for tens of KiB before
 * their first return (aom's SSE transforms), and every instruction of the
 * way must pass: a longer way is harder for data, not easier.
 */
bool flow_plausible(struct flow *f, uint64_t t)
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
			if (x86_implausible(f->in, true))
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

