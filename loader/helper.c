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
 *   - not the host's child: a short-lived intermediate starts it and
 *     exits, so the host gets no SIGCHLD for it and its waitpid(-1) never
 *     sees it (the kernel gives an exec'd child SIGCHLD as its exit
 *     signal, whatever clone said);
 *   - started with clone(CLONE_VM | CLONE_VFORK), twice, so that nothing
 *     of the host's memory is copied, however big the host;
 *   - run at most once at a time per process (the object phase is locked),
 *     with every file of the batch in one run, or, for more files than
 *     one command line holds, in as few runs as hold them, one after the
 *     other;
 *   - given an empty environment.  It is linked statically, so that not
 *     even /etc/ld.so.preload can load xom into it;
 *   - run with limits of xom's choosing, not the caller's (run_limits,
 *     and raise_host_limits for the calls that start it), and in a
 *     secure-execution program as the program's effective user alone
 *     (own_helper), at the ordinary priority (own_schedule): neither a
 *     lowered limit, nor a starved or killed helper may make a
 *     set-user-ID program's scan fail, which would leave it unprotected.
 *     A delegated cgroup's limits still can (docs/operators.md).
 */
#include <dlfcn.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "loader.h"
#include "sys.h"

/* A scan of the largest libraries takes seconds; a helper silent for this
 * long is stuck, and the dlopen waiting for it must not hang for ever. */
#define HELPER_TIMEOUT_MS 120000

/*
 * The limits the helper runs with.  Whoever starts a program can lower
 * its limits first (ulimit -v), and a child inherits them: a scan that
 * runs out of memory or time leaves the objects unprotected, so a caller
 * could strip xom from a set-user-ID program that way.  The helper's soft
 * limits are therefore raised to want, as far as the hard limits allow.
 * In a secure-execution program the hard limits are the caller's too, and
 * are raised where the program may (CAP_SYS_RESOURCE, which a
 * set-user-ID-root program has); elsewhere they are the bound, and when
 * one is below floor and the scan failed, one line says so.  A program's
 * own limits are left alone in every case: only the helper gets these.
 */
#define LIMIT_NONE ((uint64_t)-1)       /* RLIM64_INFINITY */

/* A run that only keeps a set (xom_helper_keep_set) is a shortcut for the
 * next start: when it cannot be made, nothing is left unprotected, and
 * nothing is said. */
static int keeping_set;
#define helper_notice(...) \
	do { \
		if (!keeping_set) \
			xom_notice(__VA_ARGS__); \
	} while (0)

static const struct helper_limit {
	int res;
	uint64_t want, floor;
	unsigned shift;                 /* the unit of messages: 20 for MB */
	char what[14], unit[4];         /* arrays: no relocation at start-up */
} limits[] = {
	{ RLIMIT_AS, LIMIT_NONE, 1ull << 30, 20, "address space", " MB" },
	{ RLIMIT_DATA, LIMIT_NONE, 1ull << 30, 20, "data", " MB" },
	{ RLIMIT_STACK, 8u << 20, 1u << 20, 20, "stack", " MB" },
	{ RLIMIT_CPU, LIMIT_NONE, HELPER_TIMEOUT_MS / 1000, 0, "CPU time", " s" },
	{ RLIMIT_FSIZE, LIMIT_NONE, XOM_STORE_MAX, 20, "file size", " MB" },
	{ RLIMIT_NOFILE, 1024, 64, 0, "open files", "" },
	{ RLIMIT_NPROC, LIMIT_NONE, 0, 0, "processes", "" },
};
#define NLIMITS (sizeof(limits) / sizeof(limits[0]))

/* This library's path as the dynamic linker keeps it (a string of its
 * link map, there for the life of the process), and, only when that is
 * relative, the directory it was relative to at start-up. */
static const char *lib_path;
static char lib_cwd[XOM_PATH_MAX] XOM_COLD;

/*
 * What one run needs, mapped for it and unmapped after: the tables and
 * stacks of a run would otherwise sit in .bss among, or between, the
 * variables that every process start touches.
 */
#define MAX_ARGS 1100
/* At most this much of --set's keys, and of the files' paths in one run:
 * the kernel limits argv and the environment together to a quarter of
 * the stack's limit, or 128 KB if that is more. */
#define SET_ARG_MAX (32u << 10)
#define RUN_PATH_BYTES (64u << 10)
#ifdef XOM_RUN_FILES                    /* the tests' runtime, to run it often */
#define RUN_FILES XOM_RUN_FILES
#else
#define RUN_FILES (MAX_ARGS - 12)
#endif
struct scratch {
	char helper[XOM_PATH_MAX];
	char user[XOM_PATH_MAX], fallback[XOM_PATH_MAX];
	char *argv[MAX_ARGS];
	char set[SET_ARG_MAX];          /* --set's keys, comma-separated */
	unsigned low;                   /* struct spawn's, after a start */
	uint64_t got[NLIMITS];
	char stack1[16 << 10] __attribute__((aligned(16)));
	char stack2[16 << 10] __attribute__((aligned(16)));
};
static struct scratch *sc;
#define helper (sc->helper)

/* This library's link map: the one whose load address is our ELF header.
 * (Not dladdr, which also searches the symbol table, in code of libc's
 * that a start would otherwise not touch.) */
static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	extern const char __ehdr_start[] __attribute__((visibility("hidden")));

	(void)size;
	if (info->dlpi_addr != (uintptr_t)__ehdr_start || !info->dlpi_name
	    || !info->dlpi_name[0])
		return 0;
	*(const char **)arg = info->dlpi_name;
	return 1;
}

void xom_helper_locate(void)
{
	const char *name = NULL;

	if (!dl_iterate_phdr(find_self, &name) || !name)
		return;
	/* The dynamic linker keeps a relative LD_PRELOAD path as given: it is
	 * resolved against the directory it was given in, now. */
	if (name[0] != '/' && SYS_FAILED(x_getcwd(lib_cwd, sizeof(lib_cwd))))
		return;
	lib_path = name;
}

/* The absolute path of name (a path relative to this library's folder)
 * in buf, or NULL. */
const char *xom_beside(const char *name, char *buf, size_t cap)
{
	if (!lib_path)
		return NULL;
	const char *slash = strrchr(lib_path, '/');
	int dir = slash ? (int)(slash - lib_path) : 0;
	size_t n = lib_cwd[0]
		? xom_fmt(buf, cap, "%s/%.*s%s%s", lib_cwd, dir, lib_path,
		          slash ? "/" : "", name)
		: xom_fmt(buf, cap, "%.*s/%s", dir, lib_path, name);
	return n < cap - 1 ? buf : NULL;
}

/* The helper's absolute path, beside this library. */
static const char *helper_path(void)
{
	return xom_beside("xom-plan", helper, sizeof(helper));
}

int xom_own_command(void)
{
	/* Where the xom command lies from this library: beside it in a build
	 * tree, PREFIX/bin/xom for PREFIX/lib/xom/libxom.so when installed. */
	static const char *const names[] = { "xom", "../../bin/xom" };
	char path[XOM_PATH_MAX];
	struct stat exe, st;

	if (!lib_path)
		xom_helper_locate();
	if (x_stat("/proc/self/exe", &exe) != 0)
		return 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (xom_beside(names[i], path, sizeof(path)) && x_stat(path, &st) == 0
		    && st.st_dev == exe.st_dev && st.st_ino == exe.st_ino)
			return 1;
	return 0;
}

/* Opens the helper for execveat after checking who may have written it;
 * the descriptor, or -1 after saying why. */
static int open_helper(void)
{
	struct stat st;

	if (!helper_path()) {
		helper_notice("cannot locate the xom-plan helper; objects not in a plan store are left unprotected");
		return -1;
	}
	long fd = x_open(helper, O_PATH | O_CLOEXEC, 0);
	if (SYS_FAILED(fd)) {
		helper_notice("no scanner: %s (%serrno %d); objects not in a plan store are left unprotected",
		        helper, XOM_ERR((int)-fd));
		return -1;
	}
	const char *why = NULL;
	if (x_fstat((int)fd, &st) != 0 || !S_ISREG(st.st_mode) || !(st.st_mode & 0111))
		why = "not an executable file";
	else if (st.st_mode & 022)
		why = "writable by others";
	else if (st.st_uid != 0 && (xom_secure || st.st_uid != xom_euid))
		why = xom_secure ? "not owned by root" : "owned by another user";
	if (why) {
		x_close((int)fd);
		helper_notice("will not run the scanner %s: it is %s", helper, why);
		return -1;
	}
	return (int)fd;
}

struct spawn {
	int exe, out, err;      /* err: xom's log, or -1 */
	char *const *argv;
	volatile long pid;      /* the helper's, or -errno */
	char *stack2;
	int secure;             /* xom_secure */
	unsigned low;           /* bit i: limits[i] stayed below its floor */
	uint64_t got[NLIMITS];  /* each limit the helper got (soft) */
};

struct rlimit64_ { uint64_t cur, max; };

/* Raises one limit of the calling process towards want; what it got. */
static uint64_t raise_limit(int res, uint64_t want, int secure)
{
	struct rlimit64_ r, n;

	if (SYS_FAILED(sys4(SYS_prlimit64, 0, res, 0, (long)&r)))
		return 0;
	if (r.cur >= want)
		return r.cur;
	if (secure && r.max < want) {
		n = (struct rlimit64_){ want, want };
		if (!SYS_FAILED(sys4(SYS_prlimit64, 0, res, (long)&n, 0)))
			return want;
	}
	n = (struct rlimit64_){ r.max < want ? r.max : want, r.max };
	return SYS_FAILED(sys4(SYS_prlimit64, 0, res, (long)&n, 0)) ? r.cur : n.cur;
}

/* The intermediate's limits, which the helper inherits (raw system calls
 * only: it shares the host's memory). */
static void run_limits(struct spawn *s)
{
	s->low = 0;
	for (size_t i = 0; i < NLIMITS; i++) {
		s->got[i] = raise_limit(limits[i].res, limits[i].want, s->secure);
		if (s->got[i] < limits[i].floor)
			s->low |= 1u << i;
	}
	/* A helper of a secure-execution program is the effective user's
	 * alone (own_helper), so the kernel would let it dump core, as that
	 * user, where its caller chose: it dumps none. */
	if (s->secure) {
		struct rlimit64_ none = { 0, 0 };
		sys4(SYS_prlimit64, 0, RLIMIT_CORE, (long)&none, 0);
	}
}

/*
 * In a secure-execution program, the intermediate, and so the helper,
 * runs at the ordinary priority on every CPU, whatever its caller chose
 * (nice 19, SCHED_IDLE, one CPU, the idle I/O class): a starved helper
 * falls silent past its time-out and leaves the program unprotected.
 * Each call may fail (a set-user-ID program of another user than root
 * cannot lower its nice value); the rest still holds.
 */
static void own_schedule(const struct spawn *s)
{
	static const long param0 = 0;           /* struct sched_param */
	uint64_t all[16];

	if (!s->secure)
		return;
	sys3(SYS_sched_setscheduler, 0, 0 /* SCHED_OTHER */, (long)&param0);
	sys3(SYS_setpriority, 0 /* PRIO_PROCESS */, 0, 0);
	memset(all, 0xff, sizeof(all));
	sys3(SYS_sched_setaffinity, 0, sizeof(all), (long)all);
	/* IOPRIO_WHO_PROCESS, IOPRIO_CLASS_BE at level 4. */
	sys3(SYS_ioprio_set, 1, 0, (2 << 13) | 4);
}

/*
 * In a secure-execution program, makes the intermediate, and so the
 * helper, the effective user's alone: real and saved user IDs the
 * effective one.  The kernel lets a process signal another whose real or
 * saved user ID is its own real or effective one, so the caller of a
 * set-user-ID program could otherwise kill or stop the helper and leave
 * the program unprotected.  This is safe: any process may set each of
 * its user IDs to one it already holds, it gives the helper nothing that
 * it would not have had (it ran with that effective user ID before), and
 * it changes only this task's credentials (a raw system call, and a
 * CLONE_VM child is a process of its own), never the program's.  What it
 * cannot cover: the moment between the clone and this call, after which
 * a helper killed before it starts fails safe (one line; refused under
 * require=1); and set-group-ID and file-capability programs, whose
 * effective user is their caller.
 */
static void own_helper(const struct spawn *s)
{
	unsigned r, e, saved;

	if (!s->secure || SYS_FAILED(sys3(SYS_getresuid, (long)&r, (long)&e,
	                                  (long)&saved)))
		return;
	if (r != e || saved != e)
		sys3(SYS_setresuid, e, e, e);
}

/* fd, or a copy of it above the three standard descriptors (closed at
 * exec) when it is one of them; -errno when none can be made. */
static long above_std(long fd)
{
	return fd >= 0 && fd <= 2 ? sys3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 3) : fd;
}

#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#define CLOSE_RANGE_CLOEXEC_ (1U << 2)

/*
 * The helper, until execveat: it shares the host's memory, so it makes
 * raw system calls only and touches nothing but *s.  Its descriptors are
 * its own (no CLONE_FILES), and it sets all three standard ones itself:
 *   0  the read end of a pipe whose write end closes at exec: reads find
 *      the end at once, and the host's stdin (a terminal, a client's
 *      socket) is not held open by the helper;
 *   1  the pipe its plans go back through;
 *   2  xom's log, else /dev/null, else (a root without it) that read
 *      end, where a write fails: never a file the helper opens itself.
 * Each is first moved above the standard ones: a host that closed one
 * before it started (GLib's spawn tests close stdout, then run a child)
 * had xom's own descriptors land there, and a dup2 below would close
 * them.  Every other descriptor the host left open is closed at exec
 * (close_range; where the kernel lacks it, the helper inherits them as it
 * did before, which only keeps them open longer).  No file needed: a
 * root without /dev/null starts the helper all the same.
 */
static int run_helper(void *arg)
{
	struct spawn *s = arg;
	static char *const envp[] = { NULL };
	int p[2];
	long exe = above_std(s->exe), out = above_std(s->out);
	long err = above_std(s->err >= 0 ? s->err : x_open("/dev/null", O_WRONLY | O_CLOEXEC, 0));
	long r = SYS_FAILED(exe) ? exe : SYS_FAILED(out) ? out : x_pipe2(p, O_CLOEXEC);
	long in = SYS_FAILED(r) ? r : above_std(p[0]);

	r = in;
	if (!SYS_FAILED(r))
		r = sys2(SYS_dup2, in, 0);
	if (!SYS_FAILED(r))
		r = sys2(SYS_dup2, out, 1);
	if (!SYS_FAILED(r))
		r = sys2(SYS_dup2, SYS_FAILED(err) ? in : err, 2);
	if (!SYS_FAILED(r)) {
		sys3(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC_);
		r = sys5(SYS_execveat, exe, (long)"", (long)s->argv, (long)envp,
		         AT_EMPTY_PATH);
	}
	s->pid = r;
	x_exit_group(127);
}

/* The intermediate: starts the helper, says its pid and exits, leaving the
 * helper to init (or the nearest subreaper). */
static int start_helper(void *arg)
{
	struct spawn *s = arg;

	run_limits(s);
	own_helper(s);
	own_schedule(s);
	long pid = clone(run_helper, s->stack2, CLONE_VM | CLONE_VFORK, s);

	/* run_helper stores -errno in s->pid when its exec fails. */
	if (pid <= 0 || s->pid < 0)
		s->pid = pid <= 0 ? -ECHILD : s->pid;
	else
		s->pid = pid;
	sys1(SYS_exit, 0);
	return 0;
}

/* Starts the helper on argv with stdout on out; its pid, or -errno.  The
 * limits it got are left in sc. */
static long start(int exe, int out, char *const *argv)
{
	char *stack1 = sc->stack1, *stack2 = sc->stack2;
	struct spawn s = { exe, out, xom_log_fd(), argv, 0,
	                   stack2 + sizeof(sc->stack2), xom_secure, 0, { 0 } };
	/* No exit signal for the intermediate: the host's SIGCHLD handler
	 * and its waitpid(-1) must not see it either. */
	long mid = clone(start_helper, stack1 + sizeof(sc->stack1),
	                 CLONE_VM | CLONE_VFORK, &s);
	if (mid > 0)
		while (sys4(SYS_wait4, mid, 0, __WCLONE, 0) == -EINTR)
			;
	sc->low = s.low;
	memcpy(sc->got, s.got, sizeof(sc->got));
	return mid > 0 ? s.pid : mid < 0 ? mid : -ECHILD;
}

/*
 * The host's own soft limits on open files and processes, which the pipe,
 * the helper's descriptor and the first clone count against before the
 * intermediate can raise its own: in a secure-execution program they are
 * raised to the hard limits for these few calls and put back after, so
 * that a caller who lowered them cannot make the scan fail.  A program's
 * other threads could see the raised value meanwhile; a program that is
 * not in that mode is its caller's own, and is left alone.
 */
struct host_limits {
	struct rlimit64_ old[2];
	int raised[2];
};
static const int host_limit_res[2] = { RLIMIT_NOFILE, RLIMIT_NPROC };

static void raise_host_limits(struct host_limits *h)
{
	for (int i = 0; i < 2; i++) {
		h->raised[i] = 0;
		if (!xom_secure || SYS_FAILED(sys4(SYS_prlimit64, 0, host_limit_res[i],
		                                  0, (long)&h->old[i])))
			continue;
		if (h->old[i].cur >= h->old[i].max)
			continue;
		struct rlimit64_ n = { h->old[i].max, h->old[i].max };
		h->raised[i] = !SYS_FAILED(sys4(SYS_prlimit64, 0, host_limit_res[i],
		                                (long)&n, 0));
	}
}

static void restore_host_limits(const struct host_limits *h)
{
	for (int i = 0; i < 2; i++)
		if (h->raised[i])
			sys4(SYS_prlimit64, 0, host_limit_res[i], (long)&h->old[i], 0);
}

/* After a run in which something could not be scanned: one line naming
 * the limits that the helper could not get, if any. */
static void say_low_limits(void)
{
	char list[256];
	size_t at = 0;

	list[0] = 0;
	for (size_t i = 0; i < NLIMITS && at < sizeof(list); i++) {
		if (!(sc->low & 1u << i))
			continue;
		at += xom_fmt(list + at, sizeof(list) - at, "%s%s %lu%s (wants %lu)",
		              at ? ", " : "", limits[i].what,
		              (unsigned long)(sc->got[i] >> limits[i].shift), limits[i].unit,
		              (unsigned long)(limits[i].floor >> limits[i].shift));
	}
	if (list[0])
		helper_notice("the scanner ran short of the hard limits this program was started with, which xom cannot raise: %s",
		           list);
}

/* One run's output, in a mapping of its own: this head, then the
 * records.  The runs of one batch are chained, and released together. */
struct output {
	struct output *next;
	size_t cap;                     /* the mapping's length */
};

/*
 * Reads the helper's records into private anonymous memory, after a
 * struct output, until it closes its end or falls silent for too long;
 * *len is the records' length.
 */
static struct output *read_all(int fd, size_t *len)
{
	size_t cap = 64 << 10, n = sizeof(struct output);
	char *buf = x_mmap(NULL, cap, PROT_READ | PROT_WRITE,
	                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (X_MAP_FAILED(buf))
		return NULL;
	for (;;) {
		if (n == cap) {
			char *b = cap >= XOM_STORE_MAX ? (char *)-1
			          : x_mremap(buf, cap, cap * 2, MREMAP_MAYMOVE);
			if (X_MAP_FAILED(b))
				break;
			buf = b;
			cap *= 2;
		}
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long ready = sys3(SYS_poll, (long)&p, 1, HELPER_TIMEOUT_MS);
		if (ready == -EINTR)
			continue;
		if (ready <= 0)
			break;
		long r = x_read(fd, buf + n, cap - n);
		if (r == -EINTR)
			continue;
		if (SYS_FAILED(r))
			break;
		if (r == 0) {
			struct output *o = (struct output *)buf;
			o->next = NULL;
			o->cap = cap;
			*len = n - sizeof(*o);
			return o;
		}
		n += (size_t)r;
	}
	x_munmap(buf, cap);
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

/* The batch's keys for --set in sc->set, or NULL when they do not fit
 * in one argument (a set is only a shortcut). */
static const char *set_arg(const struct xom_plan_key *const *keys, size_t n)
{
	size_t at = 0;

	for (size_t i = 0; i < n; i++) {
		if (sizeof(sc->set) - at < XOM_KEY_NAME_MAX + 1)
			return NULL;
		if (i)
			sc->set[at++] = ',';
		xom_key_name(keys[i], sc->set + at, XOM_KEY_NAME_MAX);
		at += strlen(sc->set + at);
	}
	return n ? sc->set : NULL;
}

/* argv: the helper, --store DIR and --fallback DIR when plans may be kept,
 * with --set KEYS when the batch's keys are given, --quiet when notices
 * are done or off or a run before this one could say the same, "--",
 * then the files. */
static size_t build_argv(char **argv, const char *const *paths, size_t n,
                         const struct xom_plan_key *const *keys, size_t nkeys,
                         int quiet)
{
	size_t k = 0;
	const char *set = keys ? set_arg(keys, nkeys) : NULL;
	const char *user = xom_store_dir(XOM_STORE_USER, sc->user, sizeof(sc->user));
	const char *fallback = xom_store_dir(XOM_STORE_FALLBACK, sc->fallback,
	                                     sizeof(sc->fallback));

	argv[k++] = (char *)"xom-plan";
	if (user) {
		argv[k++] = (char *)"--store";
		argv[k++] = (char *)user;
	}
	if (fallback) {
		argv[k++] = (char *)"--fallback";
		argv[k++] = (char *)fallback;
	}
	if ((user || fallback) && set) {
		argv[k++] = (char *)"--set";
		argv[k++] = (char *)set;
	}
	if (quiet || xom_opt.notice == XOM_NOTICE_DONE || xom_opt.notice == XOM_NOTICE_OFF)
		argv[k++] = (char *)"--quiet";
	argv[k++] = (char *)"--";
	for (size_t i = 0; i < n && k < MAX_ARGS - 1; i++)
		argv[k++] = (char *)paths[i];
	argv[k] = NULL;
	return k;
}

/* One run for n files (run_size), whose output joins *chain. */
static int run_scratch(const char *const *paths, size_t n,
                       const struct xom_plan_key *const *keys, size_t nkeys,
                       int quiet, const struct xom_plan_head **out,
                       const char **why, struct output **chain)
{
	char **argv = sc->argv;
	int pfd[2];
	size_t len = 0;

	build_argv(argv, paths, n, keys, nkeys, quiet);
	struct host_limits hl;
	raise_host_limits(&hl);
	int exe = open_helper();
	if (exe < 0) {
		restore_host_limits(&hl);
		return -1;
	}
	long rc = x_pipe2(pfd, O_CLOEXEC);
	if (SYS_FAILED(rc)) {
		restore_host_limits(&hl);
		helper_notice("cannot make a pipe for the scanner (%serrno %d)", XOM_ERR((int)-rc));
		x_close(exe);
		return -1;
	}
	long pid = start(exe, pfd[1], argv);
	restore_host_limits(&hl);
	x_close(pfd[1]);
	x_close(exe);
	if (pid <= 0) {
		x_close(pfd[0]);
		helper_notice("cannot start %s (%serrno %d)", helper, XOM_ERR((int)-pid));
		return -1;
	}
	struct output *o = read_all(pfd[0], &len);
	x_close(pfd[0]);
	if (!o)
		sys2(SYS_kill, pid, SIGKILL);   /* silent too long, or broken */
	/* The helper is not ours to wait for; its output says how it went. */
	const char *broke = !o ? "its output could not be read"
	                    : split_records((char *)(o + 1), len, n, out, why) != 0
	                      ? "its output is not whole (killed?)" : NULL;
	if (broke) {
		helper_notice("the scanner %s failed: %s", helper, broke);
		say_low_limits();
		if (o)
			x_munmap(o, o->cap);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (!out[i]) {
			say_low_limits();
			break;
		}
	o->next = *chain;
	*chain = o;
	return 0;
}

/* How many of the n files, from the first, one run takes: its command
 * line must stay within what the kernel takes, whatever the paths. */
static size_t run_size(const char *const *paths, size_t n)
{
	size_t m = 0, bytes = 0;

	while (m < n && m < RUN_FILES) {
		bytes += strlen(paths[m]) + 1 + sizeof(char *);
		if (m && bytes > RUN_PATH_BYTES)
			break;
		m++;
	}
	return m;
}

int xom_helper_run(const char *const *paths, size_t n,
                   const struct xom_plan_key *const *keys, size_t nkeys,
                   const struct xom_plan_head **out, const char **why,
                   void **mem)
{
	struct output *chain = NULL;
	int rc = 0;

	*mem = NULL;
	for (size_t i = 0; i < n; i++) {
		out[i] = NULL;
		why[i] = NULL;
	}
	sc = x_mmap(NULL, sizeof(*sc), PROT_READ | PROT_WRITE,
	            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (X_MAP_FAILED(sc)) {
		sc = NULL;
		helper_notice("out of memory for the scanner's arguments");
		return -1;
	}
	/* The set goes with the last run, when the store holds every plan;
	 * a run that cannot start says so, and no later one is tried.  With
	 * no file, one run keeps the set alone. */
	if (!n && keys)
		rc = run_scratch(paths, 0, keys, nkeys, 1, out, why, &chain);
	for (size_t at = 0, m; at < n && rc == 0; at += m) {
		m = run_size(paths + at, n - at);
		rc = run_scratch(paths + at, m, at + m == n ? keys : NULL, nkeys,
		                 at > 0, out + at, why + at, &chain);
		if (rc != 0)
			for (size_t i = at; i < at + m; i++) {
				out[i] = NULL;
				why[i] = NULL;  /* its output is gone */
			}
	}
	xom_stores_changed();
	x_munmap(sc, sizeof(*sc));
	sc = NULL;
	*mem = chain;
	return rc;
}

int xom_helper_keep_set(const struct xom_plan_key *const *keys, size_t nkeys,
                        void **mem)
{
	keeping_set = 1;
	int rc = xom_helper_run(NULL, 0, keys, nkeys, NULL, NULL, mem);
	keeping_set = 0;
	return rc;
}

void xom_helper_release(void *mem)
{
	for (struct output *o = mem, *next; o; o = next) {
		next = o->next;
		x_munmap(o, o->cap);
	}
}
