/*
 * build.c - turns the scanner's code map of a file into a plan
 * (xom_plan.h).  This is the one place where the scanner's vocabulary
 * (scan/xom_scan.h) meets the plan's; it runs only in the xom-plan helper,
 * never inside a host process.
 */
#include <stdlib.h>
#include <string.h>

#include "../../scan/xom_scan.h"
#include "build.h"

_Static_assert(XOM_PLAN_SCAN_VERSION == XOM_SCAN_VERSION,
               "the runtime must accept exactly the plans this scanner makes");
_Static_assert(XOM_PLAN_PAGE == XOM_PAGE_SIZE, "one page size");

/* Counts the runs of consecutive execute-only pages; fills out when set. */
static size_t collect_runs(const struct xom_map *m, struct xom_plan_run *out)
{
	size_t n = 0;

	for (size_t i = 0; i < m->npages; i++) {
		if (m->page_kind[i] != XOM_PG_XOM)
			continue;
		uint64_t a = m->page_addr[i];
		if (n && out && out[n - 1].end == a) {
			out[n - 1].end = a + XOM_PAGE_SIZE;
			continue;
		}
		if (n && !out && i && m->page_kind[i - 1] == XOM_PG_XOM
		    && m->page_addr[i - 1] + XOM_PAGE_SIZE == a)
			continue;
		if (out)
			out[n] = (struct xom_plan_run){ a, a + XOM_PAGE_SIZE };
		n++;
	}
	return n;
}

static size_t names_size(const struct xom_map *m)
{
	size_t end = 0;

	for (size_t i = 0; i < m->nsyms; i++) {
		size_t e = m->syms[i].name + strlen(m->names + m->syms[i].name) + 1;
		if (e > end)
			end = e;
	}
	return end;
}

static uint8_t plan_whole(int reason)
{
	switch (reason) {
	case XOM_R_NONE: return XOM_WHOLE_NONE;
	case XOM_R_TEXTREL: return XOM_WHOLE_TEXTREL;
	case XOM_R_WRITABLE: return XOM_WHOLE_WRITABLE;
	default: return XOM_WHOLE_OTHER;
	}
}

struct xom_plan_head *xom_plan_build(const struct xom_map *m, const char **why)
{
	size_t nruns = m->whole_reason ? 0 : collect_runs(m, NULL);
	size_t nnames = names_size(m);
	size_t total = sizeof(struct xom_plan_head)
	               + m->nsegs * sizeof(struct xom_plan_seg)
	               + nruns * sizeof(struct xom_plan_run)
	               + m->nsyms * sizeof(struct xom_plan_sym) + nnames;

	if (total > XOM_PLAN_MAX || m->nsyms > UINT32_MAX)
		return *why = "plan too large", NULL;
	char *buf = calloc(1, total);
	if (!buf)
		return *why = "out of memory", NULL;
	struct xom_plan_head *h = (void *)buf;
	memcpy(h->magic, XOM_PLAN_MAGIC, 8);
	h->format = XOM_PLAN_FORMAT;
	h->scan_version = XOM_SCAN_VERSION;
	h->total = total;
	h->nsegs = (uint32_t)m->nsegs;
	h->nruns = (uint32_t)nruns;
	h->nsyms = (uint32_t)m->nsyms;
	h->names_len = (uint32_t)nnames;
	h->exec_pages = (uint32_t)m->exec_pages;
	h->xom_pages = (uint32_t)(m->whole_reason ? 0 : m->xom_pages);
	h->whole_reason = plan_whole(m->whole_reason);
	h->e_type = m->e_type;
	h->build_id_len = m->build_id_len;
	memcpy(h->build_id, m->build_id, sizeof(h->build_id));
	struct xom_plan_seg *s = (void *)(h + 1);
	for (size_t i = 0; i < m->nsegs; i++)
		s[i] = (struct xom_plan_seg){ m->segs[i].vaddr, m->segs[i].memsz,
		                              m->segs[i].flags, 0 };
	struct xom_plan_run *r = (void *)(s + m->nsegs);
	if (nruns)
		collect_runs(m, r);
	struct xom_plan_sym *y = (void *)(r + nruns);
	for (size_t i = 0; i < m->nsyms; i++)
		y[i] = (struct xom_plan_sym){ m->syms[i].addr, m->syms[i].size,
		                              m->syms[i].name, 0 };
	memcpy(y + m->nsyms, m->names, nnames);
	xom_plan_seal(h);
	if (xom_plan_check(buf, total, why) != 0) {
		free(buf);
		return NULL;
	}
	return h;
}
