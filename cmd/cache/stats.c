/*
 * stats.c - xom cache stats: what each store the runtime reads
 * holds (plans, their bytes and ages, symbol files), how much of it is
 * stale (the file gone or changed), and with --list one line per plan.
 * Reads the stores only; never takes their locks.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../common/json.h"
#include "../../loader/options.h"
#include "../../plan/build.h"
#include "../cmd.h"
#include "stats.h"
#include "store.h"

struct tally {
	const char *label;              /* --list: one line per plan */
	const char *dir;
	size_t missing;                 /* plans whose symbol file is not there */
	size_t plans, gone, changed, unchecked, sets;
	uint64_t plan_bytes, set_bytes;
	size_t sym_files, orphans;
	uint64_t sym_bytes;
	time_t oldest, newest;
	char (*keys)[XOM_KEY_NAME_MAX];  /* the plans' key names, sorted */
	size_t nkeys;
};

static void count_plan(const struct xom_plan_head *p, void *arg)
{
	struct tally *t = arg;
	struct xom_plan_key k;

	static const char *const names[] = { "current", "gone", "changed", "unchecked" };
	int state = plan_state(p);

	t->plans++;
	t->plan_bytes += p->total;
	switch (state) {
	case PLAN_GONE: t->gone++; break;
	case PLAN_CHANGED: t->changed++; break;
	case PLAN_UNCHECKED: t->unchecked++; break;
	}
	if (t->label)
		printf("%s %s %s\n", t->label, names[state], xom_plan_path(p));
	xom_plan_key_of(p, &k);
	xom_key_name(&k, t->keys[t->nkeys], XOM_KEY_NAME_MAX);
	if (p->nsyms && t->dir) {
		char path[PATH_MAX + 300];
		struct stat st;
		snprintf(path, sizeof(path), "%s/" XOM_STORE_SYMS "/%s", t->dir,
		         t->keys[t->nkeys]);
		t->missing += lstat(path, &st) != 0;
	}
	t->nkeys++;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void count_sym(const char *path, const char *name, void *arg)
{
	struct tally *t = arg;
	struct stat st;

	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	t->sym_files++;
	t->sym_bytes += (uint64_t)st.st_size;
	if (!t->oldest || st.st_mtime < t->oldest)
		t->oldest = st.st_mtime;
	if (st.st_mtime > t->newest)
		t->newest = st.st_mtime;
	if (!bsearch(name, t->keys, t->nkeys, XOM_KEY_NAME_MAX, name_cmp))
		t->orphans++;
}

static void put_time(char *buf, size_t cap, time_t t)
{
	struct tm tm;

	if (!t || !localtime_r(&t, &tm) || !strftime(buf, cap, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, cap, "-");
}

/* One store's report; state is "ok", or what it is instead. */
static void report(const char *label, const char *dir, const char *state,
                   const char *why, int trusted, const struct tally *t, int json)
{
	char from[32], to[32];

	put_time(from, sizeof(from), t->oldest);
	put_time(to, sizeof(to), t->newest);
	if (json) {
		printf("{\"store\": \"%s\", \"dir\": ", label);
		json_put_str(dir ? dir : "");
		printf(", \"state\": \"%s\", \"trusted\": %s", state,
		       trusted ? "true" : "false");
		if (why) {
			printf(", \"why\": ");
			json_put_str(why);
		}
		printf(", \"plans\": %zu, \"plan_bytes\": %llu, \"sets\": %zu, \"set_bytes\": %llu, "
		       "\"stale\": %zu, \"gone\": %zu, "
		       "\"changed\": %zu, \"unchecked\": %zu, \"sym_files\": %zu, "
		       "\"sym_bytes\": %llu, \"orphans\": %zu, \"sym_missing\": %zu, "
		       "\"oldest\": \"%s\", \"newest\": \"%s\"}\n", t->plans,
		       (unsigned long long)t->plan_bytes, t->sets,
		       (unsigned long long)t->set_bytes,
		       t->gone + t->changed, t->gone, t->changed, t->unchecked,
		       t->sym_files, (unsigned long long)t->sym_bytes, t->orphans, t->missing,
		       t->oldest ? from : "", t->newest ? to : "");
		return;
	}
	printf("%s store  %s\n", label, dir ? dir : "(none)");
	if (strcmp(state, "ok")) {
		printf("  %-13s %s\n", state, why ? why : "");
		return;
	}
	if (!trusted)
		printf("  %-13s %s\n", "ignored", why);
	printf("  %-13s %zu (%.1f MB)\n", "plans", t->plans, (double)t->plan_bytes / 1e6);
	if (t->sets)
		printf("  %-13s %zu (%.1f MB): copies of the plans of one start-up or dlopen each, read at once\n",
		       "sets", t->sets, (double)t->set_bytes / 1e6);
	printf("  %-13s %zu: %zu file%s gone, %zu changed\n", "stale",
	       t->gone + t->changed, t->gone, t->gone == 1 ? "" : "s", t->changed);
	if (t->unchecked)
		printf("  %-13s %zu (made for a relative path, or the file cannot be read)\n",
		       "unchecked", t->unchecked);
	printf("  %-13s %zu (%.1f MB), %zu that no plan names, %zu missing\n",
	       "symbol files", t->sym_files, (double)t->sym_bytes / 1e6, t->orphans,
	       t->missing);
	if (t->sym_files)
		printf("  %-13s %s to %s (symbol files)\n", "written", from, to);
}

static int stats_one(const char *label, const char *dir, int system, int json,
                     int list)
{
	struct tally t = { 0 };
	struct store_index ix;
	struct stat st;
	char why[600];
	int status = XOM_EXIT_OK;

	if (list) {
		if (dir && store_map(dir, &ix) == 0) {
			t.label = label;
			t.keys = calloc(((const struct xom_store_head *)ix.map)->nslots + 1,
			                XOM_KEY_NAME_MAX);
			if (t.keys)
				store_each(&ix, count_plan, &t);
			free(t.keys);
			store_unmap(&ix);
		}
		return status;
	}
	if (!dir) {
		report(label, NULL, "none", "no such store with these options", 0, &t, json);
		return status;
	}
	if (lstat(dir, &st) != 0) {
		report(label, dir, "missing", system
		       ? "not there: xom cache build --system makes it" : "not there yet", 0,
		       &t, json);
		return status;
	}
	if (store_map(dir, &ix) != 0) {
		report(label, dir, !strcmp(ix.why, STORE_NO_INDEX) ? "empty" : "damaged",
		       ix.why, 0, &t, json);
		return status;
	}
	int trusted = store_trusted(dir, system, why, sizeof(why)) == 0;
	const struct xom_store_head *h = ix.map;
	t.keys = calloc(h->nslots + 1, XOM_KEY_NAME_MAX);
	if (!t.keys) {
		say("out of memory");
		store_unmap(&ix);
		return XOM_EXIT_ENV;
	}
	t.dir = dir;
	store_each(&ix, count_plan, &t);
	t.sets = store_sets(&ix, &t.set_bytes);
	qsort(t.keys, t.nkeys, XOM_KEY_NAME_MAX, name_cmp);
	xom_syms_walk(dir, count_sym, &t);
	report(label, dir, "ok", trusted ? NULL : why, trusted, &t, json);
	free(t.keys);
	store_unmap(&ix);
	return status;
}

int cache_stats(const char *store, int json, int list)
{
	struct xom_opts o;
	struct xom_dirs d;
	char buf[4096], dir[PATH_MAX];
	int status = XOM_EXIT_OK;

	if (store)
		return stats_one("system", store, 1, json, list);
	if (cache_runtime_opts(&o, buf, sizeof(buf)) != 0)
		return XOM_EXIT_USAGE;
	xom_store_dirs(&o, 0, (unsigned)geteuid(), lstat, &d);
	for (int i = 0; i < XOM_NSTORES; i++) {
		const char *p = xom_dir_path(&d, i, dir, sizeof(dir));
		status = xom_exit_worst(status, stats_one(cache_store_label[i], p,
		                                          i == XOM_STORE_SYSTEM, json,
		                                          list));
	}
	return status;
}

