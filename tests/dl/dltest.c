/*
 * dltest.c - what a program sees of the calls that xom's doors stand in
 * for: dlopen, dlmopen, dlclose, dlerror, the signal calls and the key
 * calls.  tests/dl/run.sh runs it without xom, under the preload door and
 * under the audit door.
 *
 * Each case checks its known answer (the behaviour glibc documents, or
 * that these files are built to give) and prints
 *   PASS name | FAIL name: file:line what
 * and one line
 *   SEEN name: values
 * of what it observed (return values, errno, dlerror text, which file a
 * name found), which run.sh compares between the three runs: a door must
 * not change any of it.
 *
 * Usage: dltest [CASE]   (all cases, in order, without one)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"

/* The hosts (host.c): libraries that call dlopen themselves. */
void *runpath_open(const char *name, int mode);   /* RUNPATH $ORIGIN/sub:$ORIGIN/sub2 */
void *runpath_mopen(Lmid_t lmid, const char *name, int mode);
void *rpath_open(const char *name, int mode);     /* RPATH $ORIGIN/rsub */
void *plain_open(const char *name, int mode);     /* neither */
void *ndl_open(const char *name, int mode);       /* -z nodefaultlib */
extern int ctor_bare, ctor_origin;                /* libctor.so's constructor */

static char dir[4096];          /* this program's folder */
static int have_pku;            /* pkey_get and pkey_set are SIGILL without */
static char seen[2048];
static const char *test_name;   /* the case running now */

static void see(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void see(const char *fmt, ...)
{
	size_t n = strlen(seen);
	va_list ap;

	if (n && n < sizeof(seen) - 1)
		seen[n++] = ' ';
	va_start(ap, fmt);
	vsnprintf(seen + n, sizeof(seen) - n, fmt, ap);
	va_end(ap);
}

/* A failed check (../check.h) has said FAIL; its case returns -1. */
#define CHECK_FAILED return -1

static const char *str(const char *s) { return s ? s : "(null)"; }

/* What dlerror says, with this program's folder written as DIR so that
 * the runs compare wherever the tree is. */
static const char *error_text(void)
{
	static char buf[1024];
	const char *e = dlerror(), *at;

	if (!e)
		return NULL;
	size_t n = strlen(dir);
	if ((at = strstr(e, dir)) != NULL)
		snprintf(buf, sizeof(buf), "%.*sDIR%s", (int)(at - e), e, at + n);
	else
		snprintf(buf, sizeof(buf), "%s", e);
	return buf;
}

static int value_of(void *h)
{
	int (*f)(void) = h ? (int (*)(void))dlsym(h, "plug_value") : NULL;
	return f ? f() : -1;
}

static int loaded(const char *path)
{
	void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
	if (h)
		dlclose(h);
	return h != NULL;
}

static char *path_of(const char *rel)
{
	static char buf[4][4200];
	static int i;
	char *b = buf[i++ % 4];
	snprintf(b, sizeof(buf[0]), "%s/%s", dir, rel);
	return b;
}

/* ---- dlerror ------------------------------------------------------------ */

/* First, before any other dl call: a failed dlsym's error reaches
 * dlerror, even when the first call of the wrappers comes after it. */
static int t_dlsym_error(void)
{
	void *p = dlsym(RTLD_DEFAULT, "xom_test_no_such_symbol");
	const char *e = error_text();
	see("ptr=%d error=[%s]", p != NULL, str(e));
	CHECK(!p, "dlsym found a symbol that does not exist");
	CHECK(e && strstr(e, "undefined symbol: xom_test_no_such_symbol"),
	      "dlerror gave [%s]", str(e));
	e = error_text();
	see("again=[%s]", str(e));
	CHECK(!e, "dlerror did not clear the error: [%s]", e);
	return 0;
}

/* The signal and key calls between the error and dlerror leave it. */
static int t_error_kept(void)
{
	sigset_t none;
	sigemptyset(&none);
	CHECK(!dlsym(RTLD_DEFAULT, "xom_test_no_such_symbol_2"), "found");
	signal(SIGUSR2, SIG_DFL);
	sigset(SIGUSR2, SIG_DFL);
	errno = 0;
	int fr = pkey_free(14);
	int fe = errno;
	errno = 0;
	int sr = have_pku ? pkey_set(14, 0) : -2;
	int se = errno;
	const char *e = error_text();
	see("pkey_free=%d/%d pkey_set=%d/%d error=[%s]", fr, fe, sr, se, str(e));
	CHECK(e && strstr(e, "xom_test_no_such_symbol_2"),
	      "the signal or key calls cleared dlerror: [%s]", str(e));
	return 0;
}

static int t_dlvsym_error(void)
{
	void *p = dlvsym(RTLD_DEFAULT, "printf", "XOM_NO_SUCH_VERSION");
	const char *e = error_text();
	see("ptr=%d error=[%s]", p != NULL, str(e));
	CHECK(!p && e, "dlvsym of a missing version: %p [%s]", p, str(e));
	return 0;
}

static int t_dlopen_error(void)
{
	errno = 0;
	void *h = dlopen("libxom-test-no-such.so", RTLD_NOW);
	int err = errno;
	const char *e = error_text();
	see("handle=%d errno=%d error=[%s]", h != NULL, err, str(e));
	CHECK(!h, "a missing library loaded");
	CHECK(e && strstr(e, "libxom-test-no-such.so: cannot open shared object file"),
	      "dlerror gave [%s]", str(e));
	CHECK(!dlerror(), "dlerror did not clear the error");
	return 0;
}

/* A successful call clears an earlier error; a failed one replaces it. */
static int t_error_cleared(void)
{
	dlsym(RTLD_DEFAULT, "xom_test_no_such_symbol_3");
	void *h = dlopen(path_of("sub/libplug.so"), RTLD_NOW);
	const char *e = error_text();
	see("handle=%d error=[%s]", h != NULL, str(e));
	CHECK(h && !e, "a successful dlopen left [%s]", str(e));
	dlsym(RTLD_DEFAULT, "xom_test_no_such_symbol_4");
	CHECK(dlclose(h) == 0, "dlclose failed");
	e = error_text();
	see("after-dlclose=[%s]", str(e));
	CHECK(!e, "a successful dlclose left [%s]", str(e));
	return 0;
}

static void *error_in_thread(void *arg)
{
	(void)arg;
	return dlerror() ? arg : NULL;
}

static int t_error_per_thread(void)
{
	pthread_t t;
	void *other;

	dlsym(RTLD_DEFAULT, "xom_test_no_such_symbol_5");
	static int mark;
	CHECK(pthread_create(&t, NULL, error_in_thread, &mark) == 0, "pthread_create");
	pthread_join(t, &other);
	const char *e = error_text();
	see("other-thread=%d mine=[%s]", other != NULL, str(e));
	CHECK(!other, "another thread saw this thread's error");
	CHECK(e, "this thread's error was lost");
	return 0;
}

/* ---- which object is the caller ------------------------------------------ */

static int t_runpath(void)
{
	void *h = runpath_open("libplug.so", RTLD_NOW);
	const char *e = h ? NULL : error_text();
	see("value=%d error=[%s]", value_of(h), str(e));
	CHECK(h, "a bare name in the caller's RUNPATH was not found: %s", str(e));
	CHECK(value_of(h) == 42, "found the wrong file: %d", value_of(h));
	dlclose(h);
	return 0;
}

static int t_rpath(void)
{
	void *h = rpath_open("librplug.so", RTLD_NOW);
	const char *e = h ? NULL : error_text();
	see("value=%d error=[%s]", value_of(h), str(e));
	CHECK(h && value_of(h) == 7, "a bare name in the caller's RPATH: %s", str(e));
	dlclose(h);
	return 0;
}

/* RPATH is searched up the chain of objects that loaded the caller:
 * libchain.so (no paths) was loaded as a dependency of libchaintop.so,
 * whose RPATH names csub/. */
static int t_rpath_chain(void)
{
	void *top = dlopen(path_of("libchaintop.so"), RTLD_NOW);
	CHECK(top, "libchaintop.so: %s", str(error_text()));
	void *(*open_fn)(const char *, int) =
		(void *(*)(const char *, int))dlsym(top, "chain_open");
	CHECK(open_fn, "chain_open: %s", str(error_text()));
	void *h = open_fn("libcplug.so", RTLD_NOW);
	const char *e = h ? NULL : error_text();
	see("value=%d error=[%s]", value_of(h), str(e));
	CHECK(h && value_of(h) == 8, "the loader's RPATH was not searched: %s", str(e));
	dlclose(h);
	dlclose(top);
	return 0;
}

/* The program's own DT_RPATH (msub/) counts for a caller without RUNPATH,
 * and not for one with RUNPATH. */
static int t_main_rpath(void)
{
	void *b = runpath_open("libmplug.so", RTLD_NOW);
	const char *eb = b ? NULL : error_text();
	void *a = plain_open("libmplug.so", RTLD_NOW);
	const char *ea = a ? NULL : error_text();
	see("plain=%d runpath=%d error=[%s]", value_of(a), value_of(b), str(eb));
	CHECK(a && value_of(a) == 9, "the program's RPATH was not searched: %s", str(ea));
	CHECK(!b, "a caller with RUNPATH searched the program's RPATH");
	CHECK(eb && strstr(eb, "libmplug.so: cannot open shared object file"),
	      "dlerror gave [%s]", str(eb));
	dlclose(a);
	return 0;
}

/* LD_LIBRARY_PATH (llp/, set by run.sh in one of its passes) comes after
 * RPATH and before RUNPATH. */
static int t_order(void)
{
	void *r = rpath_open("libprec_r.so", RTLD_NOW);
	void *n = runpath_open("libprec_n.so", RTLD_NOW);
	int llp = getenv("LD_LIBRARY_PATH") != NULL;
	see("rpath=%d runpath=%d", value_of(r), value_of(n));
	CHECK(value_of(r) == 3, "RPATH did not come before LD_LIBRARY_PATH: %d", value_of(r));
	CHECK(value_of(n) == (llp ? 1 : 2), "LD_LIBRARY_PATH did not come before RUNPATH: %d",
	      value_of(n));
	dlclose(r);
	dlclose(n);
	return 0;
}

/* A name already loaded, by its DT_SONAME, is returned whatever the
 * caller's folders hold. */
static int t_loaded_soname(void)
{
	void *a = dlopen(path_of("libsys.so"), RTLD_NOW);
	CHECK(a, "libsys.so: %s", str(error_text()));
	void *b = runpath_open("libsys.so", RTLD_NOW);
	see("first=%d second=%d same=%d", value_of(a), value_of(b), a == b);
	CHECK(b == a && value_of(b) == 5, "loaded twice: %d", value_of(b));
	dlclose(b);
	dlclose(a);
	CHECK(!loaded(path_of("libsys.so")), "libsys.so stayed loaded");
	return 0;
}

/* ... and by the name it was loaded by, without a DT_SONAME, from a
 * caller whose folders hold another file of that name, and from the
 * DT_NEEDED entry of a library loaded later (libneednoso.so, whose own
 * RPATH names rsub/). */
static int t_loaded_name(void)
{
	void *a = runpath_open("libnoso.so", RTLD_NOW);
	void *b = rpath_open("libnoso.so", RTLD_NOW);
	void *n = dlopen(path_of("libneednoso.so"), RTLD_NOW);
	int (*nv)(void) = n ? (int (*)(void))dlsym(n, "needed_value") : NULL;
	see("first=%d second=%d same=%d needed=%d", value_of(a), value_of(b), a == b,
	    nv ? nv() : -1);
	CHECK(a && value_of(a) == 11, "first: %d", value_of(a));
	CHECK(b == a, "loaded twice: %d", value_of(b));
	CHECK(nv && nv() == 11, "a DT_NEEDED entry loaded it again: %d", nv ? nv() : -1);
	dlclose(n);
	dlclose(b);
	dlclose(a);
	return 0;
}

/* A file loaded by its path is found again by a bare name in the
 * caller's folders: once, not twice. */
static int t_path_then_name(void)
{
	void *a = dlopen(path_of("sub/libplug.so"), RTLD_NOW);
	void *b = runpath_open("libplug.so", RTLD_NOW);
	see("same=%d value=%d", a == b, value_of(b));
	CHECK(a && a == b, "the same file was loaded twice");
	dlclose(b);
	dlclose(a);
	CHECK(!loaded(path_of("sub/libplug.so")), "still loaded after two dlclose");
	return 0;
}

static int t_origin(void)
{
	void *h = runpath_open("$ORIGIN/sub2/libplug2.so", RTLD_NOW);
	const char *e = h ? NULL : error_text();
	void *m = dlopen("${ORIGIN}/msub/libmplug.so", RTLD_NOW);
	const char *em = m ? NULL : error_text();
	see("library=%d program=%d error=[%s][%s]", value_of(h), value_of(m),
	    str(e), str(em));
	CHECK(h && value_of(h) == 43, "$ORIGIN of the calling library: %s", str(e));
	CHECK(m && value_of(m) == 9, "$ORIGIN of the program: %s", str(em));
	dlclose(h);
	dlclose(m);
	return 0;
}

static int t_dlmopen(void)
{
	void *h = runpath_mopen(LM_ID_NEWLM, "libplug.so", RTLD_NOW);
	const char *e = h ? NULL : error_text();
	Lmid_t lmid = 0;
	if (h)
		dlinfo(h, RTLD_DI_LMID, &lmid);
	see("value=%d new-namespace=%d error=[%s]", value_of(h), lmid != 0, str(e));
	CHECK(h && value_of(h) == 42, "dlmopen from a RUNPATH caller: %s", str(e));
	CHECK(lmid != LM_ID_BASE, "not in a new namespace");
	CHECK(!loaded(path_of("sub/libplug.so")), "also in the program's namespace");
	dlclose(h);
	void *b = runpath_mopen(LM_ID_BASE, "libplug.so", RTLD_NOW);
	see("base=%d", value_of(b));
	CHECK(b && value_of(b) == 42, "dlmopen(LM_ID_BASE) from a RUNPATH caller");
	dlclose(b);
	return 0;
}

static int t_null(void)
{
	void *h = dlopen(NULL, RTLD_NOW);
	void *m = h ? dlsym(h, "runpath_open") : NULL;
	see("handle=%d symbol=%d", h != NULL, m != NULL);
	CHECK(h && m, "dlopen(NULL), or a symbol of the program's libraries");
	CHECK(dlclose(h) == 0, "dlclose(dlopen(NULL))");
	return 0;
}

/* A library's constructor, run before the preloaded library's own. */
static int t_constructor(void)
{
	see("bare=%d origin=%d", ctor_bare, ctor_origin);
	CHECK(ctor_bare == 42, "a constructor's bare name: %d", ctor_bare);
	CHECK(ctor_origin == 43, "a constructor's $ORIGIN: %d", ctor_origin);
	return 0;
}

/* Code made at run time, in no object: glibc takes the program as the
 * caller, whose RPATH names msub/. */
static int t_no_object(void)
{
	static const unsigned char code[] = {
		0x48, 0x83, 0xec, 0x08,                 /* sub $8, %rsp */
		0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0,     /* movabs $dlopen, %rax */
		0xff, 0xd0,                             /* call *%rax */
		0x48, 0x83, 0xc4, 0x08,                 /* add $8, %rsp */
		0xc3,                                   /* ret */
	};
	void *(*fn)(const char *, int) = dlopen;
	unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
	                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED, "mmap");
	memcpy(p, code, sizeof(code));
	memcpy(p + 6, &fn, sizeof(fn));
	CHECK(mprotect(p, 4096, PROT_READ | PROT_EXEC) == 0, "mprotect");
	void *(*jit)(const char *, int) = (void *(*)(const char *, int))(uintptr_t)p;
	void *h = jit("libmplug.so", RTLD_NOW);
	const char *e = h ? NULL : error_text();
	see("value=%d error=[%s]", value_of(h), str(e));
	CHECK(h && value_of(h) == 9, "a caller in no object: %s", str(e));
	dlclose(h);
	munmap(p, 4096);
	return 0;
}

/* dlmopen into a namespace that exists: the caller's folders still. */
static int t_dlmopen_existing(void)
{
	void *first = dlmopen(LM_ID_NEWLM, path_of("sub/libref.so"), RTLD_NOW);
	Lmid_t lmid = 0;
	CHECK(first && dlinfo(first, RTLD_DI_LMID, &lmid) == 0, "new namespace: %s",
	      str(error_text()));
	void *a = runpath_mopen(lmid, "libplug.so", RTLD_NOW);
	const char *ea = a ? NULL : error_text();
	void *b = runpath_mopen(lmid, "$ORIGIN/sub2/libplug2.so", RTLD_NOW);
	const char *eb = b ? NULL : error_text();
	see("bare=%d origin=%d errors=[%s][%s]", value_of(a), value_of(b), str(ea), str(eb));
	CHECK(a && value_of(a) == 42, "bare name: %s", str(ea));
	CHECK(b && value_of(b) == 43, "$ORIGIN: %s", str(eb));
	dlclose(b);
	dlclose(a);
	dlclose(first);
	return 0;
}

/* A caller loaded by a relative path from a folder nearly PATH_MAX deep:
 * its origin and the names built from it are long.  The name is not found
 * either way; nothing may crash.  (Past PATH_MAX the kernel's getcwd
 * gives up, and glibc 2.41's own dlopen then hangs in its fallback.) */
static int t_long_origin(void)
{
	char top[] = "/tmp/xom-dl-deep.XXXXXX", comp[201], cwd[4200];
	int depth = 0;

	CHECK(mkdtemp(top) && getcwd(cwd, sizeof(cwd)), "mkdtemp");
	memset(comp, 'd', 200);
	comp[200] = 0;
	CHECK(chdir(top) == 0, "chdir");
	for (; depth < 19; depth++)
		if (mkdir(comp, 0700) != 0 || chdir(comp) != 0)
			break;
	int in = open(path_of("librunpath.so"), O_RDONLY);
	int out = open("librunpath2.so", O_WRONLY | O_CREAT | O_TRUNC, 0700);
	char buf[65536];
	ssize_t n;
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	close(in);
	close(out);
	void *h = dlopen("./librunpath2.so", RTLD_NOW);
	void *(*open_fn)(const char *, int) =
		h ? (void *(*)(const char *, int))dlsym(h, "runpath_open") : NULL;
	void *p = open_fn ? open_fn("$ORIGIN/libxom-test-no-such.so", RTLD_NOW) : NULL;
	see("depth=%d loaded=%d found=%d", depth, h != NULL, p != NULL);
	if (h)
		dlclose(h);
	unlink("librunpath2.so");
	for (int i = 0; i < depth; i++)
		if (chdir("..") != 0 || rmdir(comp) != 0)
			break;
	CHECK(chdir(cwd) == 0, "chdir back");
	rmdir(top);
	CHECK(depth == 19 && h && open_fn && !p, "depth %d, %p %p", depth, h, p);
	return 0;
}

/* A thread with the smallest stack that POSIX allows. */
static void *small_stack_loads(void *arg)
{
	(void)arg;
	void *a = runpath_open("libplug.so", RTLD_NOW);
	void *b = runpath_open("$ORIGIN/sub2/libplug2.so", RTLD_NOW);
	long ok = value_of(a) == 42 && value_of(b) == 43;
	if (a)
		dlclose(a);
	if (b)
		dlclose(b);
	return (void *)ok;
}

static int t_small_stack(void)
{
	pthread_attr_t at;
	pthread_t t;
	void *ok = NULL;

	pthread_attr_init(&at);
	CHECK(pthread_attr_setstacksize(&at, PTHREAD_STACK_MIN) == 0, "stack size");
	CHECK(pthread_create(&t, &at, small_stack_loads, NULL) == 0, "pthread_create");
	pthread_join(t, &ok);
	see("loaded=%d", ok != NULL);
	CHECK(ok, "the loads failed in a %d-byte stack", (int)PTHREAD_STACK_MIN);
	return 0;
}

/* Run by run.sh alone: the preload door says its one line once. */
static int t_nodeflib(void)
{
	int found = 0;
	for (int i = 0; i < 3; i++) {
		void *h = ndl_open("libxom-test-no-such.so", RTLD_NOW);
		found += h != NULL;
		if (h)
			dlclose(h);
	}
	dlerror();
	see("found=%d", found);
	CHECK(!found, "found a library that does not exist");
	return 0;
}

/* ---- modes and counts ------------------------------------------------------ */

static int t_noload(void)
{
	void *n = runpath_open("libref.so", RTLD_NOW | RTLD_NOLOAD);
	void *a = runpath_open("libref.so", RTLD_NOW);
	void *b = runpath_open("libref.so", RTLD_NOW | RTLD_NOLOAD);
	see("before=%d loaded=%d after=%d same=%d", n != NULL, a != NULL, b != NULL, a == b);
	CHECK(!n, "RTLD_NOLOAD loaded a library");
	CHECK(a && b == a, "RTLD_NOLOAD did not find the loaded library");
	dlclose(b);
	dlclose(a);
	return 0;
}

static int t_refcount(void)
{
	const char *p = path_of("sub/libref.so");
	void *a = dlopen(p, RTLD_NOW), *b = dlopen(p, RTLD_NOW);
	int r1 = dlclose(a), l1 = loaded(p);
	int r2 = dlclose(b), l2 = loaded(p);
	see("close=%d,%d loaded=%d,%d", r1, r2, l1, l2);
	CHECK(a && a == b, "two opens gave two objects");
	CHECK(r1 == 0 && r2 == 0, "dlclose returned %d, %d", r1, r2);
	CHECK(l1 && !l2, "unloaded at the wrong count: %d %d", l1, l2);
	return 0;
}

static int t_nodelete(void)
{
	const char *p = path_of("libnodel.so");
	void *h = dlopen(p, RTLD_NOW | RTLD_NODELETE);
	int r = dlclose(h), l = loaded(p);
	see("close=%d loaded=%d", r, l);
	CHECK(h && r == 0 && l, "RTLD_NODELETE: %p %d %d", h, r, l);
	return 0;
}

static int t_global(void)
{
	void *g = dlopen(path_of("libglob.so"), RTLD_NOW | RTLD_GLOBAL);
	void *l = dlopen(path_of("libloc.so"), RTLD_NOW | RTLD_LOCAL);
	int gs = dlsym(RTLD_DEFAULT, "glob_value") != NULL;
	int ls = dlsym(RTLD_DEFAULT, "loc_value") != NULL;
	dlerror();
	void *p = dlopen(path_of("libloc.so"), RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
	int ps = dlsym(RTLD_DEFAULT, "loc_value") != NULL;
	see("global=%d local=%d promoted=%d", gs, ls, ps);
	CHECK(g && l && p, "opens failed");
	CHECK(gs && !ls && ps, "RTLD_GLOBAL/LOCAL/NOLOAD|GLOBAL: %d %d %d", gs, ls, ps);
	dlclose(p);
	dlclose(l);
	dlclose(g);
	return 0;
}

static int t_bad_mode(void)
{
	errno = 0;
	void *h = dlopen(path_of("sub/libplug.so"), 0);
	int err = errno;
	const char *e = error_text();
	see("handle=%d errno=%d error=[%s]", h != NULL, err, str(e));
	CHECK(!h && e, "dlopen without RTLD_LAZY or RTLD_NOW succeeded");
	return 0;
}

/* errno after dlclose and dlerror: whatever glibc leaves there, the doors
 * leave too (run.sh compares).  After a dlopen that succeeds, POSIX leaves
 * errno unspecified, and glibc leaves what the last failed open of its
 * search left (glibc-hwcaps subfolders included): not compared. */
static int t_errno(void)
{
	errno = EDOM;
	void *h = dlopen(path_of("sub/libplug.so"), RTLD_NOW);
	int e1 = errno;
	errno = EDOM;
	void *r = runpath_open("libplug.so", RTLD_NOW);
	int e2 = errno;
	errno = EDOM;
	int c = dlclose(r);
	int e3 = errno;
	errno = EDOM;
	dlclose(h);
	int e4 = errno;
	errno = EDOM;
	dlerror();
	int e5 = errno;
	(void)e1;
	(void)e2;
	see("dlclose=%d last-dlclose=%d dlerror=%d", e3, e4, e5);
	CHECK(h && r && c == 0, "opens failed");
	CHECK(e5 == EDOM, "dlerror changed errno to %d", e5);
	return 0;
}

/* ---- threads ----------------------------------------------------------------- */

/* path_of's buffers are shared, so the threads get their path once,
 * before they start: a buffer rewritten by another thread mid-open made
 * glibc itself fail (a folder's name) about once in 500 runs. */
static char thr_path[4200];

static void *churn(void *arg)
{
	long fails = 0, id = (long)arg;

	for (int i = 0; i < 200; i++) {
		void *h = id & 1 ? runpath_open("libthr.so", RTLD_NOW) : dlopen(thr_path, RTLD_NOW);
		if (!h || value_of(h) != 77)
			fails++;
		if (h && dlclose(h) != 0)
			fails++;
	}
	return (void *)fails;
}

static int t_threads(void)
{
	pthread_t t[4];
	long fails = 0;

	snprintf(thr_path, sizeof(thr_path), "%s", path_of("sub/libthr.so"));
	for (long i = 0; i < 4; i++)
		CHECK(pthread_create(&t[i], NULL, churn, (void *)i) == 0, "pthread_create");
	for (int i = 0; i < 4; i++) {
		void *r;
		pthread_join(t[i], &r);
		fails += (long)r;
	}
	int l = loaded(path_of("sub/libthr.so"));
	see("fails=%ld loaded=%d", fails, l);
	CHECK(fails == 0, "%ld failed opens or closes", fails);
	CHECK(!l, "still loaded after every thread closed it");
	return 0;
}

/* ---- signals --------------------------------------------------------------- */

static sigjmp_buf jump;
static volatile sig_atomic_t hits, nested;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	hits += sig == SIGSEGV && si->si_code == SEGV_MAPERR;
	siglongjmp(jump, 1);
}

static void other_handler(int sig) { (void)sig; }

static int t_sigsegv(void)
{
	struct sigaction act, old, now;

	memset(&act, 0, sizeof(act));
	act.sa_sigaction = on_segv;
	act.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&act.sa_mask);
	sigaddset(&act.sa_mask, SIGUSR1);
	CHECK(sigaction(SIGSEGV, &act, &old) == 0, "sigaction");
	CHECK(sigaction(SIGSEGV, NULL, &now) == 0, "sigaction read");
	int same = now.sa_sigaction == on_segv
	           && (now.sa_flags & (SA_SIGINFO | SA_NODEFER)) == (SA_SIGINFO | SA_NODEFER)
	           && sigismember(&now.sa_mask, SIGUSR1);
	volatile int *volatile nowhere = (int *)16;
	if (sigsetjmp(jump, 1) == 0)
		*nowhere = 1;
	sighandler_t prev = signal(SIGSEGV, SIG_DFL);
	int ours = (uintptr_t)prev == (uintptr_t)on_segv;
	see("same=%d hits=%d prev-is-ours=%d flags=%#x restorer=%d", same, (int)hits, ours,
	    (unsigned)now.sa_flags, now.sa_restorer != NULL);
	CHECK(same, "the program does not see its own SIGSEGV action");
	CHECK(hits == 1, "the program's handler ran %d times", (int)hits);
	CHECK(ours, "signal() returned another handler");
	sigaction(SIGSEGV, &old, NULL);
	return 0;
}

static int t_signal_errors(void)
{
	struct sigaction act;
	memset(&act, 0, sizeof(act));
	act.sa_handler = other_handler;
	errno = 0;
	int a = sigaction(0, &act, NULL), ae = errno;
	errno = 0;
	int k = sigaction(SIGKILL, &act, NULL), ke = errno;
	errno = 0;
	sighandler_t s = signal(65, other_handler);
	int se = errno;
	errno = 0;
	sighandler_t v = sysv_signal(SIGSEGV, other_handler);
	sighandler_t v2 = sysv_signal(SIGSEGV, SIG_DFL);
	int ve = errno;
	see("sigaction0=%d/%d sigkill=%d/%d signal65=%d/%d sysv=%d,%d/%d", a, ae, k, ke,
	    s == SIG_ERR, se, v == SIG_DFL, v2 == other_handler, ve);
	CHECK(a == -1 && ae == EINVAL, "sigaction(0): %d %d", a, ae);
	CHECK(k == -1 && ke == EINVAL, "sigaction(SIGKILL): %d %d", k, ke);
	CHECK(s == SIG_ERR && se == EINVAL, "signal(65): %d", se);
	CHECK(v2 == other_handler, "sysv_signal did not return the old handler");
	return 0;
}

static int t_sigset(void)
{
	sighandler_t a = sigset(SIGSEGV, SIG_HOLD);
	sighandler_t b = sigset(SIGSEGV, other_handler);
	sighandler_t c = sigset(SIGSEGV, SIG_DFL);
	sigset_t now;
	sigprocmask(SIG_SETMASK, NULL, &now);
	see("first=%d hold=%d handler=%d blocked=%d", a == SIG_DFL, b == SIG_HOLD,
	    c == other_handler, sigismember(&now, SIGSEGV));
	CHECK(b == SIG_HOLD, "sigset after SIG_HOLD did not say SIG_HOLD");
	CHECK(c == other_handler, "sigset did not return the old handler");
	CHECK(!sigismember(&now, SIGSEGV), "SIGSEGV stayed blocked");
	return 0;
}

/* sigaction is async-signal-safe: a handler may call it. */
static void change_in_handler(int sig)
{
	struct sigaction act, old;
	(void)sig;
	memset(&act, 0, sizeof(act));
	act.sa_handler = other_handler;
	if (sigaction(SIGSEGV, &act, &old) == 0 && sigaction(SIGSEGV, &old, NULL) == 0)
		nested = 1;
}

static int t_signal_safe(void)
{
	signal(SIGUSR1, change_in_handler);
	raise(SIGUSR1);
	signal(SIGUSR1, SIG_DFL);
	see("nested=%d", (int)nested);
	CHECK(nested, "sigaction inside a handler failed");
	return 0;
}

static void on_segv_plain(int sig)
{
	hits += sig == SIGSEGV;
	siglongjmp(jump, 1);
}

static int t_sigignore(void)
{
	struct sigaction now;
	volatile int *volatile nowhere = (int *)16;

	hits = 0;
	int r = sigignore(SIGSEGV);
	sigaction(SIGSEGV, NULL, &now);
	int ign = now.sa_handler == SIG_IGN;
	signal(SIGSEGV, on_segv_plain);
	if (sigsetjmp(jump, 1) == 0)
		*nowhere = 1;
	signal(SIGSEGV, SIG_DFL);
	see("rc=%d ignored=%d hits=%d", r, ign, (int)hits);
	CHECK(r == 0 && ign, "sigignore(SIGSEGV): %d %d", r, ign);
	CHECK(hits == 1, "the handler set after sigignore ran %d times", (int)hits);
	return 0;
}

static int t_siginterrupt(void)
{
	struct sigaction a, b, c;

	signal(SIGSEGV, other_handler);
	int r1 = siginterrupt(SIGSEGV, 1);
	sigaction(SIGSEGV, NULL, &a);
	signal(SIGSEGV, other_handler);
	sigaction(SIGSEGV, NULL, &b);
	int r2 = siginterrupt(SIGSEGV, 0);
	sigaction(SIGSEGV, NULL, &c);
	siginterrupt(SIGINT, 1);
	signal(SIGINT, other_handler);
	struct sigaction d;
	sigaction(SIGINT, NULL, &d);
	siginterrupt(SIGINT, 0);
	signal(SIGINT, SIG_DFL);
	signal(SIGSEGV, SIG_DFL);
	int ra = !!(a.sa_flags & SA_RESTART), rb = !!(b.sa_flags & SA_RESTART);
	int rc = !!(c.sa_flags & SA_RESTART), rd = !!(d.sa_flags & SA_RESTART);
	see("rc=%d,%d restart=%d,%d,%d sigint=%d", r1, r2, ra, rb, rc, rd);
	CHECK(r1 == 0 && r2 == 0, "siginterrupt failed");
	CHECK(!ra && !rb && rc && !rd, "SA_RESTART: %d %d %d %d", ra, rb, rc, rd);
	return 0;
}

static int t_sysv_flags(void)
{
	struct sigaction a;
	sysv_signal(SIGSEGV, other_handler);
	sigaction(SIGSEGV, NULL, &a);
	signal(SIGSEGV, SIG_DFL);
	see("flags=%#x", (unsigned)a.sa_flags);
	CHECK(a.sa_flags & SA_RESETHAND, "sysv_signal is not one-shot");
	return 0;
}

static int t_pkeys(void)
{
	errno = 0;
	int k = pkey_alloc(0, 0), ke = errno;
	errno = 0;
	int f = pkey_free(15), fe = errno;
	errno = 0;
	int g = have_pku ? pkey_get(15) : -2, ge = errno;
	if (k >= 0)
		pkey_free(k);
	see("alloc=%d/%d free15=%d/%d get15=%d/%d", k >= 0, ke, f, fe, g, ge);
	CHECK(f == -1, "pkey_free of a key never allocated succeeded");
	return 0;
}

/* ---- the table ------------------------------------------------------------------ */

static const struct {
	const char *name;
	int (*fn)(void);
	int alone;              /* run only when named */
} cases[] = {
	{ "dlsym-error", t_dlsym_error, 0 },       /* first: see its comment */
	{ "error-kept", t_error_kept, 0 },
	{ "dlvsym-error", t_dlvsym_error, 0 },
	{ "dlopen-error", t_dlopen_error, 0 },
	{ "error-cleared", t_error_cleared, 0 },
	{ "error-per-thread", t_error_per_thread, 0 },
	{ "runpath", t_runpath, 0 },
	{ "rpath", t_rpath, 0 },
	{ "rpath-chain", t_rpath_chain, 0 },
	{ "main-rpath", t_main_rpath, 0 },
	{ "order", t_order, 0 },
	{ "loaded-soname", t_loaded_soname, 0 },
	{ "loaded-name", t_loaded_name, 0 },
	{ "path-then-name", t_path_then_name, 0 },
	{ "origin", t_origin, 0 },
	{ "dlmopen", t_dlmopen, 0 },
	{ "null", t_null, 0 },
	{ "noload", t_noload, 0 },
	{ "refcount", t_refcount, 0 },
	{ "nodelete", t_nodelete, 0 },
	{ "global", t_global, 0 },
	{ "bad-mode", t_bad_mode, 0 },
	{ "errno", t_errno, 0 },
	{ "threads", t_threads, 0 },
	{ "sigsegv", t_sigsegv, 0 },
	{ "signal-errors", t_signal_errors, 0 },
	{ "sigset", t_sigset, 0 },
	{ "signal-safe", t_signal_safe, 0 },
	{ "pkeys", t_pkeys, 0 },
	{ "constructor", t_constructor, 0 },
	{ "no-object", t_no_object, 0 },
	{ "dlmopen-existing", t_dlmopen_existing, 0 },
	{ "long-origin", t_long_origin, 0 },
	{ "small-stack", t_small_stack, 0 },
	{ "sigignore", t_sigignore, 0 },
	{ "siginterrupt", t_siginterrupt, 0 },
	{ "sysv-flags", t_sysv_flags, 0 },
	{ "nodeflib", t_nodeflib, 1 },
};

int main(int argc, char **argv)
{
	int failed = 0, ran = 0;
	ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);

	if (n <= 0)
		return 2;
	dir[n] = 0;
	*strrchr(dir, '/') = 0;
	int key = pkey_alloc(0, 0);
	have_pku = key >= 0;
	if (have_pku)
		pkey_free(key);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Which doors are in this process: run.sh checks that each run had
	 * the door it was meant to have, so a door that failed to load
	 * cannot pass as one that changes nothing. */
	char line[4400];
	int pre = 0, aud = 0;
	FILE *maps = fopen("/proc/self/maps", "r");
	while (maps && fgets(line, sizeof(line), maps)) {
		pre |= strstr(line, "/libxom.so\n") != NULL;
		aud |= strstr(line, "/libxom-audit.so\n") != NULL;
	}
	if (maps)
		fclose(maps);
	printf("DOORS preload=%d audit=%d\n", pre, aud);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (argc > 1 ? strcmp(argv[1], cases[i].name) != 0 : cases[i].alone)
			continue;
		seen[0] = 0;
		test_name = cases[i].name;
		int rc = cases[i].fn();
		ran++;
		if (rc == 0)
			printf("PASS %s\n", cases[i].name);
		else
			failed++;       /* CHECK said why */
		printf("SEEN %s: %s\n", cases[i].name, seen);
	}
	/* The execute-only pages of this program's own files (this folder),
	 * which run.sh checks under real keys: the doors protected them. */
	FILE *sm = fopen("/proc/self/smaps", "r");
	long xo = 0, pages = 0;
	int ours = 0;
	while (sm && fgets(line, sizeof(line), sm)) {
		unsigned long lo, hi;
		char perms[8], path[4096] = "";
		int pk;
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %4095s", &lo, &hi, perms, path) >= 3) {
			ours = strncmp(path, dir, strlen(dir)) == 0 && !strcmp(perms, "--xp");
			pages = (long)((hi - lo) / 4096);
		} else if (sscanf(line, "ProtectionKey: %d", &pk) == 1 && ours && pk) {
			xo += pages;
		}
	}
	if (sm)
		fclose(sm);
	printf("XO %ld\n", xo);
	return ran == 0 ? 2 : failed != 0;
}
