/*
 * store.c - the plan stores as the runtime reads them (loader/stores.c
 * and loader/lookup.c), from outside: whether it would trust a store, the
 * key it looks a file up by, and whether a plan's file is still the one
 * the plan was made from.  The index is read with the runtime's own format
 * code (formats/format.c), so both agree on what a whole plan is.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cmd.h"
#include "store.h"

int store_map(const char *dir, struct store_index *ix)
{
	char path[PATH_MAX];
	struct stat st;

	ix->map = NULL;
	ix->len = 0;
	ix->why = NULL;
	snprintf(path, sizeof(path), "%s/" XOM_STORE_INDEX, dir);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		ix->why = errno == ENOENT ? STORE_NO_INDEX : strerror(errno);
		return -1;
	}
	void *p = MAP_FAILED;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		ix->why = "the index is not a regular file";
	else if (st.st_size < (off_t)sizeof(struct xom_store_head)
	         || st.st_size > (off_t)XOM_STORE_MAX)
		ix->why = "the index is truncated or oversized";
	else if ((p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd,
	                   0)) == MAP_FAILED)
		ix->why = strerror(errno);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	if (xom_store_check_head(p, (size_t)st.st_size, &ix->why) != 0) {
		munmap(p, (size_t)st.st_size);
		return -1;
	}
	ix->map = p;
	ix->len = (size_t)st.st_size;
	return 0;
}

void store_unmap(struct store_index *ix)
{
	if (ix->map)
		munmap((void *)ix->map, ix->len);
	ix->map = NULL;
	ix->len = 0;
}

const struct xom_plan_head *store_find(const struct store_index *ix,
                                       const struct xom_plan_key *k)
{
	return ix->map ? xom_store_find(ix->map, ix->len, k, NULL) : NULL;
}

const struct xom_plan_head *store_find_file(const struct store_index *ix,
                                            const struct xom_plan_key *k,
                                            const char *path)
{
	uint64_t shape;

	if (!ix->map || file_shape(path, &shape) != 0)
		return NULL;
	return store_find_shaped(ix, k, shape, path);
}

const struct xom_plan_head *store_find_shaped(const struct store_index *ix,
                                              const struct xom_plan_key *k,
                                              uint64_t shape, const char *path)
{
	const struct xom_plan_head *p;

	if (!ix->map || !(p = xom_store_find(ix->map, ix->len, k, &shape)))
		return NULL;
	return plan_fits(p, path) == PLAN_CURRENT ? p : NULL;
}

void store_each(const struct store_index *ix,
                void (*fn)(const struct xom_plan_head *p, void *arg), void *arg)
{
	const struct xom_store_head *h = ix->map;
	const char *why;

	if (!h)
		return;
	const struct xom_store_slot *s = (const void *)(h + 1);
	for (uint32_t i = 0; i < h->nslots; i++) {
		if (!s[i].len || !xom_store_slot_ok(&s[i], ix->len))
			continue;
		const void *p = (const char *)ix->map + s[i].off;
		if (xom_plan_check(p, s[i].len, &why) == 0)
			fn(p, arg);
	}
}

size_t store_sets(const struct store_index *ix, uint64_t *bytes)
{
	const struct xom_store_head *h = ix->map;
	size_t n = 0;

	*bytes = 0;
	if (!h)
		return 0;
	const struct xom_store_slot *s = (const void *)(h + 1);
	for (uint32_t i = 0; i < h->nslots; i++)
		if (s[i].len && xom_store_slot_ok(&s[i], ix->len)
		    && xom_set_check((const char *)ix->map + s[i].off, s[i].len,
		                     s[i].hash) == 0) {
			n++;
			*bytes += s[i].len;
		}
	return n;
}

/* Why a file or folder of a store is not trusted: others may write it. */
static void say_writable(char *why, size_t cap, const char *path, mode_t mode)
{
	snprintf(why, cap, "%s is writable by %s (mode %04o)", path,
	         (mode & 022) == 022 ? "everyone" : mode & 020 ? "its group" : "others",
	         (unsigned)(mode & 07777));
}

/* Whether the store's index file is one the runtime reads: its own rule
 * (xom_store_file_check), with the reason why not. */
static int index_trusted(const char *path, unsigned uid, char *why, size_t cap)
{
	struct stat st;

	if (lstat(path, &st) != 0) {
		snprintf(why, cap, "%s: %s", path, strerror(errno));
		return -1;
	}
	switch (xom_store_file_check(&st, uid)) {
	case XOM_FILE_OK:
		return 0;
	case XOM_FILE_NOT_REGULAR:
		snprintf(why, cap, "%s is not a regular file", path);
		break;
	case XOM_FILE_NOT_OWNER:
		snprintf(why, cap, "%s belongs to uid %u, not %s", path,
		         (unsigned)st.st_uid, uid ? "you" : "root");
		break;
	default:
		say_writable(why, cap, path, st.st_mode);
	}
	return -1;
}

int store_trusted(const char *dir, int system, char *why, size_t cap)
{
	char p[PATH_MAX];
	unsigned uid = system ? 0 : (unsigned)geteuid();

	snprintf(p, sizeof(p), "%s/" XOM_STORE_INDEX, dir);
	if (index_trusted(p, uid, why, cap) != 0)
		return -1;
	return system ? store_dirs_trusted(dir, why, cap) : 0;
}

int store_dirs_trusted(const char *dir, char *why, size_t cap)
{
	char bad[PATH_MAX];
	struct stat st;

	/* The runtime's own rule (xom_dir_chain), with its reason. */
	switch (xom_dir_chain(dir, lstat, bad, sizeof(bad), &st)) {
	case XOM_DIR_OK:
		return 0;
	case XOM_DIR_RELATIVE:
		snprintf(why, cap, "%s is not an absolute path", dir);
		break;
	case XOM_DIR_LONG:
		snprintf(why, cap, "its path is too long");
		break;
	case XOM_DIR_MISSING:
		snprintf(why, cap, "%s: %s", bad, strerror(errno));
		break;
	case XOM_DIR_NOT_DIR:
		snprintf(why, cap, "%s is not a folder", bad);
		break;
	case XOM_DIR_NOT_ROOT:
		snprintf(why, cap, "%s belongs to uid %u, not root", bad, (unsigned)st.st_uid);
		break;
	default:
		say_writable(why, cap, bad, st.st_mode);
	}
	return -1;
}

/* ---- keys --------------------------------------------------------------- */

static long libc_pread(int fd, void *buf, size_t n, long off)
{
	return (long)pread(fd, buf, n, (off_t)off);
}

int fd_key(int fd, struct xom_plan_key *k)
{
	struct stat st;
	int rc = fstat(fd, &st);

	if (rc == 0 && xom_file_build_id(fd, libc_pread, k) != 0)
		xom_ident_key(&st, k);
	return rc;
}

int file_key(const char *path, struct xom_plan_key *k)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return -1;
	int rc = fd_key(fd, k);
	close(fd);
	return rc;
}

int file_shape(const char *path, uint64_t *shape)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return -1;
	int rc = fd_shape(fd, shape);
	close(fd);
	return rc;
}

int fd_shape(int fd, uint64_t *shape)
{
	return xom_file_shape(fd, libc_pread, shape);
}

/* ---- staleness --------------------------------------------------------- */

/* xom_hash over the whole file fd (len bytes), as the scanner's side took
 * a plan's file_sum, or (code set) over the bytes of code's executable
 * segments, at their offsets, as it took a plan's code_sum (plan/build.c);
 * 0, or -1 when the file cannot be mapped or is too short for them. */
static int file_sum_of(int fd, size_t len, const struct xom_plan_head *code,
                       uint64_t *sum)
{
	const unsigned char *img = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
	int rc = 0;

	if (len && img == MAP_FAILED)
		return -1;
	if (!code) {
		*sum = xom_hash(XOM_HASH_INIT, img, len);
	} else {
		const struct xom_plan_seg *s = xom_plan_segs(code);
		*sum = XOM_HASH_INIT;
		for (uint32_t i = 0; i < code->nsegs && rc == 0; i++) {
			if (s[i].offset > len || s[i].filesz > len - s[i].offset)
				rc = -1;
			else
				*sum = xom_hash(*sum, img + s[i].offset, s[i].filesz);
		}
	}
	if (len)
		munmap((void *)img, len);
	return rc;
}

static int same_ident(const struct stat *st, const struct xom_file_ident *f)
{
	struct xom_file_ident id;

	xom_file_ident_of(st, &id);
	return !memcmp(&id, f, sizeof(id));
}

/*
 * A build-id says which build a file claims to be, not which it is: any
 * file can carry any build-id.  So a plan fits a file that is not the one
 * it was made from only when the file has the plan's key, its shape and
 * the same bytes, all of them: the scanner reads more than the code
 * (symbols, relocations, unwind tables, section headers), and a copy
 * that differs only there makes another plan.  Reading the file costs a
 * scanner's tool little (a file whose identity is unchanged is not read),
 * and it is what lets the plan of the genuine file replace one made from
 * a copy that claims its build-id (plan/storewrite.c).
 */
int plan_fits(const struct xom_plan_head *p, const char *path)
{
	struct xom_plan_key want, got;
	struct stat st;
	uint64_t shape, sum;

	/* stat first: a path that names no regular file now is not opened. */
	if (stat(path, &st) != 0)
		return errno == ENOENT || errno == ENOTDIR ? PLAN_GONE : PLAN_UNCHECKED;
	xom_plan_key_of(p, &want);
	if (!S_ISREG(st.st_mode))
		return PLAN_CHANGED;
	if (same_ident(&st, &p->file))
		return PLAN_CURRENT;            /* made from it: nothing to read */
	if (want.kind == XOM_KEY_IDENT)
		return PLAN_CHANGED;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return PLAN_UNCHECKED;
	int state = PLAN_UNCHECKED;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		state = PLAN_CHANGED;
	else if (xom_file_build_id(fd, libc_pread, &got) != 0
	         || xom_file_shape(fd, libc_pread, &shape) != 0)
		state = PLAN_CHANGED;
	else if (!xom_key_equal(&want, &got) || shape != p->shape)
		state = PLAN_CHANGED;
	else if (file_sum_of(fd, (size_t)st.st_size, NULL, &sum) == 0)
		state = sum == p->file_sum ? PLAN_CURRENT : PLAN_CHANGED;
	close(fd);
	return state;
}

int plan_code_sum(const struct xom_plan_head *p, const char *path)
{
	struct stat st;
	uint64_t sum;
	int rc = -1;

	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)
	    && file_sum_of(fd, (size_t)st.st_size, p, &sum) == 0)
		rc = sum == p->code_sum ? 0 : -1;
	close(fd);
	return rc;
}

int plan_state(const struct xom_plan_head *p)
{
	const char *path = xom_plan_path(p);

	/* A plan the runtime made for a relative name (LD_PRELOAD=build/...)
	 * names no one file. */
	if (path[0] != '/')
		return PLAN_UNCHECKED;
	return plan_fits(p, path);
}

/* ---- the stores a reader maps -------------------------------------------- */

void stores_open(struct stores *st)
{
	char buf[4096], err[256], dir[PATH_MAX], why[PATH_MAX + 64];
	struct xom_opts o;
	struct xom_dirs d;
	int require;

	memset(st, 0, sizeof *st);
	if (xom_options_parse(getenv("XOM_OPTIONS"), &o, buf, sizeof buf, &require,
	                      err, sizeof err) != 0)
		xom_options_parse(NULL, &o, buf, sizeof buf, &require, err, sizeof err);
	xom_store_dirs(&o, 0, geteuid(), lstat, &d);
	for (int i = 0; i < XOM_NSTORES; i++)
		if (xom_dir_path(&d, i, dir, sizeof dir)
		    && store_trusted(dir, i == XOM_STORE_SYSTEM, why, sizeof why) == 0)
			store_map(dir, &st->ix[i]);
}

void stores_close(struct stores *st)
{
	for (int i = 0; i < XOM_NSTORES; i++)
		store_unmap(&st->ix[i]);
}

const char *const cache_store_label[XOM_NSTORES] = { "system", "user", "fallback" };

int cache_runtime_opts(struct xom_opts *o, char *buf, size_t cap)
{
	char err[512];
	int require;

	if (xom_options_parse(getenv("XOM_OPTIONS"), o, buf, cap, &require, err,
	                      sizeof(err)) != 0) {
		say("XOM_OPTIONS: %s", err);
		return -1;
	}
	return 0;
}
