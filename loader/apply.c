/*
 * apply.c - one plan, one mapping: check that the plan describes what is
 * mapped, that the process can afford the mappings it adds, and make its
 * runs execute-only.
 *
 * Phase: object.  If anything is wrong the object is left as the kernel
 * mapped it, and one line says why.  A run that fails half-way is undone
 * with every run before it, so that the object works as if xom were absent.
 */
#include <errno.h>
#include <sys/mman.h>

#include "loader.h"
#include "sys.h"

#define SYS_mseal_ 462          /* Linux 6.10; not in every libc's headers yet */

struct xom_totals xom_totals;

static const char *plural(unsigned long n)
{
	return n == 1 ? "" : "s";
}

/* The plan must list exactly the executable segments that are mapped. */
static int segs_match(const struct xom_plan_head *h, const ElfW(Phdr) *ph,
                      int phnum)
{
	const struct xom_plan_seg *s = xom_plan_segs(h);
	uint32_t k = 0;

	for (int i = 0; i < phnum; i++) {
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
			continue;
		if (k >= h->nsegs || s[k].vaddr != ph[i].p_vaddr
		    || s[k].memsz != ph[i].p_memsz || s[k].filesz != ph[i].p_filesz
		    || s[k].offset != ph[i].p_offset)
			return 0;
		k++;
	}
	return k == h->nsegs;
}

/* A plan found by file identity must have been made from these very bytes:
 * the identity is taken from the path, which may name another file by
 * now.  (A plan found by build-id was found for the object's shape too;
 * xom_plan.h says why that check, and not this one, runs for every
 * object.) */
static int code_matches(const struct xom_plan_head *h, uintptr_t bias)
{
	const struct xom_plan_seg *s = xom_plan_segs(h);
	uint64_t sum = XOM_HASH_INIT;

	for (uint32_t i = 0; i < h->nsegs; i++)
		sum = xom_hash(sum, (const void *)(bias + s[i].vaddr), s[i].filesz);
	return sum == h->code_sum;
}

static const char *whole_reason(int r)
{
	switch (r) {
	case XOM_WHOLE_TEXTREL: return "it has text relocations (DT_TEXTREL)";
	case XOM_WHOLE_WRITABLE: return "it has a writable executable segment";
	default: return "the scanner keeps the whole file readable";
	}
}

/* ---- vm.max_map_count ------------------------------------------------- */

static long read_long(const char *path)
{
	char buf[32];
	long v = -1;
	long fd = x_open(path, O_RDONLY | O_CLOEXEC, 0);

	if (SYS_FAILED(fd))
		return -1;
	long n = x_read((int)fd, buf, sizeof(buf) - 1);
	x_close((int)fd);
	if (n > 0) {
		buf[n] = 0;
		v = 0;
		for (char *p = buf; *p >= '0' && *p <= '9'; p++)
			v = v * 10 + (*p - '0');
	}
	return v;
}

/* The mappings of this process, counted from /proc/self/maps. */
static long count_maps(void)
{
	char buf[4096];
	long lines = 0;
	long fd = x_open("/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);

	if (SYS_FAILED(fd))
		return -1;
	for (long n; (n = x_read((int)fd, buf, sizeof(buf))) > 0; )
		for (long i = 0; i < n; i++)
			lines += buf[i] == '\n';
	x_close((int)fd);
	return lines;
}

/*
 * Whether the process can spare `add` more mappings.  Splitting a segment
 * into execute-only and readable runs adds up to two mappings a run, and a
 * program that works near vm.max_map_count without xom must keep working
 * with it: xom leaves an eighth of the limit (at least 256) to the program.
 * Counting the mappings means reading /proc/self/maps, which costs more
 * than a whole warm start, so it is done only when the limit is low or
 * xom has already added a sixteenth of it.
 */
static long map_reserve(long limit)
{
	return limit / 8 > 256 ? limit / 8 : 256;
}

static int maps_affordable(unsigned long add, long *limit_out, long *count_out)
{
	static long limit;

	if (!limit && (limit = read_long("/proc/sys/vm/max_map_count")) <= 0)
		limit = 65530;
	*limit_out = limit;
	*count_out = -1;
	if (limit >= 16384 && (long)(xom_totals.maps_added + add) <= limit / 16)
		return 1;
	long count = count_maps();
	*count_out = count;
	return count < 0 || count + (long)add + map_reserve(limit) <= limit;
}

/* ---- protecting ------------------------------------------------------- */

/* The first address that apply_run made execute-only, for the probe. */
static uintptr_t first_protected;
/* The way that protected the object being applied (XOM_VIA_*), or -1
 * before its first range: its undo takes the same way.  And where
 * apply_run stopped on a failure: the start of the range not made. */
static int obj_way;
static uint64_t failed_at;

static int refused(long rc)
{
	return rc == -EPERM || rc == -EACCES || rc == -ENOSYS;
}

/* Makes [a, a+len) of t execute-only by the first way that a seccomp
 * filter lets through (loader.h: xom_via); 0 or -errno.  A way refused
 * once is refused for good, so it is not tried again; an object that
 * began one way fails rather than go on another. */
static long protect(const struct xom_target *t, uintptr_t a, size_t len)
{
	long rc = -EPERM;

	if (xom_via == XOM_VIA_KEY) {
		rc = xom_protect(a, len);
		if (!refused(rc))
			goto done;
		xom_kernel_refused("pkey_mprotect", (int)-rc);
	}
	while (xom_via == XOM_VIA_MPROTECT || xom_via == XOM_VIA_REMAP) {
		if (obj_way >= 0 && obj_way != xom_via)
			return rc;
		xom_prot_calls++;
		rc = xom_kernel_protect(t, a, len, xom_via);
		if (rc == 0 || (!refused(rc) && rc != -ENOKEY))
			goto done;
		xom_via = rc == -ENOKEY ? XOM_VIA_NONE : xom_via + 1;
	}
	return rc;
done:
	if (rc == 0 && obj_way < 0)
		obj_way = xom_via;
	return rc;
}

static void unprotect(uintptr_t a, size_t len, int prot)
{
	if (obj_way == XOM_VIA_KEY)
		xom_unprotect(a, len, prot);
	else if (obj_way > XOM_VIA_KEY)
		xom_kernel_unprotect(a, len, prot, obj_way);
}

/* Protects [s, e) minus the profile's pages; returns pages protected or
 * -errno (failed_at then says where), leaving the caller to undo.  With
 * undo, gives back what that made of [s, upto) instead. */
static long apply_run(const struct xom_target *t, uint64_t s, uint64_t e,
                      const uint64_t *keep, size_t nkeep, int undo, uint64_t upto)
{
	uintptr_t bias = t->bias;
	long pages = 0;
	uint64_t cur = s;

	if (undo && upto < e)
		e = upto;
	for (size_t i = 0; i <= nkeep && cur < e; i++) {
		uint64_t stop = i < nkeep ? keep[i] : e;
		if (stop < cur)
			continue;
		if (stop > e)
			stop = e;
		if (stop > cur && undo) {
			unprotect(bias + cur, stop - cur, xom_elf_seg_prot(t->ph, t->phnum, s));
		} else if (stop > cur) {
			long rc = protect(t, bias + cur, stop - cur);
			if (rc != 0) {
				failed_at = cur;
				return rc;
			}
			if (!first_protected)
				first_protected = bias + cur;
			pages += (long)((stop - cur) / XOM_PAGE);
		}
		if (i < nkeep && keep[i] + XOM_PAGE > cur)
			cur = keep[i] + XOM_PAGE;
	}
	return pages;
}

/* Gives back what runs 0..upto made, run upto up to failed_at. */
static void undo_runs(const struct xom_target *t, const struct xom_plan_head *h,
                      uint32_t upto, const uint64_t *keep, size_t nkeep)
{
	const struct xom_plan_run *r = xom_plan_runs(h);

	for (uint32_t j = 0; j <= upto && j < h->nruns; j++)
		apply_run(t, r[j].start, r[j].end, keep, nkeep, 1,
		          j < upto ? r[j].end : failed_at);
}

static void say_failed(const struct xom_target *t, int err)
{
	static int said;

	if (xom_via == XOM_VIA_NONE) {
		if (!said++)
			xom_kernel_say_refused(err == ENOKEY
			        ? "the kernel gives no execute-only key either; xom steps aside and the program runs unprotected"
			        : "so are mprotect(PROT_EXEC) and mapping code again with PROT_EXEC; xom steps aside and the program runs unprotected");
	} else if (err == ESTALE) {
		xom_notice("%s: the file holds other bytes than the mapped code, which cannot be mapped again from it; left unprotected",
		           t->path);
	} else if (err == ENOEXEC && xom_via == XOM_VIA_REMAP) {
		xom_notice("%s: its code cannot be mapped again from the file mapped there (gone, replaced, not a plain file, or shorter than the code); left unprotected",
		           t->path);
	} else {
		xom_notice("%s: %s failed (%serrno %d); left unprotected", t->path,
		           xom_via == XOM_VIA_KEY ? "pkey_mprotect"
		           : xom_via == XOM_VIA_MPROTECT ? "mprotect" : "mapping code again",
		           XOM_ERR(err));
	}
}

/* Seals the runs of an object that is never unloaded, if asked to. */
static int seal_runs(const struct xom_target *t, const struct xom_plan_head *h)
{
	static int unsupported;
	const struct xom_plan_run *r = xom_plan_runs(h);

	if (!xom_opt.seal || (t->flags & XOM_OBJ_LATE) || unsupported
	    || xom_opt.backend == XOM_BACKEND_NONE)
		return unsupported ? -1 : 0;
	for (uint32_t i = 0; i < h->nruns; i++)
	{
		long rc = sys3(SYS_mseal_, (long)(t->bias + r[i].start),
		               (long)(r[i].end - r[i].start), 0);
		if (rc != 0) {
			unsupported = rc == -ENOSYS || rc == -EINVAL;
			xom_notice("%s: cannot seal its execute-only pages (%serrno %d)%s", t->path,
			        XOM_ERR((int)-rc),
			        unsupported ? "; mseal needs Linux 6.10 or later" : "");
			return -1;
		}
	}
	return 0;
}

/* Protects every run; the pages made execute-only, or -1 after undoing. */
static long apply_runs(const struct xom_target *t, const struct xom_plan_head *h)
{
	const uint64_t *keep = NULL;
	char name[XOM_KEY_NAME_MAX];
	size_t nkeep = 0;

	/* A profile is named by the build-id, or by the path without one; the
	 * name is made only when there are profiles. */
	const char *pkey = t->key->kind == XOM_KEY_BUILD_ID ? name : t->path;
	if (pkey && xom_profile_any()) {
		if (pkey == name)
			xom_key_name(t->key, name, sizeof(name));
		nkeep = xom_profile_pages(pkey, t->path, &keep);
	}
	const struct xom_plan_run *r = xom_plan_runs(h);
	long xom = 0;

	obj_way = -1;
	for (uint32_t i = 0; i < h->nruns; i++) {
		long n = apply_run(t, r[i].start, r[i].end, keep, nkeep, 0, 0);
		if (n < 0) {
			undo_runs(t, h, i, keep, nkeep);
			say_failed(t, (int)-n);
			xom = -1;
			break;
		}
		xom += n;
	}
	xom_kernel_close();
	if (nkeep)
		xom_profile_forget();
	return xom;
}

static void say_applied(const struct xom_target *t, const struct xom_plan_head *h,
                        unsigned long xom, unsigned long calls)
{
	unsigned long kept = h->exec_pages - xom;

	if (xom_opt.verbose < 1)
		return;
	xom_say("%s: %lu page%s execute-only, %lu kept readable, %lu protection call%s%s",
	        t->path, xom, plural(xom), kept, calls, plural(calls),
	        xom_opt.backend == XOM_BACKEND_NONE ? " not made (backend=none)" : "");
}

int xom_apply(const struct xom_target *t, const struct xom_plan_head *h,
              uintptr_t *probe)
{
	long limit, count;
	unsigned long calls0 = xom_prot_calls, add = 2ul * h->nruns;

	*probe = 0;
	if (h->whole_reason) {
		xom_notice("%s: left unprotected because %s", t->path,
		        whole_reason(h->whole_reason));
		return XOM_EXEMPT;
	}
	if (!segs_match(h, t->ph, t->phnum)) {
		xom_notice("%s: the plan's segments differ from the mapped ones; left unprotected",
		        t->path);
		return XOM_UNPROTECTED;
	}
	if (!h->build_id_len && !code_matches(h, t->bias)) {
		xom_notice("%s: the file on disk is not the one mapped; left unprotected",
		        t->path);
		return XOM_UNPROTECTED;
	}
	if (xom_via == XOM_VIA_NONE)
		return XOM_UNPROTECTED;
	if (!h->nruns)
		return XOM_APPLIED;
	if (!maps_affordable(add, &limit, &count)) {
		xom_notice("%s: left unprotected: its %lu more mappings would leave the program fewer than %ld of vm.max_map_count's %ld (%ld in use)",
		        t->path, add, map_reserve(limit), limit, count);
		return XOM_UNPROTECTED;
	}
	first_protected = 0;
	long xom = apply_runs(t, h);
	if (xom < 0)
		return XOM_UNPROTECTED;
	xom_totals.objects++;
	xom_totals.xom_pages += (unsigned long)xom;
	xom_totals.readable_pages += h->exec_pages - (unsigned long)xom;
	xom_totals.calls += xom_prot_calls - calls0;
	xom_totals.maps_added += add;
	say_applied(t, h, (unsigned long)xom, xom_prot_calls - calls0);
	*probe = first_protected;
	return seal_runs(t, h) == 0 ? XOM_APPLIED : XOM_UNPROTECTED;
}
