/*
 * arrive.c - pass 1 of a batch: its table, and each newly mapped object as
 * it arrives (xom_batch_add, as each object is reported, inside
 * dl_iterate_phdr or la_objopen).  It copies what the later passes need
 * from the mapped image - name, span, build-id - and nothing else: memory
 * reads only, no system call but an mmap when the batch outgrows its
 * table (which takes no lock).
 *
 * Phase: pass 1 runs inside the dynamic linker's callbacks; the rest of
 * the table's functions in the object phase (batch.c).
 */
#include <sys/mman.h>

#include "arrive.h"
#include "sys.h"
#include "xom_loader.h"

/* The counts lie among the small variables, in the page every start
 * writes.  The arrivals and, after them, the plans that pass 2 reads
 * (storeread.c) are contiguous from the first page boundary in
 * batch_mem: a small batch's arrivals and its set of plans (about 2 KB for
 * /bin/true) share one page.  (Aligning the table itself would align all
 * of .lbss, and move the object table out of the small variables' page.)
 * A batch that outgrows batch_mem moves to a mapping (big), which grows
 * as it fills and is unmapped when the batch ends: a batch has no fixed
 * size. */
static struct { size_t used, n, dropped, big_cap; char *big, *end; } b_;
#define BATCH_BYTES (BATCH_ARRIVALS * ARRIVAL_MAX)
static uint64_t batch_mem[(BATCH_BYTES + XOM_PAGE) / 8] XOM_COLD;

static char *batch(void)
{
	if (b_.big)
		return b_.big;
	return (char *)(((uintptr_t)batch_mem + XOM_PAGE - 1) & ~(uintptr_t)(XOM_PAGE - 1));
}

static size_t batch_cap(void)
{
	return b_.big ? b_.big_cap : BATCH_BYTES;
}

/* The records end at b_.end, which follows b_.used. */
static void batch_used(size_t used)
{
	b_.used = used;
	b_.end = batch() + used;
}

struct arrival *xom_arrival_first(void)
{
	return b_.used ? (struct arrival *)batch() : NULL;
}

struct arrival *xom_arrival_next(const struct arrival *a)
{
	/* A record too short to be one ends the walk: only memory that
	 * something else wrote over could hold it. */
	if (a->size < sizeof(struct arrival))
		return NULL;
	const char *next = (const char *)a + a->size;
	return next < b_.end ? (struct arrival *)next : NULL;
}

void xom_batch_empty(void)
{
	batch_used(0);
	b_.n = b_.dropped = 0;
}

/*
 * Moves the batch to a mapping of at least need bytes, twice the room it
 * had or more, and returns 0; or -1, the batch as it was.  Pass 1 may call
 * it inside a dynamic-linker callback: a raw mmap takes no lock of the
 * linker's or libc's.  Nothing but an arrival's path points into the
 * table while pass 1 runs.
 */
static XOM_RARE int grow_batch(size_t need)
{
	size_t cap = batch_cap();

	do {
		if (cap > SIZE_MAX / 4)
			return -1;
		cap *= 2;
	} while (cap < need);
	char *old = batch(), *p = x_mmap(NULL, cap, PROT_READ | PROT_WRITE,
	                                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (X_MAP_FAILED(p))
		return -1;
	memcpy(p, old, b_.used);
	char *old_big = b_.big;
	size_t old_cap = b_.big_cap;
	b_.big = p;
	b_.big_cap = cap;
	batch_used(b_.used);
	EACH_ARRIVAL(a)
		if (a->path >= old && a->path < old + b_.used)
			a->path = p + (a->path - old);
	if (old_big)
		x_munmap(old_big, old_cap);
	return 0;
}

/* Unmaps a batch that outgrew batch_mem, once nothing of it is read any
 * more (the plans that storeread.c reads lie in the table too). */
void xom_batch_unmap(void)
{
	if (b_.big)
		x_munmap(b_.big, b_.big_cap);
	b_.big = NULL;
	b_.big_cap = 0;
	batch_used(b_.used);
}

size_t xom_batch_size(void)
{
	return b_.n;
}

size_t xom_batch_dropped(void)
{
	return b_.dropped;
}

void *xom_batch_room(size_t *cap)
{
	*cap = batch_cap() - b_.used;
	return batch() + b_.used;
}

void xom_arrival_remember(const struct arrival *a, uintptr_t probe)
{
	struct xom_object o;

	memset(&o, 0, sizeof(o));
	o.flags = (uint8_t)(a->flags & ~(XOM_OBJ_NEW | XOM_OBJ_VERIFY));
	if (a->key.kind == XOM_KEY_BUILD_ID)
		o.flags |= XOM_OBJ_BUILD_ID;
	o.bias = a->bias;
	o.lo = a->lo;
	o.hi = a->hi;
	o.probe = probe;
	o.ph = a->ph;
	o.key = a->key;
	xom_object_remember(&o, a->path ? a->path : "?");
}

void xom_batch_add(const char *name, uintptr_t bias, const ElfW(Phdr) *ph,
                   int phnum, int flags)
{
	uintptr_t lo, hi;

	if (!xom_active || !ph)
		return;
	xom_elf_exec_span(bias, ph, phnum, &lo, &hi);
	if (lo >= hi)
		return;         /* nothing executable: a pure data object */
	size_t len = name ? strlen(name) : 0;
	len = len < XOM_NAME_MAX - 1 ? len : XOM_NAME_MAX - 1;
	size_t size = (sizeof(struct arrival) + len + 1 + 7) & ~(size_t)7;
	size_t off = b_.used;
	if (off + size > batch_cap() && grow_batch(off + size) != 0) {
		b_.dropped++;
		return;
	}
	batch_used(off + size);
	b_.n++;
	struct arrival *a = (struct arrival *)(batch() + off);
	memset(a, 0, sizeof(*a));
	a->size = (uint32_t)size;
	memcpy(a->name, name ? name : "", len);
	a->name[len] = 0;
	a->bias = bias;
	a->lo = lo;
	a->hi = hi;
	a->ph = ph;
	a->phnum = phnum;
	a->flags = flags | (xom_started ? XOM_OBJ_LATE : 0);
	if (!(a->flags & XOM_OBJ_MAIN))
		a->path = a->name;
	xom_elf_build_id(bias, ph, phnum, &a->key);
	a->shape = xom_elf_shape(bias, ph, phnum);
}

/* Between batches the batch is empty: the first n arrivals are what pass
 * 1 writes.  A batch bigger than batch_mem holds is given its room here,
 * outside the dynamic linker's callbacks, when it can be. */
void xom_batch_reserve(size_t n)
{
	/* A record is about this long: names are paths. */
	size_t guess = sizeof(struct arrival) + 64;
	size_t want = n < SIZE_MAX / guess ? n * guess : SIZE_MAX;

	if (want > batch_cap() - b_.used)
		grow_batch(b_.used + want);
	x_populate(batch() + b_.used, want < batch_cap() - b_.used
	                                ? want : batch_cap() - b_.used);
	xom_objects_reserve(n);
}

/* A plan of another shape under the same key is no plan for a (xom_plan.h
 * says why): the lookup goes on, to the next store and at last to the
 * helper. */
int xom_arrival_fits(const struct arrival *a, const struct xom_plan_head *plan)
{
	struct xom_plan_key k;

	xom_plan_key_of(plan, &k);
	return xom_key_equal(&k, &a->key) && plan->shape == a->shape;
}
