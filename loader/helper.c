/*
 * helper.c - runs the xom-plan helper on a plan-cache miss and reads the
 * plan it writes.
 *
 * Phase: object.  The scanner (Capstone and libelf) runs only in the helper
 * process, so no host process ever maps those libraries, and the audit
 * module does not need dlopen from inside the dynamic linker.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "loader.h"

/* A scan of the largest libraries takes seconds; a helper silent for this
 * long is stuck, and the dlopen waiting for it must not hang for ever. */
#define HELPER_TIMEOUT_MS 120000

/* xom-plan lives next to the library this code is part of. */
static int helper_path(char *out, size_t cap)
{
	Dl_info info;

	if (!dladdr((void *)helper_path, &info) || !info.dli_fname)
		return -1;
	const char *slash = strrchr(info.dli_fname, '/');
	size_t dir = slash ? (size_t)(slash - info.dli_fname) : 0;
	static const char name[] = "xom-plan";
	if (dir + sizeof(name) + 1 > cap)
		return -1;
	if (slash) {
		memcpy(out, info.dli_fname, dir);
		out[dir++] = '/';
	} else {
		memcpy(out, "./", 2);
		dir = 2;
	}
	memcpy(out + dir, name, sizeof(name));
	return 0;
}

/*
 * Reads the helper's plan into private anonymous memory.  It stops once
 * the header's total has arrived rather than waiting for end of file: a
 * child that the host forks in another thread while the pipe is open keeps
 * its write end open.
 */
static void *read_plan(int fd, size_t *len)
{
	size_t cap = 64 << 10, n = 0;
	char *buf = mmap(NULL, cap, PROT_READ | PROT_WRITE,
	                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (buf == MAP_FAILED)
		return NULL;
	for (;;) {
		if (n == cap) {
			if (cap >= XOM_PLAN_MAX)
				break;
			char *b = mremap(buf, cap, cap * 2, MREMAP_MAYMOVE);
			if (b == MAP_FAILED)
				break;
			buf = b;
			cap *= 2;
		}
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int ready = poll(&p, 1, HELPER_TIMEOUT_MS);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready <= 0)
			break;
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		n += (size_t)r;
		const struct xom_plan_head *h = (const void *)buf;
		if (r == 0 || (n >= sizeof(*h) && h->total <= n)) {
			*len = n;
			return buf;
		}
	}
	munmap(buf, cap);
	return NULL;
}

/* Why the helper's run gave no usable plan, or NULL. */
static const char *outcome(const void *buf, size_t len, int status)
{
	const char *why = NULL;

	/* A host that ignores SIGCHLD gets ECHILD from waitpid; the checks
	 * below still decide whether the output is a whole plan. */
	if (!buf)
		why = "its output could not be read";
	else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
		why = "it reported an error";
	else if (WIFSIGNALED(status))
		why = "it was killed by a signal";
	else
		xom_plan_check(buf, len, &why);
	return why;
}

struct xom_plan_head *xom_helper_run(const char *path)
{
	char helper[4096];
	int pfd[2];
	pid_t pid;
	posix_spawn_file_actions_t fa;

	if (helper_path(helper, sizeof(helper)) != 0) {
		xom_say("%s: cannot locate the xom-plan helper; left unprotected", path);
		return NULL;
	}
	if (access(helper, X_OK) != 0) {
		xom_say("%s: no scanner: %s (%m); left unprotected", path, helper);
		return NULL;
	}
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		xom_say("%s: cannot make a pipe for the scanner (%m); left unprotected",
		        path);
		return NULL;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	if (xom_opt.log_fd != 2)
		posix_spawn_file_actions_adddup2(&fa, xom_opt.log_fd, 2);
	/* An empty environment: the helper must not load xom itself. */
	char *argv[] = { helper, (char *)path, NULL };
	char *envp[] = { NULL };
	int err = posix_spawn(&pid, helper, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	if (err) {
		close(pfd[0]);
		errno = err;
		xom_say("%s: cannot start %s (%m); left unprotected", path, helper);
		return NULL;
	}
	size_t len = 0;
	void *buf = read_plan(pfd[0], &len);
	close(pfd[0]);
	if (!buf)
		kill(pid, SIGKILL);     /* silent too long, or its output broke */
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	const char *why = outcome(buf, len, status);
	if (why) {
		xom_say("%s: analysis failed: %s; left unprotected", path, why);
		if (buf)
			munmap(buf, len);
		return NULL;
	}
	return buf;
}
