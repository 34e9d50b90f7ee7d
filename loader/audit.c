/*
 * audit.c - the LD_AUDIT door: libxom-audit.so.
 *
 * The dynamic linker calls la_objopen for every object it maps, in every
 * namespace, including the ones libc opens by itself (NSS, iconv), after
 * mapping and before relocation or any of the object's code runs.  The plan
 * is applied right there: without text relocations (objects with them are
 * left alone) relocation never writes to code pages, so protecting first is
 * harmless, and nothing of the object can run unprotected.  This module runs
 * in its own link-map namespace with its own copy of libc.
 */
#include <elf.h>
#include <link.h>
#include <string.h>

#include "xom_loader.h"

static int audit_sigaction(const struct sigaction *act, struct sigaction *old)
{
	return xom_sigaction(act, old);
}

__attribute__((visibility("default")))
const struct xom_audit_api xom_audit_api = {
	.magic = XOM_AUDIT_MAGIC,
	.version = 1,
	.sigaction = audit_sigaction,
};

__attribute__((visibility("default")))
unsigned int la_version(unsigned int version)
{
	if (version < 1)
		return 0;
	xom_start("audit");
	/* Stay loaded even when inactive: libxom.so asks us about SIGSEGV. */
	return LAV_CURRENT;
}

/* libxom.so, loaded too: tell it that this module owns the protection. */
static void link_preload(struct link_map *map, const ElfW(Phdr) *ph, int n)
{
	const char *base = strrchr(map->l_name, '/');

	base = base ? base + 1 : map->l_name;
	if (strcmp(base, "libxom.so") != 0)
		return;
	struct xom_preload_link *link =
		xom_lookup_dynsym(map->l_addr, ph, n, XOM_PRELOAD_LINK_NAME);
	if (link)
		link->audit = &xom_audit_api;
}

__attribute__((visibility("default")))
unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
	static int main_seen;
	int is_main = lmid == LM_ID_BASE && !main_seen
	              && (!map->l_name || !*map->l_name);
	int n = 0;
	const ElfW(Phdr) *ph = xom_link_map_phdrs(map, is_main, &n);

	main_seen |= is_main;
	*cookie = (uintptr_t)map;
	if (ph && map->l_name && *map->l_name)
		link_preload(map, ph, n);
	xom_add_object(map->l_name, map->l_addr, ph, n);
	return 0;       /* No symbol-binding callbacks: they cost time. */
}

__attribute__((visibility("default")))
unsigned int la_objclose(uintptr_t *cookie)
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
