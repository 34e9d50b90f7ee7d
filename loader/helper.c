/*
 * helper.c - runs the xom-plan helper for the objects whose plans no store
 * holds, and reads the plans it writes.
 *
 * Phase: start (xom_helper_locate) and object.  The scanner (Capstone and
 * libelf) runs only in the helper process, so no host process ever maps
 * those libraries.  The helper is:
 *   - found once, at start-up, beside this library, as an absolute path:
 *     a relative LD_PRELOAD path must not make a later chdir choose
 *     another program;
 *   - checked before each run (a regular file that nobody else may write,
 *     owned by root or, outside secure-execution mode, by this user) and
 *     run from the descriptor that was checked (execveat);
 *   - started with clone(CLONE_VM | CLONE_VFORK) and no exit signal, so
 *     the host's SIGCHLD handler never sees it and its waitpid(-1) never
 *     reaps it;
 *   - run at most once at a time per process (the object phase is locked),
 *     with every file of the batch in one run;
 *   - given an empty environment.  It is linked statically, so that not
 *     even /etc/ld.so.preload can load xom into it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "loader.h"

/* A scan of the largest libraries takes seconds; a helper silent for this
 * long is stuck, and the dlopen waiting for it must not hang for ever. */
#define HELPER_TIMEOUT_MS 120000
#define MAX_ARGS 1100

static char helper[XOM_PATH_MAX];

void xom_helper_locate(void)
{
	Dl_info info;
	char cwd[XOM_PATH_MAX];

	if (!dladdr((void *)xom_helper_locate, &info) || !info.dli_fname)
		return;
	const char *lib = info.dli_fname;
	const char *slash = strrchr(lib, '/');
	size_t dir = slash ? (size_t)(slash - lib) : 0;
	if (lib[0] == '/') {
		xom_fmt(helper, sizeof(helper), "%.*s/xom-plan", (int)dir, lib);
	} else if (getcwd(cwd, sizeof(cwd))) {
		/* The dynamic linker keeps a relative LD_PRELOAD path as given:
		 * resolve it against the directory it was given in. */
		xom_fmt(helper, sizeof(helper), "%s/%.*s%sxom-plan", cwd, (int)dir,
		        lib, slash ? "/" : "");
	}
}

/* Opens the helper for execveat after checking who may have written it;
 * the descriptor, or -1 after saying why. */
static int open_helper(void)
{
	struct stat st;

	if (!helper[0]) {
		xom_say("cannot locate the xom-plan helper; objects not in a plan store are left unprotected");
		return -1;
	}
	int fd = open(helper, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		xom_say("no scanner: %s (%m); objects not in a plan store are left unprotected",
		        helper);
		return -1;
	}
	const char *why = NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !(st.st_mode & 0111))
		why = "not an executable file";
	else if (st.st_mode & 022)
		why = "writable by others";
	else if (st.st_uid != 0 && (xom_secure || st.st_uid != geteuid()))
		why = xom_secure ? "not owned by root" : "owned by another user";
	if (why) {
		close(fd);
		xom_say("will not run the scanner %s: it is %s", helper, why);
		return -1;
	}
	return fd;
}

struct spawn {
	int exe, out, err;
	char *const *argv;
	int failed;
};

/* The child of the clone: it shares the host's memory until execveat, so
 * it makes raw system calls only and touches nothing but *s. */
static int child(void *arg)
{
	struct spawn *s = arg;
	static char *const envp[] = { NULL };

	if (syscall(SYS_dup2, s->out, 1) < 0
	    || (s->err != 2 && syscall(SYS_dup2, s->err, 2) < 0))
		s->failed = 1;
	else
		syscall(SYS_execveat, s->exe, "", s->argv, envp, AT_EMPTY_PATH);
	s->failed = 1;
	syscall(SYS_exit, 127);
	return 0;
}

/* Starts the helper on argv with stdout on out; its pid, or -1. */
static pid_t start(int exe, int out, char *const *argv)
{
	static char stack[32 << 10] __attribute__((aligned(16)));
	int logfd = xom_log_fd(), err = logfd;

	if (logfd < 0)
		err = open("/dev/null", O_WRONLY | O_CLOEXEC);
	struct spawn s = { exe, out, err < 0 ? 2 : err, argv, 0 };
	/* No exit signal: the host's SIGCHLD handler and its waitpid(-1)
	 * must not see this child. */
	pid_t pid = clone(child, stack + sizeof(stack), CLONE_VM | CLONE_VFORK, &s);
	if (logfd < 0 && err >= 0)
		close(err);
	if (pid > 0 && s.failed) {
		while (syscall(SYS_wait4, pid, NULL, __WCLONE, NULL) < 0 && errno == EINTR)
			;
		return -1;
	}
	return pid;
}

/*
 * Reads the helper's records into private anonymous memory until it closes
 * its end or falls silent for too long.
 */
static char *read_all(int fd, size_t *len, size_t *cap_out)
{
	size_t cap = 64 << 10, n = 0;
	char *buf = mmap(NULL, cap, PROT_READ | PROT_WRITE,
	                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (buf == MAP_FAILED)
		return NULL;
	for (;;) {
		if (n == cap) {
			char *b = cap >= XOM_STORE_MAX ? MAP_FAILED
			          : mremap(buf, cap, cap * 2, MREMAP_MAYMOVE);
			if (b == MAP_FAILED)
				break;
			buf = b;
			cap *= 2;
		}
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long ready = syscall(SYS_poll, &p, 1, HELPER_TIMEOUT_MS);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready <= 0)
			break;
		long r = syscall(SYS_read, fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (r == 0) {
			*len = n;
			*cap_out = cap;
			return buf;
		}
		n += (size_t)r;
	}
	munmap(buf, cap);
	return NULL;
}

/* Splits the helper's output into one plan (or failure) per file. */
static int split_records(char *buf, size_t len, size_t n,
                         const struct xom_plan_head **out, const char **why)
{
	size_t at = 0;

	for (size_t i = 0; i < n; i++) {
		const struct xom_noplan_head *r = (const void *)(buf + at);
		out[i] = NULL;
		why[i] = "the scanner's output ended early";
		if (len - at < sizeof(*r) || r->total > len - at || r->total < sizeof(*r)
		    || r->total % 8)
			return -1;
		if (!memcmp(r->magic, XOM_NOPLAN_MAGIC, 8)) {
			buf[at + r->total - 1] = 0;
			why[i] = (const char *)(r + 1);
		} else if (xom_plan_check(r, r->total, &why[i]) == 0) {
			out[i] = (const void *)r;
		}
		at += r->total;
	}
	return 0;
}

/* argv: the helper, --store DIR and --fallback DIR when plans may be kept,
 * "--", then the files. */
static size_t build_argv(char **argv, const char *const *paths, size_t n)
{
	size_t k = 0;
	const char *user = xom_store_dir(XOM_STORE_USER);
	const char *fallback = xom_store_dir(XOM_STORE_FALLBACK);

	argv[k++] = (char *)"xom-plan";
	if (user) {
		argv[k++] = (char *)"--store";
		argv[k++] = (char *)user;
	}
	if (fallback) {
		argv[k++] = (char *)"--fallback";
		argv[k++] = (char *)fallback;
	}
	argv[k++] = (char *)"--";
	for (size_t i = 0; i < n && k < MAX_ARGS - 1; i++)
		argv[k++] = (char *)paths[i];
	argv[k] = NULL;
	return k;
}

int xom_helper_run(const char *const *paths, size_t n,
                   const struct xom_plan_head **out, const char **why,
                   void **mem, size_t *len)
{
	static char *argv[MAX_ARGS];
	int pfd[2], status = 0;
	size_t cap = 0;

	*mem = NULL;
	*len = 0;
	if (n > MAX_ARGS - 8)
		n = MAX_ARGS - 8;
	build_argv(argv, paths, n);
	int exe = open_helper();
	if (exe < 0)
		return -1;
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		xom_say("cannot make a pipe for the scanner (%m)");
		close(exe);
		return -1;
	}
	pid_t pid = start(exe, pfd[1], argv);
	close(pfd[1]);
	close(exe);
	if (pid < 0) {
		close(pfd[0]);
		xom_say("cannot start %s (%m)", helper);
		return -1;
	}
	char *buf = read_all(pfd[0], len, &cap);
	close(pfd[0]);
	if (!buf)
		syscall(SYS_kill, pid, SIGKILL);   /* silent too long, or broken */
	while (syscall(SYS_wait4, pid, &status, __WCLONE, NULL) < 0 && errno == EINTR)
		;
	const char *broke = !buf ? "its output could not be read"
	                    : WIFSIGNALED(status) ? "it was killed by a signal"
	                    : split_records(buf, *len, n, out, why) != 0
	                      ? "its output is not whole" : NULL;
	if (broke) {
		xom_say("the scanner %s failed: %s", helper, broke);
		xom_helper_release(buf, cap);
		return -1;
	}
	*mem = buf;
	*len = cap;
	return 0;
}

void xom_helper_release(void *mem, size_t len)
{
	if (mem)
		munmap(mem, len);
}
