/*
 * loader.h - what the runtime's files share.  Nothing here is exported from
 * the libraries (-fvisibility=hidden); the doors see xom_loader.h.
 *
 * The runtime runs in three phases, and each file says which of them its
 * functions belong to:
 *   start   xom_start, from the preload constructor or the audit module's
 *           la_version.  No stdio and no host malloc: what it keeps lives
 *           in static storage.
 *   object  a batch of newly mapped objects (batch.c and what it calls),
 *           inside xom_enter/xom_leave: xom's lock held, the thread's
 *           signals blocked and cancellation off, so that nothing can
 *           leave the batch half done.  May open files and run the helper;
 *           never inside a dynamic-linker callback that holds its locks
 *           (dl_iterate_phdr callbacks only collect); keeps no heap memory.
 *   fault   the SIGSEGV handler: any thread, any moment, with the kernel's
 *           default PKRU, which denies reads of xom's pages.  Only
 *           async-signal-safe calls and reads of xom's own tables.
 * Declarations marked [fault] are safe in the fault phase.
 */
#ifndef XOM_LOADER_INT_H
#define XOM_LOADER_INT_H

#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "fmt.h"
#include "options.h"
#include "../formats/xom_plan.h"

#define XOM_PAGE 4096ul
#define XOM_PATH_MAX 4096
#define XOM_EXPORT __attribute__((visibility("default")))
/*
 * Every first touch of a page is a page fault, and on a machine whose
 * faults are dear (a guest that shadows its page tables: 5-10 us each)
 * the pages a warm start writes are most of what xom costs it.  So the
 * runtime's small variables share one page: .bss, which starts in the page
 * of .data that the dynamic linker has written already.  Its tables, which
 * most starts write only the first slots of, or none, are XOM_COLD: the
 * linker places .lbss after all of .bss, in the same segment.  objects.o is
 * linked first, so that the object table's first slots come right after
 * the small variables.  A table here must be zero-initialised.
 */
#define XOM_COLD __attribute__((section(".lbss")))
/* Code that a warm start never runs (a cold scan, a table that grows):
 * out of the pages of the code that it does run. */
#define XOM_RARE __attribute__((cold, noinline))
#define XOM_REFUSED_STATUS 126          /* see xom_loader.h */

/* ---- state.c: the process-wide state, written by start [fault] ------ */
extern struct xom_opts xom_opt;         /* parsed once, read everywhere */
extern int xom_active;                  /* 1 once start-up succeeded */
extern int xom_started;                 /* 1 once the first batch is done */
extern int xom_secure;                  /* AT_SECURE: the caller is not trusted */
extern unsigned xom_euid;               /* the effective user ID at start-up */
extern struct xom_dirs xom_stores_at;   /* the stores' folders */
/* Store i's folder into buf (options.h: xom_dir_path). */
const char *xom_store_dir(int i, char *buf, size_t cap);

/* ---- refuse.c: require=1 ---------------------------------------------- */
/* Says why and exits XOM_REFUSED_STATUS (require=1), unless the refusal
 * is waived for this process (xom_waiver): then it says so and returns,
 * and the program runs unprotected. */
void xom_refuse(const char *why);
/* Why require=1 does not refuse this process, or NULL: the kernel command
 * line's xom.require=0, or the program is the xom command itself.  Asked
 * only when a refusal is due, so that no other start pays for it. */
const char *xom_waiver(void);

/* ---- settings.c: the options' sources, and the notice policy --------- */
/* Reads the defaults, /etc/xom.conf and XOM_OPTIONS into xom_opt and opens
 * the log (start).  Returns 0, or -1 with what is invalid in why; *require
 * says whether require=1 was asked for, even by the invalid text. */
int xom_settings_read(int *require, char *why, size_t cap);
/* A line that says xom stepped aside or left something unprotected: said
 * as xom_say, unless the notice policy (notice=) has it keep quiet.  Not
 * for the fault phase. */
void xom_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- say.c: messages [fault] ------------------------------------------- */
/* xom_fmt, xom_vfmt and xom_errname: fmt.h. */
/* One "xom: ..." line on the log descriptor; keeps errno.  Where that is
 * /dev/null or closed, the first line of a process and its first fault
 * report (xom_say_fault) also go to the journal. */
enum { XOM_SAY_LINE, XOM_SAY_FAULT };
void xom_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void xom_say_fault(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The log descriptor, checked to be the file it was when xom opened it (a
 * daemon may have closed it and reused its number), or -1. */
int xom_log_fd(void);
void xom_log_init(int fd);                                      /* start */
/* Whether this is a systemd service (INVOCATION_ID, not believed in a
 * secure-execution program), found by xom_log_init [fault]. */
int xom_in_unit(void);

static inline void xom_copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);

	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

/* ---- pkey.c: the key and the protection calls -------------------------- */
extern int xom_key;                     /* 0 until allocated (state.c) [fault] */
extern unsigned long xom_prot_calls;    /* calls made, or counted (none) */
int xom_key_alloc(void);                /* start: 0, or -1 after one line */
long xom_protect(uintptr_t a, size_t len);      /* object: 0 or -errno */
void xom_unprotect(uintptr_t a, size_t len, int prot);  /* object */
/* 1 (after one line, once) when this thread's PKRU no longer denies reads
 * under xom's key. */
int xom_key_check(void);
/* How runs are made execute-only: with xom's key, until a seccomp filter
 * refuses it, then with the kernel's execute-only key (kernkey.c) by
 * mprotect, or by mapping again from the file where mprotect(PROT_EXEC) is
 * refused too; NONE when every way was refused. */
enum { XOM_VIA_KEY, XOM_VIA_MPROTECT, XOM_VIA_REMAP, XOM_VIA_NONE };

/* ---- hide.c: xom's own data under its key ------------------------------ */
/* Puts [p, p+len), data of xom's own, under xom's key, readable only
 * between xom_key_reads_open and xom_key_reads_close in the thread that
 * opened: 0 or -errno (object; counted among the protection calls). */
long xom_key_hide(const void *p, size_t len);
/* Lets this thread read what is under xom's key (its code too) until
 * xom_key_reads_close(what it returned); no system call.  Only inside the
 * lock, whose blocked signals keep the program's code off this thread. */
unsigned xom_key_reads_open(void);
void xom_key_reads_close(unsigned old);

/* ---- kernkey.c: the kernel's execute-only key -------------------------- */
struct xom_target;
extern int xom_via;                     /* [fault] */
/* Its number once xom used it, -1 if that could not be read; 0 before
 * [fault]. */
extern int xom_kernel_key;
/* Records the first refused call (start or object); moves xom_via on. */
void xom_kernel_refused(const char *call, int err);
/* One notice: the refused call, by what, then outcome. */
void xom_kernel_say_refused(const char *outcome);
/* Protects or gives back [a, a+len) of t by way via (XOM_VIA_MPROTECT or
 * XOM_VIA_REMAP); the first success also checks that the kernel's key
 * denies reads (-ENOKEY after undoing if not) and says so once.  A file
 * opened for re-mapping stays open until xom_kernel_close. */
long xom_kernel_protect(const struct xom_target *t, uintptr_t a, size_t len,
                        int via);
void xom_kernel_unprotect(uintptr_t a, size_t len, int prot, int via);
void xom_kernel_close(void);
/* The mapping that holds addr, from /proc/self/maps: its protection (-1
 * when not found), the file offset of addr, its file's device, inode and
 * name ("" for none, or a file deleted since) [fault]. */
struct xom_mapped { int prot; unsigned long off, major, minor, ino; char path[256]; };
void xom_mapping_of(uintptr_t addr, struct xom_mapped *m);
/* Opens the file of mapping m by its name, if that is still m's file (the
 * same inode, a regular file; st is its stat): the descriptor, or -errno
 * [fault]. */
long xom_open_mapped(const struct xom_mapped *m, struct stat *st);

/* ---- elfmem.c: ELF structures of mapped objects ------------------------ */
/* The build-id of a mapped image as a key; 0, or -1 when it has none. */
int xom_elf_build_id(uintptr_t bias, const ElfW(Phdr) *ph, int phnum,
                     struct xom_plan_key *k);
/* The shape of a mapped image (xom_plan.h: xom_shape_sum), from memory. */
uint64_t xom_elf_shape(uintptr_t bias, const ElfW(Phdr) *ph, int phnum);
/* The build-id of the ELF file at path (cold path only). */
int xom_elf_file_build_id(const char *path, struct xom_plan_key *k);
/* The page-aligned span of the executable segments; lo >= hi if none. */
void xom_elf_exec_span(uintptr_t bias, const ElfW(Phdr) *ph, int phnum,
                       uintptr_t *lo, uintptr_t *hi);
/* The protection the segment holding vaddr was mapped with. */
int xom_elf_seg_prot(const ElfW(Phdr) *ph, int phnum, uintptr_t vaddr);

/* ---- objects.c: the table of loaded objects, and xom's lock ------------ */
enum {
	XOM_OBJ_LATE = 1,       /* arrived after start-up: can be unloaded */
	XOM_OBJ_OTHER_NS = 2,   /* in another link-map namespace (XOM_ADD_OTHER_NS) */
	XOM_OBJ_MAIN = 4,       /* the main program (XOM_ADD_MAIN) */
	XOM_OBJ_BUILD_ID = 8,   /* key is a build-id (else a file identity) */
	XOM_OBJ_VERIFY = 16,    /* an arrival already known: check its key */
	XOM_OBJ_NEW = 32,       /* an arrival that is a new link map: what the
	                         * table holds at its place was unloaded */
};
/*
 * Written only inside xom_enter/xom_leave, read without a lock by the fault
 * handler: a slot is filled first and published by setting live last
 * (release), and readers load live first (acquire).  It holds what a fault
 * report needs and nothing more: never a plan, which would tell a reader of
 * memory which code pages are readable.
 */
struct xom_object {
	int live;
	uint8_t flags;
	uint16_t path_room;             /* bytes at path this slot may reuse */
	uint32_t seen;                  /* sync generation (objects.c) */
	uintptr_t bias, lo, hi;         /* executable span in memory */
	uintptr_t probe;                /* an execute-only address, or 0 */
	const void *ph;                 /* its program headers (a key, never read) */
	const char *path;               /* in objects.c's names, never freed */
	struct xom_plan_key key;        /* the plan's key (kind 0: none) */
};
/* The longest name kept of an object's path, NUL included. */
#define XOM_NAME_MAX 256
const struct xom_object *xom_object_at(uintptr_t addr);        /* [fault] */
struct xom_object *xom_object_find(uintptr_t bias, uintptr_t lo);
/* The same object found by its program headers' address, without its span. */
struct xom_object *xom_object_find_ph(uintptr_t bias, const void *ph);
/* Remembers o, with a copy of path (cut to XOM_NAME_MAX - 1 bytes). */
void xom_object_remember(const struct xom_object *o, const char *path);
/* The late objects (XOM_OBJ_LATE) that the table holds. */
long xom_objects_late(void);
/* About n objects are about to be remembered: populates their slots. */
void xom_objects_reserve(size_t n);
/* Calls fn for every live object; fn may forget it. */
void xom_objects_each(void (*fn)(struct xom_object *o, void *arg), void *arg);
void xom_object_forget(struct xom_object *o);
/* 1 while no slot of the table was ever used. */
int xom_objects_none(void);
/* The slots used so far, live or not: what a pass over the table costs. */
int xom_objects_used(void);

/* xom_enter and xom_leave, the object phase's lock: xom_loader.h. */

/* ---- stores.c: the plan stores ----------------------------------------- */
/* A store's index is mapped (map: kept from an earlier batch, or mapped
 * for this one from the file id, on a local file system if local), or,
 * for a small batch, read in place through fd (read); len is its size in
 * both cases. */
struct xom_store {
	const void *map;
	size_t len;
	int tried, fd, kept, local;
	uint32_t nslots;
	struct xom_file_ident id;
};
/* keep: what is mapped now stays mapped after the batch, under xom's key;
 * reads_open: this thread may read the key's pages (pkru to restore). */
struct xom_stores {
	struct xom_store s[XOM_NSTORES];
	int read, keep, reads_open;
	unsigned pkru;
};
/* Before a batch that looks up n objects; a small batch reads its plans
 * into room (cap bytes), the batch's own table past its arrivals. */
void xom_stores_open(struct xom_stores *st, size_t n, void *room, size_t cap);
/* The plan for k made from a file of that shape in store i, and the set
 * of plans in store i for a batch whose keys fold to hash; or NULL.  A
 * store is opened when first asked. */
const struct xom_plan_head *xom_stores_find(struct xom_stores *st, int i,
                                            const struct xom_plan_key *k,
                                            uint64_t shape);
const struct xom_set_head *xom_stores_find_set(struct xom_stores *st, int i,
                                               uint64_t hash);
void xom_stores_close(struct xom_stores *st);
/* storeread.c: the plan for k and shape in a store that a small batch
 * reads rather than maps (stores.c opened it), or NULL; and the end of a
 * batch, which wipes what was read. */
const struct xom_plan_head *xom_store_read_find(struct xom_store *s,
                                               const struct xom_plan_key *k,
                                               uint64_t shape);
const struct xom_set_head *xom_store_read_set(struct xom_store *s, uint64_t hash);
/* The room that a small batch's plans are read into, until the batch
 * ends (xom_store_read_wipe). */
void xom_store_read_room(void *room, size_t cap);
void xom_store_read_wipe(void);
/* A helper ran: a store found missing may exist now. */
void xom_stores_changed(void);

/* ---- helper.c: the xom-plan helper ------------------------------------- */
void xom_helper_locate(void);                                   /* start */
/* The absolute path of name, relative to this library's folder, in buf;
 * NULL before xom_helper_locate found it, or when it does not fit. */
const char *xom_beside(const char *name, char *buf, size_t cap);
/* 1 when the main program is the xom command that belongs to this
 * library (beside it, or PREFIX/bin/xom), by the file the kernel runs. */
int xom_own_command(void);
/*
 * Runs the helper for n files, once, or as many times as their paths
 * need; on return out[i] is each file's plan in *mem (NULL if it has
 * none: why[i] says why, or is NULL when the run that had the file
 * failed).  keys, when not NULL, are the nkeys keys of the whole batch,
 * whose set the helper keeps too.  *mem is what xom_helper_release
 * unmaps.  Returns 0, or -1 after one line when a run failed.
 */
int xom_helper_run(const char *const *paths, size_t n,
                   const struct xom_plan_key *const *keys, size_t nkeys,
                   const struct xom_plan_head **out, const char **why,
                   void **mem);
/* One run with no file, which keeps a set of the keys' plans that the
 * user's store has; says nothing when it cannot. */
int xom_helper_keep_set(const struct xom_plan_key *const *keys, size_t nkeys,
                        void **mem);
void xom_helper_release(void *mem);

/* ---- the batch (batch.c; arrive.c is pass 1, lookup.c pass 2) --------- */
/* Pass 2: classifies each arrival and finds the plans of those that want
 * one, in the stores st or from one helper run, whose memory *mem keeps;
 * names the program to the profiles (lookup.c). */
void xom_batch_lookup(struct xom_stores *st, void **mem);
/* About n objects are about to arrive: populates what the batch and the
 * object table will write for them (object). */
void xom_batch_reserve(size_t n);
/* Pass 3 for one object that dl_iterate_phdr lists (called from walk). */
int xom_batch_apply(const char *name, uintptr_t bias, const ElfW(Phdr) *ph,
                    int phnum);
/* Pass 3 for each arrival that the dynamic linker still has at its place
 * (_dl_find_object), called with its write lock held; returns how many it
 * did not find. */
size_t xom_batch_apply_found(void);
/* Passes 2 and 3, with walk calling xom_batch_apply for every listed
 * object, or xom_batch_apply_found; as xom_batch_run for the result. */
int xom_batch_run_walk(void (*walk)(void));

/* ---- apply.c: one plan, one mapping ------------------------------------- */
enum { XOM_APPLIED, XOM_EXEMPT, XOM_UNPROTECTED };
struct xom_target {
	const char *path;
	uintptr_t bias;
	const ElfW(Phdr) *ph;
	int phnum;
	int flags;                      /* XOM_OBJ_* */
	const struct xom_plan_key *key; /* names its profile, if there are any */
};
/* Applies h to the mapping; returns XOM_APPLIED (and the first protected
 * address in *probe), XOM_EXEMPT (whole file readable, said why), or
 * XOM_UNPROTECTED (after one line saying why). */
int xom_apply(const struct xom_target *t, const struct xom_plan_head *h,
              uintptr_t *probe);
/* Totals for verbose=2. */
struct xom_totals { unsigned long objects, xom_pages, readable_pages, calls, maps_added; };
extern struct xom_totals xom_totals;

/* ---- profile.c --------------------------------------------------------- */
/* The main program as profiles name it (key: build-id or path), the name
 * of its file in the profile folders, and its path; the first call wins
 * (object). */
void xom_profile_program(const char *key, const char *file, const char *path);
/* Maps profile= and the main program's profiles for one batch, or unmaps
 * them (object); xom_profile_any says whether one is mapped. */
void xom_profile_open(void);
int xom_profile_any(void);
void xom_profile_close(void);
/* The profiles' pages for the object key (mapped from path), sorted, in
 * *pages until xom_profile_forget wipes them; stale items for path are
 * said once (object). */
size_t xom_profile_pages(const char *key, const char *path,
                         const uint64_t **pages);
void xom_profile_forget(void);
/* Appends page of o to profile=, with why it was read as the comment:
 * "VERB of WHAT by BY" [fault]. */
void xom_profile_append(const struct xom_object *o, uint64_t page,
                        const char *verb, const char *what, const char *by);

/* ---- fault.c ----------------------------------------------------------- */
void xom_fault_install(void);                                   /* start */
/* Puts xom's handler back if the program replaced it behind every
 * wrapper; 1 when it had to (object). */
int xom_fault_check(void);

#endif
