/*
 * plan_tool.c - xom-plan FILE: scans FILE and writes its plan (core.h) to
 * stdout.  The runtime runs it on a plan-cache miss, so that Capstone and
 * libelf are loaded only in this short-lived process, never in the host.
 * Exit status: 0 plan written, 1 the file could not be analysed, 2 usage or
 * output error.  Messages are one line on stderr, prefixed "xom: ".
 */
#define XOM_PLAN_TOOL
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "../scan/xom_scan.h"

static size_t count_runs(const struct xom_map *m, struct xom_plan_run *out)
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

int main(int argc, char **argv)
{
	char err[256];
	struct xom_map *m;

	if (argc != 2) {
		fprintf(stderr, "usage: xom-plan FILE\n");
		return 2;
	}
	int rc = xom_scan_file(argv[1], &m, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "xom: %s: %s\n", argv[1], err);
		return 1;
	}
	size_t nruns = m->whole_reason ? 0 : count_runs(m, NULL);
	size_t nnames = names_size(m);
	size_t total = sizeof(struct xom_plan_head)
	               + m->nsegs * sizeof(struct xom_plan_seg)
	               + nruns * sizeof(struct xom_plan_run)
	               + m->nsyms * sizeof(struct xom_plan_sym) + nnames;
	if (total > XOM_PLAN_MAX || m->nsyms > UINT32_MAX) {
		fprintf(stderr, "xom: %s: plan too large\n", argv[1]);
		return 1;
	}
	char *buf = calloc(1, total);
	if (!buf) {
		fprintf(stderr, "xom: %s: out of memory\n", argv[1]);
		return 1;
	}
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
	h->whole = m->whole_reason;
	h->e_type = m->e_type;
	h->build_id_len = m->build_id_len;
	memcpy(h->build_id, m->build_id, sizeof(h->build_id));
	struct xom_plan_seg *s = (void *)(h + 1);
	for (size_t i = 0; i < m->nsegs; i++)
		s[i] = (struct xom_plan_seg){ m->segs[i].vaddr, m->segs[i].memsz,
		                              m->segs[i].flags, 0 };
	struct xom_plan_run *r = (void *)(s + m->nsegs);
	if (nruns)
		count_runs(m, r);
	struct xom_plan_sym *y = (void *)(r + nruns);
	for (size_t i = 0; i < m->nsyms; i++)
		y[i] = (struct xom_plan_sym){ m->syms[i].addr, m->syms[i].size,
		                              m->syms[i].name, 0 };
	memcpy(y + m->nsyms, m->names, nnames);
	xom_plan_seal(h);
	const char *why;
	if (xom_plan_check(buf, total, &why) != 0) {
		fprintf(stderr, "xom: %s: internal error: plan %s\n", argv[1], why);
		return 1;
	}
	if (xom_write_all(1, buf, total) != 0) {
		fprintf(stderr, "xom: %s: cannot write the plan: %s\n", argv[1],
		        strerror(errno));
		return 2;
	}
	xom_map_free(m);
	free(buf);
	return 0;
}
