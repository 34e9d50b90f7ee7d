/*
 * plan.c - plans: their format checks, the per-user cache, and the xom-plan
 * helper that makes them on a miss.
 *
 * The warm path is one open, one fstat and one mmap of a small file per
 * object, and the head and runs are all it reads.  The scanner (Capstone and
 * libelf) runs only in the helper process, so no host process ever maps
 * those libraries, and the audit module does not need dlopen from inside the
 * dynamic linker.  Nothing here trusts a cache file: each one is checked for
 * owner, size, structure, checksum and identity before use, and anything
 * wrong means "rebuild", never "use anyway".
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>         /* rename() only: no streams in a host process */
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "../scan/xom_scan.h"

/* ---- the cache ---------------------------------------------------- */

static int id_matches(const struct xom_plan_head *h,
                      const struct xom_plan_id *id)
{
	return h->scan_version == XOM_SCAN_VERSION
	       && h->dev == (uint64_t)id->st.st_dev
	       && h->ino == (uint64_t)id->st.st_ino
	       && h->size == (uint64_t)id->st.st_size
	       && h->mtime_sec == (int64_t)id->st.st_mtim.tv_sec
	       && h->mtime_nsec == (int64_t)id->st.st_mtim.tv_nsec;
}

/* A plan made from the file on disk must describe the file in memory. */
static int build_id_matches(const struct xom_plan_head *h,
                            const struct xom_plan_id *id)
{
	if (!id->build_id_len)
		return 1;
	return h->build_id_len == id->build_id_len
	       && memcmp(h->build_id, id->build_id, id->build_id_len) == 0;
}

static void cache_name(char *out, size_t cap, const struct xom_plan_id *id)
{
	struct xom_msg m;

	m.n = 0;
	msg_str(&m, xom_opt.cache);
	msg_str(&m, "/");
	msg_hex(&m, (uint64_t)id->st.st_dev);
	msg_str(&m, "-");
	msg_hex(&m, (uint64_t)id->st.st_ino);
	msg_str(&m, ".plan");
	size_t n = m.n < cap - 1 ? m.n : cap - 1;
	memcpy(out, m.buf, n);
	out[n] = 0;
}

static void say_ignored(const char *file, const char *why)
{
	if (xom_opt.verbose < 1)
		return;
	struct xom_msg m;
	msg_start(&m);
	msg_str(&m, "cache entry ");
	msg_str(&m, file);
	msg_str(&m, " ignored: ");
	msg_str(&m, why);
	msg_str(&m, "; rebuilding");
	msg_send(&m);
}

static const struct xom_plan_head *cache_load(const char *file,
                                              const struct xom_plan_id *id)
{
	int fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	const char *why = NULL;
	void *p = MAP_FAILED;

	if (fstat(fd, &st) != 0)
		why = "cannot stat it";
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (st.st_uid != geteuid())
		why = "owned by another user";
	else if (st.st_mode & 022)
		why = "writable by others";
	else if (st.st_size < (off_t)sizeof(struct xom_plan_head)
	         || st.st_size > (off_t)XOM_PLAN_MAX)
		why = "truncated or oversized";
	else if ((p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0))
	         == MAP_FAILED)
		why = "cannot map it";
	close(fd);
	if (!why && xom_plan_check(p, st.st_size, &why) == 0) {
		if (!id_matches(p, id))
			why = "made for another file or scanner version";
		else if (!build_id_matches(p, id))
			why = "build-id differs from the mapped object";
		else
			return p;
	}
	if (p != MAP_FAILED)
		munmap(p, st.st_size);
	say_ignored(file, why);
	return NULL;
}

static const char *dir_problem(const struct stat *st)
{
	if (!S_ISDIR(st->st_mode))
		return "is not a directory";
	if (st->st_uid != geteuid())
		return "is owned by another user";
	if (st->st_mode & 077)
		return "is accessible to others (want mode 0700)";
	return NULL;
}

/* Creates the cache directory (and its parent) when missing, and insists
 * that it is ours and private: a directory that others can write to could
 * feed us plans.  The answer is kept: one lstat per process when warm. */
static int cache_dir_ok(void)
{
	static int state;       /* 0 unknown, 1 good, -1 bad */
	char parent[4096];
	struct stat st;

	if (state)
		return state > 0;
	const char *why = NULL;
	if (lstat(xom_opt.cache, &st) != 0) {
		size_t n = strlen(xom_opt.cache);
		if (n >= sizeof(parent))
			return state = -1, 0;
		memcpy(parent, xom_opt.cache, n + 1);
		char *slash = strrchr(parent, '/');
		if (slash && slash != parent) {
			*slash = 0;
			mkdir(parent, 0700);
		}
		mkdir(xom_opt.cache, 0700);
		if (lstat(xom_opt.cache, &st) != 0)
			why = "cannot be created";
	}
	if (!why)
		why = dir_problem(&st);
	if (why) {
		struct xom_msg m;
		msg_start(&m);
		msg_str(&m, "cache directory ");
		msg_str(&m, xom_opt.cache);
		msg_str(&m, " ");
		msg_str(&m, why);
		msg_str(&m, "; plans are not cached");
		msg_send(&m);
		return state = -1, 0;
	}
	return state = 1, 1;
}

/* Writes a temporary file and renames it over the entry, so that a reader
 * sees either the old entry or the whole new one. */
static void cache_store(const char *file, const struct xom_plan_head *h)
{
	char tmp[4200];
	struct timespec ts;
	struct xom_msg m;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	m.n = 0;
	msg_str(&m, file);
	msg_str(&m, ".");
	msg_dec(&m, (uint64_t)getpid());
	msg_str(&m, ".");
	msg_hex(&m, (uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)h);
	if (m.n >= sizeof(tmp))
		return;
	memcpy(tmp, m.buf, m.n);
	tmp[m.n] = 0;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	              0600);
	if (fd < 0)
		return;
	int bad = xom_write_all(fd, h, h->total);
	bad |= close(fd);
	if (bad || rename(tmp, file) != 0) {
		unlink(tmp);
		msg_start(&m);
		msg_str(&m, "cannot write cache entry ");
		msg_str(&m, file);
		msg_errno(&m, errno);
		msg_send(&m);
	}
}

/* ---- the helper --------------------------------------------------- */

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

static void say_failed(const char *path, const char *what, const char *detail,
                       int err)
{
	struct xom_msg m;

	msg_start(&m);
	msg_str(&m, path);
	msg_str(&m, ": ");
	msg_str(&m, what);
	if (detail) {
		msg_str(&m, " ");
		msg_str(&m, detail);
	}
	if (err)
		msg_errno(&m, err);
	msg_str(&m, "; left unprotected");
	msg_send(&m);
}

/* Reads the helper's whole output into private anonymous memory. */
/* A scan of the largest libraries takes seconds; a helper silent for this
 * long is stuck, and the dlopen waiting for it must not hang for ever. */
#define HELPER_TIMEOUT_MS 120000

/*
 * Reads the helper's plan.  It stops once the header's total has arrived
 * rather than waiting for end of file: a child that the host forks in
 * another thread while the pipe is open keeps its write end open.
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

static struct xom_plan_head *run_helper(const char *path)
{
	char helper[4096];
	int pfd[2];
	pid_t pid;
	posix_spawn_file_actions_t fa;

	if (helper_path(helper, sizeof(helper)) != 0) {
		say_failed(path, "cannot locate the xom-plan helper", NULL, 0);
		return NULL;
	}
	if (access(helper, X_OK) != 0) {
		say_failed(path, "no scanner:", helper, errno);
		return NULL;
	}
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		say_failed(path, "cannot make a pipe for the scanner", NULL, errno);
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
		say_failed(path, "cannot start", helper, err);
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
	/* A host that ignores SIGCHLD gets ECHILD here; the checks below
	 * still decide whether the output is a whole plan. */
	const char *why = NULL;
	if (!buf)
		why = "its output could not be read";
	else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
		why = "it reported an error";
	else if (WIFSIGNALED(status))
		why = "it was killed by a signal";
	else
		xom_plan_check(buf, len, &why);
	if (why) {
		say_failed(path, "analysis failed:", why, 0);
		if (buf)
			munmap(buf, len);
		return NULL;
	}
	return buf;
}

/*
 * Plans handed out in this process, so that a library closed and opened
 * again reuses its plan: mapping it anew on every dlopen would add one
 * mapping per cycle, and a plugin host would creep towards
 * vm.max_map_count.  Called under xom_lock or the dynamic linker's lock.
 */
#define MEMO_SLOTS 256
static const struct xom_plan_head *memo[MEMO_SLOTS];
static unsigned memo_next;

static const struct xom_plan_head *memo_find(const struct xom_plan_id *id)
{
	for (unsigned i = 0; i < MEMO_SLOTS && memo[i]; i++)
		if (id_matches(memo[i], id) && build_id_matches(memo[i], id))
			return memo[i];
	return NULL;
}

static const struct xom_plan_head *memo_add(const struct xom_plan_head *h)
{
	/* Past MEMO_SLOTS distinct files the oldest entry is only forgotten,
	 * never unmapped: an object may still use it. */
	if (h)
		memo[memo_next++ % MEMO_SLOTS] = h;
	return h;
}

static const struct xom_plan_head *plan_load(const char *path,
                                             const struct xom_plan_id *id)
{
	char file[4200];

	int cached = xom_opt.cache && cache_dir_ok();

	if (cached) {
		cache_name(file, sizeof(file), id);
		const struct xom_plan_head *h = cache_load(file, id);
		if (h)
			return h;
	}
	struct xom_plan_head *h = run_helper(path);
	if (!h)
		return NULL;
	if (h->scan_version != XOM_SCAN_VERSION) {
		say_failed(path, "the scanner's version differs from the runtime's",
		           NULL, 0);
		return NULL;
	}
	if (!build_id_matches(h, id)) {
		say_failed(path, "the file on disk is not the one mapped", NULL, 0);
		return NULL;
	}
	h->dev = id->st.st_dev;
	h->ino = id->st.st_ino;
	h->size = id->st.st_size;
	h->mtime_sec = id->st.st_mtim.tv_sec;
	h->mtime_nsec = id->st.st_mtim.tv_nsec;
	xom_plan_seal(h);
	if (cached)
		cache_store(file, h);
	mprotect(h, h->total, PROT_READ);
	return h;
}

const struct xom_plan_head *xom_plan_get(const char *path,
                                         const struct xom_plan_id *id)
{
	const struct xom_plan_head *h = memo_find(id);

	return h ? h : memo_add(plan_load(path, id));
}
