/*
 * listings.c - what the dynamic linker listed for each program at
 * the last build, kept in the store (XOM_STORE_LISTINGS), so that a build
 * of a store that is current starts no listing.
 *
 * A listing (LD_TRACE_LOADED_OBJECTS, files.c) depends only on
 * the program, the files it lists, the folders that their DT_RPATH and
 * DT_RUNPATH name, the linker's cache and /etc/ld.so.preload, the
 * dynamic linker that lists, and the libxom.so that it preloads.  A
 * record keeps the listing's text with the identity (device, inode, size,
 * modification and change times) of every file and folder it depends on;
 * it is used again while each is unchanged, and the contents of the
 * linker's cache and preload list (ldconfig writes its cache again after
 * every library package, mostly with the same contents) are the same.
 * A listing that depends on anything else is not kept: one that found a
 * library through LD_LIBRARY_PATH or a relative folder, that missed a
 * library, or whose search folders name $LIB or $PLATFORM.
 *
 * The file is text: "xom-listings 1 HASH", then for each program
 * "P SECURE PRELOAD PATH", its files ("F DEV INO SIZE MTIME CTIME PATH",
 * the program first, "F 0 0 0 0 0 PATH" for a folder that must stay
 * absent), the listing's lines ("T LINE") and ".".  It is read only when
 * it is the caller's and nobody else may write it.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../plan/build.h"
#include "cache.h"
#include "elffile.h"

#define LISTINGS_MAGIC "xom-listings 1"

struct listing {
	char *path;
	int secure, preload;
	char *deps;                     /* the F lines */
	char *text;                     /* the listing, as the linker wrote it */
	int fresh;                      /* made or checked by this build */
};

struct cache_listings {
	char sum[17];                   /* what all listings depend on */
	struct listing *v;
	size_t n, cap;
	size_t reused, listed;
};

/* ---- identities ------------------------------------------------------------ */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ull;
	return h;
}

/* Mixes in the contents of a small file, or that it is missing. */
static uint64_t fnv_file(uint64_t h, const char *path)
{
	char buf[65536];
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	h = fnv(h, path, strlen(path) + 1);
	if (fd < 0)
		return fnv(h, "-", 1);
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		h = fnv(h, buf, (size_t)r);
	close(fd);
	return h;
}

/* "DEV INO SIZE MTIME CTIME" of path (stat, through links), or the
 * absent folder's zeros. */
static void ident(const char *path, char *buf, size_t cap)
{
	struct stat st;

	if (stat(path, &st) != 0)
		snprintf(buf, cap, "0 0 0 0 0");
	else
		snprintf(buf, cap, "%lx %lx %llx %llx.%lx %llx.%lx", (unsigned long)st.st_dev,
		         (unsigned long)st.st_ino, (unsigned long long)st.st_size,
		         (unsigned long long)st.st_mtim.tv_sec, (unsigned long)st.st_mtim.tv_nsec,
		         (unsigned long long)st.st_ctim.tv_sec, (unsigned long)st.st_ctim.tv_nsec);
}

static uint64_t fnv_ident(uint64_t h, const char *path)
{
	char id[160];

	ident(path ? path : "", id, sizeof(id));
	h = fnv(h, path ? path : "", path ? strlen(path) + 1 : 1);
	return fnv(h, id, strlen(id) + 1);
}

/* ---- the folders that DT_RPATH and DT_RUNPATH name ---------------------- */

struct buf {
	char *p;
	size_t n, cap;
};

static int put(struct buf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 1024;
		while (b->n + n + 1 > cap)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p)
			return -1;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
	return 0;
}

/* Appends "F IDENT PATH\n" for path. */
static int put_dep(struct buf *b, const char *path)
{
	char id[160];

	ident(path, id, sizeof(id));
	return put(b, "F ", 2) | put(b, id, strlen(id)) | put(b, " ", 1)
	       | put(b, path, strlen(path)) | put(b, "\n", 1);
}

/* Appends an F line for each folder that obj's DT_RPATH and DT_RUNPATH
 * name ($ORIGIN is obj's folder).  0, or -1 when obj cannot be read or
 * names a folder by another token. */
static int put_search(struct buf *b, const char *obj)
{
	char s[8192], dir[PATH_MAX];
	int rc = elf_run_paths(obj, s, sizeof(s));
	const char *slash = strrchr(obj, '/');

	for (char *save = NULL, *t = rc ? NULL : strtok_r(s, ":", &save); t && rc == 0;
	     t = strtok_r(NULL, ":", &save)) {
		const char *rest = !strncmp(t, "$ORIGIN", 7) ? t + 7
		                   : !strncmp(t, "${ORIGIN}", 9) ? t + 9 : NULL;
		if (rest && slash && (!*rest || *rest == '/') && !strchr(rest, '$'))
			snprintf(dir, sizeof(dir), "%.*s%s", (int)(slash - obj), obj, rest);
		else if (t[0] == '/' && !strchr(t, '$'))
			snprintf(dir, sizeof(dir), "%s", t);
		else
			rc = -1;
		if (rc == 0)
			rc = put_dep(b, dir);
	}
	return rc;
}

/* ---- the memo ------------------------------------------------------------- */

static void entry_free(struct listing *e)
{
	free(e->path);
	free(e->deps);
	free(e->text);
}

/* Whether every file and folder of deps is as it was. */
static int deps_same(const char *deps)
{
	char id[160];

	for (const char *line = deps; *line;) {
		const char *end = strchr(line, '\n');
		if (!end || strncmp(line, "F ", 2))
			return 0;
		/* "F " then five fields, then the path. */
		const char *p = line + 2;
		for (int i = 0; i < 5 && p < end; i++) {
			p = memchr(p, ' ', (size_t)(end - p));
			if (!p)
				return 0;
			p++;
		}
		char path[PATH_MAX];
		size_t idn = (size_t)(p - 1 - (line + 2)), pn = (size_t)(end - p);
		if (pn >= sizeof(path) || idn >= sizeof(id))
			return 0;
		memcpy(path, p, pn);
		path[pn] = 0;
		ident(path, id, sizeof(id));
		if (strlen(id) != idn || memcmp(id, line + 2, idn))
			return 0;
		line = end + 1;
	}
	return 1;
}

static struct listing *find(struct cache_listings *m, const char *path, int secure,
                            int preload)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].secure == secure && m->v[i].preload == preload
		    && !strcmp(m->v[i].path, path))
			return &m->v[i];
	return NULL;
}

static struct listing *add(struct cache_listings *m)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 256;
		struct listing *v = realloc(m->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		m->v = v;
		m->cap = cap;
	}
	m->v[m->n] = (struct listing){ 0 };
	return &m->v[m->n++];
}

/* Reads dir's file into m when it is the caller's alone and was made
 * with what all listings depend on now. */
static void load(struct cache_listings *m, const char *dir)
{
	char path[PATH_MAX];
	struct stat st;

	if ((size_t)snprintf(path, sizeof(path), "%s/" XOM_STORE_LISTINGS, dir) >= sizeof(path))
		return;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return;
	FILE *f = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid()
	          && !(st.st_mode & 022) ? fdopen(fd, "r") : NULL;
	if (!f) {
		close(fd);
		return;
	}
	char *line = NULL, head[64];
	size_t cap = 0;
	ssize_t len;
	struct listing *e = NULL;
	struct buf deps = { 0 }, text = { 0 };

	snprintf(head, sizeof(head), LISTINGS_MAGIC " %s\n", m->sum);
	if (getline(&line, &cap, f) <= 0 || strcmp(line, head))
		goto out;
	while ((len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] != '\n')
			break;
		if (!e && !strncmp(line, "P ", 2)) {
			int sec, pre, at = 0;
			if (sscanf(line, "P %d %d %n", &sec, &pre, &at) < 2 || !at
			    || !(e = add(m)))
				break;
			line[len - 1] = 0;
			*e = (struct listing){ strdup(line + at), sec, pre, NULL, NULL, 0 };
			if (!e->path)
				break;
		} else if (e && !strncmp(line, "F ", 2)) {
			if (put(&deps, line, (size_t)len))
				break;
		} else if (e && !strncmp(line, "T ", 2)) {
			if (put(&text, line + 2, (size_t)len - 2))
				break;
		} else if (e && !strcmp(line, ".\n") && deps.p) {
			e->deps = deps.p;
			e->text = text.p ? text.p : strdup("");
			deps = (struct buf){ 0 };
			text = (struct buf){ 0 };
			e = NULL;
		} else {
			break;
		}
	}
out:
	/* A record cut short is dropped. */
	if (e) {
		entry_free(e);
		m->n--;
	}
	free(deps.p);
	free(text.p);
	free(line);
	fclose(f);
}

struct cache_listings *listings_open(const char *dir, const char *ldso,
                                     const char *preload)
{
	struct cache_listings *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	uint64_t h = 0xcbf29ce484222325ull;
	h = fnv_file(h, "/etc/ld.so.cache");
	h = fnv_file(h, "/etc/ld.so.preload");
	h = fnv_ident(h, ldso);
	h = fnv_ident(h, preload);
	snprintf(m->sum, sizeof(m->sum), "%016llx", (unsigned long long)h);
	if (dir)
		load(m, dir);
	return m;
}

const char *listings_find(struct cache_listings *m, const char *path, int secure,
                          int preload)
{
	struct listing *e = m ? find(m, path, secure, preload) : NULL;

	if (!e || !e->text || !deps_same(e->deps))
		return NULL;
	e->fresh = 1;
	m->reused++;
	return e->text;
}

void listings_put(struct cache_listings *m, const char *path, int secure,
                  int preload, const char *text)
{
	struct buf deps = { 0 };
	int ok;

	if (!m)
		return;
	m->listed++;
	if (strchr(path, '\n'))
		return;
	ok = put_dep(&deps, path) == 0 && put_search(&deps, path) == 0;
	/* Each line: "NAME => /PATH (0x...)", "/PATH (0x...)", or the vDSO's
	 * "NAME (0x...)"; anything else (a library not found, one found
	 * through a relative folder) is not kept. */
	for (const char *line = text; ok && *line;) {
		size_t n = strcspn(line, "\n");
		char one[PATH_MAX + 256];
		if (n >= sizeof(one)) {
			ok = 0;
			break;
		}
		memcpy(one, line, n);
		one[n] = 0;
		line += n + (line[n] == '\n');
		char *s = one + strspn(one, " \t"), *arrow = strstr(s, " => ");
		char *file = arrow ? arrow + 4 : s, *addr = strstr(file, " (0x");
		if (!addr) {
			ok = 0;
			break;
		}
		*addr = 0;
		if (file[0] == '/')
			ok = put_dep(&deps, file) == 0 && put_search(&deps, file) == 0;
		else if (arrow || strchr(file, '/'))
			ok = 0;
	}
	struct listing *e = ok ? find(m, path, secure, preload) : NULL;
	if (ok && !e && !(e = add(m)))
		ok = 0;
	if (!ok) {
		free(deps.p);
		return;
	}
	entry_free(e);
	*e = (struct listing){ strdup(path), secure, preload, deps.p, strdup(text), 1 };
	if (!e->path || !e->text) {
		entry_free(e);
		*e = (struct listing){ 0 };
	}
}

void listings_count(const struct cache_listings *m, size_t *reused, size_t *listed)
{
	*reused = m ? m->reused : 0;
	*listed = m ? m->listed : 0;
}

int listings_save(struct cache_listings *m, const char *dir, int all)
{
	char path[PATH_MAX + 32], tmp[PATH_MAX + 64];
	struct buf b = { 0 };
	int rc = 0;

	if (!m || !dir || access(dir, W_OK) != 0)
		return 0;
	snprintf(path, sizeof(path), "%s/" XOM_STORE_LISTINGS, dir);
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	rc |= put(&b, LISTINGS_MAGIC " ", sizeof(LISTINGS_MAGIC)) | put(&b, m->sum, 16)
	      | put(&b, "\n", 1);
	for (size_t i = 0; i < m->n; i++) {
		const struct listing *e = &m->v[i];
		char head[64];
		/* A build of the whole system keeps what it listed or checked;
		 * a build of some programs keeps the others' too, while they
		 * are there. */
		if (!e->path || !e->text || (!e->fresh && (all || access(e->path, F_OK) != 0)))
			continue;
		snprintf(head, sizeof(head), "P %d %d ", e->secure, e->preload);
		rc |= put(&b, head, strlen(head)) | put(&b, e->path, strlen(e->path))
		      | put(&b, "\n", 1) | put(&b, e->deps, strlen(e->deps));
		for (const char *t = e->text; *t;) {
			size_t n = strcspn(t, "\n");
			rc |= put(&b, "T ", 2) | put(&b, t, n) | put(&b, "\n", 1);
			t += n + (t[n] == '\n');
		}
		rc |= put(&b, ".\n", 2);
	}
	if (rc) {
		free(b.p);
		return -1;
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		free(b.p);
		return -1;
	}
	rc = fchmod(fd, 0644) | xom_write_all(fd, b.p, b.n);
	rc |= close(fd);
	if (rc || rename(tmp, path) != 0) {
		unlink(tmp);
		rc = -1;
	}
	free(b.p);
	return rc;
}

void listings_free(struct cache_listings *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		entry_free(&m->v[i]);
	free(m->v);
	free(m);
}
