/*
 * audit.c - the LD_AUDIT door: libxom-audit.so.
 *
 * The dynamic linker calls la_objopen for every object it maps, in every
 * namespace, including the ones libc opens by itself (NSS, iconv), after
 * mapping and before relocation or any of the object's code runs, and
 * la_activity(LA_ACT_CONSISTENT) when a batch of them is mapped: at
 * start-up after relocation and before any constructor, on dlopen before
 * relocation.  Objects are collected in la_objopen and protected at
 * la_activity: without text relocations (objects with them are left
 * alone) relocation never writes to code pages, so protecting first is
 * harmless, and nothing of the new objects has run.
 *
 * This module runs in a namespace of its own, with its own copy of libc,
 * which the dynamic linker does not report to la_objopen: la_version
 * protects that namespace itself.  The program's calls of the signal and
 * key functions of libc are bound to xom's (la_symbind64), and once the
 * program's libc is relocated xom's handler is installed through it, so
 * that the program's unwinders find libc's signal trampoline.
 *
 * A dlopen cannot be made to fail from here: with require=1, a library
 * that cannot be protected later ends the program.
 *
 * Phase: la_version is start; la_objopen is pass 1 of a batch, inside the
 * dynamic linker; la_activity runs the batch (object phase) while ld.so
 * holds its load lock.
 */
#include <elf.h>
#include <link.h>
#include "../loader/loader.h"
#include "../loader/sys.h"
#include "../loader/xom_loader.h"

static int audit_sigaction(const struct sigaction *act, struct sigaction *old)
{
	return xom_sigaction(act, old);
}

XOM_EXPORT const struct xom_audit_api xom_audit_api = {
	.magic = XOM_AUDIT_MAGIC,
	.version = 2,
	.sigaction = audit_sigaction,
	.key_guard = xom_key_guard,
};

static uintptr_t main_cookie;           /* the base namespace's main map */
static const struct link_map *libc_map; /* the program's libc */
static const ElfW(Phdr) *libc_ph;
static int libc_phnum;

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int protect_own(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	xom_batch_add(info->dlpi_name, info->dlpi_addr, info->dlpi_phdr,
	              info->dlpi_phnum, XOM_ADD_OTHER_NS);
	return 0;
}

XOM_EXPORT unsigned int la_version(unsigned int version)
{
	if (version < 1)
		return 0;
	/* dl_iterate_phdr, called from here, walks this module's namespace:
	 * the module, its libc and the dynamic linker. */
	if (xom_start("audit")) {
		dl_iterate_phdr(protect_own, NULL);
		xom_batch_run();
	}
	/* Stay loaded even when inactive: libxom.so asks us about SIGSEGV. */
	return LAV_CURRENT;
}

/* libxom.so, loaded too: tell it that this module owns the protection. */
static void link_preload(struct link_map *map, const ElfW(Phdr) *ph, int n)
{
	if (strcmp(base_name(map->l_name), "libxom.so") != 0)
		return;
	struct xom_preload_link *link =
		xom_lookup_dynsym(map->l_addr, ph, n, XOM_PRELOAD_LINK_NAME);
	if (link)
		link->audit = &xom_audit_api;
}

XOM_EXPORT unsigned int la_objopen(struct link_map *map, Lmid_t lmid,
                                   uintptr_t *cookie)
{
	int is_main = lmid == LM_ID_BASE && !main_cookie
	              && (!map->l_name || !*map->l_name);
	int n = 0;
	const ElfW(Phdr) *ph = xom_link_map_phdrs(map, is_main, &n);
	unsigned flags = 0;

	*cookie = (uintptr_t)map;
	if (is_main)
		main_cookie = *cookie;
	if (ph && map->l_name && *map->l_name)
		link_preload(map, ph, n);
	if (lmid == LM_ID_BASE && map->l_name
	    && !strncmp(base_name(map->l_name), "libc.so.", 8)) {
		libc_map = map;
		libc_ph = ph;
		libc_phnum = n;
		flags |= LA_FLG_BINDTO;
	}
	/* Bindings from the program's objects to libc are reported, so that
	 * la_symbind64 can hand out xom's signal and key functions; libxom.so
	 * has its own. */
	if (lmid == LM_ID_BASE && xom_active
	    && (!map->l_name || strcmp(base_name(map->l_name), "libxom.so")))
		flags |= LA_FLG_BINDFROM;
	xom_batch_add(map->l_name, map->l_addr, ph, n,
	              (is_main ? XOM_ADD_MAIN : 0)
	              | (lmid != LM_ID_BASE ? XOM_ADD_OTHER_NS : 0));
	return xom_active ? flags : 0;
}

/* The program's libc, relocated: its sigaction installs xom's handler with
 * libc's own return trampoline, and its functions are what xom's stand-ins
 * call through. */
static void adopt_libc(void)
{
	if (!libc_map || !libc_ph)
		return;
	uintptr_t b = libc_map->l_addr;
	xom_libc.sigaction = xom_lookup_dynsym(b, libc_ph, libc_phnum, "sigaction");
	xom_libc.signal = xom_lookup_dynsym(b, libc_ph, libc_phnum, "signal");
	xom_libc.sysv_signal = xom_lookup_dynsym(b, libc_ph, libc_phnum, "sysv_signal");
	xom_libc.sigset = xom_lookup_dynsym(b, libc_ph, libc_phnum, "sigset");
	xom_libc.sigignore = xom_lookup_dynsym(b, libc_ph, libc_phnum, "sigignore");
	xom_libc.siginterrupt = xom_lookup_dynsym(b, libc_ph, libc_phnum, "siginterrupt");
	xom_libc.pkey_free = xom_lookup_dynsym(b, libc_ph, libc_phnum, "pkey_free");
	xom_libc.pkey_set = xom_lookup_dynsym(b, libc_ph, libc_phnum, "pkey_set");
	xom_libc.errno_location = xom_lookup_dynsym(b, libc_ph, libc_phnum,
	                                            "__errno_location");
	xom_fault_use_libc(xom_libc.sigaction);
}

XOM_EXPORT void la_activity(uintptr_t *cookie, unsigned int flag)
{
	if (flag != LA_ACT_CONSISTENT || !xom_active)
		return;
	if (xom_batch_run() != 0) {
		xom_say("refusing to go on: a library that the program loads cannot be protected (require=1)");
		x_exit_group(XOM_REFUSED_STATUS);
	}
	if (*cookie == main_cookie && !xom_started) {
		adopt_libc();
		xom_started_up();
	}
}

/* The program's references to these libc functions are bound to xom's. */
XOM_EXPORT uintptr_t la_symbind64(ElfW(Sym) *sym, unsigned int ndx,
                                  uintptr_t *refcook, uintptr_t *defcook,
                                  unsigned int *flags, const char *name)
{
	static const struct { const char *name; void *fn; } calls[] = {
		{ "sigaction", (void *)xom_call_sigaction },
		{ "signal", (void *)xom_call_signal },
		{ "bsd_signal", (void *)xom_call_signal },
		{ "ssignal", (void *)xom_call_signal },
		{ "sysv_signal", (void *)xom_call_sysv_signal },
		{ "__sysv_signal", (void *)xom_call_sysv_signal },
		{ "sigset", (void *)xom_call_sigset },
		{ "sigignore", (void *)xom_call_sigignore },
		{ "siginterrupt", (void *)xom_call_siginterrupt },
		{ "pkey_free", (void *)xom_call_pkey_free },
		{ "pkey_set", (void *)xom_call_pkey_set },
	};

	(void)ndx;
	(void)refcook;
	(void)flags;
	if (*defcook != (uintptr_t)libc_map || (name[0] != 's' && name[0] != 'b'
	                                         && name[0] != 'p' && name[0] != '_'))
		return sym->st_value;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (!strcmp(name, calls[i].name))
			return (uintptr_t)calls[i].fn;
	return sym->st_value;
}

XOM_EXPORT unsigned int la_objclose(uintptr_t *cookie)
{
	struct link_map *map = (struct link_map *)*cookie;
	int n = 0;
	const ElfW(Phdr) *ph = map ? xom_link_map_phdrs(map, 0, &n) : NULL;

	for (int i = 0; ph && i < n; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X))
			xom_forget_range(map->l_addr + ph[i].p_vaddr,
			                 map->l_addr + ph[i].p_vaddr + ph[i].p_memsz);
	return 0;
}
