/*
 * status_system.c - xom status --system: every running process, what
 * protects it and how much of its code is execute-only, from its
 * /proc/PID/smaps, counted by the same rule as xom status PID (status.c).
 *
 * What protects a process is read from what it has mapped, not from its
 * environment, which a process can change and which says nothing about
 * /etc/ld.so.preload: "preload" when libxom.so is mapped, "audit" when
 * libxom-audit.so is (the audit module then does the protecting, even
 * beside the preload), "none" otherwise.  A process with no dynamic linker
 * mapped is statically linked, which no door can load xom into: "outside"
 * when it has execute-only code all the same (xom run protected it from
 * outside), else "none (static)": it was not started by xom run.  One with
 * no code mapped at all is a kernel thread, and is left out.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/json.h"
#include "cmd.h"
#include "smaps.h"
#include "status_system.h"

enum door { DOOR_NONE, DOOR_PRELOAD, DOOR_AUDIT, DOOR_OUTSIDE };
static const char *const door_names[] = { "none", "preload", "audit", "outside" };

struct proc_row {
	int pid;
	enum door door;
	int dynamic;            /* a dynamic linker is mapped */
	unsigned long xo, readable;
	char comm[64], exe[PATH_MAX];
};

struct totals {
	unsigned long procs, doors[4], statics, unreadable, kernel;
	unsigned long xo, readable;
};

static int base_is(const char *path, const char *name)
{
	const char *b = strrchr(path, '/');
	return b && !strcmp(b + 1, name);
}

static int is_ldso(const char *path)
{
	const char *b = strrchr(path, '/');
	return b && !strncmp(b + 1, "ld-linux", 8);
}

/* Fills row from /proc/PID.  1 filled, 0 a kernel thread or gone, -1
 * its smaps cannot be read (another user's), -2 out of memory. */
static int read_proc(int pid, struct proc_row *row, int *saw_keys)
{
	char path[64];
	struct objects objs = { 0 };

	memset(row, 0, sizeof *row);
	row->pid = pid;
	snprintf(path, sizeof path, "/proc/%d/comm", pid);
	FILE *f = fopen(path, "re");
	if (f) {
		if (fgets(row->comm, sizeof row->comm, f))
			row->comm[strcspn(row->comm, "\n")] = 0;
		fclose(f);
	}
	snprintf(path, sizeof path, "/proc/%d/exe", pid);
	ssize_t n = readlink(path, row->exe, sizeof row->exe - 1);
	row->exe[n > 0 ? n : 0] = 0;
	snprintf(path, sizeof path, "/proc/%d/smaps", pid);
	if (!(f = fopen(path, "re")))
		return errno == EACCES || errno == EPERM ? -1 : 0;
	int keys = 0;
	int r = read_smaps(f, &objs, &keys);
	fclose(f);
	if (r != 0) {
		free(objs.v);
		return -2;
	}
	*saw_keys |= keys;
	if (objs.n == 0) {
		free(objs.v);
		/* No code mapped: a kernel thread, or a process that has
		 * exited while its smaps was read, or one we may not read. */
		return n > 0 ? -1 : 0;
	}
	int preload = 0, audit = 0;
	for (size_t i = 0; i < objs.n; i++) {
		const struct obj_pages *o = &objs.v[i];
		preload |= base_is(o->name, "libxom.so");
		audit |= base_is(o->name, "libxom-audit.so");
		row->dynamic |= is_ldso(o->name);
		row->xo += o->xo;
		row->readable += o->readable;
	}
	row->door = audit ? DOOR_AUDIT : preload ? DOOR_PRELOAD
	            : !row->dynamic && row->xo ? DOOR_OUTSIDE : DOOR_NONE;
	free(objs.v);
	return 1;
}

static double share(unsigned long xo, unsigned long readable)
{
	return xo + readable ? 100.0 * (double)xo / (double)(xo + readable) : 0.0;
}

static void print_row(const struct proc_row *r, int json)
{
	const char *what = r->door == DOOR_OUTSIDE ? "outside (static)"
	                   : r->door != DOOR_NONE ? door_names[r->door]
	                   : r->dynamic ? "none" : "none (static)";
	if (!json) {
		printf("%7d  %-14s %9lu %9lu %6.1f%%  %s (%s)\n", r->pid, what, r->xo,
		       r->readable, share(r->xo, r->readable),
		       r->exe[0] ? r->exe : "?", r->comm);
		return;
	}
	printf("{\"pid\": %d, \"comm\": ", r->pid);
	json_put_str(r->comm);
	fputs(", \"exe\": ", stdout);
	json_put_str(r->exe);
	printf(", \"protected_by\": \"%s\", \"static\": %s, \"xom_pages\": %lu, \"readable_pages\": %lu}\n",
	       door_names[r->door], r->dynamic ? "false" : "true", r->xo, r->readable);
}

static int by_pid(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int status_system(int json)
{
	struct totals t = { 0 };
	int *pids = NULL, saw_keys = 0;
	size_t n = 0, cap = 0;
	struct dirent *d;
	DIR *dir = opendir("/proc");

	if (!dir) {
		say("cannot read /proc: %s", strerror(errno));
		return XOM_EXIT_FAILED;
	}
	while ((d = readdir(dir)) != NULL) {
		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		if (n == cap) {
			int *v = realloc(pids, (cap = cap ? 2 * cap : 256) * sizeof *v);
			if (!v) {
				closedir(dir);
				free(pids);
				say("out of memory");
				return XOM_EXIT_ENV;
			}
			pids = v;
		}
		pids[n++] = atoi(d->d_name);
	}
	closedir(dir);
	qsort(pids, n, sizeof *pids, by_pid);
	if (!json)
		printf("%7s  %-14s %9s %9s %7s  %s\n", "pid", "protected by",
		       "exec-only", "readable", "share", "program (name)");
	for (size_t i = 0; i < n; i++) {
		struct proc_row row;
		int r = read_proc(pids[i], &row, &saw_keys);
		if (r == -2) {
			free(pids);
			say("out of memory");
			return XOM_EXIT_ENV;
		}
		if (r == -1) {
			/* One that ended since the listing is no failure to read. */
			char proc[32];
			snprintf(proc, sizeof proc, "/proc/%d", pids[i]);
			if (access(proc, F_OK) == 0)
				t.unreadable++;
			continue;
		}
		if (r == 0) {
			t.kernel++;
			continue;
		}
		print_row(&row, json);
		t.procs++;
		t.doors[row.door]++;
		t.statics += !row.dynamic;
		t.xo += row.xo;
		t.readable += row.readable;
	}
	free(pids);
	if (json) {
		printf("{\"total\": {\"processes\": %lu, \"preload\": %lu, \"audit\": %lu, \"outside\": %lu, \"none\": %lu, \"static\": %lu, \"unreadable\": %lu, \"xom_pages\": %lu, \"readable_pages\": %lu, \"kernel_shows_keys\": %s}}\n",
		       t.procs, t.doors[DOOR_PRELOAD], t.doors[DOOR_AUDIT],
		       t.doors[DOOR_OUTSIDE], t.doors[DOOR_NONE], t.statics, t.unreadable, t.xo, t.readable,
		       saw_keys ? "true" : "false");
		return XOM_EXIT_OK;
	}
	printf("total: %lu processes: %lu preload, %lu audit, %lu outside, %lu none (%lu of them static); %lu of %lu code pages execute-only (%.1f%%)\n",
	       t.procs, t.doors[DOOR_PRELOAD], t.doors[DOOR_AUDIT], t.doors[DOOR_OUTSIDE],
	       t.doors[DOOR_NONE],
	       t.statics, t.xo, t.xo + t.readable, share(t.xo, t.readable));
	if (t.unreadable)
		printf("note: %lu processes could not be read (%s)\n", t.unreadable,
		       geteuid() ? "another user's: run as root"
		       : "even by root: the kernel refused their /proc files");
	if (!saw_keys)
		printf("note: this kernel shows no ProtectionKey in smaps: it does not use protection keys, so no code is execute-only\n");
	return XOM_EXIT_OK;
}
