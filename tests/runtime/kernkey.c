/*
 * kernkey-test: the runtime's second way to protect (loader/kernkey.c)
 * on its failure paths, which every machine can take, PKU or not: it is
 * linked with the runtime's own objects and calls xom_apply on an
 * "object" of its making, a file of three pages mapped r-x, under a
 * seccomp filter like systemd 252's MemoryDenyWriteExecute=yes.
 *
 *   kernkey-test CASE      runs one case in a child; prints PASS/FAIL
 *
 * Each case knows what the host must hold afterwards: the bytes that were
 * mapped, from the file that was mapped, and the host alive.  Where the
 * CPU has protection keys (the emulated-PKU guest) the protected cases
 * also check that the code is unreadable.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../loader/loader.h"
#include "../check.h"

#define PG 4096

static const char *test_name;
static int failed;

/* A failed check (../check.h) ends the case. */
#define CHECK_FAILED do { failed = 1; return; } while (0)

/* systemd 252's MemoryDenyWriteExecute=yes: mprotect and pkey_mprotect
 * with PROT_EXEC, and mmap with PROT_WRITE|PROT_EXEC, fail with EPERM. */
static void filter_mdwe(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mprotect, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pkey_mprotect, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 3, 2),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 4, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_WRITE, 0, 2),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
	    || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
		printf("FAIL %s: cannot install the seccomp filter: %s\n", test_name, strerror(errno));
		exit(1);
	}
}

/* Whether the kernel's copy from p fails (reads denied). */
static int unreadable(const void *p)
{
	int fd[2], r;

	if (pipe(fd) != 0)
		return 0;
	r = write(fd[1], p, 1) < 0 && errno == EFAULT;
	close(fd[0]);
	close(fd[1]);
	return r;
}

/* The file behind the mapping at p, from /proc/self/maps. */
static void mapped_file(const void *p, char *out, size_t cap)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long lo, hi;

	snprintf(out, cap, "?");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2
		    && (uintptr_t)p >= lo && (uintptr_t)p < hi) {
			char *s = strchr(line, '/');
			snprintf(out, cap, "%s", s ? s : "(none)");
			out[strcspn(out, "\n")] = 0;
		}
	if (f)
		fclose(f);
}

/* The object: DIR/obj, three pages of 'A', 'B', 'C', mapped r-x; a plan
 * of one run of the first two pages. */
static char obj_path[256], copy_path[256];
static unsigned char *obj;
static ElfW(Phdr) ph = { .p_type = PT_LOAD, .p_flags = PF_R | PF_X,
                         .p_filesz = 3 * PG, .p_memsz = 3 * PG, .p_align = PG };
static union { struct xom_plan_head h; char room[512]; } plan;
static struct xom_plan_key key;

static void make_object(const char *dir)
{
	char page[PG];
	snprintf(obj_path, sizeof(obj_path), "%s/obj", dir);
	snprintf(copy_path, sizeof(copy_path), "%s/copy", dir);
	int fd = open(obj_path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	for (int i = 0; i < 3; i++) {
		memset(page, 'A' + i, PG);
		if (write(fd, page, PG) != PG)
			exit(1);
	}
	obj = mmap(NULL, 3 * PG, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	/* The same bytes in a second file. */
	fd = open(copy_path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	for (int i = 0; i < 3; i++) {
		memset(page, 'A' + i, PG);
		if (write(fd, page, PG) != PG)
			exit(1);
	}
	close(fd);
	plan.h.nsegs = 1;
	plan.h.nruns = 1;
	plan.h.build_id_len = 20;       /* no code checksum: the build-id vouches */
	plan.h.exec_pages = 3;
	plan.h.xom_pages = 2;
	struct xom_plan_seg *s = (struct xom_plan_seg *)(&plan.h + 1);
	s->memsz = s->filesz = 3 * PG;
	struct xom_plan_run *r = (struct xom_plan_run *)(s + 1);
	r->end = 2 * PG;
}

static void poke(int page, char c)
{
	mprotect(obj + page * PG, PG, PROT_READ | PROT_WRITE);
	memset(obj + page * PG, c, PG);
	mprotect(obj + page * PG, PG, PROT_READ | PROT_EXEC);
}

static int apply(const char *path)
{
	struct xom_target t = { path, (uintptr_t)obj, &ph, 1, 0, &key };
	uintptr_t probe;

	return xom_apply(&t, &plan.h, &probe);
}

static int have_pku(void)
{
	int k = (int)syscall(SYS_pkey_alloc, 0, 0);
	if (k < 0)
		return 0;
	syscall(SYS_pkey_free, k);
	return 1;
}

/* The mapped bytes differ from the file's: nothing is mapped again, and
 * the host keeps its own bytes. */
static void c_changed(int pku)
{
	(void)pku;
	poke(0, 'Z');
	filter_mdwe();
	int rc = apply(obj_path);
	CHECK(rc == XOM_UNPROTECTED, "xom_apply %d", rc);
	CHECK(obj[0] == 'Z' && obj[PG] == 'B', "bytes now %c %c, were Z B", obj[0], obj[PG]);
	CHECK(!unreadable(obj) && !unreadable(obj + PG), "left unreadable");
	printf("PASS %s\n", test_name);
}

/* The second of two runs differs: the first, made execute-only where
 * the kernel has keys, is given back from the same file, and the second
 * is left alone. */
static void c_changed_later(int pku)
{
	struct xom_plan_run *r = (struct xom_plan_run *)((struct xom_plan_seg *)(&plan.h + 1) + 1);

	(void)pku;
	plan.h.nruns = 2;
	r[0].start = 0, r[0].end = PG;
	r[1].start = PG, r[1].end = 2 * PG;
	poke(1, 'Y');
	filter_mdwe();
	int rc = apply(obj_path);
	CHECK(rc == XOM_UNPROTECTED, "xom_apply %d", rc);
	CHECK(obj[0] == 'A' && obj[PG] == 'Y', "bytes now %c %c, were A Y", obj[0], obj[PG]);
	CHECK(!unreadable(obj) && !unreadable(obj + PG), "left unreadable");
	printf("PASS %s\n", test_name);
}

/* No filter: mprotect(PROT_EXEC) is the way.  Where the kernel gives no
 * execute-only key (no PKU) the range is given back by mprotect, never
 * from the file, whose bytes differ. */
static void c_mprotect(int pku)
{
	poke(0, 'Z');
	xom_kernel_refused("pkey_alloc", EPERM);
	int rc = apply(obj_path);
	if (pku) {
		/* Protected: the bytes cannot be looked at. */
		CHECK(rc == XOM_APPLIED && unreadable(obj) && unreadable(obj + PG),
		      "xom_apply %d, unreadable %d %d", rc, unreadable(obj), unreadable(obj + PG));
	} else {
		CHECK(rc == XOM_UNPROTECTED && !unreadable(obj), "xom_apply %d", rc);
		CHECK(obj[0] == 'Z', "bytes now %c, were Z", obj[0]);
	}
	printf("PASS %s\n", test_name);
}

/* No room for the temporary copy: the mmap fails, the host lives on. */
static void c_no_room(int pku)
{
	(void)pku;
	struct rlimit rl = { 0, 0 };
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = 0;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmSize:", 7))
			kb = atol(line + 7);
	if (f)
		fclose(f);
	filter_mdwe();
	getrlimit(RLIMIT_AS, &rl);
	rl.rlim_cur = (rlim_t)kb * 1024 + PG / 2;
	setrlimit(RLIMIT_AS, &rl);
	int rc = apply(obj_path);
	CHECK(rc == XOM_UNPROTECTED, "xom_apply %d", rc);
	CHECK(obj[0] == 'A' && !unreadable(obj), "bytes now %c", obj[0]);
	printf("PASS %s\n", test_name);
}

/* The path xom was given names another file with the same bytes (a
 * plan's recorded path): the code is mapped again from the file that is
 * mapped, never from that one, so writes to it cannot reach the code. */
static void c_other_path(int pku)
{
	char file[512];

	filter_mdwe();
	int rc = apply(copy_path);
	mapped_file(obj, file, sizeof(file));
	CHECK(!strcmp(file, obj_path), "code now mapped from %s", file);
	int fd = open(copy_path, O_WRONLY);
	CHECK(fd >= 0 && pwrite(fd, "\xcc\xcc", 2, 0) == 2, "write the copy");
	close(fd);
	if (pku) {
		CHECK(rc == XOM_APPLIED && unreadable(obj), "xom_apply %d", rc);
	} else {
		CHECK(rc == XOM_UNPROTECTED && obj[0] == 'A', "xom_apply %d, byte %c", rc, obj[0]);
	}
	printf("PASS %s\n", test_name);
}

/* The whole /proc/self/maps line of the mapping that holds p (malloc'd). */
static __attribute__((noinline)) char *maps_line_of(const void *p)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char *l = NULL;
	size_t n = 0;
	unsigned long lo, hi;

	while (f && getline(&l, &n, f) > 0)
		if (sscanf(l, "%lx-%lx", &lo, &hi) == 2 && (uintptr_t)p >= lo && (uintptr_t)p < hi)
			break;
	if (f)
		fclose(f);
	return l;
}

/* A file whose name is longer than the runtime's buffer for a maps line,
 * mapped below the object, and whose name's tail reads like the
 * object's maps line naming the copy: that tail is not a line, and the
 * code is never mapped again from the copy. */
static void c_long_line(int pku)
{
	char fake[300], comp[201], *dir = strdup(obj_path), *line;
	struct stat st;

	*strrchr(dir, '/') = 0;
	CHECK(stat(copy_path, &st) == 0, "stat the copy");
	snprintf(fake, sizeof(fake), "%lx-%lx r-xp 00000000 %02x:%02x %lu ",
	         (unsigned long)obj, (unsigned long)obj + 3 * PG,
	         major(st.st_dev), minor(st.st_dev), (unsigned long)st.st_ino);
	/* DIR/p.../p.../PAD/FAKE/DIR-again/copy: the tail after FAKE names
	 * the copy itself. */
	memset(comp, 'p', 200);
	comp[200] = 0;
	int d = open(dir, O_RDONLY | O_DIRECTORY), pad = 1;
	for (int i = 0; i < 22; i++) {
		mkdirat(d, comp, 0755);
		int e = openat(d, comp, O_RDONLY | O_DIRECTORY);
		close(d);
		d = e;
	}
	void *low = (void *)(((uintptr_t)obj - (1ul << 28)) & ~(uintptr_t)(PG - 1));
	for (int tries = 0; tries < 4; tries++) {
		char padname[260], tail[600];
		memset(padname, 'q', (size_t)pad);
		padname[pad] = 0;
		snprintf(tail, sizeof(tail), "%s/%s%s", padname, fake, dir);
		/* Make the folders of PAD/FAKE/DIR and the file copy in them. */
		int e = dup(d);
		for (char *c = strtok(tail, "/"); c; c = strtok(NULL, "/")) {
			mkdirat(e, c, 0755);
			int f = openat(e, c, O_RDONLY | O_DIRECTORY);
			close(e);
			e = f;
		}
		int fd = openat(e, "copy", O_RDWR | O_CREAT | O_TRUNC, 0644);
		close(e);
		CHECK(fd >= 0 && ftruncate(fd, PG) == 0, "the long file");
		void *m = mmap(low, PG, PROT_READ, MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0);
		close(fd);
		CHECK(m == low, "map the long file");
		line = maps_line_of(low);
		const char *at = line ? strstr(line, fake) : NULL;
		long pos = at ? (long)(at - line) : -1;
		free(line);
		CHECK(pos >= 0, "the fake line is not in the long file's maps line");
		if (pos == 4607)
			break;
		munmap(low, PG);
		pad += 4607 - (int)pos;
		CHECK(pad > 0 && pad < 255, "padding %d", pad);
	}
	filter_mdwe();
	int rc = apply(obj_path);
	char file[512];
	mapped_file(obj, file, sizeof(file));
	CHECK(!strcmp(file, obj_path), "code now mapped from %s", file);
	if (pku)
		CHECK(rc == XOM_APPLIED && unreadable(obj), "xom_apply %d", rc);
	printf("PASS %s\n", test_name);
}

static const struct { const char *name; void (*fn)(int); } cases[] = {
	{ "kernel-key-changed-bytes", c_changed },
	{ "kernel-key-changed-later-page", c_changed_later },
	{ "kernel-key-mprotect-undo", c_mprotect },
	{ "kernel-key-no-room", c_no_room },
	{ "kernel-key-other-path", c_other_path },
	{ "kernel-key-long-maps-line", c_long_line },
};

int main(int argc, char **argv)
{
	int pku = have_pku(), bad = 0;
	char dir[] = "/tmp/xom-kernkey-XXXXXX";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!mkdtemp(dir))
		return 1;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (argc > 1 && strcmp(argv[1], cases[i].name))
			continue;
		pid_t pid = fork();
		if (pid == 0) {
			test_name = cases[i].name;
			xom_log_init(2);
			make_object(dir);
			cases[i].fn(pku);
			_exit(failed);
		}
		int st;
		waitpid(pid, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			if (!WIFEXITED(st))
				printf("FAIL %s: died of signal %d\n", cases[i].name, WTERMSIG(st));
			bad = 1;
		}
	}
	/* Best effort: busybox's rm cannot reach into the long file's
	 * folders, which are longer than PATH_MAX. */
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s 2>/dev/null", dir);
	if (system(cmd) != 0)
		printf("# %s: not all of it removed\n", dir);
	return bad;
}
