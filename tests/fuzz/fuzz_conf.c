/*
 * fuzz_conf.c - libFuzzer target for /etc/xom.conf and XOM_OPTIONS
 * (loader/options.c), as the runtime reads them at every start
 * (loader/settings.c hands the file's text, NUL-ended, to
 * xom_conf_apply) and as `xom check` reads them line by line.
 *
 * The input's first line is the program's path (as the kernel names it),
 * the rest the file.  Besides the sanitizers, it checks what the readers
 * promise: the runtime and xom check agree on which line is the first bad
 * one that the program's rules reach; a failure always says why; the
 * options' strings point into the text they were parsed from; a
 * secure-execution program takes from its environment nothing but
 * require=1, seal=1, verbose and notice; and the exclude patterns match
 * the program's path and its last part exactly where fnmatch does (the
 * runtime's own matcher stands in for it on the start-up path), in the C
 * locale and in a UTF-8 one (a program may call setlocale before a
 * dlopen), one input in two each.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <fnmatch.h>
#include <locale.h>

#include "../../loader/options.h"

/* The folders the options name are not looked at: a fuzzed path must not
 * reach the machine's files. */
static int no_folder(const char *path, struct stat *st)
{
	(void)path;
	(void)st;
	errno = ENOENT;
	return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#include "../check.h"

/* The longest program path tried: fnmatch's cost grows with it, and a
 * path is what the kernel gives, not the file's to choose. */
#define PROG_MAX 128

static char *dup_n(const char *p, size_t n)
{
	char *s = malloc(n + 1);

	if (s) {
		memcpy(s, p, n);
		s[n] = 0;
	}
	return s;
}

/* Whether a string option of o lies in [buf, buf + len] or is NULL or a
 * default (a string literal of the table). */
static void points_into(const struct xom_opts *o, const char *buf, size_t len)
{
	const char *s[] = { o->log, o->cache, o->store, o->profile, o->profiles,
	                    o->exclude };
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		if (s[i] && !(s[i] >= buf && s[i] <= buf + len))
			TRAP_UNLESS(!strcmp(s[i], XOM_SYSTEM_STORE));
}

/* Where the rule reading of the runtime and of xom check meet: the first
 * line that matches prog and is invalid, or 0. */
static unsigned first_bad_line(const char *conf, size_t len, const char *prog)
{
	char *text = dup_n(conf, len);
	unsigned line = 0, bad = 0;

	if (!text)
		return 0;
	for (char *at = text, *end = text + len; at < end && !bad; ) {
		char *nl = memchr(at, '\n', (size_t)(end - at));
		char *l = at;
		at = nl ? nl + 1 : end;
		if (nl)
			*nl = 0;
		line++;
		l += strspn(l, " \t");
		size_t plen = strcspn(l, " \t");
		char *pat = dup_n(l, plen);
		int match = pat && *pat && *pat != '#' && fnmatch(pat, prog, 0) == 0;
		free(pat);
		if (!match)
			continue;
		const char *p;
		struct xom_opts o;
		int require;
		char err[512];
		if (xom_conf_check_line(l, &p, &o, &require, err, sizeof(err)) < 0) {
			TRAP_UNLESS(err[0]);
			bad = line;
		}
	}
	free(text);
	return bad;
}

static void conf(const char *prog, const char *text, size_t len)
{
	struct xom_opts o;
	char err[512];
	unsigned line;
	int require;
	/* As the runtime reads it: a copy with a NUL after its end. */
	char *c = dup_n(text, len);

	if (!c)
		return;
	xom_options_defaults(&o);
	int rc = xom_conf_apply(c, len, prog, &o, &require, &line, err, sizeof(err));
	if (rc != 0)
		TRAP_UNLESS(err[0] && line >= 1);
	else
		points_into(&o, c, len);
	TRAP_UNLESS(first_bad_line(text, len, prog) == (rc ? line : 0));
	free(c);
}

/* The options of XOM_OPTIONS from the caller of a secure-execution
 * program: only what cannot weaken it is taken. */
static void secure_merge(const struct xom_opts *env)
{
	struct xom_opts o, def;
	char ignored[256];

	xom_options_defaults(&o);
	xom_options_defaults(&def);
	xom_options_merge(&o, env, 1, ignored, sizeof(ignored));
	TRAP_UNLESS(o.mode == def.mode && o.backend == def.backend && o.log == def.log
	      && o.cache == def.cache && o.store == def.store && o.profile == def.profile
	      && o.profiles == def.profiles && o.exclude == def.exclude);
	TRAP_UNLESS(o.require == def.require || o.require == 1);
	TRAP_UNLESS(o.seal == def.seal || o.seal == 1);
	TRAP_UNLESS(memchr(ignored, 0, sizeof(ignored)));
}


/* What the exclude option meant when fnmatch matched it: the reference. */
static int excludes_by_fnmatch(const struct xom_opts *o, const char *path)
{
	char pat[256];

	if (!o->exclude || !*o->exclude)
		return 0;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (const char *p = o->exclude; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (n && n < sizeof(pat)) {
			memcpy(pat, p, n);
			pat[n] = 0;
			if (!fnmatch(pat, path, 0) || !fnmatch(pat, base, 0))
				return 1;
		}
		p = comma ? comma + 1 : NULL;
	}
	return 0;
}

static void options(const char *prog, const char *text, size_t len)
{
	char buf[4096], err[512], dir[4096];
	struct xom_opts o;
	struct xom_dirs d;
	int require;
	char *t = dup_n(text, len);

	if (!t)
		return;
	if (xom_options_parse(t, &o, buf, sizeof(buf), &require, err, sizeof(err)) != 0) {
		TRAP_UNLESS(err[0]);
		free(t);
		return;
	}
	points_into(&o, buf, sizeof(buf));
	secure_merge(&o);
	setlocale(LC_ALL, len && (text[0] & 1) ? "C.UTF-8" : "C");
	TRAP_UNLESS(xom_opt_excludes(&o, prog) == excludes_by_fnmatch(&o, prog));
	for (int secure = 0; secure < 2; secure++) {
		xom_store_dirs(&o, secure, 1000, no_folder, &d);
		for (int i = 0; i < XOM_NSTORES; i++) {
			const char *p = xom_dir_path(&d, i, dir, sizeof(dir));
			TRAP_UNLESS(!p || (p == dir && strlen(dir) < sizeof(dir)));
			TRAP_UNLESS(!secure || i == XOM_STORE_SYSTEM || !p);
		}
	}
	(void)xom_cache_dir(&o, dir, sizeof(dir));
	(void)xom_profile_dir(&o, dir, sizeof(dir));
	free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	const char *nl = memchr(text, '\n', size);
	size_t plen = nl ? (size_t)(nl - text) : size;
	char prog[PROG_MAX + 1];

	if (plen > PROG_MAX)
		plen = PROG_MAX;
	memcpy(prog, text, plen);
	prog[plen] = 0;
	size_t skip = nl ? (size_t)(nl - text) + 1 : size;
	conf(prog, text + skip, size - skip);
	options(prog, text + skip, size - skip);
	return 0;
}
