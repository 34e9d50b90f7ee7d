/*
 * apply.c - one loaded object, from its mapping to its protection: name it,
 * get its plan, check that the plan describes this mapping, and apply it.
 *
 * Phase: object.  Runs with the dynamic linker's lock (la_objopen,
 * dl_iterate_phdr callbacks) or xom_lock held.  If anything is wrong the
 * object is left as the kernel mapped it, and one line says why.
 */
#include <errno.h>
#include <limits.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "loader.h"
#include "xom_loader.h"

#define MAX_PROFILE_PAGES 512

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
		    || s[k].memsz != ph[i].p_memsz)
			return 0;
		k++;
	}
	return k == h->nsegs;
}

static const char *whole_reason(int r)
{
	switch (r) {
	case XOM_WHOLE_TEXTREL: return "it has text relocations (DT_TEXTREL)";
	case XOM_WHOLE_WRITABLE: return "it has a writable executable segment";
	default: return "the scanner keeps the whole file readable";
	}
}

/* Protects [s, e) minus the profile's pages; returns pages protected or
 * -1 (with errno), leaving the caller to undo. */
static long apply_run(uintptr_t bias, uint64_t s, uint64_t e,
                      const uint64_t *keep, size_t nkeep)
{
	long pages = 0;
	uint64_t cur = s;

	for (size_t i = 0; i <= nkeep; i++) {
		uint64_t stop = i < nkeep ? keep[i] : e;
		if (stop < cur)
			continue;
		if (stop > e)
			stop = e;
		if (stop > cur) {
			if (xom_protect(bias + cur, stop - cur) != 0)
				return -1;
			pages += (long)((stop - cur) / XOM_PAGE);
		}
		if (i < nkeep && keep[i] + XOM_PAGE > cur)
			cur = keep[i] + XOM_PAGE;
		if (cur >= e)
			break;
	}
	return pages;
}

static void say_applied(const char *path, const struct xom_plan_head *h,
                        long xom, unsigned long calls)
{
	if (xom_opt.verbose < 1)
		return;
	xom_say("%s: %lu pages execute-only, %lu kept readable, %lu protection calls%s",
	        path, (unsigned long)xom, (unsigned long)(h->exec_pages - xom), calls,
	        xom_opt.backend == XOM_BACKEND_NONE ? " not made (backend=none)" : "");
}

static void apply_plan(const char *path, uintptr_t bias,
                       const ElfW(Phdr) *ph, int phnum,
                       const struct xom_plan_head *h, const char *profile_key)
{
	static uint64_t keep[MAX_PROFILE_PAGES];
	size_t nkeep = xom_profile_pages(profile_key, keep, MAX_PROFILE_PAGES);
	const struct xom_plan_run *r = xom_plan_runs(h);
	unsigned long calls0 = xom_prot_calls;
	long xom = 0;

	for (uint32_t i = 0; i < h->nruns; i++) {
		long n = apply_run(bias, r[i].start, r[i].end, keep, nkeep);
		if (n < 0) {
			int err = errno;
			/* The failing call may have changed part of its range
			 * before it gave up, so every run up to and including
			 * this one goes back to the protection it was mapped
			 * with: the object works as if xom were absent. */
			for (uint32_t j = 0; j <= i; j++)
				xom_unprotect(bias + r[j].start, r[j].end - r[j].start,
				              xom_elf_seg_prot(ph, phnum, r[j].start));
			errno = err;
			xom_say("%s: pkey_mprotect failed (%m); left unprotected", path);
			return;
		}
		xom += n;
	}
	say_applied(path, h, xom, xom_prot_calls - calls0);
}

/* The profile's name for an object: its build-id in hex, else its path. */
static void profile_key(const struct xom_file_id *id, const char *path,
                        char *out, size_t cap)
{
	if (!id->build_id_len || (size_t)id->build_id_len * 2 >= cap) {
		xom_copy_str(out, cap, path);
		return;
	}
	for (int i = 0; i < id->build_id_len; i++) {
		out[2 * i] = "0123456789abcdef"[id->build_id[i] >> 4];
		out[2 * i + 1] = "0123456789abcdef"[id->build_id[i] & 15];
	}
	out[2 * id->build_id_len] = 0;
}

/* The main program's file: not AT_EXECFN, which for a #! script names the
 * script, so that the interpreter really mapped would go unprotected. */
static const char *main_path(void)
{
	static char exe[PATH_MAX];

	if (!exe[0]) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0)
			return NULL;
		exe[n] = 0;
	}
	return exe;
}

static void protect_file(const char *path, uintptr_t bias,
                         const ElfW(Phdr) *ph, int phnum, uintptr_t lo,
                         uintptr_t hi)
{
	struct xom_file_id id;
	char key[132];
	const struct xom_plan_head *h = NULL;

	memset(&id, 0, sizeof(id));
	xom_elf_build_id(bias, ph, phnum, &id);
	profile_key(&id, path, key, sizeof(key));
	if (stat(path, &id.st) != 0) {
		xom_say("%s: cannot stat the file (%m); left unprotected", path);
	} else if ((h = xom_plan_get(path, &id)) != NULL) {
		if (h->whole_reason)
			xom_say("%s: left unprotected because %s", path,
			        whole_reason(h->whole_reason));
		else if (!segs_match(h, ph, phnum))
			xom_say("%s: the plan's segments differ from the mapped ones; left unprotected",
			        path);
		else
			apply_plan(path, bias, ph, phnum, h, key);
	}
	xom_object_remember(bias, lo, hi, path, key, h);
}

void xom_add_object(const char *name, uintptr_t bias,
                    const ElfW(Phdr) *ph, int phnum)
{
	const char *path = name;
	uintptr_t lo, hi;

	if (!xom_active || !ph)
		return;
	xom_elf_exec_span(bias, ph, phnum, &lo, &hi);
	if (lo >= hi)
		return;         /* Nothing executable (a pure data object). */
	if ((!name || !*name) && !(path = main_path()))
		return;
	if (xom_object_known(bias, lo, path))
		return;
	xom_forget_range(lo, hi);
	if (!strncmp(path, "linux-vdso", 10)
	    || (uintptr_t)getauxval(AT_SYSINFO_EHDR) == lo) {
		xom_object_remember(bias, lo, hi, "[vdso]", "[vdso]", NULL);
		return;         /* The vDSO has no file and stays readable. */
	}
	if (xom_opt_excludes(&xom_opt, path)) {
		if (xom_opt.verbose >= 1)
			xom_say("%s: excluded; left unprotected", path);
		xom_object_remember(bias, lo, hi, path, path, NULL);
		return;
	}
	protect_file(path, bias, ph, phnum, lo, hi);
}

void xom_add_link_map(struct link_map *map, int is_main)
{
	int n = 0;
	const ElfW(Phdr) *ph = xom_link_map_phdrs(map, is_main, &n);

	xom_add_object(map->l_name, map->l_addr, ph, n);
}
