/*
 * map.c - turns the references that the earlier stages found into data
 * ranges, classifies each executable page, lists WRPKRU/XRSTOR gadgets, and
 * holds the public entry points.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scan.h"

#define PAGE XOM_PAGE_SIZE
#define MAX_PAGES (1u << 20)    /* 4 GiB of code: more is a corrupt header */

static uint64_t page_down(uint64_t a) { return a & ~(uint64_t)(PAGE - 1); }

/* The first entry above x, or UINT64_MAX. */
static uint64_t next_entry(const struct scan *s, uint64_t x)
{
	const uint64_t *a = s->entries.p;
	size_t k = count_le(a, s->entries.n, sizeof *a, x);

	return k < s->entries.n ? a[k] : UINT64_MAX;
}

const struct span *span_at(const struct scan *s, uint64_t x)
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
		if (m->whole)
			m->data[n++] = (struct xom_data){
				.start = g[i].vaddr, .end = g[i].vaddr + g[i].memsz,
				.reason = m->whole };
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
		uint64_t lo = page_down(g[i].vaddr);
		uint64_t hi = page_down(g[i].vaddr + g[i].memsz + PAGE - 1);
		if (g[i].vaddr + g[i].memsz + PAGE - 1 < g[i].vaddr)
			hi = page_down(UINT64_MAX);
		cap += (hi - lo) / PAGE;
		if (cap > MAX_PAGES)
			return scan_fail(s, XOM_SCAN_EMALFORMED,
			                 "malformed: executable segments span more than 4 GiB");
	}
	m->page_addr = malloc((cap + 1) * sizeof *m->page_addr);
	m->page_kind = calloc(cap + 1, 1);
	if (!m->page_addr || !m->page_kind)
		return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
	for (size_t i = 0; i < s->segs.n; i++) {
		uint64_t lo = page_down(g[i].vaddr);
		uint64_t hi = lo + (page_down(g[i].vaddr + g[i].memsz - 1) - lo) + PAGE;
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
		if (m->whole)
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

static bool is_prefix(uint8_t b)
{
	return (b >= 0x40 && b <= 0x4f) || b == 0x66 || b == 0x67 || b == 0xf0 ||
	       b == 0xf2 || b == 0xf3 || b == 0x2e || b == 0x36 || b == 0x3e ||
	       b == 0x26 || b == 0x64 || b == 0x65;
}

/* A gadget is aligned when a decoded instruction begins at it or at the
 * prefixes right before it (REX.W 0F AE /5 is xrstor64). */
static bool gadget_aligned(const struct scan *s, const struct xom_segment *g,
                           uint64_t off)
{
	uint64_t va = g->vaddr + (off - g->offset);

	for (unsigned k = 0; k <= 4 && k <= off - g->offset; k++) {
		if (k && !is_prefix(s->img[off - k]))
			return false;
		if (scan_is_start(s, va - k))
			return true;
	}
	return false;
}

static int build_gadgets(struct scan *s, struct xom_map *m)
{
	const struct xom_segment *g = s->segs.p;
	struct vec v = { .size = sizeof(struct xom_gadget) };

	for (size_t i = 0; i < s->segs.n; i++) {
		const uint8_t *base = s->img + g[i].offset, *p = base;
		const uint8_t *end = base + g[i].filesz;

		while (end - p >= 3 && (p = memchr(p, 0x0f, (size_t)(end - p - 2)))) {
			int kind = -1;

			if (p[1] == 0x01 && p[2] == 0xef)
				kind = XOM_G_WRPKRU;
			else if (p[1] == 0xae && (p[2] >> 6) != 3 && ((p[2] >> 3) & 7) == 5)
				kind = XOM_G_XRSTOR;
			if (kind >= 0) {
				struct xom_gadget *x = vec_push(&v);
				uint64_t off = g[i].offset + (uint64_t)(p - base);
				if (!x) {
					vec_free(&v);
					return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
				}
				*x = (struct xom_gadget){
					.addr = g[i].vaddr + (uint64_t)(p - base),
					.kind = (uint8_t)kind,
					.aligned = gadget_aligned(s, &g[i], off),
				};
			}
			p++;
		}
	}
	m->gadgets = v.p;
	m->ngadgets = v.n;
	return 0;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct xom_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int map_build(struct scan *s, struct xom_map *m)
{
	int rc;

	m->e_type = s->e_type;
	m->build_id_len = s->build_id_len;
	memcpy(m->build_id, s->build_id, sizeof m->build_id);
	m->whole = s->textrel ? XOM_R_TEXTREL
	         : s->writable_exec ? XOM_R_WRITABLE : XOM_R_NONE;
	m->code_bytes = s->code_bytes;

	if ((rc = build_data(s, m)) || (rc = build_pages(s, m)) ||
	    (rc = build_readable(s, m)) || (rc = build_gadgets(s, m)))
		return rc;

	m->nsegs = s->segs.n;
	m->segs = s->segs.p;
	s->segs.p = NULL;
	sort_items(s->syms.p, s->syms.n, sizeof(struct xom_sym), cmp_sym);
	m->nsyms = s->syms.n;
	m->syms = s->syms.p;
	m->names = s->names.p;
	s->syms.p = s->names.p = NULL;
	return 0;
}

static void scan_free(struct scan *s)
{
	vec_free(&s->segs);
	vec_free(&s->loads);
	vec_free(&s->secs);
	vec_free(&s->spans);
	vec_free(&s->entries);
	vec_free(&s->funcs);
	vec_free(&s->refs);
	vec_free(&s->calls);
	vec_free(&s->syms);
	vec_free(&s->names);
	free(s->starts);
}

XOM_API int xom_scan_mem(const void *buf, size_t len, struct xom_map **out,
                         char *err, size_t errlen)
{
	struct scan s = {
		.img = buf, .len = len, .err = err, .errlen = errlen,
		.segs = { .size = sizeof(struct xom_segment) },
		.loads = { .size = sizeof(struct xom_segment) },
		.secs = { .size = sizeof(struct section) },
		.spans = { .size = sizeof(struct span) },
		.entries = { .size = sizeof(uint64_t) },
		.funcs = { .size = sizeof(struct xom_range) },
		.refs = { .size = sizeof(struct ref) },
		.calls = { .size = sizeof(uint64_t) },
		.syms = { .size = sizeof(struct xom_sym) },
		.names = { .size = 1 },
	};
	struct xom_map *m;
	int rc;

	*out = NULL;
	if (err && errlen)
		err[0] = 0;
	m = calloc(1, sizeof *m);
	if (!m)
		return scan_fail(&s, XOM_SCAN_ENOMEM, "out of memory");
	if ((rc = elf_load(&s)) || (rc = ehframe_parse(&s)))
		goto out;
	vec_sort_u64(&s.entries);
	scan_prepare_funcs(&s);
	if ((rc = disasm_code(&s)))
		goto out;
	vec_sort_u64(&s.calls);
	rc = map_build(&s, m);
out:
	scan_free(&s);
	if (rc) {
		xom_map_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

XOM_API int xom_scan_file(const char *path, struct xom_map **out,
                          char *err, size_t errlen)
{
	struct scan s = { .err = err, .errlen = errlen };
	struct stat st;
	void *img;
	int fd, rc;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return scan_fail(&s, XOM_SCAN_EIO, "cannot read: %s", strerror(errno));
	if (fstat(fd, &st) != 0) {
		rc = scan_fail(&s, XOM_SCAN_EIO, "cannot read: %s", strerror(errno));
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return scan_fail(&s, XOM_SCAN_EUNSUPPORTED, "unsupported: not a regular file");
	}
	if (st.st_size == 0) {
		close(fd);
		return scan_fail(&s, XOM_SCAN_EUNSUPPORTED, "unsupported: not an ELF file (empty)");
	}
	img = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (img == MAP_FAILED)
		return scan_fail(&s, XOM_SCAN_EIO, "cannot read: %s", strerror(errno));
	rc = xom_scan_mem(img, (size_t)st.st_size, out, err, errlen);
	munmap(img, (size_t)st.st_size);
	return rc;
}

XOM_API void xom_map_free(struct xom_map *m)
{
	if (!m)
		return;
	free(m->segs);
	free(m->page_addr);
	free(m->page_kind);
	free(m->readable);
	free(m->data);
	free(m->gadgets);
	free(m->syms);
	free(m->names);
	free(m);
}

XOM_API const char *xom_reason_name(enum xom_reason r)
{
	static const char *const names[XOM_R_COUNT] = {
		[XOM_R_NONE] = "none",         [XOM_R_HEADER] = "header",
		[XOM_R_SECTION] = "section",   [XOM_R_OUTSIDE] = "outside",
		[XOM_R_RIP_LOAD] = "rip-load", [XOM_R_TABLE] = "table",
		[XOM_R_ABSOLUTE] = "absolute", [XOM_R_TEXTREL] = "textrel",
		[XOM_R_WRITABLE] = "writable", [XOM_R_NOSECTIONS] = "no-sections",
	};

	return (unsigned)r < XOM_R_COUNT ? names[r] : "unknown";
}

XOM_API const char *xom_map_symbol(const struct xom_map *m, uint64_t addr,
                                   uint64_t *off)
{
	size_t lo = count_le(m->syms, m->nsyms, sizeof *m->syms, addr);

	if (!lo)
		return NULL;
	if (off)
		*off = addr - m->syms[lo - 1].addr;
	return m->names + m->syms[lo - 1].name;
}
