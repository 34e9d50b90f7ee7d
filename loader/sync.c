/*
 * sync.c - the preload door's view of the loaded objects: what
 * dl_iterate_phdr shows, compared with the table.
 *
 * Phase: object.  dl_iterate_phdr calls its callback with the dynamic
 * linker's write lock held, and libc's own dlopen takes the load lock
 * first, so the callbacks only read memory: the first walk collects
 * (xom_batch_add), the batch finds its plans after it, and a second walk
 * applies them to the objects still listed (see protect.c).  glibc counts
 * the objects ever added and removed; when neither count has moved since
 * the last sync there is nothing to do, so a dlopen of a library already
 * loaded costs two loads, and otherwise each known object costs one probe
 * of the table's hash (see collect).
 */
#include <sys/single_threaded.h>

#include "loader.h"
#include "xom_loader.h"

/* The counts at the last sync (0 before the first). */
static unsigned long long last_adds, last_subs;
static uint32_t generation;

struct walk {
	unsigned long long adds, subs;
	int first;
	int unloaded;           /* something was unloaded since the last sync */
	int renewed;            /* ... and something loaded: maybe at the same place */
};

static int read_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct walk *w = arg;

	(void)size;
	w->adds = info->dlpi_adds;
	w->subs = info->dlpi_subs;
	return 1;
}

/*
 * Only a new link map can be a new mapping at an old address, and only
 * after an unload: while nothing was unloaded since the last sync, an
 * object listed where a known one lies is that object, and while nothing
 * was loaded, no listed object is new.  So a known object costs one probe
 * of the table by its program headers, and only when both counts moved are
 * names compared and the late objects checked again.
 */
static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct walk *w = arg;
	uintptr_t lo, hi;
	int main = w->first && (!info->dlpi_name || !*info->dlpi_name);

	(void)size;
	if (w->first) {
		w->adds = info->dlpi_adds;
		w->subs = info->dlpi_subs;
		/* Any unload since the last sync, the first one included: a
		 * library unloaded and loaded again in between may be mapped at
		 * its old address, unprotected. */
		w->unloaded = w->subs != last_subs;
		w->renewed = w->unloaded && w->adds != last_adds;
		w->first = 0;
	}
	struct xom_object *o = xom_object_find_ph(info->dlpi_addr, info->dlpi_phdr);
	if (!o) {
		xom_elf_exec_span(info->dlpi_addr, info->dlpi_phdr,
		                  info->dlpi_phnum, &lo, &hi);
		if (lo >= hi)
			return 0;
		o = xom_object_find(info->dlpi_addr, lo);
	}
	int flags = (main ? XOM_OBJ_MAIN : 0) | (xom_started ? XOM_OBJ_LATE : 0);
	if (o && (!w->renewed || main
	          || !strncmp(o->path, info->dlpi_name, XOM_NAME_MAX - 1))) {
		o->seen = generation;
		/* After an unload and a load, a late object may be a new
		 * mapping. */
		if (!w->renewed || !(o->flags & XOM_OBJ_LATE))
			return 0;
		flags |= XOM_OBJ_VERIFY;
	}
	xom_batch_add(info->dlpi_name, info->dlpi_addr, info->dlpi_phdr,
	              info->dlpi_phnum, flags);
	return 0;
}

static int apply_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	xom_batch_apply(info->dlpi_name, info->dlpi_addr, info->dlpi_phdr,
	                info->dlpi_phnum);
	return 0;
}

static void apply_walk(void)
{
	dl_iterate_phdr(apply_one, NULL);
}

static void forget_unseen(struct xom_object *o, void *arg)
{
	(void)arg;
	if ((o->flags & XOM_OBJ_LATE) && !(o->flags & XOM_OBJ_OTHER_NS)
	    && o->seen != generation)
		xom_object_forget(o);
}

int xom_sync_objects(void)
{
	struct walk w = { 0, 0, 1, 0, 0 };

	if (!xom_active)
		return 0;
	dl_iterate_phdr(read_counts, &w);
	if (w.adds == __atomic_load_n(&last_adds, __ATOMIC_ACQUIRE)
	    && w.subs == __atomic_load_n(&last_subs, __ATOMIC_ACQUIRE))
		return 0;
	xom_enter();
	/* At most this many objects are new: glibc counts every one added.
	 * (Another thread may have synced since the counts were read.) */
	xom_batch_reserve(w.adds > last_adds ? (size_t)(w.adds - last_adds) : 0);
	generation++;
	w.first = 1;
	dl_iterate_phdr(collect, &w);
	/* Without an unload, every late object is still listed. */
	if (w.unloaded)
		xom_objects_each(forget_unseen, NULL);
	/* A second walk keeps objects that another thread unloads meanwhile
	 * out of pass 3.  With one thread, nothing can be unloaded. */
	int rc = __libc_single_threaded ? xom_batch_run()
	                                : xom_batch_run_walk(apply_walk);
	__atomic_store_n(&last_subs, w.subs, __ATOMIC_RELEASE);
	__atomic_store_n(&last_adds, w.adds, __ATOMIC_RELEASE);
	xom_leave();
	return rc;
}
