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
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "loader.h"

/* Whether every directory from / down to dir is root's and writable by
 * nobody else, as a store that every user trusts must be. */
static int root_path(const char *dir)
{
	char p[XOM_PATH_MAX];
	struct stat st;

	xom_copy_str(p, sizeof(p), dir);
	for (char *s = p + strlen(p); s > p; ) {
		if (lstat(p, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0
		    || (st.st_mode & 022))
			return 0;
		while (s > p && *s != '/')
			s--;
		*s = 0;
	}
	return 1;
}

/* Maps dir's index when it can be trusted; 0, or -1 with nothing mapped. */
static int map_store(struct xom_store *s, const char *dir, int system)
{
	char path[XOM_PATH_MAX];
	struct stat st;
	const char *why = NULL;

	s->map = NULL;
	s->len = 0;
	if (!dir || xom_fmt(path, sizeof(path), "%s/" XOM_STORE_INDEX, dir)
	             >= sizeof(path) - 1)
		return -1;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	void *p = MAP_FAILED;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (st.st_uid != (system ? 0 : geteuid()) || (st.st_mode & 022))
		why = system ? "not root's alone" : "not yours alone";
	else if (st.st_size < (off_t)sizeof(struct xom_store_head)
	         || st.st_size > (off_t)XOM_STORE_MAX)
		why = "truncated or oversized";
	else if ((p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd,
	                   0)) == MAP_FAILED)
		why = "cannot be mapped";
	close(fd);
	if (!why && xom_store_check_head(p, (size_t)st.st_size, &why) == 0
	    && (!system || root_path(dir))) {
		s->map = p;
		s->len = (size_t)st.st_size;
		return 0;
	}
	if (!why)
		why = "its directories are not root's alone";
	if (p != MAP_FAILED)
		munmap(p, (size_t)st.st_size);
	if (xom_opt.verbose >= 1)
		xom_say("plan store %s ignored: %s", path, why);
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
		const char *dir = xom_store_dir(i);
		if (!s->tried) {
			s->tried = 1;
			map_store(s, dir, i == XOM_STORE_SYSTEM);
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
			munmap((void *)st->s[i].map, st->s[i].len);
	memset(st, 0, sizeof(*st));
}
