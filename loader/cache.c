/*
 * cache.c - where plans come from: this process's own plans, the per-user
 * plan cache, or, on a miss, the xom-plan helper (helper.c).
 *
 * Phase: object.  The warm path is one open, one fstat and one mmap of a
 * small file per object, and the head and runs are all it reads.  Nothing
 * here trusts a cache file: each one is checked for owner, size, structure,
 * checksum and identity before use, and anything wrong means "rebuild",
 * never "use anyway".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>         /* rename() only: no streams in a host process */
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "loader.h"

/* The cache directory, chosen once at first use; NULL when there is none. */
static const char *cache_dir(void)
{
	static char dir[4096];
	static int state;       /* 0 unknown, 1 dir, -1 none */

	if (!state)
		state = xom_cache_dir(&xom_opt, dir, sizeof(dir)) == XOM_CACHE_DIR
		        ? 1 : -1;
	return state > 0 ? dir : NULL;
}

static int id_matches(const struct xom_plan_head *h,
                      const struct xom_file_id *id)
{
	return h->scan_version == XOM_PLAN_SCAN_VERSION
	       && h->dev == (uint64_t)id->st.st_dev
	       && h->ino == (uint64_t)id->st.st_ino
	       && h->size == (uint64_t)id->st.st_size
	       && h->mtime_sec == (int64_t)id->st.st_mtim.tv_sec
	       && h->mtime_nsec == (int64_t)id->st.st_mtim.tv_nsec;
}

/* A plan made from the file on disk must describe the file in memory. */
static int build_id_matches(const struct xom_plan_head *h,
                            const struct xom_file_id *id)
{
	if (!id->build_id_len)
		return 1;
	return h->build_id_len == id->build_id_len
	       && memcmp(h->build_id, id->build_id, id->build_id_len) == 0;
}

static void entry_name(char *out, size_t cap, const struct xom_file_id *id)
{
	xom_fmt(out, cap, "%s/%#lx-%#lx.plan", cache_dir(),
	        (unsigned long)id->st.st_dev, (unsigned long)id->st.st_ino);
}

static void say_ignored(const char *file, const char *why)
{
	if (xom_opt.verbose >= 1)
		xom_say("cache entry %s ignored: %s; rebuilding", file, why);
}

static const struct xom_plan_head *entry_load(const char *file,
                                              const struct xom_file_id *id)
{
	int fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	const char *why = NULL;
	void *p = MAP_FAILED;

	if (fstat(fd, &st) != 0)
		why = "cannot stat it";
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (st.st_uid != geteuid())
		why = "owned by another user";
	else if (st.st_mode & 022)
		why = "writable by others";
	else if (st.st_size < (off_t)sizeof(struct xom_plan_head)
	         || st.st_size > (off_t)XOM_PLAN_MAX)
		why = "truncated or oversized";
	else if ((p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0))
	         == MAP_FAILED)
		why = "cannot map it";
	close(fd);
	if (!why && xom_plan_check(p, st.st_size, &why) == 0) {
		if (!id_matches(p, id))
			why = "made for another file or scanner version";
		else if (!build_id_matches(p, id))
			why = "build-id differs from the mapped object";
		else
			return p;
	}
	if (p != MAP_FAILED)
		munmap(p, st.st_size);
	say_ignored(file, why);
	return NULL;
}

static const char *dir_problem(const struct stat *st)
{
	if (!S_ISDIR(st->st_mode))
		return "is not a directory";
	if (st->st_uid != geteuid())
		return "is owned by another user";
	if (st->st_mode & 077)
		return "is accessible to others (want mode 0700)";
	return NULL;
}

/* Creates the cache directory (and its parent) when missing, and insists
 * that it is ours and private: a directory that others can write to could
 * feed us plans.  The answer is kept: one lstat per process when warm. */
static int dir_usable(void)
{
	static int state;       /* 0 unknown, 1 good, -1 bad */
	const char *dir = cache_dir();
	char parent[4096];
	struct stat st;

	if (state)
		return state > 0;
	const char *why = NULL;
	if (lstat(dir, &st) != 0) {
		xom_copy_str(parent, sizeof(parent), dir);
		char *slash = strrchr(parent, '/');
		if (slash && slash != parent) {
			*slash = 0;
			mkdir(parent, 0700);
		}
		mkdir(dir, 0700);
		if (lstat(dir, &st) != 0)
			why = "cannot be created";
	}
	if (!why)
		why = dir_problem(&st);
	if (why) {
		xom_say("cache directory %s %s; plans are not cached", dir, why);
		return state = -1, 0;
	}
	return state = 1, 1;
}

/* Writes a temporary file and renames it over the entry, so that a reader
 * sees either the old entry or the whole new one. */
static void entry_store(const char *file, const struct xom_plan_head *h)
{
	char tmp[4200];
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (xom_fmt(tmp, sizeof(tmp), "%s.%u.%#lx", file, (unsigned)getpid(),
	            (unsigned long)ts.tv_nsec ^ (unsigned long)(uintptr_t)h)
	    >= sizeof(tmp) - 1)
		return;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	              0600);
	if (fd < 0)
		return;
	int bad = xom_plan_write(fd, h);
	bad |= close(fd);
	if (bad || rename(tmp, file) != 0) {
		unlink(tmp);
		xom_say("cannot write cache entry %s (%m)", file);
	}
}

/*
 * Plans handed out in this process, so that a library closed and opened
 * again reuses its plan: mapping it anew on every dlopen would add one
 * mapping per cycle, and a plugin host would creep towards
 * vm.max_map_count.
 */
#define MEMO_SLOTS 256
static const struct xom_plan_head *memo[MEMO_SLOTS];
static unsigned memo_next;

static const struct xom_plan_head *memo_find(const struct xom_file_id *id)
{
	for (unsigned i = 0; i < MEMO_SLOTS && memo[i]; i++)
		if (id_matches(memo[i], id) && build_id_matches(memo[i], id))
			return memo[i];
	return NULL;
}

static const struct xom_plan_head *memo_add(const struct xom_plan_head *h)
{
	/* Past MEMO_SLOTS distinct files the oldest entry is only forgotten,
	 * never unmapped: an object may still use it. */
	if (h)
		memo[memo_next++ % MEMO_SLOTS] = h;
	return h;
}

static const struct xom_plan_head *plan_load(const char *path,
                                             const struct xom_file_id *id)
{
	char file[4200];
	int cached = cache_dir() && dir_usable();

	if (cached) {
		entry_name(file, sizeof(file), id);
		const struct xom_plan_head *h = entry_load(file, id);
		if (h)
			return h;
	}
	struct xom_plan_head *h = xom_helper_run(path);
	if (!h)
		return NULL;
	if (h->scan_version != XOM_PLAN_SCAN_VERSION) {
		xom_say("%s: the scanner's version differs from the runtime's; left unprotected",
		        path);
		return NULL;
	}
	if (!build_id_matches(h, id)) {
		xom_say("%s: the file on disk is not the one mapped; left unprotected",
		        path);
		return NULL;
	}
	h->dev = id->st.st_dev;
	h->ino = id->st.st_ino;
	h->size = id->st.st_size;
	h->mtime_sec = id->st.st_mtim.tv_sec;
	h->mtime_nsec = id->st.st_mtim.tv_nsec;
	xom_plan_seal(h);
	if (cached)
		entry_store(file, h);
	mprotect(h, h->total, PROT_READ);
	return h;
}

const struct xom_plan_head *xom_plan_get(const char *path,
                                         const struct xom_file_id *id)
{
	const struct xom_plan_head *h = memo_find(id);

	return h ? h : memo_add(plan_load(path, id));
}
