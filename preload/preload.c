/*
 * preload.c - the LD_PRELOAD door: libxom.so.
 *
 * The constructor protects everything already loaded; the dlopen, dlmopen
 * and dlclose wrappers protect what arrives later and forget what leaves.
 * The signal and key functions that the program calls are xom's
 * (loader/calls.c): xom's SIGSEGV handler stays first while the program
 * sees its own, and the program cannot free or change xom's key.  If
 * libxom-audit.so is loaded too, it has already protected everything and
 * owns the key and the handler, so this library only forwards the
 * program's SIGSEGV settings and key calls to it.
 *
 * A wrapper must be invisible: it returns, sets errno and leaves dlerror
 * as libc's own function would.  So the functions it stands in front of
 * are found in the next objects' symbol tables (next_fn), never with
 * dlsym, whose success clears the error that the program may be about to
 * ask dlerror for; and a name is resolved for the program's caller, not
 * for the wrapper (search.c).
 *
 * Phase: the constructor is start, then a first batch; the wrappers run in
 * any thread at any time after it, outside the dynamic linker's locks, and
 * enter the object phase through a sync (sync.c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <sys/mman.h>

#include "../loader/xom_loader.h"
#include "preload.h"

#define EXPORT __attribute__((visibility("default")))

static void *(*real_dlopen)(const char *, int);
static void *(*real_dlmopen)(Lmid_t, const char *, int);
static int (*real_dlclose)(void *);
static char *(*real_dlerror)(void);

static int owner;       /* 1: this library runs the runtime */

/* libc's own sigaction, under the name glibc exports for it: no lookup at
 * all on the start-up path, where every lookup is paid by every process. */
extern int __sigaction(int, const struct sigaction *, struct sigaction *);

/* The definition of name that follows libxom.so's in the global scope, as
 * dlsym(RTLD_NEXT) would find it: the first object after libxom.so that
 * defines it (libc, unless another preloaded library wraps it too), else
 * the first before it.  Reads only the objects' symbol tables. */
static void *next_fn(const char *name)
{
	struct dl_find_object fo;

	if (_dl_find_object((void *)next_fn, &fo) != 0 || !fo.dlfo_link_map)
		return NULL;
	struct link_map *self = fo.dlfo_link_map, *head = self;
	while (head->l_prev)
		head = head->l_prev;
	for (int pass = 0; pass < 2; pass++)
		for (struct link_map *m = pass ? head : self->l_next;
		     m && (pass == 0 || m != self); m = m->l_next) {
			void *fn = m->l_ld ? xom_lookup_dyn(m->l_addr, m->l_ld, name)
			                   : NULL;
			if (fn)
				return fn;
		}
	return NULL;
}

/* Each slot is filled on a wrapper's first use, which may come before the
 * constructor (from another library's): a look-up disturbs nothing, so no
 * process pays for the functions it never calls.  Two threads that race
 * fill a slot with the same value. */
static void *real_fn(void **slot, const char *name)
{
	void *fn = __atomic_load_n(slot, __ATOMIC_RELAXED);

	if (!fn) {
		fn = next_fn(name);
		__atomic_store_n(slot, fn, __ATOMIC_RELAXED);
	}
	return fn;
}
#define REAL(var, name) ((__typeof__(var))real_fn((void **)&(var), name))

/* Filled in by libxom-audit.so, if it is loaded, before our constructor. */
EXPORT struct xom_preload_link xom_preload_link;

/* dl_iterate_phdr shows only our own namespace; a dlmopen'd namespace is
 * walked through its link maps. */
static void add_namespace(void *h)
{
	struct link_map *map = NULL;

	if (dlinfo(h, RTLD_DI_LINKMAP, &map) != 0 || !map)
		return;
	while (map->l_prev)
		map = map->l_prev;
	for (; map; map = map->l_next) {
		int n = 0;
		const ElfW(Phdr) *ph = xom_link_map_phdrs(map, 0, &n);
		if (map->l_name && *map->l_name)
			xom_batch_add(map->l_name, map->l_addr, ph, n, XOM_ADD_OTHER_NS);
	}
}

__attribute__((constructor)) static void start_preload(void)
{
	const struct xom_audit_api *audit = xom_preload_link.audit;

	xom_libc.sigaction = __sigaction;
	if (audit && audit->magic == XOM_AUDIT_MAGIC && audit->version >= 2) {
		xom_libc.forward = audit->sigaction;
		xom_libc.key_guard = audit->key_guard;
		return;
	}
	xom_fault_use_libc(xom_libc.sigaction);
	if (!xom_start("preload"))
		return;
	owner = 1;
	/* No fork handler: xom's lock is taken over from a thread that no
	 * longer exists, which covers a fork child (objects.c). */
	xom_sync_objects();
	xom_started_up();
}

/* ---- dlopen, dlmopen, dlclose, dlerror ---------------------------------- */

/* Why this thread's last dlopen failed in xom, for its dlerror(). */
static __thread const char *refusal __attribute__((tls_model("initial-exec")));

static void *refuse_handle(void *h)
{
	REAL(real_dlclose, "dlclose")(h);
	refusal = "xom: the library, or one it needs, cannot be protected (require=1)";
	return NULL;
}

/* The runtime's work after a call: errno stays what libc's call left. */
static int sync_objects(void)
{
	int err = errno, rc = xom_sync_objects();

	errno = err;
	return rc;
}

/* glibc's call with the name found for the caller, or NULL with why. */
#define OPEN_FOR_CALLER(call, r) (!(r)->why ? (call) \
	: (refusal = (r)->why, (void *)NULL))

EXPORT void *dlopen(const char *file, int mode)
{
	struct xom_name r;

	xom_search_name(&r, file, __builtin_return_address(0), XOM_NS_CALLER);
	void *h = OPEN_FOR_CALLER(REAL(real_dlopen, "dlopen")(r.name, mode), &r);
	xom_search_found(h, &r);
	xom_search_done(&r);
	if (h && owner && sync_objects() != 0)
		return refuse_handle(h);
	return h;
}

EXPORT void *dlmopen(Lmid_t lmid, const char *file, int mode)
{
	struct xom_name r;

	xom_search_name(&r, file, __builtin_return_address(0), lmid);
	void *h = OPEN_FOR_CALLER(REAL(real_dlmopen, "dlmopen")(lmid, r.name, mode), &r);
	xom_search_found(h, &r);
	xom_search_done(&r);
	if (!h || !owner)
		return h;
	if (sync_objects() != 0)
		return refuse_handle(h);
	if (lmid != LM_ID_BASE) {
		int err = errno;
		xom_enter();
		add_namespace(h);
		int rc = xom_batch_run();
		xom_leave();
		errno = err;
		if (rc != 0)
			return refuse_handle(h);
	}
	return h;
}

EXPORT int dlclose(void *h)
{
	int rc = REAL(real_dlclose, "dlclose")(h);
	if (owner)
		sync_objects();
	return rc;
}

EXPORT char *dlerror(void)
{
	const char *r = refusal;
	if (r) {
		refusal = NULL;
		return (char *)r;
	}
	return REAL(real_dlerror, "dlerror")();
}

/* ---- the calls xom stands in for ---------------------------------------- */

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return xom_call_sigaction(sig, act, old);
}

EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	REAL(xom_libc.signal, "signal");
	return xom_call_signal(sig, handler);
}

/* glibc declares it only for old X/Open feature levels. */
sighandler_t bsd_signal(int sig, sighandler_t handler);

EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler)
{
	REAL(xom_libc.signal, "signal");
	return xom_call_signal(sig, handler);
}

EXPORT sighandler_t ssignal(int sig, sighandler_t handler)
{
	REAL(xom_libc.signal, "signal");
	return xom_call_signal(sig, handler);
}

EXPORT sighandler_t sysv_signal(int sig, sighandler_t handler)
{
	REAL(xom_libc.sysv_signal, "sysv_signal");
	return xom_call_sysv_signal(sig, handler);
}

EXPORT sighandler_t __sysv_signal(int sig, sighandler_t handler)
{
	REAL(xom_libc.sysv_signal, "sysv_signal");
	return xom_call_sysv_signal(sig, handler);
}

EXPORT sighandler_t sigset(int sig, sighandler_t disp)
{
	REAL(xom_libc.sigset, "sigset");
	return xom_call_sigset(sig, disp);
}

EXPORT int sigignore(int sig)
{
	REAL(xom_libc.sigignore, "sigignore");
	return xom_call_sigignore(sig);
}

EXPORT int siginterrupt(int sig, int interrupt)
{
	REAL(xom_libc.siginterrupt, "siginterrupt");
	return xom_call_siginterrupt(sig, interrupt);
}

EXPORT int pkey_free(int key)
{
	REAL(xom_libc.pkey_free, "pkey_free");
	return xom_call_pkey_free(key);
}

EXPORT int pkey_set(int key, unsigned rights)
{
	REAL(xom_libc.pkey_set, "pkey_set");
	return xom_call_pkey_set(key, rights);
}
