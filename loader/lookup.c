/*
 * lookup.c - pass 2 of a batch: what each arrival is, and the plan of each
 * that wants one, from the stores or from one run of the helper for all
 * the misses.  File I/O and a child process, so never inside a callback
 * that holds the dynamic linker's locks (the preload door) - except
 * la_activity, where the audit door must protect the objects before any
 * of their code runs, and which takes no lock of xom's that ld.so's
 * callers could hold.
 *
 * Phase: object (inside the batch's lock, batch.c).
 */
#include <limits.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <termios.h>

#include "arrive.h"
#include "sys.h"

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
		xom_arrival_remember(a, 0);
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
		xom_arrival_remember(a, 0);
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
	const char **paths = pass_room(s_paths, xom_batch_size(), sizeof(*paths), &m[0]);
	const struct xom_plan_head **plans = pass_room(s_plans, xom_batch_size(), sizeof(*plans), &m[1]);
	const char **whys = pass_room(s_whys, xom_batch_size(), sizeof(*whys), &m[2]);
	struct arrival **slot = pass_room(s_slot, xom_batch_size(), sizeof(*slot), &m[3]);
	const struct xom_plan_key **keys = pass_room(s_keys, xom_batch_size(), sizeof(*keys), &m[4]);

	if (!paths || !plans || !whys || !slot || !keys) {
		if (!keep_set)          /* then nothing is missing */
			xom_notice("no memory for the scanner's list of %zu objects; they are left unprotected",
			           xom_batch_size());
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
	if ((size_t)xom_objects_used() > 8 * xom_batch_size())
		return;
	by_lo = pass_room(by_lo_fixed, xom_batch_size(), sizeof(*by_lo), &mapped);
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

void xom_batch_lookup(struct xom_stores *st, void **mem)
{
	int keep_set;

	forget_overlapped();
	EACH_ARRIVAL(a) {
		a->outcome = XOM_APPLIED;
		classify(a);
	}
	if (find_plans(st, &keep_set) || keep_set)
		plan_misses(mem, keep_set);
	name_program();
}
