/*
 * check.c - xom check: whether this machine can enforce execute-only code,
 * one line per thing that must hold, then the XOM_OPTIONS values in force.
 * The options and the cache folder are read by the runtime's own code
 * (loader/options.c), so that xom check and the runtime never disagree.
 */
#include <cpuid.h>
#include <dirent.h>
#include <errno.h>
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
#include "cmd.h"

const char check_usage[] =
	"usage: xom check\n"
	"\n"
	"Says, one line each, whether execute-only code can be enforced here:\n"
	"the CPU's PKU and OSPKE flags, pkey_alloc, the glibc version, the free\n"
	"protection keys, the runtime libraries, XOM_OPTIONS (checked by the\n"
	"runtime's own parser) and the plan cache; then the value in force of\n"
	"every XOM_OPTIONS key, and whether it is the default.  The last line\n"
	"is the verdict.\n"
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
	if (key >= 0)
		check_line(1, "pkey_alloc", NULL, "works (got key %d)", key);
	else
		check_line(0, "pkey_alloc", "pkey_alloc fails", "fails: %s",
		           strerror(alloc_errno));
	check_line(1, "glibc", NULL, "%s %s", gnu_get_libc_version(),
	           gnu_get_libc_release());
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

static unsigned count_entries(const char *dir)
{
	unsigned n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* The plan cache folder, as the runtime chooses it (xom_cache_dir). */
static void check_cache(const struct xom_opts *o)
{
	char dir[PATH_MAX];
	struct stat st;

	switch (xom_cache_dir(o, dir, sizeof dir)) {
	case XOM_CACHE_OFF:
		check_line(-1, "cache", NULL, "off (cache=off in XOM_OPTIONS): every object is scanned at every start");
		return;
	case XOM_CACHE_NONE:
		check_line(-1, "cache", NULL, "none: neither XDG_CACHE_HOME nor HOME is an absolute path; every start rescans");
		return;
	}
	if (lstat(dir, &st) != 0) {
		int e = errno;
		check_line(e == ENOENT ? 1 : -1, "cache", NULL, "%s: %s", dir,
		           e == ENOENT ? "not there yet (the first run creates it, mode 0700)"
		                       : strerror(e));
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		check_line(-1, "cache", NULL, "%s: not a directory, so plans cannot be cached", dir);
		return;
	}
	unsigned entries = count_entries(dir);
	int mine = st.st_uid == geteuid();
	int mode_ok = (st.st_mode & 07777) == 0700;
	check_line(mine && mode_ok ? 1 : -1, "cache", NULL,
	           "%s: owner uid %u%s, mode %04o%s, %u entr%s%s", dir,
	           (unsigned)st.st_uid, mine ? " (you)" : " (NOT you)",
	           (unsigned)(st.st_mode & 07777), mode_ok ? "" : " (should be 0700)",
	           entries, entries == 1 ? "y" : "ies",
	           mine && mode_ok ? "" : "; the runtime will not trust it");
}

/* ---- the XOM_OPTIONS values in force ------------------------------------ */

/* The values of an ENUM key are '|'-separated; index picks one. */
static const char *value_ENUM(const struct xom_opts *o, int index,
                              const char *values, char *buf, size_t len)
{
	(void)o;
	for (int i = 0; i < index && values; i++)
		if ((values = strchr(values, '|')))
			values++;
	snprintf(buf, len, "%.*s", values ? (int)strcspn(values, "|") : 0,
	         values ? values : "?");
	return buf;
}

static const char *value_INT(const struct xom_opts *o, int n,
                             const char *values, char *buf, size_t len)
{
	(void)o; (void)values;
	snprintf(buf, len, "%d", n);
	return buf;
}

static const char *value_PATH(const struct xom_opts *o, const char *path,
                              const char *values, char *buf, size_t len)
{
	(void)o; (void)values; (void)buf; (void)len;
	return path ? path : "(none)";
}

static const char *value_LIST(const struct xom_opts *o, const char *list,
                              const char *values, char *buf, size_t len)
{
	return value_PATH(o, list, values, buf, len);
}

/* The DIR_OFF keys: the system store, a directory or off; and the cache,
 * whose default depends on the environment: show where it is. */
static const char *value_DIR_OFF(const struct xom_opts *o, const char *dir,
                                 const char *values, char *buf, size_t len)
{
	(void)values;
	if (dir && dir == o->store)
		return dir;
	switch (xom_cache_dir(o, buf, len)) {
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
	       value_##kind(o, o->key, values, buf, sizeof buf));
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
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char buf[4096];
	struct xom_opts o;
	int c;

	opterr = 0;
	if ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1)
		return c == 'h' ? show_help() : option_error(c, argv, longopts);
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);

	check_keys();
	check_files();
	int valid = check_options(&o, buf, sizeof buf);
	check_cache(&o);
	if (valid)
		show_options(&o, getenv("XOM_OPTIONS"));
	if (!failure)
		printf("verdict      ok    xom can make code execute-only here\n");
	else
		printf("verdict      FAIL  xom cannot enforce execute-only code here: %s\n",
		       failure);
	return failure ? XOM_EXIT_FAILED : XOM_EXIT_OK;
}
