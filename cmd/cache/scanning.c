/*
 * scanning.c - scans files for xom cache build: the runtime's own helper,
 * xom-plan, on a few files at a time, as many at once as there are cores,
 * the biggest files first so that no core is left at the end with the
 * largest one.  Each helper keeps its plans and symbol files in a private
 * temporary store and writes one record per file to a pipe (its plan, or
 * why there is none); this process merges them into the target store
 * every few seconds, so that an interrupted build keeps what was done.
 * Neither Capstone nor libelf is loaded into xom itself.
 *
 * On a terminal, one line shows the progress: files and megabytes done and
 * an estimate of the time left, from the bytes done so far.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../plan/build.h"
#include "../cmd.h"
#include "cache.h"

/* A helper's share: at most this many files, and this many bytes unless
 * one file alone is bigger; for a small build, less, so that every core
 * gets a few shares.  Small enough for the load to even out and the
 * progress to move, big enough that starting helpers costs little. */
#define CHUNK_FILES 32
#define CHUNK_BYTES (16u << 20)
#define SHARES_PER_JOB 4
/* Plans reach the store this often while the build runs. */
#define COMMIT_SECONDS 5.0
#define MAX_JOBS 64

struct job {
	pid_t pid;                      /* 0: a free slot */
	int out;                        /* the helper's records */
	char *buf;
	size_t len, cap;
	size_t first, count;            /* todo[first..first+count) */
	char dir[4200];                 /* its temporary store */
};

static struct {
	struct cache_file **todo;
	size_t ntodo, next;
	const struct scan_opts *o;
	struct job job[MAX_JOBS];
	int njobs, running;
	size_t chunk_files;
	uint64_t chunk_bytes;
	unsigned serial;
	char root[4096];                /* the temporary stores' folder */
	struct xom_built *pending;      /* scanned, not yet in the store */
	size_t npending, cap;
	double last_commit;
	int status;
	struct scan_result *r;
} s;

static volatile sig_atomic_t stop_signal;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int cores(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

/* ---- the progress line ---------------------------------------------------- */

static struct {
	int on, drawn;
	size_t files, files_done;
	uint64_t bytes, bytes_done;
	double start, last;
} bar;

void progress_clear(void)
{
	if (bar.drawn)
		fputs("\r\033[K", stderr);
	bar.drawn = 0;
}

static void progress_draw(int force)
{
	char counts[256], eta[32] = "";
	struct winsize ws;
	double t = now();

	if (!bar.on || (!force && t - bar.last < 0.1))
		return;
	bar.last = t;
	int width = ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40 ? ws.ws_col : 80;
	double spent = t - bar.start;
	if (bar.bytes_done && spent >= 1) {
		double left = spent * (double)(bar.bytes - bar.bytes_done)
		              / (double)bar.bytes_done;
		snprintf(eta, sizeof(eta), ", ETA %d:%02d", (int)left / 60,
		         (int)left % 60);
	}
	int n = snprintf(counts, sizeof(counts), " %zu/%zu files, %.0f/%.0f MB%s",
	                 bar.files_done, bar.files, (double)bar.bytes_done / 1e6,
	                 (double)bar.bytes / 1e6, eta);
	/* "xom: [####....] counts" in one terminal line. */
	int cells = width - 1 - (int)strlen("xom: []") - n;
	if (cells > 40)
		cells = 40;
	fputs("\r\033[Kxom:", stderr);
	if (cells >= 10) {
		int full = bar.bytes ? (int)((double)cells * (double)bar.bytes_done
		                             / (double)bar.bytes) : cells;
		fputs(" [", stderr);
		for (int i = 0; i < cells; i++)
			fputc(i < full ? '#' : '.', stderr);
		fputc(']', stderr);
	}
	fputs(counts, stderr);
	fflush(stderr);
	bar.drawn = 1;
}

/* One file's failure: its code and reason kept, and said. */
static void failed(struct cache_file *f, int code, const char *why)
{
	f->code = code;
	free(f->why);
	f->why = strdup(why);
	s.r->failed++;
	s.status = xom_exit_worst(s.status, code);
	progress_clear();
	say("%s: not analysed: %s", f->path, why);
}

/* ---- the store ------------------------------------------------------------ */

static void free_pending(void)
{
	/* Not xom_built_free: that is in build.c, with the scanner. */
	for (size_t i = 0; i < s.npending; i++) {
		free(s.pending[i].plan);
		free(s.pending[i].syms);
	}
	s.npending = 0;
}

/* Merges the plans scanned so far into the store; -1 (said) when it
 * cannot be written, which ends the build. */
static int commit(void)
{
	char why[600];

	s.last_commit = now();
	if (!s.npending)
		return 0;
	int rc = xom_store_add(s.o->store, s.o->shared, s.pending, s.npending, NULL, 0, why,
	                       sizeof(why));
	if (rc != 0) {
		progress_clear();
		say("cannot keep plans in %s: %s", s.o->store, why);
		s.status = XOM_EXIT_ENV;
	} else {
		s.r->built += s.npending;
	}
	free_pending();
	return rc;
}

static int keep(struct cache_file *f, struct xom_plan_head *plan,
                struct xom_syms_head *syms)
{
	if (s.npending == s.cap) {
		size_t cap = s.cap ? 2 * s.cap : 256;
		struct xom_built *b = realloc(s.pending, cap * sizeof(*b));
		if (!b) {
			free(plan);
			free(syms);
			failed(f, XOM_EXIT_ENV, "out of memory");
			return -1;
		}
		s.pending = b;
		s.cap = cap;
	}
	memset(&s.pending[s.npending], 0, sizeof(s.pending[0]));
	s.pending[s.npending].path = f->path;
	s.pending[s.npending].plan = plan;
	s.pending[s.npending++].syms = syms;
	s.r->bytes += f->size;
	return 0;
}

/* ---- the helpers ------------------------------------------------------------ */

static void unlink_sym(const char *path, const char *name, void *arg)
{
	(void)name, (void)arg;
	unlink(path);
}

/* Deletes a helper's temporary store. */
static void remove_store(const char *dir)
{
	char path[4500];

	xom_syms_walk(dir, unlink_sym, NULL);
	snprintf(path, sizeof(path), "%s/" XOM_STORE_SYMS, dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/" XOM_STORE_INDEX, dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/" XOM_STORE_LOCK, dir);
	unlink(path);
	rmdir(dir);
}

/* A symbol file of a helper's store, read and checked; NULL if missing. */
static struct xom_syms_head *read_syms(const char *dir,
                                       const struct xom_plan_head *p)
{
	char path[4500], name[XOM_KEY_NAME_MAX];
	struct xom_plan_key k;
	struct stat st;
	const char *why;

	xom_plan_key_of(p, &k);
	xom_key_name(&k, name, sizeof(name));
	snprintf(path, sizeof(path), "%s/" XOM_STORE_SYMS "/%s", dir, name);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct xom_syms_head *h = NULL;
	if (fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(*h)
	    && st.st_size <= (off_t)XOM_SYMS_MAX
	    && (h = malloc((size_t)st.st_size)) != NULL
	    && (pread(fd, h, (size_t)st.st_size, 0) != st.st_size
	        || xom_syms_check(h, (size_t)st.st_size, &why) != 0)) {
		free(h);
		h = NULL;
	}
	close(fd);
	return h;
}

/* How a helper that left records out ended, for its files' reasons. */
static void ended_how(int wst, char *buf, size_t cap)
{
	if (WIFSIGNALED(wst))
		snprintf(buf, cap, "the scanner was killed by signal %d (%s)",
		         WTERMSIG(wst), strsignal(WTERMSIG(wst)));
	else
		snprintf(buf, cap, "the scanner stopped early (exit status %d)",
		         WEXITSTATUS(wst));
}

/* Reads the records of a finished helper, one per file of its share. */
static void take_records(struct job *j, int wst)
{
	char how[128];
	size_t at = 0;
	const char *why;

	for (size_t i = 0; i < j->count; i++) {
		struct cache_file *f = s.todo[j->first + i];
		const struct xom_noplan_head *r = (const void *)(j->buf + at);
		bar.files_done++;
		bar.bytes_done += f->size;
		if (j->len - at < sizeof(*r) || r->total < sizeof(*r)
		    || r->total > j->len - at || r->total % 8) {
			ended_how(wst, how, sizeof(how));
			failed(f, XOM_EXIT_ENV, how);
			at = j->len;
			continue;
		}
		if (!memcmp(r->magic, XOM_NOPLAN_MAGIC, 8)) {
			j->buf[at + r->total - 1] = 0;
			failed(f, r->code == XOM_EXIT_FAILED ? XOM_EXIT_FAILED : XOM_EXIT_ENV,
			       (const char *)(r + 1));
		} else if (xom_plan_check(r, r->total, &why) != 0) {
			failed(f, XOM_EXIT_ENV, why);
		} else {
			struct xom_plan_head *p = malloc(r->total);
			struct xom_syms_head *y = NULL;
			if (p)
				memcpy(p, r, r->total);
			if (p && p->nsyms && !(y = read_syms(j->dir, p))) {
				free(p);
				failed(f, XOM_EXIT_ENV, "the scanner kept no symbol file for it");
			} else if (!p) {
				failed(f, XOM_EXIT_ENV, "out of memory");
			} else {
				keep(f, p, y);
			}
		}
		at += r->total;
	}
}

/* Starts a helper on the next share of files; 0, or -1 (said). */
static int start_job(struct job *j)
{
	int out[2];
	size_t n = 0;
	uint64_t bytes = 0;

	while (s.next + n < s.ntodo && n < s.chunk_files
	       && (!n || bytes + s.todo[s.next + n]->size <= s.chunk_bytes))
		bytes += s.todo[s.next + n++]->size;
	char **argv = calloc(n + 10, sizeof(*argv));
	snprintf(j->dir, sizeof(j->dir), "%s/%u", s.root, s.serial++);
	if (!argv || pipe2(out, O_CLOEXEC) != 0) {
		say("cannot start the scanner: %s", strerror(errno));
		free(argv);
		return -1;
	}
	size_t k = 0;
	argv[k++] = (char *)"xom-plan";
	argv[k++] = (char *)"--store";
	argv[k++] = j->dir;
	argv[k++] = (char *)"--jobs";
	argv[k++] = (char *)"1";
	argv[k++] = (char *)"--quiet";
	argv[k++] = (char *)"--";
	for (size_t i = 0; i < n; i++)
		argv[k++] = s.todo[s.next + i]->path;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	char *envp[] = { NULL };
	int rc = posix_spawn(&j->pid, s.o->helper, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	free(argv);
	close(out[1]);
	if (rc != 0) {
		close(out[0]);
		j->pid = 0;
		/* The helper's stderr is /dev/null: in a bare chroot, where /dev
		 * is empty, posix_spawn fails with ENOENT as if the helper were
		 * missing. */
		if (rc == ENOENT && access("/dev/null", W_OK) != 0)
			say("cannot run %s: there is no /dev/null (in a chroot, mount /dev first)",
			    s.o->helper);
		else
			say("cannot run %s: %s", s.o->helper, strerror(rc));
		return -1;
	}
	j->out = out[0];
	j->len = 0;
	j->first = s.next;
	j->count = n;
	s.next += n;
	s.running++;
	return 0;
}

/* Reads what a helper wrote; at its end, takes its records and frees the
 * slot.  Returns -1 when memory ran out. */
static int read_job(struct job *j)
{
	if (j->len == j->cap) {
		size_t cap = j->cap ? 2 * j->cap : 64 << 10;
		char *b = realloc(j->buf, cap);
		if (!b)
			return -1;
		j->buf = b;
		j->cap = cap;
	}
	ssize_t r = read(j->out, j->buf + j->len, j->cap - j->len);
	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (r > 0) {
		j->len += (size_t)r;
		return 0;
	}
	int wst = 0;
	close(j->out);
	while (waitpid(j->pid, &wst, 0) < 0 && errno == EINTR)
		;
	j->pid = 0;
	s.running--;
	if (!stop_signal)
		take_records(j, wst);
	remove_store(j->dir);
	return 0;
}

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* Ends every helper still running, without their results. */
static void stop_jobs(void)
{
	for (int i = 0; i < s.njobs; i++)
		if (s.job[i].pid)
			kill(s.job[i].pid, SIGTERM);
	for (int i = 0; i < s.njobs; i++) {
		struct job *j = &s.job[i];
		if (!j->pid)
			continue;
		close(j->out);
		while (waitpid(j->pid, NULL, 0) < 0 && errno == EINTR)
			;
		j->pid = 0;
		remove_store(j->dir);
	}
	s.running = 0;
}

static int by_size(const void *a, const void *b)
{
	const struct cache_file *x = *(struct cache_file *const *)a;
	const struct cache_file *y = *(struct cache_file *const *)b;

	return x->size < y->size ? 1 : x->size > y->size ? -1 : 0;
}

static void run_jobs(void)
{
	struct pollfd p[MAX_JOBS];
	int slot[MAX_JOBS];

	for (;;) {
		for (int i = 0; i < s.njobs && !stop_signal && s.status != XOM_EXIT_ENV; i++)
			if (!s.job[i].pid && s.next < s.ntodo && start_job(&s.job[i]) != 0)
				s.status = XOM_EXIT_ENV;
		if (!s.running || stop_signal)
			return;
		int n = 0;
		for (int i = 0; i < s.njobs; i++)
			if (s.job[i].pid) {
				p[n] = (struct pollfd){ .fd = s.job[i].out, .events = POLLIN };
				slot[n++] = i;
			}
		int ready = poll(p, (nfds_t)n, bar.on ? 250 : -1);
		for (int i = 0; i < n && ready > 0; i++)
			if (p[i].revents && read_job(&s.job[slot[i]]) != 0) {
				say("out of memory");
				s.status = XOM_EXIT_ENV;
				stop_signal = SIGTERM;
			}
		if (now() - s.last_commit >= COMMIT_SECONDS && commit() != 0)
			return;
		progress_draw(0);
	}
}

int scan_files(struct cache_file **todo, size_t n, const struct scan_opts *o,
               struct scan_result *r)
{
	struct sigaction sa = { .sa_handler = on_signal }, old[3];
	const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	const char *tmp = getenv("TMPDIR");
	double t0 = now();

	memset(r, 0, sizeof(*r));
	memset(&s, 0, sizeof(s));
	s.todo = todo;
	s.ntodo = n;
	s.o = o;
	s.r = r;
	s.last_commit = t0;
	if (!n)
		return XOM_EXIT_OK;
	qsort(todo, n, sizeof(*todo), by_size);
	snprintf(s.root, sizeof(s.root), "%s/xom-cache.XXXXXX",
	         tmp && tmp[0] == '/' ? tmp : "/tmp");
	if (!mkdtemp(s.root)) {
		say("cannot make a temporary folder in %s: %s",
		    tmp && tmp[0] == '/' ? tmp : "/tmp", strerror(errno));
		return XOM_EXIT_ENV;
	}
	s.njobs = o->jobs > 0 ? o->jobs : cores();
	if (s.njobs > MAX_JOBS)
		s.njobs = MAX_JOBS;
	memset(&bar, 0, sizeof(bar));
	bar.on = o->progress;
	bar.files = n;
	for (size_t i = 0; i < n; i++)
		bar.bytes += todo[i]->size;
	size_t shares = (size_t)s.njobs * SHARES_PER_JOB;
	s.chunk_files = (n + shares - 1) / shares;
	s.chunk_bytes = (bar.bytes + shares - 1) / shares;
	if (s.chunk_files > CHUNK_FILES)
		s.chunk_files = CHUNK_FILES;
	if (s.chunk_bytes > CHUNK_BYTES)
		s.chunk_bytes = CHUNK_BYTES;
	bar.start = t0;
	stop_signal = 0;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);
	progress_draw(1);

	run_jobs();
	if (s.running)
		stop_jobs();
	if (s.status != XOM_EXIT_ENV || s.npending)
		commit();
	free_pending();
	free(s.pending);
	for (int i = 0; i < s.njobs; i++)
		free(s.job[i].buf);
	rmdir(s.root);
	progress_clear();
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	r->seconds = now() - t0;
	r->interrupted = stop_signal;
	return s.status;
}
