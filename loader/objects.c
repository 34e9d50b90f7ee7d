/*
 * objects.c - the table of loaded objects.  It changes only under the
 * batch's lock (batch.c).
 *
 * Phase: object, except xom_object_at, which the fault handler calls: it
 * reads the table without a lock (see struct xom_object in loader.h).
 * Lookups by mapping go through a small open-addressed hash of slot
 * numbers, keyed by the load bias, so that a sync over hundreds of objects
 * costs one probe each; while fewer than HASH_FROM slots were ever used,
 * a scan of them is as quick, and the hash's page is never touched.  The
 * table has no fixed size: a program with more objects than its first
 * slots maps more (grow).
 */
#include <errno.h>
#include <sys/mman.h>

#include "loader.h"
#include "sys.h"
#include "xom_loader.h"

/* The slots: the first FIRST_SLOTS among this library's tables, then
 * blocks mapped when a program has more objects, each as big as all the
 * slots before it, so that a slot's number gives its block at once.  A
 * block is never moved or unmapped: the fault handler may be reading any
 * slot it found, without a lock.  MORE_BLOCKS of them hold 2^30 slots,
 * more than any address space holds objects. */
#ifdef XOM_FIRST_SLOTS                  /* the tests' runtime with less room */
#define FIRST_SLOTS XOM_FIRST_SLOTS
#else
#define FIRST_SLOTS 1024
#endif
#define MORE_BLOCKS 20
#define SMALL_HASH 2048                 /* a power of two, > 2 * FIRST_SLOTS */
#define HASH_FROM 16

/* Slot number + 1 of each mapping, by hash of (bias, lo); 0 is empty.
 * Forgotten slots stay in the hash (their live flag says so) until the
 * slot is reused, or the hash grows.  The table first, right after the
 * small variables: a small program's objects share their page.  The hash
 * has twice as many entries as there are slots: while they are the first
 * FIRST_SLOTS, small_map, two bytes an entry; past them, a mapped table
 * of four-byte entries (big_map), made anew each time the slots double. */
static struct {
	struct xom_object objs[FIRST_SLOTS];
	uint16_t small_map[SMALL_HASH];
} t XOM_COLD;
#define objs t.objs
static struct xom_object *more[MORE_BLOCKS] XOM_COLD;
static int nmore;                       /* blocks of more[] mapped */
static uint32_t *big_map;               /* the hash once it outgrew small_map */
static unsigned big_slots;              /* its entries, a power of two */
static int hashed;                      /* the hash is in use */
/* Slots in use are all below this mark, so that a scan touches only the
 * pages of the slots that were used: the table is big, and touching all of
 * it would cost every process start many page faults. */
static int nobjs;
/* No slot below this one is free: a start-up that fills the table in order
 * finds each free slot at once. */
static int first_free;
/* Live slots of late objects (XOM_OBJ_LATE). */
static long late_live;

/* Slot i, below the slots mapped [fault]. */
static struct xom_object *slot(int i)
{
	if (i < FIRST_SLOTS)
		return &objs[i];
	unsigned q = (unsigned)i / FIRST_SLOTS;         /* 1 or more */
	int b = 32 - __builtin_clz(q);                  /* its block, from 1 */
	return &more[b - 1][i - (FIRST_SLOTS << (b - 1))];
}

/* How many slots there are room for now. */
static int slots_mapped(void)
{
	return FIRST_SLOTS << nmore;
}

/* The number of the slot o. */
static int slot_number(const struct xom_object *o)
{
	if (o >= objs && o < objs + FIRST_SLOTS)
		return (int)(o - objs);
	for (int b = 1; b <= nmore; b++)
		if (o >= more[b - 1] && o < more[b - 1] + (FIRST_SLOTS << (b - 1)))
			return (FIRST_SLOTS << (b - 1)) + (int)(o - more[b - 1]);
	return -1;
}

/* The hash's entries, a power of two.  (Not a variable set to SMALL_HASH:
 * that would lie in .data, away from the small variables.) */
static unsigned map_slots(void)
{
	return big_map ? big_slots : SMALL_HASH;
}

static uint32_t map_get(unsigned h)
{
	return big_map ? big_map[h] : t.small_map[h];
}

static void map_set(unsigned h, uint32_t v)
{
	if (big_map)
		big_map[h] = v;
	else
		t.small_map[h] = (uint16_t)v;
}

static int used(void)
{
	return __atomic_load_n(&nobjs, __ATOMIC_ACQUIRE);
}

int xom_objects_used(void)
{
	return used();
}

int xom_objects_none(void)
{
	return used() == 0;
}

const struct xom_object *xom_object_at(uintptr_t addr)
{
	for (int i = 0; i < used(); i++) {
		const struct xom_object *o = slot(i);
		if (__atomic_load_n(&o->live, __ATOMIC_ACQUIRE)
		    && addr >= o->lo && addr < o->hi)
			return o;
	}
	return NULL;
}

/* By bias alone: live objects have distinct biases (but for a main
 * program at 0), and a sync that knows an object's program headers need
 * not work out its span to find it. */
static unsigned hash_small(uintptr_t bias)
{
	uint64_t h = (bias >> 12) * 0x9e3779b97f4a7c15ull;

	return (unsigned)(h >> 40) & (SMALL_HASH - 1);
}

static unsigned hash_map(uintptr_t bias)
{
	uint64_t h = (bias >> 12) * 0x9e3779b97f4a7c15ull;

	return big_map ? (unsigned)(h >> 32) & (big_slots - 1) : hash_small(bias);
}

static unsigned next(unsigned h)
{
	return (h + 1) & (map_slots() - 1);
}

/* Whether o is the live object at bias whose span starts at lo or, with
 * ph set, whose program headers are ph. */
static int is(const struct xom_object *o, uintptr_t bias, uintptr_t lo,
              const void *ph)
{
	return o->live && o->bias == bias && (ph ? o->ph == ph : o->lo == lo);
}

/* The hash's probes for that object, apart, so that a scan of a few
 * slots pays nothing for them: in small_map, whose slots are all among the
 * first (a sync of a few hundred objects makes one probe for each), and in
 * big_map. */
static __attribute__((noinline)) struct xom_object *
probe_small(uintptr_t bias, uintptr_t lo, const void *ph)
{
	for (unsigned i = hash_small(bias), n = 0; n < SMALL_HASH;
	     i = (i + 1) & (SMALL_HASH - 1), n++) {
		unsigned v = t.small_map[i];
		if (!v)
			break;
		if (is(&objs[v - 1], bias, lo, ph))
			return &objs[v - 1];
	}
	return NULL;
}

static __attribute__((noinline)) struct xom_object *
probe_big(uintptr_t bias, uintptr_t lo, const void *ph)
{
	unsigned mask = big_slots - 1;

	for (unsigned i = hash_map(bias), n = 0; n <= mask; i = (i + 1) & mask, n++) {
		uint32_t v = map_get(i);
		if (!v)
			break;
		struct xom_object *o = slot((int)v - 1);
		if (is(o, bias, lo, ph))
			return o;
	}
	return NULL;
}

/* That object: a scan of the slots used while there are few, else a
 * probe of the hash. */
static struct xom_object *lookup(uintptr_t bias, uintptr_t lo, const void *ph)
{
	/* Unhashed, every slot used is one of the first. */
	_Static_assert(HASH_FROM <= FIRST_SLOTS, "the scan reads objs[] alone");
	if (!hashed) {
		for (int k = 0; k < nobjs; k++)
			if (is(&objs[k], bias, lo, ph))
				return &objs[k];
		return NULL;
	}
	return big_map ? probe_big(bias, lo, ph) : probe_small(bias, lo, ph);
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
	unsigned h = hash_map(slot(k)->bias);

	while (map_get(h))
		h = next(h);
	map_set(h, (uint32_t)k + 1);
}

/* Removes slot k from the hash, if it is there. */
static void unhash(int k)
{
	const struct xom_object *o = slot(k);

	if (!hashed)
		return;
	for (unsigned i = hash_map(o->bias), n = 0; map_get(i) && n < map_slots();
	     i = next(i), n++) {
		if (map_get(i) != (uint32_t)k + 1)
			continue;
		/* Re-insert the rest of the cluster so that no probe chain
		 * breaks at the hole. */
		map_set(i, 0);
		for (unsigned j = next(i); map_get(j); j = next(j)) {
			uint32_t v = map_get(j);
			map_set(j, 0);
			unsigned h = hash_map(slot((int)v - 1)->bias);
			while (map_get(h))
				h = next(h);
			map_set(h, v);
		}
		return;
	}
}

/* Hashes every live slot again, into a hash emptied first. */
static void rehash(void)
{
	for (int k = 0; k < nobjs; k++)
		if (slot(k)->live)
			hash_in(k);
}

/*
 * Room for as many slots again: a block, and a hash twice as big as
 * the slots then mapped, which replaces the one before it.  Object phase:
 * the hash is read only there, under xom's lock, while the fault handler
 * reads the slots alone.  0, or -1 when the memory is not there.
 */
static XOM_RARE int grow(void)
{
	size_t nslots = (size_t)FIRST_SLOTS << nmore;   /* the new block's */

	if (nmore == MORE_BLOCKS)
		return -1;
	size_t block_len = nslots * sizeof(struct xom_object);
	size_t map_len = 4 * nslots * sizeof(uint32_t);
	void *block = x_mmap(NULL, block_len, PROT_READ | PROT_WRITE,
	                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (X_MAP_FAILED(block))
		return -1;
	uint32_t *map = x_mmap(NULL, map_len, PROT_READ | PROT_WRITE,
	                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (X_MAP_FAILED(map)) {
		x_munmap(block, block_len);
		return -1;
	}
	more[nmore++] = block;
	if (big_map)
		x_munmap(big_map, big_slots * sizeof(uint32_t));
	big_map = map;
	big_slots = (unsigned)(map_len / sizeof(uint32_t));
	if (hashed)
		rehash();
	return 0;
}

long xom_objects_late(void)
{
	return late_live;
}

void xom_object_forget(struct xom_object *o)
{
	int k = slot_number(o);

	if (o->live && (o->flags & XOM_OBJ_LATE))
		late_live--;
	__atomic_store_n(&o->live, 0, __ATOMIC_RELEASE);
	if (k >= 0 && k < first_free)
		first_free = k;
}

void xom_forget_range(uintptr_t start, uintptr_t end)
{
	for (int i = 0; i < used(); i++) {
		struct xom_object *o = slot(i);
		if (o->live && o->lo < end && start < o->hi)
			xom_object_forget(o);
	}
}

void xom_objects_reserve(size_t n)
{
	size_t from = (size_t)nobjs;

	if (from < FIRST_SLOTS)
		x_populate(&objs[from], (n < FIRST_SLOTS - from ? n : FIRST_SLOTS - from)
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
	for (int i = first_free; i <= nobjs; i++) {
		if (i == slots_mapped() && grow() != 0)
			break;
		struct xom_object *o = slot(i);
		/* A slot never used is all zeros: it is not read first, or
		 * its page would take two faults, a read and a write. */
		int fresh = i == nobjs;
		if (!fresh && o->live)
			continue;
		first_free = i + 1;
		if (!fresh)
			unhash(i);
		/* The handler may be reading this slot: fill it while it is
		 * not live, and publish it last.  The path's room stays with
		 * the slot. */
		struct xom_object fill = *src;
		fill.live = 0;
		/* The copy leaves the old path pointer, which a handler that
		 * saw the old object live may still load; the new one is
		 * stored whole. */
		fill.path = fresh ? NULL : o->path;
		fill.path_room = fresh ? 0 : o->path_room;
		const char *new_path = name_slot(&fill, path);
		memcpy(o, &fill, sizeof(*o));
		__atomic_store_n(&o->path, new_path, __ATOMIC_RELAXED);
		if (hashed)
			hash_in(i);
		__atomic_store_n(&o->live, 1, __ATOMIC_RELEASE);
		if (o->flags & XOM_OBJ_LATE)
			late_live++;
		if (i == nobjs)
			__atomic_store_n(&nobjs, i + 1, __ATOMIC_RELEASE);
		if (!hashed && nobjs >= HASH_FROM) {
			rehash();
			hashed = 1;
		}
		return;
	}
	xom_notice("%s: no memory for xom's table of objects; xom cannot name its faults",
	           path);
}

void xom_objects_each(void (*fn)(struct xom_object *o, void *arg), void *arg)
{
	int n = used(), first = n < FIRST_SLOTS ? n : FIRST_SLOTS;

	for (int i = 0; i < first; i++)
		if (objs[i].live)
			fn(&objs[i], arg);
	for (int i = first; i < n; i++)
		if (slot(i)->live)
			fn(slot(i), arg);
}
