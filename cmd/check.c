/*
 * check.c - xom check: whether this machine can enforce execute-only code,
 * one line per thing that must hold, then the XOM_OPTIONS values in force.
 * The options and the plan stores are read by the runtime's own code
 * (loader/options.c), so that xom check and the runtime never disagree.
 */
#include <cpuid.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../loader/options.h"
#include "../formats/xom_plan.h"
#include "cache/cache.h"
#include "cmd.h"

const char check_usage[] =
	"usage: xom check [--conf FILE]\n"
	"\n"
	"Says, one line each, whether execute-only code can be enforced here:\n"
	"the CPU's PKU and OSPKE flags, pkey_alloc, the glibc version, the free\n"
	"protection keys, the runtime libraries, XOM_OPTIONS (checked by the\n"
	"runtime's own parser) and the plan stores as the runtime will use them\n"
	"(the system store, the user's cache, and where plans go when the cache\n"
	"cannot be written), /etc/xom.conf (its owner and mode as the runtime\n"
	"requires them, then each rule, read by the runtime's own parser as if\n"
	"it matched); then the value in force of\n"
	"every XOM_OPTIONS key, and whether it is the default.  The last line\n"
	"is the verdict.\n"
	"\n"
	"  --conf FILE  check FILE as the runtime would check /etc/xom.conf (a\n"
	"               new version, before it is moved into place; its rules\n"
	"               are read even where its owner or mode would make the\n"
	"               runtime ignore it, and a FILE that is missing fails)\n"
	"Exit status: 0 enforcement works here, 1 it does not, 64 usage.\n";

/* What failed first, for the verdict; NULL while all is well. */
static const char *failure;

/* One line: good is 1 (ok), 0 (FAIL: enforcement cannot work) or -1
 * (note: worth knowing, not fatal). */
static void check_line(int good, const char *what, const char *why_bad,
                       const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void check_line(int good, const char *what, const char *why_bad,
                       const char *fmt, ...)
{
	va_list ap;

	printf("%-12s %s  ", what, good > 0 ? "ok  " : good == 0 ? "FAIL" : "note");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (good == 0 && !failure)
		failure = why_bad;
}

/* Whether reads of p are denied: write(2) copies from it, or fails with
 * EFAULT. */
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

/* Where a seccomp filter refuses pkey_alloc, the runtime uses the kernel's
 * own execute-only key (loader/kernkey.c): by mprotect(PROT_EXEC), or by
 * mapping code again from its file with PROT_EXEC.  Tried the same ways
 * here, on a page of this program's own file. */
static const char *kernel_key_way(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	const char *way = NULL;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	void *p = fd < 0 ? MAP_FAILED
	          : mmap(NULL, (size_t)pg, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

	if (p == MAP_FAILED) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (mprotect(p, (size_t)pg, PROT_EXEC) == 0)
		way = unreadable(p) ? "mprotect(PROT_EXEC)" : NULL;
	else if (mmap(p, (size_t)pg, PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, 0) == p)
		way = unreadable(p) ? "mapping code again from its file with PROT_EXEC" : NULL;
	munmap(p, (size_t)pg);
	close(fd);
	return way;
}

/* CPUID, pkey_alloc and the free keys.  Returns 1 when keys work. */
static int check_keys(void)
{
	unsigned a, b, c = 0, d;

	if (__get_cpuid_max(0, NULL) >= 7)
		__cpuid_count(7, 0, a, b, c, d);
	(void)a; (void)b; (void)d;
	int pku = (c >> 3) & 1, ospke = (c >> 4) & 1;
	check_line(pku, "cpu pku", "the CPU has no pku",
	           pku ? "yes: the CPU has protection keys (CPUID.7.0:ECX bit 3)"
	           : "no: the CPU has no protection keys (CPUID.7.0:ECX bit 3 is clear); most cloud VMs hide them");
	check_line(ospke, "cpu ospke", "the kernel has not enabled ospke",
	           ospke ? "yes: the kernel has enabled protection keys (CR4.PKE)"
	           : pku ? "no: the kernel has not enabled protection keys (booted with nopku?)"
	                 : "no: the kernel cannot enable protection keys without pku");

	int key = pkey_alloc(0, PKEY_DISABLE_ACCESS);
	int alloc_errno = errno;
	int filtered = key < 0 && pku && ospke
	               && (alloc_errno == EPERM || alloc_errno == ENOSYS);
	if (key >= 0)
		check_line(1, "pkey_alloc", NULL, "works (got key %d)", key);
	else
		check_line(filtered ? -1 : 0, "pkey_alloc", "pkey_alloc fails", "fails: %s%s",
		           strerror(alloc_errno), filtered ? " (a seccomp filter refuses it)" : "");
	check_line(1, "glibc", NULL, "%s %s", gnu_get_libc_version(),
	           gnu_get_libc_release());
	if (filtered) {
		const char *way = kernel_key_way();
		check_line(way != NULL, "kernel key", "a seccomp filter refuses pkey_alloc and the kernel's execute-only key",
		           way ? "works: a seccomp filter refuses pkey_alloc; the kernel's own execute-only key protects code instead, by %s"
		               : "fails too: a seccomp filter refuses pkey_alloc, and the kernel's own execute-only key cannot be had either%s",
		           way ? way : "");
		return way != NULL;
	}
	if (key < 0) {
		check_line(0, "free keys", "pkey_alloc fails", "none: pkey_alloc fails");
		return 0;
	}
	/* Keys are a per-process budget of 15 (key 0 is the default); count
	 * by taking them all, then give them back. */
	int keys[16], n = 0;
	keys[n++] = key;
	while (n < 16 && (keys[n] = pkey_alloc(0, 0)) >= 0)
		n++;
	for (int i = 0; i < n; i++)
		pkey_free(keys[i]);
	check_line(1, "free keys", NULL, "%d of 15 in a new process (xom needs 1)", n);
	return 1;
}

static void check_files(void)
{
	static const struct { const char *name, *what, *missing; } files[] = {
		{ "libxom.so", "libxom.so", "not found beside xom or in ../lib/xom" },
		{ "libxom-audit.so", "audit module", "not found beside xom or in ../lib/xom" },
		{ "xom-plan", "xom-plan", "not found: the runtime cannot scan what is not cached" },
	};
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		int have = find_own(files[i].name, path, sizeof path);
		check_line(have, files[i].what, "the runtime is not installed", "%s",
		           have ? path : files[i].missing);
	}
}

/* The plans in the store index DIR/plans, or -1 when there is none. */
static long count_plans(const char *dir)
{
	char path[PATH_MAX];
	struct xom_store_head h;

	snprintf(path, sizeof path, "%s/" XOM_STORE_INDEX, dir);
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	size_t got = fread(&h, 1, sizeof h, f);
	fclose(f);
	return got == sizeof h && !memcmp(h.magic, XOM_STORE_MAGIC, 8) ? (long)h.nplans : -1;
}

/* Whether this user could create dir (mkdir -p) or write into it. */
static int can_write(const char *dir)
{
	char p[PATH_MAX];

	snprintf(p, sizeof p, "%s", dir);
	for (;;) {
		if (access(p, F_OK) == 0)
			return access(p, W_OK | X_OK) == 0;
		char *slash = strrchr(p, '/');
		if (!slash || slash == p)
			return access("/", W_OK | X_OK) == 0;
		*slash = 0;
	}
}

/* What the runtime makes of one store directory: 1 usable, 0 not there
 * yet, -1 unusable, with the reason in why. */
static int store_state(const char *dir, int system, char *why, size_t cap)
{
	struct stat st;

	if (lstat(dir, &st) != 0) {
		snprintf(why, cap, "%s", errno == ENOENT ? "not there" : strerror(errno));
		return errno == ENOENT ? 0 : -1;
	}
	if (!S_ISDIR(st.st_mode))
		return snprintf(why, cap, "not a directory"), -1;
	if (system && !xom_store_dir_shared(dir, lstat))
		return snprintf(why, cap, "ignored: it or a directory above it is not root's alone"), -1;
	if (!system && st.st_uid != geteuid())
		return snprintf(why, cap, "not used: its owner is uid %u, not you",
		                (unsigned)st.st_uid), -1;
	long n = count_plans(dir);
	int w = snprintf(why, cap, "%ld plan%s", n < 0 ? 0 : n, n == 1 ? "" : "s");
	if (!system && (st.st_mode & 077)) {
		snprintf(why + w, cap - (size_t)w, ", read but not written: mode %04o (plans are written only to a folder of mode 0700)",
		         (unsigned)(st.st_mode & 07777));
		return 2;
	}
	return 1;
}

/*
 * The plan stores, as the runtime lists them (xom_store_dirs): the system
 * store it reads first, the user's cache it reads and writes, and the
 * private folder that plans go to when the cache cannot be written.
 */
static void check_stores(const struct xom_opts *o)
{
	struct xom_dirs d;
	char sys[PATH_MAX], user[PATH_MAX], fb[PATH_MAX], why[PATH_MAX + 64];

	xom_store_dirs(o, 0, geteuid(), lstat, &d);
	const char *sd = xom_dir_path(&d, XOM_STORE_SYSTEM, sys, sizeof sys);
	const char *ud = xom_dir_path(&d, XOM_STORE_USER, user, sizeof user);
	const char *fd = xom_dir_path(&d, XOM_STORE_FALLBACK, fb, sizeof fb);

	if (!sd) {
		check_line(-1, "store", NULL, "off (store=off): no system plan store");
	} else {
		int st = store_state(sd, 1, why, sizeof why);
		check_line(st > 0 ? 1 : -1, "store", NULL, "%s: %s%s", sd,
		           st == 0 ? "not built" : why,
		           st == 0 ? " (root: xom cache build --system)" : "");
	}
	int cache = xom_cache_dir(o, user, sizeof user);
	if (cache == XOM_CACHE_OFF) {
		check_line(-1, "cache", NULL, "off (cache=off): objects that no store has are scanned at every start");
		return;
	}
	if (!ud && o->cache) {
		check_line(-1, "cache", NULL, "none: cache=%s is not an absolute path, so the runtime uses no cache%s%s",
		           o->cache, fd ? "; plans go to " : "; every start rescans", fd ? fd : "");
		return;
	}
	if (!ud) {
		check_line(-1, "cache", NULL, "none: neither XDG_CACHE_HOME nor HOME is an absolute path%s%s",
		           fd ? "; plans go to " : "; every start rescans", fd ? fd : "");
		return;
	}
	int st = store_state(ud, 0, why, sizeof why);
	if ((st == 0 || st == 1) && can_write(ud)) {
		check_line(1, "cache", NULL, "%s: %s", ud,
		           st == 0 ? "not there yet (the first cold start creates it, mode 0700)" : why);
		return;
	}
	check_line(-1, "cache", NULL, "%s: %s; new plans go to %s instead", ud,
	           st < 0 || st == 2 ? why : st == 1 ? "cannot be written" : "cannot be created",
	           fd ? fd : "(nowhere: every start rescans)");
	if (fd) {
		int fs = store_state(fd, 0, why, sizeof why);
		check_line(fs >= 0 ? 1 : -1, "fallback", NULL, "%s: %s", fd,
		           fs == 0 ? "not there yet" : why);
	}
}

/* ---- set-user-ID programs ------------------------------------------------- */

/* The libxom.so that /etc/ld.so.preload lists, in lib; 0 when none. */
static int preloaded_lib(char *lib, size_t cap)
{
	char buf[8192];
	FILE *f = fopen("/etc/ld.so.preload", "re");

	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	/* The dynamic linker's separators; '#' to the end of a line. */
	for (char *c = buf; (c = strchr(c, '#'));)
		while (*c && *c != '\n')
			*c++ = ' ';
	for (char *save = NULL, *t = strtok_r(buf, " \t\n:", &save); t;
	     t = strtok_r(NULL, " \t\n:", &save)) {
		const char *base = strrchr(t, '/');
		if (!strcmp(base ? base + 1 : t, "libxom.so") && strlen(t) < cap) {
			strcpy(lib, t);
			return 1;
		}
	}
	return 0;
}

/* The first of the n files at paths whose plan ix lacks (its base name),
 * or NULL when it has them all. */
static const char *first_missing(const struct store_index *ix, char *const *paths,
                                 size_t n)
{
	struct xom_plan_key k;

	for (size_t i = 0; i < n; i++)
		if (file_key(paths[i], &k) != 0 || !store_find(ix, &k)) {
			const char *base = strrchr(paths[i], '/');
			return base ? base + 1 : paths[i];
		}
	return NULL;
}

/*
 * Under xom in every program (/etc/ld.so.preload), whether the system
 * store holds the plans of every set-user-ID, set-group-ID and
 * file-capability program under the system's folders and of what each
 * loads at start-up: such a program reads no other store, so without
 * them it scans at every run, in a helper whose failure its caller can
 * bring about (a hard limit lowered) and which leaves it unprotected.
 */
static void check_secure(const struct xom_opts *o)
{
	char lib[PATH_MAX], sys[PATH_MAX], why[PATH_MAX + 64], names[600];
	struct cache_files l;
	struct store_index ix = { NULL, 0, NULL };
	struct xom_dirs d;
	size_t seen, missing = 0, shown = 0, at = 0;

	if (!preloaded_lib(lib, sizeof lib))
		return;         /* set-ID programs are reached by nothing else */
	memset(&l, 0, sizeof l);
	l.preload = lib;
	files_add_secure(&l, &seen);
	xom_store_dirs(o, 1, 0, lstat, &d);
	const char *sd = xom_dir_path(&d, XOM_STORE_SYSTEM, sys, sizeof sys);
	char where[sizeof sys + sizeof why + 32];
	if (!sd)
		snprintf(where, sizeof where, "the system store (store=off)");
	else if (store_trusted(sd, 1, why, sizeof why) != 0)
		snprintf(where, sizeof where, "the system store (%s: not read: %s)", sd, why);
	else if (store_map(sd, &ix) != 0)
		snprintf(where, sizeof where, "the system store (%s: %s)", sd, ix.why);
	else
		snprintf(where, sizeof where, "%s", sd);
	names[0] = 0;
	for (size_t i = 0; i < l.n; i++) {
		char *alone[] = { l.f[i].path };
		char *const *paths = alone;
		size_t n = 1;
		for (size_t j = 0; j < l.nstarts; j++)
			if (!strcmp(l.starts[j].paths[0], l.f[i].path)) {
				paths = l.starts[j].paths;
				n = l.starts[j].n;
			}
		const char *lack = first_missing(&ix, paths, n);
		if (!lack)
			continue;
		if (missing++ < 3 && at < sizeof names)
			at += (size_t)snprintf(names + at, sizeof names - at, "%s%s (%s)",
			                       shown++ ? ", " : "", l.f[i].path, lack);
	}
	if (!l.n)
		check_line(1, "set-ID", NULL, "no set-user-ID, set-group-ID or file-capability program in the system's folders");
	else if (!missing)
		check_line(1, "set-ID", NULL, "%zu set-user-ID, set-group-ID and file-capability program%s: %s has the plans of each and of what it loads",
		           l.n, l.n == 1 ? "" : "s", where);
	else
		check_line(-1, "set-ID", NULL, "%zu of %zu set-user-ID, set-group-ID and file-capability programs lack plans in %s, so each of their runs scans, which their caller can make fail and leave them unprotected (refused under require=1): %s%s; root: xom cache build --system",
		           missing, l.n, where, names, missing > shown ? ", ..." : "");
	store_unmap(&ix);
	files_free(&l);
}

/* ---- /etc/xom.conf ---------------------------------------------------------- */

/* Root's and writable by root alone, as loader/settings.c requires. */
static int root_only(const struct stat *st)
{
	return st->st_uid == 0 && !(st->st_mode & 022);
}

/*
 * Whether a valid rule with options o refuses every program it matches
 * here: require=1 where no key can be had (keys says why), unless the
 * rule turns xom off or plans without applying.  Says so on the rule's
 * line, with whether it matches the shell, and the way back.  Returns 1
 * when it said so.
 */
static int check_require(const char *what, const char *shown, const char *pat,
                         const struct xom_opts *o, const char *keys)
{
	char sh[PATH_MAX];

	if (!keys || o->require != 1 || o->mode == XOM_OFF
	    || o->backend == XOM_BACKEND_NONE)
		return 0;
	/* The runtime names a program by its real path (/proc/self/exe). */
	int shell = realpath("/bin/sh", sh) && fnmatch(pat, sh, 0) == 0;
	check_line(0, what, "a require=1 rule of xom.conf refuses every program it matches",
	           "%s: refuses every program it matches here (exit 126), since %s%s%s%s; the xom command itself still runs (xom disable --system), and xom.require=0 on the kernel command line waives require=1 (xom(1), RECOVERY)",
	           shown, keys, shell ? ": no new shell starts (it matches " : "",
	           shell ? sh : "", shell ? ")" : "");
	return 1;
}

/* The file, as the runtime reads it (loader/settings.c), then every rule
 * line by the runtime's parser (xom_conf_check_line), matched or not;
 * keys says why this machine cannot protect, or is NULL.  A file the
 * runtime would ignore for its owner or mode still has its rules read, so
 * that a draft can be checked before root moves it into place; named is 1
 * when the user named the file, whose absence is then a failure. */
static void check_conf(const char *path, const char *keys, int named)
{
	char dir[PATH_MAX], line[8192], err[512];
	struct stat st, ds;
	unsigned rules = 0, lineno = 0;

	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = 0;
	else if (slash)
		*slash = 0;
	else
		snprintf(dir, sizeof dir, ".");
	if (lstat(path, &st) != 0) {
		if (errno == ENOENT && !named)
			check_line(1, "xom.conf", NULL, "%s: none (every program has the defaults)", path);
		else
			check_line(0, "xom.conf", "xom.conf cannot be read", "%s: %s", path,
			           strerror(errno));
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		check_line(0, "xom.conf", "xom.conf is ignored",
		           "%s: ignored by the runtime: not a regular file", path);
		return;
	}
	int ignored = stat(dir, &ds) != 0 || !root_only(&st) || !root_only(&ds);
	if (ignored)
		check_line(0, "xom.conf", "xom.conf is ignored",
		           "%s: ignored by the runtime, which says so in every process: it or %s is not root's, or others may write it (owner uid %u, mode %04o)",
		           path, dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	if (st.st_size >= (1 << 20)) {
		check_line(0, "xom.conf", "xom.conf is ignored",
		           "%s: ignored by the runtime: larger than 1 MB", path);
		return;
	}
	FILE *f = fopen(path, "re");
	if (!f) {
		check_line(0, "xom.conf", "xom.conf cannot be read", "%s: %s", path,
		           strerror(errno));
		return;
	}
	if (!ignored)
		check_line(1, "xom.conf", NULL, "%s: root's, mode %04o", path,
		           (unsigned)(st.st_mode & 07777));
	while (fgets(line, sizeof line, f)) {
		struct xom_opts o;
		const char *pat;
		char what[32], shown[sizeof line];
		int require;
		lineno++;
		line[strcspn(line, "\n")] = 0;
		snprintf(shown, sizeof shown, "%s", line + strspn(line, " \t"));
		int r = xom_conf_check_line(line, &pat, &o, &require, err, sizeof err);
		if (r == 0)
			continue;
		rules++;
		snprintf(what, sizeof what, "  line %u", lineno);
		if (r < 0)
			check_line(0, what, "a rule of xom.conf is invalid",
			           "%s: %s; the programs it matches run %s", shown, err,
			           require ? "not at all (require=1)" : "unprotected");
		else if (*pat != '/' && !strchr("*?[", *pat))
			check_line(-1, what, NULL, "%s: never matches: programs are named by their absolute path",
			           shown);
		else if (!check_require(what, shown, pat, &o, keys))
			check_line(1, what, NULL, "%s", shown);
	}
	fclose(f);
	if (ignored)
		check_line(-1, "xom.conf", NULL, "%u rule%s read; none applies until the file and its folder are root's alone",
		           rules, rules == 1 ? "" : "s");
	else
		check_line(1, "xom.conf", NULL, "%u rule%s read", rules, rules == 1 ? "" : "s");
}

/* ---- the XOM_OPTIONS values in force ------------------------------------ */

/* The values of an ENUM key are '|'-separated; index picks one. */
static const char *value_ENUM(const struct xom_opts *o, const char *key, int index,
                              const char *values, char *buf, size_t len)
{
	(void)o; (void)key;
	for (int i = 0; i < index && values; i++)
		if ((values = strchr(values, '|')))
			values++;
	snprintf(buf, len, "%.*s", values ? (int)strcspn(values, "|") : 0,
	         values ? values : "?");
	return buf;
}

static const char *value_INT(const struct xom_opts *o, const char *key, int n,
                             const char *values, char *buf, size_t len)
{
	(void)o; (void)key; (void)values;
	snprintf(buf, len, "%d", n);
	return buf;
}

static const char *value_PATH(const struct xom_opts *o, const char *key, const char *path,
                              const char *values, char *buf, size_t len)
{
	(void)o; (void)key; (void)values; (void)buf; (void)len;
	return path ? path : "(none)";
}

static const char *value_LIST(const struct xom_opts *o, const char *key, const char *list,
                              const char *values, char *buf, size_t len)
{
	return value_PATH(o, key, list, values, buf, len);
}

/* A DIR_OFF key: the cache or the profiles folder, whose defaults depend
 * on the environment (show where they are), or the system store. */
static const char *value_DIR_OFF(const struct xom_opts *o, const char *key, const char *dir,
                                 const char *values, char *buf, size_t len)
{
	int rc;

	(void)values;
	if (!strcmp(key, "cache"))
		rc = xom_cache_dir(o, buf, len);
	else if (!strcmp(key, "profiles"))
		rc = xom_profile_dir(o, buf, len);
	else
		return dir ? dir : "off";
	switch (rc) {
	case XOM_CACHE_OFF: return "off";
	case XOM_CACHE_NONE: return "(none: no absolute XDG_CACHE_HOME or HOME)";
	}
	return buf;
}

/* Whether XOM_OPTIONS names key (the last of several wins, but any makes
 * the value not the default). */
static int given(const char *env, const char *key)
{
	for (const char *s = env ? env : ""; *s; s += *s == ':') {
		size_t kl, n = xom_opt_item(s, &kl);
		if (n && kl == strlen(key) && !strncmp(s, key, kl))
			return 1;
		s += n;
	}
	return 0;
}

/* One line per key of options.def: the value in force and where it is
 * from. */
static void show_options(const struct xom_opts *o, const char *env)
{
	char buf[PATH_MAX];

#define XOM_OPT(key, kind, def, values, help) \
	printf("  %-10s %-17s %s\n", #key, \
	       given(env, #key) ? "from XOM_OPTIONS" : "default", \
	       value_##kind(o, #key, o->key, values, buf, sizeof buf));
#include "../loader/options.def"
#undef XOM_OPT
}

/* XOM_OPTIONS, read by the runtime's parser; the values end in o (the
 * defaults when it is invalid, which is what the cache check uses). */
static int check_options(struct xom_opts *o, char *buf, size_t len)
{
	const char *env = getenv("XOM_OPTIONS");
	char err[512];
	int require;

	if (xom_options_parse(env, o, buf, len, &require, err, sizeof err) == 0) {
		check_line(1, "XOM_OPTIONS", NULL, "%s", env && *env ? env
		           : "not set: every key has its default");
		return 1;
	}
	/* The runtime's own words, as it prints them after "xom: ". */
	check_line(0, "XOM_OPTIONS", "XOM_OPTIONS is invalid", "XOM_OPTIONS: %s; %s",
	           err, require ? "the runtime refuses to run programs (require=1)"
	                        : "the runtime runs programs unprotected");
	xom_options_parse(NULL, o, buf, len, &require, err, sizeof err);
	return 0;
}

int cmd_check(int argc, char **argv)
{
	enum { OPT_CONF = 256 };
	static const struct option longopts[] = {
		{ "conf", required_argument, NULL, OPT_CONF },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *conf = "/etc/xom.conf";
	int named = 0;
	char buf[4096];
	struct xom_opts o;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c == OPT_CONF)
			conf = optarg, named = 1;
		else
			return c == 'h' ? show_help() : option_error(c, argv, longopts);
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);

	check_keys();
	/* What failed so far is why no program can be protected here. */
	const char *keys = failure;
	check_files();
	int valid = check_options(&o, buf, sizeof buf);
	check_stores(&o);
	check_secure(&o);
	check_conf(conf, keys, named);
	if (valid)
		show_options(&o, getenv("XOM_OPTIONS"));
	/* Without keys in the CPU, what to look for, and where to see xom work. */
	if (keys && !strcmp(keys, "the CPU has no pku"))
		printf("next         protection keys come with Intel Xeon Scalable CPUs (Skylake-SP, 2017) and later, recent Intel Core CPUs and AMD Zen 3 (2020) and later, and reach a VM only where its host passes them on; `make demo` in xom's source tree shows xom at work under QEMU's emulated CPU on any machine\n");
	if (!failure)
		printf("verdict      ok    xom can make code execute-only here\n");
	else
		printf("verdict      FAIL  xom cannot enforce execute-only code here: %s\n",
		       failure);
	return failure ? XOM_EXIT_FAILED : XOM_EXIT_OK;
}
