/*
 * xom_loader.h - the runtime core, as the LD_PRELOAD door (preload/) and the
 * LD_AUDIT module (loader/audit.c) see it.
 *
 * The core finds each loaded object's plan (from the plan cache, or from the
 * xom-plan helper on a miss), applies it with the pkey backend, and owns the
 * SIGSEGV handler that reports reads of protected code.
 *
 * XOM_OPTIONS is a list of key=value pairs separated by ':':
 *   mode=enforce|audit|off   enforce (default) kills a reader of protected
 *                            code, audit logs the read and lets it go on,
 *                            off leaves the program alone.
 *   backend=pkey|none        none plans every object but changes nothing; it
 *                            counts the protection calls it would have made.
 *   require=0|1              1: refuse to run (exit 127) when protection keys
 *                            are unavailable or XOM_OPTIONS is invalid.
 *   verbose=N                1: one line per object; 2: also the totals.
 *   log=PATH                 write the xom: lines there instead of fd 2.
 *   cache=DIR|off            plan cache directory (default
 *                            $XDG_CACHE_HOME/xom, else $HOME/.cache/xom).
 *   profile=PATH             pages read in audit mode are appended here; in
 *                            every mode the pages listed stay readable.
 *   exclude=PAT,...          fnmatch patterns, matched against an object's
 *                            path and its base name, to leave alone.
 * An unknown key or a bad value prints one line naming it, and xom then
 * protects nothing (the program runs as if xom were absent), because
 * guessing what a mistyped option meant could weaken or break the program;
 * with require=1 anywhere in the string the program is refused instead.
 *
 * Only one copy of the core is active per process.  When both libraries are
 * loaded, the audit module (which starts first and sees every object) owns
 * the key, the objects and the handler, and the preload library forwards its
 * sigaction calls to it through xom_audit_api.
 */
#ifndef XOM_LOADER_H
#define XOM_LOADER_H

#include <link.h>
#include <signal.h>
#include <stdint.h>

/* Start-up: reads XOM_OPTIONS and allocates the key.  who names the door
 * ("preload" or "audit") in messages.  Returns 1 when xom is active. */
int xom_start(const char *who);

/* Protects one loaded object.  name is the link map's name ("" for the main
 * program), bias its load bias, phdr/phnum its program headers in memory
 * (may be NULL when unknown).  Safe to call twice for the same mapping. */
void xom_add_object(const char *name, uintptr_t bias,
                    const ElfW(Phdr) *phdr, int phnum);

/* The same for a link map, whose program headers are found in memory: the
 * auxiliary vector's for the main program (is_main), else the ELF header
 * at the load bias. */
void xom_add_link_map(struct link_map *map, int is_main);

/* Forgets every object whose executable mappings overlap [start, end):
 * their addresses have been unmapped or reused. */
void xom_forget_range(uintptr_t start, uintptr_t end);

/* Protects every object dl_iterate_phdr shows that is not yet protected,
 * and forgets the ones that were unloaded. */
void xom_sync_objects(void);

/* Serialises dlopen/dlclose with xom_sync_objects so that an object unloaded
 * and loaded again at the same address is never mistaken for the old one. */
void xom_lock(void);
void xom_unlock(void);
void xom_lock_reset(void);      /* in a fork child */

/* The program's view of SIGSEGV: xom's handler stays installed and passes
 * faults that are not reads of protected code to the handler set here.
 * Returns -1 when xom is not active: the caller uses the real sigaction. */
int xom_sigaction(const struct sigaction *act, struct sigaction *old);

/* The program headers of a mapped object (see xom_add_link_map), or NULL. */
const ElfW(Phdr) *xom_link_map_phdrs(const struct link_map *map, int is_main,
                                     int *phnum);

/* The address of a defined dynamic symbol, found through DT_HASH without
 * the dynamic linker (which cannot look across namespaces), or NULL. */
void *xom_lookup_dynsym(uintptr_t bias, const ElfW(Phdr) *ph, int phnum,
                        const char *name);

/*
 * How the two doors meet.  dl_iterate_phdr shows only the caller's
 * namespace, so libxom.so cannot see the audit module; the audit module,
 * though, sees libxom.so being mapped (before its relocation and its
 * constructor) and stores its API in libxom.so's exported
 * xom_preload_link.  libxom.so's constructor then finds it there.
 */
struct xom_audit_api {
	uint32_t magic;         /* XOM_AUDIT_MAGIC */
	uint32_t version;       /* 1 */
	int (*sigaction)(const struct sigaction *act, struct sigaction *old);
};
struct xom_preload_link {
	const struct xom_audit_api *audit;
};
#define XOM_AUDIT_MAGIC 0x786f6d61u
#define XOM_PRELOAD_LINK_NAME "xom_preload_link"

#endif
