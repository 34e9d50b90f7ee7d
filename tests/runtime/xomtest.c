/*
 * xomtest - the runtime's test program: one mode per run, from the tables
 * of xomtest-*.c; `xomtest` alone lists them.  See xomtest.h.
 *
 * The core modes here: reading code, probing pages, smaps, threads with
 * dlopen and dlclose, fork and exec, and what is left in memory.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <iconv.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../formats/xom_plan.h"
#include "xomtest.h"

const char *test_name = "xomtest";

/* One pipe per thread: a shared one lets a thread read another's byte. */
static __thread int probe_fd[2];

int is_xom(const void *p)
{
	char c;

	if (!probe_fd[1] && pipe(probe_fd) != 0)
		return -1;
	if (write(probe_fd[1], p, 1) == 1)
		return read(probe_fd[0], &c, 1) == 1 ? 0 : -1;
	return errno == EFAULT ? 1 : -1;
}

struct count { const char *name; int xom, total, found; };

static int count_pages(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct count *c = arg;
	const char *n = info->dlpi_name ? info->dlpi_name : "";

	(void)size;
	if (c->found || (*c->name ? !strstr(n, c->name) : *n != 0))
		return 0;
	c->found = 1;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t a = (info->dlpi_addr + ph->p_vaddr) & ~4095ul;
		uintptr_t e = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		for (; a < e; a += 4096) {
			c->total++;
			c->xom += is_xom((const void *)a) == 1;
		}
	}
	return 0;
}

int object_xom_pages(const char *name, int *xom, int *total)
{
	struct count c = { name, 0, 0, 0 };

	dl_iterate_phdr(count_pages, &c);
	*xom = c.xom;
	*total = c.total;
	return c.found ? 0 : -1;
}

__attribute__((noinline)) int xom_test_target(int x)
{
	return x * 7 + 1;
}

/* The address goes through a volatile pointer: a direct RIP-relative
 * load of the function would rightly make the scanner keep its page
 * readable, and nothing would be tested. */
int (*volatile self_fn)(int) = xom_test_target;

static int read_self(void)
{
	return *(volatile const char *)(const void *)self_fn;
}

static int read_libc(void)
{
	void *(*volatile f)(void *, const void *, size_t) = memcpy;
	return *(volatile const char *)(const void *)f;
}

static int m_haspku(int argc, char **argv)
{
	(void)argc, (void)argv;
	int k = (int)syscall(SYS_pkey_alloc, 0, 0);
	if (k < 0)
		return 1;
	syscall(SYS_pkey_free, k);
	return 0;
}

static int m_self(int argc, char **argv)
{
	(void)argc, (void)argv;
	return read_self() == 12345;
}

static int m_libc(int argc, char **argv)
{
	(void)argc, (void)argv;
	return read_libc() == 12345;
}

static int m_call(int argc, char **argv)
{
	char a[4] = "abc", b[4];

	(void)argc, (void)argv;
	memcpy(b, a, 4);
	return xom_test_target(1) == 8 && !strcmp(b, "abc") ? 0 : 1;
}

/* Reads its own code twice (the page stays readable after the first
 * report in audit mode) and libc's. */
static int m_audit(int argc, char **argv)
{
	(void)argc, (void)argv;
	int a = read_self(), b = read_self(), c = read_libc();
	printf("survived %d\n", (a == b) + c);
	return 0;
}

/* probe self|libc: exit 0 when that code is execute-only. */
static int m_probe(int argc, char **argv)
{
	const void *p = argc > 1 && !strcmp(argv[1], "libc")
	                ? (const void *)memcpy : (const void *)xom_test_target;
	return is_xom(p) == 1 ? 0 : 1;
}

/* The smaps lines of the objects whose path contains name: some mapping
 * --xp with a non-zero ProtectionKey. */
static int smaps_xom(const char *name)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int in = 0, found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char perms[8] = "";
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3) {
			in = !strcmp(perms, "--xp") && strstr(line, name);
			continue;
		}
		int key;
		if (in && sscanf(line, "ProtectionKey: %d", &key) == 1 && key > 0)
			found = 1;
	}
	fclose(f);
	return found;
}

static int load_for_maps(const char *what)
{
	if (!strcmp(what, "iconv")) {
		/* libc loads a gconv module by itself. */
		iconv_t cd = iconv_open("IBM037", "UTF-8");
		char in[] = "hi", out[8], *ip = in, *op = out;
		size_t il = 2, ol = sizeof(out);
		CHECK(cd != (iconv_t)-1 && iconv(cd, &ip, &il, &op, &ol) == 0
		      && (unsigned char)out[0] == 0x88, "iconv to IBM037 failed");
		return 0;
	}
	CHECK(dlopen(what, RTLD_NOW), "dlopen %s: %s", what, dlerror());
	return 0;
}

/* maps LIB|iconv|- NAME...: each object NAME is mapped --xp with a key in
 * smaps, and its pages really cannot be read (a key that allowed reads
 * would pass smaps and fail here). */
static int m_maps(int argc, char **argv)
{
	int bad = 0;

	if (argc > 1 && strcmp(argv[1], "-") && load_for_maps(argv[1]) != 0)
		return 1;
	for (int i = 2; i < argc; i++) {
		const char *name = strcmp(argv[i], "main") ? argv[i] : "";
		const char *shown = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1
		                                          : argv[i];
		int xom = 0, total = 0;
		char label[128];
		snprintf(label, sizeof(label), "maps-%s", shown);
		test_name = label;
		int smaps = *name ? smaps_xom(name) : 1;
		if (object_xom_pages(name, &xom, &total) != 0 || smaps != 1 || !xom) {
			printf("FAIL %s: smaps %d, %d of %d code pages unreadable\n",
			       label, smaps, xom, total);
			bad = 1;
		} else {
			printf("PASS %s (%d of %d code pages unreadable)\n", label, xom, total);
		}
	}
	return bad;
}

static const char *lib_path;
static volatile int stop, unprotected, failures;
static volatile long rounds;

static void *dl_loop(void *arg)
{
	(void)arg;
	while (!stop) {
		void *h = dlopen(lib_path, RTLD_NOW);
		if (!h) {
			failures++;
			continue;
		}
		void *f = dlsym(h, "xom_target_add");
		if (!f || is_xom(f) != 1)
			unprotected++;
		else if (((int (*)(int, int))f)(2, 1) != 7)
			failures++;
		dlclose(h);
		__atomic_add_fetch(&rounds, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* threads LIB N SECONDS EXPECT_XOM: N threads dlopen, call and dlclose LIB. */
static int m_threads(int argc, char **argv)
{
	pthread_t t[64];

	test_name = "dlopen-threads";
	CHECK(argc > 4, "usage: threads LIB N SECONDS EXPECT_XOM");
	lib_path = argv[1];
	int n = atoi(argv[2]) > 64 ? 64 : atoi(argv[2]);
	double secs = atof(argv[3]);
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, dl_loop, NULL);
	struct timespec ts = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };
	nanosleep(&ts, NULL);
	stop = 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	CHECK(!failures && rounds && !(atoi(argv[4]) && unprotected),
	      "%ld rounds, %d failures, %d unprotected", rounds, failures, unprotected);
	PASS("(%d threads, %.1f s, %ld rounds)", n, secs, rounds);
}

static int count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0, c;

	if (!f)
		return -1;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* cycle LIB N: xom's own mappings must not grow with dlopen/dlclose. */
static int m_cycle(int argc, char **argv)
{
	int before = -1;

	test_name = "dlopen-cycle";
	CHECK(argc > 2, "usage: cycle LIB N");
	for (int i = 0; i < atoi(argv[2]); i++) {
		void *h = dlopen(argv[1], RTLD_NOW);
		CHECK(h, "dlopen: %s", dlerror());
		dlclose(h);
		if (i == 0)
			before = count_maps();
	}
	int after = count_maps();
	CHECK(after - before <= 2, "%d mappings after one cycle, %d after %s",
	      before, after, argv[2]);
	PASS("");
}

static void *(*raw_open)(const char *, int);
static int (*raw_close)(void *);
static void *(*raw_mopen)(Lmid_t, const char *, int);

/* libc's own dlopen, dlclose and dlmopen, which the preload door does not
 * wrap. */
static int raw_doors(void)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	CHECK(libc, "libc: %s", dlerror());
	raw_open = (void *(*)(const char *, int))dlsym(libc, "dlopen");
	raw_close = (int (*)(void *))dlsym(libc, "dlclose");
	raw_mopen = (void *(*)(Lmid_t, const char *, int))dlsym(libc, "dlmopen");
	CHECK(raw_open && raw_close && raw_mopen && (void *)raw_open != (void *)dlopen,
	      "libc's own dlopen and dlclose (the door's: %p)", (void *)dlopen);
	return 0;
}

/*
 * reload-behind LIB: LIB is unloaded and loaded again behind the preload
 * door's back (libc's own dlclose and dlopen, which the door does not
 * wrap), the way another thread's pair of calls can fall between two of
 * the door's syncs.  It lands at its old address, unprotected; the next
 * dlopen through the door must notice and protect it again.
 *
 * reload-behind LIB OTHER: the same, but the door's dlclose of OTHER falls
 * between the two, so that the door sees the unload alone (no object
 * added), and then the load alone: the door must have forgotten LIB at the
 * unload, or the load looks like nothing new.
 *
 * reload-middle LIB OTHER: LIB is unloaded behind the door while OTHER,
 * loaded after it, stays: the unload is behind the last object the door
 * saw, which its sync after a dlclose finds still loaded, so the door
 * keeps LIB in its table.  LIB comes back at its old address, as a new
 * link map after OTHER: the door must take it for new, not for the
 * object its table holds at that place.
 *
 * reload-raw LIB: the first case under backend=none, without checking the
 * protection: the caller counts verbose=1's lines for LIB, which must be
 * one, since the door must find the object it knows at that address (by
 * its span, when the reload is to be verified) and not take it for new.
 */
static int reload(int argc, char **argv, int prot, int middle)
{
	CHECK(argc > 1, "usage: %s LIB", test_name);
	if (raw_doors())
		return 1;
	void *h = dlopen(argv[1], RTLD_NOW);
	CHECK(h, "dlopen: %s", dlerror());
	void *f = dlsym(h, "xom_target_add");
	CHECK(f && (!prot || is_xom(f) == 1), "%s not execute-only after the first dlopen", argv[1]);
	void *other = NULL;
	if (prot && argc > 2) {
		if (!middle)
			test_name = "reload-behind-split";
		other = dlopen(argv[2], RTLD_NOW);
		CHECK(other, "dlopen %s: %s", argv[2], dlerror());
	}
	raw_close(h);
	/* middle: a second handle of OTHER, closed through the door, which
	 * syncs after the unload of LIB and unloads nothing itself. */
	if (other && middle) {
		void *again = dlopen(argv[2], RTLD_NOW);
		CHECK(again == other, "dlopen %s again: %s", argv[2], dlerror());
		CHECK(dlclose(again) == 0, "dlclose %s: %s", argv[2], dlerror());
	} else if (other) {
		CHECK(dlclose(other) == 0, "dlclose %s: %s", argv[2], dlerror());
	}
	h = raw_open(argv[1], RTLD_NOW);
	CHECK(h, "libc's dlopen: %s", dlerror());
	void *g = dlsym(h, "xom_target_add");
	if (g != f) {
		printf("SKIP %s: the library came back at another address, so this run cannot test the case\n",
		       test_name);
		return 0;
	}
	CHECK(!prot || is_xom(g) != 1, "already protected before the door saw it (the case is not made)");
	void *h2 = dlopen(argv[1], RTLD_NOW);
	CHECK(h2 == h, "dlopen: %s", dlerror());
	CHECK(!prot || is_xom(g) == 1, "%s stayed readable after it was loaded again at its old address",
	      argv[1]);
	CHECK(((int (*)(int, int))g)(2, 1) == 7, "the function does not work");
	PASS("");
}

static int m_reload_behind(int argc, char **argv)
{
	test_name = "reload-behind";
	return reload(argc, argv, 1, 0);
}

static int m_reload_middle(int argc, char **argv)
{
	test_name = "reload-middle";
	CHECK(argc > 2, "usage: %s LIB OTHER", test_name);
	return reload(argc, argv, 1, 1);
}

/*
 * namespaces L0 ... L8: libraries come and go in the program's namespace
 * and in others (dlmopen), where glibc's dlpi_subs is no count of unloads,
 * and the freed link map of one is used again by the next.  Every library
 * that the door can see must be protected: the caller counts verbose=1's
 * line for each, which must be one (L7, loaded behind the door into
 * another namespace, is not one of them).
 *   1. through the door: L0 and L1 loaded, L0 closed, L2 opened in a new
 *      namespace (often at L0's old place, in L0's old link map), L1
 *      closed, L3 opened;
 *   2. L4 opened in a new namespace and L5, L6 in the program's, through
 *      the door; L6 and L5 closed and L7 opened in L4's namespace behind
 *      the door (libc's own calls); L8 opened through the door.
 */
static int m_namespaces(int argc, char **argv)
{
	test_name = "namespaces";
	CHECK(argc > 9, "usage: %s L0 ... L8", test_name);
	if (raw_doors())
		return 1;
	void *l0 = dlopen(argv[1], RTLD_NOW), *l1 = dlopen(argv[2], RTLD_NOW);
	CHECK(l0 && l1, "dlopen: %s", dlerror());
	CHECK(dlclose(l0) == 0, "dlclose: %s", dlerror());
	CHECK(dlmopen(LM_ID_NEWLM, argv[3], RTLD_NOW), "dlmopen: %s", dlerror());
	CHECK(dlclose(l1) == 0, "dlclose: %s", dlerror());
	CHECK(dlopen(argv[4], RTLD_NOW), "dlopen: %s", dlerror());
	void *l4 = dlmopen(LM_ID_NEWLM, argv[5], RTLD_NOW);
	CHECK(l4, "dlmopen: %s", dlerror());
	Lmid_t ns;
	CHECK(dlinfo(l4, RTLD_DI_LMID, &ns) == 0, "dlinfo: %s", dlerror());
	void *l5 = dlopen(argv[6], RTLD_NOW), *l6 = dlopen(argv[7], RTLD_NOW);
	CHECK(l5 && l6, "dlopen: %s", dlerror());
	CHECK(raw_close(l6) == 0 && raw_close(l5) == 0, "libc's dlclose");
	CHECK(raw_mopen(ns, argv[8], RTLD_NOW), "libc's dlmopen");
	CHECK(dlopen(argv[9], RTLD_NOW), "dlopen: %s", dlerror());
	PASS("");
}

/*
 * namespaces-data K0 ... K4 KEEP E A D1 D2 N1 N2 L: libraries without code
 * (D1, D2) lie after the last library with code that the door saw (A);
 * then, behind the door, K0 ... K4 and E are closed and E is opened again
 * in another namespace, where glibc often gives it E's old link map and
 * place, with one more library (N2) in that namespace.  dlpi_subs is back
 * where it was, and the link maps after A are as many as were added: only
 * an anchor that is the list's last link map (D2) tells that E is not the
 * program's.  After the door's dlclose of A, its dlopen of L must protect
 * L.  The caller counts L's verbose=1 line, which must be one; SKIP when E
 * did not come back in its old link map at its old place.
 */
static int m_namespaces_data(int argc, char **argv)
{
	test_name = "namespaces-data";
	CHECK(argc > 13, "usage: %s K0 ... K4 KEEP E A D1 D2 N1 N2 L", test_name);
	if (raw_doors())
		return 1;
	void *k[5];
	for (int i = 0; i < 5; i++)
		CHECK((k[i] = dlopen(argv[1 + i], RTLD_NOW)), "dlopen: %s", dlerror());
	CHECK(dlopen(argv[6], RTLD_NOW), "dlopen: %s", dlerror());
	void *e = dlopen(argv[7], RTLD_NOW), *a = dlopen(argv[8], RTLD_NOW);
	CHECK(e && a, "dlopen: %s", dlerror());
	CHECK(dlopen(argv[9], RTLD_NOW) && dlopen(argv[10], RTLD_NOW), "dlopen: %s", dlerror());
	void *n1 = dlmopen(LM_ID_NEWLM, argv[11], RTLD_NOW);
	CHECK(n1, "dlmopen: %s", dlerror());
	Lmid_t ns;
	struct link_map *me, *mx;
	CHECK(dlinfo(n1, RTLD_DI_LMID, &ns) == 0 && dlinfo(e, RTLD_DI_LINKMAP, &me) == 0,
	      "dlinfo: %s", dlerror());
	uintptr_t e_addr = me->l_addr;
	for (int i = 0; i < 5; i++)
		CHECK(raw_close(k[i]) == 0, "libc's dlclose");
	CHECK(raw_close(e) == 0, "libc's dlclose");
	void *x = raw_mopen(ns, argv[7], RTLD_NOW);
	CHECK(x && raw_mopen(ns, argv[12], RTLD_NOW), "libc's dlmopen");
	CHECK(dlinfo(x, RTLD_DI_LINKMAP, &mx) == 0, "dlinfo: %s", dlerror());
	if (mx != me || mx->l_addr != e_addr) {
		printf("SKIP %s: the library came back in another link map or at another place, so this run cannot test the case\n",
		       test_name);
		return 0;
	}
	CHECK(dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD), "dlopen: %s", dlerror());
	CHECK(dlclose(a) == 0, "dlclose: %s", dlerror());
	CHECK(dlopen(argv[13], RTLD_NOW), "dlopen: %s", dlerror());
	PASS("");
}

static int m_reload_raw(int argc, char **argv)
{
	test_name = "reload-raw";
	return reload(argc, argv, 0, 0);
}

/* fork|vfork: the child of a plain fork keeps the parent's protected
 * mappings; after exec (from fork or vfork) a new copy of xom protects
 * the new image, and the parent stays as it was. */
static int m_fork(int argc, char **argv)
{
	int use_vfork = argv[0][0] == 'v', st;
	volatile int copy_ok = 1;
	pid_t pid;

	(void)argc;
	test_name = use_vfork ? "vfork-exec" : "fork-exec";
	if (!use_vfork) {
		pid = fork();
		if (pid == 0)
			_exit(is_xom((const void *)self_fn) == 1 ? 0 : 1);
		waitpid(pid, &st, 0);
		copy_ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	pid = use_vfork ? vfork() : fork();
	if (pid == 0) {
		execl("/proc/self/exe", "xomtest", "probe", "self", (char *)NULL);
		_exit(99);
	}
	waitpid(pid, &st, 0);
	int child_ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
	int self_ok = is_xom((const void *)self_fn) == 1;
	CHECK(child_ok && self_ok && copy_ok,
	      "parent xom %d, forked copy xom %d, exec'd child status %#x",
	      self_ok, copy_ok, st);
	PASS("");
}

/* The first address in [lo, hi) where pat (16 bytes) is, but at skip, or
 * 0.  Read through /proc/self/mem, which gives EIO instead of SIGBUS for a
 * file mapping that runs past the end of its file. */
static uintptr_t find(int mem, uintptr_t lo, uintptr_t hi, const char *pat,
                      uintptr_t skip)
{
	static char buf[1 << 16];

	for (uintptr_t a = lo; a < hi; a += sizeof(buf) - 16) {
		size_t want = hi - a < sizeof(buf) ? hi - a : sizeof(buf);
		ssize_t n = pread(mem, buf, want, (off_t)a);
		if (n < 16)
			return 0;
		for (ssize_t i = 0; i + 16 <= n; i++)
			if (buf[i] == pat[0] && !memcmp(buf + i, pat, 16)
			    && a + (uintptr_t)i != skip)
				return a + (uintptr_t)i;
		if ((size_t)n < want)
			return 0;
	}
	return 0;
}

/*
 * memscan [LIB]: no plan and no plan store is readable in memory, after
 * start-up and (with LIB) after a dlopen of LIB.  A plan says which code
 * pages stay readable, which an attacker with a read bug could use as a
 * crash-free guide.  The patterns are the heads of a plan and of a store
 * index (magic, format and scanner version), built here at run time so
 * that this program's own constants do not match.  Memory is searched
 * through /proc/self/mem, which gives EIO instead of SIGBUS past the end
 * of a file and which protection keys do not stop; a match passes only
 * where the program's own reads fault (the store's index kept under xom's
 * key): "hidden N" says how many did.  With --index-readable (backend=none,
 * where nothing is protected), a mapping of a store's index file passes
 * too, and "kept N" counts them: nothing else may hold a plan.
 */
static int ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), e = strlen(end);

	return n >= e && !strcmp(s + n - e, end);
}

static void head_pattern(char pat[16], const char *magic, uint32_t format)
{
	const uint32_t version = XOM_PLAN_SCAN_VERSION;

	memcpy(pat, magic, 8);
	memcpy(pat + 8, &format, 4);
	memcpy(pat + 12, &version, 4);
}

static int m_memscan(int argc, char **argv)
{
	char plan[16], store[16], line[512];

	test_name = "plans-not-in-memory";
	head_pattern(plan, XOM_PLAN_MAGIC, XOM_PLAN_FORMAT);
	head_pattern(store, XOM_STORE_MAGIC, XOM_STORE_FORMAT);
	int index_ok = argc > 1 && !strcmp(argv[1], "--index-readable"), kept = 0;
	if (index_ok)
		argc--, argv++;
	if (argc > 1)
		CHECK(dlopen(argv[1], RTLD_NOW), "dlopen %s: %s", argv[1], dlerror());
	FILE *f = fopen("/proc/self/maps", "r");
	int mem = open("/proc/self/mem", O_RDONLY);
	CHECK(f && mem >= 0, "cannot read /proc/self/maps and mem");
	int regions = 0, hidden = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || perms[0] != 'r'
		    || strstr(line, "[vvar]") || strstr(line, "[vsyscall]"))
			continue;
		regions++;
		for (int k = 0; k < 2; k++) {
			const char *pat = k ? store : plan;
			uintptr_t hit = lo;
			while ((hit = find(mem, hit, hi, pat, (uintptr_t)pat))) {
				if (is_xom((const void *)hit) == 1) {
					hidden++;
					break;  /* the rest of the mapping is as hidden */
				}
				line[strcspn(line, "\n")] = 0;
				if (index_ok && (ends_with(line, "/plans")
				                 || ends_with(line, "/plans (deleted)"))) {
					kept++;
					break;
				}
				fclose(f);
				CHECK(0, "a readable %s at %#lx, in %s",
				      k ? "store index" : "plan", (unsigned long)hit, line);
			}
		}
	}
	fclose(f);
	close(mem);
	PASS("(%d readable regions searched; hidden %d, kept %d)", regions, hidden, kept);
}

/* Reads code that belongs to the dynamic linker's other namespaces: the
 * walk a data-only attacker can make from the main program through
 * DT_DEBUG's r_debug to every namespace's link maps (r_debug_extended),
 * ending in a read of the first code page of another namespace's libc. */
static int m_nswalk(int argc, char **argv)
{
	extern ElfW(Dyn) _DYNAMIC[];
	struct r_debug_extended *r = NULL;

	(void)argc, (void)argv;
	test_name = "namespace-walk";
	for (const ElfW(Dyn) *d = _DYNAMIC; d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_DEBUG)
			r = (void *)d->d_un.d_ptr;
	CHECK(r, "no DT_DEBUG");
	CHECK(r->base.r_version >= 2, "r_debug version %d: no other namespaces",
	      r->base.r_version);
	for (r = r->r_next; r; r = r->r_next)
		for (struct link_map *m = r->base.r_map; m; m = m->l_next) {
			if (!strstr(m->l_name, "libc.so"))
				continue;
			const ElfW(Ehdr) *eh = (const void *)m->l_addr;
			const ElfW(Phdr) *ph = (const void *)(m->l_addr + eh->e_phoff);
			for (int i = 0; i < eh->e_phnum; i++)
				if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
					const volatile char *code =
						(const void *)(m->l_addr + ph[i].p_vaddr);
					printf("read code of %s in another namespace: %02x\n",
					       m->l_name, (unsigned char)code[0]);
					return 0;
				}
		}
	CHECK(0, "no libc in another namespace");
}

/* contexts: own and libc's code is unreadable in the main thread, in a
 * thread started now, in a signal handler and in one on an alternate
 * stack; under the kernel's execute-only key (loader/kernkey.c) each
 * thread's rights come from the kernel's initial PKRU, not from xom. */
static volatile int in_handler[2];

static void ctx_handler(int sig)
{
	(void)sig;
	in_handler[0] = is_xom((const void *)self_fn);
	in_handler[1] = is_xom((const void *)memcpy);
}

static void *ctx_thread(void *arg)
{
	int *r = arg;

	r[0] = is_xom((const void *)self_fn);
	r[1] = is_xom((const void *)memcpy);
	return NULL;
}

static int m_contexts(int argc, char **argv)
{
	int main_r[2] = { is_xom((const void *)self_fn), is_xom((const void *)memcpy) };
	int thr[2] = { 0, 0 }, sig[2], alt[2];
	pthread_t t;
	struct sigaction sa;
	static char altstack[1 << 16];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };

	(void)argc, (void)argv;
	CHECK(pthread_create(&t, NULL, ctx_thread, thr) == 0 && pthread_join(t, NULL) == 0,
	      "pthread");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = ctx_handler;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	sig[0] = in_handler[0], sig[1] = in_handler[1];
	CHECK(sigaltstack(&ss, NULL) == 0, "sigaltstack");
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	alt[0] = in_handler[0], alt[1] = in_handler[1];
	CHECK(main_r[0] == 1 && main_r[1] == 1 && thr[0] == 1 && thr[1] == 1
	      && sig[0] == 1 && sig[1] == 1 && alt[0] == 1 && alt[1] == 1,
	      "execute-only (own, libc): main %d %d, new thread %d %d, handler %d %d, on altstack %d %d",
	      main_r[0], main_r[1], thr[0], thr[1], sig[0], sig[1], alt[0], alt[1]);
	PASS("");
}

/* wait-dlopen LIB...: says "ready" once started, waits for a line on
 * stdin, then loads each LIB: what changed in between (a store rebuilt)
 * meets a process whose start-up is over. */
static int m_wait_dlopen(int argc, char **argv)
{
	char c;

	test_name = "wait-dlopen";
	printf("ready\n");
	fflush(stdout);
	CHECK(read(0, &c, 1) == 1, "no line on stdin");
	for (int i = 1; i < argc; i++)
		CHECK(dlopen(argv[i], RTLD_NOW), "dlopen %s: %s", argv[i], dlerror());
	PASS("");
}

const struct mode core_modes[] = {
	{ "haspku", "", "exit 0 when pkey_alloc works", m_haspku },
	{ "self", "", "read own code (dies under enforcement)", m_self },
	{ "libc", "", "read libc's code (dies under enforcement)", m_libc },
	{ "call", "", "call own and libc's code (exit 0)", m_call },
	{ "audit", "", "read code and print \"survived\"", m_audit },
	{ "probe", "self|libc", "exit 0 when that code is execute-only", m_probe },
	{ "maps", "LIB|iconv|- NAME...", "smaps and reads agree: NAME is execute-only", m_maps },
	{ "threads", "LIB N SECONDS EXPECT_XOM", "dlopen/dlclose in N threads", m_threads },
	{ "cycle", "LIB N", "dlopen/dlclose without growing xom's mappings", m_cycle },
	{ "reload-behind", "LIB [OTHER]", "reloaded behind the door: protected again", m_reload_behind },
	{ "reload-middle", "LIB OTHER", "reloaded behind the door, behind OTHER: protected again", m_reload_middle },
	{ "namespaces", "L0 ... L8", "libraries come and go in several namespaces: each protected", m_namespaces },
	{ "namespaces-data", "K0 ... K4 KEEP E A D1 D2 N1 N2 L", "a namespace's loads behind the door, after libraries without code: L protected", m_namespaces_data },
	{ "reload-raw", "LIB", "reloaded behind the door: known, not new (backend=none)", m_reload_raw },
	{ "wait-dlopen", "LIB...", "say ready, wait for a line on stdin, load each LIB", m_wait_dlopen },
	{ "fork", "", "fork, fork+exec keep the protection", m_fork },
	{ "contexts", "", "code unreadable in a new thread and in signal handlers", m_contexts },
	{ "vfork", "", "vfork+exec keeps the protection", m_fork },
	{ "memscan", "[--index-readable] [LIB]", "no plan or store index readable (after a dlopen of LIB)", m_memscan },
	{ "nswalk", "", "read another namespace's libc code", m_nswalk },
	{ NULL, NULL, NULL, NULL },
};

static const struct mode *const tables[] = { core_modes, fault_modes, harden_modes };

int main(int argc, char **argv)
{
	if (argc > 1)
		for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
			for (const struct mode *m = tables[t]; m->name; m++)
				if (!strcmp(m->name, argv[1])) {
					test_name = m->name;
					return m->fn(argc - 1, argv + 1);
				}
	fprintf(stderr, "usage: xomtest MODE [ARGS...]; modes:\n");
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (const struct mode *m = tables[t]; m->name; m++)
			fprintf(stderr, "  %-10s %-26s %s\n", m->name, m->args, m->about);
	return 2;
}
