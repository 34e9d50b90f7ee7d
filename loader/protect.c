/*
 * protect.c - a batch of newly mapped objects, from their mappings to their
 * protection, in three passes:
 *   1. xom_batch_add, as each object is reported (inside dl_iterate_phdr or
 *      la_objopen): copies what it needs from the mapped image - name,
 *      span, build-id - and drops what is known already.  Memory reads
 *      only: no system call, but for an mmap when the batch outgrows its
 *      table (which takes no lock).
 *   2. xom_batch_run: finds each object's plan in the stores, or from one
 *      run of the helper for all the misses.  File I/O and a child
 *      process, so never inside a callback that holds the dynamic
 *      linker's locks (the preload door) - except la_activity, where the
 *      audit door must protect the objects before any of their code runs,
 *      and which takes no lock of xom's that ld.so's callers could hold.
 *   3. applies each plan and remembers the object for the fault handler.
 *      The audit door does it at once (ld.so holds its load lock: nothing
 *      can be unloaded meanwhile).  The preload door does it in a second
 *      walk of dl_iterate_phdr, through xom_batch_apply: an object that
 *      another thread unloaded since pass 1 is no longer listed, and
 *      listed objects stay mapped while the walk holds the linker's lock,
 *      so a plan is never applied to memory that is gone or reused.
 *
 * Phase: object (passes 2 and 3 run inside xom_enter/xom_leave).
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <termios.h>

#include "loader.h"
#include "sys.h"
#include "xom_loader.h"

/* The arrivals that the batch's own tables hold; a bigger batch maps
 * room for the rest (grow_batch, pass_room).  The tests build a runtime
 * with less room (XOM_BATCH_ARRIVALS), to take those paths often. */
#ifdef XOM_BATCH_ARRIVALS
#define BATCH_ARRIVALS XOM_BATCH_ARRIVALS
#else
#define BATCH_ARRIVALS 1024
#endif

/* One arrival, then its name: records of their own length, one after the
 * other, so that a batch writes the bytes it needs and no more (every
 * page it touches costs a fault, and another when the process ends). */
struct arrival {
	uintptr_t bias, lo, hi;
	const ElfW(Phdr) *ph;           /* pass 1 only, unless stable */
	int phnum, flags;
	struct xom_plan_key key;        /* the build-id, or (pass 2) identity */
	uint64_t shape;                 /* xom_elf_shape: a plan must have it too */
	const char *path;               /* for messages and the helper */
	const struct xom_plan_head *plan;
	const char *why;                /* the helper's reason, if no plan */
	int done;                       /* remembered: nothing more to do */
	int outcome;
	uint32_t size;                  /* of this record */
	char name[];                    /* the link map's name, maybe cut */
};
#define ARRIVAL_MAX (sizeof(struct arrival) + XOM_NAME_MAX)

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
#define nbatch b_.n
#define dropped b_.dropped
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

static struct arrival *first_arrival(void)
{
	return b_.used ? (struct arrival *)batch() : NULL;
}

static struct arrival *next_arrival(const struct arrival *a)
{
	/* A record too short to be one ends the walk: only memory that
	 * something else wrote over could hold it. */
	if (a->size < sizeof(struct arrival))
		return NULL;
	const char *next = (const char *)a + a->size;
	return next < b_.end ? (struct arrival *)next : NULL;
}

#define EACH_ARRIVAL(a) \
	for (struct arrival *a = first_arrival(); a; a = next_arrival(a))

static void batch_empty(void)
{
	batch_used(0);
	nbatch = dropped = 0;
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
static void batch_unmap(void)
{
	if (b_.big)
		x_munmap(b_.big, b_.big_cap);
	b_.big = NULL;
	b_.big_cap = 0;
	batch_used(b_.used);
}

/* ---- pass 1 ------------------------------------------------------------ */

/*
 * Whether an object that was protected still is.  A library unloaded and
 * loaded again at the same address looks like the old one to
 * dl_iterate_phdr; its new mapping has no key.  The kernel honours the
 * caller's PKRU when it copies from user memory, so a system call that
 * reads a string from a protected page fails with EFAULT, and access()
 * does nothing else with it.  (Pass 2 does this: it is a system call.)
 */
static int still_protected(const struct xom_object *o)
{
	if (!o->probe || xom_opt.backend == XOM_BACKEND_NONE)
		return 1;
	return x_access((const char *)o->probe, F_OK) == -EFAULT;
}

static void remember(const struct arrival *a, uintptr_t probe)
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
		dropped++;
		return;
	}
	batch_used(off + size);
	nbatch++;
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

/* ---- pass 2 ------------------------------------------------------------ */

/* The main program's file.  Not AT_EXECFN, which for a #! script names
 * the script, so that the interpreter really mapped would go unprotected;
 * but when the dynamic linker was run as a program (ld.so PROG), the
 * executable is ld.so and glibc puts the program in AT_EXECFN: the file
 * whose build-id is the mapped one's is the right one. */
static const char *main_path(const struct xom_plan_key *mapped)
{
	static char exe[PATH_MAX] XOM_COLD;
	struct xom_plan_key k;

	if (!exe[0]) {
		long n = x_readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = 0;
	}
	const char *execfn = (const char *)getauxval(AT_EXECFN);
	if (mapped->kind == XOM_KEY_BUILD_ID && execfn
	    && (xom_elf_file_build_id(exe, &k) != 0 || !xom_key_equal(&k, mapped))
	    && xom_elf_file_build_id(execfn, &k) == 0 && xom_key_equal(&k, mapped))
		return execfn;
	return exe[0] ? exe : NULL;
}

/* The key of an object without a build-id: the identity of its file. */
static int ident_key(const char *path, struct xom_plan_key *k)
{
	struct stat st;

	long rc = path ? x_stat(path, &st) : -ENOENT;
	if (rc != 0) {
		xom_notice("%s: cannot stat the file (%serrno %d); left unprotected",
		        path ? path : "the main program", XOM_ERR((int)-rc));
		return -1;
	}
	xom_ident_key(&st, k);
	return 0;
}

/* Whether an arrival, classified, looks for a plan: these make the
 * batch's set, in their order. */
static int wants_plan(const struct arrival *a)
{
	return !a->done && a->key.kind;
}

/* Whether exclude= names path: the patterns are made ready at the first
 * object, since the options do not change once the runtime started. */
static int excluded(const char *path)
{
	static struct xom_exclude x XOM_COLD;
	static int ready;

	if (!xom_opt.exclude)
		return 0;
	if (!ready) {
		xom_exclude_compile(xom_opt.exclude, &x);
		ready = 1;
	}
	return xom_exclude_match(&x, path);
}

/* What one arrival is: known (done), left alone (done, or no key), or in
 * want of a plan (wants_plan). */
static void classify(struct arrival *a)
{
	struct xom_object *known = xom_object_find(a->bias, a->lo);

	/* An object of another namespace where the table has one of the
	 * program's: that one was unloaded, behind the preload door. */
	int stale = known && (a->flags & XOM_OBJ_OTHER_NS)
	            && !(known->flags & XOM_OBJ_OTHER_NS);
	if (known && !(a->flags & XOM_OBJ_NEW) && !stale
	    && !((a->flags & XOM_OBJ_VERIFY) && !still_protected(known))) {
		a->done = 1;
		return;
	}
	if (known)
		xom_object_forget(known);       /* unloaded and mapped again */
	/* The vDSO's address, asked once: it was an auxv walk per object. */
	static uintptr_t vdso;
	static int vdso_asked;
	if (!vdso_asked) {
		vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
		vdso_asked = 1;
	}
	if (!strncmp(a->name, "linux-vdso", 10) || (vdso && vdso == a->lo)) {
		a->path = "[vdso]";             /* no file; stays readable */
		a->key.kind = 0;
		remember(a, 0);
		a->done = 1;
		return;
	}
	int is_main = a->flags & XOM_OBJ_MAIN;
	if (is_main && (!a->key.kind || xom_opt.exclude))
		a->path = main_path(&a->key);
	if (a->path && excluded(a->path)) {
		if (xom_opt.verbose >= 1)
			xom_say("%s: excluded; left unprotected", a->path);
		a->key.kind = 0;
		remember(a, 0);
		a->done = 1;
		return;
	}
	if (!a->key.kind)
		ident_key(a->path, &a->key);
}

/* The arrival's plan, from the set or alone.  Returns 1 when no store
 * has it. */
static int found(struct arrival *a, const struct xom_plan_head *plan)
{
	a->plan = plan;
	if (a->plan && !a->path)
		a->path = xom_plan_path(a->plan);
	return !a->plan;
}

/* Whether plan is the one for a: its key, and its file's shape.  A plan of
 * another shape under the same key is no plan for a (xom_plan.h says why):
 * the lookup goes on, to the next store and at last to the helper. */
static int fits(const struct arrival *a, const struct xom_plan_head *plan)
{
	struct xom_plan_key k;

	xom_plan_key_of(plan, &k);
	return xom_key_equal(&k, &a->key) && plan->shape == a->shape;
}

/* Gives each arrival still without a plan its copy in the set, if the set
 * has one, and returns whether it gave any: the set's plans are in the
 * arrivals' order, less those its store lacked when it was made, and less
 * any damaged.  A copy of another shape is passed over, as a damaged one
 * is. */
static int take_set(const struct xom_set_head *set)
{
	size_t at = 0, len = 0;
	int took = 0;
	const struct xom_plan_head *next = set ? xom_set_plan(set, &at, &len) : NULL;

	EACH_ARRIVAL(a) {
		struct xom_plan_key k;
		if (!next)
			return took;
		if (!wants_plan(a))
			continue;
		xom_plan_key_of(next, &k);
		if (!xom_key_equal(&k, &a->key))
			continue;
		if (!a->plan && next->shape == a->shape) {
			found(a, next);
			took = 1;
		}
		next = xom_set_plan(set, &at, &len);
	}
	return took;
}

/*
 * Pass 2: the plans of the arrivals that want one, store by store in the
 * stores' order (system, user, fallback), each object's from the first
 * store that has it.  A batch of two or more first asks a store for its
 * set (xom_plan.h), then looks up alone what the set lacked.  The helper
 * keeps a set for the batch it scanned for, in the user's stores, and for
 * a start-up that the stores served object by object (plan_misses);
 * `xom cache build` one for each program's start-up, and only those in
 * the system store, which is asked for a set only by the batch that holds
 * the main program (a dlopen's would be a slot read in vain).  Returns how
 * many no store has; *keep_set says whether the batch is a start-up that
 * the stores past the system store served plan by plan, with no set
 * (plan_misses).
 */
static size_t find_plans(struct xom_stores *st, int *keep_set)
{
	size_t want = 0, misses = 0;
	uint64_t hash = XOM_SET_HASH_INIT;
	int start = 0;

	EACH_ARRIVAL(a) {
		if (wants_plan(a)) {
			want++;
			hash = xom_set_hash(hash, &a->key);
		}
		start |= a->flags & XOM_OBJ_MAIN;
	}
	int from_sets = 0, last = 0;
	for (int i = 0; i < XOM_NSTORES; i++) {
		last = i;
		if (want >= 2 && (start || i != XOM_STORE_SYSTEM))
			from_sets |= take_set(xom_stores_find_set(st, i, hash));
		misses = 0;
		EACH_ARRIVAL(a)
			if (wants_plan(a) && !a->plan)
				misses += (size_t)found(a, xom_stores_find(st, i, &a->key,
				                                           a->shape));
		if (!misses)
			break;
	}
	*keep_set = start && want >= 2 && !misses && !from_sets
	            && last != XOM_STORE_SYSTEM;
	return misses;
}

/* A cold scan of this much code takes long enough to say so on a
 * terminal: about a third of a second on one core. */
#define SAY_SCANNING_BYTES (4ul << 20)

static int is_terminal(int fd)
{
	struct termios t;

	return sys3(SYS_ioctl, fd, TCGETS, (long)&t) == 0;
}

static void say_scanning(size_t k, unsigned long bytes)
{
	int fd = xom_log_fd();

	void (*say)(const char *, ...) = xom_opt.verbose >= 1 ? xom_say
		: bytes >= SAY_SCANNING_BYTES && fd >= 0 && is_terminal(fd)
		? xom_notice : NULL;

	if (say)
		say("scanning %zu object%s (%lu MB of code) for the first time...",
		    k, k == 1 ? "" : "s", (bytes + (1ul << 19)) >> 20);
}

/*
 * Room for n entries of size each for one pass: fixed, its own table of
 * BATCH_ARRIVALS entries, when they fit, else a mapping, whose length
 * *mapped says (0: none), for the pass to unmap.  NULL when there is no
 * memory for it.
 */
static XOM_RARE void *pass_map(size_t n, size_t each, size_t *mapped)
{
	void *p = x_mmap(NULL, n * each, PROT_READ | PROT_WRITE,
	                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (X_MAP_FAILED(p))
		return NULL;
	*mapped = n * each;
	return p;
}

static void *pass_room(void *fixed, size_t n, size_t each, size_t *mapped)
{
	*mapped = 0;
	return n <= BATCH_ARRIVALS ? fixed : pass_map(n, each, mapped);
}

static void pass_room_free(void *p, size_t mapped)
{
	if (mapped)
		x_munmap(p, mapped);
}

/*
 * One helper run for every object no store had; it also keeps the set of
 * the whole batch's plans, for its next run.  With none missing and
 * keep_set (find_plans), the run keeps the set alone: a program whose
 * every plan another program's start made, or whose set another batch of
 * its own pushed out, would otherwise look each plan up at every start.
 * That run is quiet, since nothing is left unprotected when it cannot be
 * made (each start then tries again), and is made only where the helper
 * has a store to keep it in.
 */
static XOM_RARE void plan_misses(void **mem, int keep_set)
{
	static const char *s_paths[BATCH_ARRIVALS] XOM_COLD;
	static const struct xom_plan_head *s_plans[BATCH_ARRIVALS] XOM_COLD;
	static const char *s_whys[BATCH_ARRIVALS] XOM_COLD;
	static struct arrival *s_slot[BATCH_ARRIVALS] XOM_COLD;
	static const struct xom_plan_key *s_keys[BATCH_ARRIVALS] XOM_COLD;
	size_t k = 0, nkeys = 0, m[5];
	unsigned long bytes = 0;
	const char **paths = pass_room(s_paths, nbatch, sizeof(*paths), &m[0]);
	const struct xom_plan_head **plans = pass_room(s_plans, nbatch, sizeof(*plans), &m[1]);
	const char **whys = pass_room(s_whys, nbatch, sizeof(*whys), &m[2]);
	struct arrival **slot = pass_room(s_slot, nbatch, sizeof(*slot), &m[3]);
	const struct xom_plan_key **keys = pass_room(s_keys, nbatch, sizeof(*keys), &m[4]);

	if (!paths || !plans || !whys || !slot || !keys) {
		if (!keep_set)          /* then nothing is missing */
			xom_notice("no memory for the scanner's list of %zu objects; they are left unprotected",
			           nbatch);
		goto out;
	}
	EACH_ARRIVAL(a) {
		if (wants_plan(a))
			keys[nkeys++] = &a->key;
		if (!wants_plan(a) || a->plan)
			continue;
		if (!a->path && (a->flags & XOM_OBJ_MAIN))
			a->path = main_path(&a->key);
		if (!a->path)
			continue;
		paths[k] = a->path;
		slot[k++] = a;
		bytes += a->hi - a->lo;
	}
	if (!k) {
		char dir[XOM_PATH_MAX];
		if (keep_set && (xom_store_dir(XOM_STORE_USER, dir, sizeof(dir))
		                 || xom_store_dir(XOM_STORE_FALLBACK, dir, sizeof(dir))))
			xom_helper_keep_set(keys, nkeys, mem);
		goto out;
	}
	say_scanning(k, bytes);
	/* A run that failed said so; the plans of those that did not hold. */
	xom_helper_run(paths, k, nkeys >= 2 ? keys : NULL, nkeys, plans, whys, mem);
	for (size_t j = 0; j < k; j++) {
		slot[j]->plan = plans[j];
		slot[j]->why = whys[j];
	}
out:
	pass_room_free(paths, m[0]);
	pass_room_free(plans, m[1]);
	pass_room_free(whys, m[2]);
	pass_room_free(slot, m[3]);
	pass_room_free(keys, m[4]);
}

/*
 * Forgets every known object that overlaps an arrival without being the
 * same mapping: an entry left over from an object that went away unseen.
 * The arrivals are sorted by address once, and each known object is looked
 * up among them, so a batch of k arrivals with n objects known costs
 * O((n + k) log k), not n * k.
 */
static const struct arrival *by_lo_fixed[BATCH_ARRIVALS] XOM_COLD;
static const struct arrival **by_lo;

static int lo_before(size_t x, size_t y)
{
	return by_lo[x]->lo < by_lo[y]->lo;
}

static void sift(size_t root, size_t n)
{
	for (size_t c; (c = 2 * root + 1) < n; root = c) {
		if (c + 1 < n && lo_before(c, c + 1))
			c++;
		if (!lo_before(root, c))
			return;
		const struct arrival *t = by_lo[root];
		by_lo[root] = by_lo[c];
		by_lo[c] = t;
	}
}

static void forget_stale(struct xom_object *o, void *arg)
{
	size_t n = *(size_t *)arg, lo = 0, hi = n;

	/* The first arrival that ends above o's start. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (by_lo[mid]->hi <= o->lo)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Arrivals are live mappings and do not overlap one another, so
	 * their ends are sorted too; only the first can overlap o's start,
	 * and the later ones o's end. */
	for (; lo < n && by_lo[lo]->lo < o->hi; lo++) {
		const struct arrival *a = by_lo[lo];
		if (a->bias != o->bias || a->lo != o->lo) {
			xom_object_forget(o);
			return;
		}
	}
}

static void forget_overlapped(void)
{
	size_t n = 0, mapped;

	if (xom_objects_none())
		return;         /* the first batch: nothing known to go stale */
	/* A pass over the table costs what is loaded: a small batch among
	 * many objects leaves it to classify, which forgets what lies at an
	 * arrival's own place, and to the preload door's sweeps (sync.c) or
	 * the audit door's la_objclose for the rest. */
	if ((size_t)xom_objects_used() > 8 * nbatch)
		return;
	by_lo = pass_room(by_lo_fixed, nbatch, sizeof(*by_lo), &mapped);
	if (!by_lo)
		return;         /* left as they are: the cost of no memory */
	EACH_ARRIVAL(a)
		by_lo[n++] = a;
	for (size_t i = n / 2; i-- > 0; )
		sift(i, n);
	for (size_t end = n; end > 1; end--) {
		const struct arrival *t = by_lo[0];
		by_lo[0] = by_lo[end - 1];
		by_lo[end - 1] = t;
		sift(0, end - 1);
	}
	xom_objects_each(forget_stale, &n);
	pass_room_free(by_lo, mapped);
	by_lo = NULL;
}

/* ---- pass 3 ------------------------------------------------------------ */

/* Applies what pass 2 found to one arrival, whose program headers ph are
 * valid now. */
static void finish(struct arrival *a, const ElfW(Phdr) *ph, int phnum)
{
	uintptr_t probe = 0;

	a->outcome = XOM_UNPROTECTED;
	if (a->plan) {
		/* The helper's plans: made from the file at the path, which
		 * may no longer be the one mapped. */
		if (!fits(a, a->plan)) {
			xom_notice("%s: the file on disk is not the one mapped; left unprotected",
			        a->path);
		} else {
			struct xom_target t = { a->path, a->bias, ph, phnum, a->flags,
			                        &a->key };
			a->outcome = xom_apply(&t, a->plan, &probe);
		}
	} else if (a->why && a->path) {
		xom_notice("%s: analysis failed: %s; left unprotected", a->path, a->why);
	}
	remember(a, probe);
	a->done = 1;
}

/* Pass 3 for a, if the object at its place is still the one of pass 1:
 * the same name and, if it had one, the same build-id (a file identity
 * is checked by the plan's code checksum). */
static void apply_if_same(struct arrival *a, const char *name, uintptr_t bias,
                          uintptr_t lo, const ElfW(Phdr) *ph, int phnum)
{
	struct xom_plan_key k;

	if (a->done || a->bias != bias || a->lo != lo
	    || strncmp(a->name, name ? name : "", XOM_NAME_MAX - 1))
		return;
	if (a->key.kind == XOM_KEY_BUILD_ID
	    && (xom_elf_build_id(bias, ph, phnum, &k) != 0
	        || !xom_key_equal(&k, &a->key)))
		return;
	finish(a, ph, phnum);
}

int xom_batch_apply(const char *name, uintptr_t bias, const ElfW(Phdr) *ph,
                    int phnum)
{
	uintptr_t lo, hi;

	xom_elf_exec_span(bias, ph, phnum, &lo, &hi);
	EACH_ARRIVAL(a)
		apply_if_same(a, name, bias, lo, ph, phnum);
	return 0;
}

size_t xom_batch_apply_found(void)
{
	size_t missed = 0;

	EACH_ARRIVAL(a) {
		struct dl_find_object fo;
		const ElfW(Phdr) *ph = NULL;
		int phnum = 0;
		if (a->done)
			continue;
		if (_dl_find_object((void *)a->lo, &fo) == 0 && fo.dlfo_link_map
		    && fo.dlfo_link_map->l_addr == a->bias)
			ph = xom_link_map_phdrs(fo.dlfo_link_map, (a->flags & XOM_OBJ_MAIN) != 0,
			                        &phnum);
		if (ph)
			apply_if_same(a, fo.dlfo_link_map->l_name, a->bias, a->lo, ph, phnum);
		missed += !a->done;
	}
	return missed;
}

/* ---- the batch ----------------------------------------------------------- */

static void batch_abandon(void)
{
	batch_empty();
	/* The plans read for it lie in the batch's table: the next batch
	 * must not read its own after them, over its arrivals. */
	xom_store_read_wipe();
	batch_unmap();
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
			batch_abandon();
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
	batch_abandon();
}

void xom_started_up(void)
{
	xom_started = 1;
	if (xom_opt.verbose < 2 || !xom_active)
		return;
	xom_say("%lu objects protected: %lu pages execute-only, %lu kept readable, %lu protection calls, about %lu mappings added",
	        xom_totals.objects, xom_totals.xom_pages, xom_totals.readable_pages,
	        xom_totals.calls, xom_totals.maps_added);
}

/* Ends the batch: counts what was left unprotected, refuses under
 * require=1, and forgets the batch.  Returns 0 or -1 (late, refused). */
static int end_batch(void)
{
	char first[256];
	size_t refused = dropped;

	first[0] = 0;
	EACH_ARRIVAL(a) {
		if (!a->done)
			continue;       /* gone before pass 3, or known */
		if (a->outcome == XOM_UNPROTECTED && a->path && !first[0])
			xom_copy_str(first, sizeof(first), a->path);
		refused += a->outcome == XOM_UNPROTECTED;
	}
	if (dropped)
		xom_notice("%zu objects arrived at once, more than xom found memory for; they are left unprotected",
		        dropped);
	batch_empty();
	if (!refused || !xom_opt.require)
		return 0;
	/* Late, the caller (a dlopen) fails and says why, unless waived. */
	if (xom_started && !xom_waiver())
		return -1;
	static char why[400] XOM_COLD;
	xom_fmt(why, sizeof(why), "%s cannot be protected",
	        first[0] ? first : "an object");
	xom_refuse(why);
	return 0;
}

/* Tells the profiles which program this is, from the batch that holds the
 * main program: its key names its profile file. */
static void name_program(void)
{
	char file[XOM_KEY_NAME_MAX];

	EACH_ARRIVAL(a) {
		if (!(a->flags & XOM_OBJ_MAIN) || !a->key.kind)
			continue;
		xom_key_name(&a->key, file, sizeof(file));
		xom_profile_program(a->key.kind == XOM_KEY_BUILD_ID ? file : a->path,
		                    file, a->path);
	}
}

/* Passes 2 and 3; apply walks the objects again for pass 3 (the preload
 * door), or NULL to use the program headers that pass 1 saw. */
static int run_batch(void (*apply)(void))
{
	struct xom_stores st;
	void *mem = NULL;

	xom_enter();
	xom_stores_open(&st, nbatch, batch() + b_.used, batch_cap() - b_.used);
	forget_overlapped();
	EACH_ARRIVAL(a) {
		a->outcome = XOM_APPLIED;
		classify(a);
	}
	int keep_set;
	if (find_plans(&st, &keep_set) || keep_set)
		plan_misses(&mem, keep_set);
	name_program();
	xom_profile_open();
	if (apply) {
		apply();
	} else {
		EACH_ARRIVAL(a)
			if (!a->done)
				finish(a, a->ph, a->phnum);
	}
	/* Before the stores are unmapped: a path may point into one. */
	int rc = end_batch();
	/* What the program may have done since the last batch, behind every
	 * wrapper: changed the key's rights, or replaced the handler. */
	if (xom_started) {
		xom_key_check();
		if (xom_fault_check())
			xom_say("the program replaced xom's SIGSEGV handler with a raw system call; xom put its own back in front, and passes the program's faults on to it");
	}
	xom_stores_close(&st);
	batch_unmap();
	xom_helper_release(mem);
	xom_profile_close();
	xom_leave();
	return rc;
}

int xom_batch_run(void)
{
	/* Nothing arrived (a sync after an unload): no batch, no calls. */
	if (!xom_active || (!nbatch && !dropped)) {
		batch_empty();
		batch_unmap();
		return 0;
	}
	return run_batch(NULL);
}

int xom_batch_run_walk(void (*walk)(void))
{
	if (!xom_active || (!nbatch && !dropped)) {
		batch_empty();
		batch_unmap();
		return 0;
	}
	return run_batch(walk);
}
