/*
 * objects.c - the table of loaded objects, the lock that serialises changes
 * to it, and the sync with dl_iterate_phdr that the preload door uses.
 *
 * Phase: object, except xom_object_at, which the fault handler calls: it
 * reads the table without a lock (see struct xom_object in loader.h).
 */
#include <sys/syscall.h>
#include <unistd.h>

#include "loader.h"
#include "xom_loader.h"

#define MAX_OBJS 1024

static struct xom_object objs[MAX_OBJS];
/* Slots in use are all below this mark, so that a scan touches only the
 * pages of the slots that were used: the table is big, and touching all of
 * it would cost every process start a hundred page faults. */
static int nobjs;

static int used(void)
{
	return __atomic_load_n(&nobjs, __ATOMIC_ACQUIRE);
}

const struct xom_object *xom_object_at(uintptr_t addr)
{
	for (int i = 0; i < used(); i++) {
		const struct xom_object *o = &objs[i];
		if (__atomic_load_n(&o->live, __ATOMIC_ACQUIRE)
		    && addr >= o->lo && addr < o->hi)
			return o;
	}
	return NULL;
}

void xom_forget_range(uintptr_t start, uintptr_t end)
{
	for (int i = 0; i < used(); i++) {
		struct xom_object *o = &objs[i];
		if (o->live && o->lo < end && start < o->hi)
			__atomic_store_n(&o->live, 0, __ATOMIC_RELEASE);
	}
}

int xom_object_known(uintptr_t bias, uintptr_t lo, const char *path)
{
	for (int i = 0; i < used(); i++) {
		const struct xom_object *o = &objs[i];
		if (o->live && o->bias == bias && o->lo == lo
		    && !strncmp(o->path, path, sizeof(o->path) - 1))
			return 1;
	}
	return 0;
}

void xom_object_remember(uintptr_t bias, uintptr_t lo, uintptr_t hi,
                         const char *path, const char *profile_key,
                         const struct xom_plan_head *plan)
{
	for (int i = 0; i < MAX_OBJS && i <= nobjs; i++) {
		struct xom_object *o = &objs[i];
		if (o->live)
			continue;
		o->bias = bias;
		o->lo = lo;
		o->hi = hi;
		o->plan = plan;
		xom_copy_str(o->path, sizeof(o->path), path);
		xom_copy_str(o->profile_key, sizeof(o->profile_key), profile_key);
		__atomic_store_n(&o->live, 1, __ATOMIC_RELEASE);
		if (i == nobjs)
			__atomic_store_n(&nobjs, i + 1, __ATOMIC_RELEASE);
		return;
	}
	xom_say("%s: too many objects loaded; xom cannot name its faults", path);
}

/* ---- the lock ----------------------------------------------------------- */

static int lock_owner;
static int lock_depth;

/* A recursive lock: constructors run by dlopen may call dlopen again. */
void xom_lock(void)
{
	int self = (int)syscall(SYS_gettid);

	if (__atomic_load_n(&lock_owner, __ATOMIC_RELAXED) == self) {
		lock_depth++;
		return;
	}
	int free_ = 0;
	while (!__atomic_compare_exchange_n(&lock_owner, &free_, self, 0,
	                                    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		free_ = 0;
		syscall(SYS_sched_yield);
	}
	lock_depth = 1;
}

void xom_unlock(void)
{
	if (--lock_depth == 0)
		__atomic_store_n(&lock_owner, 0, __ATOMIC_RELEASE);
}

/* A child of fork has one thread; a lock held by another thread of the
 * parent would never be released there. */
void xom_lock_reset(void)
{
	lock_owner = 0;
	lock_depth = 0;
}

/* ---- the sync ------------------------------------------------------------ */

static int sync_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	xom_add_object(info->dlpi_name, info->dlpi_addr, info->dlpi_phdr,
	               info->dlpi_phnum);
	return 0;
}

static int mark_present(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t lo, hi;
	unsigned char *seen = arg;

	(void)size;
	xom_elf_exec_span(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum,
	                  &lo, &hi);
	for (int i = 0; i < used(); i++)
		if (objs[i].live && objs[i].bias == info->dlpi_addr
		    && objs[i].lo == lo)
			seen[i] = 1;
	return 0;
}

void xom_sync_objects(void)
{
	static unsigned char seen[MAX_OBJS];

	if (!xom_active)
		return;
	/* Forget what was unloaded, so that a new mapping at the same
	 * address is protected again. */
	memset(seen, 0, (size_t)nobjs);
	dl_iterate_phdr(mark_present, seen);
	for (int i = 0; i < used(); i++)
		if (objs[i].live && !seen[i])
			__atomic_store_n(&objs[i].live, 0, __ATOMIC_RELEASE);
	dl_iterate_phdr(sync_one, NULL);
}
