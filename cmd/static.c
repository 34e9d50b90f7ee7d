/*
 * static.c - xom run for a statically linked program.  No dynamic linker
 * runs in it, so neither door can load the runtime into it; xom protects
 * it from outside instead, with ptrace:
 *
 *   1. the child is seized before it execs PROG, and stops at the exec
 *      event, before PROG's first instruction, with one thread;
 *   2. PROG is planned as the doors plan it (the stores, else xom-plan
 *      into the user's cache);
 *   3. system calls are injected into the stopped child through a syscall
 *      instruction of its vDSO: pkey_alloc(0, PKEY_DISABLE_ACCESS), which
 *      also sets access-disable for the new key in the calling thread's
 *      PKRU (the only thread; every thread it creates inherits PKRU), then
 *      pkey_mprotect(PROT_EXEC, key) on the plan's runs, and mseal with
 *      seal=1; the registers are put back as execve left them;
 *   4. xom stays attached to PROG's threads, without tracing system calls,
 *      only to see the SIGSEGV of a blocked read (SEGV_PKUERR with its
 *      key) and name the page and the reader in one line, as the doors'
 *      fault handler does; every signal is passed on unchanged.
 *
 * Anything that fails before PROG runs leaves it as the kernel mapped it,
 * with one line, or refuses it under require=1.
 */
#include <cpuid.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../loader/options.h"
#include "cache/cache.h"
#include "cmd.h"
#include "static.h"

#define SYS_mseal_ 462          /* Linux 6.10; not in every libc's headers yet */
#define PAGE 4096ull

/* ---- what xom can do here ------------------------------------------------ */

/* Why this machine cannot give PROG a key, or NULL: CPUID.(EAX=7,ECX=0):ECX
 * bit 3 is PKU, bit 4 OSPKE (the kernel enabled it).  The child runs on
 * this CPU and under this kernel, so xom can ask before it forks. */
static const char *no_keys(void)
{
	unsigned a, b, c = 0, d;

	if (__get_cpuid_max(0, NULL) < 7)
		return "this CPU has no memory protection keys (PKU)";
	__cpuid_count(7, 0, a, b, c, d);
	(void)a, (void)b, (void)d;
	if (!(c & 8))
		return "this CPU has no memory protection keys (PKU)";
	if (!(c & 16))
		return "the kernel has not enabled memory protection keys (no OSPKE)";
	return NULL;
}

int static_quiet(const struct static_opts *so)
{
	return so->o.notice == XOM_NOTICE_OFF || so->o.notice == XOM_NOTICE_DONE;
}

int static_options(struct static_opts *so)
{
	char err[512];
	int require;

	memset(so, 0, sizeof *so);
	if (xom_options_parse(getenv("XOM_OPTIONS"), &so->o, so->buf, sizeof so->buf,
	                      &require, err, sizeof err) != 0) {
		say("XOM_OPTIONS: %s", err);
		return -1;
	}
	so->why_not = no_keys();
	return 0;
}

/* ---- the stopped child ----------------------------------------------------- */

static int wait_tid(pid_t tid, int *st)
{
	pid_t r;

	while ((r = waitpid(tid, st, __WALL)) < 0 && errno == EINTR)
		;
	return r == tid ? 0 : -1;
}

/* Signals that reach the child while xom works on it are held here and
 * sent again once it runs. */
struct held {
	int sig[16];
	int n;
};

/* Lets tid run to its next syscall stop (entry or exit); the signals that
 * stop it on the way are held.  0, or -1 when the child is gone or ptrace
 * failed. */
static int to_syscall_stop(pid_t tid, struct held *h)
{
	for (;;) {
		int st;
		if (ptrace(PTRACE_SYSCALL, tid, 0, 0) != 0 || wait_tid(tid, &st) != 0
		    || !WIFSTOPPED(st))
			return -1;
		if (WSTOPSIG(st) == (SIGTRAP | 0x80))
			return 0;
		if ((st >> 16) == 0 && h->n < (int)(sizeof h->sig / sizeof h->sig[0]))
			h->sig[h->n++] = WSTOPSIG(st);
	}
}

/* The child at a syscall stop, its registers as execve left them, and a
 * syscall instruction to run injected calls with. */
struct inj {
	pid_t pid;
	struct user_regs_struct saved;
	unsigned long sc;
	struct held held;
	int lost;               /* the child died or ptrace failed */
};

/* Runs one system call in the child; its result (-errno on failure), or
 * -EIO when the child could not be made to run it (j->lost). */
static long inject(struct inj *j, long nr, long a, long b, long c, long d)
{
	struct user_regs_struct r = j->saved;

	if (j->lost)
		return -EIO;
	r.rip = j->sc;
	r.rax = (unsigned long)nr;
	r.orig_rax = (unsigned long)-1;
	r.rdi = (unsigned long)a;
	r.rsi = (unsigned long)b;
	r.rdx = (unsigned long)c;
	r.r10 = (unsigned long)d;
	if (ptrace(PTRACE_SETREGS, j->pid, 0, &r) != 0
	    || to_syscall_stop(j->pid, &j->held) != 0      /* entry */
	    || to_syscall_stop(j->pid, &j->held) != 0      /* exit */
	    || ptrace(PTRACE_GETREGS, j->pid, 0, &r) != 0) {
		j->lost = 1;
		return -EIO;
	}
	return (long)r.rax;
}

/* A syscall instruction (0f 05) in the child's vDSO, read through
 * /proc/PID/mem; 0 when there is none.  Only its two bytes run: the
 * injected call stops at its exit, before the next instruction. */
static unsigned long find_syscall(pid_t pid)
{
	char path[64], line[512];
	unsigned long lo = 0, hi = 0, at = 0;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			break;
	fclose(f);
	if (!hi || hi <= lo || hi - lo > (1ul << 20))
		return 0;
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned char *buf = malloc(hi - lo);
	if (fd >= 0 && buf && pread(fd, buf, hi - lo, (off_t)lo) == (ssize_t)(hi - lo)) {
		unsigned char *p = memmem(buf, hi - lo, "\x0f\x05", 2);
		if (p)
			at = lo + (unsigned long)(p - buf);
	}
	free(buf);
	if (fd >= 0)
		close(fd);
	return at;
}

/* AT_ENTRY from the child's auxiliary vector; 0 when it cannot be read. */
static uint64_t aux_entry(pid_t pid)
{
	char path[64];
	uint64_t v[2], entry = 0;

	snprintf(path, sizeof path, "/proc/%d/auxv", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (read(fd, v, sizeof v) == (ssize_t)sizeof v && v[0] != AT_NULL)
		if (v[0] == AT_ENTRY)
			entry = v[1];
	close(fd);
	return entry;
}

/* ---- the image and its plan --------------------------------------------------- */


/* Reads the ELF header and loadable segments of the child's program
 * (/proc/PID/exe: the file the kernel mapped, whatever its path says now).
 * 0, or -1 with why. */
static int read_image(pid_t pid, struct static_image *im, Elf64_Phdr *ph, int *nph,
                      Elf64_Ehdr *eh, const char **why)
{
	char exe[64];
	ssize_t n;

	snprintf(exe, sizeof exe, "/proc/%d/exe", (int)pid);
	if ((n = readlink(exe, im->path, sizeof im->path - 1)) < 0) {
		*why = "cannot read its /proc/PID/exe";
		return -1;
	}
	im->path[n] = 0;
	int fd = open(exe, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*why = "cannot open its program file";
		return -1;
	}
	int ok = pread(fd, eh, sizeof *eh, 0) == (ssize_t)sizeof *eh
		&& !memcmp(eh->e_ident, ELFMAG, SELFMAG)
		&& eh->e_ident[EI_CLASS] == ELFCLASS64 && eh->e_machine == EM_X86_64
		&& eh->e_phentsize == sizeof *ph && eh->e_phnum > 0 && eh->e_phnum <= 64
		&& pread(fd, ph, eh->e_phnum * sizeof *ph, (off_t)eh->e_phoff)
		   == (ssize_t)(eh->e_phnum * sizeof *ph)
		&& file_key(exe, &im->key) == 0;
	close(fd);
	if (!ok) {
		*why = "its ELF headers cannot be read";
		return -1;
	}
	*nph = eh->e_phnum;
	im->is_static = 1;
	im->lo = UINT64_MAX;
	im->hi = 0;
	for (int i = 0; i < *nph; i++) {
		if (ph[i].p_type == PT_INTERP)
			im->is_static = 0;
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (ph[i].p_vaddr < im->lo)
			im->lo = ph[i].p_vaddr;
		if (ph[i].p_vaddr + ph[i].p_memsz > im->hi)
			im->hi = ph[i].p_vaddr + ph[i].p_memsz;
	}
	return 0;
}

/* Whether the plan's segments are the file's executable PT_LOADs, as the
 * runtime checks before it trusts a plan found by build-id. */
static int segs_match(const struct xom_plan_head *h, const Elf64_Phdr *ph, int nph)
{
	const struct xom_plan_seg *s = xom_plan_segs(h);
	unsigned n = 0;

	for (int i = 0; i < nph; i++) {
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
			continue;
		if (n >= h->nsegs || s[n].vaddr != ph[i].p_vaddr || s[n].memsz != ph[i].p_memsz)
			return 0;
		n++;
	}
	return n == h->nsegs;
}

/* The directories of the stores, in the runtime's order. */
static const char *store_dir(const struct static_opts *so, int i, char *buf,
                             size_t cap)
{
	struct xom_dirs d;

	xom_store_dirs(&so->o, 0, (unsigned)geteuid(), lstat, &d);
	return xom_dir_path(&d, i, buf, cap);
}

/* A malloc'd copy of the plan for k from the first store that has it, and
 * that store's index in *which; NULL when none has it. */
static struct xom_plan_head *plan_find(const struct static_opts *so,
                                       const struct xom_plan_key *k, int *which)
{
	char dir[PATH_MAX], why[PATH_MAX + 64];
	struct xom_plan_head *copy = NULL;

	for (int i = 0; i < XOM_NSTORES && !copy; i++) {
		struct store_index ix;
		if (!store_dir(so, i, dir, sizeof dir)
		    || store_trusted(dir, i == XOM_STORE_SYSTEM, why, sizeof why) != 0
		    || store_map(dir, &ix) != 0)
			continue;
		const struct xom_plan_head *p = store_find(&ix, k);
		if (p && (copy = malloc(p->total))) {
			memcpy(copy, p, p->total);
			*which = i;
		}
		store_unmap(&ix);
	}
	return copy;
}

/* Scans path with xom-plan into the user's cache, or the private fallback
 * folder when there is no cache, as the runtime's helper does.  0, or -1
 * with why (in buf). */
static int plan_make(const struct static_opts *so, const char *path,
                     const char *name, const struct xom_plan_key *k, char *buf,
                     size_t cap)
{
	char dir[PATH_MAX], helper[PATH_MAX];
	struct cache_files l = { 0 };
	struct scan_result r;
	int rc = -1;

	if (!find_own("xom-plan", helper, sizeof helper)) {
		snprintf(buf, cap, "cannot find xom-plan beside %s or in %s/../lib/xom",
		         self_dir(), self_dir());
		return -1;
	}
	if (xom_cache_dir(&so->o, dir, sizeof dir) != XOM_CACHE_DIR
	    && !store_dir(so, XOM_STORE_FALLBACK, dir, sizeof dir)) {
		snprintf(buf, cap, "no plan, and no folder to keep one in");
		return -1;
	}
	if (files_add_path(&l, path) != XOM_EXIT_OK || l.n != 1) {
		snprintf(buf, cap, "cannot read it to plan it");
		files_free(&l);
		return -1;
	}
	if (so->o.verbose)
		say("%s: no plan yet: scanning it for the first time", name);
	struct cache_file *todo[1] = { &l.f[0] };
	l.f[0].key = *k;
	struct scan_opts o = { dir, 0, 1, 0, helper };
	if (scan_files(todo, 1, &o, &r) == XOM_EXIT_OK && r.built == 1)
		rc = 0;
	else
		snprintf(buf, cap, "cannot be analysed%s%s", l.f[0].why ? ": " : "",
		         l.f[0].why ? l.f[0].why : "");
	files_free(&l);
	return rc;
}

/* ---- applying the plan from outside ------------------------------------------ */

/* Puts the runs [0, upto) back to r-x with the default key. */
static void undo(struct inj *j, const struct xom_plan_head *h, uint64_t bias,
                 uint32_t upto)
{
	const struct xom_plan_run *r = xom_plan_runs(h);

	for (uint32_t i = 0; i < upto; i++)
		inject(j, SYS_pkey_mprotect, (long)(bias + r[i].start),
		       (long)(r[i].end - r[i].start), PROT_READ | PROT_EXEC, 0);
}

/* Applies plan h to the child at j; pages made execute-only, or -1 with
 * the reason in buf (everything undone that could be). */
static long apply(struct inj *j, const struct static_opts *so,
                  const struct xom_plan_head *h, struct static_image *im,
                  char *buf, size_t cap)
{
	const struct xom_plan_run *r = xom_plan_runs(h);
	long pages = 0;

	if (so->o.backend == XOM_BACKEND_NONE) {
		for (uint32_t i = 0; i < h->nruns; i++)
			pages += (long)((r[i].end - r[i].start) / PAGE);
		return pages;
	}
	long key = inject(j, SYS_pkey_alloc, 0, PKEY_DISABLE_ACCESS, 0, 0);
	if (key <= 0) {
		snprintf(buf, cap, "pkey_alloc failed in it (errno %ld)%s", -key,
		         key == -EPERM || key == -ENOSYS
		         ? ": a seccomp filter refuses it" : "");
		return -1;
	}
	im->pkey = (int)key;
	for (uint32_t i = 0; i < h->nruns; i++) {
		long rc = inject(j, SYS_pkey_mprotect, (long)(im->bias + r[i].start),
		                 (long)(r[i].end - r[i].start), PROT_EXEC, key);
		if (rc != 0) {
			snprintf(buf, cap, "pkey_mprotect failed in it (errno %ld)", -rc);
			undo(j, h, im->bias, i);
			inject(j, SYS_pkey_free, key, 0, 0, 0);
			im->pkey = 0;
			return -1;
		}
		pages += (long)((r[i].end - r[i].start) / PAGE);
	}
	for (uint32_t i = 0; so->o.seal && i < h->nruns; i++) {
		long rc = inject(j, SYS_mseal_, (long)(im->bias + r[i].start),
		                 (long)(r[i].end - r[i].start), 0, 0);
		if (rc == 0)
			continue;
		/* Sealing asks for more than protection: require=1 refuses a
		 * program it cannot seal, as the doors do; otherwise the pages
		 * stay execute-only, unsealed, and one line says so. */
		const char *why = rc == -ENOSYS || rc == -EINVAL
			? "; mseal needs Linux 6.10 or later" : "";
		if (so->o.require) {
			snprintf(buf, cap, "cannot seal its execute-only pages (errno %ld)%s",
			         -rc, why);
			return -1;
		}
		if (!static_quiet(so))
			say("%s: cannot seal its execute-only pages (errno %ld)%s", im->path,
			    -rc, why);
		break;
	}
	return pages;
}

/* Plans and protects the image the child at j has just exec'd.  1 when it
 * is protected, 0 when there was nothing to do (a dynamically linked image,
 * which the preload door protects; a plan that keeps every page readable),
 * -1 with the reason in buf. */
static int protect_image(struct inj *j, const struct static_opts *so,
                         struct static_image *im, char *buf, size_t cap)
{
	Elf64_Phdr ph[64];
	Elf64_Ehdr eh;
	const char *why;
	int nph, which = 0;

	memset(im, 0, sizeof *im);
	if (read_image(j->pid, im, ph, &nph, &eh, &why) != 0) {
		snprintf(buf, cap, "%s", why);
		return -1;
	}
	if (!im->is_static)
		return 0;
	if (eh.e_type == ET_DYN) {
		uint64_t entry = aux_entry(j->pid);
		if (!entry || entry < eh.e_entry) {
			snprintf(buf, cap, "cannot find where it is loaded");
			return -1;
		}
		im->bias = entry - eh.e_entry;
	}
	struct xom_plan_head *h = plan_find(so, &im->key, &which);
	if (!h) {
		char exe[64];
		snprintf(exe, sizeof exe, "/proc/%d/exe", (int)j->pid);
		if (plan_make(so, exe, im->path, &im->key, buf, cap) != 0)
			return -1;
		if (!(h = plan_find(so, &im->key, &which))) {
			snprintf(buf, cap, "its plan was made but cannot be read back");
			return -1;
		}
	}
	im->pkey = 0;
	if (h->whole_reason != XOM_WHOLE_NONE || !h->nruns) {
		if (so->o.verbose)
			say("%s: every executable page stays readable (its plan keeps them)", im->path);
		free(h);
		return 0;
	}
	if (!segs_match(h, ph, nph)) {
		snprintf(buf, cap, "its plan does not match its segments");
		free(h);
		return -1;
	}
	if (!(j->sc = find_syscall(j->pid))) {
		snprintf(buf, cap, "no vDSO with a syscall instruction to run xom's calls with");
		free(h);
		return -1;
	}
	long pages = apply(j, so, h, im, buf, cap);
	if (pages >= 0 && so->o.verbose)
		say("%s: %ld of %u executable pages %s execute-only (key %d, from outside)%s",
		    im->path, pages, h->exec_pages,
		    so->o.backend == XOM_BACKEND_NONE ? "would be made" : "made", im->pkey,
		    so->o.backend == XOM_BACKEND_NONE ? "; backend=none changes nothing" : "");
	free(h);
	return pages < 0 ? -1 : 1;
}

/* ---- the tracer -------------------------------------------------------------- */

int static_seize(pid_t child, char *buf, size_t cap)
{
	char path[64], line[256];
	long tracer = 0;
	/* Threads (clone without SIGCHLD) are traced too, so that a blocked
	 * read in any of them is seen; forked children are not (they inherit
	 * the key and PKRU, and their own exec runs a new image). */
	long opts = PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL
		| PTRACE_O_TRACECLONE;

	if (ptrace(PTRACE_SEIZE, child, 0, opts) == 0)
		return 0;
	int e = errno;
	snprintf(path, sizeof path, "/proc/%d/status", (int)child);
	FILE *f = fopen(path, "re");
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "TracerPid: %ld", &tracer) == 1)
			break;
	if (f)
		fclose(f);
	if (tracer > 0)
		snprintf(buf, cap, "it is already traced by process %ld, so xom cannot apply its plan from outside",
		         tracer);
	else
		snprintf(buf, cap, "ptrace is not allowed here (%s: Yama's ptrace_scope, a seccomp filter or a security module forbids it), so xom cannot apply its plan from outside",
		         strerror(e));
	return -1;
}

/* Resumes tid with sig, or keeps it stopped in a group-stop. */
static void resume(pid_t tid, int sig, int listen)
{
	ptrace(listen ? PTRACE_LISTEN : PTRACE_CONT, tid, 0, (long)sig);
}

/* Puts the child back as execve left it and lets it run. */
static void release(struct inj *j, int detach)
{
	if (!j->lost)
		ptrace(PTRACE_SETREGS, j->pid, 0, &j->saved);
	ptrace(detach ? PTRACE_DETACH : PTRACE_CONT, j->pid, 0, 0);
	for (int i = 0; i < j->held.n; i++)
		kill(j->pid, j->held.sig[i]);
}

/* At the exec event of tid: plans and protects the new image.  Returns 1
 * protected (the child runs, traced), 0 running untraced (nothing to do,
 * or a failure said), -1 refused (the child is killed). */
static int at_exec(struct static_run *sr, pid_t tid)
{
	char why[PATH_MAX + 256];
	struct inj j = { .pid = tid };

	/* The exec event comes inside execve; its syscall-exit stop is the
	 * first clean point in user space. */
	if (to_syscall_stop(tid, &j.held) != 0
	    || ptrace(PTRACE_GETREGS, tid, 0, &j.saved) != 0) {
		snprintf(why, sizeof why, "it could not be stopped after exec");
		j.lost = 1;
	}
	int r = j.lost ? -1 : protect_image(&j, sr->so, &sr->im, why, sizeof why);
	/* With backend=none xom watches all the same, so that a dry run
	 * goes through the tracer as a protected run does. */
	if (r > 0) {
		release(&j, 0);
		return 1;
	}
	if (r < 0 && sr->so->o.require) {
		say("%s: cannot protect it: %s; refused (require=1)",
		    sr->im.path[0] ? sr->im.path : sr->prog, why);
		kill(tid, SIGKILL);
		return -1;
	}
	if (r < 0 && !static_quiet(sr->so))
		say("%s: cannot protect it: %s; running it unprotected",
		    sr->im.path[0] ? sr->im.path : sr->prog, why);
	release(&j, 1);
	return 0;
}

int static_start(struct static_run *sr)
{
	int st;

	for (;;) {
		if (wait_tid(sr->pid, &st) != 0)
			return -1;
		if (!WIFSTOPPED(st)) {
			/* exec failed: the child said why and exited. */
			sr->done = 1;
			sr->status = st;
			return 0;
		}
		if ((st >> 8) == (SIGTRAP | (PTRACE_EVENT_EXEC << 8)))
			break;
		/* A signal before exec (or the seize's own stop): pass it on. */
		resume(sr->pid, (st >> 16) ? 0 : WSTOPSIG(st), 0);
	}
	int r = at_exec(sr, sr->pid);
	sr->traced = r > 0;
	return r < 0 ? RUN_EXIT_CANNOT : 0;
}

/* ---- naming a blocked read ------------------------------------------------ */

/* Maps the symbol file of the image's key from the first store that has
 * a trusted one; NULL when none does. */
static const struct xom_syms_head *syms_map(const struct static_run *sr, size_t *len)
{
	char dir[PATH_MAX], path[PATH_MAX + XOM_KEY_NAME_MAX + 16], key[XOM_KEY_NAME_MAX];
	struct stat st;
	const char *why;

	xom_key_name(&sr->im.key, key, sizeof key);
	for (int i = 0; i < XOM_NSTORES; i++) {
		if (!store_dir(sr->so, i, dir, sizeof dir))
			continue;
		snprintf(path, sizeof path, "%s/" XOM_STORE_SYMS "/%s", dir, key);
		int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		void *p = MAP_FAILED;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && !(st.st_mode & 022)
		    && (st.st_uid == 0 || st.st_uid == geteuid())
		    && st.st_size >= (off_t)sizeof(struct xom_syms_head)
		    && st.st_size <= (off_t)XOM_SYMS_MAX)
			p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		if (p == MAP_FAILED)
			continue;
		if (xom_syms_check(p, (size_t)st.st_size, &why) == 0) {
			*len = (size_t)st.st_size;
			return p;
		}
		munmap(p, (size_t)st.st_size);
	}
	return NULL;
}

/* "0x... (/path+0x..., in sym+0x...)", as the doors' fault handler names
 * a place. */
static void place(const struct static_run *sr, uint64_t addr, char *buf, size_t cap)
{
	uint64_t v = addr - sr->im.bias, off = 0;
	size_t len = 0;

	if (addr < sr->im.bias || v < sr->im.lo || v >= sr->im.hi) {
		snprintf(buf, cap, "%#lx (unknown object)", (unsigned long)addr);
		return;
	}
	const struct xom_syms_head *syms = syms_map(sr, &len);
	const char *sym = syms ? xom_syms_lookup(syms, v, &off) : NULL;
	if (!sym)
		snprintf(buf, cap, "%#lx (%s+%#lx, no symbol)", (unsigned long)addr,
		         sr->im.path, (unsigned long)v);
	else if (off)
		snprintf(buf, cap, "%#lx (%s+%#lx, in %s+%#lx)", (unsigned long)addr,
		         sr->im.path, (unsigned long)v, sym, (unsigned long)off);
	else
		snprintf(buf, cap, "%#lx (%s+%#lx, in %s)", (unsigned long)addr,
		         sr->im.path, (unsigned long)v, sym);
	if (syms)
		munmap((void *)syms, len);
}

/* A signal-delivery stop: names a blocked read of the image's code, then
 * lets the signal go on as it would have without xom. */
static void on_signal(struct static_run *sr, pid_t tid, int sig)
{
	char what[PATH_MAX + 160], by[PATH_MAX + 160];
	struct user_regs_struct r;
	siginfo_t si;

	if (sig == SIGSEGV && sr->im.pkey > 0
	    && ptrace(PTRACE_GETSIGINFO, tid, 0, &si) == 0
	    && si.si_code == SEGV_PKUERR && (int)si.si_pkey == sr->im.pkey
	    && ptrace(PTRACE_GETREGS, tid, 0, &r) == 0) {
		place(sr, (uint64_t)(uintptr_t)si.si_addr, what, sizeof what);
		place(sr, r.rip, by, sizeof by);
		say("blocked read of %s by instruction at %s, pid %d", what, by, (int)sr->pid);
	}
	resume(tid, sig, 0);
}

int static_event(struct static_run *sr, pid_t tid, int st)
{
	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		if (tid != sr->pid)
			return 0;
		sr->done = 1;
		sr->status = st;
		return 1;
	}
	if (!WIFSTOPPED(st))
		return 0;
	int sig = WSTOPSIG(st), event = st >> 16;
	if (event == PTRACE_EVENT_EXEC) {
		/* The traced process ran a new program: a static one is
		 * protected afresh, with a key of its own (or killed under
		 * require=1, and its death comes next). */
		at_exec(sr, tid);
		return 0;
	}
	if (event == PTRACE_EVENT_STOP)
		/* A group-stop (SIGSTOP, SIGTSTP...) stays one; the stop of a
		 * new thread, which the seize gives, ends at once. */
		resume(tid, 0, sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN
		               || sig == SIGTTOU);
	else if (event)
		resume(tid, 0, 0);
	else if (sig == (SIGTRAP | 0x80))
		resume(tid, 0, 0);
	else
		on_signal(sr, tid, sig);
	return 0;
}
