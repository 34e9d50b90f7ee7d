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
 * lists with glibc's own rules applied (its RPATHs, LD_LIBRARY_PATH, its
 * RUNPATH; in secure-execution mode without LD_LIBRARY_PATH); ld.so.cache;
 * the default folders.  libxom.so carries an empty DT_RUNPATH, which makes
 * glibc skip every RPATH, the main program's included, when libxom.so is
 * the caller: its own list is LD_LIBRARY_PATH, the cache and the default
 * folders.  So the part of the caller's list that is not also the end of
 * libxom.so's is searched here, and the rest is left to glibc, which then
 * does exactly what it would have done for the caller.  A name with '/'
 * is the caller's only through $ORIGIN, which is replaced here.
 *
 * Where the name cannot be carried over (an origin that cannot be known,
 * or a folder whose own name holds a '$' that glibc would expand again),
 * the call fails with a dlerror text that says so: it never loads a file
 * that glibc would not have loaded.  docs/how-it-works.md lists what is not
 * followed.
 *
 * Phase: any time, in any thread, outside the dynamic linker's locks,
 * with little stack (a thread may have 16 KB); the walk of loaded objects
 * runs inside a dl_iterate_phdr callback, under the lock that keeps an
 * object from being unlinked and freed meanwhile.  It may run before
 * libxom.so's constructor (from another library's), so it sets itself up.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>

#include "../loader/loader.h"
#include "../loader/sys.h"
#include "preload.h"

/*
 * glibc's struct link_map goes on past the five members that <link.h>
 * shows, with l_real, l_ns and l_libname (the names the object was loaded
 * by): the same since glibc 2.3 (its include/link.h).  They are read only
 * after setup has seen the layout hold for libxom.so and the program.
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
static struct link_map *program;        /* the base namespace's first */
static int layout_known;        /* struct glibc_map holds */
static int secure;              /* AT_SECURE */
static int said_nodeflib;

static int layout_holds(struct link_map *m)
{
	const struct glibc_map *g = (const void *)m;

	return g->l_real == m && g->l_ns == LM_ID_BASE && g->l_libname
	       && g->l_libname->name;
}

/* Idempotent: two threads that race compute the same values. */
static int setup(void)
{
	struct dl_find_object fo;

	if (self)
		return 0;
	if (_dl_find_object((void *)setup, &fo) != 0 || !fo.dlfo_link_map)
		return -1;
	struct link_map *m = fo.dlfo_link_map, *head = m;
	while (head->l_prev)
		head = head->l_prev;
	secure = getauxval(AT_SECURE) != 0;
	layout_known = layout_holds(m) && layout_holds(head);
	program = head;
	__atomic_store_n(&self, m, __ATOMIC_RELEASE);
	return 0;
}

static Lmid_t ns_of(struct link_map *m)
{
	return layout_known ? ((struct glibc_map *)m)->l_ns : LM_ID_BASE;
}

/* The first object of namespace lmid: the program's, or another one's
 * through the chain of glibc 2.35's r_debug_extended. */
static struct link_map *ns_head(Lmid_t lmid)
{
	extern struct r_debug _r_debug;

	if (lmid == LM_ID_BASE)
		return program;
	if (!layout_known || _r_debug.r_version < 2)
		return NULL;
	for (struct r_debug_extended *r = (void *)&_r_debug; r; r = r->r_next)
		if (r->base.r_map && ns_of(r->base.r_map) == lmid)
			return r->base.r_map;
	return NULL;
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
 * where an allocator's own locks cannot meet the dynamic linker's.  glibc
 * adds names under another lock, so a name that another thread adds to
 * the same object at the same moment can be lost: that object is then
 * looked up by a name the less. */
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

void xom_search_found(void *handle, const struct xom_name *r)
{
	if (!handle || !layout_known || !r->bare || r->name == r->file)
		return;
	size_t n = strlen(r->file) + 1;
	struct alias a = { handle, malloc(sizeof(struct libname) + n) };
	if (!a.add)
		return;
	a.add->name = memcpy(a.add + 1, r->file, n);
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

static int join(char *buf, size_t cap, const char *dir, const char *name)
{
	size_t d = strlen(dir), n = strlen(name);

	if (d + 1 + n + 1 > cap)
		return -1;
	memcpy(buf, dir, d);
	buf[d] = '/';
	memcpy(buf + d + 1, name, n + 1);
	return 0;
}

/* The mapping a built name is written into: the wrapper keeps its own
 * stack small. */
static char *result_buf(struct xom_name *r)
{
	if (!r->buf) {
		void *p = x_mmap(NULL, XOM_NAME_BUF, PROT_READ | PROT_WRITE,
		                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		r->buf = p;
	}
	return r->buf;
}

static void cannot(struct xom_name *r, const char *why)
{
	r->name = NULL;
	r->why = why;
}

/* glibc's DST names, which it expands in a path it is handed. */
static int has_dst(const char *s);

/* The name glibc would find for the caller among its own folders, or the
 * path of the object loaded under it; r->name is left as given when what
 * glibc would do from libxom.so is the same. */
static void search_own(struct xom_name *r, struct link_map *caller,
                       struct link_map *ns)
{
	char cbuf[512], xbuf[512];
	size_t cmap, xmap;
	char *buf;
	Dl_serinfo *c = serinfo(caller, cbuf, sizeof(cbuf), &cmap);
	Dl_serinfo *x = c ? serinfo(self, xbuf, sizeof(xbuf), &xmap) : NULL;

	if (!x)
		goto out;
	unsigned own = own_part(c, x);
	if (!own || !(buf = result_buf(r)))
		goto out;
	if (ns && is_loaded(ns, r->file, buf, XOM_NAME_BUF)) {
		if (buf[0])
			r->name = buf;
		goto out;
	}
	for (unsigned i = 0; i < own; i++) {
		if (join(buf, XOM_NAME_BUF, c->dls_serpath[i].dls_name, r->file) != 0
		    || !candidate(buf))
			continue;
		if (has_dst(c->dls_serpath[i].dls_name))
			cannot(r, "xom: through LD_PRELOAD, this library's folder "
			       "cannot be handed to the dynamic linker: its name holds "
			       "$ORIGIN, $LIB or $PLATFORM");
		else
			r->name = buf;
		goto out;
	}
	if (nodeflib(caller) && !__atomic_exchange_n(&said_nodeflib, 1, __ATOMIC_RELAXED))
		xom_notice("%s opens %s by a bare name and was linked with "
		           "-z nodefaultlib: through LD_PRELOAD, glibc also "
		           "searches its cache and default folders for it",
		           caller->l_name[0] ? caller->l_name : "the program", r->file);
out:
	if (x && xmap)
		x_munmap(x, xmap);
	if (c && cmap)
		x_munmap(c, cmap);
}

/* ---- $ORIGIN in a path -------------------------------------------------- */

/* glibc's is_dst: $NAME or ${NAME}, and no more of a name after it.
 * Returns the length after the '$', or 0. */
static size_t is_dst(const char *p, const char *word)
{
	size_t n = strlen(word);

	if (p[0] == '{')
		return strncmp(p + 1, word, n) == 0 && p[1 + n] == '}' ? n + 2 : 0;
	if (strncmp(p, word, n) != 0)
		return 0;
	char c = p[n];
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
	       || (c >= '0' && c <= '9') || c == '_' ? 0 : n;
}

static int has_dst(const char *s)
{
	for (const char *p = strchr(s, '$'); p; p = strchr(p + 1, '$'))
		if (is_dst(p + 1, "ORIGIN") || is_dst(p + 1, "LIB")
		    || is_dst(p + 1, "PLATFORM"))
			return 1;
	return 0;
}

/* glibc's origin of a file it loaded by the path name: the folder of the
 * path, after the current folder when it is relative (glibc took the
 * current folder when it loaded the file; a program that has changed
 * folder since gets the new one here). */
static int origin_of_path(const char *name, char *buf, size_t cap)
{
	size_t o = 0, n = strlen(name);

	if (name[0] != '/') {
		/* The system call says "(unreachable)/..." for a folder
		 * outside the root; glibc's getcwd fails there. */
		long c = x_getcwd(buf, cap);
		if (c <= 0 || buf[0] != '/')
			return -1;
		o = strlen(buf);
		if (o && buf[o - 1] != '/')
			buf[o++] = '/';
	}
	if (o + n + 1 > cap)
		return -1;
	memcpy(buf + o, name, n + 1);
	char *end = buf + o + n;
	do
		end--;
	while (*end != '/');
	if (end == buf)
		end++;
	*end = 0;
	return 0;
}

/* The caller's origin into buf, as glibc has it: the folder of the file
 * it was loaded from.  The program's is /proc/self/exe's folder, else
 * LD_ORIGIN_PATH; started by an explicit dynamic linker (no AT_BASE),
 * the folder of the path it was given. */
static int origin(struct link_map *m, char *buf, size_t cap)
{
	if (m->l_name && m->l_name[0])
		return origin_of_path(m->l_name, buf, cap);
	if (!getauxval(AT_BASE)) {
		extern char *program_invocation_name;
		const char *p = program_invocation_name;
		return p && strchr(p, '/') ? origin_of_path(p, buf, cap) : -1;
	}
	long n = cap > 4096 ? x_readlink("/proc/self/exe", buf, 4096) : -1;
	if (n > 0 && buf[0] == '/') {
		while (n > 1 && buf[n - 1] != '/')
			n--;
		buf[n > 1 ? n - 1 : 1] = 0;
		return 0;
	}
	const char *env = secure ? NULL : getenv("LD_ORIGIN_PATH");
	size_t len = env ? strlen(env) : 0;
	if (!len || len >= cap)
		return -1;
	memcpy(buf, env, len);
	while (len > 1 && buf[len - 1] == '/')
		len--;
	buf[len] = 0;
	return 0;
}

/* file with each $ORIGIN (or ${ORIGIN}) replaced by the caller's origin;
 * $LIB and $PLATFORM are left to glibc, whose values do not depend on the
 * caller. */
static void expand_origin(struct xom_name *r, struct link_map *caller)
{
	char *buf = result_buf(r);
	size_t o = 0, len;

	if (!buf || origin(caller, buf + XOM_NAME_BUF / 2, XOM_NAME_BUF / 2) != 0) {
		cannot(r, "xom: through LD_PRELOAD, the caller's $ORIGIN cannot be "
		       "known here");
		return;
	}
	const char *org = buf + XOM_NAME_BUF / 2;
	size_t n = strlen(org);
	if (has_dst(org)) {
		cannot(r, "xom: through LD_PRELOAD, the caller's $ORIGIN cannot be "
		       "handed to the dynamic linker: its name holds $ORIGIN, $LIB "
		       "or $PLATFORM");
		return;
	}
	for (const char *p = r->file; *p; p++) {
		if (*p == '$' && (len = is_dst(p + 1, "ORIGIN")) != 0) {
			if (o + n >= XOM_NAME_BUF / 2)
				goto long_name;
			memcpy(buf + o, org, n);
			o += n;
			p += len;
			continue;
		}
		if (o + 1 >= XOM_NAME_BUF / 2)
			goto long_name;
		buf[o++] = *p;
	}
	buf[o] = 0;
	r->name = buf;
	return;
long_name:
	cannot(r, "xom: through LD_PRELOAD, the name with the caller's $ORIGIN "
	       "is too long");
}

/* ---- the entry point ----------------------------------------------------- */

void xom_search_name(struct xom_name *r, const char *file, const void *ret,
                     Lmid_t lmid)
{
	struct dl_find_object fo;

	r->file = r->name = file;
	r->why = NULL;
	r->buf = NULL;
	r->bare = 0;
	if (!file || !*file || setup() != 0)
		return;
	/* libc's strchrnul, which the runtime does not replace with a byte
	 * loop: every dlopen passes here, most with a long path. */
	int slash = *strchrnul(file, '/') != 0;
	int dollar = *strchrnul(file, '$') != 0;
	if (slash && !dollar)
		return;         /* a path means the same from any caller */
	/* glibc's caller when the address is in no object (code made at run
	 * time): the program. */
	struct link_map *caller = program;
	if (_dl_find_object((void *)ret, &fo) == 0 && fo.dlfo_link_map)
		caller = fo.dlfo_link_map;
	if (ns_of(caller) != LM_ID_BASE)
		return;
	if (slash) {
		/* In secure-execution mode glibc refuses $ORIGIN in a name
		 * whoever the caller, and takes $LIB and $PLATFORM from
		 * itself. */
		if (!secure)
			expand_origin(r, caller);
		return;
	}
	r->bare = 1;
	struct link_map *ns = lmid == XOM_NS_CALLER ? caller
	                      : lmid == LM_ID_NEWLM ? NULL : ns_head(lmid);
	if (lmid != XOM_NS_CALLER && lmid != LM_ID_NEWLM && !ns)
		return;         /* glibc says what is wrong with lmid */
	search_own(r, caller, ns);
}

void xom_search_done(struct xom_name *r)
{
	if (r->buf)
		x_munmap(r->buf, XOM_NAME_BUF);
	r->buf = NULL;
}
