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
 * A code address that an instruction only loads into a register (lea of a
 * label, mov of an immediate in a non-PIE file) is not judged here: it goes
 * to the list of candidates that flow.c follows through the code.
 *
 * Reads: the image, segs, secs and e_type (elf.c); entries and funcs,
 * sorted; refs (elf.c), for relocated pointers.
 * Adds: the regions it decoded; refs from instructions; candidates; call
 * targets; the relocated pointers that decode as code, as entries (kept
 * sorted) and call targets; the instruction-start bitmap; code_bytes.
 * Calls: util.c, x86.c and Capstone; nothing that decides what is data.
 */
#include <capstone/capstone.h>
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "scan.h"
#include "x86.h"

static int push_ref(struct scan *s, uint64_t target, uint64_t at,
                    uint32_t size, enum xom_reason reason)
{
	return scan_push_ref(s, target, size, reason, true, at);
}

static int push_call(struct scan *s, uint64_t target)
{
	return scan_push_addr(s, &s->calls, target);
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

/* A code address loaded into a register goes to flow.c, which follows the
 * register.  An address of a known entry is code already, and one in
 * .rodata inside an exec segment (files without separate-code) is data by
 * its section: classify.c marks it whoever reads it. */
static int push_cand(struct scan *s, const cs_insn *in, uint64_t target,
                     enum xom_reason reason, uint32_t region)
{
	struct cand *c;

	if (!exec_seg_at(s, target) ||
	    sorted_has_u64(s->entries.p, s->entries.n, target) ||
	    scan_in_data_section(s, target))
		return 0;
	if (!(c = vec_push(&s->cands)))
		return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
	*c = (struct cand){ .at = in->address, .target = target,
	                    .region = region, .reason = (uint8_t)reason };
	return 0;
}

/* mov $imm, %reg in a non-PIE file: the register holds the address. */
static bool loads_imm(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	return (in->id == X86_INS_MOV || in->id == X86_INS_MOVABS) &&
	       x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
	       x86_fam_wide(x->operands[0].reg) && x->operands[1].type == X86_OP_IMM;
}

static int note_insn(struct scan *s, const cs_insn *in, uint32_t region)
{
	const cs_x86 *x = &in->detail->x86;
	uint64_t next = in->address + in->size;
	bool absolute = s->e_type == ET_EXEC;
	bool branch = x86_is_branch(in->detail);
	int rc;

	if (absolute && loads_imm(in))
		return push_cand(s, in, (uint64_t)x->operands[1].imm,
		                 XOM_R_ABSOLUTE, region);

	for (uint8_t i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP) {
			uint64_t t = next + (uint64_t)op->mem.disp;

			if (in->id == X86_INS_LEA)
				rc = push_cand(s, in, t, XOM_R_TABLE, region);
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

/* The two decoders of the sweep: quiet (no text, no operands; see
 * x86_quiet()) when Capstone allows it, and full, for the instructions
 * whose operands matter. */
struct dec {
	csh quiet, full;
	cs_insn *in, *in_full;
	bool fast;              /* quiet works */
};

/* Whether a read of vaddr can make code bytes data: it lies in an exec
 * segment, and not in .rodata or another section that is data anyway
 * (classify.c drops such reads; files without separate-code have many). */
static bool names_code(const struct scan *s, uint64_t vaddr)
{
	return exec_seg_at(s, vaddr) && !scan_in_data_section(s, vaddr);
}

/*
 * Whether an instruction of a non-PIE file may name an address of the code
 * absolutely: a 32- or 64-bit immediate, or a 32-bit displacement with no
 * base register (ModRM 00 100 and SIB base 101), whose value lies in an
 * exec segment.  Both extensions of an imm32 are tried.
 */
static bool names_absolute(struct scan *s, const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	unsigned off = x->encoding.imm_offset, size = x->encoding.imm_size;

	if ((size == 4 || size == 8) && off + size <= in->size) {
		uint64_t v = 0;
		int32_t v32;
		memcpy(&v, in->bytes + off, size);
		memcpy(&v32, in->bytes + off, 4);
		if (exec_seg_at(s, v) || (size == 4 && exec_seg_at(s, (uint64_t)(int64_t)v32)))
			return true;
	}
	return x->encoding.modrm_offset && (x->modrm & 0xc7) == 0x04 &&
	       (x->sib & 7) == 5 && exec_seg_at(s, (uint64_t)x->disp);
}

/*
 * Without operands, what note_insn() would record: a RIP-relative operand
 * whose target is in an exec segment, an absolute address of the code in
 * a non-PIE file (then the instruction is decoded again, fully, and
 * note_insn() judges it), and a direct call's target.  No other
 * instruction can reference the code.
 */
static int note_quiet(struct scan *s, struct dec *d, const uint8_t *code,
                      uint32_t region)
{
	const cs_insn *in = d->in;
	const cs_x86 *x = &in->detail->x86;
	uint64_t next = in->address + in->size, pc = in->address;
	size_t n = in->size;

	if (in->id == X86_INS_CALL && x->opcode[0] == 0xe8 &&
	    x->encoding.imm_size == 4 && x->encoding.imm_offset + 4u == in->size) {
		int32_t rel;
		memcpy(&rel, in->bytes + x->encoding.imm_offset, 4);
		return push_call(s, next + (uint64_t)(int64_t)rel);
	}
	if (!(x->encoding.modrm_offset && (x->modrm & 0xc7) == 0x05 &&
	      x->addr_size == 8 && names_code(s, next + (uint64_t)x->disp)) &&
	    !(in->id == X86_INS_CALL && x->opcode[0] == 0xe8) &&
	    !(s->e_type == ET_EXEC && names_absolute(s, in)))
		return 0;
	/* A lea needs no operands: its target is all that note_insn() takes. */
	if (in->id == X86_INS_LEA && x->encoding.modrm_offset)
		return push_cand(s, in, next + (uint64_t)x->disp, XOM_R_TABLE, region);
	if (!cs_disasm_iter(d->full, &code, &n, &pc, d->in_full))
		return 0;
	return note_insn(s, d->in_full, region);
}

/* Decodes [lo, hi) of one region, restarting at every entry (entries
 * sorted); lo and hi are the region's ends or entries. */
static int sweep(struct scan *s, struct dec *d, uint32_t ri, uint64_t lo_addr,
                 uint64_t hi_addr)
{
	csh h = d->fast ? d->quiet : d->full;
	cs_insn *in = d->fast ? d->in : d->in_full;
	const struct region *r = (const struct region *)s->regions.p + ri;
	const uint64_t *ent = s->entries.p;
	size_t ne = s->entries.n;
	uint64_t end = hi_addr, addr = lo_addr;
	size_t lo = count_le(ent, ne, sizeof *ent, addr);   /* next entry */
	int rc;

	while (addr < end) {
		uint64_t stop = lo < ne && ent[lo] < end ? ent[lo] : end;
		const uint8_t *code = s->img + r->offset + (addr - r->addr);
		size_t left = stop - addr;
		uint64_t pc = addr;

		while (left) {
			const uint8_t *at = code;

			if (!cs_disasm_iter(h, &code, &left, &pc, in)) {
				uint64_t rip = 0;
				size_t n = x86_raw_length(code, left, pc, &rip, NULL);

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
			if ((rc = d->fast ? note_quiet(s, d, at, ri) : note_insn(s, in, ri)))
				return rc;
		}
		s->code_bytes += stop - addr;
		addr = stop;
		while (lo < ne && ent[lo] <= addr)
			lo++;
	}
	return 0;
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
			size_t k = x86_raw_length(code, left, pc, &rip, NULL);
			if (!k)
				return false;
			code += k, left -= k, pc += k, n++;
			continue;
		}
		if (x86_implausible(in, false))
			return false;
		n++;
		for (uint8_t i = 0; i < in->detail->groups_count; i++)
			if (in->detail->groups[i] == CS_GRP_RET ||
			    (in->id == X86_INS_JMP && in->detail->groups[i] == CS_GRP_JUMP))
				return n >= 2;
	}
	return n >= 3;
}

/* Relocated pointers that land on plausible code become code entries
 * (pointers into .rodata inside an exec segment are data by their place).
 * looks_like_code() reads ids, groups and bytes only: the quiet handle
 * serves. */
static int find_pointed_code(struct scan *s, csh h, cs_insn *in)
{
	const struct ref *r = s->refs.p;
	size_t before = s->entries.n;

	for (size_t i = 0; i < s->refs.n; i++) {
		uint64_t *e, *c;

		if (r[i].reason != XOM_R_ABSOLUTE || r[i].has_ref || r[i].size ||
		    sorted_has_u64(s->entries.p, before, r[i].target) ||
		    scan_inside_function(s, r[i].target) ||
		    scan_in_data_section(s, r[i].target) ||
		    !looks_like_code(s, h, in, r[i].target))
			continue;
		if (!(e = vec_push(&s->entries)) || !(c = vec_push(&s->calls)))
			return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
		*e = *c = r[i].target;
	}
	vec_sort_u64(&s->entries);
	return 0;
}

static int collect_regions(struct scan *s)
{
	struct vec *out = &s->regions;
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

static int open_decoder(struct scan *s, csh *h, cs_insn **in)
{
	cs_err ce = cs_open(CS_ARCH_X86, CS_MODE_64, h);

	if (ce != CS_ERR_OK)
		return scan_fail(s, XOM_SCAN_EDISASM, "cannot start the disassembler: %s",
		                 cs_strerror(ce));
	/* Operand details are what the analysis reads; skipdata stays off so
	 * that an undecodable byte is seen and skipped one at a time. */
	cs_option(*h, CS_OPT_DETAIL, CS_OPT_ON);
	if (!(*in = cs_malloc(*h)))
		return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
	return 0;
}

static int open_dec(struct scan *s, struct dec *d)
{
	int rc;

	if ((rc = open_decoder(s, &d->full, &d->in_full)) ||
	    (rc = open_decoder(s, &d->quiet, &d->in)))
		return rc;
	d->fast = x86_quiet(d->quiet, d->in);
	return 0;
}

static void close_dec(struct dec *d)
{
	if (d->in)
		cs_free(d->in, 1);
	if (d->in_full)
		cs_free(d->in_full, 1);
	if (d->quiet)
		cs_close(&d->quiet);
	if (d->full)
		cs_close(&d->full);
}

/* ---- the sweep on several threads ------------------------------------- */

/*
 * A large file's sweep is cut into chunks at code entries, where the sweep
 * restarts decoding anyway, so a chunk decodes exactly as the whole sweep
 * does there.  Each chunk fills vectors of its own, through a private copy
 * of struct scan; the instruction-start bitmap is shared and marked with
 * atomic operations.  The chunks' vectors are appended in address order,
 * which is the order of the sequential sweep: the map is byte-identical
 * for any number of threads.
 */
#define CHUNK_MIN (1u << 20)    /* bytes of code per chunk, at least */

struct chunk {
	uint32_t region;
	uint64_t lo, hi;
	struct vec refs, cands, calls;
	uint64_t code_bytes;
	int rc;
	char err[256];
};

struct sweep_jobs {
	struct scan *s;
	struct chunk *c;
	struct dec *dec;        /* one per worker, opened on first use */
	bool *opened;
};

static void sweep_job(void *ctx, size_t j, unsigned worker)
{
	struct sweep_jobs *q = ctx;
	struct chunk *c = &q->c[j];
	struct scan t = *q->s;

	t.err = c->err, t.errlen = sizeof c->err;
	t.refs = (struct vec){ .size = sizeof(struct ref) };
	t.cands = (struct vec){ .size = sizeof(struct cand) };
	t.calls = (struct vec){ .size = sizeof(uint64_t) };
	t.code_bytes = 0;
	t.mark_vaddr = t.mark_size = 0;
	t.atomic_marks = true;
	if (!q->opened[worker]) {
		q->opened[worker] = true;
		if ((c->rc = open_dec(&t, &q->dec[worker])))
			return;
	}
	c->rc = sweep(&t, &q->dec[worker], c->region, c->lo, c->hi);
	c->refs = t.refs, c->cands = t.cands, c->calls = t.calls;
	c->code_bytes = t.code_bytes;
}

/* Cuts the regions into chunks of about total / parts bytes, at entries. */
static int plan_chunks(struct scan *s, struct vec *out, unsigned parts)
{
	const struct region *r = s->regions.p;
	const uint64_t *e = s->entries.p;
	uint64_t total = 0, want;

	for (size_t i = 0; i < s->regions.n; i++)
		total += r[i].size;
	want = total / parts > CHUNK_MIN ? total / parts : CHUNK_MIN;
	for (size_t i = 0; i < s->regions.n; i++) {
		uint64_t lo = r[i].addr, end = r[i].addr + r[i].size;

		while (lo < end) {
			uint64_t hi = end;
			struct chunk *c;

			if (end - lo > want) {
				size_t k = count_le(e, s->entries.n, sizeof *e, lo + want);
				if (k < s->entries.n && e[k] < end)
					hi = e[k];
			}
			if (!(c = vec_push(out)))
				return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
			*c = (struct chunk){ .region = (uint32_t)i, .lo = lo, .hi = hi };
			lo = hi;
		}
	}
	return 0;
}

static int append(struct scan *s, struct vec *to, const struct vec *from)
{
	for (size_t i = 0; i < from->n; i++) {
		void *p = vec_push(to);
		if (!p)
			return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
		memcpy(p, (const char *)from->p + i * from->size, from->size);
	}
	return 0;
}

static int sweep_parallel(struct scan *s)
{
	struct vec chunks = { .size = sizeof(struct chunk) };
	struct sweep_jobs q = { .s = s };
	unsigned n = s->nthreads;
	int rc;

	q.dec = calloc(n, sizeof *q.dec);
	q.opened = calloc(n, sizeof *q.opened);
	if (!q.dec || !q.opened)
		rc = scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
	else
		rc = plan_chunks(s, &chunks, 4 * n);
	if (!rc) {
		q.c = chunks.p;
		scan_parallel(n, chunks.n, NULL, sweep_job, &q);
	}
	for (size_t i = 0; i < chunks.n; i++) {
		struct chunk *c = &q.c[i];
		if (!rc && c->rc)
			rc = scan_fail(s, c->rc, "%s", c->err);
		if (!rc && !(rc = append(s, &s->refs, &c->refs)) &&
		    !(rc = append(s, &s->cands, &c->cands)))
			rc = append(s, &s->calls, &c->calls);
		s->code_bytes += c->code_bytes;
		vec_free(&c->refs), vec_free(&c->cands), vec_free(&c->calls);
	}
	for (unsigned i = 0; q.dec && i < n; i++)
		close_dec(&q.dec[i]);
	free(q.dec);
	free(q.opened);
	vec_free(&chunks);
	return rc;
}

int disasm_code(struct scan *s)
{
	struct dec d = { 0 };
	int rc;

	if ((rc = scan_alloc_starts(s)) || (rc = open_dec(s, &d)) ||
	    (rc = collect_regions(s)))
		goto out;
	if (s->nthreads > 1) {
		rc = sweep_parallel(s);
	} else {
		const struct region *r = s->regions.p;
		for (size_t i = 0; i < s->regions.n && !rc; i++)
			rc = sweep(s, &d, (uint32_t)i, r[i].addr, r[i].addr + r[i].size);
	}
	if (!rc)
		rc = d.fast ? find_pointed_code(s, d.quiet, d.in)
		            : find_pointed_code(s, d.full, d.in_full);
out:
	close_dec(&d);
	return rc;
}
