/*
 * storewrite.c - adds plans to a plan store (xom_plan.h): the tools' side.
 *
 * Writers take the store's lock (flock on DIR/lock), so that two processes
 * that scanned at the same time do not drop each other's plans; readers
 * never lock, because every file is replaced by rename and a reader's
 * mapping keeps the file it opened.  A plan already in the index under the
 * same key and for the same shape (xom_plan.h) is replaced by the new one,
 * which was made from the file just scanned: among plans that the runtime
 * cannot tell apart, the one that matches the file wins, not the first.
 * Plans of one key for other shapes stay beside it, each for its own
 * files.  Pruning (xom cache prune) drops plans under the same lock, and
 * the symbol files that no plan names.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build.h"

/* What the index holds: a plan under its key's hash, or a set of plans
 * (xom_plan.h) under the hash of its batch's keys. */
struct entry {
	const void *blob;
	uint32_t len;
	int set;
	uint64_t hash;
};

int xom_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}


static int say(char *why, size_t cap, const char *what, const char *path)
{
	snprintf(why, cap, "%s %s: %s", what, path, strerror(errno));
	return -1;
}

/* Writes buf to dir/name through a temporary file and a rename.  The file
 * is mode 0644 whatever the umask: a shared store's files must be readable
 * by every user (a user's store is kept private by its folder). */
static int replace_file(const char *dir, const char *name, const void *buf,
                        size_t len, char *why, size_t cap)
{
	char tmp[4300], dst[4200];

	snprintf(dst, sizeof(dst), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", dst, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	              0644);
	if (fd < 0)
		return say(why, cap, "cannot create", tmp);
	int bad = fchmod(fd, 0644) | xom_write_all(fd, buf, len);
	int err = errno;
	bad |= close(fd);
	if (bad || rename(tmp, dst) != 0) {
		if (!bad)
			err = errno;
		unlink(tmp);
		errno = err;
		return say(why, cap, "cannot write", dst);
	}
	return 0;
}

/* The plans of the index now in dir, or none if it is missing or damaged:
 * a damaged index is rebuilt from what this run adds. */
static void *map_index(const char *dir, size_t *len)
{
	char path[4200];
	struct stat st;
	const char *why;

	snprintf(path, sizeof(path), "%s/" XOM_STORE_INDEX, dir);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	void *p = MAP_FAILED;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)
	    && st.st_size >= (off_t)sizeof(struct xom_store_head)
	    && st.st_size <= (off_t)XOM_STORE_MAX)
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	if (xom_store_check_head(p, (size_t)st.st_size, &why) != 0) {
		munmap(p, (size_t)st.st_size);
		return NULL;
	}
	*len = (size_t)st.st_size;
	return p;
}

static struct entry plan_entry(const struct xom_plan_head *p)
{
	struct xom_plan_key k;

	xom_plan_key_of(p, &k);
	return (struct entry){ p, p->total, 0, xom_key_hash(&k) };
}

/* The plan for k among the first n entries (the plans, which come before
 * any set), or NULL. */
static const struct xom_plan_head *entry_plan(const struct entry *e, size_t n,
                                              const struct xom_plan_key *k)
{
	uint64_t hash = xom_key_hash(k);

	for (size_t i = 0; i < n && !e[i].set; i++) {
		struct xom_plan_key got;
		if (e[i].hash != hash)
			continue;
		xom_plan_key_of(e[i].blob, &got);
		if (xom_key_equal(&got, k))
			return e[i].blob;
	}
	return NULL;
}

/* The plan among the first n entries that the runtime would take for the
 * same objects as p (the same key and shape), or -1. */
static long entry_same(const struct entry *e, size_t n,
                       const struct xom_plan_head *p)
{
	struct xom_plan_key k;

	xom_plan_key_of(p, &k);
	uint64_t hash = xom_key_hash(&k);
	for (size_t i = 0; i < n && !e[i].set; i++) {
		struct xom_plan_key got;
		const struct xom_plan_head *q = e[i].blob;
		if (e[i].hash != hash || q->shape != p->shape)
			continue;
		xom_plan_key_of(q, &got);
		if (xom_key_equal(&got, &k))
			return (long)i;
	}
	return -1;
}

/* Whether e already holds the set for hash. */
static int has_set(const struct entry *e, size_t n, uint64_t hash)
{
	for (size_t i = 0; i < n; i++)
		if (e[i].set && e[i].hash == hash)
			return 1;
	return 0;
}

/* The old index's plans and sets that no new one replaces, after the new
 * ones (those of sets only with sets set). */
static size_t old_entries(const void *index, size_t len, struct entry *e,
                          size_t n, size_t cap, int sets)
{
	const struct xom_store_head *h = index;
	const struct xom_store_slot *s = (const void *)(h + 1);
	const char *why;

	for (uint32_t i = 0; i < h->nslots && n < cap; i++) {
		if (!s[i].len || !xom_store_slot_ok(&s[i], len))
			continue;
		const void *p = (const char *)index + s[i].off;
		if (!sets && xom_plan_check(p, s[i].len, &why) == 0) {
			if (entry_same(e, n, p) < 0)
				e[n++] = plan_entry(p);
		} else if (sets && xom_set_check(p, s[i].len, s[i].hash) == 0
		           && !has_set(e, n, s[i].hash)) {
			e[n++] = (struct entry){ p, s[i].len, 1, s[i].hash };
		}
	}
	return n;
}

/* Lays out a new index of the n plans and sets in e. */
static void *build_index(const struct entry *e, size_t n, size_t *len)
{
	uint32_t nslots = 16;
	while (nslots < 2 * n)
		nslots *= 2;
	size_t total = sizeof(struct xom_store_head)
	               + (size_t)nslots * sizeof(struct xom_store_slot);
	for (size_t i = 0; i < n; i++)
		total += e[i].len;
	if (total > XOM_STORE_MAX)
		return NULL;
	char *buf = calloc(1, total);
	if (!buf)
		return NULL;
	struct xom_store_head *h = (void *)buf;
	struct xom_store_slot *slot = (void *)(h + 1);
	memcpy(h->magic, XOM_STORE_MAGIC, 8);
	h->format = XOM_STORE_FORMAT;
	h->scan_version = XOM_PLAN_SCAN_VERSION;
	h->total = total;
	h->nslots = nslots;
	for (size_t i = 0; i < n; i++)
		h->nplans += !e[i].set;
	size_t at = sizeof(*h) + (size_t)nslots * sizeof(*slot);
	for (size_t i = 0; i < n; i++) {
		uint32_t k = (uint32_t)e[i].hash & (nslots - 1);
		while (slot[k].len)
			k = (k + 1) & (nslots - 1);
		slot[k] = (struct xom_store_slot){ e[i].hash, (uint32_t)at, e[i].len };
		memcpy(buf + at, e[i].blob, e[i].len);
		at += e[i].len;
	}
	xom_store_seal_head(h);
	*len = total;
	return buf;
}

static int write_syms(const char *dir, const struct xom_built *b, size_t n,
                      char *why, size_t cap)
{
	char sub[4200], name[XOM_KEY_NAME_MAX + 8];

	snprintf(sub, sizeof(sub), "%s/" XOM_STORE_SYMS, dir);
	if (mkdir(sub, 0755) == 0)
		chmod(sub, 0755);       /* whatever the umask */
	else if (errno != EEXIST)
		return say(why, cap, "cannot create", sub);
	for (size_t i = 0; i < n; i++) {
		struct xom_plan_key k;
		if (!b[i].plan || !b[i].syms)
			continue;
		xom_plan_key_of(b[i].plan, &k);
		xom_key_name(&k, name, sizeof(name));
		if (replace_file(sub, name, b[i].syms, b[i].syms->total, why, cap))
			return -1;
	}
	return 0;
}

/* A new set of the plans for the keys in e's plans, in their order, or
 * NULL when fewer than two of them have a plan there. */
static struct xom_set_head *make_set(const struct entry *e, size_t n,
                                     const struct xom_plan_key *keys, size_t nkeys)
{
	uint64_t hash = XOM_SET_HASH_INIT;
	size_t total = sizeof(struct xom_set_head), found = 0;

	for (size_t i = 0; i < nkeys; i++) {
		const struct xom_plan_head *p = entry_plan(e, n, &keys[i]);
		hash = xom_set_hash(hash, &keys[i]);
		if (p) {
			total += p->total;
			found++;
		}
	}
	if (found < 2 || total > XOM_PLAN_MAX * 4ull)
		return NULL;
	struct xom_set_head *s = calloc(1, total);
	if (!s)
		return NULL;
	memcpy(s->magic, XOM_SET_MAGIC, 8);
	s->total = (uint32_t)total;
	s->nplans = (uint32_t)found;
	s->hash = hash;
	char *at = (char *)(s + 1);
	for (size_t i = 0; i < nkeys; i++) {
		const struct xom_plan_head *p = entry_plan(e, n, &keys[i]);
		if (p) {
			memcpy(at, p, p->total);
			at += p->total;
		}
	}
	return s;
}

/* The old sets kept beside the new ones: at most OLDER_SETS of those
 * that start with the same plan as a new one (the same program's start-up:
 * with a library since changed, a set for each version would pile up, but
 * a program also starts with different batches, under valgrind or with a
 * library preloaded, and each would otherwise push the other's set out at
 * every start), the most recent first, and no more than SETS_MAX bytes of
 * sets in all, the new ones first.  Sets are a shortcut; one dropped only
 * makes its batch look its plans up one by one. */
#define SETS_MAX (16u << 20)
#define OLDER_SETS 2

static int same_first(const struct xom_set_head *a, const struct xom_set_head *b)
{
	size_t at_a = 0, at_b = 0, len_a = 0, len_b = 0;
	const struct xom_plan_head *pa = xom_set_plan(a, &at_a, &len_a);
	const struct xom_plan_head *pb = xom_set_plan(b, &at_b, &len_b);
	struct xom_plan_key ka, kb;

	if (!pa || !pb)
		return 0;
	xom_plan_key_of(pa, &ka);
	xom_plan_key_of(pb, &kb);
	return xom_key_equal(&ka, &kb);
}

/* Which of the n sets in e starts with the same plan as set, or -1. */
static long same_first_as(const struct entry *e, size_t n, const void *set)
{
	for (size_t i = 0; i < n; i++)
		if (same_first(e[i].blob, set))
			return (long)i;
	return -1;
}

/* The old sets in e[from, n) that the new ones in e[fresh, from), of
 * bytes in all, leave room for; returns the new end. */
static size_t keep_sets(struct entry *e, size_t fresh, size_t from, size_t n,
                        size_t bytes)
{
	size_t k = from, nnew = from - fresh;
	unsigned char *older = nnew ? calloc(nnew, 1) : NULL;

	for (size_t i = from; i < n; i++) {
		long j = same_first_as(e + fresh, nnew, e[i].blob);
		if ((j >= 0 && (!older || older[j] >= OLDER_SETS))
		    || bytes + e[i].len > SETS_MAX)
			continue;
		if (j >= 0)
			older[j]++;
		bytes += e[i].len;
		e[k++] = e[i];
	}
	free(older);
	return k;
}

/* Adds to e[k...] a new set for each key list of sets that makes one, of
 * the plans among e's first `plans`, while they fit in SETS_MAX (bytes
 * counts them); the sets are also kept in made[], for the caller to free.
 * A set that the old index holds byte for byte is left to it, so that a
 * build with nothing new (the package hook's, say) writes nothing. */
static size_t new_sets(struct entry *e, size_t k, size_t plans,
                       const struct xom_set_keys *sets, size_t nsets,
                       struct xom_set_head **made, size_t *bytes,
                       const void *old, size_t old_len)
{
	size_t from = k;

	for (size_t i = 0; i < nsets; i++) {
		struct xom_set_head *set = sets[i].n >= 2
			? make_set(e, plans, sets[i].keys, sets[i].n) : NULL;
		if (!set)
			continue;
		const struct xom_set_head *same = old
			? xom_store_find_set(old, old_len, set->hash) : NULL;
		if (same && same->total == set->total && !memcmp(same, set, set->total)) {
			free(set);
			continue;
		}
		/* Two programs that are one file (a hard link, a copy) make
		 * the same set, or one with the same first plan. */
		if (has_set(e + from, k - from, set->hash)
		    || same_first_as(e + from, k - from, set) >= 0
		    || *bytes + set->total > SETS_MAX) {
			free(set);
			continue;
		}
		*bytes += set->total;
		made[i] = set;
		e[k++] = (struct entry){ set, set->total, 1, set->hash };
	}
	return k;
}

int xom_store_merge(const void *old, size_t old_len, const struct xom_built *b,
                    size_t n, const struct xom_set_keys *sets, size_t nsets,
                    void **out, size_t *len, char *why, size_t cap)
{
	size_t k = 0, bytes = 0;
	size_t most = n + nsets + (old ? ((const struct xom_store_head *)old)->nslots : 0);
	struct entry *e = calloc(most + 1, sizeof(*e));
	struct xom_set_head **made = calloc(nsets + 1, sizeof(*made));
	int rc = -1;

	*out = NULL;
	*len = 0;
	if (!e || !made) {
		snprintf(why, cap, "out of memory");
		goto out;
	}
	/* Of two new plans of one key and shape, the later: the later scan. */
	for (size_t i = 0; i < n; i++) {
		if (!b[i].plan)
			continue;
		long same = entry_same(e, k, b[i].plan);
		if (same < 0)
			e[k++] = plan_entry(b[i].plan);
		else
			e[same] = plan_entry(b[i].plan);
	}
	if (old)
		k = old_entries(old, old_len, e, k, most, 0);
	size_t plans = k;
	k = new_sets(e, k, plans, sets, nsets, made, &bytes, old, old_len);
	if (!n && k == plans) {
		rc = 0;         /* nothing new: the index stays as it is */
		goto out;
	}
	if (old) {
		size_t from = k;
		k = keep_sets(e, plans, from, old_entries(old, old_len, e, k, most, 1), bytes);
	}
	/* Sets are a shortcut: an index too large with them is made without. */
	if (!(*out = build_index(e, k, len)) && k > plans)
		*out = build_index(e, plans, len);
	if (!*out)
		snprintf(why, cap, "the index would be too large");
	else
		rc = 0;
out:
	for (size_t i = 0; made && i < nsets; i++)
		free(made[i]);
	free(made);
	free(e);
	return rc;
}

static int merge_index(const char *dir, const struct xom_built *b, size_t n,
                       const struct xom_set_keys *sets, size_t nsets,
                       char *why, size_t cap)
{
	size_t old_len = 0, len;
	void *old = map_index(dir, &old_len), *index;
	int rc = xom_store_merge(old, old_len, b, n, sets, nsets, &index, &len, why, cap);

	if (rc == 0 && index)
		rc = replace_file(dir, XOM_STORE_INDEX, index, len, why, cap);
	free(index);
	if (old)
		munmap(old, old_len);
	return rc;
}

/* A store's directory must be the writer's, and a user's must be private:
 * anyone who can write to it could feed plans and symbol names to the
 * user's programs. */
static int dir_trusted(const char *dir, int shared, char *why, size_t cap)
{
	struct stat st;

	if (lstat(dir, &st) != 0)
		return say(why, cap, "cannot use", dir);
	/* Named, since it is someone to talk to: a folder in /tmp is anyone's
	 * to make first. */
	if (S_ISDIR(st.st_mode) && st.st_uid != geteuid()) {
		snprintf(why, cap, "%s belongs to uid %u, not to you (uid %u): that user made it first",
		         dir, (unsigned)st.st_uid, (unsigned)geteuid());
		return -1;
	}
	if (!S_ISDIR(st.st_mode) || (st.st_mode & (shared ? 022 : 077))) {
		snprintf(why, cap, "%s is not a directory that only you %s", dir,
		         shared ? "can write to" : "can use (mode 0700)");
		return -1;
	}
	return 0;
}

/* mkdir with mode whatever the umask (a shared store's folders must be
 * readable by every user); 0, also when it was there, or -1. */
static int make_dir(const char *p, mode_t mode)
{
	if (mkdir(p, mode) == 0)
		return chmod(p, mode);
	return errno == EEXIST ? 0 : -1;
}

/* mkdir -p, the missing directories with mode. */
static int make_dirs(const char *dir, mode_t mode)
{
	char p[4200];

	snprintf(p, sizeof(p), "%s", dir);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (make_dir(p, mode) != 0)
			return -1;
		*s = '/';
	}
	return make_dir(p, mode);
}

/* Takes the lock of the store in dir, which must be trusted; the lock's
 * descriptor (closing it unlocks), or -1 with why set. */
static int lock_store(const char *dir, int shared, char *why, size_t cap)
{
	char lock[4200];

	if (dir_trusted(dir, shared, why, cap) != 0)
		return -1;
	snprintf(lock, sizeof(lock), "%s/" XOM_STORE_LOCK, dir);
	int fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return say(why, cap, "cannot open", lock);
	if (flock(fd, LOCK_EX) != 0) {
		say(why, cap, "cannot lock", lock);
		close(fd);
		return -1;
	}
	return fd;
}

int xom_store_add(const char *dir, int shared, const struct xom_built *b,
                  size_t n, const struct xom_set_keys *sets, size_t nsets,
                  char *why, size_t cap)
{
	/* A file-size limit must fail the write, not kill the writer. */
	signal(SIGXFSZ, SIG_IGN);
	if (make_dirs(dir, shared ? 0755 : 0700) != 0)
		return say(why, cap, "cannot create", dir);
	int fd = lock_store(dir, shared, why, cap);
	if (fd < 0)
		return -1;
	int rc = -1;
	if (write_syms(dir, b, n, why, cap) == 0)
		rc = merge_index(dir, b, n, sets, nsets, why, cap);
	close(fd);
	return rc;
}

/* ---- dropping plans ---------------------------------------------------- */

static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The key names of the n plans of e, sorted, for bsearch. */
static char (*key_names(const struct entry *e, size_t n))[XOM_KEY_NAME_MAX]
{
	char (*names)[XOM_KEY_NAME_MAX] = calloc(n + 1, sizeof(*names));

	if (!names)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		struct xom_plan_key k;
		xom_plan_key_of(e[i].blob, &k);
		xom_key_name(&k, names[i], sizeof(names[i]));
	}
	qsort(names, n, sizeof(*names), name_cmp);
	return names;
}

static int is_tmp(const char *name)
{
	size_t n = strlen(name);

	return n > 4 && !strcmp(name + n - 4, ".tmp");
}

int xom_syms_walk(const char *dir,
                  void (*each)(const char *path, const char *name, void *arg),
                  void *arg)
{
	char path[PATH_MAX + 400];
	struct dirent *d;

	snprintf(path, sizeof(path), "%s/" XOM_STORE_SYMS, dir);
	DIR *dp = opendir(path);
	if (!dp)
		return -1;
	while ((d = readdir(dp)) != NULL) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/" XOM_STORE_SYMS "/%s", dir, d->d_name);
		each(path, d->d_name, arg);
	}
	closedir(dp);
	return 0;
}

/* What drop_orphan needs: the sorted names of the symbol files that the
 * kept plans name, and the tally. */
struct orphans {
	char (*names)[XOM_KEY_NAME_MAX];
	size_t n;
	struct xom_prune *r;
};

static void drop_orphan(const char *path, const char *name, void *arg)
{
	struct orphans *o = arg;
	struct stat st;

	if (!is_tmp(name) && strlen(name) < XOM_KEY_NAME_MAX
	    && bsearch(name, o->names, o->n, sizeof(*o->names), name_cmp))
		return;
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && unlink(path) == 0) {
		o->r->syms_removed++;
		o->r->bytes += (uint64_t)st.st_size;
	}
}

/* Deletes in dir/syms what no kept plan names, and any writer's leftover
 * temporary file (writers hold the lock, so none is being written). */
static void drop_orphans(const char *dir, char (*names)[XOM_KEY_NAME_MAX],
                         size_t n, struct xom_prune *r)
{
	struct orphans o = { names, n, r };
	char path[4500];
	struct dirent *d;

	if (xom_syms_walk(dir, drop_orphan, &o) != 0)
		return;
	/* The index's own leftovers: plans.PID.tmp. */
	DIR *dp = opendir(dir);
	if (dp == NULL)
		return;
	while ((d = readdir(dp)) != NULL)
		if (!strncmp(d->d_name, XOM_STORE_INDEX ".", sizeof(XOM_STORE_INDEX))
		    && is_tmp(d->d_name)) {
			snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
			unlink(path);
		}
	closedir(dp);
}

/* Whether a set holds a plan that is not among the n kept ones. */
static int set_dropped(const struct xom_set_head *s, const struct entry *kept,
                       size_t n)
{
	size_t at = 0, len = 0;

	for (const struct xom_plan_head *p; (p = xom_set_plan(s, &at, &len)) != NULL; )
		if (entry_same(kept, n, p) < 0)
			return 1;
	return 0;
}

int xom_store_prune(const char *dir, int shared,
                    int (*drop)(const struct xom_plan_head *p, void *arg),
                    void *arg, struct xom_prune *r, char *why, size_t cap)
{
	char index[4200];
	struct stat st;
	size_t old_len = 0, len = 0, n = 0;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	signal(SIGXFSZ, SIG_IGN);
	int fd = lock_store(dir, shared, why, cap);
	if (fd < 0)
		return -1;
	void *old = map_index(dir, &old_len);
	snprintf(index, sizeof(index), "%s/" XOM_STORE_INDEX, dir);
	if (!old && lstat(index, &st) == 0) {
		/* Damaged: the next writer replaces it; its symbol files may
		 * still serve plans of the same keys in other stores. */
		snprintf(why, cap, "%s is damaged; the next plan written replaces it",
		         index);
		close(fd);
		return -1;
	}
	size_t nslots = old ? ((const struct xom_store_head *)old)->nslots : 0;
	struct entry *all = calloc(nslots + 1, sizeof(*all));
	struct entry *e = calloc(nslots + 1, sizeof(*e));
	char (*names)[XOM_KEY_NAME_MAX] = NULL;
	void *idx = NULL;
	if (!all || !e) {
		snprintf(why, cap, "out of memory");
		goto out;
	}
	size_t total = old ? old_entries(old, old_len, all, 0, nslots, 0) : 0;
	for (size_t i = 0; i < total; i++) {
		if (!drop(all[i].blob, arg)) {
			e[n++] = all[i];
			continue;
		}
		r->dropped++;
		r->bytes += all[i].len;
	}
	r->kept = n;
	/* A set goes with any plan of it that goes. */
	size_t plans = n;
	total = old ? old_entries(old, old_len, all, 0, nslots, 1) : 0;
	for (size_t i = 0; i < total; i++) {
		if (set_dropped(all[i].blob, e, plans)) {
			r->sets_dropped++;
			r->bytes += all[i].len;
		} else {
			e[n++] = all[i];
		}
	}
	if (r->dropped || r->sets_dropped) {
		if (!(idx = build_index(e, n, &len))) {
			snprintf(why, cap, "out of memory");
			goto out;
		}
		if (replace_file(dir, XOM_STORE_INDEX, idx, len, why, cap) != 0)
			goto out;
	}
	if ((names = key_names(e, plans)) != NULL)
		drop_orphans(dir, names, plans, r);
	rc = 0;
out:
	free(names);
	free(idx);
	free(e);
	free(all);
	if (old)
		munmap(old, old_len);
	close(fd);
	return rc;
}
