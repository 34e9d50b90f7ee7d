/*
 * scan.c - the scanner's pipeline and its exported functions.
 *
 * xom_scan_mem() runs the stages in order on one struct scan, each through
 * the entry point that scan.h declares:
 *   elf_load       validates the image; segments, sections, symbols,
 *                  relocation targets, code entries, the build-id;
 *   ehframe_parse  function starts and extents from .eh_frame;
 *   disasm_code    decodes the code; references, call targets, the
 *                  instruction-start bitmap, code addresses loaded into
 *                  registers;
 *   flow_resolve   follows those registers: table, code or neither;
 *   classify_map   marks non-code bytes as data; data ranges, pages and
 *                  readable runs;
 *   gadgets_find   WRPKRU/XRSTOR byte sequences;
 *   surface_count  the readable executable bytes and their ret gadgets.
 * Between the stages it sorts what the next one searches, and at the end
 * it hands what the map keeps over from struct scan to struct xom_map.
 * Calls: every stage, and util.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scan.h"

/* The code entries and function extents that disasm.c and classify.c
 * search, sorted once both elf.c and ehframe.c have added theirs. */
static void index_code(struct scan *s)
{
	vec_sort_u64(&s->entries);
	scan_prepare_funcs(s);
}

/* Moves what the map keeps out of struct scan, so scan_free() leaves it. */
static void hand_over(struct scan *s, struct xom_map *m)
{
	m->e_type = s->e_type;
	m->build_id_len = s->build_id_len;
	memcpy(m->build_id, s->build_id, sizeof m->build_id);
	m->code_bytes = s->code_bytes;
	m->nsegs = s->segs.n;
	m->segs = s->segs.p;
	s->segs.p = NULL;
	sort_by_key(s->syms.p, s->syms.n, sizeof(struct xom_sym));
	m->nsyms = s->syms.n;
	m->syms = s->syms.p;
	m->names = s->names.p;
	s->syms.p = s->names.p = NULL;
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
	vec_free(&s->regions);
	vec_free(&s->cands);
	vec_free(&s->syms);
	vec_free(&s->noreturn_got);
	vec_free(&s->extern_got);
	vec_free(&s->names);
	free(s->starts);
}

EXPORT int xom_scan_mem_threads(const void *buf, size_t len, unsigned nthreads,
                                 struct xom_map **out, char *err, size_t errlen)
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
		.regions = { .size = sizeof(struct region) },
		.cands = { .size = sizeof(struct cand) },
		.syms = { .size = sizeof(struct xom_sym) },
		.noreturn_got = { .size = sizeof(uint64_t) },
		.extern_got = { .size = sizeof(uint64_t) },
		.names = { .size = 1 },
		.nthreads = nthreads ? nthreads : 1,
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
	index_code(&s);
	if ((rc = disasm_code(&s)) || (rc = flow_resolve(&s)))
		goto out;
	vec_sort_u64(&s.calls);         /* classify.c searches them */
	if ((rc = classify_map(&s, m)) || (rc = gadgets_find(&s, m)) ||
	    (rc = surface_count(&s, m)))
		goto out;
	hand_over(&s, m);
out:
	scan_free(&s);
	if (rc) {
		xom_map_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

EXPORT int xom_scan_mem(const void *buf, size_t len, struct xom_map **out,
                         char *err, size_t errlen)
{
	return xom_scan_mem_threads(buf, len, 1, out, err, errlen);
}

EXPORT int xom_scan_file_threads(const char *path, unsigned nthreads,
                                  struct xom_map **out, char *err, size_t errlen)
{
	struct scan s = { .err = err, .errlen = errlen };
	struct stat st;
	void *img;
	int fd, rc;

	*out = NULL;
	/* O_NONBLOCK: a FIFO must not hang the open; fstat turns it away. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
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
	rc = xom_scan_mem_threads(img, (size_t)st.st_size, nthreads, out, err, errlen);
	munmap(img, (size_t)st.st_size);
	return rc;
}

EXPORT int xom_scan_file(const char *path, struct xom_map **out,
                          char *err, size_t errlen)
{
	return xom_scan_file_threads(path, 1, out, err, errlen);
}

EXPORT void xom_map_free(struct xom_map *m)
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

EXPORT const char *xom_reason_name(enum xom_reason r)
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

EXPORT const char *xom_map_symbol(const struct xom_map *m, uint64_t addr,
                                   uint64_t *off)
{
	size_t lo = count_le(m->syms, m->nsyms, sizeof *m->syms, addr);

	if (!lo)
		return NULL;
	if (off)
		*off = addr - m->syms[lo - 1].addr;
	return m->names + m->syms[lo - 1].name;
}
