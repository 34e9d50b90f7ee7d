/*
 * format.c - the plan file format (xom_plan.h): checksums, sealing,
 * checking, symbol lookup and writing.  Shared by the runtime and the
 * xom-plan helper.  Everything here runs in the fault handler too: no
 * allocation, no locks, no stdio.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "xom_plan.h"

#define PAGE XOM_PLAN_PAGE

uint64_t xom_fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--) {
		h ^= *c++;
		h *= 0x100000001b3ull;
	}
	return h;
}

static size_t head_span(const struct xom_plan_head *h)
{
	return sizeof(*h) + (size_t)h->nsegs * sizeof(struct xom_plan_seg)
	       + (size_t)h->nruns * sizeof(struct xom_plan_run);
}

static uint64_t sum_of_head(const struct xom_plan_head *h)
{
	struct xom_plan_head copy = *h;

	copy.sum_head = copy.sum_syms = 0;
	uint64_t s = xom_fnv(XOM_FNV_INIT, &copy, sizeof(copy));
	return xom_fnv(s, h + 1, head_span(h) - sizeof(*h));
}

static uint64_t sum_of_syms(const struct xom_plan_head *h)
{
	const char *base = (const char *)h + head_span(h);

	return xom_fnv(XOM_FNV_INIT, base, h->total - head_span(h));
}

void xom_plan_seal(struct xom_plan_head *h)
{
	h->sum_head = sum_of_head(h);
	h->sum_syms = sum_of_syms(h);
}

static int run_in_segs(const struct xom_plan_head *h,
                       const struct xom_plan_run *r)
{
	const struct xom_plan_seg *s = (const void *)(h + 1);

	for (uint32_t i = 0; i < h->nsegs; i++) {
		uint64_t lo = s[i].vaddr & ~(uint64_t)(PAGE - 1);
		uint64_t hi = s[i].vaddr + s[i].memsz;
		if (r->start >= lo && r->end <= hi + PAGE - 1)
			return 1;
	}
	return 0;
}

int xom_plan_check(const void *buf, size_t len, const char **why)
{
	const struct xom_plan_head *h = buf;

	if (len < sizeof(*h))
		return *why = "shorter than its header", -1;
	if (memcmp(h->magic, XOM_PLAN_MAGIC, 8) != 0)
		return *why = "bad magic", -1;
	if (h->format != XOM_PLAN_FORMAT)
		return *why = "unknown format version", -1;
	if (h->total != len)
		return *why = "length does not match its header (truncated?)", -1;
	uint64_t need = sizeof(*h) + (uint64_t)h->nsegs * sizeof(struct xom_plan_seg)
	                + (uint64_t)h->nruns * sizeof(struct xom_plan_run)
	                + (uint64_t)h->nsyms * sizeof(struct xom_plan_sym)
	                + h->names_len;
	if (need != len)
		return *why = "counts do not match its length", -1;
	if (h->build_id_len > sizeof(h->build_id))
		return *why = "build-id too long", -1;
	if (h->whole_reason && h->nruns)
		return *why = "whole-file reason with execute-only runs", -1;
	if (h->sum_head != sum_of_head(h))
		return *why = "header checksum mismatch", -1;
	const struct xom_plan_seg *s = (const void *)(h + 1);
	for (uint32_t i = 0; i < h->nsegs; i++)
		if (s[i].vaddr + s[i].memsz < s[i].vaddr)
			return *why = "segment wraps around", -1;
	const struct xom_plan_run *r = (const void *)(s + h->nsegs);
	for (uint32_t i = 0; i < h->nruns; i++) {
		if (r[i].start >= r[i].end || (r[i].start | r[i].end) % PAGE)
			return *why = "run not page-aligned or empty", -1;
		if (i && r[i].start < r[i - 1].end)
			return *why = "runs not sorted", -1;
		if (!run_in_segs(h, &r[i]))
			return *why = "run outside the executable segments", -1;
	}
	return 0;
}

const char *xom_plan_symbol(const struct xom_plan_head *h, uint64_t addr,
                            uint64_t *off)
{
	if (!h || !h->nsyms || h->sum_syms != sum_of_syms(h))
		return NULL;
	const struct xom_plan_sym *sym =
		(const void *)((const char *)h + head_span(h));
	const char *names = (const char *)(sym + h->nsyms);
	uint32_t lo = 0, hi = h->nsyms;

	/* The last symbol that starts at or below addr. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (sym[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	sym += lo - 1;
	if (sym->name >= h->names_len
	    || !memchr(names + sym->name, 0, h->names_len - sym->name))
		return NULL;
	*off = addr - sym->addr;
	return names + sym->name;
}

int xom_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int xom_plan_write(int fd, const struct xom_plan_head *h)
{
	return xom_write_all(fd, h, h->total);
}
