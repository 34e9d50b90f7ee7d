/*
 * classify.c - decides which bytes of the executable segments are data,
 * and from that which pages may become execute-only.
 *
 * Reads: segs, loads, secs and spans, the ELF and program header offsets,
 * textrel and writable_exec (elf.c); entries, calls and funcs, sorted; refs
 * (elf.c, disasm.c).
 * Adds: its own marks to refs; the map's whole-file reason, data ranges,
 * pages and readable runs.
 * Calls: util.c only.
 *
 * Two kinds of bytes are data.  Some are data because of where they lie:
 * headers, sections without code and other segments that share an exec
 * page, bytes that no section claims.  The rest are data because code reads
 * them: the references that elf.c and disasm.c recorded.  The first kind is
 * marked here, not in elf.c, because elf.c records what the file's tables
 * say and this stage is the one that decides what is data; no stage before
 * this one reads those marks (disasm.c looks only at relocated pointers,
 * which have no reader and no size).  Both kinds become the same struct ref,
 * so that one pass turns them into ranges.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "scan.h"

#define PAGE XOM_PAGE_SIZE
#define MAX_PAGES (1u << 20)    /* 4 GiB of code: more is a corrupt header */

static uint64_t page_down(uint64_t a) { return a & ~(uint64_t)(PAGE - 1); }

/* The page that holds a segment's last byte.  elf.c rejects segments that
 * reach the top page of the address space, so last_page() + PAGE does not
 * wrap, and neither does any page-aligned end computed from it. */
static uint64_t last_page(const struct xom_segment *g)
{
	return page_down(g->vaddr + g->memsz - 1);
}

/* ---- bytes that are data because of where they lie --------------------- */

/* Pushes [lo, hi) as references a page at a time (a reference's size is
 * 32-bit); pages that start outside every exec segment are dropped.  The
 * step never goes past hi, so a range near the top of the address space
 * cannot wrap the cursor back to zero. */
static int push_range_refs(struct scan *s, uint64_t lo, uint64_t hi,
                           enum xom_reason reason)
{
	int rc;

	for (uint64_t a = lo; a < hi; a += PAGE) {
		uint64_t left = hi - a;

		if ((rc = scan_push_ref(s, a, (uint32_t)(left < PAGE ? left : PAGE),
		                        reason, false, 0)))
			return rc;
		if (left <= PAGE)
			break;
	}
	return 0;
}

/* The ELF header and the program header table, where an exec segment
 * holds them. */
static int mark_headers(struct scan *s)
{
	const struct xom_segment *g = s->segs.p;
	uint64_t hdr[2][2] = {
		{ 0, s->ehdr_size },
		{ s->phdr_off, s->phdr_size },
	};
	int rc;

	for (size_t i = 0; i < s->segs.n; i++) {
		for (size_t k = 0; k < 2; k++) {
			uint64_t off = hdr[k][0], n = hdr[k][1], lo, hi;

			if (!n || off >= g[i].offset + g[i].filesz ||
			    off + n <= g[i].offset)
				continue;
			lo = off > g[i].offset ? off : g[i].offset;
			hi = off + n < g[i].offset + g[i].filesz ? off + n
			                                         : g[i].offset + g[i].filesz;
			if ((rc = push_range_refs(s, g[i].vaddr + (lo - g[i].offset),
			                          g[i].vaddr + (hi - g[i].offset),
			                          XOM_R_HEADER)))
				return rc;
		}
	}
	return 0;
}

/* Allocated sections without SHF_EXECINSTR: .rodata, .eh_frame, ... */
static int mark_noncode_sections(struct scan *s)
{
	const struct span *sp = s->spans.p;
	int rc;

	for (size_t i = 0; i < s->spans.n; i++)
		if (!sp[i].exec &&
		    (rc = push_range_refs(s, sp[i].start, sp[i].end, XOM_R_SECTION)))
			return rc;
	return 0;
}

/* Non-exec segments whose bytes land in an exec segment's pages. */
static int mark_other_segments(struct scan *s)
{
	const struct xom_segment *g = s->segs.p, *l = s->loads.p;
	int rc;

	for (size_t k = 0; k < s->loads.n; k++) {
		if (l[k].flags & PF_X)
			continue;
		for (size_t i = 0; i < s->segs.n; i++) {
			uint64_t plo = page_down(g[i].vaddr);
			uint64_t phi = last_page(&g[i]) + PAGE;
			uint64_t lo = l[k].vaddr > plo ? l[k].vaddr : plo;
			uint64_t hi = l[k].vaddr + l[k].memsz < phi ? l[k].vaddr + l[k].memsz : phi;

			/* Only bytes that land in this segment's own pages matter;
			 * push_range_refs() keeps those inside the segment proper. */
			if ((rc = push_range_refs(s, lo, hi, XOM_R_OUTSIDE)))
				return rc;
		}
	}
	return 0;
}

static bool is_padding(const uint8_t *p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (p[i] != 0x00 && p[i] != 0x90 && p[i] != 0xcc)
			return false;
	return true;
}

/*
 * Bytes of an exec segment that no section claims are alignment padding
 * between sections, or something the section table does not describe
 * (a damaged or doctored table).  Only the second kind is data: padding
 * is zeros, nops or int3.
 */
static int mark_unclaimed(struct scan *s)
{
	const struct xom_segment *g = s->segs.p;
	const struct span *v = s->spans.p;
	size_t n = s->spans.n;
	int rc = 0;

	if (!s->secs.n)
		return 0;
	for (size_t i = 0; i < s->segs.n && !rc; i++) {
		uint64_t at = g[i].vaddr, end = g[i].vaddr + g[i].filesz;

		for (size_t k = 0; k <= n && at < end && !rc; k++) {
			uint64_t lo = k < n && v[k].start < end ? v[k].start : end;
			uint64_t hi = k < n ? v[k].end : end;

			if (lo > at && !is_padding(s->img + g[i].offset + (at - g[i].vaddr),
			                            lo - at))
				rc = push_range_refs(s, at, lo, XOM_R_OUTSIDE);
			if (hi > at)
				at = hi;
		}
	}
	return rc;
}

/* These marks follow the references from code in refs.  Their place there
 * does not matter: merge_data() sorts by reason first, and their reasons
 * come from here alone. */
static int mark_noncode(struct scan *s)
{
	int rc;

	if ((rc = mark_headers(s)) || (rc = mark_noncode_sections(s)) ||
	    (rc = mark_other_segments(s)) || (rc = mark_unclaimed(s)))
		return rc;
	return 0;
}

/* ---- references into ranges, ranges into pages -------------------------- */

/* The first entry above x, or UINT64_MAX. */
static uint64_t next_entry(const struct scan *s, uint64_t x)
{
	const uint64_t *a = s->entries.p;
	size_t k = count_le(a, s->entries.n, sizeof *a, x);

	return k < s->entries.n ? a[k] : UINT64_MAX;
}

static const struct span *span_at(const struct scan *s, uint64_t x)
{
	const struct span *v = s->spans.p;
	size_t k = count_le(v, s->spans.n, sizeof *v, x);

	return k && x < v[k - 1].end ? &v[k - 1] : NULL;
}

static int cmp_data(const void *a, const void *b)
{
	const struct xom_data *x = a, *y = b;

	if (x->reason != y->reason)
		return x->reason - y->reason;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_data_start(const void *a, const void *b)
{
	const struct xom_data *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->reason - y->reason;
}

/* Reasons that mean an instruction reads the bytes. */
static bool read_by_code(unsigned reason)
{
	return reason == XOM_R_RIP_LOAD || reason == XOM_R_TABLE ||
	       reason == XOM_R_ABSOLUTE;
}

/* Resolves one reference into a data range; false when it is code. */
static bool resolve_ref(const struct scan *s, const struct ref *r,
                        struct xom_data *d)
{
	const struct xom_segment *seg = exec_seg_at(s, r->target);
	uint64_t seg_end = seg->vaddr + seg->memsz, end;
	const struct span *in = read_by_code(r->reason) ? span_at(s, r->target) : NULL;

	/* A read of .rodata or .eh_frame in the segment is data already. */
	if (in && !in->exec)
		return false;
	/* A table inside a code section ends with it at the latest. */
	if (in && in->end < seg_end)
		seg_end = in->end;

	if (r->size) {
		end = r->target + r->size;
		if (end < r->target || end > seg_end)
			end = seg_end;
	} else {
		/* An address of code, not data: a function pointer, a PLT slot,
		 * a call target.  A pointer stored in data that lands inside a
		 * function is a code label (computed goto), not a table. */
		if (sorted_has_u64(s->entries.p, s->entries.n, r->target) ||
		    sorted_has_u64(s->calls.p, s->calls.n, r->target))
			return false;
		if (!r->has_ref && scan_inside_function(s, r->target))
			return false;
		end = next_entry(s, r->target);
		if (end > seg_end)
			end = seg_end;
	}
	*d = (struct xom_data){ .start = r->target, .end = end, .ref = r->ref,
	                        .has_ref = r->has_ref, .reason = r->reason };
	return true;
}

/* Sorts by reason and start, merges overlaps within a reason, then sorts by start. */
static size_t merge_data(struct xom_data *d, size_t n)
{
	size_t k = 0;

	sort_items(d, n, sizeof *d, cmp_data);
	for (size_t i = 0; i < n; i++) {
		if (k && d[k - 1].reason == d[i].reason && d[i].start <= d[k - 1].end) {
			if (d[i].end > d[k - 1].end)
				d[k - 1].end = d[i].end;
			continue;
		}
		d[k++] = d[i];
	}
	sort_items(d, k, sizeof *d, cmp_data_start);
	return k;
}

static int build_data(struct scan *s, struct xom_map *m)
{
	const struct ref *r = s->refs.p;
	const struct xom_segment *g = s->segs.p;
	size_t n = 0;

	m->data = malloc((s->refs.n + s->segs.n + 1) * sizeof *m->data);
	if (!m->data)
		return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
	for (size_t i = 0; i < s->refs.n; i++)
		n += resolve_ref(s, &r[i], &m->data[n]);
	/* A whole-file verdict is listed too, so that readers of the data
	 * list see why every page stays readable.  Without section headers
	 * nothing tells .rodata from .text in a segment that also holds the
	 * headers, so all of such a segment stays readable. */
	for (size_t i = 0; i < s->segs.n; i++)
		if (m->whole_reason)
			m->data[n++] = (struct xom_data){
				.start = g[i].vaddr, .end = g[i].vaddr + g[i].memsz,
				.reason = m->whole_reason };
		else if (!s->secs.n && g[i].offset == 0)
			m->data[n++] = (struct xom_data){
				.start = g[i].vaddr, .end = g[i].vaddr + g[i].memsz,
				.reason = XOM_R_NOSECTIONS };
	m->ndata = merge_data(m->data, n);
	return 0;
}

static int build_pages(struct scan *s, struct xom_map *m)
{
	const struct xom_segment *g = s->segs.p;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < s->segs.n; i++) {
		cap += (last_page(&g[i]) - page_down(g[i].vaddr)) / PAGE + 1;
		if (cap > MAX_PAGES)
			return scan_fail(s, XOM_SCAN_EMALFORMED,
			                 "malformed: executable segments span more than 4 GiB");
	}
	m->page_addr = malloc((cap + 1) * sizeof *m->page_addr);
	m->page_kind = calloc(cap + 1, 1);
	if (!m->page_addr || !m->page_kind)
		return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
	for (size_t i = 0; i < s->segs.n; i++) {
		uint64_t lo = page_down(g[i].vaddr), hi = last_page(&g[i]) + PAGE;
		for (uint64_t a = lo; a < hi; a += PAGE)
			if (!n || m->page_addr[n - 1] < a)     /* segments may share a page */
				m->page_addr[n++] = a;
	}
	m->npages = m->exec_pages = n;

	for (size_t i = 0; i < m->ndata; i++) {
		const struct xom_data *d = &m->data[i];
		/* The first page that reaches past d->start. */
		size_t first = d->start < PAGE ? 0
		             : count_le(m->page_addr, n, sizeof(uint64_t), d->start - PAGE);

		for (size_t p = first; p < n && m->page_addr[p] < d->end; p++)
			if (read_by_code(d->reason))
				m->page_kind[p] = XOM_PG_DATA;
			else if (m->page_kind[p] == XOM_PG_XOM)
				m->page_kind[p] = XOM_PG_HEADER;
	}
	for (size_t p = 0; p < n; p++) {
		if (m->whole_reason)
			m->page_kind[p] = XOM_PG_WHOLE;
		m->xom_pages += m->page_kind[p] == XOM_PG_XOM;
	}
	return 0;
}

static int build_readable(struct scan *s, struct xom_map *m)
{
	size_t k = 0;

	m->readable = malloc((m->npages + 1) * sizeof *m->readable);
	if (!m->readable)
		return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
	for (size_t p = 0; p < m->npages; p++) {
		uint64_t a = m->page_addr[p];

		if (m->page_kind[p] == XOM_PG_XOM)
			continue;
		if (k && m->readable[k - 1].end == a)
			m->readable[k - 1].end = a + PAGE;
		else
			m->readable[k++] = (struct xom_range){ a, a + PAGE };
	}
	m->nreadable = k;
	return 0;
}

int classify_map(struct scan *s, struct xom_map *m)
{
	int rc;

	m->whole_reason = s->textrel ? XOM_R_TEXTREL
	                : s->writable_exec ? XOM_R_WRITABLE : XOM_R_NONE;
	if ((rc = mark_noncode(s)) || (rc = build_data(s, m)) ||
	    (rc = build_pages(s, m)) || (rc = build_readable(s, m)))
		return rc;
	return 0;
}
