/*
 * sync.c - the preload door's view of the loaded objects: the dynamic
 * linker's list of link maps, compared with the table.
 *
 * Phase: object.  Each walk runs inside a dl_iterate_phdr callback, which
 * holds the dynamic linker's write lock: no object is added to the list or
 * taken out of it meanwhile (glibc unlinks, unmaps and frees an object
 * under that lock), so the walks only read memory; an object that may have
 * been loaded again at its old place is checked in pass 2, outside the
 * lock (XOM_OBJ_VERIFY).  libc's own dlopen takes the load lock first, so
 * the batch runs after the walk, and its pass 3 checks each arrival again
 * under the write lock (see batch.c).
 *
 * What a sync costs is what arrived, not what is loaded.  glibc appends
 * each new link map to the end of its namespace's list, and counts the
 * objects ever added (dlpi_adds) and those that are gone (dlpi_subs).  The
 * list's last object at a sync is the anchor: while it is still loaded,
 * the objects after it are exactly the ones that arrived since, and a
 * sync walks them alone.  An unload may take the anchor: when nothing was
 * added since (no new link map can have taken its memory), the newest of
 * the objects last seen that the dynamic linker still has is the anchor
 * again (keep_anchor, which a dlclose runs without xom's lock); the ones
 * it passes are forgotten.  Otherwise, and at the first sync, the whole
 * list is walked, as every sync did before.  The anchor is the list's
 * last link map, with code or not, so that the objects after it must be
 * exactly as many as glibc added: any other number sends the sync to the
 * whole list.  Other namespaces (dlmopen, audit modules) make dlpi_subs no
 * count of unloads, since glibc counts their objects in it by another
 * rule; a whole walk finds them by that rule, and from then on every sync
 * walks the whole list, as before.  Objects unloaded behind the
 * anchor stay in the table until a new one lands at their place or a
 * sweep of the list, made once the table has grown by half since the
 * last, forgets them.
 */
#include <dlfcn.h>
#include <sys/single_threaded.h>

#include "../loader/loader.h"
#include "../loader/xom_loader.h"
#include "preload.h"

/* The objects last seen at the end of the list: the anchor is the newest.
 * What keep_anchor can step back over. */
#define RECENT 16

struct seen {
	const struct link_map *map;
	uintptr_t bias, lo;                     /* its span's start; 0: no code */
	uintptr_t at;                           /* an address inside it */
};

struct counts {
	unsigned long long adds, subs;
};

/* Written inside dl_iterate_phdr callbacks alone (the linker's write lock
 * orders them); the counts of the fast path are read without a lock. */
static struct {
	unsigned long long adds, subs;          /* at the last sync */
	unsigned long long anchor_adds, anchor_subs;   /* the anchor checked */
	unsigned long long full_subs;           /* at the last whole walk */
	struct seen recent[RECENT];             /* a ring: newest at top */
	int nrecent, top;
	struct seen gone[RECENT];               /* unloaded, to forget */
	int ngone;
	int rewalk;                             /* the next sync walks it all */
	int other_ns;                           /* namespaces besides ours */
	long late_at_sweep;                     /* late objects after a sweep */
	uint32_t generation;
} s = { .rewalk = 1 };

/* The program headers and span of a link map's object; 0, or -1 when it
 * has none to protect. */
static int map_image(const struct link_map *m, int is_main,
                     const ElfW(Phdr) **ph, int *phnum, uintptr_t *lo)
{
	uintptr_t hi;

	*phnum = 0;
	*ph = xom_link_map_phdrs(m, is_main, phnum);
	if (!*ph)
		return -1;
	xom_elf_exec_span(m->l_addr, *ph, *phnum, lo, &hi);
	return *lo < hi ? 0 : -1;
}

static int is_main_map(const struct link_map *m)
{
	return !m->l_prev && (!m->l_name || !*m->l_name);
}

/* Every link map, code or not: the anchor must be the list's last. */
static void remember_recent(const struct link_map *m, uintptr_t lo)
{
	s.top = (s.top + 1) % RECENT;
	s.recent[s.top] = (struct seen){ m, m->l_addr, lo,
	                                 m->l_ld ? (uintptr_t)m->l_ld : m->l_addr };
	if (s.nrecent < RECENT)
		s.nrecent++;
}

/* The anchor: the newest of the recent objects (nrecent > 0). */
static struct seen *newest(void)
{
	return &s.recent[s.top];
}

/* Whether the dynamic linker still has e's object.  With no object added
 * since e was seen, no new link map can lie where e's did. */
static int loaded(const struct seen *e)
{
	struct dl_find_object fo;

	return _dl_find_object((void *)e->at, &fo) == 0 && fo.dlfo_link_map == e->map;
}

/* After unloads, and nothing added: the newest recent object still loaded
 * is the anchor again; 0, or -1 when none of them is (a whole walk next). */
static int step_back(void)
{
	while (s.nrecent > 0) {
		struct seen *e = newest();
		if (loaded(e))
			return 0;
		if (s.ngone == RECENT)
			break;
		s.gone[s.ngone++] = *e;
		s.nrecent--;
		s.top = (s.top + RECENT - 1) % RECENT;
	}
	s.nrecent = 0;
	return -1;
}

/* After unloads, only the anchor is known to be loaded still: an older
 * recent object may be gone, and its link map's memory used again by a
 * later one (in another namespace, say), which step_back must not take for
 * it. */
static void keep_anchor_only(void)
{
	s.nrecent = s.nrecent ? 1 : 0;
}

/* After unloads, and nothing added: the anchor again, at subs; 0, or -1
 * when none of the recent objects is loaded. */
static int reanchor(unsigned long long subs)
{
	if (step_back() != 0)
		return -1;
	keep_anchor_only();
	s.anchor_subs = subs;
	return 0;
}

/* Forgets what step_back found unloaded (xom's lock is held). */
static void forget_gone(void)
{
	for (int i = 0; i < s.ngone; i++) {
		if (!s.gone[i].lo)
			continue;       /* no code: never in the table */
		struct xom_object *o = xom_object_find(s.gone[i].bias, s.gone[i].lo);
		if (o && (o->flags & XOM_OBJ_LATE))
			xom_object_forget(o);
	}
	s.ngone = 0;
}

/* The first link map of our namespace, from our own. */
static const struct link_map *list_head(void)
{
	struct dl_find_object fo;

	if (_dl_find_object((void *)list_head, &fo) != 0 || !fo.dlfo_link_map)
		return NULL;
	const struct link_map *m = fo.dlfo_link_map;
	while (m->l_prev)
		m = m->l_prev;
	return m;
}

static void add_map(const struct link_map *m, const ElfW(Phdr) *ph, int phnum,
                    int flags)
{
	xom_batch_add(m->l_name, m->l_addr, ph, phnum, flags);
}

/*
 * The objects after the anchor: all arrived since the last sync, when
 * there are as many as glibc counts added since (new, from the counts).
 * Any other number means that objects came and went in another namespace
 * (dlmopen, an audit module), where dlpi_subs is no count of unloads: then
 * nothing is added, and -1 sends the sync to the whole list.
 */
static int walk_new(unsigned long long added)
{
	const struct link_map *first = newest()->map, *m;
	const ElfW(Phdr) *ph;
	int phnum;
	uintptr_t lo;
	unsigned long long n = 0;

	for (m = first->l_next; m && n <= added; m = m->l_next)
		n++;
	if (n != added)
		return -1;
	for (m = first->l_next; m; m = m->l_next) {
		int code = map_image(m, 0, &ph, &phnum, &lo) == 0;
		remember_recent(m, code ? lo : 0);
		if (code)
			add_map(m, ph, phnum, XOM_OBJ_NEW);
	}
	return 0;
}

/* Whether the table's object o is the link map m's: at its place and
 * under its name (objects of the start-up are never unloaded). */
static int same(const struct xom_object *o, const struct link_map *m, int is_main)
{
	return !(o->flags & XOM_OBJ_LATE) || is_main
	       || !strncmp(o->path, m->l_name ? m->l_name : "", XOM_NAME_MAX - 1);
}

static void forget_unseen(struct xom_object *o, void *arg)
{
	(void)arg;
	if ((o->flags & XOM_OBJ_LATE) && !(o->flags & XOM_OBJ_OTHER_NS)
	    && o->seen != s.generation)
		xom_object_forget(o);
}

/*
 * The whole list.  collect: objects not in the table join the batch (a
 * sync); otherwise only the table's objects are marked (a sweep).  After
 * an unload and a load, a known late object may be a new mapping at the
 * old place: it joins the batch too, to be checked (XOM_OBJ_VERIFY).
 */
static void walk_all(int collect, int renewed, const struct counts *c)
{
	const struct link_map *head = list_head();
	const ElfW(Phdr) *ph;
	int phnum;
	uintptr_t lo;
	unsigned long long n = 0;

	/* glibc's dlpi_subs is what was added less what is loaded, where
	 * each object of another namespace counts as many times as its
	 * namespace has objects: once the counts and our list disagree,
	 * there are other namespaces, whose loads and unloads can leave
	 * dlpi_subs where it was.  From then on every sync walks it all,
	 * and checks its late objects after any load. */
	for (const struct link_map *m = head; m; m = m->l_next)
		n++;
	if (c->subs != c->adds - n)
		s.other_ns = 1;
	renewed |= s.other_ns && c->adds != s.adds;
	s.generation++;
	s.nrecent = 0;
	for (const struct link_map *m = head; m; m = m->l_next) {
		int is_main = is_main_map(m);
		int code = map_image(m, is_main, &ph, &phnum, &lo) == 0;
		remember_recent(m, code ? lo : 0);
		if (!code)
			continue;
		struct xom_object *o = xom_object_find_ph(m->l_addr, ph);
		if (!o)
			o = xom_object_find(m->l_addr, lo);
		if (o && (!collect || same(o, m, is_main))) {
			o->seen = s.generation;
			if (collect && renewed && (o->flags & XOM_OBJ_LATE) && !is_main)
				add_map(m, ph, phnum, XOM_OBJ_VERIFY);
			continue;
		}
		if (collect)
			add_map(m, ph, phnum, (is_main ? XOM_OBJ_MAIN : 0) | XOM_OBJ_NEW);
	}
	xom_objects_each(forget_unseen, NULL);
	s.late_at_sweep = xom_objects_late();
	s.full_subs = c->subs;
}

static int read_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct counts *c = arg;

	(void)size;
	c->adds = info->dlpi_adds;
	c->subs = info->dlpi_subs;
	return 1;
}

/*
 * The anchor after unloads alone (no lock of xom's: this is what a
 * dlclose costs).  Sets *more when the sync must go on under xom's lock:
 * something arrived, or the anchor is lost.
 */
static int keep_anchor(struct dl_phdr_info *info, size_t size, void *arg)
{
	int *more = arg;

	(void)size;
	*more = 1;
	if (s.rewalk || s.other_ns || !s.nrecent || info->dlpi_adds != s.anchor_adds)
		return 1;
	if (info->dlpi_subs != s.anchor_subs && reanchor(info->dlpi_subs) != 0) {
		s.rewalk = 1;
		return 1;
	}
	/* What step_back found gone is forgotten by the next sync that
	 * holds xom's lock (forget_gone): until then the fault handler may
	 * name an unloaded object for an address, and nothing else reads
	 * the table. */
	__atomic_store_n(&s.subs, info->dlpi_subs, __ATOMIC_RELEASE);
	*more = 0;
	return 1;
}

/* The sync's walk, under xom's lock as well. */
static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct counts *c = arg;

	read_counts(info, size, c);
	int quick = !s.rewalk && !s.other_ns && s.nrecent;
	if (quick && c->subs != s.anchor_subs && c->adds == s.anchor_adds)
		reanchor(c->subs);
	forget_gone();
	/* No unload since the anchor was checked, by the counts; loaded()
	 * makes sure before its link map is read, since other namespaces
	 * make the counts lie, and walk_new checks the number it finds. */
	if (quick && s.nrecent && c->subs == s.anchor_subs && loaded(newest())
	    && c->adds >= s.anchor_adds && walk_new(c->adds - s.anchor_adds) == 0) {
		/* Unloads behind the anchor leave their objects in the table:
		 * once it has grown by half, a sweep forgets them. */
		long late = xom_objects_late();
		if (s.full_subs != c->subs && late > s.late_at_sweep + 16
		    && late > s.late_at_sweep + s.late_at_sweep / 2)
			walk_all(0, 0, c);
	} else {
		/* Any unload since the last whole walk may have left an object
		 * in the table where a new one lies now. */
		walk_all(1, c->subs != s.full_subs && c->adds != s.adds, c);
	}
	s.rewalk = 0;
	s.anchor_adds = c->adds;
	s.anchor_subs = c->subs;
	return 1;
}

/* Pass 3 with other threads running: each arrival that the linker still
 * has, under its write lock. */
static int apply_found(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info;
	(void)size;
	*(size_t *)arg = xom_batch_apply_found();
	return 1;
}

static int apply_listed(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	xom_batch_apply(info->dlpi_name, info->dlpi_addr, info->dlpi_phdr,
	                info->dlpi_phnum);
	return 0;
}

/* An arrival that _dl_find_object does not know yet (another thread's
 * dlopen has not relocated it) is still listed: the list's walk finds it,
 * as every sync's did before. */
static void apply_walk(void)
{
	size_t missed = 0;

	dl_iterate_phdr(apply_found, &missed);
	if (missed)
		dl_iterate_phdr(apply_listed, NULL);
}

int xom_sync_objects(void)
{
	struct counts c;

	if (!xom_active)
		return 0;
	dl_iterate_phdr(read_counts, &c);
	if (c.adds == __atomic_load_n(&s.adds, __ATOMIC_ACQUIRE)
	    && c.subs == __atomic_load_n(&s.subs, __ATOMIC_ACQUIRE)
	    && !__atomic_load_n(&s.rewalk, __ATOMIC_RELAXED))
		return 0;
	if (c.adds == __atomic_load_n(&s.adds, __ATOMIC_ACQUIRE)) {
		int more = 1;
		dl_iterate_phdr(keep_anchor, &more);
		if (!more)
			return 0;
	}
	xom_enter();
	/* At most this many objects are new: glibc counts every one added.
	 * (Another thread may have synced since the counts were read.) */
	xom_batch_reserve(c.adds > s.adds ? (size_t)(c.adds - s.adds) : 0);
	dl_iterate_phdr(collect, &c);
	/* A second look under the linker's lock keeps objects that another
	 * thread unloads meanwhile out of pass 3.  With one thread, nothing
	 * can be unloaded. */
	int rc = __libc_single_threaded ? xom_batch_run()
	                                : xom_batch_run_walk(apply_walk);
	__atomic_store_n(&s.subs, c.subs, __ATOMIC_RELEASE);
	__atomic_store_n(&s.adds, c.adds, __ATOMIC_RELEASE);
	xom_leave();
	return rc;
}
