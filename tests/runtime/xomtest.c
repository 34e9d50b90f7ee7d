/*
 * xomtest - the run-time checks, one mode per run, for the scripts in tests/runtime.
 * A page is "execute-only" here when the kernel cannot copy from it for us:
 * write(2) from a protected page fails with EFAULT because the kernel
 * honours PKRU, which lets a test probe pages without dying.
 */
#include <dlfcn.h>
#include <errno.h>
#include <iconv.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


#include "../../loader/plan/xom_plan.h"

/* One pipe per thread: a shared one lets a thread read another's byte. */
static __thread int probe_fd[2];

/* 1: the byte at p cannot be read as data (xom), 0: readable. */
static int is_xom(const void *p)
{
	char c;

	if (!probe_fd[1] && pipe(probe_fd) != 0)
		return -1;
	if (write(probe_fd[1], p, 1) == 1) {
		if (read(probe_fd[0], &c, 1) != 1)
			return -1;
		return 0;
	}
	return errno == EFAULT ? 1 : -1;
}

int xom_test_target(int x);
__attribute__((noinline)) int xom_test_target(int x)
{
	return x * 7 + 1;
}

/* The address goes through a volatile pointer: a direct RIP-relative
 * load of the function would rightly make the scanner keep its page
 * readable, and nothing would be tested. */
static int (*volatile self_fn)(int) = xom_test_target;

static int read_self(void)
{
	return *(volatile const char *)(const void *)self_fn;
}

static int read_libc(void)
{
	void *(*volatile f)(void *, const void *, size_t) = memcpy;
	return *(volatile const char *)(const void *)f;
}

/* Lines of /proc/self/smaps: a mapping of an object whose path contains
 * name, mapped --xp, with a non-zero ProtectionKey. */
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

static int has_pku(void)
{
	int k = (int)syscall(SYS_pkey_alloc, 0, 0);
	if (k < 0)
		return 0;
	syscall(SYS_pkey_free, k);
	return 1;
}

static sigjmp_buf jb;
static volatile void *fault_addr;

static void own_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	fault_addr = si->si_addr;
	siglongjmp(jb, 1);
}

static void old_handler(int sig)
{
	(void)sig;
	siglongjmp(jb, 2);
}

static volatile int *volatile bad_ptr;

static int own_faults(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = own_handler;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	if (sigsetjmp(jb, 1) == 0) {
		bad_ptr = (volatile int *)16;
		*bad_ptr = 1;
		puts("FAIL own-handler: no fault");
		return 1;
	}
	if (fault_addr != (void *)16) {
		printf("FAIL own-handler: si_addr %p\n", (void *)fault_addr);
		return 1;
	}
	struct sigaction cur;
	sigaction(SIGSEGV, NULL, &cur);
	if (cur.sa_sigaction != own_handler) {
		puts("FAIL own-handler: sigaction does not report the handler");
		return 1;
	}
	signal(SIGSEGV, old_handler);
	if (sigsetjmp(jb, 1) == 0) {
		bad_ptr = (volatile int *)32;
		*bad_ptr = 1;
		puts("FAIL own-handler: no fault after signal()");
		return 1;
	}
	puts("PASS own-handler");
	return 0;
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

static int threads(int n, double secs, int expect_xom)
{
	pthread_t t[64];
	if (n > 64)
		n = 64;
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, dl_loop, NULL);
	struct timespec ts = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };
	nanosleep(&ts, NULL);
	stop = 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	if (failures || (expect_xom && unprotected) || !rounds) {
		printf("FAIL dlopen-threads: %ld rounds, %d failures, %d unprotected\n",
		       rounds, failures, unprotected);
		return 1;
	}
	printf("PASS dlopen-threads (%d threads, %.1f s, %ld rounds)\n", n, secs,
	       rounds);
	return 0;
}

/* Sets the 32-bit field at off of a plan file and seals it again, to make a
 * well-formed entry with one wrong field. */
static int reseal(const char *path, long off, uint32_t v)
{
	static char buf[1 << 22];
	FILE *f = fopen(path, "r+b");
	if (!f)
		return 1;
	size_t n = fread(buf, 1, sizeof(buf), f);
	if (n < sizeof(struct xom_plan_head) || off < 0 || (size_t)off + 4 > n)
		return 1;
	memcpy(buf + off, &v, 4);
	xom_plan_seal((struct xom_plan_head *)buf);
	rewind(f);
	fwrite(buf, 1, n, f);
	return fclose(f) != 0;
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

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	if (!strcmp(m, "reseal") && argc > 4)
		return reseal(argv[2], atol(argv[3]), (uint32_t)atol(argv[4]));
	if (!strcmp(m, "haspku"))
		return has_pku() ? 0 : 1;
	if (!strcmp(m, "self"))
		return read_self() == 12345;
	if (!strcmp(m, "libc"))
		return read_libc() == 12345;
	if (!strcmp(m, "call")) {
		char a[4] = "abc", b[4];
		memcpy(b, a, 4);
		return xom_test_target(1) == 8 && !strcmp(b, "abc") ? 0 : 1;
	}
	if (!strcmp(m, "audit")) {
		/* Reads its own code twice: the page stays readable after the
		 * first report. */
		int a = read_self(), b = read_self(), c = read_libc();
		printf("survived %d\n", (a == b) + c);
		return 0;
	}
	if (!strcmp(m, "probe")) {       /* probe self|libc: exit 0 if xom */
		const void *p = argc > 2 && !strcmp(argv[2], "libc")
		                ? (const void *)memcpy : (const void *)xom_test_target;
		return is_xom(p) == 1 ? 0 : 1;
	}
	if (!strcmp(m, "maps")) {        /* maps NAME...: each has a pkey'd --xp */
		/* "iconv" makes libc load a gconv module by itself. */
		int conv = argc > 2 && !strcmp(argv[2], "iconv");
		void *h = argc > 2 && !conv ? dlopen(argv[2], RTLD_NOW) : NULL;
		int bad = 0;
		if (conv) {
			iconv_t cd = iconv_open("IBM037", "UTF-8");
			char in[] = "hi", out[8], *ip = in, *op = out;
			size_t il = 2, ol = sizeof(out);
			if (cd == (iconv_t)-1 || iconv(cd, &ip, &il, &op, &ol) != 0
			    || (unsigned char)out[0] != 0x88) {
				puts("FAIL maps-gconv: iconv to IBM037 failed");
				return 1;
			}
		} else if (argc > 2 && !h) {
			printf("FAIL maps: dlopen %s: %s\n", argv[2], dlerror());
			return 1;
		}
		for (int i = 3; i < argc; i++) {
			int r = smaps_xom(argv[i]);
			printf(r == 1 ? "PASS maps-%s\n" : "FAIL maps-%s: no --xp mapping "
			       "with a protection key\n", strrchr(argv[i], '/')
			       ? strrchr(argv[i], '/') + 1 : argv[i]);
			bad |= r != 1;
		}
		return bad;
	}
	if (!strcmp(m, "cycle") && argc > 3) {
		/* dlopen/dlclose the same library many times: xom's own
		 * mappings (plans) must not grow with the count. */
		int before = -1, n = atoi(argv[3]);
		for (int i = 0; i < n; i++) {
			void *lh = dlopen(argv[2], RTLD_NOW);
			if (!lh) {
				printf("FAIL dlopen-cycle: %s\n", dlerror());
				return 1;
			}
			dlclose(lh);
			if (i == 0)
				before = count_maps();
		}
		int after = count_maps();
		if (after - before <= 2)
			printf("PASS dlopen-cycle\n");
		else
			printf("FAIL dlopen-cycle: %d mappings after one cycle, %d after %d\n",
			       before, after, n);
		return after - before > 2;
	}
	if (!strcmp(m, "handler"))
		return own_faults();
	if (!strcmp(m, "threads") && argc > 5) {
		lib_path = argv[2];
		return threads(atoi(argv[3]), atof(argv[4]), atoi(argv[5]));
	}
	if (!strcmp(m, "fork") || !strcmp(m, "vfork")) {
		/* The child of a plain fork keeps the parent's protected
		 * mappings; after exec (from fork or from vfork, whose child
		 * borrows the parent's memory until then) a new copy of xom
		 * protects the new image, and the parent stays as it was. */
		int use_vfork = m[0] == 'v', st, copy_ok = 1;
		const char *name = use_vfork ? "vfork-exec" : "fork-exec";
		pid_t pid;

		if (!use_vfork) {
			pid = fork();
			if (pid == 0)
				_exit(is_xom((const void *)self_fn) == 1 ? 0 : 1);
			waitpid(pid, &st, 0);
			copy_ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
		}
		pid = use_vfork ? vfork() : fork();
		if (pid == 0) {
			execl("/proc/self/exe", argv[0], "probe", "self", (char *)NULL);
			_exit(99);
		}
		waitpid(pid, &st, 0);
		int child_ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
		int self_ok = is_xom((const void *)self_fn) == 1;
		if (child_ok && self_ok && copy_ok)
			printf("PASS %s\n", name);
		else
			printf("FAIL %s: parent xom %d, forked copy xom %d, exec'd child status %#x\n",
			       name, self_ok, copy_ok, st);
		return !(child_ok && self_ok && copy_ok);
	}
	fprintf(stderr, "usage: xomtest haspku|self|libc|call|audit|probe|maps|"
	        "handler|threads|fork|vfork|cycle ...\n");
	return 2;
}
