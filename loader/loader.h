/*
 * loader.h - what the runtime's files share.  Nothing here is exported from
 * the libraries (-fvisibility=hidden); the doors see xom_loader.h.
 *
 * The runtime runs in three phases, and each file says which of them its
 * functions belong to:
 *   start   xom_start, from the preload constructor or the audit module's
 *           la_version.  No stdio and no host malloc: what it keeps lives
 *           in static storage.
 *   object  per loaded object (xom_add_object and what it calls), with the
 *           dynamic linker's lock or xom_lock held.  May open files and
 *           spawn the helper; keeps no heap memory.
 *   fault   the SIGSEGV handler: any thread, any moment, with the kernel's
 *           default PKRU, which denies reads of xom's pages.  Only
 *           async-signal-safe calls and reads of xom's own tables.
 * Declarations marked [fault] are safe in the fault phase.
 */
#ifndef XOM_LOADER_INT_H
#define XOM_LOADER_INT_H

#include <link.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "options.h"
#include "plan/xom_plan.h"

#define XOM_PAGE 4096ul
#define XOM_EXPORT __attribute__((visibility("default")))

/* ---- start.c ----------------------------------------------------------- */
extern struct xom_opts xom_opt;         /* parsed once, read everywhere */
extern int xom_active;                  /* 1 once start-up succeeded */
/* Says why and exits 127 (require=1). */
__attribute__((noreturn)) void xom_refuse(const char *why);

/* ---- say.c: messages [fault] ------------------------------------------- */
/* snprintf-like for %s %c %d %u %x (l, z, #) and %m; always NUL-ends. */
size_t xom_fmt(char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
size_t xom_vfmt(char *buf, size_t cap, const char *fmt, va_list ap);
/* One "xom: ..." line on the log descriptor; keeps errno. */
void xom_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static inline void xom_copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);

	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

/* ---- pkey.c: the key and the protection calls -------------------------- */
extern int xom_key;                     /* -1 until allocated [fault] */
extern unsigned long xom_prot_calls;    /* calls made, or counted (none) */
int xom_key_alloc(void);                /* start: 0, or -1 after one line */
int xom_protect(uintptr_t a, size_t len);               /* object */
void xom_unprotect(uintptr_t a, size_t len, int prot);  /* object */

/* ---- elfmem.c: ELF structures of mapped objects ------------------------ */
/* A file's identity, and the build-id of its mapped image. */
struct xom_file_id {
	struct stat st;
	uint8_t build_id_len;
	uint8_t build_id[64];
};
void xom_elf_build_id(uintptr_t bias, const ElfW(Phdr) *ph, int phnum,
                      struct xom_file_id *id);
/* The page-aligned span of the executable segments; lo >= hi if none. */
void xom_elf_exec_span(uintptr_t bias, const ElfW(Phdr) *ph, int phnum,
                       uintptr_t *lo, uintptr_t *hi);
/* The protection the segment holding vaddr was mapped with. */
int xom_elf_seg_prot(const ElfW(Phdr) *ph, int phnum, uintptr_t vaddr);

/* ---- objects.c: the table of loaded objects ---------------------------- */
/*
 * Written only under the dynamic linker's lock or xom_lock, read without a
 * lock by the fault handler: a slot is filled first and published by
 * setting live last (release), and readers load live first (acquire).
 */
struct xom_object {
	int live;
	uintptr_t bias, lo, hi;         /* executable span in memory */
	const struct xom_plan_head *plan;
	char profile_key[132];          /* build-id in hex, or the path */
	char path[256];
};
const struct xom_object *xom_object_at(uintptr_t addr);        /* [fault] */
int xom_object_known(uintptr_t bias, uintptr_t lo, const char *path);
void xom_object_remember(uintptr_t bias, uintptr_t lo, uintptr_t hi,
                         const char *path, const char *profile_key,
                         const struct xom_plan_head *plan);

/* ---- cache.c and helper.c: plans --------------------------------------- */
/* The plan for the file at path, from this process's plans, the cache or
 * the helper; NULL after one line saying why (object). */
const struct xom_plan_head *xom_plan_get(const char *path,
                                         const struct xom_file_id *id);
/* Runs xom-plan on path; the plan in private memory, or NULL after one
 * line (object). */
struct xom_plan_head *xom_helper_run(const char *path);

/* ---- profile.c --------------------------------------------------------- */
void xom_profile_load(void);                                    /* start */
/* The profile's pages for key, sorted, at most cap (object). */
size_t xom_profile_pages(const char *key, uint64_t *out, size_t cap);
void xom_profile_append(const struct xom_object *o, uint64_t page); /* [fault] */

/* ---- fault.c ----------------------------------------------------------- */
void xom_fault_install(void);                                   /* start */

#endif
