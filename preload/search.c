/*
 * search.c - the name that dlopen and dlmopen are given, resolved for the
 * program's own caller.
 *
 * glibc takes dlopen's return address as its caller, and the caller
 * decides what a name means: the folders of its DT_RPATH (and of the
 * objects that loaded it), its DT_RUNPATH, and its $ORIGIN.  Through this
 * door the caller that glibc sees is libxom.so's wrapper, so the wrapper
 * finds the name where glibc would have found it for the real caller, and
 * passes on a name that means the same whoever calls.
 *
 * For a name without '/', glibc's order is: an object of the namespace
 * already loaded under that name (its path, a name it was loaded by, or
 * its DT_SONAME); the caller's folders, which dlinfo(RTLD_DI_SERINFO)
 * lists (its RPATHs, LD_LIBRARY_PATH, its RUNPATH); ld.so.cache; the
 * default folders.  libxom.so carries an empty DT_RUNPATH, which makes
 * glibc skip every RPATH, the main program's included, when libxom.so is
 * the caller: its own list is LD_LIBRARY_PATH, the cache and the default
 * folders.  So the part of the caller's list that is not also the end of
 * libxom.so's is searched here, and the rest is left to glibc, which then
 * does exactly what it would have done for the caller.  A name with '/' is
 * the caller's only through $ORIGIN, which is replaced here.
 *
 * Not followed: a caller in a dlmopen namespace (no object there binds to
 * these wrappers), the glibc-hwcaps subfolders of the caller's own folders,
 * and a caller linked with -z nodefaultlib (said once).  In secure-execution
 * mode the name is passed on as given: glibc's rules for $ORIGIN there
 * are its own, and a caller of a set-user-ID program must steer nothing.
 *
 * Phase: any time, in any thread, outside the dynamic linker's locks; the
 * walk of loaded objects runs inside a dl_iterate_phdr callback, under
 * the lock that keeps an object from being unlinked and freed meanwhile.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <sys/auxv.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../loader/loader.h"
#include "../loader/sys.h"
#include "preload.h"

/*
 * glibc's struct link_map goes on past the five members that <link.h>
 * shows, with l_real, l_ns and l_libname (the names the object was loaded
 * by): the same since glibc 2.3 (its include/link.h).  They are read only
 * after xom_search_init has seen the layout hold for libxom.so and libc.
 */
struct libname {
	const char *name;
	struct libname *next;
	int dont_free;
};
struct glibc_map {
	struct link_map pub;
	struct link_map *l_real;
	Lmid_t l_ns;
	struct libname *l_libname;
};

static struct link_map *self;   /* libxom.so's link map */
static int secure;              /* AT_SECURE: names go to glibc as given */
static int layout_known;        /* struct glibc_map holds */

static int layout_holds(struct link_map *m)
{
	const struct glibc_map *g = (const void *)m;

	return g->l_real == m && g->l_ns == LM_ID_BASE && g->l_libname
	       && g->l_libname->name;
}

void xom_search_init(struct link_map *own, struct link_map *libc)
{
	self = own;
	secure = getauxval(AT_SECURE) != 0;
	layout_known = own && libc && layout_holds(own) && layout_holds(libc);
}

/* ---- an object already loaded under the name --------------------------- */

static const char *soname(const struct link_map *m)
{
	const char *str = NULL;
	uintptr_t off = UINTPTR_MAX;

	for (const ElfW(Dyn) *d = m->l_ld; d && d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_STRTAB) {
			uintptr_t p = d->d_un.d_ptr;
			str = (const char *)(p < m->l_addr ? p + m->l_addr : p);
		} else if (d->d_tag == DT_SONAME) {
			off = d->d_un.d_val;
		}
	}
	return str && off != UINTPTR_MAX ? str + off : NULL;
}

/* glibc's _dl_name_match_p, and the DT_SONAME test that follows it. */
static int loaded_as(struct link_map *m, const char *name)
{
	if (m->l_name && strcmp(m->l_name, name) == 0)
		return 1;
	if (layout_known)
		for (const struct libname *n = ((struct glibc_map *)m)->l_libname;
		     n; n = n->next)
			if (n->name && strcmp(n->name, name) == 0)
				return 1;
	const char *so = soname(m);
	return so && strcmp(so, name) == 0;
}

struct walk {
	struct link_map *from;  /* an object of the namespace */
	const char *name;
	char *buf;              /* the path of the object found */
	size_t cap;
	int found;
};

static int walk_namespace(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct walk *w = arg;
	struct link_map *m = w->from;

	(void)info;
	(void)size;
	while (m->l_prev)
		m = m->l_prev;
	for (; m && !w->found; m = m->l_next)
		if (loaded_as(m, w->name)) {
			w->found = 1;
			if (m->l_name && strchr(m->l_name, '/')
			    && strlen(m->l_name) < w->cap)
				xom_copy_str(w->buf, w->cap, m->l_name);
		}
	return 1;       /* one call is enough: the lock is what was wanted */
}

/* The object of from's namespace that glibc would find loaded under name:
 * returns 1, with its path in buf when it has one.  glibc holds its lock
 * from that test to the load, so a dlclose in another thread cannot come
 * between them; here it can, so the wrapper hands glibc the object's path,
 * which finds the object if it is still loaded and the same file if not. */
static int is_loaded(struct link_map *from, const char *name, char *buf,
                     size_t cap)
{
	struct walk w = { from, name, buf, cap, 0 };

	buf[0] = 0;
	dl_iterate_phdr(walk_namespace, &w);
	return w.found;
}

/* glibc's add_name_to_object: when its search finds a file, the object
 * keeps the name it was asked for, and a later dlopen of that name, or a
 * DT_NEEDED entry, finds it loaded.  The wrapper asked glibc for a path
 * instead, so the name is added here, in glibc's own form: one malloc'd
 * block, which glibc frees when it unloads the object.  It is linked in
 * under the lock that dl_iterate_phdr holds, so that the object cannot be
 * unlinked and freed meanwhile; malloc and free stay outside the callback,
 * where an allocator's own locks cannot meet the dynamic linker's. */
struct alias {
	struct link_map *map;
	struct libname *add;    /* NULL once linked in */
};

static int add_alias(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct alias *a = arg;
	struct libname *last = ((struct glibc_map *)a->map)->l_libname;

	(void)info;
	(void)size;
	if (!last || loaded_as(a->map, a->add->name))
		return 1;
	while (last->next)
		last = last->next;
	__atomic_store_n(&last->next, a->add, __ATOMIC_RELEASE);
	a->add = NULL;
	return 1;
}

void xom_search_found(void *handle, const char *file, const char *used)
{
	if (!handle || !layout_known || used == file || !file || strchr(file, '/'))
		return;
	size_t n = strlen(file) + 1;
	struct alias a = { handle, malloc(sizeof(struct libname) + n) };
	if (!a.add)
		return;
	a.add->name = memcpy(a.add + 1, file, n);
	a.add->next = NULL;
	a.add->dont_free = 0;
	dl_iterate_phdr(add_alias, &a);
	free(a.add);
}

/* ---- the caller's folders ---------------------------------------------- */

/* dlinfo(RTLD_DI_SERINFO) into buf, or into a mapping when it is larger:
 * *mapped is then its size, to unmap. */
static Dl_serinfo *serinfo(struct link_map *m, void *buf, size_t cap,
                           size_t *mapped)
{
	Dl_serinfo size, *si = buf;

	*mapped = 0;
	if (dlinfo(m, RTLD_DI_SERINFOSIZE, &size) != 0 || size.dls_size < sizeof(size))
		return NULL;
	if (size.dls_size > cap) {
		si = x_mmap(NULL, size.dls_size, PROT_READ | PROT_WRITE,
		            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (si == MAP_FAILED)
			return NULL;
		*mapped = size.dls_size;
	}
	*si = size;
	if (dlinfo(m, RTLD_DI_SERINFO, si) != 0) {
		if (*mapped)
			x_munmap(si, *mapped);
		return NULL;
	}
	return si;
}

/* The caller's folders that glibc would search before ld.so.cache, less
 * those that libxom.so's own search (what follows) covers too: the
 * caller's list less its longest common end with libxom.so's. */
static unsigned own_part(const Dl_serinfo *c, const Dl_serinfo *x)
{
	unsigned n = c->dls_cnt, k = x->dls_cnt;

	while (n && k && strcmp(c->dls_serpath[n - 1].dls_name,
	                        x->dls_serpath[k - 1].dls_name) == 0)
		n--, k--;
	return n;
}

static int nodeflib(const struct link_map *m)
{
	for (const ElfW(Dyn) *d = m->l_ld; d && d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_FLAGS_1)
			return (d->d_un.d_val & DF_1_NODEFLIB) != 0;
	return 0;
}

/* A file that glibc's open_verify would take, or fail on: it goes on
 * searching only past a file it cannot open or an ELF file of another
 * class or machine. */
static int candidate(const char *path)
{
	ElfW(Ehdr) eh;
	int fd = (int)x_open(path, O_RDONLY | O_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	long n = x_read(fd, &eh, sizeof(eh));
	x_close(fd);
	if (n >= EI_CLASS + 1 && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0
	    && eh.e_ident[EI_CLASS] != ELFCLASS64)
		return 0;
	if (n >= (long)sizeof(eh) && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0
	    && eh.e_machine != EM_X86_64)
		return 0;
	return 1;
}

static const char *join(char *buf, size_t cap, const char *dir, const char *name)
{
	size_t d = strlen(dir), n = strlen(name);

	if (d + 1 + n + 1 > cap)
		return NULL;
	memcpy(buf, dir, d);
	buf[d] = '/';
	memcpy(buf + d + 1, name, n + 1);
	return buf;
}

/* The first file called name in the caller's own folders, into buf, or
 * NULL: glibc will find what the caller would from libxom.so too. */
static const char *search_own(struct link_map *caller, struct link_map *ns,
                              const char *name, char *buf, size_t cap)
{
	char cbuf[1024], xbuf[1024];
	size_t cmap, xmap;
	const char *found = NULL;
	Dl_serinfo *c = serinfo(caller, cbuf, sizeof(cbuf), &cmap);
	Dl_serinfo *x = c ? serinfo(self, xbuf, sizeof(xbuf), &xmap) : NULL;

	if (!x)
		goto out;
	unsigned own = own_part(c, x);
	if (own && ns && is_loaded(ns, name, buf, cap)) {
		found = buf[0] ? buf : NULL;
		goto out;
	}
	if (own)
		for (unsigned i = 0; i < own && !found; i++)
			if (join(buf, cap, c->dls_serpath[i].dls_name, name)
			    && candidate(buf))
				found = buf;
	if (!found && nodeflib(caller))
		xom_notice("%s opens %s by a bare name and was linked with "
		           "-z nodefaultlib: through LD_PRELOAD, glibc also "
		           "searches its cache and default folders for it",
		           caller->l_name[0] ? caller->l_name : "the program", name);
out:
	if (x && xmap)
		x_munmap(x, xmap);
	if (c && cmap)
		x_munmap(c, cmap);
	return found;
}

/* ---- $ORIGIN in a path -------------------------------------------------- */

/* glibc's is_dst: $NAME or ${NAME}, and no more of a name after it. */
static size_t is_origin(const char *p)
{
	static const char word[] = "ORIGIN";
	size_t n = sizeof(word) - 1;

	if (p[0] == '{')
		return strncmp(p + 1, word, n) == 0 && p[1 + n] == '}' ? n + 2 : 0;
	if (strncmp(p, word, n) != 0)
		return 0;
	char c = p[n];
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
	       || (c >= '0' && c <= '9') || c == '_' ? 0 : n;
}

/* The caller's origin: the folder of the file it was loaded from (glibc
 * keeps it; it has none for the main program until it needs one, and then
 * asks /proc/self/exe, as here). */
static int origin(struct link_map *m, char *buf, size_t cap)
{
	if (m->l_name && m->l_name[0]) {
		char tmp[4096];
		if (dlinfo(m, RTLD_DI_ORIGIN, tmp) != 0 || strlen(tmp) >= cap)
			return -1;
		xom_copy_str(buf, cap, tmp);
		return 0;
	}
	long n = x_readlink("/proc/self/exe", buf, cap - 1);
	if (n <= 0)
		return -1;
	while (n > 1 && buf[n - 1] != '/')
		n--;
	buf[n > 1 ? n - 1 : 1] = 0;
	return 0;
}

static const char *expand_origin(struct link_map *caller, const char *file,
                                 char *buf, size_t cap)
{
	char org[4096];
	size_t o = 0, len;
	int have = 0;

	for (const char *p = file; *p; p++) {
		if (*p == '$' && (len = is_origin(p + 1)) != 0) {
			if (!have && origin(caller, org, sizeof(org)) != 0)
				return file;
			have = 1;
			size_t n = strlen(org);
			if (o + n >= cap)
				return file;
			memcpy(buf + o, org, n);
			o += n;
			p += len;
			continue;
		}
		if (o + 1 >= cap)
			return file;
		buf[o++] = *p;
	}
	buf[o] = 0;
	return have ? buf : file;
}

/* ---- the entry point ----------------------------------------------------- */

const char *xom_search_name(const char *file, const void *ret, int new_ns,
                            char *buf, size_t cap)
{
	struct dl_find_object fo;

	if (!file || !*file || !self || secure)
		return file;
	/* libc's strchrnul, which the runtime does not replace with a byte
	 * loop: every dlopen passes here, most with a long path. */
	int slash = *strchrnul(file, '/') != 0;
	if (slash && !*strchrnul(file, '$'))
		return file;    /* a path means the same from any caller */
	if (_dl_find_object((void *)ret, &fo) != 0 || !fo.dlfo_link_map)
		return file;
	struct link_map *caller = fo.dlfo_link_map;
	if (layout_known && ((struct glibc_map *)caller)->l_ns != LM_ID_BASE)
		return file;
	if (slash)
		return expand_origin(caller, file, buf, cap);
	const char *found = search_own(caller, new_ns ? NULL : caller, file,
	                               buf, cap);
	return found ? found : file;
}
