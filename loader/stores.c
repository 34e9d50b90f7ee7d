/*
 * stores.c - finding plans in the plan stores (formats/xom_plan.h): the
 * system store that root builds for installed files, then the user's own.
 *
 * Phase: object.  A store's index is opened and mapped once per batch of
 * objects, searched, and unmapped again before the batch ends, so that no
 * plan - a map of which code pages stay readable - outlives the moment it
 * is applied.  Nothing in a store is trusted: the index must belong to root
 * (system) or to this user (and be writable by nobody else), its head is
 * checked, and each plan is checked and compared with the key in full and
 * with the mapped object's shape (xom_store_find).  The runtime never
 * writes a store; the helper does.
 * A warm batch of many objects (start-up) costs five system calls,
 * whatever its size: open, fstat, mmap and close of the one index that has
 * the plans, and its munmap.  A small batch (a dlopen) reads what it needs
 * instead, into a buffer that is wiped when the batch ends: the head (only
 * when the file changed since the last one), the slots it probes and its
 * plans, with pread.  A batch of two objects or more looks for its set
 * first (formats/xom_plan.h), which holds all its plans: a small one then
 * reads one slot and one set, not a slot and a plan for each object.  On
 * virtual machines the munmap's TLB flush was the larger part of what xom
 * added to a dlopen and dlclose cycle; a few preads cost less
 * (storeread.c).
 */
#include <errno.h>
#include <sys/mman.h>

#include "loader.h"
#include "sys.h"

/* Stores found missing: not asked again until a helper run, which may
 * create the user's (xom_stores_changed).  A system store built while a
 * process runs is seen by the processes started after it. */
static uint8_t absent[XOM_NSTORES];

void xom_stores_changed(void)
{
	memset(absent, 0, sizeof(absent));
}

static int sys_lstat(const char *path, struct stat *st)
{
	return x_lstat(path, st) == 0 ? 0 : -1;
}

/* Small batches: at most this many objects read their plans
 * (storeread.c) instead of mapping the index. */
#define READ_OBJECTS 8

/* The head that a small batch last read from each store, and the identity
 * of the file it came from: the next batch reads it again only when the
 * file changed.  A store is replaced whole (renamed into place), never
 * written where it lies, so the same inode, size and change time mean the
 * same head; and each slot and plan read after it is checked against the
 * file's size anyway. */
static struct {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec ctime;
	struct xom_store_head head;
} seen[XOM_NSTORES];

static int head_read(int fd, int i, const struct stat *st, struct xom_store_head *head)
{
	if (seen[i].ino && seen[i].ino == st->st_ino && seen[i].dev == st->st_dev
	    && seen[i].size == st->st_size && seen[i].ctime.tv_sec == st->st_ctim.tv_sec
	    && seen[i].ctime.tv_nsec == st->st_ctim.tv_nsec) {
		*head = seen[i].head;
		return 0;
	}
	if (x_pread(fd, head, sizeof(*head), 0) != (long)sizeof(*head))
		return -1;
	seen[i].dev = st->st_dev;
	seen[i].ino = st->st_ino;
	seen[i].size = st->st_size;
	seen[i].ctime = st->st_ctim;
	seen[i].head = *head;
	return 0;
}

/* Opens store i's index when it can be trusted: maps it, or, when read
 * is set, keeps its descriptor to read from; 0, or -1 with nothing kept. */
static int map_store(struct xom_store *s, int i, int read)
{
	/* On the stack, where the profile lookup's path lies later in the same
	 * batch: every page the warm path reaches is a page fault, and a stack
	 * page is one the next buffer can use again. */
	char path[XOM_PATH_MAX];
	struct stat st;
	const char *why = NULL;
	int system = i == XOM_STORE_SYSTEM;
	struct xom_store_head head;

	s->map = NULL;
	s->len = 0;
	s->fd = -1;
	/* Before the path: the fallback's may take a look at /run/user. */
	if (absent[i])
		return -1;
	const char *dir = xom_store_dir(i, path, sizeof(path) - 8);
	if (!dir)
		return -1;
	size_t n = strlen(dir);
	memcpy(path + n, "/" XOM_STORE_INDEX, sizeof("/" XOM_STORE_INDEX));
	long fd = x_open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd == -ENOENT)
		absent[i] = 1;
	if (SYS_FAILED(fd))
		return -1;
	void *p = NULL;
	int file = x_fstat((int)fd, &st) != 0 ? XOM_FILE_NOT_REGULAR
	           : xom_store_file_check(&st, system ? 0 : xom_euid);
	if (file == XOM_FILE_NOT_REGULAR)
		why = "not a regular file";
	else if (file != XOM_FILE_OK)
		why = system ? "not root's alone" : "not yours alone";
	else if (st.st_size < (off_t)sizeof(struct xom_store_head)
	         || st.st_size > (off_t)XOM_STORE_MAX)
		why = "truncated or oversized";
	else if (read && head_read((int)fd, i, &st, &head) != 0)
		why = "cannot be read";
	else if (!read && X_MAP_FAILED(p = x_mmap(NULL, (size_t)st.st_size, PROT_READ,
	                                          MAP_PRIVATE, (int)fd, 0)))
		why = "cannot be mapped", p = NULL;
	if (!read)
		x_close((int)fd);
	path[n] = 0;            /* the directory again */
	/* The head check reads only the head, and compares it with the size. */
	if (!why && xom_store_check_head(read ? (const void *)&head : p,
	                                 (size_t)st.st_size, &why) == 0
	    && (!system || xom_store_dir_shared(path, sys_lstat))) {
		s->map = p;
		s->len = (size_t)st.st_size;
		if (read) {
			s->fd = (int)fd;
			s->nslots = head.nslots;
		}
		return 0;
	}
	if (!why)
		why = "its directories are not root's alone";
	if (read)
		x_close((int)fd);
	if (p)
		x_munmap(p, (size_t)st.st_size);
	if (xom_opt.verbose >= 1)
		xom_notice("plan store %s/" XOM_STORE_INDEX " ignored: %s", path, why);
	return -1;
}

void xom_stores_open(struct xom_stores *st, size_t n, void *room, size_t cap)
{
	memset(st, 0, sizeof(*st));
	st->read = n <= READ_OBJECTS;
	if (st->read)
		xom_store_read_room(room, cap);
}

/* Store i, opened the first time it is asked for. */
static struct xom_store *store(struct xom_stores *st, int i)
{
	struct xom_store *s = &st->s[i];

	if (!s->tried) {
		s->tried = 1;
		map_store(s, i, st->read);
	}
	return s;
}

const struct xom_set_head *xom_stores_find_set(struct xom_stores *st, int i,
                                               uint64_t hash)
{
	struct xom_store *s = store(st, i);

	return s->map ? xom_store_find_set(s->map, s->len, hash)
	       : s->fd >= 0 && s->nslots ? xom_store_read_set(s, hash) : NULL;
}

const struct xom_plan_head *xom_stores_find(struct xom_stores *st, int i,
                                            const struct xom_plan_key *k,
                                            uint64_t shape)
{
	struct xom_store *s = store(st, i);

	return s->map ? xom_store_find(s->map, s->len, k, &shape)
	       : s->fd >= 0 && s->nslots ? xom_store_read_find(s, k, shape) : NULL;
}

void xom_stores_close(struct xom_stores *st)
{
	for (int i = 0; i < XOM_NSTORES; i++) {
		if (st->s[i].map)
			x_munmap(st->s[i].map, st->s[i].len);
		if (st->s[i].tried && st->s[i].fd >= 0)
			x_close(st->s[i].fd);
	}
	memset(st, 0, sizeof(*st));
	/* The plans read go as the mapped ones do. */
	xom_store_read_wipe();
}
