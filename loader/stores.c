/*
 * stores.c - finding plans in the plan stores (formats/xom_plan.h): the
 * system store that root builds for installed files, then the user's own.
 *
 * Phase: object.  Nothing in a store is trusted: the index must belong to
 * root (system) or to this user (and be writable by nobody else), its head
 * is checked, and each plan is checked and compared with the key in full
 * and with the mapped object's shape (xom_store_find).  The runtime never
 * writes a store; the helper does.
 *
 * A plan is a map of which code pages stay readable, so none may be read
 * by the program: an index is readable only inside a batch.  Where xom's
 * key protects the code, the index mapped for a batch stays mapped after
 * it, under that key (xom_key_hide), and the next batch opens this thread's
 * reads of the key (xom_key_reads_open) until it ends: a warm dlopen then
 * costs one lstat, which says that the index is still the file mapped,
 * and no read or mapping.  A store is replaced whole (renamed into place),
 * never written where it lies, and the mapping holds the old inode, so the
 * same inode, size and change time mean the same bytes.  With
 * backend=none nothing is protected, and the index is kept as if it were.
 *
 * Where the kernel's key protects the code (a seccomp filter refused
 * xom's), nothing can hide data, and an index is opened for each batch and
 * closed before it ends: mapped for a batch of many objects (open, fstat,
 * mmap, close, munmap), or for a small batch (a dlopen) read in part into
 * a buffer that is wiped when the batch ends: the head (only when the file
 * changed since the last one), the slots it probes and its plans, with
 * pread (storeread.c).  On virtual machines the munmap's TLB flush was the
 * larger part of what xom added to a dlopen and dlclose cycle.
 *
 * A batch of two objects or more looks for its set first
 * (formats/xom_plan.h), which holds all its plans: a small one then reads
 * one slot and one set, not a slot and a plan for each object.
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

/* What a small batch learnt of each store's head (its number of slots,
 * the head checked), and the identity of the file it came from: the next
 * batch reads the head again only when the file changed.  The same inode,
 * size and change time mean the same head (a store is replaced whole), and
 * each slot and plan read after it is checked against the file's size
 * anyway.  Not the head itself: nothing of an index stays in memory that
 * the program can read. */
static struct {
	struct xom_file_ident id;       /* its ino 0 until a head was read */
	uint32_t nslots;
} seen[XOM_NSTORES];

static int same_file(const struct xom_file_ident *id, const struct stat *st)
{
	struct xom_file_ident now;

	xom_file_ident_of(st, &now);
	return !memcmp(id, &now, sizeof(now));
}

/* Store i's slots, from its head, which is read and checked unless the
 * file is the one last read; 0, or -1 with why. */
static int head_read(int fd, int i, const struct stat *st, uint32_t *nslots,
                     const char **why)
{
	struct xom_store_head head;

	if (seen[i].id.ino && same_file(&seen[i].id, st)) {
		*nslots = seen[i].nslots;
		return 0;
	}
	if (x_pread(fd, &head, sizeof(head), 0) != (long)sizeof(head)) {
		*why = "cannot be read";
		return -1;
	}
	/* The head check reads only the head, and compares it with the size. */
	if (xom_store_check_head(&head, (size_t)st->st_size, why) != 0)
		return -1;
	xom_file_ident_of(st, &seen[i].id);
	*nslots = seen[i].nslots = head.nslots;
	/* Wiped, and kept wiped: the store is dead to the compiler. */
	memset(&head, 0, sizeof(head));
	__asm__ volatile("" : : "r"(&head) : "memory");
	return 0;
}

/* The index of each store kept mapped between batches, and the identity
 * of the file it was mapped from. */
static struct {
	const void *map;
	size_t len;
	struct xom_file_ident id;
} kept[XOM_NSTORES];

/* Whether an index mapped now may be kept after the batch: not in
 * mode=audit, whose fault handler lets the program read a page under
 * xom's key for good (fault.c). */
static int may_keep(void)
{
#ifdef XOM_NO_KEPT_INDEX
	return 0;       /* the tests' runtime that reads the index every batch */
#else
	return (xom_opt.backend == XOM_BACKEND_NONE || xom_via == XOM_VIA_KEY)
	       && xom_opt.mode != XOM_AUDIT;
#endif
}

/* Whether the file open at fd lies on a file system of this machine.  A
 * network file system's index that another machine replaces can fail a
 * read of the kept pages (ESTALE, a SIGBUS while the batch blocks every
 * signal), and its lstat may answer from a cache: such an index is read
 * for each batch, as it always was. */
static int local_file(int fd)
{
	static const long remote[] = {
		0x6969,         /* NFS */
		0xff534d42,     /* CIFS */
		0xfe534d42,     /* SMB2 */
		0x517b,         /* SMB */
		0x65735546,     /* FUSE (sshfs and the like) */
		0x00c36400,     /* Ceph */
		0x01021997,     /* 9P */
		0x5346414f,     /* AFS */
		0x6b414653,     /* kAFS */
		0x73757245,     /* Coda */
		0x47504653,     /* GPFS */
		0x0bd00bd0,     /* Lustre */
	};
	struct statfs sf;

	if (x_fstatfs(fd, &sf) != 0)
		return 0;
	for (size_t i = 0; i < sizeof(remote) / sizeof(remote[0]); i++)
		if ((long)(uint32_t)sf.f_type == remote[i])
			return 0;
	return 1;
}

/* Store i's kept index, when the path still names the file it came from;
 * a kept one that it no longer names is dropped. */
static int use_kept(struct xom_store *s, int i, const char *path)
{
	struct stat st;

	if (!kept[i].map)
		return -1;
	if (x_lstat(path, &st) == 0 && same_file(&kept[i].id, &st)) {
		s->map = kept[i].map;
		s->len = kept[i].len;
		s->kept = 1;
		return 0;
	}
	x_munmap(kept[i].map, kept[i].len);
	memset(&kept[i], 0, sizeof(kept[i]));
	return -1;
}

/* Opens store i's index when it can be trusted: its kept mapping, or maps
 * it, or, when read is set, keeps its descriptor to read from; 0, or -1
 * with nothing kept. */
static int map_store(struct xom_store *s, int i, int read)
{
	/* On the stack, where the profile lookup's path lies later in the same
	 * batch: every page the warm path reaches is a page fault, and a stack
	 * page is one the next buffer can use again. */
	char path[XOM_PATH_MAX];
	struct stat st;
	const char *why = NULL;
	int system = i == XOM_STORE_SYSTEM;
	uint32_t nslots = 0;

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
	if (use_kept(s, i, path) == 0)
		return 0;
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
	else if (read && head_read((int)fd, i, &st, &nslots, &why) != 0)
		;
	else if (!read && X_MAP_FAILED(p = x_mmap(NULL, (size_t)st.st_size, PROT_READ,
	                                          MAP_PRIVATE, (int)fd, 0)))
		why = "cannot be mapped", p = NULL;
	s->local = p && may_keep() && local_file((int)fd);
	if (!read)
		x_close((int)fd);
	path[n] = 0;            /* the directory again */
	/* The head check reads only the head, and compares it with the size. */
	if (!why && (read || xom_store_check_head(p, (size_t)st.st_size, &why) == 0)
	    && (!system || xom_store_dir_shared(path, sys_lstat))) {
		s->map = p;
		s->len = (size_t)st.st_size;
		xom_file_ident_of(&st, &s->id);
		if (read) {
			s->fd = (int)fd;
			s->nslots = nslots;
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
	st->keep = may_keep();
	st->read = n <= READ_OBJECTS && !st->keep;
	if (st->read)
		xom_store_read_room(room, cap);
}

/* Store i, opened the first time it is asked for.  A kept index is under
 * xom's key: this thread may read it until the batch ends. */
static struct xom_store *store(struct xom_stores *st, int i)
{
	struct xom_store *s = &st->s[i];

	if (!s->tried) {
		s->tried = 1;
		map_store(s, i, st->read);
		if (s->kept && !st->reads_open) {
			st->pkru = xom_key_reads_open();
			st->reads_open = 1;
		}
	}
	return s;
}

/* After the batch: keeps store i's index mapped under xom's key, or
 * unmaps it. */
static void keep_or_unmap(struct xom_stores *st, int i)
{
	struct xom_store *s = &st->s[i];

	if (s->kept)
		return;
	/* The batch's protection calls may have found xom's key refused. */
	if (st->keep && s->fd < 0 && s->local && may_keep()) {
		long rc = xom_key_hide(s->map, s->len);
		if (rc == 0) {
			kept[i].map = s->map;
			kept[i].len = s->len;
			kept[i].id = s->id;
			return;
		}
		if (rc == -EPERM || rc == -EACCES || rc == -ENOSYS)
			xom_kernel_refused("pkey_mprotect", (int)-rc);
	}
	x_munmap(s->map, s->len);
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
			keep_or_unmap(st, i);
		if (st->s[i].tried && st->s[i].fd >= 0)
			x_close(st->s[i].fd);
	}
	if (st->reads_open)
		xom_key_reads_close(st->pkru);
	memset(st, 0, sizeof(*st));
	/* The plans read go as the mapped ones do. */
	xom_store_read_wipe();
}
