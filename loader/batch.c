/*
 * batch.c - a batch of newly mapped objects, from their mappings to their
 * protection, in three passes, under xom's lock:
 *   1. xom_batch_add (arrive.c), as each object is reported.
 *   2. xom_batch_run: finds each object's plan (lookup.c).
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
#include <pthread.h>

#include "arrive.h"
#include "sys.h"
#include "xom_loader.h"

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
		if (!xom_arrival_fits(a, a->plan)) {
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
	xom_arrival_remember(a, probe);
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
	xom_batch_empty();
	/* The plans read for it lie in the batch's table: the next batch
	 * must not read its own after them, over its arrivals. */
	xom_store_read_wipe();
	xom_batch_unmap();
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

/*
 * This thread's ID, asked of the kernel once per thread: each thread keeps
 * it with the generation of the process it was had in, a number in a page
 * that the kernel zeroes in a fork child however it was made (libc's
 * fork, a raw fork or clone: MADV_WIPEONFORK, Linux 4.14), so that a
 * thread ID copied from the parent is not believed there.  (The C
 * library's own copy of the ID is the parent's after a raw fork.)  The
 * page is set up at the first batch after start-up: a start-up is one
 * batch, and until then, or where the page cannot be had, every entry
 * asks the kernel.  A vfork child shares its parent's memory and keeps the
 * ID of the parent's thread, which is suspended until the child is done:
 * no other thread takes that owner for gone.
 */
static union {
	unsigned gen;
	char page[4096];
} fork_gen __attribute__((aligned(4096))) XOM_COLD;
static int fork_gen_state;              /* 0 not tried, 1 set up, -1 failed */
static unsigned gen_last;               /* copied to a child: its next is new */
static __thread int tid_had __attribute__((tls_model("initial-exec")));
static __thread unsigned tid_gen __attribute__((tls_model("initial-exec")));

static int self_tid(void)
{
	unsigned g = __atomic_load_n(&fork_gen.gen, __ATOMIC_ACQUIRE);

	if (g && tid_gen == g)
		return tid_had;
	int tid = x_gettid();
	if (!fork_gen_state && xom_started)
		fork_gen_state = sys3(SYS_madvise, (long)&fork_gen, sizeof(fork_gen),
		                      18 /* MADV_WIPEONFORK */) == 0 ? 1 : -1;
	if (fork_gen_state != 1)
		return tid;
	if (!g) {
		/* Set up just now, or a fork child's first entry. */
		unsigned want = __atomic_add_fetch(&gen_last, 1, __ATOMIC_RELAXED);
		if (!want)
			want = __atomic_add_fetch(&gen_last, 1, __ATOMIC_RELAXED);
		g = 0;
		if (!__atomic_compare_exchange_n(&fork_gen.gen, &g, want, 0,
		                                 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			want = g;       /* another thread of this process set it */
		g = want;
	}
	tid_had = tid;
	tid_gen = g;
	return tid;
}

int xom_lock_owner(void)
{
	return __atomic_load_n(&lock_owner, __ATOMIC_RELAXED);
}

void xom_enter(void)
{
	if (lock_depth) {
		lock_depth++;   /* this thread holds it already */
		return;
	}
	int self = self_tid();
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
	size_t refused = xom_batch_dropped();

	first[0] = 0;
	EACH_ARRIVAL(a) {
		if (!a->done)
			continue;       /* gone before pass 3, or known */
		if (a->outcome == XOM_UNPROTECTED && a->path && !first[0])
			xom_copy_str(first, sizeof(first), a->path);
		refused += a->outcome == XOM_UNPROTECTED;
	}
	if (xom_batch_dropped())
		xom_notice("%zu objects arrived at once, more than xom found memory for; they are left unprotected",
		        xom_batch_dropped());
	xom_batch_empty();
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

/* Passes 2 and 3; apply walks the objects again for pass 3 (the preload
 * door), or NULL to use the program headers that pass 1 saw. */
static int run_batch(void (*apply)(void))
{
	struct xom_stores st;
	void *mem = NULL;

	xom_enter();
	size_t cap;
	void *room = xom_batch_room(&cap);
	xom_stores_open(&st, xom_batch_size(), room, cap);
	xom_batch_lookup(&st, &mem);
	xom_profile_open();
	if (apply) {
		apply();
	} else {
		EACH_ARRIVAL(a)
			if (!a->done)
				finish(a, a->ph, a->phnum);
	}
	/* Before the stores are closed: a path may point into one. */
	int rc = end_batch();
	/* Before the key's rights are checked: it gives back this thread's. */
	xom_stores_close(&st);
	/* What the program may have done since the last batch, behind every
	 * wrapper: changed the key's rights, or replaced the handler. */
	if (xom_started) {
		xom_key_check();
		if (xom_fault_check())
			xom_say("the program replaced xom's SIGSEGV handler with a raw system call; xom put its own back in front, and passes the program's faults on to it");
	}
	xom_batch_unmap();
	xom_helper_release(mem);
	xom_profile_close();
	xom_leave();
	return rc;
}

int xom_batch_run(void)
{
	/* Nothing arrived (a sync after an unload): no batch, no calls. */
	if (!xom_active || (!xom_batch_size() && !xom_batch_dropped())) {
		xom_batch_empty();
		xom_batch_unmap();
		return 0;
	}
	return run_batch(NULL);
}

int xom_batch_run_walk(void (*walk)(void))
{
	if (!xom_active || (!xom_batch_size() && !xom_batch_dropped())) {
		xom_batch_empty();
		xom_batch_unmap();
		return 0;
	}
	return run_batch(walk);
}
