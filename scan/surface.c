/*
 * surface.c - the attack surface that stays: how many bytes of the
 * executable segments remain readable, and how many return-ended gadgets
 * an attacker who can read them finds there.
 *
 * A ret gadget candidate is a byte C3 (ret) at address a, in a file byte
 * of an executable segment whose page stays readable, such that for some
 * k from 1 to 15 the k bytes [a - k, a), all inside the same segment,
 * decode with Capstone (or x86_raw_length) from the first into whole
 * instructions that end exactly at a, none of them a jump, call or
 * return.  Each C3 counts once, however many such k it has.  It is what a
 * gadget finder that reads the page would try first: one to a few
 * instructions and a ret, aligned to the code or not.
 *
 * The same pass counts what the section-level method of earlier tools
 * leaves readable: the readable pages that no SHF_EXECINSTR section
 * touches (that method makes every other one execute-only).
 *
 * Reads: the image, segs, spans, the map's pages (classify.c).
 * Adds: the map's readable_bytes and ret_gadgets, and their section_
 * counterparts.
 * Calls: util.c, x86.c and Capstone.
 */
#include <string.h>

#include "scan.h"
#include "x86.h"

#define GADGET_BACK 15          /* the longest x86 instruction */

/* Whether some of the bytes before the C3 at a decode into a gadget. */
static bool ends_gadget(const struct scan *s, csh h, cs_insn *in,
                        const struct xom_segment *g, uint64_t a)
{
	const uint8_t *base = s->img + g->offset;

	for (uint64_t k = 1; k <= GADGET_BACK && k <= a - g->vaddr; k++) {
		const uint8_t *code = base + (a - k - g->vaddr);
		size_t left = (size_t)k;
		uint64_t pc = a - k, rip;
		bool ok = true;

		while (left && ok) {
			size_t n;

			if (cs_disasm_iter(h, &code, &left, &pc, in)) {
				ok = !x86_is_branch(in->detail) &&
				     !x86_in_group(in->detail, CS_GRP_RET);
				continue;
			}
			if (!(n = x86_raw_length(code, left, pc, &rip, NULL)))
				ok = false;
			else
				code += n, left -= n, pc += n;
		}
		if (ok)
			return true;
	}
	return false;
}

/* Whether an executable section has bytes in the page at page. */
static bool page_has_exec_section(const struct scan *s, uint64_t page)
{
	const struct span *sp = s->spans.p;

	for (size_t i = 0; i < s->spans.n; i++)
		if (sp[i].exec && sp[i].start < page + XOM_PAGE_SIZE && sp[i].end > page)
			return true;
	return false;
}

/* Counts one readable page's share of segment g; sect: the section-level
 * method leaves it readable too. */
static void count_page(struct scan *s, csh h, cs_insn *in, struct xom_map *m,
                       const struct xom_segment *g, uint64_t page, bool sect)
{
	uint64_t bytes0 = m->readable_bytes, gadgets0 = m->ret_gadgets;

	uint64_t end_g = g->vaddr + g->memsz;
	uint64_t lo = page > g->vaddr ? page : g->vaddr;
	uint64_t hi = page + XOM_PAGE_SIZE < end_g ? page + XOM_PAGE_SIZE : end_g;
	uint64_t fhi = hi < g->vaddr + g->filesz ? hi : g->vaddr + g->filesz;
	const uint8_t *p, *end;

	/* elf.c keeps segments out of the top page: page + PAGE fits. */
	if (lo >= end_g || hi <= lo)
		return;
	m->readable_bytes += hi - lo;
	if (fhi > lo && h) {
		p = s->img + g->offset + (lo - g->vaddr);
		end = s->img + g->offset + (fhi - g->vaddr);
		while (p < end && (p = memchr(p, 0xc3, (size_t)(end - p)))) {
			uint64_t a = g->vaddr + (uint64_t)(p - (s->img + g->offset));
			m->ret_gadgets += ends_gadget(s, h, in, g, a);
			p++;
		}
	}
	if (sect) {
		m->section_readable_bytes += m->readable_bytes - bytes0;
		m->section_ret_gadgets += m->ret_gadgets - gadgets0;
	}
}

int surface_count(struct scan *s, struct xom_map *m)
{
	const struct xom_segment *g = s->segs.p;
	cs_insn *in = NULL;
	csh h = 0;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return scan_fail(s, XOM_SCAN_EDISASM, "cannot start the disassembler");
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	if (!(in = cs_malloc(h))) {
		cs_close(&h);
		return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
	}
	x86_quiet(h, in);       /* groups are all it reads */
	for (size_t p = 0; p < m->npages; p++) {
		if (m->page_kind[p] == XOM_PG_XOM)
			continue;
		bool sect = !page_has_exec_section(s, m->page_addr[p]);
		for (size_t i = 0; i < s->segs.n; i++)
			count_page(s, h, in, m, &g[i], m->page_addr[p], sect);
	}
	cs_free(in, 1);
	cs_close(&h);
	return 0;
}
