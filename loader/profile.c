/*
 * profile.c - profiles: the code pages that stay readable because a program
 * was seen to read them (docs/usage.md, "Learning what a program reads").
 *
 * A profile is text, one item a line, '#' to the end of a line a comment:
 *   program KEY [PATH]        the lines after it are for that main program
 *   KEY 0xPAGE [PATH]         the page at link-time address PAGE of the
 *                             object KEY stays readable
 * KEY is the object's build-id in hex, or its path when it has none; PATH
 * names the file the key was taken from.  Lines before any program line
 * are for every program.  An item whose PATH is an object loaded now, but
 * whose KEY is not that object's, is stale (the file changed since it was
 * learned): it is ignored, and one line says so.
 *
 * Where profiles come from, for one process: profile=PATH, then the
 * user's profile folder (profiles=), then the system store's, then the
 * profiles shipped with xom, in the folder profiles beside this library
 * (lib/xom/profiles when installed, build/profiles in a build); the folders
 * hold one file per main program, named by its key.  A folder file is
 * trusted only when it is the user's (or, in the system store and beside
 * the library, root's, with every folder up to / root's alone) and nobody
 * else can write it; a secure-execution program reads root's folders alone
 * (xom_profile_dir is not even asked).
 *
 * Phases: the profiles are mapped for one batch of objects and unmapped at
 * its end (they list readable code pages, which must not stay in memory).
 * A folder that has no file for this program is not asked again by this
 * process, so that each dlopen does not pay two failed opens: a profile
 * installed while a program runs takes effect at its next start (profile=
 * is opened again for each batch, since an audit run writes it);
 * the fault handler appends to profile=PATH in audit mode (open, write,
 * close: async-signal-safe).
 */
#include <sys/mman.h>

#include "loader.h"
#include "sys.h"

#define MAX_SOURCES 4
#define MAX_PROFILE_BYTES (4u << 20)

struct source {
	const char *map;
	size_t len;
	char name[XOM_PATH_MAX];
	int stale_said;                 /* a program section was stale */
};
static struct source src[MAX_SOURCES] XOM_COLD;
static int nsrc;

/* The main program, as the profiles name it; set once, by the batch that
 * maps it, and read by the fault handler. */
static char main_key[XOM_KEY_NAME_MAX];
static char main_file[XOM_KEY_NAME_MAX];        /* its folder file's name */
static char main_path[256];

void xom_profile_program(const char *key, const char *file, const char *path)
{
	if (main_key[0] || !key || !key[0])
		return;
	xom_copy_str(main_file, sizeof(main_file), file ? file : "");
	xom_copy_str(main_path, sizeof(main_path), path ? path : "");
	xom_copy_str(main_key, sizeof(main_key), key);
}

static int sys_lstat(const char *path, struct stat *st)
{
	return x_lstat(path, st) == 0 ? 0 : -1;
}

/* The folders (0 the user's, 1 the system store's) found to have no file
 * for this program. */
static unsigned char folder_none[3];

/* Maps path as the next source; owner is the uid that must own it (and its
 * folder), or -1 for the file that profile= names, which is the user's
 * word.  Returns -ENOENT when there is no such file (or folder), else 0. */
static long map_source(const char *path, long owner, int shared)
{
	struct stat st, dst;
	struct source *s = &src[nsrc];

	long fd = x_open(path, O_RDONLY | O_CLOEXEC | (owner >= 0 ? O_NOFOLLOW : 0), 0);
	if (SYS_FAILED(fd))
		/* none: a first audit run creates profile= */
		return fd == -ENOENT || fd == -ENOTDIR ? -ENOENT : 0;
	void *p = NULL;
	if (x_fstat((int)fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0
	    && st.st_size <= (off_t)MAX_PROFILE_BYTES
	    && (owner < 0 || ((long)st.st_uid == owner && !(st.st_mode & 022))))
		p = x_mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, (int)fd, 0);
	x_close((int)fd);
	if (!p || X_MAP_FAILED(p))
		return 0;
	if (owner >= 0) {
		/* The folder, too, must be the owner's alone: else another
		 * user could have put the file there. */
		char dir[XOM_PATH_MAX];
		xom_copy_str(dir, sizeof(dir), path);
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = 0;
		int ok = slash && x_lstat(dir, &dst) == 0 && S_ISDIR(dst.st_mode)
		         && (long)dst.st_uid == owner && !(dst.st_mode & 022)
		         && (!shared || xom_store_dir_shared(dir, sys_lstat));
		if (!ok) {
			if (xom_opt.verbose >= 1)
				xom_say("profile %s ignored: its folder is not %s alone", path,
				        owner ? "yours" : "root's");
			x_munmap(p, (size_t)st.st_size);
			return 0;
		}
	}
	s->map = p;
	s->len = (size_t)st.st_size;
	s->stale_said = 0;
	xom_copy_str(s->name, sizeof(s->name), path);
	nsrc++;
	return 0;
}

void xom_profile_open(void)
{
	/* One buffer for each folder and then its file: every stack page the
	 * warm path reaches is a page fault. */
	char path[XOM_PATH_MAX];

	if (nsrc)
		return;
	if (xom_opt.profile)
		map_source(xom_opt.profile, -1, 0);
	if (!main_file[0] || (xom_opt.profiles && !strcmp(xom_opt.profiles, "off")))
		return;
	if (!folder_none[0] && !xom_secure
	    && xom_profile_dir(&xom_opt, path, sizeof(path)) == XOM_CACHE_DIR
	    && xom_join(path, sizeof(path), path, "/") == 0
	    && xom_join(path, sizeof(path), path, main_file) == 0)
		folder_none[0] = map_source(path, (long)xom_euid, 0) == -ENOENT;
	if (!folder_none[1] && xom_store_dir(XOM_STORE_SYSTEM, path, sizeof(path))
	    && xom_join(path, sizeof(path), path, "/" XOM_PROFILES_SUBDIR "/") == 0
	    && xom_join(path, sizeof(path), path, main_file) == 0)
		folder_none[1] = map_source(path, 0, 1) == -ENOENT;
	if (!folder_none[2] && xom_beside(XOM_PROFILES_SUBDIR "/", path, sizeof(path))
	    && xom_join(path, sizeof(path), path, main_file) == 0)
		folder_none[2] = map_source(path, 0, 1) == -ENOENT;
}

int xom_profile_any(void)
{
	return nsrc > 0;
}

void xom_profile_close(void)
{
	/* Only the sources in use: clearing the whole table cost every batch,
	 * each dlopen's included, a byte loop over tens of kilobytes and the
	 * first touch of their pages. */
	for (int i = 0; i < nsrc; i++) {
		x_munmap(src[i].map, src[i].len);
		memset(&src[i], 0, sizeof(src[i]));
	}
	nsrc = 0;
}

static int same(const char *a, size_t n, const char *b)
{
	return n == strlen(b) && !memcmp(a, b, n);
}

/* ---- the pages of one object ------------------------------------------ */

#define MAX_PROFILE_PAGES 512

/* The last lookup's pages: a list of readable code pages, wiped by
 * xom_profile_forget as soon as they are applied. */
static uint64_t keep[MAX_PROFILE_PAGES] XOM_COLD;
static size_t nkeep;

static void say_stale(const struct source *s, const char *what, const char *path,
                      const struct xom_profile_line *it, const char *key)
{
	xom_say("profile %s: its %s %s is for build %.*s, not for the file loaded now (%s); ignored",
	        s->name, what, path, (int)(it->keylen > 128 ? 128 : it->keylen),
	        it->key, key);
}

/* Adds source s's pages for key (an object at path) to keep. */
static void scan_source(struct source *s, const char *key, const char *path,
                        size_t *n, int *stale)
{
	const char *p = s->map, *end = s->map + s->len;
	int in_scope = 1;               /* before any program line: everyone's */
	struct xom_profile_line it;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		if (xom_profile_line(p, eol, &it) == 0) {
			if (it.program) {
				in_scope = same(it.key, it.keylen, main_key);
				if (!in_scope && !s->stale_said && main_path[0]
				    && same(it.path, it.pathlen, main_path)) {
					s->stale_said = 1;
					say_stale(s, "program", main_path, &it, main_key);
				}
			} else if (in_scope && same(it.key, it.keylen, key)) {
				if (*n < MAX_PROFILE_PAGES)
					keep[(*n)++] = it.page;
			} else if (in_scope && !*stale && path && path[0]
			           && same(it.path, it.pathlen, path)) {
				*stale = 1;
				say_stale(s, "object", path, &it, key);
			}
		}
		p = eol + 1;
	}
}

size_t xom_profile_pages(const char *key, const char *path,
                         const uint64_t **pages)
{
	size_t n = 0;
	int stale = 0;

	*pages = keep;
	for (int i = 0; i < nsrc; i++)
		scan_source(&src[i], key, path, &n, &stale);
	/* Insertion sort, and duplicates dropped: profiles are short. */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j && keep[j - 1] > keep[j]; j--) {
			uint64_t t = keep[j];
			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (!u || keep[u - 1] != keep[i])
			keep[u++] = keep[i];
	return nkeep = u;
}

void xom_profile_forget(void)
{
	if (!nkeep)
		return;
	memset(keep, 0, nkeep * sizeof(keep[0]));
	nkeep = 0;
}

/* ---- audit mode: appending what was read [fault] ---------------------- */

/* The profile's name for an object: its build-id in hex, else its path
 * (buf holds the hex). */
static const char *profile_key(const struct xom_object *o, char *buf, size_t cap)
{
	if (!(o->flags & XOM_OBJ_BUILD_ID))
		return __atomic_load_n(&o->path, __ATOMIC_RELAXED);
	xom_key_name(&o->key, buf, cap);
	return buf;
}

/* Copies s into line at *n, with every byte that could end or split a
 * line (a control character, or '#' that would start a comment) as '?'. */
static void put_clean(char *line, size_t cap, size_t *n, const char *s)
{
	for (; *s && *n < cap; s++)
		line[(*n)++] = (unsigned char)*s < 0x20 || *s == 0x7f || *s == '#'
		               ? '?' : *s;
}

void xom_profile_append(const struct xom_object *o, uint64_t page,
                        const char *verb, const char *what, const char *by)
{
	char line[1536], key[XOM_KEY_NAME_MAX];
	size_t n = 0, cap = sizeof(line) - 2;

	if (!xom_opt.profile)
		return;
	/* One write for the program line and the page, so that the lines of
	 * processes that share the file stay together (O_APPEND). */
	if (main_key[0]) {
		n = xom_fmt(line, cap, "program %s ", main_key);
		put_clean(line, cap, &n, main_path);
		line[n++] = '\n';
	}
	n += xom_fmt(line + n, cap - n, "%s 0x%lx ", profile_key(o, key, sizeof(key)),
	             (unsigned long)page);
	put_clean(line, cap, &n, __atomic_load_n(&o->path, __ATOMIC_RELAXED));
	/* The comment: why.  It runs to the end of the line, so '#' may stay;
	 * a control character may not. */
	const char *part[] = { " # ", verb, " of ", what, " by ", by };
	for (size_t i = 0; i < sizeof(part) / sizeof(part[0]); i++)
		for (const char *c = part[i]; *c && n < cap; c++)
			line[n++] = (unsigned char)*c < 0x20 ? '?' : *c;
	line[n++] = '\n';
	long fd = x_open(xom_opt.profile, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	                 0600);
	if (!SYS_FAILED(fd)) {
		x_write((int)fd, line, n);
		x_close((int)fd);
	}
}
