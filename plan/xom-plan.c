/*
 * xom-plan - the helper that the runtime runs on a plan-store miss:
 *
 *   xom-plan [--store DIR [--fallback DIR] [--set KEY,...]] [--jobs N]
 *            [--quiet] [--] FILE...
 *   xom-plan --store DIR [--fallback DIR] --set KEY,...
 *
 * scans each FILE (several at once, one thread per core), writes one record
 * per FILE to stdout in the order given - its plan, or a failure record
 * saying why there is none (xom_plan.h) - and, with --store, adds the plans
 * and their symbol files to the user's store in DIR, or, when that cannot
 * be written, in the --fallback DIR, saying so.  --set names the keys of
 * the runtime's whole batch, in its order (xom_key_name): the plans for
 * them that the store then holds are also kept as one set (xom_plan.h),
 * which the batch's next run reads at once; with no FILE, that set alone
 * is kept, of plans that the store has already.  Capstone and libelf are
 * loaded only in this short-lived process, never in the host.
 *
 * It is linked statically: the dynamic linker never runs for it, so neither
 * LD_PRELOAD nor /etc/ld.so.preload can load xom into it, and no
 * environment can make it spawn a helper of its own.
 *
 * Exit status (common/xom_exit.h): 0 every file has a plan, 1 some file could
 * not be analysed, 2 the output or the store could not be written, 64 usage.
 * Messages are one line each on stderr, prefixed "xom: "; --quiet (the
 * runtime's notice=done and notice=off) keeps the one about where plans
 * are kept to itself.  So does a cache below a file that is not a folder
 * (XDG_CACHE_HOME=/dev/null, a common way to say "no cache", which GLib's
 * tests use): the user asked for no cache, and a child's stderr is the
 * program's own, which some compare byte for byte.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/xom_exit.h"
#include "build.h"

static int write_noplan(const struct xom_built *b)
{
	char buf[sizeof(struct xom_noplan_head) + sizeof(b->why) + 8];
	struct xom_noplan_head *h = (void *)buf;
	size_t len = strlen(b->why) + 1;
	size_t total = (sizeof(*h) + len + 7) & ~(size_t)7;

	memset(buf, 0, total);
	memcpy(h->magic, XOM_NOPLAN_MAGIC, 8);
	h->format = XOM_PLAN_FORMAT;
	h->scan_version = XOM_PLAN_SCAN_VERSION;
	h->total = (uint32_t)total;
	h->code = (uint32_t)b->code;
	memcpy(h + 1, b->why, len);
	return xom_write_all(1, buf, total);
}

/* The keys of --set, or NULL (with *n 0) when it names none that can be
 * read: a set is only a shortcut, so a bad one is dropped, not refused. */
static struct xom_plan_key *set_keys(char *list, size_t *n)
{
	size_t most = 1;
	struct xom_plan_key *k;

	*n = 0;
	for (const char *c = list; c && *c; c++)
		most += *c == ',';
	if (!list || !(k = calloc(most, sizeof(*k))))
		return NULL;
	for (char *save = NULL, *name = strtok_r(list, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		if (xom_key_parse(name, &k[*n]) != 0) {
			free(k);
			*n = 0;
			return NULL;
		}
		++*n;
	}
	return k;
}

/* Whether the nearest part of dir that exists is something other than a
 * folder: XDG_CACHE_HOME or HOME names a file, most often /dev/null. */
static int below_a_file(const char *dir)
{
	char path[4096];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		return 0;
	for (char *slash; (slash = strrchr(path, '/')) && slash != path;) {
		*slash = 0;
		if (stat(path, &st) == 0)
			return !S_ISDIR(st.st_mode);
		if (errno != ENOENT && errno != ENOTDIR)
			return 0;
	}
	return 0;
}

/* Adds the plans to the user's store, or to the fallback, saying so. */
static void keep(const char *store, const char *fallback,
                 const struct xom_built *b, size_t n,
                 const struct xom_plan_key *keys, size_t nkeys, int quiet)
{
	char why[600], why2[600];
	struct xom_set_keys set = { keys, nkeys };

	if (!store || xom_store_add(store, 0, b, n, &set, 1, why, sizeof(why)) == 0)
		return;
	int kept = fallback && xom_store_add(fallback, 0, b, n, &set, 1, why2,
	                                     sizeof(why2)) == 0;
	if (quiet || below_a_file(store))
		return;
	if (kept) {
		fprintf(stderr, "xom: cannot keep plans in the cache (%s); keeping them in %s\n",
		        why, fallback);
		return;
	}
	if (fallback)
		fprintf(stderr, "xom: cannot keep plans in the cache (%s), nor in %s (%s); every start scans again\n",
		        why, fallback, why2);
	else
		fprintf(stderr, "xom: cannot keep plans in the cache (%s); every start scans again\n",
		        why);
}

static void usage(void)
{
	fprintf(stderr, "usage: xom-plan [--store DIR [--fallback DIR] [--set KEY,...]] [--jobs N] [--quiet] [--] FILE...\n");
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "store", required_argument, NULL, 's' },
		{ "fallback", required_argument, NULL, 'f' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "set", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	const char *store = NULL, *fallback = NULL;
	char *set = NULL;
	int jobs = 0, quiet = 0, c;
	sigset_t none;

	/* The runtime spawns this with every signal blocked, and from a
	 * descriptor, which would leave the process named after its number. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	prctl(PR_SET_NAME, "xom-plan");
	while ((c = getopt_long(argc, argv, "+s:f:j:qS:", longs, NULL)) != -1) {
		if (c == 's')
			store = optarg;
		else if (c == 'f')
			fallback = optarg;
		else if (c == 'j')
			jobs = atoi(optarg);
		else if (c == 'q')
			quiet = 1;
		else if (c == 'S')
			set = optarg;
		else
			return usage(), XOM_EXIT_USAGE;
	}
	/* No file: only --set's, from the plans that the store has. */
	if (optind >= argc && !(set && store))
		return usage(), XOM_EXIT_USAGE;
	size_t n = (size_t)(argc - optind);
	struct xom_built *b = calloc(n ? n : 1, sizeof(*b));
	if (!b) {
		fprintf(stderr, "xom: out of memory\n");
		return XOM_EXIT_ENV;
	}
	for (size_t i = 0; i < n; i++)
		b[i].path = argv[optind + i];
	xom_plan_files(b, n, jobs, NULL, NULL);

	int status = XOM_EXIT_OK;
	size_t nkeys;
	struct xom_plan_key *keys = set_keys(set, &nkeys);
	keep(store, fallback, b, n, keys, nkeys, quiet);
	free(keys);
	for (size_t i = 0; i < n; i++) {
		int bad = b[i].plan ? xom_write_all(1, b[i].plan, b[i].plan->total)
		                    : write_noplan(&b[i]);
		if (bad) {
			fprintf(stderr, "xom: cannot write the plans: %s\n", strerror(errno));
			return XOM_EXIT_ENV;
		}
		if (!b[i].plan)
			status = xom_exit_worst(status, b[i].code);
		xom_built_free(&b[i]);
	}
	free(b);
	return status;
}
