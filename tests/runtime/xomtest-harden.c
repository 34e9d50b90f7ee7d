/*
 * xomtest-harden.c - the ways a host process could trip xom up, one mode
 * each: a changed directory, a reused descriptor 2, threads, forks,
 * cancellation and longjmp during a scan, freed keys, the map-count limit,
 * a file renamed during dlopen, and the launchers that run a program as
 * another user or under a seccomp filter.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <grp.h>
#include <iconv.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "xomtest.h"

/* chdir-dlopen DIR LIB: changes directory, then dlopens LIB (whose plan
 * is not cached yet): a relative LD_PRELOAD path must not make xom run
 * DIR's build/xom-plan. */
static int m_chdir_dlopen(int argc, char **argv)
{
	test_name = "helper-after-chdir";
	CHECK(argc > 2, "usage: chdir-dlopen DIR LIB");
	CHECK(chdir(argv[1]) == 0, "chdir %s", argv[1]);
	CHECK(dlopen(argv[2], RTLD_NOW), "dlopen: %s", dlerror());
	PASS("");
}

/* fd2 FILE LIB: a daemon's pattern: closes descriptor 2, opens FILE (which
 * gets 2), then dlopens LIB, about which xom has something to say. */
static int m_fd2(int argc, char **argv)
{
	test_name = "log-descriptor-reused";
	CHECK(argc > 2, "usage: fd2 FILE LIB");
	close(2);
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd == 2, "open gave %d, not 2", fd);
	CHECK(write(fd, "DATA\n", 5) == 5, "write");
	dlopen(argv[2], RTLD_NOW);
	PASS("");
}

static volatile int running = 1;

static void *iconv_loop(void *arg)
{
	static const char *const sets[] = { "IBM037", "IBM500", "EBCDIC-US",
	                                    "IBM1047", "ISO-8859-15", "KOI8-R" };
	(void)arg;
	for (unsigned i = 0; running; i++) {
		iconv_t cd = iconv_open(sets[i % 6], "UTF-8");
		if (cd != (iconv_t)-1)
			iconv_close(cd);
	}
	return NULL;
}

/* iconv-dlopen LIB SECONDS: one thread has libc load gconv modules by
 * itself (iconv_open) while another dlopens LIB, whose plan is scanned
 * every time (cache=off): neither may hang. */
static int m_iconv_dlopen(int argc, char **argv)
{
	pthread_t t;
	int n = 0;

	test_name = "no-deadlock-iconv-dlopen";
	CHECK(argc > 2, "usage: iconv-dlopen LIB SECONDS");
	time_t end = time(NULL) + atoi(argv[2]);
	pthread_create(&t, NULL, iconv_loop, NULL);
	while (time(NULL) < end) {
		void *h = dlopen(argv[1], RTLD_NOW);
		CHECK(h, "dlopen: %s", dlerror());
		dlclose(h);
		n++;
	}
	running = 0;
	pthread_join(t, NULL);
	PASS("(%d dlopen cycles)", n);
}

static void *dlopen_forever(void *arg)
{
	while (running) {
		void *h = dlopen(arg, RTLD_NOW);
		if (h)
			dlclose(h);
	}
	return NULL;
}

/* The process ID of an xom-plan of this session that is running (not a
 * zombie), or 0: the scan is on.  The runtime does not make the helper
 * its own child, so it is found by name. */
static int helper_running(void)
{
	char path[300], stat[512];
	int found = 0;
	pid_t sid = getsid(0);
	DIR *d = opendir("/proc");
	struct dirent *e;

	while (d && !found && (e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		char comm[64], state;
		int ppid, pgrp, session;
		if (fgets(stat, sizeof(stat), f)
		    && sscanf(stat, "%*d (%63[^)]) %c %d %d %d", comm, &state, &ppid,
		              &pgrp, &session) == 5)
			found = !strcmp(comm, "xom-plan") && state != 'Z' && session == sid
			        ? atoi(e->d_name) : 0;
		fclose(f);
	}
	if (d)
		closedir(d);
	return found;
}

/* fork-scan LIB N: forks N children, each while another thread is inside
 * a scan of LIB (its helper is running; cache=off scans every time); each
 * child uses the dynamic linker and NSS and must exit within seconds.  A
 * fork while that thread is in the dynamic linker itself (its dlclose, or
 * the next dlopen's loading) can hang the child without xom too: the
 * child finds ld.so's data half-changed.  So a fork counts only when the
 * same helper ran before and after it, which means that thread waited
 * for its scan, inside xom, throughout; a fork that raced with the scan's
 * end is undone and tried again. */
static int m_fork_scan(int argc, char **argv)
{
	pthread_t t;
	int raced = 0;

	test_name = "fork-during-scan";
	CHECK(argc > 2, "usage: fork-scan LIB N");
	pthread_create(&t, NULL, dlopen_forever, argv[1]);
	for (int i = 0; i < atoi(argv[2]); i++) {
		int waited = 0, helper;
		while (!(helper = helper_running()) && waited++ < 5000) {
			struct timespec ts = { 0, 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
		CHECK(waited < 5000, "no scan seen in 5 s (is cache=off set?)");
		pid_t pid = fork();
		if (pid == 0) {
			alarm(20);
			void *h = dlopen("libm.so.6", RTLD_NOW);
			struct passwd *pw = getpwuid(0);
			_exit(h && pw ? 0 : 3);
		}
		int st;
		if (helper_running() != helper) {
			kill(pid, SIGKILL);
			CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
			CHECK(++raced < 1000, "every fork raced with the end of a scan");
			i--;
			continue;
		}
		CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "child %d ended with status %#x (hung?)", i, st);
	}
	running = 0;
	pthread_join(t, NULL);
	PASS("(%d forks raced with a scan's end and were tried again)", raced);
}

static void *dlopen_once(void *arg)
{
	void *h = dlopen(arg, RTLD_NOW);
	if (h)
		dlclose(h);
	return NULL;
}

/* cancel-scan LIB1 LIB2: a thread in dlopen(LIB1), scanned, is cancelled;
 * afterwards dlopen(LIB2) still works. */
static int m_cancel_scan(int argc, char **argv)
{
	pthread_t t;

	test_name = "cancel-during-scan";
	CHECK(argc > 2, "usage: cancel-scan LIB1 LIB2");
	for (int i = 0; i < 5; i++) {
		pthread_create(&t, NULL, dlopen_once, argv[1]);
		struct timespec ts = { 0, (i + 1) * 3 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		pthread_cancel(t);
		pthread_join(t, NULL);
	}
	alarm(60);
	CHECK(dlopen(argv[2], RTLD_NOW), "dlopen after cancellations: %s", dlerror());
	PASS("");
}

static sigjmp_buf jump;

static void on_alarm(int sig)
{
	(void)sig;
	siglongjmp(jump, 1);
}

static void *dlopen_result(void *arg)
{
	return dlopen(arg, RTLD_NOW);
}

/* jump-scan LIB1 LIB2: a signal handler that longjmps is due while
 * dlopen(LIB1) scans; afterwards dlopen(LIB2) still works, first in another
 * thread (a lock left held by this thread would let only this thread in),
 * then in this one. */
static int m_jump_scan(int argc, char **argv)
{
	struct itimerval it = { { 0, 0 }, { 0, 2000 } };
	volatile int jumps = 0;
	pthread_t t;
	void *h2 = NULL;

	test_name = "longjmp-during-scan";
	CHECK(argc > 2, "usage: jump-scan LIB1 LIB2");
	signal(SIGALRM, on_alarm);
	for (int i = 0; i < 5; i++) {
		if (sigsetjmp(jump, 1) == 0) {
			setitimer(ITIMER_REAL, &it, NULL);
			void *h = dlopen(argv[1], RTLD_NOW);
			if (h)
				dlclose(h);
			pause();
		}
		jumps++;
	}
	signal(SIGALRM, SIG_DFL);
	alarm(60);
	CHECK(pthread_create(&t, NULL, dlopen_result, argv[2]) == 0, "pthread_create");
	CHECK(pthread_join(t, &h2) == 0 && h2, "another thread's dlopen after the jumps: %s",
	      dlerror());
	CHECK(dlopen(argv[2], RTLD_NOW), "dlopen after the jumps: %s", dlerror());
	PASS("(%d jumps)", jumps);
}

/* pkey-free: frees every key it did not allocate, allocates keys that
 * allow everything, then reads its own code (dies under xom). */
static int m_pkey_free(int argc, char **argv)
{
	(void)argc, (void)argv;
	for (int k = 1; k < 16; k++)
		pkey_free(k);
	for (int k = 1; k < 16; k++)
		if (pkey_alloc(0, 0) < 0)
			break;
	for (int k = 1; k < 16; k++)
		pkey_set(k, 0);
	printf("read %02x\n", *(volatile const unsigned char *)(const void *)self_fn);
	return 0;
}

/* pkey-free-raw: the same with the raw system calls, past every wrapper. */
static int m_pkey_free_raw(int argc, char **argv)
{
	(void)argc, (void)argv;
	for (int k = 1; k < 16; k++)
		syscall(SYS_pkey_free, k);
	for (int k = 1; k < 16; k++)
		if (syscall(SYS_pkey_alloc, 0, 0) < 0)
			break;
	/* rights 0 for every key: PKRU = 0 */
	__asm__ volatile("xor %%ecx, %%ecx\n\txor %%edx, %%edx\n\txor %%eax, %%eax\n\t"
	                 "wrpkru" ::: "eax", "ecx", "edx", "memory");
	printf("read %02x\n", *(volatile const unsigned char *)(const void *)self_fn);
	fflush(stdout);
	/* The next batch of objects notices and says so. */
	if (argc > 1)
		dlopen(argv[1], RTLD_NOW);
	return 0;
}

/* vmreadv: reads its own code with process_vm_readv: prints what happened. */
static int m_vmreadv(int argc, char **argv)
{
	char c;
	struct iovec local = { &c, 1 };
	struct iovec remote = { (void *)(uintptr_t)(const void *)self_fn, 1 };

	(void)argc, (void)argv;
	ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	printf(n == 1 ? "read %02x\n" : "failed\n", (unsigned char)c);
	return n == 1 ? 0 : 1;
}

/* procmem: reads its own code through /proc/self/mem, which the kernel
 * serves without protection keys: prints what happened. */
static int m_procmem(int argc, char **argv)
{
	unsigned char c;
	const void *p = (const void *)(uintptr_t)(const void *)self_fn;

	(void)argc, (void)argv;
	int fd = open("/proc/self/mem", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : pread(fd, &c, 1, (off_t)(uintptr_t)p);
	if (fd >= 0)
		close(fd);
	printf(n == 1 ? "read %02x, execute-only %d\n" : "failed, execute-only %d\n",
	       n == 1 ? c : is_xom(p), is_xom(p));
	return n == 1 ? 0 : 1;
}

/* maxmaps N: maps N more single pages that cannot merge (alternating
 * protections): PASS when every one succeeds. */
static int m_maxmaps(int argc, char **argv)
{
	test_name = "program-maps-near-limit";
	CHECK(argc > 1, "usage: maxmaps N");
	int n = atoi(argv[1]), lines = 0, c;
	FILE *f = fopen("/proc/self/maps", "r");
	while (f && (c = getc(f)) != EOF)
		lines += c == '\n';
	if (f)
		fclose(f);
	printf("maps %d\n", lines);
	char *base = mmap(NULL, (size_t)n * 2 * 4096, PROT_NONE,
	                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(base != MAP_FAILED, "reserve");
	for (int i = 0; i < n; i++)
		CHECK(mprotect(base + (size_t)i * 2 * 4096, 4096, PROT_READ) == 0,
		      "mapping %d of %d", i + 1, n);
	PASS("(%d more mappings)", n);
}

/* unprotect-code: gives its own code page back its read right with the
 * default key, as a program undoing the protection would, then reads it;
 * sealed pages refuse. */
static int m_unprotect_code(int argc, char **argv)
{
	uintptr_t page = (uintptr_t)(const void *)self_fn & ~4095ul;
	/* With "mprotect", a plain mprotect: under the kernel's execute-only
	 * key that gives the page key 0 back. */
	int plain = argc > 1 && !strcmp(argv[1], "mprotect");

	if ((plain ? mprotect((void *)page, 4096, PROT_READ | PROT_EXEC)
	           : syscall(SYS_pkey_mprotect, page, 4096, PROT_READ | PROT_EXEC, 0)) == 0)
		printf("unprotect ok\n");
	else
		printf("unprotect failed: %s\n", strerror(errno));
	fflush(stdout);
	printf("read %02x\n", *(volatile const unsigned char *)(const void *)self_fn);
	return 0;
}

/* tamper INDEX: makes every plan in a store index describe a segment one
 * page longer, sealed as if xom had written it: a plan that does not
 * match the mapping, for require=1 to refuse. */
#include "../../formats/xom_plan.h"
/* Calls fn on every plan of a store's index (mapped shared at p), alone
 * (in_set 0) and in the sets (1), and counts the calls. */
static int each_plan(char *p, void (*fn)(struct xom_plan_head *ph, int in_set,
                                         void *arg), void *arg)
{
	const struct xom_store_head *h = (const void *)p;
	const struct xom_store_slot *s = (const void *)(h + 1);
	const char *why;
	int n = 0;

	for (uint32_t i = 0; i < h->nslots; i++) {
		if (!s[i].len)
			continue;
		void *blob = p + s[i].off;
		if (xom_plan_check(blob, s[i].len, &why) == 0) {
			fn(blob, 0, arg);
			n++;
		} else if (xom_set_check(blob, s[i].len, s[i].hash) == 0) {
			size_t at = 0, len = 0;
			for (const struct xom_plan_head *ph; (ph = xom_set_plan(blob, &at, &len)); n++)
				fn((struct xom_plan_head *)ph, 1, arg);
		}
	}
	return n;
}

static char *map_index(const char *path, size_t *len)
{
	int fd = open(path, O_RDWR);

	if (fd < 0)
		return NULL;
	*len = (size_t)lseek(fd, 0, SEEK_END);
	char *p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

static void widen_seg(struct xom_plan_head *ph, int in_set, void *arg)
{
	(void)in_set;
	(void)arg;
	((struct xom_plan_seg *)(ph + 1))->memsz += 4096;
	xom_plan_seal(ph);
}

static int m_tamper(int argc, char **argv)
{
	size_t len;

	test_name = "tamper";
	CHECK(argc > 1, "usage: tamper INDEX");
	char *p = map_index(argv[1], &len);
	CHECK(p, "map %s", argv[1]);
	int n = each_plan(p, widen_seg, NULL);
	munmap(p, len);
	PASS("(%d plans)", n);
}

struct damage { const char *name; int alone, in_set, n, old; };

static void damage_one(struct xom_plan_head *ph, int in_set, void *arg)
{
	struct damage *d = arg;
	const char *path = xom_plan_path(ph);
	size_t n = strlen(path), k = strlen(d->name);

	if (n < k || strcmp(path + n - k, d->name) || !(in_set ? d->in_set : d->alone))
		return;
	if (d->old) {
		/* The format before this one, sealed as its writer would have:
		 * whole, but not to be read as a plan of this format. */
		ph->format = XOM_PLAN_FORMAT - 1;
		ph->magic[7] = (char)('0' + XOM_PLAN_FORMAT - 1);
		xom_plan_seal(ph);
	} else {
		((char *)(ph + 1))[0] ^= 1;     /* its first segment, under the checksum */
	}
	d->n++;
}

static int m_damage(int argc, char **argv)
{
	size_t len;

	test_name = "damage";
	CHECK(argc > 3, "usage: damage INDEX alone|set|both|old NAME");
	struct damage d = { argv[3], strcmp(argv[2], "set") != 0,
	                    strcmp(argv[2], "alone") != 0, 0, !strcmp(argv[2], "old") };
	char *p = map_index(argv[1], &len);
	CHECK(p, "map %s", argv[1]);
	each_plan(p, damage_one, &d);
	munmap(p, len);
	CHECK(d.n > 0, "no plan of %s (%s) in %s", d.name, argv[2], argv[1]);
	PASS("(%d copies)", d.n);
}

/* A copy of an ELF file in memory, to forge: its bytes and size. */
static unsigned char *read_whole(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	unsigned char *buf = NULL;

	if (fd >= 0 && fstat(fd, &st) == 0 && (buf = malloc((size_t)st.st_size))
	    && read(fd, buf, (size_t)st.st_size) != st.st_size) {
		free(buf);
		buf = NULL;
	}
	if (fd >= 0)
		close(fd);
	*len = buf ? (size_t)st.st_size : 0;
	return buf;
}

/* Sets DF_TEXTREL in the DT_FLAGS of the file's dynamic section. */
static int forge_textrel(unsigned char *img, size_t len)
{
	const Elf64_Ehdr *eh = (const void *)img;

	for (unsigned i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(img + eh->e_phoff + i * sizeof(*ph));
		if (ph->p_type != PT_DYNAMIC || ph->p_offset + ph->p_filesz > len)
			continue;
		for (Elf64_Dyn *d = (void *)(img + ph->p_offset);
		     (unsigned char *)(d + 1) <= img + ph->p_offset + ph->p_filesz
		     && d->d_tag != DT_NULL; d++)
			if (d->d_tag == DT_FLAGS) {
				d->d_un.d_val |= DF_TEXTREL;
				return 0;
			}
	}
	return -1;
}

/* forge textrel|noshdr IN OUT: writes a copy of the ELF file IN that keeps
 * its build-id but makes another plan: with DF_TEXTREL set in its dynamic
 * section (another shape: the scanner keeps the whole file readable), or
 * without its section headers (the same shape: the scanner can no longer
 * tell code from data in most pages).  A forger's copy, for a store. */
static int m_forge(int argc, char **argv)
{
	size_t len;

	test_name = "forge";
	CHECK(argc > 3, "usage: forge textrel|noshdr IN OUT");
	unsigned char *img = read_whole(argv[2], &len);
	CHECK(img && len >= sizeof(Elf64_Ehdr) && !memcmp(img, ELFMAG, SELFMAG),
	      "read %s", argv[2]);
	Elf64_Ehdr *eh = (void *)img;
	CHECK(eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) <= len,
	      "%s: program headers past its end", argv[2]);
	if (!strcmp(argv[1], "textrel")) {
		CHECK(forge_textrel(img, len) == 0, "%s has no DT_FLAGS", argv[2]);
	} else {
		CHECK(!strcmp(argv[1], "noshdr"), "forge textrel or noshdr, not %s", argv[1]);
		eh->e_shoff = 0;
		eh->e_shnum = eh->e_shstrndx = 0;
	}
	int fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0755);
	CHECK(fd >= 0 && write(fd, img, len) == (ssize_t)len && close(fd) == 0,
	      "write %s", argv[3]);
	free(img);
	PASS("(%s)", argv[1]);
}

/* runas UID [VAR=VALUE...] CMD...: runs CMD as UID with those variables
 * set (for set-user-ID tests): the variables are the caller's, not this
 * launcher's, which may itself run under xom. */
static int m_runas(int argc, char **argv)
{
	CHECK(argc > 2, "usage: runas UID [VAR=VALUE...] CMD...");
	uid_t uid = (uid_t)atoi(argv[1]);
	int i = 2;
	CHECK(setgroups(0, NULL) == 0 && setresgid(uid, uid, uid) == 0
	      && setresuid(uid, uid, uid) == 0, "cannot become %u", uid);
	for (; i < argc && strchr(argv[i], '=') && argv[i][0] != '/'; i++)
		CHECK(putenv(argv[i]) == 0, "putenv %s", argv[i]);
	CHECK(i < argc, "no command");
	execv(argv[i], argv + i);
	CHECK(0, "exec %s", argv[i]);
}

#define ARG2 offsetof(struct seccomp_data, args[2])
#define NR offsetof(struct seccomp_data, nr)

/* A filter like systemd 252's MemoryDenyWriteExecute=yes: mprotect and
 * pkey_mprotect with PROT_EXEC, and mmap with PROT_WRITE|PROT_EXEC, fail
 * with EPERM; mmap with PROT_EXEC alone passes. */
static int filter_mdwe(void)
{
	struct sock_filter f[] = {
		/* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR),
		/* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mprotect, 2, 0),
		/* 2 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pkey_mprotect, 1, 0),
		/* 3 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 3, 2),
		/* 4 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG2),
		/* 5 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 4, 0),
		/* 6 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* 7 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG2),
		/* 8 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_WRITE, 0, 2),
		/* 9 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
		/* 10 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		/* 11 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
	       && syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0;
}

/* A filter that fails pkey_alloc, pkey_mprotect and pkey_free with e, as
 * allow-lists without them do: container runtimes' profiles (an older
 * Docker default answers EPERM, newer profiles ENOSYS for calls they do
 * not know) and systemd 252's SystemCallFilter=@system-service (EPERM). */
static int filter_nopkey(int e)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pkey_alloc, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pkey_mprotect, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pkey_free, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)e),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
	       && syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0;
}

/* mdwe CMD...: runs CMD under filter_mdwe. */
static int m_mdwe(int argc, char **argv)
{
	CHECK(argc > 1, "usage: mdwe CMD...");
	CHECK(filter_mdwe(), "seccomp");
	execv(argv[1], argv + 1);
	CHECK(0, "exec %s", argv[1]);
}

/* nopkey EPERM|ENOSYS CMD...: runs CMD under filter_nopkey. */
static int m_nopkey(int argc, char **argv)
{
	CHECK(argc > 2, "usage: nopkey EPERM|ENOSYS CMD...");
	int e = !strcmp(argv[1], "EPERM") ? EPERM : !strcmp(argv[1], "ENOSYS") ? ENOSYS : 0;
	CHECK(e, "nopkey: EPERM or ENOSYS, not %s", argv[1]);
	CHECK(filter_nopkey(e), "seccomp");
	execv(argv[2], argv + 2);
	CHECK(0, "exec %s", argv[2]);
}

/* service CMD...: runs CMD under both, as systemd 252 runs journald
 * (SystemCallFilter=@system-service and MemoryDenyWriteExecute=yes). */
static int m_service(int argc, char **argv)
{
	CHECK(argc > 1, "usage: service CMD...");
	CHECK(filter_nopkey(EPERM) && filter_mdwe(), "seccomp");
	execv(argv[1], argv + 1);
	CHECK(0, "exec %s", argv[1]);
}

/* kmdwe CMD...: runs CMD under the kernel's own MemoryDenyWriteExecute
 * (PR_SET_MDWE, Linux 6.3 and later), as systemd 254 and later set it;
 * exits 77 where the kernel lacks it. */
static int m_kmdwe(int argc, char **argv)
{
	CHECK(argc > 1, "usage: kmdwe CMD...");
	if (prctl(65 /* PR_SET_MDWE */, 1 /* PR_MDWE_REFUSE_EXEC_GAIN */, 0, 0, 0) != 0) {
		printf("SKIP kmdwe: PR_SET_MDWE fails (%s): Linux 6.3 or later has it\n",
		       strerror(errno));
		return 77;
	}
	execv(argv[1], argv + 1);
	CHECK(0, "exec %s", argv[1]);
}

const struct mode harden_modes[] = {
	{ "chdir-dlopen", "DIR LIB", "dlopen after chdir (relative preload path)", m_chdir_dlopen },
	{ "fd2", "FILE LIB", "descriptor 2 reused for FILE, then dlopen", m_fd2 },
	{ "iconv-dlopen", "LIB SECONDS", "iconv_open and dlopen in two threads", m_iconv_dlopen },
	{ "fork-scan", "LIB N", "fork while another thread scans", m_fork_scan },
	{ "cancel-scan", "LIB1 LIB2", "cancel a thread during a scan", m_cancel_scan },
	{ "jump-scan", "LIB1 LIB2", "siglongjmp out of a scan", m_jump_scan },
	{ "pkey-free", "", "free xom's key, allow all keys, read own code", m_pkey_free },
	{ "pkey-free-raw", "[LIB]", "the same with raw system calls, then dlopen LIB", m_pkey_free_raw },
	{ "vmreadv", "", "process_vm_readv of own code", m_vmreadv },
	{ "procmem", "", "/proc/self/mem read of own code", m_procmem },
	{ "maxmaps", "N", "map N more pages", m_maxmaps },
	{ "unprotect-code", "[mprotect]", "pkey_mprotect (or mprotect) own code back to readable, read it", m_unprotect_code },
	{ "tamper", "INDEX", "make a store's plans disagree with the files", m_tamper },
	{ "damage", "INDEX alone|set|both|old NAME", "break the checksum of the plans of files named NAME, alone, in sets or both; or make them all of the format before", m_damage },
	{ "forge", "textrel|noshdr IN OUT", "copy an ELF file, same build-id, another plan", m_forge },
	{ "runas", "UID [VAR=VALUE...] CMD...", "run CMD as UID", m_runas },
	{ "mdwe", "CMD...", "run CMD under a MemoryDenyWriteExecute filter", m_mdwe },
	{ "nopkey", "EPERM|ENOSYS CMD...", "run CMD where seccomp refuses pkey_alloc, pkey_mprotect, pkey_free", m_nopkey },
	{ "service", "CMD...", "run CMD under both filters, as systemd 252 runs journald", m_service },
	{ "kmdwe", "CMD...", "run CMD under the kernel's PR_SET_MDWE", m_kmdwe },
	{ NULL, NULL, NULL, NULL },
};
