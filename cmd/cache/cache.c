/*
 * cache.c - xom cache build|stats|prune: the plan stores from outside the
 * runtime.  The stores are those the runtime reads, chosen by its own code
 * (loader/options.c: xom_store_dirs) from XOM_OPTIONS, in its order: the
 * system store, root's; the user's cache; the fallback folder.
 *
 * build makes plans ahead of time, so that no program's first start has
 * to scan; prune drops the stale plans; stats (stats.c) shows what
 * each store holds and how much of it is stale.  Everything that writes a store goes
 * through plan/storewrite.c, under the store's lock, replacing files by
 * rename, so that running programs and their helpers can read and write
 * the same stores meanwhile.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../loader/options.h"
#include "../../plan/build.h"
#include "../cmd.h"
#include "cache.h"
#include "stats.h"

const char cache_usage[] =
	"usage: xom cache build|stats|prune [ARGS...]\n"
	"\n"
	"  xom cache build [--store DIR] [-j N] [-n] [-q] PROG|FILE...\n"
	"  xom cache build --system [--store DIR] [-j N] [-n] [-q]\n"
	"  xom cache stats [--json | --list] [--store DIR]\n"
	"  xom cache prune [--system] [--store DIR] [-q]\n"
	"\n"
	"A plan says which code pages of one file become execute-only.  The\n"
	"runtime looks each object's plan up in the system store (" XOM_SYSTEM_STORE ",\n"
	"root's; XOM_OPTIONS store=), then in your cache ($XDG_CACHE_HOME/xom or\n"
	"~/.cache/xom; cache=), then in $XDG_RUNTIME_DIR/xom, /run/user/UID/xom\n"
	"(when that folder is yours) or /tmp/xom-UID, and\n"
	"scans what none of them has when the program starts (seconds, for a big\n"
	"program).\n"
	"\n"
	"build  makes the plans ahead of time, on every core, skipping those that\n"
	"       are current.  For each PROG (looked up in PATH when it has no\n"
	"       slash; for a #! script, its interpreter) or FILE: the file, its\n"
	"       dynamic linker and every library the dynamic linker loads with it\n"
	"       (not those opened later with dlopen: name them too), and\n"
	"       libxom.so; into your cache, with a set of plans for each\n"
	"       program's start-up, which its next run reads at once.  --system\n"
	"       (as root): every x86-64 shared object and dynamically linked\n"
	"       program under /usr/lib, /usr/bin, /usr/sbin, /usr/libexec,\n"
	"       /usr/local and the like, and a set for each program, into\n"
	"       the system store.  --store DIR: into a store like the system's\n"
	"       (root's, mode 0755) at DIR instead.  On a terminal one line shows\n"
	"       the progress; a summary follows.\n"
	"stats  for each store that the runtime reads, in its order: the plans\n"
	"       and their size, the sets of plans (copies of one start-up's\n"
	"       plans, which its next run reads at once), the symbol files\n"
	"       (which name functions in fault reports), the stale plans (whose\n"
	"       file is gone or has changed), and when the oldest and newest\n"
	"       symbol files were written.  --list prints one line per plan\n"
	"       instead: the store, the plan's state (current, gone, changed,\n"
	"       unchecked) and its file.\n"
	"prune  drops the stale plans, the sets that hold one, and the symbol\n"
	"       files that no plan names, from your cache and the fallback\n"
	"       folder, or with --system (as root) from the system store.\n"
	"\n"
	"Options:\n"
	"  --system        the system store (build: and every object of the system)\n"
	"  --store DIR     a system-style store at DIR instead\n"
	"  -j, --jobs N    scanners at once (default: one per core)\n"
	"  -n, --dry-run   build: list the files that would be scanned, and stop\n"
	"  -q, --quiet     no progress line and no summary; failures are still said\n"
	"  --json          stats: one JSON object per store, one per line\n"
	"  --list          stats: one line per plan\n"
	"  -h, --help      this text\n"
	"\n"
	"Exit status: 0 done; 1 some file could not be analysed (each is named);\n"
	"2 a file or store could not be read or written, or the system store\n"
	"without root; 64 usage; killed by a signal (130 for Ctrl-C) after\n"
	"keeping the plans already made.\n";

/* ---- build ------------------------------------------------------------------ */

static int need_root(const char *what, const char *dir)
{
	if (geteuid() == 0)
		return 0;
	say("cache %s: %s is the system store, which must be root's: run this as root",
	    what, dir);
	return -1;
}

/* The store build writes to; 0, or an exit status after one line. */
static int build_target(const struct cache_opts *c, char *dir, size_t cap,
                        int *shared)
{
	struct xom_opts o;
	char buf[4096];

	*shared = c->system || c->store;
	if (c->store) {
		snprintf(dir, cap, "%s", c->store);
		return need_root("build", dir) ? XOM_EXIT_ENV : 0;
	}
	if (cache_runtime_opts(&o, buf, sizeof(buf)) != 0)
		return XOM_EXIT_USAGE;
	if (c->system) {
		if (!o.store || !strcmp(o.store, "off")) {
			say("cache build: XOM_OPTIONS has store=off: the runtime reads no system store");
			return XOM_EXIT_ENV;
		}
		snprintf(dir, cap, "%s", o.store);
		return need_root("build", dir) ? XOM_EXIT_ENV : 0;
	}
	switch (xom_cache_dir(&o, dir, cap)) {
	case XOM_CACHE_OFF:
		say("cache build: XOM_OPTIONS has cache=off: there is no cache to build");
		return XOM_EXIT_ENV;
	case XOM_CACHE_NONE:
		say("cache build: no cache folder: neither XDG_CACHE_HOME nor HOME is an absolute path");
		return XOM_EXIT_ENV;
	}
	return 0;
}

/*
 * Whether a shared store may take the plan of f.  Every user's runtime
 * applies a plan found by build-id to whatever mapped object claims that
 * build-id and has the plan's shape (formats/xom_plan.h), so such a
 * plan must come from a file that nobody but root can have written: else
 * a user could leave a copy of libc with other code where root's build
 * finds it, and choose which of libc's pages stay readable for everyone.
 * A plan keyed by the file's identity fits that file alone, and the
 * runtime checks its code; it may come from anywhere.  The files left
 * out are planned by each user's own runtime, into their cache.
 */
static int shared_may_take(const struct cache_file *f)
{
	struct stat st;

	/* f->path is a real path: the list takes no other. */
	if (f->key.kind != XOM_KEY_BUILD_ID)
		return 1;
	if (stat(f->path, &st) == 0 && files_root_alone(f->path, &st))
		return 1;
	say("%s: left out of the shared store: it or a folder above it is not root's alone, and a plan found by build-id there would serve every file that claims that build-id",
	    f->path);
	return 0;
}

/*
 * Whether ix's plan for f's key and shape, which does not fit f, was made
 * from another file of this build that it still fits, and f's code is
 * that file's code.  Two files can claim one build-id and have one shape
 * yet differ in their bytes outside the code (perl and perl-base ship
 * such twins, and OpenJDK two libjsig.so): the store keeps one plan for
 * the pair, and the runtime uses it for both.  Scanning f again would
 * only take the plan from its twin, and the next build would give it
 * back: every build scanned both again.  Twins whose code differs are
 * scanned as before: the runtime does not compare a plan found by
 * build-id with the code, so neither may pass for the other.
 */
static int twin_current(const struct store_index *ix, const struct cache_files *l,
                        const struct cache_file *f, uint64_t shape)
{
	const struct xom_plan_head *p;

	if (!ix->map || !(p = xom_store_find(ix->map, ix->len, &f->key, &shape)))
		return 0;
	const char *maker = xom_plan_path(p);
	if (!strcmp(maker, f->path))
		return 0;
	size_t i = 0;
	while (i < l->n && strcmp(l->f[i].path, maker))
		i++;
	if (i == l->n || plan_fits(p, maker) != PLAN_CURRENT)
		return 0;
	return plan_code_sum(p, f->path) == 0;
}

/* Splits l into what already has a current plan (in the target store, or
 * for a user's build in the system store that the runtime trusts, which
 * it reads first) and what is to scan. */
static size_t to_scan(struct cache_files *l, const char *dir, int shared,
                      struct cache_file **todo, size_t *current, int *status)
{
	struct store_index target, sys = { 0 };
	struct xom_opts o;
	char buf[4096], sdir[PATH_MAX], why[512];
	struct xom_dirs d;
	size_t n = 0;

	store_map(dir, &target);
	if (!shared && cache_runtime_opts(&o, buf, sizeof(buf)) == 0) {
		xom_store_dirs(&o, 0, (unsigned)geteuid(), lstat, &d);
		const char *s = xom_dir_path(&d, XOM_STORE_SYSTEM, sdir, sizeof(sdir));
		if (s && store_trusted(s, 1, why, sizeof(why)) == 0)
			store_map(s, &sys);
	}
	*current = 0;
	for (size_t i = 0; i < l->n; i++) {
		struct cache_file *f = &l->f[i];
		uint64_t shape;
		if (facts_key(l->facts, f->path, &f->key) != 0) {
			say("%s: cannot read: %s", f->path, strerror(errno));
			*status = xom_exit_worst(*status, XOM_EXIT_ENV);
			continue;
		}
		if (shared && !shared_may_take(f))
			continue;
		/* Current only with a plan that fits this file: a plan made
		 * from another file that claims its build-id must not keep
		 * the file's own from being made. */
		if (facts_shape(l->facts, f->path, &shape) == 0
		    && (store_find_shaped(&target, &f->key, shape, f->path)
		        || store_find_shaped(&sys, &f->key, shape, f->path)
		        || twin_current(&target, l, f, shape)))
			++*current;
		else
			todo[n++] = f;
	}
	store_unmap(&target);
	store_unmap(&sys);
	return n;
}

/* /etc/xom.conf as the runtime reads it: only when it and /etc are root's
 * and writable by root alone; a malloc'd copy (len bytes), or NULL. */
static char *read_conf(size_t *len)
{
	struct stat st, ds;
	char *buf = NULL;
	int fd = open("/etc/xom.conf", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0
	    && !(st.st_mode & 022) && st.st_size < (1 << 20) && stat("/etc", &ds) == 0
	    && ds.st_uid == 0 && !(ds.st_mode & 022)
	    && (buf = malloc((size_t)st.st_size + 1))
	    && read(fd, buf, (size_t)st.st_size) == st.st_size) {
		*len = (size_t)st.st_size;
		buf[*len] = 0;
	} else {
		free(buf);
		buf = NULL;
	}
	close(fd);
	return buf;
}

/*
 * The keys of start-up st as the runtime will make its batch's: without
 * the objects that its options exclude (/etc/xom.conf's lines for the
 * program, then, for a user's own build, XOM_OPTIONS), whose keys it
 * leaves out.  Returns how many keys k got, or 0 when the program runs
 * without xom or a file cannot be read.
 */
static size_t start_keys(const struct cache_start *st, struct cache_facts *facts,
                         const char *conf, size_t len, int env, struct xom_plan_key *k)
{
	char prog[PATH_MAX], buf[4096], err[256];
	char *text = conf ? malloc(len + 1) : NULL;
	struct xom_opts o;
	unsigned line;
	int require;
	size_t n = 0;

	xom_options_defaults(&o);
	if (!realpath(st->paths[0], prog))
		snprintf(prog, sizeof(prog), "%s", st->paths[0]);
	if (text) {
		memcpy(text, conf, len + 1);
		if (xom_conf_apply(text, len, prog, &o, &require, &line, err, sizeof(err)) != 0)
			o.mode = XOM_OFF;       /* the runtime steps aside */
	}
	if (env && getenv("XOM_OPTIONS"))
		xom_options_apply(getenv("XOM_OPTIONS"), &o, buf, sizeof(buf), &require,
		                  err, sizeof(err));
	for (size_t j = 0; o.mode != XOM_OFF && j < st->n; j++) {
		if (xom_opt_excludes(&o, j ? st->paths[j] : prog))
			continue;
		if (facts_key(facts, st->paths[j], &k[n]) != 0) {
			n = 0;
			break;
		}
		n++;
	}
	free(text);
	return o.mode == XOM_OFF ? 0 : n;
}

/*
 * Keeps in the store a set of plans (plan/xom_plan.h) for each start-up
 * recorded: the next run of that program reads its plans at once, not
 * one by one.  A start-up whose files cannot all be read makes none.
 */
static int keep_sets(const char *dir, int shared, const struct cache_files *l)
{
	struct xom_set_keys *sets = calloc(l->nstarts + 1, sizeof(*sets));
	struct xom_plan_key *keys = NULL;
	size_t nkeys = 0, nsets = 0;
	char why[600];
	int status = XOM_EXIT_OK;
	struct store_index ix;

	/* A store with no plans (a user's whose files all have theirs in the
	 * system store) gets no sets, nor an empty index. */
	if (store_map(dir, &ix) != 0) {
		free(sets);
		return XOM_EXIT_OK;
	}
	store_unmap(&ix);
	for (size_t i = 0; i < l->nstarts; i++)
		nkeys += l->starts[i].n;
	if (!sets || !(keys = calloc(nkeys + 1, sizeof(*keys)))) {
		say("out of memory");
		free(sets);
		return XOM_EXIT_ENV;
	}
	size_t len = 0;
	char *conf = read_conf(&len);
	struct xom_plan_key *k = keys;
	for (size_t i = 0; i < l->nstarts; i++) {
		size_t n = start_keys(&l->starts[i], l->facts, conf, len, !shared, k);
		if (n < 2)
			continue;
		sets[nsets++] = (struct xom_set_keys){ k, n };
		k += n;
	}
	free(conf);
	if (nsets && xom_store_add(dir, shared, NULL, 0, sets, nsets, why, sizeof(why)) != 0) {
		say("cannot keep the sets of plans in %s: %s", dir, why);
		status = XOM_EXIT_ENV;
	}
	free(keys);
	free(sets);
	return status;
}

static int build(const struct cache_opts *c, int argc, char **argv)
{
	char dir[PATH_MAX], helper[PATH_MAX], own[PATH_MAX], why[512];
	struct cache_files l = { 0 };
	struct scan_result r;
	size_t seen = 0, current = 0;
	int shared, status = XOM_EXIT_OK;

	if (c->system && argc)
		return usage_error("build --system takes no PROG or FILE");
	if (!c->system && !argc)
		return usage_error("build needs a PROG or FILE (or --system)");
	int rc = build_target(c, dir, sizeof(dir), &shared);
	/* A dry run writes nothing, so it needs no root. */
	if (rc == XOM_EXIT_ENV && c->dry_run && shared && geteuid() != 0)
		rc = 0;
	if (rc)
		return rc;
	if (!find_own("xom-plan", helper, sizeof(helper))) {
		say("cannot find xom-plan beside %s or in %s/../lib/xom", self_dir(),
		    self_dir());
		return XOM_EXIT_ENV;
	}
	/* What xom run and LD_PRELOAD load into every program: the listings
	 * preload it, so that each start-up recorded is its batch at run time. */
	if (find_own("libxom.so", own, sizeof(own)))
		l.preload = own;
	l.memo = listings_open(dir, files_ldso(), l.preload);
	l.facts = facts_open(dir);
	if (c->system) {
		status = files_add_system(&l, &seen);
	} else {
		for (int i = 0; i < argc; i++)
			status = xom_exit_worst(status, files_add_prog(&l, argv[i]));
		if (l.preload)
			status = xom_exit_worst(status, files_add_path(&l, own));
	}
	struct cache_file **todo = calloc(l.n + 1, sizeof(*todo));
	if (!todo) {
		say("out of memory");
		listings_free(l.memo);
		facts_free(l.facts);
		files_free(&l);
		return XOM_EXIT_ENV;
	}
	/* A store that the runtime will not trust is said first: before a
	 * build of minutes, and before the files that the sorting below
	 * leaves out of it.  Its folders, from the nearest that exists (the
	 * build makes the rest, root's). */
	char up[PATH_MAX];
	snprintf(up, sizeof(up), "%s", dir);
	for (char *slash; access(up, F_OK) != 0 && (slash = strrchr(up, '/')) && slash != up;)
		*slash = 0;
	int warned = shared && l.n && !c->dry_run
	             && store_dirs_trusted(up, why, sizeof(why)) != 0;
	if (warned)
		say("the runtime will not read %s as its system store: %s", dir, why);
	size_t n = to_scan(&l, dir, shared, todo, &current, &status);
	if (c->dry_run) {
		uint64_t bytes = 0;
		for (size_t i = 0; i < n; i++) {
			printf("%s\n", todo[i]->path);
			bytes += todo[i]->size;
		}
		if (!c->quiet)
			say("%zu file%s to scan (%.1f MB) into %s; %zu already current",
			    n, n == 1 ? "" : "s", (double)bytes / 1e6, dir, current);
		free(todo);
		listings_free(l.memo);
		facts_free(l.facts);
		files_free(&l);
		return status;
	}
	struct scan_opts so = { dir, shared, c->jobs, !c->quiet && isatty(2), helper };
	int scanned = scan_files(todo, n, &so, &r);
	status = xom_exit_worst(status, scanned);
	/* The sets of the start-ups recorded whole, even when another file
	 * named could not be read; not when the store could not be written. */
	if (!r.interrupted && scanned != XOM_EXIT_ENV) {
		status = xom_exit_worst(status, keep_sets(dir, shared, &l));
		/* Only costs listings next time when it cannot be written. */
		listings_save(l.memo, dir, c->system);
		facts_save(l.facts, dir, c->system);
	}
	if (!c->quiet) {
		char failed[64] = "", starts[96] = "";
		size_t reused, listed;
		listings_count(l.memo, &reused, &listed);
		if (r.failed)
			snprintf(failed, sizeof(failed), "; %zu could not be analysed", r.failed);
		if (reused + listed)
			snprintf(starts, sizeof(starts), "; start-ups: %zu listed, %zu unchanged",
			         listed, reused);
		say("%zu plan%s built (%.1f MB of files) into %s in %.1f s; %zu already current%s%s%s",
		    r.built, r.built == 1 ? "" : "s", (double)r.bytes / 1e6, dir,
		    r.seconds, current, starts, failed, r.interrupted ? "; interrupted" : "");
	}
	if (!warned && shared && r.built && store_trusted(dir, 1, why, sizeof(why)) != 0)
		say("the runtime will not read %s as its system store: %s", dir, why);
	free(todo);
	listings_free(l.memo);
	facts_free(l.facts);
	files_free(&l);
	(void)seen;
	if (r.interrupted) {
		signal(r.interrupted, SIG_DFL);
		raise(r.interrupted);
	}
	return status;
}

/* ---- prune ---------------------------------------------------------------- */

struct dropped { size_t gone, changed; };

static int stale(const struct xom_plan_head *p, void *arg)
{
	struct dropped *d = arg;

	switch (plan_state(p)) {
	case PLAN_GONE: d->gone++; return 1;
	case PLAN_CHANGED: d->changed++; return 1;
	}
	return 0;
}

static int prune_one(const char *dir, int shared, int quiet)
{
	struct xom_prune r;
	struct dropped d = { 0, 0 };
	struct stat st;
	char why[600];

	if (lstat(dir, &st) != 0 && errno == ENOENT) {
		if (!quiet)
			say("%s: not there; nothing to prune", dir);
		return XOM_EXIT_OK;
	}
	if (xom_store_prune(dir, shared, stale, &d, &r, why, sizeof(why)) != 0) {
		say("cannot prune %s: %s", dir, why);
		return XOM_EXIT_ENV;
	}
	char sets[64] = "";
	if (r.sets_dropped)
		snprintf(sets, sizeof(sets), ", %zu set%s of plans", r.sets_dropped,
		         r.sets_dropped == 1 ? "" : "s");
	if (!quiet)
		say("%s: dropped %zu plan%s (%zu file%s gone, %zu changed)%s and %zu symbol file%s, %.1f MB; %zu plan%s kept",
		    dir, r.dropped, r.dropped == 1 ? "" : "s", d.gone, d.gone == 1 ? "" : "s",
		    d.changed, sets, r.syms_removed, r.syms_removed == 1 ? "" : "s",
		    (double)r.bytes / 1e6, r.kept, r.kept == 1 ? "" : "s");
	return XOM_EXIT_OK;
}

static int prune(const struct cache_opts *c)
{
	struct xom_opts o;
	struct xom_dirs d;
	char buf[4096], dir[PATH_MAX];
	int status = XOM_EXIT_OK;

	/* --system --store DIR is DIR, as for build. */
	if (c->store)
		return need_root("prune", c->store) ? XOM_EXIT_ENV
		       : prune_one(c->store, 1, c->quiet);
	if (cache_runtime_opts(&o, buf, sizeof(buf)) != 0)
		return XOM_EXIT_USAGE;
	xom_store_dirs(&o, 0, (unsigned)geteuid(), lstat, &d);
	if (c->system) {
		const char *p = xom_dir_path(&d, XOM_STORE_SYSTEM, dir, sizeof(dir));
		if (!p) {
			say("cache prune: XOM_OPTIONS has store=off: the runtime reads no system store");
			return XOM_EXIT_ENV;
		}
		return need_root("prune", p) ? XOM_EXIT_ENV : prune_one(p, 1, c->quiet);
	}
	int any = 0;
	for (int i = XOM_STORE_USER; i < XOM_NSTORES; i++) {
		const char *p = xom_dir_path(&d, i, dir, sizeof(dir));
		if (!p)
			continue;
		any = 1;
		status = xom_exit_worst(status, prune_one(p, 0, c->quiet));
	}
	if (!any) {
		say("cache prune: no cache with these options (cache=off, or no HOME)");
		return XOM_EXIT_ENV;
	}
	return status;
}

/* ---- the subcommand ---------------------------------------------------------- */

/* The options that a verb may refuse, as bits. */
enum {
	OPT_SYSTEM = 1, OPT_JOBS = 2, OPT_QUIET = 4, OPT_JSON = 8, OPT_LIST = 16,
	OPT_DRY_RUN = 32,
};

/* What one verb takes besides the options: arguments after them or none,
 * and the options that it refuses, with the message that says so. */
struct verb_takes {
	int operands;
	unsigned refuses;
	const char *refusal;
};

static unsigned given(const struct cache_opts *c)
{
	return (c->system ? OPT_SYSTEM : 0) | (c->jobs ? OPT_JOBS : 0)
	       | (c->quiet ? OPT_QUIET : 0) | (c->json ? OPT_JSON : 0)
	       | (c->list ? OPT_LIST : 0) | (c->dry_run ? OPT_DRY_RUN : 0);
}

/*
 * The options, which every verb reads the same way, then what the verb
 * takes of them (t).  Returns -1 when the verb goes on, with optind at its
 * first argument; else the exit status (its help, or a usage error).
 */
static int cache_options(int argc, char **argv, const struct verb_takes *t,
                         struct cache_opts *c)
{
	static const struct option longopts[] = {
		{ "system", no_argument, NULL, 'S' },
		{ "store", required_argument, NULL, 's' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "json", no_argument, NULL, 'J' },
		{ "list", no_argument, NULL, 'L' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	memset(c, 0, sizeof(*c));
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:j:nqh", longopts, NULL)) != -1) {
		char *end;
		switch (ch) {
		case 'S': c->system = 1; break;
		case 's':
			if (!optarg[0])
				return usage_error("--store needs a folder");
			c->store = optarg;
			break;
		case 'j':
			errno = 0;
			c->jobs = (int)strtol(optarg, &end, 10);
			if (errno || *end || c->jobs < 1 || c->jobs > 64)
				return usage_error("--jobs must be a number 1-64, got '%s'", optarg);
			break;
		case 'q': c->quiet = 1; break;
		case 'J': c->json = 1; break;
		case 'L': c->list = 1; break;
		case 'n': c->dry_run = 1; break;
		case 'h': return show_help();
		default: return option_error(ch, argv, longopts);
		}
	}
	if (!t->operands && optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (given(c) & t->refuses)
		return usage_error("%s", t->refusal);
	return -1;
}

static int verb_build(int argc, char **argv)
{
	static const struct verb_takes takes = {
		1, OPT_JSON | OPT_LIST, "--json and --list are for stats",
	};
	struct cache_opts c;
	int rc = cache_options(argc, argv, &takes, &c);

	return rc >= 0 ? rc : build(&c, argc - optind, argv + optind);
}

static int verb_stats(int argc, char **argv)
{
	static const struct verb_takes takes = {
		0, OPT_SYSTEM | OPT_JOBS | OPT_QUIET | OPT_DRY_RUN,
		"stats takes only --json, --list and --store",
	};
	struct cache_opts c;
	int rc = cache_options(argc, argv, &takes, &c);

	if (rc >= 0)
		return rc;
	if (c.json && c.list)
		return usage_error("--json or --list, not both");
	return cache_stats(c.store, c.json, c.list);
}

static int verb_prune(int argc, char **argv)
{
	static const struct verb_takes takes = {
		0, OPT_JSON | OPT_LIST | OPT_JOBS | OPT_DRY_RUN,
		"prune takes only --system, --store and --quiet",
	};
	struct cache_opts c;
	int rc = cache_options(argc, argv, &takes, &c);

	return rc >= 0 ? rc : prune(&c);
}

static const struct xom_verb verbs[] = {
	{ "build", "make the plans ahead of time, skipping those that are current",
	  verb_build },
	{ "stats", "what each store holds, and how much of it is stale", verb_stats },
	{ "prune", "drop the stale plans, the sets that hold one, unused symbol files",
	  verb_prune },
};

const struct xom_verbs cache_verbs = {
	verbs, sizeof(verbs) / sizeof(verbs[0]), "action", "try ",
};
