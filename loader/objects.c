/*
 * objects.c - the table of loaded objects, and the lock under which it
 * changes.
 *
 * Phase: object, except xom_object_at, which the fault handler calls: it
 * reads the table without a lock (see struct xom_object in loader.h).
 * Lookups by mapping go through a small open-addressed hash of slot
 * numbers, keyed by the load bias, so that a sync over hundreds of objects
 * costs one probe each; while fewer than HASH_FROM slots were ever used,
 * a scan of them is as quick, and the hash's page is never touched.
 */
#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>

#include "loader.h"
#include "sys.h"
#include "xom_loader.h"

#define MAX_OBJS 1024
#define HASH_SLOTS 2048                 /* a power of two, > 2 * MAX_OBJS */
#define HASH_FROM 16

/* Slot number + 1 of each mapping, by hash of (bias, lo); 0 is empty.
 * Forgotten slots stay in the hash (their live flag says so) until the
 * slot is reused.  The table first, right after the small variables: a
 * small program's objects share their page. */
static struct {
	struct xom_object objs[MAX_OBJS];
	uint16_t by_map[HASH_SLOTS];
} t XOM_COLD;
#define objs t.objs
#define by_map t.by_map
static int hashed;                      /* by_map is in use */
/* Slots in use are all below this mark, so that a scan touches only the
 * pages of the slots that were used: the table is big, and touching all of
 * it would cost every process start many page faults. */
static int nobjs;
/* No slot below this one is free: a start-up that fills the table in order
 * finds each free slot at once. */
static int first_free;

static int used(void)
{
	return __atomic_load_n(&nobjs, __ATOMIC_ACQUIRE);
}

int xom_objects_none(void)
{
	return used() == 0;
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

/* By bias alone: live objects have distinct biases (but for a main
 * program at 0), and a sync that knows an object's program headers need
 * not work out its span to find it. */
static unsigned hash_map(uintptr_t bias)
{
	uint64_t h = (bias >> 12) * 0x9e3779b97f4a7c15ull;

	return (unsigned)(h >> 40) & (HASH_SLOTS - 1);
}

/* Whether o is the live object at bias whose span starts at lo or, with
 * ph set, whose program headers are ph. */
static int is(const struct xom_object *o, uintptr_t bias, uintptr_t lo,
              const void *ph)
{
	return o->live && o->bias == bias && (ph ? o->ph == ph : o->lo == lo);
}

/* That object: a scan of the slots used while there are few, else a
 * probe of the hash. */
static struct xom_object *lookup(uintptr_t bias, uintptr_t lo, const void *ph)
{
	if (!hashed) {
		for (int k = 0; k < nobjs; k++)
			if (is(&objs[k], bias, lo, ph))
				return &objs[k];
		return NULL;
	}
	for (unsigned i = hash_map(bias), n = 0; by_map[i] && n < HASH_SLOTS;
	     i = (i + 1) & (HASH_SLOTS - 1), n++) {
		struct xom_object *o = &objs[by_map[i] - 1];
		if (is(o, bias, lo, ph))
			return o;
	}
	return NULL;
}

struct xom_object *xom_object_find(uintptr_t bias, uintptr_t lo)
{
	return lookup(bias, lo, NULL);
}

struct xom_object *xom_object_find_ph(uintptr_t bias, const void *ph)
{
	return lookup(bias, 0, ph);
}

static void hash_in(int k)
{
	unsigned h = hash_map(objs[k].bias);

	while (by_map[h])
		h = (h + 1) & (HASH_SLOTS - 1);
	by_map[h] = (uint16_t)(k + 1);
}

/* Removes slot k from the hash, if it is there. */
static void unhash(int k)
{
	const struct xom_object *o = &objs[k];

	if (!hashed)
		return;
	for (unsigned i = hash_map(o->bias), n = 0;
	     by_map[i] && n < HASH_SLOTS; i = (i + 1) & (HASH_SLOTS - 1), n++) {
		if (by_map[i] != k + 1)
			continue;
		/* Re-insert the rest of the cluster so that no probe chain
		 * breaks at the hole. */
		by_map[i] = 0;
		for (unsigned j = (i + 1) & (HASH_SLOTS - 1); by_map[j];
		     j = (j + 1) & (HASH_SLOTS - 1)) {
			uint16_t v = by_map[j];
			by_map[j] = 0;
			unsigned h = hash_map(objs[v - 1].bias);
			while (by_map[h])
				h = (h + 1) & (HASH_SLOTS - 1);
			by_map[h] = v;
		}
		return;
	}
}

void xom_object_forget(struct xom_object *o)
{
	int k = (int)(o - objs);

	__atomic_store_n(&o->live, 0, __ATOMIC_RELEASE);
	if (k < first_free)
		first_free = k;
}

void xom_forget_range(uintptr_t start, uintptr_t end)
{
	for (int i = 0; i < used(); i++) {
		struct xom_object *o = &objs[i];
		if (o->live && o->lo < end && start < o->hi)
			xom_object_forget(o);
	}
}

void xom_objects_reserve(size_t n)
{
	size_t from = (size_t)nobjs;

	if (from < MAX_OBJS)
		xom_populate(&objs[from], (n < MAX_OBJS - from ? n : MAX_OBJS - from)
		             * sizeof(objs[0]));
}

/*
 * The objects' paths, one after the other: the first few among the small
 * variables, the rest in pages mapped when needed.  None is ever freed,
 * since the fault handler may be reading one; a slot used again writes its
 * new path over its old one when it fits.
 */
#define NAMES_CHUNK (64u << 10)
static char names_first[512];
static char *names_more;
static size_t names_first_used, names_more_used;

static char *names_take(size_t n)
{
	if (n <= sizeof(names_first) - names_first_used) {
		names_first_used += n;
		return names_first + names_first_used - n;
	}
	if (!names_more || n > NAMES_CHUNK - names_more_used) {
		void *p = x_mmap(NULL, NAMES_CHUNK, PROT_READ | PROT_WRITE,
		                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (X_MAP_FAILED(p))
			return NULL;
		names_more = p;
		names_more_used = 0;
	}
	names_more_used += n;
	return names_more + names_more_used - n;
}

/* Copies path for slot o, which is not live, and returns the copy: over
 * o's old path when it fits (o->path_room), else in new room, which
 * o->path_room then gives.  o->path itself is left for the caller. */
static const char *name_slot(struct xom_object *o, const char *path)
{
	size_t len = 0;

	while (path[len] && len < XOM_NAME_MAX - 1)
		len++;
	char *dst = o->path && o->path_room > len ? (char *)o->path : NULL;
	if (!dst) {
		dst = names_take(len + 1);
		if (!dst) {
			o->path_room = 0;
			return "?";
		}
		o->path_room = (uint16_t)(len + 1);
	}
	memcpy(dst, path, len);
	dst[len] = 0;
	return dst;
}

void xom_object_remember(const struct xom_object *src, const char *path)
{
	for (int i = first_free; i < MAX_OBJS && i <= nobjs; i++) {
		struct xom_object *o = &objs[i];
		if (o->live)
			continue;
		first_free = i + 1;
		if (i < nobjs)
			unhash(i);
		/* The handler may be reading this slot: fill it while it is
		 * not live, and publish it last.  The path's room stays with
		 * the slot. */
		struct xom_object fill = *src;
		fill.live = 0;
		/* The copy leaves the old path pointer, which a handler that
		 * saw the old object live may still load; the new one is
		 * stored whole. */
		fill.path = o->path;
		fill.path_room = o->path_room;
		const char *new_path = name_slot(&fill, path);
		memcpy(o, &fill, sizeof(*o));
		__atomic_store_n(&o->path, new_path, __ATOMIC_RELAXED);
		if (hashed)
			hash_in(i);
		__atomic_store_n(&o->live, 1, __ATOMIC_RELEASE);
		if (i == nobjs)
			__atomic_store_n(&nobjs, i + 1, __ATOMIC_RELEASE);
		if (!hashed && nobjs >= HASH_FROM) {
			for (int k = 0; k < nobjs; k++)
				if (objs[k].live)
					hash_in(k);
			hashed = 1;
		}
		return;
	}
	xom_notice("%s: too many objects loaded; xom cannot name its faults", path);
}

void xom_objects_each(void (*fn)(struct xom_object *o, void *arg), void *arg)
{
	for (int i = 0; i < used(); i++)
		if (objs[i].live)
			fn(&objs[i], arg);
}

/* ---- the lock ----------------------------------------------------------- */

/*
 * A recursive lock, because constructors run by dlopen may call dlopen
 * again.  The owner is a thread ID: a lock whose owner no longer exists in
 * this process - a fork child's copy of a lock that another thread of the
 * parent held - is taken over, so no fork handler is needed (the audit
 * module's copy of libc runs none).  While a thread holds it, its signals
 * are blocked and cancellation is off: no signal handler can longjmp out of
 * the object phase and no cancellation can unwind it, either of which
 * would leave the lock held for ever.
 */
static int lock_owner;
/* initial-exec: the libraries are loaded at start-up, and the general
 * model would import __tls_get_addr. */
static __thread int lock_depth __attribute__((tls_model("initial-exec")));
static uint64_t lock_saved_mask;
static int lock_saved_cancel;

static int thread_gone(int tid)
{
	return x_tgkill(x_getpid(), tid, 0) == -ESRCH;
}

void xom_enter(void)
{
	if (lock_depth) {
		lock_depth++;   /* this thread holds it already */
		return;
	}
	int self = x_gettid();
	/* Every signal but the two that glibc keeps for itself (SIGCANCEL,
	 * SIGSETXID, 32 and 33): set*id in another thread waits for this one
	 * to take SIGSETXID, and cancellation is off below anyway. */
	uint64_t all = ~((1ull << 31) | (1ull << 32)), old;

	x_sigmask(SIG_SETMASK, &all, &old);
	for (int spins = 0;; spins++) {
		int owner = 0;
		if (__atomic_compare_exchange_n(&lock_owner, &owner, self, 0,
		                                __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			break;
		/* The owner died inside the object phase (in a fork child, the
		 * parent's other threads do not exist): what it left half done
		 * is dropped with the lock. */
		if (spins > 64 && thread_gone(owner)
		    && __atomic_compare_exchange_n(&lock_owner, &owner, 0, 0,
		                                   __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			xom_batch_abandon();
		sys0(SYS_sched_yield);
	}
	int cancel;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	lock_depth = 1;
	lock_saved_mask = old;
	lock_saved_cancel = cancel;
}

void xom_leave(void)
{
	if (--lock_depth == 0) {
		uint64_t mask = lock_saved_mask;
		int cancel = lock_saved_cancel, ignored;
		__atomic_store_n(&lock_owner, 0, __ATOMIC_RELEASE);
		pthread_setcancelstate(cancel, &ignored);
		x_sigmask(SIG_SETMASK, &mask, NULL);
	}
}

void xom_lock_reset(void)
{
	/* fork() runs this in the child, in the thread that forked: if that
	 * thread held the lock, fork was called from inside xom, which does
	 * not happen; any other owner does not exist here. */
	lock_owner = 0;
	lock_depth = 0;
	xom_batch_abandon();
}
