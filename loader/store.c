/*
 * store.c - finding plans in the plan stores (plan/xom_plan.h): the
 * system store that root builds for installed files, then the user's own.
 *
 * Phase: object.  A store's index is opened and mapped once per batch of
 * objects, searched, and unmapped again before the batch ends, so that no
 * plan - a map of which code pages stay readable - outlives the moment it
 * is applied.  Nothing in a store is trusted: the index must belong to root
 * (system) or to this user (and be writable by nobody else), its head is
 * checked, and each plan is checked and compared with the key in full
 * (xom_store_find).  The runtime never writes a store; the helper does.
 * A warm batch costs five system calls, whatever its size: open, fstat,
 * mmap and close of the one index that has the plans, and its munmap.
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

/* Maps store i's index when it can be trusted; 0, or -1 with nothing
 * mapped. */
static int map_store(struct xom_store *s, int i)
{
	/* Not on the stack: every stack page the warm path reaches is a page
	 * fault, and this one lies among the variables start-up populates. */
	static char path[XOM_PATH_MAX];
	struct stat st;
	const char *why = NULL;
	int system = i == XOM_STORE_SYSTEM;

	s->map = NULL;
	s->len = 0;
	const char *dir = xom_store_dir(i, path, sizeof(path) - 8);
	if (!dir)
		return -1;
	size_t n = strlen(dir);
	memcpy(path + n, "/" XOM_STORE_INDEX, sizeof("/" XOM_STORE_INDEX));
	if (absent[i])
		return -1;
	long fd = x_open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd == -ENOENT)
		absent[i] = 1;
	if (SYS_FAILED(fd))
		return -1;
	void *p = NULL;
	if (x_fstat((int)fd, &st) != 0 || !S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (st.st_uid != (system ? 0 : xom_euid) || (st.st_mode & 022))
		why = system ? "not root's alone" : "not yours alone";
	else if (st.st_size < (off_t)sizeof(struct xom_store_head)
	         || st.st_size > (off_t)XOM_STORE_MAX)
		why = "truncated or oversized";
	else if (X_MAP_FAILED(p = x_mmap(NULL, (size_t)st.st_size, PROT_READ,
	                                 MAP_PRIVATE, (int)fd, 0)))
		why = "cannot be mapped", p = NULL;
	x_close((int)fd);
	path[n] = 0;            /* the directory again */
	if (!why && xom_store_check_head(p, (size_t)st.st_size, &why) == 0
	    && (!system || xom_store_dir_shared(path, sys_lstat))) {
		s->map = p;
		s->len = (size_t)st.st_size;
		return 0;
	}
	if (!why)
		why = "its directories are not root's alone";
	if (p)
		x_munmap(p, (size_t)st.st_size);
	if (xom_opt.verbose >= 1)
		xom_notice("plan store %s/" XOM_STORE_INDEX " ignored: %s", path, why);
	return -1;
}

void xom_stores_open(struct xom_stores *st)
{
	memset(st, 0, sizeof(*st));
}

const struct xom_plan_head *xom_stores_find(struct xom_stores *st,
                                            const struct xom_plan_key *k,
                                            int *which)
{
	for (int i = 0; i < XOM_NSTORES; i++) {
		struct xom_store *s = &st->s[i];
		if (!s->tried) {
			s->tried = 1;
			map_store(s, i);
		}
		const struct xom_plan_head *h = s->map
			? xom_store_find(s->map, s->len, k) : NULL;
		if (h) {
			*which = i;
			return h;
		}
	}
	return NULL;
}

void xom_stores_close(struct xom_stores *st)
{
	for (int i = 0; i < XOM_NSTORES; i++)
		if (st->s[i].map)
			x_munmap(st->s[i].map, st->s[i].len);
	memset(st, 0, sizeof(*st));
}
