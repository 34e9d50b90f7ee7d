/*
 * facts.c - what each file was at the last build, kept in the store
 * (XOM_STORE_FACTS), so that a build of a store that is current reads no
 * file that has not changed: its ELF kind and flags (elf_kind, which the
 * walk of the system asks of every candidate), the key the runtime looks
 * it up by (file_key) and its shape (file_shape).
 *
 * All three are functions of the file's bytes and size.  A fact is kept
 * with the file's identity (device, inode, size, modification and change
 * times) and used again only while the file still has that identity: a
 * write moves the modification and change times, and chmod, chown,
 * setcap and every other change of an extended attribute move the change
 * time, which nobody can set back.  A file whose change time is within
 * FRESH_SECONDS of the build's start is not kept, as git treats a racily
 * clean file: a write within the same tick of the file system's clock
 * could leave its times as they were.
 *
 * The file is text: "xom-facts 1", then one line per file:
 * "DEV INO SIZE MTIME CTIME KIND AUDIT PROGRAM KEY SHAPE PATH" (numbers in
 * hex; KIND the enum elf_kind or "-" when not asked; KEY the build-id,
 * "n" when there is none (the key is the identity) or "-"; SHAPE, "x"
 * when it cannot be read, or "-").  It is read only when it and its
 * folder are the caller's and nobody else may write them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../plan/build.h"
#include "cache.h"
#include "elffile.h"

#define FACTS_MAGIC "xom-facts 1"

/* A file changed this recently may change again within the same tick
 * of its file system's clock (one or two seconds on the coarsest). */
#define FRESH_SECONDS 2

enum { UNKNOWN = -1 };

struct fact {
	struct xom_file_ident id;
	char *path;                     /* where it was met (one of its links) */
	int kind, audit, program;       /* kind: enum elf_kind, or UNKNOWN */
	int key;                        /* 1 build-id (in bid), 0 none, or UNKNOWN */
	struct xom_plan_key bid;
	int shape;                      /* 1 in sum, 0 unreadable, or UNKNOWN */
	uint64_t sum;
	int fresh;                      /* used or learnt by this build */
};

struct cache_facts {
	struct fact *v;
	size_t n, cap;
	size_t *hash;                   /* open addressing on (dev, ino): index+1 */
	size_t nhash;
	time_t since;                   /* files changed after this are not kept */
};

/* ---- the table ------------------------------------------------------------ */

static size_t slot_of(const struct cache_facts *m, uint64_t dev, uint64_t ino)
{
	uint64_t h = (dev * 0x9e3779b97f4a7c15ull) ^ ino;

	return (size_t)(h ^ (h >> 29)) & (m->nhash - 1);
}

/* The slot of (dev, ino): its entry, or the empty slot where it goes. */
static size_t *slot(struct cache_facts *m, uint64_t dev, uint64_t ino)
{
	size_t k = slot_of(m, dev, ino);

	for (; m->hash[k]; k = (k + 1) & (m->nhash - 1)) {
		const struct fact *f = &m->v[m->hash[k] - 1];
		if (f->id.dev == dev && f->id.ino == ino)
			break;
	}
	return &m->hash[k];
}

static int rehash(struct cache_facts *m, size_t nhash)
{
	size_t *t = calloc(nhash, sizeof(*t));

	if (!t)
		return -1;
	free(m->hash);
	m->hash = t;
	m->nhash = nhash;
	for (size_t i = 0; i < m->n; i++)
		*slot(m, m->v[i].id.dev, m->v[i].id.ino) = i + 1;
	return 0;
}

/* The fact of the file with identity id, or NULL. */
static struct fact *find(struct cache_facts *m, const struct xom_file_ident *id)
{
	if (!m || !m->nhash)
		return NULL;
	size_t i = *slot(m, id->dev, id->ino);
	if (!i || memcmp(&m->v[i - 1].id, id, sizeof(*id)))
		return NULL;
	m->v[i - 1].fresh = 1;
	return &m->v[i - 1];
}

/* The fact of the file with identity id met at path, made when missing
 * (replacing one of an earlier identity of the same inode); NULL when it
 * is not to be kept, or memory ran out. */
static struct fact *learn(struct cache_facts *m, const struct xom_file_ident *id,
                          const char *path)
{
	struct fact *f = find(m, id);

	if (f || !m || id->ctime_sec >= m->since || strchr(path, '\n'))
		return f;
	if (2 * (m->n + 1) > m->nhash && rehash(m, m->nhash ? 2 * m->nhash : 1024))
		return NULL;
	size_t *s = slot(m, id->dev, id->ino);
	if (*s) {
		f = &m->v[*s - 1];
		free(f->path);
	} else {
		if (m->n == m->cap) {
			size_t cap = m->cap ? 2 * m->cap : 1024;
			struct fact *v = realloc(m->v, cap * sizeof(*v));
			if (!v)
				return NULL;
			m->v = v;
			m->cap = cap;
		}
		f = &m->v[m->n];
		*s = ++m->n;
	}
	*f = (struct fact){ *id, strdup(path), UNKNOWN, 0, 0, UNKNOWN, { 0 }, UNKNOWN, 0, 1 };
	if (!f->path)
		f->path = strdup("");
	return f;
}

/* ---- asking ---------------------------------------------------------------- */

/* Opens path when it still is the file of st: the fd, or -1. */
static int open_same(const char *path, const struct stat *st)
{
	struct stat now;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd >= 0 && (fstat(fd, &now) != 0 || now.st_dev != st->st_dev
	                || now.st_ino != st->st_ino || now.st_size != st->st_size
	                || now.st_mtim.tv_sec != st->st_mtim.tv_sec
	                || now.st_mtim.tv_nsec != st->st_mtim.tv_nsec
	                || now.st_ctim.tv_sec != st->st_ctim.tv_sec
	                || now.st_ctim.tv_nsec != st->st_ctim.tv_nsec)) {
		close(fd);
		return -2;
	}
	return fd;
}

int facts_kind(struct cache_facts *m, const char *path, const struct stat *st,
               int *audit, int *program)
{
	struct xom_file_ident id;

	xom_file_ident_of(st, &id);
	struct fact *f = find(m, &id);
	if (f && f->kind != UNKNOWN) {
		*audit = f->audit;
		*program = f->program;
		return f->kind;
	}
	int fd = open_same(path, st);
	if (fd == -2) {
		/* Changed meanwhile: asked as before, and not kept. */
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		m = NULL;
	}
	if (fd < 0)
		return -1;
	int kind = (int)elf_kind(fd, (uint64_t)st->st_size, NULL, 0, audit, program);
	close(fd);
	if ((f = learn(m, &id, path))) {
		f->kind = kind;
		f->audit = *audit;
		f->program = *program;
	}
	return kind;
}

int facts_key(struct cache_facts *m, const char *path, struct xom_plan_key *k)
{
	struct xom_file_ident id;
	struct stat st;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return file_key(path, k);
	xom_file_ident_of(&st, &id);
	struct fact *f = find(m, &id);
	if (!f || f->key == UNKNOWN) {
		int fd = open_same(path, &st);
		if (fd < 0)
			return file_key(path, k);
		int rc = fd_key(fd, k);
		close(fd);
		if (rc == 0 && (f = learn(m, &id, path))) {
			f->key = k->kind == XOM_KEY_BUILD_ID;
			f->bid = *k;
		}
		return rc;
	}
	if (f->key)
		*k = f->bid;
	else
		xom_ident_key(&st, k);
	return 0;
}

int facts_shape(struct cache_facts *m, const char *path, uint64_t *shape)
{
	struct xom_file_ident id;
	struct stat st;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return file_shape(path, shape);
	xom_file_ident_of(&st, &id);
	struct fact *f = find(m, &id);
	if (!f || f->shape == UNKNOWN) {
		int fd = open_same(path, &st);
		if (fd < 0)
			return file_shape(path, shape);
		int rc = fd_shape(fd, shape);
		close(fd);
		if ((f = learn(m, &id, path))) {
			f->shape = rc == 0;
			f->sum = rc == 0 ? *shape : 0;
		}
		return rc;
	}
	*shape = f->sum;
	return f->shape ? 0 : -1;
}

/* ---- the file -------------------------------------------------------------- */

/* The number that *p starts with, in hex, ending at c; *p moves past c. */
static int hex_field(const char **p, int c, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(*p, &end, 16);
	if (errno || end == *p || *end != c)
		return -1;
	*p = end + 1;
	return 0;
}

/* A word of *p up to the next blank (at most cap - 1 bytes) into w. */
static int word_field(const char **p, char *w, size_t cap)
{
	size_t n = strcspn(*p, " \n");

	if (!n || n >= cap || (*p)[n] != ' ')
		return -1;
	memcpy(w, *p, n);
	w[n] = 0;
	*p += n + 1;
	return 0;
}

static int parse(struct cache_facts *m, const char *line)
{
	uint64_t v[12];
	char kind[4], audit[4], program[4], key[2 * sizeof(((struct xom_plan_key *)0)->bytes) + 2],
	     shape[20];
	const char *p = line;
	static const int ends[] = { ' ', ' ', ' ', '.', ' ', '.', ' ' };

	for (int i = 0; i < 7; i++)
		if (hex_field(&p, ends[i], &v[i]) != 0)
			return -1;
	if (word_field(&p, kind, sizeof(kind)) || word_field(&p, audit, sizeof(audit))
	    || word_field(&p, program, sizeof(program)) || word_field(&p, key, sizeof(key))
	    || word_field(&p, shape, sizeof(shape)) || *p != '/')
		return -1;
	struct xom_file_ident id = { v[0], v[1], v[2], (int64_t)v[3], (int64_t)v[4],
	                             (int64_t)v[5], (int64_t)v[6] };
	struct fact *f = learn(m, &id, p);
	if (!f)
		return -1;
	f->fresh = 0;
	if (kind[0] != '-') {
		f->kind = kind[0] - '0';
		f->audit = audit[0] == '1';
		f->program = program[0] == '1';
		if (kind[1] || f->kind < ELF_DYNAMIC || f->kind > ELF_OTHER)
			return -1;
	}
	if (!strcmp(key, "n")) {
		f->key = 0;
	} else if (strcmp(key, "-")) {
		size_t n = strlen(key) / 2;
		if (n == 0 || strlen(key) % 2)
			return -1;
		f->bid = (struct xom_plan_key){ XOM_KEY_BUILD_ID, (uint8_t)n, { 0 } };
		for (size_t i = 0; i < n; i++) {
			unsigned b;
			if (sscanf(key + 2 * i, "%2x", &b) != 1)
				return -1;
			f->bid.bytes[i] = (uint8_t)b;
		}
		f->key = 1;
	}
	if (!strcmp(shape, "x")) {
		f->shape = 0;
	} else if (strcmp(shape, "-")) {
		const char *s = shape;
		if (hex_field(&s, 0, &f->sum) != 0)
			return -1;
		f->shape = 1;
	}
	return 0;
}

/* Reads dir's file into m when it and dir are the caller's alone; a file
 * that is cut short or malformed is not used at all. */
static void load(struct cache_facts *m, const char *dir)
{
	char path[PATH_MAX];
	struct stat st, ds;

	if ((size_t)snprintf(path, sizeof(path), "%s/" XOM_STORE_FACTS, dir) >= sizeof(path))
		return;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return;
	FILE *in = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid()
	           && !(st.st_mode & 022) && stat(dir, &ds) == 0 && S_ISDIR(ds.st_mode)
	           && ds.st_uid == geteuid() && !(ds.st_mode & 022) ? fdopen(fd, "r") : NULL;
	if (!in) {
		close(fd);
		return;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int ok = getline(&line, &cap, in) > 0 && !strcmp(line, FACTS_MAGIC "\n");
	while (ok && (len = getline(&line, &cap, in)) > 0) {
		if (line[len - 1] != '\n')
			ok = 0;
		line[len - 1] = 0;
		ok = ok && parse(m, line) == 0;
	}
	ok = ok && !ferror(in);
	free(line);
	fclose(in);
	if (!ok) {
		for (size_t i = 0; i < m->n; i++)
			free(m->v[i].path);
		m->n = 0;
		memset(m->hash, 0, m->nhash * sizeof(*m->hash));
	}
}

struct cache_facts *facts_open(const char *dir)
{
	struct cache_facts *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->since = time(NULL) - FRESH_SECONDS;
	if (dir)
		load(m, dir);
	return m;
}

/* Whether the fact f still describes the file at its path. */
static int still_there(const struct fact *f)
{
	struct xom_file_ident id;
	struct stat st;

	if (stat(f->path, &st) != 0)
		return 0;
	xom_file_ident_of(&st, &id);
	return !memcmp(&id, &f->id, sizeof(id));
}

static int put_fact(FILE *out, const struct fact *f)
{
	char key[2 * sizeof(f->bid.bytes) + 2] = "-", shape[20] = "-", kind[2] = "-";

	if (f->key == 0)
		snprintf(key, sizeof(key), "n");
	for (unsigned i = 0; f->key == 1 && i < f->bid.len && i < sizeof(f->bid.bytes); i++)
		snprintf(key + 2 * i, sizeof(key) - 2 * i, "%02x", f->bid.bytes[i]);
	if (f->shape == 0)
		snprintf(shape, sizeof(shape), "x");
	else if (f->shape == 1)
		snprintf(shape, sizeof(shape), "%llx", (unsigned long long)f->sum);
	if (f->kind != UNKNOWN)
		snprintf(kind, sizeof(kind), "%d", f->kind);
	return fprintf(out, "%llx %llx %llx %llx.%llx %llx.%llx %s %d %d %s %s %s\n",
	               (unsigned long long)f->id.dev, (unsigned long long)f->id.ino,
	               (unsigned long long)f->id.size, (unsigned long long)f->id.mtime_sec,
	               (unsigned long long)f->id.mtime_nsec,
	               (unsigned long long)f->id.ctime_sec,
	               (unsigned long long)f->id.ctime_nsec, kind, f->audit, f->program, key,
	               shape, f->path) < 0 ? -1 : 0;
}

int facts_save(struct cache_facts *m, const char *dir, int all)
{
	char path[PATH_MAX + 32], tmp[PATH_MAX + 64];

	if (!m || !dir || access(dir, W_OK) != 0)
		return 0;
	snprintf(path, sizeof(path), "%s/" XOM_STORE_FACTS, dir);
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!out) {
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return -1;
	}
	int rc = fchmod(fd, 0644) | (fputs(FACTS_MAGIC "\n", out) < 0 ? -1 : 0);
	/* A build of the whole system keeps what it met; a build of some
	 * files keeps the others' too, while they are as they were. */
	for (size_t i = 0; i < m->n && !rc; i++)
		if (m->v[i].fresh || (!all && still_there(&m->v[i])))
			rc = put_fact(out, &m->v[i]);
	rc |= fclose(out) != 0 ? -1 : 0;
	if (rc || rename(tmp, path) != 0) {
		unlink(tmp);
		rc = -1;
	}
	return rc;
}

void facts_free(struct cache_facts *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	free(m->hash);
	free(m);
}
