/*
 * The kernel's protection-key behaviour that xom relies on, checked on a
 * real kernel (in the emulated-PKU guest). Each test is a small function in
 * the table at the bottom; each prints "PASS name", "FAIL name: detail" or
 * "SKIP name: reason" for the guest runner.
 *
 *   pkey_kernel [TEST...]     runs the named tests, or all of them
 *
 * The first test checks that the CPU has PKU and that the kernel enables it.
 * Where it does not, that is a failure, not a skip: every other test would
 * be meaningless, so they do not run, and the program exits 1.  A test of a
 * call that this kernel is too old to have skips, naming the call and the
 * version; on a kernel new enough to have it, its absence is a failure.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../check.h"

/* glibc 2.36 has no wrapper and its headers may not know the number. */
#ifndef __NR_mseal
#define __NR_mseal 462
#endif

/* The machine code of `int f(void) { return 42; }`: mov $42,%eax; ret. */
static const unsigned char code42[] = { 0xb8, 0x2a, 0x00, 0x00, 0x00, 0xc3 };

static size_t page;
static const char *test_name;
static int test_failed, test_skipped;

/*
 * A failed check (../check.h) leaves the test, after its clean-up at out:
 * later checks would only repeat the cause.
 */
#define CHECK_FAILED do { test_failed = 1; goto out; } while (0)

/* SKIP says why a test cannot run here, and leaves it. */
#define SKIP(...) do { \
	printf("SKIP %s: ", test_name); \
	printf(__VA_ARGS__); \
	printf("\n"); \
	test_skipped = 1; \
	goto out; \
} while (0)

/*
 * Faults. The handler records what the kernel reported and jumps back to
 * the probe. A jump out of a handler skips sigreturn, so the thread keeps
 * the handler's PKRU (the kernel's default, which denies every non-zero
 * key); each test therefore sets the rights it needs after a probe.
 * Thread-local, so that a probe in a new thread has its own landing place.
 */
static __thread sigjmp_buf *volatile fault_jmp;
static __thread volatile int fault_code, fault_pkey, fault_count;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	fault_code = si->si_code;
	fault_pkey = (int)si->si_pkey;
	fault_count++;
	if (fault_jmp)
		siglongjmp(*fault_jmp, 1);
	/* A fault outside a probe is a bug in the test: die of it. */
	signal(SIGSEGV, SIG_DFL);
}

/* Reads one byte at p; returns 1 if that faulted (fault_* say how). */
static int read_faults(const volatile unsigned char *p)
{
	sigjmp_buf jb;
	volatile unsigned char sink;

	fault_count = 0, fault_code = 0, fault_pkey = -1;
	if (sigsetjmp(jb, 1)) {
		fault_jmp = NULL;
		return 1;
	}
	fault_jmp = &jb;
	sink = *p;
	(void)sink;
	fault_jmp = NULL;
	return 0;
}

/* Calls the code at p; returns its result, or -1 if the call faulted. */
static int call_code(const void *p)
{
	sigjmp_buf jb;
	int (*volatile fn)(void);

	fault_count = 0;
	if (sigsetjmp(jb, 1)) {
		fault_jmp = NULL;
		return -1;
	}
	fault_jmp = &jb;
	memcpy((void *)&fn, &p, sizeof fn);
	int r = fn();
	fault_jmp = NULL;
	return r;
}

/* A fresh read-write page holding code42. */
static unsigned char *code_page(void)
{
	unsigned char *p = mmap(NULL, page, PROT_READ | PROT_WRITE,
	                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, code42, sizeof code42);
	return p;
}

/*
 * The protection key of the mapping that holds addr, from the
 * "ProtectionKey:" line of /proc/self/smaps; -1 if not found.
 */
static int smaps_pkey(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int in = 0, key = -1;
	uintptr_t a = (uintptr_t)addr;

	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		/* Only a mapping's first line starts with "lo-hi". */
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = a >= lo && a < hi;
		else if (in && sscanf(line, "ProtectionKey: %d", &key) == 1)
			break;
	}
	fclose(f);
	return key;
}

static int cpuinfo_has(const char *flag)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof line, f)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		for (char *t = strtok(strchr(line, ':') + 1, " \n"); t; t = strtok(NULL, " \n"))
			if (strcmp(t, flag) == 0)
				found = 1;
	}
	fclose(f);
	return found;
}

/* Whether the running kernel is at least version major.minor. */
static int kernel_at_least(int major, int minor, const char **release)
{
	static struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		ma = mi = 0;
	*release = u.release;
	return ma > major || (ma == major && mi >= minor);
}

/* ---- Tests -------------------------------------------------------------- */

static int test_pku_cpu(void)
{
	int k = -1;

	CHECK(cpuinfo_has("pku"), "the CPU lacks pku (/proc/cpuinfo)");
	CHECK(cpuinfo_has("ospke"), "the kernel did not enable protection keys (no ospke)");
	k = pkey_alloc(0, 0);
	CHECK(k > 0, "pkey_alloc returned %d", k);
out:
	if (k > 0)
		pkey_free(k);
	return 0;
}

/* Reads of an access-disabled page fault with SEGV_PKUERR naming the key. */
static int test_read_fault(void)
{
	unsigned char *p = code_page();
	int k = pkey_alloc(0, 0);

	CHECK(p && k > 0, "setup: page %p key %d", (void *)p, k);
	CHECK(pkey_mprotect(p, page, PROT_READ | PROT_WRITE, k) == 0, "pkey_mprotect");
	CHECK(!read_faults(p), "a read faulted while the key allowed access");
	CHECK(pkey_set(k, PKEY_DISABLE_ACCESS) == 0, "pkey_set");
	CHECK(read_faults(p), "a read of an access-disabled page did not fault");
	CHECK(fault_code == SEGV_PKUERR, "si_code %d, expected SEGV_PKUERR (%d)",
	      fault_code, SEGV_PKUERR);
	CHECK(fault_pkey == k, "si_pkey %d, expected %d", fault_pkey, k);
out:
	if (p)
		munmap(p, page);
	if (k > 0)
		pkey_free(k);
	return 0;
}

/* Instruction fetch ignores the access-disable bit: calls still work. */
static int test_exec_ok(void)
{
	unsigned char *p = code_page();
	int k = pkey_alloc(0, PKEY_DISABLE_ACCESS), r;

	CHECK(p && k > 0, "setup: page %p key %d", (void *)p, k);
	CHECK(pkey_mprotect(p, page, PROT_EXEC, k) == 0, "pkey_mprotect(PROT_EXEC)");
	r = call_code(p);
	CHECK(r == 42, "a call into the execute-only page returned %d (fault code %d)",
	      r, fault_code);
	CHECK(read_faults(p), "the execute-only page is readable");
	CHECK(fault_code == SEGV_PKUERR && fault_pkey == k,
	      "si_code %d si_pkey %d, expected %d %d", fault_code, fault_pkey, SEGV_PKUERR, k);
out:
	if (p)
		munmap(p, page);
	if (k > 0)
		pkey_free(k);
	return 0;
}

/* A plain mprotect(PROT_EXEC) gets the kernel's own execute-only key. */
static int test_exec_only_mprotect(void)
{
	unsigned char *p = code_page();
	int k, r;

	CHECK(p, "mmap");
	CHECK(mprotect(p, page, PROT_EXEC) == 0, "mprotect(PROT_EXEC)");
	k = smaps_pkey(p);
	CHECK(k > 0, "ProtectionKey of the PROT_EXEC page is %d, expected the kernel's execute-only key", k);
	r = call_code(p);
	CHECK(r == 42, "a call into the page returned %d", r);
	CHECK(read_faults(p), "a PROT_EXEC page is readable");
	CHECK(fault_code == SEGV_PKUERR && fault_pkey == k,
	      "si_code %d si_pkey %d, expected %d %d", fault_code, fault_pkey, SEGV_PKUERR, k);
out:
	if (p)
		munmap(p, page);
	return 0;
}

struct thread_probe {
	const unsigned char *p;
	int key, rights, faulted, code;
};

static void *thread_main(void *arg)
{
	struct thread_probe *t = arg;
	t->rights = pkey_get(t->key);
	t->faulted = read_faults(t->p);
	t->code = fault_code;
	return NULL;
}

/* New threads start with the PKRU of the thread that created them. */
static int test_thread_inherit(void)
{
	unsigned char *p = code_page();
	int k = pkey_alloc(0, 0);
	struct thread_probe t = { 0 };
	pthread_t th;

	CHECK(p && k > 0, "setup: page %p key %d", (void *)p, k);
	CHECK(pkey_mprotect(p, page, PROT_READ, k) == 0, "pkey_mprotect");
	t.p = p, t.key = k;

	CHECK(pkey_set(k, 0) == 0, "pkey_set");
	CHECK(pthread_create(&th, NULL, thread_main, &t) == 0, "pthread_create");
	pthread_join(th, NULL);
	CHECK(t.rights == 0 && !t.faulted,
	      "creator allowed the key; the new thread has rights %d and its read %s",
	      t.rights, t.faulted ? "faulted" : "worked");

	CHECK(pkey_set(k, PKEY_DISABLE_ACCESS) == 0, "pkey_set");
	CHECK(pthread_create(&th, NULL, thread_main, &t) == 0, "pthread_create");
	pthread_join(th, NULL);
	CHECK(t.rights == PKEY_DISABLE_ACCESS && t.faulted && t.code == SEGV_PKUERR,
	      "creator denied the key; the new thread has rights %d, its read %s (si_code %d)",
	      t.rights, t.faulted ? "faulted" : "worked", t.code);
out:
	if (p)
		munmap(p, page);
	if (k > 0)
		pkey_free(k);
	return 0;
}

static int usr1_key;
static const unsigned char *usr1_page;
static volatile int usr1_rights = -1, usr1_faulted = -1;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_rights = pkey_get(usr1_key);
	usr1_faulted = read_faults(usr1_page);
}

/*
 * Signal handlers run with the kernel's default PKRU, which denies access
 * to every non-zero key, whatever the interrupted thread allowed. xom's
 * fault handler, and the program's own handlers, depend on it.
 */
static int test_signal_default_pkru(void)
{
	unsigned char *p = code_page();
	int k = pkey_alloc(0, 0);
	struct sigaction sa = { .sa_handler = on_usr1 };

	CHECK(p && k > 0, "setup: page %p key %d", (void *)p, k);
	CHECK(pkey_mprotect(p, page, PROT_READ, k) == 0, "pkey_mprotect");
	usr1_key = k, usr1_page = p;
	sigemptyset(&sa.sa_mask);
	/* The probe's SIGSEGV must be deliverable inside this handler. */
	sa.sa_flags = SA_NODEFER;
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction");
	CHECK(pkey_set(k, 0) == 0, "pkey_set");
	CHECK(!read_faults(p), "a read faulted while the thread allowed the key");
	CHECK(pkey_set(k, 0) == 0, "pkey_set");
	raise(SIGUSR1);
	CHECK(pkey_get(k) == 0, "the thread's rights after the handler are %d, expected 0 (restored by sigreturn)",
	      pkey_get(k));
	CHECK(usr1_rights == PKEY_DISABLE_ACCESS && usr1_faulted == 1,
	      "inside the handler the rights are %d and a read %s; expected access denied",
	      usr1_rights, usr1_faulted == 1 ? "faulted" : "worked");
out:
	signal(SIGUSR1, SIG_DFL);
	if (p)
		munmap(p, page);
	if (k > 0)
		pkey_free(k);
	return 0;
}

/* The kernel's own reads of user memory honour PKRU: write(2) gets EFAULT. */
static int test_write_efault(void)
{
	unsigned char *p = code_page();
	int k = pkey_alloc(0, 0), fd[2] = { -1, -1 };
	ssize_t n;

	CHECK(p && k > 0, "setup: page %p key %d", (void *)p, k);
	CHECK(pkey_mprotect(p, page, PROT_EXEC, k) == 0, "pkey_mprotect");
	CHECK(pipe(fd) == 0, "pipe");
	n = write(fd[1], p, sizeof code42);
	CHECK(n == (ssize_t)sizeof code42, "write from the page while the key allows access returned %zd", n);
	CHECK(pkey_set(k, PKEY_DISABLE_ACCESS) == 0, "pkey_set");
	errno = 0;
	n = write(fd[1], p, sizeof code42);
	CHECK(n == -1 && errno == EFAULT, "write from an execute-only page returned %zd, expected EFAULT", n);
out:
	if (fd[0] >= 0)
		close(fd[0]), close(fd[1]);
	if (p)
		munmap(p, page);
	if (k > 0)
		pkey_free(k);
	return 0;
}

/*
 * A later plain mprotect keeps the key that pkey_mprotect gave a VMA, so the
 * dynamic linker's and the program's own mprotect calls do not undo xom.
 */
static int test_mprotect_keeps_key(void)
{
	unsigned char *p = code_page();
	int k = pkey_alloc(0, PKEY_DISABLE_ACCESS), got;

	CHECK(p && k > 0, "setup: page %p key %d", (void *)p, k);
	CHECK(pkey_mprotect(p, page, PROT_EXEC, k) == 0, "pkey_mprotect");
	CHECK(mprotect(p, page, PROT_READ | PROT_EXEC) == 0, "mprotect(PROT_READ|PROT_EXEC)");
	got = smaps_pkey(p);
	CHECK(got == k, "after mprotect(PROT_READ|PROT_EXEC) the ProtectionKey is %d, expected %d", got, k);
	CHECK(mprotect(p, page, PROT_READ) == 0, "mprotect(PROT_READ)");
	got = smaps_pkey(p);
	CHECK(got == k, "after mprotect(PROT_READ) the ProtectionKey is %d, expected %d", got, k);
	CHECK(pkey_set(k, PKEY_DISABLE_ACCESS) == 0, "pkey_set");
	CHECK(read_faults(p) && fault_pkey == k, "a read did not fault with key %d (si_pkey %d)",
	      k, fault_pkey);
out:
	if (p)
		munmap(p, page);
	if (k > 0)
		pkey_free(k);
	return 0;
}

/*
 * The exception: a plain mprotect(PROT_EXEC) replaces a VMA's custom key by
 * the kernel's own execute-only key (arch_override_mprotect_pkey). The page
 * stays execute-only, but under another key, so the owner of the first key
 * can no longer open it with its PKRU bits.
 */
static int test_mprotect_exec_takes_kernel_key(void)
{
	unsigned char *p = code_page();
	int k = pkey_alloc(0, PKEY_DISABLE_ACCESS), got, r;

	CHECK(p && k > 0, "setup: page %p key %d", (void *)p, k);
	CHECK(pkey_mprotect(p, page, PROT_EXEC, k) == 0, "pkey_mprotect");
	CHECK(mprotect(p, page, PROT_EXEC) == 0, "mprotect(PROT_EXEC)");
	got = smaps_pkey(p);
	CHECK(got > 0 && got != k, "after mprotect(PROT_EXEC) the ProtectionKey is %d, "
	      "expected the kernel's execute-only key, not %d", got, k);
	r = call_code(p);
	CHECK(r == 42, "a call into the page returned %d", r);
	CHECK(read_faults(p) && fault_pkey == got, "a read did not fault with key %d (si_pkey %d)",
	      got, fault_pkey);
out:
	if (p)
		munmap(p, page);
	if (k > 0)
		pkey_free(k);
	return 0;
}

struct text_range {
	const char *name;
	uintptr_t lo, hi;
};

/* Finds the executable segment of the loaded object whose name ends in name. */
static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct text_range *t = arg;
	size_t ln = strlen(info->dlpi_name), lt = strlen(t->name);

	(void)size;
	if (ln < lt || strcmp(info->dlpi_name + ln - lt, t->name) != 0)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			t->lo = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
			t->hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + page - 1) & ~(page - 1);
			return 1;
		}
	}
	return 0;
}

/*
 * The text of a dlopen'd library, protected with pkey_mprotect after it was
 * loaded, still runs (calls through the PLT, into libc and back) and can no
 * longer be read. The library lies beside this program.
 */
static int test_dlopen_text(void)
{
	char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 64);
	void *h = NULL;
	int k = -1, r;
	int (*answer)(const char *);
	struct text_range t = { .name = "/libpkdl.so" };

	CHECK(n > 0, "readlink /proc/self/exe");
	path[n] = 0;
	strcpy(strrchr(path, '/'), "/libpkdl.so");
	h = dlopen(path, RTLD_NOW);
	CHECK(h, "dlopen %s: %s", path, dlerror());
	*(void **)&answer = dlsym(h, "pkdl_answer");
	CHECK(answer, "dlsym pkdl_answer");
	CHECK(dl_iterate_phdr(find_text, &t) == 1, "no executable segment for %s", path);
	k = pkey_alloc(0, PKEY_DISABLE_ACCESS);
	CHECK(k > 0, "pkey_alloc");
	CHECK(pkey_mprotect((void *)t.lo, t.hi - t.lo, PROT_EXEC, k) == 0,
	      "pkey_mprotect of the text %#lx-%#lx", (unsigned long)t.lo, (unsigned long)t.hi);
	r = answer("xom");
	CHECK(r == 3 * 3 + 1, "pkdl_answer returned %d, expected 10", r);
	CHECK(read_faults((const unsigned char *)answer), "the library's protected text is readable");
	CHECK(fault_code == SEGV_PKUERR && fault_pkey == k, "si_code %d si_pkey %d, expected %d %d",
	      fault_code, fault_pkey, SEGV_PKUERR, k);
	CHECK(pkey_set(k, PKEY_DISABLE_ACCESS) == 0, "pkey_set");
	r = answer("pkeys");
	CHECK(r == 5 * 3 + 1, "a second call returned %d, expected 16", r);
out:
	/* The library stays loaded: its text still carries the key. */
	return 0;
}

/*
 * mseal(2) (Linux 6.10) makes a mapping's protection final: once sealed, an
 * execute-only page refuses mprotect and pkey_mprotect with EPERM, so a bug
 * that reaches mprotect cannot make xom's pages readable again, nor move
 * them to the kernel's execute-only key; it cannot be unmapped either.
 * The sealed page stays mapped for the rest of the run.
 */
static int test_mseal_exec(void)
{
	unsigned char *p = code_page();
	int k = pkey_alloc(0, PKEY_DISABLE_ACCESS), got, r;
	const char *release;
	long rc;

	CHECK(p && k > 0, "setup: page %p key %d", (void *)p, k);
	CHECK(pkey_mprotect(p, page, PROT_EXEC, k) == 0, "pkey_mprotect");
	errno = 0;
	rc = syscall(__NR_mseal, p, page, 0UL);
	if (rc == -1 && errno == ENOSYS) {
		if (!kernel_at_least(6, 10, &release))
			SKIP("mseal(2) is missing (ENOSYS) on Linux %s; it came in 6.10", release);
		CHECK(0, "mseal(2) is missing (ENOSYS) on Linux %s, which should have it", release);
	}
	CHECK(rc == 0, "mseal of an execute-only page returned %ld", rc);
	errno = 0;
	CHECK(mprotect(p, page, PROT_READ | PROT_EXEC) == -1 && errno == EPERM,
	      "mprotect(PROT_READ|PROT_EXEC) of a sealed page did not fail with EPERM");
	errno = 0;
	CHECK(mprotect(p, page, PROT_EXEC) == -1 && errno == EPERM,
	      "mprotect(PROT_EXEC) of a sealed page did not fail with EPERM");
	errno = 0;
	CHECK(pkey_mprotect(p, page, PROT_READ | PROT_EXEC, 0) == -1 && errno == EPERM,
	      "pkey_mprotect(PROT_READ|PROT_EXEC, key 0) of a sealed page did not fail with EPERM");
	errno = 0;
	CHECK(munmap(p, page) == -1 && errno == EPERM, "munmap of a sealed page did not fail with EPERM");
	got = smaps_pkey(p);
	CHECK(got == k, "after the refused calls the ProtectionKey is %d, expected %d", got, k);
	r = call_code(p);
	CHECK(r == 42, "a call into the sealed page returned %d", r);
	CHECK(pkey_set(k, PKEY_DISABLE_ACCESS) == 0, "pkey_set");
	CHECK(read_faults(p) && fault_code == SEGV_PKUERR && fault_pkey == k,
	      "a read of the sealed page did not fault with key %d (si_code %d si_pkey %d)",
	      k, fault_code, fault_pkey);
out:
	/* Fails (EPERM) once the page is sealed: it stays, with its key. */
	if (p)
		munmap(p, page);
	if (k > 0)
		pkey_free(k);
	return 0;
}

static const struct test {
	const char *name;
	int (*fn)(void);
} tests[] = {
	{ "pku_cpu", test_pku_cpu },
	{ "read_fault", test_read_fault },
	{ "exec_ok", test_exec_ok },
	{ "exec_only_mprotect", test_exec_only_mprotect },
	{ "thread_inherit", test_thread_inherit },
	{ "signal_default_pkru", test_signal_default_pkru },
	{ "write_efault", test_write_efault },
	{ "mprotect_keeps_key", test_mprotect_keeps_key },
	{ "mprotect_exec_takes_kernel_key", test_mprotect_exec_takes_kernel_key },
	{ "dlopen_text", test_dlopen_text },
	{ "mseal_exec", test_mseal_exec },
};

static int wanted(const char *name, int argc, char **argv)
{
	if (argc < 2)
		return 1;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO | SA_NODEFER };
	int failed = 0;

	/* The guest runner reads the output through a file; keep the order. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	page = (size_t)sysconf(_SC_PAGESIZE);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);

	/* Without PKU every other test would fail for the same reason, or
	 * die of SIGILL in pkey_get; the first failure says it all. */
	test_name = "pku_cpu";
	test_pku_cpu();
	if (test_failed)
		return 1;
	if (wanted("pku_cpu", argc, argv))
		printf("PASS pku_cpu\n");

	for (size_t i = 1; i < sizeof tests / sizeof tests[0]; i++) {
		if (!wanted(tests[i].name, argc, argv))
			continue;
		test_name = tests[i].name;
		test_failed = test_skipped = 0;
		tests[i].fn();
		if (test_failed)
			failed++;
		else if (!test_skipped)
			printf("PASS %s\n", test_name);
	}
	return failed ? 1 : 0;
}
