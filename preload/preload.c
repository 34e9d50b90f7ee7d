/*
 * preload.c - the LD_PRELOAD door: libxom.so.
 *
 * The constructor protects everything already loaded; the dlopen, dlmopen
 * and dlclose wrappers protect what arrives later and forget what leaves;
 * sigaction and signal keep xom's SIGSEGV handler first while the program
 * sees its own.  If libxom-audit.so is loaded too, it has already protected
 * everything and owns the key and the handler, so this library only
 * forwards the program's SIGSEGV settings to it.
 *
 * Limitation: the dynamic linker takes the wrapper as dlopen's caller, so a
 * bare library name is not searched in the calling object's own DT_RUNPATH
 * or DT_RPATH.  LD_AUDIT has no such limitation.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "../loader/xom_loader.h"

#define EXPORT __attribute__((visibility("default")))

static void *(*real_dlopen)(const char *, int);
static void *(*real_dlmopen)(Lmid_t, const char *, int);
static int (*real_dlclose)(void *);
static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);

static const struct xom_audit_api *audit;
static int owner;       /* 1: this library runs the core */

static void resolve_real(void)
{
	if (real_sigaction)
		return;
	real_dlopen = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	real_dlmopen = (void *(*)(Lmid_t, const char *, int))
	               dlsym(RTLD_NEXT, "dlmopen");
	real_dlclose = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
	real_sigaction = (int (*)(int, const struct sigaction *,
	                          struct sigaction *))dlsym(RTLD_NEXT, "sigaction");
}

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
	for (; map; map = map->l_next)
		if (map->l_name && *map->l_name)
			xom_add_link_map(map, 0);
}

static void after_fork_child(void)
{
	xom_lock_reset();
}

__attribute__((constructor)) static void start_preload(void)
{
	resolve_real();
	audit = xom_preload_link.audit;
	if (audit && (audit->magic != XOM_AUDIT_MAGIC || audit->version < 1))
		audit = NULL;
	if (audit)
		return;
	if (!xom_start("preload"))
		return;
	owner = 1;
	pthread_atfork(NULL, NULL, after_fork_child);
	xom_lock();
	xom_sync_objects();
	xom_unlock();
}

EXPORT void *dlopen(const char *file, int mode)
{
	resolve_real();
	if (!owner)
		return real_dlopen(file, mode);
	xom_lock();
	void *h = real_dlopen(file, mode);
	if (h)
		xom_sync_objects();
	xom_unlock();
	return h;
}

EXPORT void *dlmopen(Lmid_t lmid, const char *file, int mode)
{
	resolve_real();
	if (!owner)
		return real_dlmopen(lmid, file, mode);
	xom_lock();
	void *h = real_dlmopen(lmid, file, mode);
	if (h) {
		xom_sync_objects();
		add_namespace(h);
	}
	xom_unlock();
	return h;
}

EXPORT int dlclose(void *h)
{
	resolve_real();
	if (!owner)
		return real_dlclose(h);
	xom_lock();
	int rc = real_dlclose(h);
	xom_sync_objects();
	xom_unlock();
	return rc;
}

EXPORT int sigaction(int sig, const struct sigaction *act,
                     struct sigaction *old)
{
	resolve_real();
	if (sig == SIGSEGV) {
		if (owner && xom_sigaction(act, old) == 0)
			return 0;
		if (audit && audit->sigaction(act, old) == 0)
			return 0;
	}
	return real_sigaction(sig, act, old);
}

/* glibc's signal() calls sigaction internally, past this interposer, so
 * it needs its own wrapper; it has BSD semantics (SA_RESTART). */
EXPORT __sighandler_t signal(int sig, __sighandler_t handler)
{
	struct sigaction act, old;

	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	act.sa_flags = SA_RESTART;
	sigemptyset(&act.sa_mask);
	sigaddset(&act.sa_mask, sig);
	if (sigaction(sig, &act, &old) != 0)
		return SIG_ERR;
	return old.sa_handler;
}
