/*
 * files.c - what xom cache build makes plans for: the files named,
 * a program and everything the dynamic linker loads with it, or every ELF
 * object of the system that the runtime can meet.  Each file is named once,
 * by its real path, however many links lead to it.
 *
 * A program's libraries are listed by the system's own dynamic linker in
 * trace mode (what ldd does: LD_TRACE_LOADED_OBJECTS=1 ld.so PROG), which
 * resolves them exactly as a run would (ld.so.cache, RUNPATH, $ORIGIN,
 * hardware subfolders) but maps them without running any of their code.
 * It is the dynamic linker that xom itself runs with, never the one that
 * PROG names, which could be anything.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "../cmd.h"
#include "../exec.h"
#include "cache.h"
#include "elffile.h"

/* ---- the list ------------------------------------------------------------- */

static size_t ident_hash(dev_t dev, ino_t ino)
{
	uint64_t h = ((uint64_t)dev * 0x9e3779b97f4a7c15ull) ^ (uint64_t)ino;
	return (size_t)(h ^ (h >> 29));
}

static int rehash(struct cache_files *l, size_t nhash)
{
	size_t *t = calloc(nhash, sizeof(*t));

	if (!t)
		return -1;
	for (size_t i = 0; i < l->n; i++) {
		size_t k = ident_hash(l->f[i].dev, l->f[i].ino) & (nhash - 1);
		while (t[k])
			k = (k + 1) & (nhash - 1);
		t[k] = i + 1;
	}
	free(l->hash);
	l->hash = t;
	l->nhash = nhash;
	return 0;
}

/* An array of n items of size at p, with room for one more (its capacity
 * *cap doubled, or `first` to start with): p itself, where it moved, or
 * NULL when memory ran out (p is still the caller's). */
static void *grown(void *p, size_t *cap, size_t n, size_t size, size_t first)
{
	if (n < *cap)
		return p;
	size_t c = *cap ? 2 * *cap : first;
	void *q = realloc(p, c * size);
	if (q)
		*cap = c;
	return q;
}

/* Whether the file of st is in the list. */
static int list_has(const struct cache_files *l, const struct stat *st)
{
	if (!l->nhash)
		return 0;
	for (size_t k = ident_hash(st->st_dev, st->st_ino) & (l->nhash - 1); l->hash[k];
	     k = (k + 1) & (l->nhash - 1)) {
		const struct cache_file *f = &l->f[l->hash[k] - 1];
		if (f->dev == st->st_dev && f->ino == st->st_ino)
			return 1;
	}
	return 0;
}

/* Adds the file at path (its real path) with st; 0, also when it was
 * there already, or -1 when memory ran out. */
static int list_add(struct cache_files *l, const char *path,
                    const struct stat *st)
{
	if (2 * (l->n + 1) > l->nhash && rehash(l, l->nhash ? 2 * l->nhash : 256))
		return -1;
	size_t k = ident_hash(st->st_dev, st->st_ino) & (l->nhash - 1);
	for (; l->hash[k]; k = (k + 1) & (l->nhash - 1)) {
		const struct cache_file *f = &l->f[l->hash[k] - 1];
		if (f->dev == st->st_dev && f->ino == st->st_ino)
			return 0;
	}
	struct cache_file *f = grown(l->f, &l->cap, l->n, sizeof(*f), 256);
	if (!f)
		return -1;
	l->f = f;
	char *copy = strdup(path);
	if (!copy)
		return -1;
	l->f[l->n] = (struct cache_file){ .path = copy, .size = (uint64_t)st->st_size,
	                                  .dev = st->st_dev, .ino = st->st_ino };
	l->hash[k] = ++l->n;
	return 0;
}

void files_free(struct cache_files *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->f[i].path);
		free(l->f[i].why);
	}
	for (size_t i = 0; i < l->nstarts; i++) {
		for (size_t j = 0; j < l->starts[i].n; j++)
			free(l->starts[i].paths[j]);
		free(l->starts[i].paths);
	}
	free(l->starts);
	free(l->f);
	free(l->hash);
	memset(l, 0, sizeof(*l));
}

/* Keeps a start-up; its paths become l's.  0, or -1 (memory). */
static int start_keep(struct cache_files *l, struct cache_start *st)
{
	struct cache_start *s = grown(l->starts, &l->capstarts, l->nstarts, sizeof(*s), 64);
	if (!s)
		return -1;
	l->starts = s;
	l->starts[l->nstarts++] = *st;
	*st = (struct cache_start){ NULL, 0, 0 };
	return 0;
}

/* Appends a copy of path; 0, or -1 (memory). */
static int start_add(struct cache_start *st, const char *path)
{
	char **p = grown(st->paths, &st->cap, st->n, sizeof(*p), 16);

	if (!p)
		return -1;
	st->paths = p;
	if (!(p[st->n] = strdup(path)))
		return -1;
	st->n++;
	return 0;
}

static void start_free(struct cache_start *st)
{
	for (size_t i = 0; i < st->n; i++)
		free(st->paths[i]);
	free(st->paths);
	*st = (struct cache_start){ NULL, 0, 0 };
}

int files_add_path(struct cache_files *l, const char *path)
{
	char real[PATH_MAX];
	struct stat st;

	if (!realpath(path, real) || stat(real, &st) != 0) {
		say("%s: %s", path, errno == ENOENT ? "no such file" : strerror(errno));
		return XOM_EXIT_ENV;
	}
	if (!S_ISREG(st.st_mode)) {
		say("%s: not a regular file", path);
		return XOM_EXIT_FAILED;
	}
	if (list_add(l, real, &st) != 0) {
		say("out of memory");
		return XOM_EXIT_ENV;
	}
	return XOM_EXIT_OK;
}

int files_root_alone(const char *path, const struct stat *st)
{
	static char last[PATH_MAX];
	static size_t nlast;
	static int last_ok = -1;
	const char *slash = strrchr(path, '/');

	if (!slash || st->st_uid != 0 || (st->st_mode & 022))
		return 0;
	size_t n = (size_t)(slash - path);
	if (last_ok >= 0 && n == nlast && !memcmp(last, path, n))
		return last_ok;
	int ok = root_alone(path, st);
	last_ok = n && n < sizeof(last) ? ok : -1;
	nlast = last_ok >= 0 ? n : 0;
	memcpy(last, path, nlast);
	return ok;
}

/* ---- a program and its libraries ----------------------------------------- */

/* The dynamic linker that runs xom itself: the system's. */
const char *files_ldso(void)
{
	static char interp[PATH_MAX];
	struct stat st;

	if (interp[0])
		return interp;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0)
		elf_kind(fd, (uint64_t)st.st_size, interp, sizeof(interp), NULL, NULL);
	if (fd >= 0)
		close(fd);
	if (!interp[0])
		snprintf(interp, sizeof(interp), "/lib64/ld-linux-x86-64.so.2");
	return interp;
}

/* A listing that takes longer than this is given up: a library path
 * that leads to a FIFO, or to a folder that hangs, would block it (and a
 * package manager's hook with it) for ever. */
#define LIST_SECONDS 10

/* Reads all of fd into a NUL-terminated malloc'd buffer, within
 * LIST_SECONDS; NULL with *late set when that ran out, NULL alone when
 * memory did. */
static char *read_all(int fd, int *late)
{
	size_t n = 0, cap = 4096;
	char *buf = malloc(cap);
	struct timespec t0, t;

	*late = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (buf) {
		if (n + 1 == cap) {
			char *b = realloc(buf, cap * 2);
			if (!b)
				break;
			buf = b;
			cap *= 2;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		long left = LIST_SECONDS * 1000L - ((t.tv_sec - t0.tv_sec) * 1000L
		                                    + (t.tv_nsec - t0.tv_nsec) / 1000000);
		struct pollfd p = { fd, POLLIN, 0 };
		int ready = left > 0 ? poll(&p, 1, (int)left) : 0;
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready == 0) {
			*late = 1;
			break;
		}
		ssize_t r = ready < 0 ? -1 : read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			buf[n] = 0;
			return buf;
		}
		n += (size_t)r;
	}
	free(buf);
	return NULL;
}

/* Whether /etc/ld.so.preload names the file lib (once per run). */
static int preload_listed(const char *lib)
{
	static int listed = -1;
	char want[PATH_MAX], got[PATH_MAX], buf[8192];

	if (listed >= 0)
		return listed;
	listed = 0;
	int fd = open("/etc/ld.so.preload", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return listed;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || !realpath(lib, want))
		return listed;
	buf[n] = 0;
	/* The dynamic linker splits it at blanks and colons. */
	for (char *save = NULL, *t = strtok_r(buf, " \t\n:", &save); t;
	     t = strtok_r(NULL, " \t\n:", &save))
		if (realpath(t, got) && !strcmp(got, want))
			listed = 1;
	return listed;
}

/*
 * Runs the dynamic linker in trace mode on path, with envp: its output in
 * *text (malloc'd) and its wait status in *wst; XOM_EXIT_OK, or what went
 * wrong, said (name names the file for the user; loud: say it).
 */
static int run_listing(const char *name, const char *path, char **envp, int loud,
                       char **text, int *wst)
{
	char *ld = (char *)files_ldso();
	char *argv[] = { ld, (char *)path, NULL };
	posix_spawn_file_actions_t fa;
	int out[2], late;
	pid_t pid;

	*text = NULL;
	if (pipe2(out, O_CLOEXEC) != 0) {
		say("cannot make a pipe: %s", strerror(errno));
		return XOM_EXIT_ENV;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	int rc = posix_spawn(&pid, ld, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(out[1]);
	if (rc != 0) {
		close(out[0]);
		say("cannot run the dynamic linker %s: %s", ld, strerror(rc));
		return XOM_EXIT_ENV;
	}
	*text = read_all(out[0], &late);
	close(out[0]);
	if (late)
		kill(pid, SIGKILL);
	while (waitpid(pid, wst, 0) < 0 && errno == EINTR)
		;
	if (late) {
		free(*text);
		*text = NULL;
		if (loud)
			say("%s: the dynamic linker did not finish listing its libraries in %d s; they are left out",
			    name, LIST_SECONDS);
		return XOM_EXIT_FAILED;
	}
	if (!*text) {
		say("out of memory");
		return XOM_EXIT_ENV;
	}
	return XOM_EXIT_OK;
}

/*
 * Lists, through the dynamic linker in trace mode, the libraries that
 * path loads, with l->preload preloaded; adds each found one when add is
 * set, and says which are missing.  For a program (not a library), with
 * l->preload set and nothing missing, it records its start-up.  Output
 * lines are "\tNAME => PATH (0xADDR)", "\tNAME => not found" and
 * "\tPATH (0xADDR)" (the dynamic linker itself, the vDSO, a preload).
 * The last build's listing stands in for the run while nothing that it
 * depends on changed (listings.c).
 */
static int list_libraries(struct cache_files *l, const char *name,
                          const char *path, int secure, int add, int program)
{
	char lib_path[PATH_MAX + 32], preload[PATH_MAX + 16];
	char *envp[4] = { (char *)"LD_TRACE_LOADED_OBJECTS=1", NULL, NULL, NULL };
	const char *llp = getenv("LD_LIBRARY_PATH");
	int status = XOM_EXIT_OK, wst = 0, nenv = 1;
	struct cache_start st = { NULL, 0, 0 };

	/* The run's own LD_LIBRARY_PATH changes what it loads, except in a
	 * set-ID program, where the dynamic linker ignores it; a listing
	 * that it steers is not kept for the next build. */
	int memo = !(llp && !secure);
	if (!memo) {
		snprintf(lib_path, sizeof(lib_path), "LD_LIBRARY_PATH=%s", llp);
		envp[nenv++] = lib_path;
	}
	/* libxom.so comes right after the program, whether LD_PRELOAD or
	 * /etc/ld.so.preload loads it, but after what the file lists before
	 * it: when the file lists it, the listing takes it from there. */
	int pre = l->preload && !preload_listed(l->preload);
	if (pre) {
		snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", l->preload);
		envp[nenv++] = preload;
	}
	const char *saved = memo ? listings_find(l->memo, path, secure, pre) : NULL;
	char *text = saved ? strdup(saved) : NULL;
	if (saved && !text) {
		say("out of memory");
		return XOM_EXIT_ENV;
	}
	if (!saved) {
		int rc = run_listing(name, path, envp, add, &text, &wst);
		if (rc != XOM_EXIT_OK)
			return rc;
		if (memo && WIFEXITED(wst) && WEXITSTATUS(wst) == 0)
			listings_put(l->memo, path, secure, pre, text);
	}
	if (!WIFEXITED(wst) || WEXITSTATUS(wst) != 0) {
		if (add)
			say("%s: the dynamic linker cannot load it (%s --list fails)", name,
			    files_ldso());
		status = XOM_EXIT_FAILED;
	}
	int keep = program && l->preload && status == XOM_EXIT_OK
	           && start_add(&st, path) == 0;
	for (char *line = text, *next; *line; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = 0;
		line += strspn(line, " \t");
		char *arrow = strstr(line, " => "), *file = arrow ? arrow + 4 : line;
		if (arrow && !strcmp(file, "not found")) {
			*arrow = 0;
			if (add)
				say("%s: needs %s, which the dynamic linker cannot find", name, line);
			status = xom_exit_worst(status, XOM_EXIT_FAILED);
			keep = 0;
			continue;
		}
		char *addr = strstr(file, " (0x");
		if (!addr || file[0] != '/') {
			/* A library found through a relative folder
			 * (LD_LIBRARY_PATH=lib) is named relative to here,
			 * so no set can name it; the vDSO and "statically
			 * linked" name no file. */
			if (arrow && addr)
				keep = 0;
			continue;
		}
		*addr = 0;
		if (add)
			status = xom_exit_worst(status, files_add_path(l, file));
		keep = keep && start_add(&st, file) == 0;
	}
	free(text);
	/* A start-up that names only the program is no batch of two. */
	if (keep && st.n >= 2 && start_keep(l, &st) != 0) {
		say("out of memory");
		status = xom_exit_worst(status, XOM_EXIT_ENV);
	}
	start_free(&st);
	return status;
}

static int add_prog_at(struct cache_files *l, const char *name,
                       const char *path, int depth);

/* A #! script: its interpreter is what runs, and what "env NAME" runs. */
static int add_script(struct cache_files *l, const char *name,
                      const char *interp, const char *arg, int depth)
{
	char found[PATH_MAX];
	const char *base = strrchr(interp, '/');

	if (depth >= MAX_INTERP_DEPTH) {
		say("%s: too many levels of #! interpreters", name);
		return XOM_EXIT_FAILED;
	}
	int status = add_prog_at(l, name, interp, depth + 1);
	base = base ? base + 1 : interp;
	if (!strcmp(base, "env") && arg[0] && arg[0] != '-') {
		int e = prog_search(arg, found, sizeof(found));
		if (e) {
			say("%s: its interpreter %s %s: %s", name, interp, arg,
			    e == ENOENT ? "command not found" : strerror(e));
			return xom_exit_worst(status, XOM_EXIT_FAILED);
		}
		status = xom_exit_worst(status, add_prog_at(l, name, found, depth + 1));
	}
	return status;
}

/* The program at path, which the name given led to. */
static int add_prog_at(struct cache_files *l, const char *name,
                       const char *path, int depth)
{
	char interp[PATH_MAX], arg[EXEC_HEAD];
	struct exec_head h;
	struct stat st;

	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		int e = fd < 0 ? errno : EINVAL;
		if (fd >= 0)
			close(fd);
		say("%s: %s", name, fd < 0 && e == ENOENT ? "no such file"
		    : fd < 0 ? strerror(e) : "not a regular file");
		return fd < 0 ? XOM_EXIT_ENV : XOM_EXIT_FAILED;
	}
	int audit, program;
	enum elf_kind kind = elf_kind(fd, (uint64_t)st.st_size, interp, sizeof(interp),
	                              &audit, &program);
	int script = kind == ELF_OTHER && exec_head(fd, &h, interp, arg) == EXEC_SCRIPT
	             && interp[0];
	close(fd);
	if (script)
		return add_script(l, name, interp, arg, depth);
	if (kind == ELF_OTHER) {
		say("%s: not an x86-64 ELF program, library or #! script", name);
		return XOM_EXIT_FAILED;
	}
	/* xom run protects a static program from outside, with this plan;
	 * it loads nothing else. */
	if (kind == ELF_STATIC)
		return files_add_path(l, path);
	int status = files_add_path(l, path);
	if (kind == ELF_NO_CODE)
		return status;
	/* Its own dynamic linker is mapped too, whichever lists the rest. */
	if (interp[0] && access(interp, F_OK) == 0)
		status = xom_exit_worst(status, files_add_path(l, interp));
	if (audit) {
		say("%s: names audit modules (DT_AUDIT), which listing its libraries would run; its libraries are left out: name them as files", name);
		return xom_exit_worst(status, XOM_EXIT_FAILED);
	}
	int secure = (st.st_mode & (S_ISUID | S_ISGID)) != 0;
	return xom_exit_worst(status, list_libraries(l, name, path, secure, 1, program));
}

int files_add_prog(struct cache_files *l, const char *prog)
{
	char path[PATH_MAX];

	/* A name with a slash is a path, as in a shell; a bare name is a
	 * command to look up. */
	if (!strchr(prog, '/')) {
		int e = prog_search(prog, path, sizeof(path));
		if (e) {
			say("%s: %s", prog, e == ENOENT ? "command not found" : strerror(e));
			return XOM_EXIT_FAILED;
		}
		prog = path;
	}
	return add_prog_at(l, prog, prog, 0);
}

/* ---- every ELF object of the system ------------------------------------- */

/* Where installed programs and libraries live; a folder reached twice
 * (/lib is /usr/lib on a merged /usr) is walked once. */
const char *const files_system_dirs[] = {
	"/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/bin", "/usr/sbin",
	"/bin", "/sbin", "/usr/libexec", "/usr/local/bin", "/usr/local/sbin",
	"/usr/local/lib", "/usr/local/libexec", NULL,
};

/* Trees under those that hold no object a program loads: separate debug
 * information, kernel modules and firmware. */
static const char *const skipped_trees[] = {
	"/usr/lib/debug", "/usr/lib/modules", "/usr/lib/firmware",
	"/usr/lib/x86_64-linux-gnu/debug", NULL,
};

static struct walk {
	struct cache_files *l;
	size_t seen;
	int status;
	int secure_only;        /* files_add_secure: secure-execution programs */
} walk;

static int skipped_tree(const char *path)
{
	for (int i = 0; skipped_trees[i]; i++)
		if (!strcmp(path, skipped_trees[i]))
			return 1;
	return 0;
}

/* A file worth opening: executable, or named like a shared object. */
static int candidate(const char *path, const struct stat *st)
{
	const char *base = strrchr(path, '/');

	return S_ISREG(st->st_mode) && st->st_size >= (off_t)sizeof(Elf64_Ehdr)
	       && ((st->st_mode & 0111) || strstr(base ? base : path, ".so"));
}

/* Whether the kernel runs the program at path in secure-execution mode
 * (AT_SECURE) for another user: set-user-ID, set-group-ID, or with file
 * capabilities. */
static int secure_program(const char *path, const struct stat *st)
{
	return (st->st_mode & (S_ISUID | S_ISGID))
	       || getxattr(path, "security.capability", NULL, 0) > 0;
}

static int visit(const char *path, const struct stat *lst, int type,
                 struct FTW *ftw)
{
	struct stat st = *lst;

	(void)ftw;
	if (type == FTW_D)
		return skipped_tree(path) ? FTW_SKIP_SUBTREE : FTW_CONTINUE;
	/* A link to a file is followed (it may lead out of these folders,
	 * to /opt, say); a link to a folder is not. */
	if (type == FTW_SL && stat(path, &st) != 0)
		return FTW_CONTINUE;
	if ((type != FTW_F && type != FTW_SL) || !candidate(path, &st))
		return FTW_CONTINUE;
	walk.seen++;
	/* A file met before, through another link, is in the list already
	 * (and its start-up recorded); nothing below would change. */
	if (list_has(walk.l, &st))
		return FTW_CONTINUE;
	int audit, program;
	int kind = facts_kind(walk.l->facts, path, &st, &audit, &program);
	if (kind != ELF_DYNAMIC || (walk.secure_only && !(program && secure_program(path, &st))))
		return FTW_CONTINUE;
	char real[PATH_MAX];
	if (type == FTW_SL ? !realpath(path, real)
	    : (size_t)snprintf(real, sizeof(real), "%s", path) >= sizeof(real))
		return FTW_CONTINUE;
	size_t had = walk.l->n;
	if (list_add(walk.l, real, &st) != 0) {
		say("out of memory");
		walk.status = XOM_EXIT_ENV;
		return FTW_STOP;
	}
	/* A program's start-up, once per file (not for each link to it);
	 * not one that names audit modules, which listing would run, and
	 * only one that root alone can change, file and folders: the walk
	 * runs as root, and whoever could change the program could make its
	 * listing load what they like.  What its listing finds wrong is not
	 * this walk's to say. */
	if (walk.l->preload && program && !audit && walk.l->n > had
	    && files_root_alone(real, &st)
	    && list_libraries(walk.l, real, real, (st.st_mode & (S_ISUID | S_ISGID)) != 0,
	                      0, 1) == XOM_EXIT_ENV) {
		walk.status = XOM_EXIT_ENV;
		return FTW_STOP;
	}
	return FTW_CONTINUE;
}

/* Whether dir is one of the first n roots, or inside one. */
static int covered(char roots[][PATH_MAX], int n, const char *dir)
{
	for (int i = 0; i < n; i++) {
		size_t len = strlen(roots[i]);
		if (!strncmp(dir, roots[i], len) && (dir[len] == '/' || !dir[len]
		                                     || len == 1))
			return 1;
	}
	return 0;
}

static int add_system(struct cache_files *l, size_t *seen, int secure_only)
{
	static char roots[32][PATH_MAX];
	int n = 0;

	walk = (struct walk){ l, 0, XOM_EXIT_OK, secure_only };
	for (int i = 0; files_system_dirs[i] && n < 32; i++) {
		char real[PATH_MAX];
		if (!realpath(files_system_dirs[i], real) || covered(roots, n, real))
			continue;
		/* A root inside a later one would be walked twice. */
		strcpy(roots[n++], real);
	}
	for (int i = 0; i < n; i++) {
		int skip = 0;
		for (int j = 0; j < n; j++)
			if (j != i && covered(&roots[j], 1, roots[i])
			    && strcmp(roots[j], roots[i]))
				skip = 1;
		if (skip)
			continue;
		if (nftw(roots[i], visit, 64, FTW_PHYS | FTW_ACTIONRETVAL) == -1) {
			say("cannot walk %s: %s", roots[i], strerror(errno));
			walk.status = xom_exit_worst(walk.status, XOM_EXIT_ENV);
		}
		if (walk.status == XOM_EXIT_ENV)
			break;
	}
	*seen = walk.seen;
	return walk.status;
}

int files_add_system(struct cache_files *l, size_t *seen)
{
	return add_system(l, seen, 0);
}

int files_add_secure(struct cache_files *l, size_t *seen)
{
	return add_system(l, seen, 1);
}
