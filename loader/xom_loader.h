/*
 * xom_loader.h - the runtime, as the doors see it: the LD_PRELOAD library
 * (preload/) and the LD_AUDIT module (audit/).
 *
 * A door starts the runtime once (xom_start), then hands it each batch of
 * newly mapped objects: it adds them one by one (xom_batch_add, cheap
 * enough for a dynamic-linker callback) and runs the batch where the
 * dynamic linker holds none of its locks, or, in the audit door, before
 * any of the new objects' code runs (xom_batch_run).  The preload door
 * compares dl_iterate_phdr with what the runtime knows (preload/sync.c).
 *
 * XOM_OPTIONS (loader/options.def) says how; with require=1 the runtime
 * refuses to run a program that it cannot protect, with exit status
 * XOM_REFUSED_STATUS (126, "found but cannot run", as a shell would say),
 * and a late batch that it cannot protect makes xom_batch_run fail.
 *
 * Only one copy of the runtime is active per process.  When both libraries
 * are loaded, the audit module (which starts first and sees every object)
 * owns the key, the objects and the handler, and the preload library
 * forwards its sigaction calls to it through xom_audit_api.
 */
#ifndef XOM_LOADER_H
#define XOM_LOADER_H

#include <link.h>
#include <signal.h>
#include <stdint.h>

/* Start-up: reads XOM_OPTIONS and allocates the key.  who names the door
 * ("preload" or "audit").  Returns 1 when xom is active. */
int xom_start(const char *who);

/* flags for xom_batch_add */
#define XOM_ADD_MAIN 4          /* the main program */
#define XOM_ADD_OTHER_NS 2      /* a namespace of dlmopen or the audit module */

/* Adds one mapped object to the batch: name is the link map's name,
 * bias its load bias, phdr/phnum its program headers in memory (NULL
 * when unknown).  Only copies: safe inside dynamic-linker callbacks. */
void xom_batch_add(const char *name, uintptr_t bias,
                   const ElfW(Phdr) *phdr, int phnum, int flags);

/* Protects the batch.  Returns 0, or -1 when require=1 and an object
 * could not be protected (only after start-up: at start-up the process
 * is refused). */
int xom_batch_run(void);

/* Enter and leave the object phase (loader.h): xom's lock, recursive.  A
 * door that adds to a batch outside the dynamic linker's lock, and then
 * runs it, holds this around both, so that no other thread's batch can
 * take its arrivals or run in the middle of them. */
void xom_enter(void);
void xom_leave(void);
/* The thread ID that holds the lock, or 0 (tests/runtime/lock.c). */
int xom_lock_owner(void);

/* Forgets every object whose executable mappings overlap [start, end):
 * their addresses have been unmapped or reused. */
void xom_forget_range(uintptr_t start, uintptr_t end);


/* The program's view of SIGSEGV: xom's handler stays installed and passes
 * faults that are not reads of protected code to the handler set here.
 * Returns -1 when xom is not active: the caller uses the real sigaction. */
int xom_sigaction(const struct sigaction *act, struct sigaction *old);

/* Installs xom's handler through this sigaction (the program's libc), so
 * that the signal return trampoline is libc's. */
void xom_fault_use_libc(int (*sa)(int, const struct sigaction *,
                                  struct sigaction *));

/* Start-up is over: later objects are the program's own dlopen calls.
 * Says the totals under verbose=2. */
void xom_started_up(void);

/* 1 (after one line, once) when key is xom's protection key, which the
 * program must not free or set: a freed key could be handed out again
 * with rights that read code. */
int xom_key_guard(int key);

/*
 * The libc calls that xom stands in for (loader/calls.c).  The door fills
 * xom_libc with the program's libc functions; the preload library's copy
 * of the runtime, when the audit module owns the protection, also gets the
 * audit module's sigaction and key guard to forward to.
 */
struct xom_libc {
	int (*sigaction)(int, const struct sigaction *, struct sigaction *);
	sighandler_t (*signal)(int, sighandler_t);
	sighandler_t (*sysv_signal)(int, sighandler_t);
	sighandler_t (*sigset)(int, sighandler_t);
	int (*sigignore)(int);
	int (*siginterrupt)(int, int);
	int (*pkey_free)(int);
	int (*pkey_set)(int, unsigned);
	int *(*errno_location)(void);   /* the program's errno */
	int (*forward)(const struct sigaction *act, struct sigaction *old);
	int (*key_guard)(int key);
};
extern struct xom_libc xom_libc;
int xom_call_sigaction(int sig, const struct sigaction *act,
                       struct sigaction *old);
sighandler_t xom_call_signal(int sig, sighandler_t handler);
sighandler_t xom_call_sysv_signal(int sig, sighandler_t handler);
sighandler_t xom_call_sigset(int sig, sighandler_t disp);
int xom_call_sigignore(int sig);
int xom_call_siginterrupt(int sig, int interrupt);
int xom_call_pkey_free(int key);
int xom_call_pkey_set(int key, unsigned rights);

/* The program headers of a mapped object, or NULL: the auxiliary
 * vector's for the main program (is_main), else the ELF header's at the
 * load bias. */
const ElfW(Phdr) *xom_link_map_phdrs(const struct link_map *map, int is_main,
                                     int *phnum);

/* The address of a defined dynamic symbol, found through the object's
 * hash table without the dynamic linker (which cannot look across
 * namespaces, and whose dlsym clears a pending dlerror), or NULL. */
void *xom_lookup_dynsym(uintptr_t bias, const ElfW(Phdr) *ph, int phnum,
                        const char *name);
/* The same, from the object's dynamic section (a link map's l_ld); it
 * uses DT_GNU_HASH or DT_HASH, so a miss costs a probe, not a walk. */
void *xom_lookup_dyn(uintptr_t bias, const ElfW(Dyn) *dyn, const char *name);

/*
 * How the two doors meet.  dl_iterate_phdr shows only the caller's
 * namespace, so libxom.so cannot see the audit module; the audit module,
 * though, sees libxom.so being mapped (before its relocation and its
 * constructor) and stores its API in libxom.so's exported
 * xom_preload_link.  libxom.so's constructor then finds it there.
 */
struct xom_audit_api {
	uint32_t magic;         /* XOM_AUDIT_MAGIC */
	uint32_t version;       /* 2 */
	int (*sigaction)(const struct sigaction *act, struct sigaction *old);
	int (*key_guard)(int key);
};
struct xom_preload_link {
	const struct xom_audit_api *audit;
};
#define XOM_AUDIT_MAGIC 0x786f6d61u
#define XOM_PRELOAD_LINK_NAME "xom_preload_link"

#endif
