/*
 * status.c - xom status: how much of a running process's code is
 * execute-only, per mapped object, read from /proc/PID/smaps.
 *
 * The counting rule, execute-only or readable, is smaps.c's, which xom
 * status --system (status_system.c) counts by too.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../loader/options.h"
#include "../formats/xom_plan.h"
#include "cache/store.h"
#include "cmd.h"
#include "smaps.h"
#include "status_system.h"

const char status_usage[] =
	"usage: xom status PID | --self | --system [--json]\n"
	"\n"
	"Reads /proc/PID/smaps and prints, for each mapped file with code, how\n"
	"many code pages are execute-only and how many are still readable, and\n"
	"the non-zero protection keys on its code.  A page counts as\n"
	"execute-only when it is mapped --xp (no read, no write) with a non-zero\n"
	"protection key; every other code page is readable.  What an attacker\n"
	"can still read of it comes from the object's plan in the plan stores\n"
	"you can read: its readable executable bytes and the ret gadget\n"
	"candidates in them (\"-\" when no store has its plan, \"?\" when the\n"
	"process does not run it as the plan says).\n"
	"\n"
	"--system lists every process instead, one line each: what protects it\n"
	"(preload: libxom.so is mapped, through LD_PRELOAD or /etc/ld.so.preload;\n"
	"audit: libxom-audit.so is mapped; none), its code pages execute-only and\n"
	"readable counted as above, and the share execute-only; then a total\n"
	"line.  Kernel threads have no code of their own and are left out;\n"
	"another user's processes need root.  --json prints one object per\n"
	"process per line, then one with the totals.\n"
	"Exit status: 0 shown, 1 no such process or it cannot be read, 64 usage.\n";

/*
 * The type of the mount with ID id in a mountinfo file: 1 FUSE, 0 another,
 * -1 not listed.
 */
static int fuse_in(const char *mountinfo, int id)
{
	char line[4096], type[64];
	int m, fuse = -1;
	FILE *f = fopen(mountinfo, "re");

	if (!f)
		return -1;
	while (fuse < 0 && fgets(line, sizeof line, f)) {
		/* ID PARENT MAJ:MIN ROOT POINT OPTIONS [TAGS...] - TYPE SOURCE ... */
		const char *dash = strstr(line, " - ");
		if (sscanf(line, "%d", &m) == 1 && m == id && dash
		    && sscanf(dash + 3, "%63s", type) == 1)
			fuse = !strncmp(type, "fuse", 4);
	}
	fclose(f);
	return fuse;
}

/*
 * Whether the file that fd (O_PATH) names may lie on FUSE: its server,
 * which any user may run, can make a stat, an open or a read of it wait
 * for ever.  Its mount is told by /proc/self/fdinfo, and the mount's type
 * by the mount tables of the process and of this one (a container's file
 * may lie on a mount of the container's alone), none of which asks
 * anything of the file system itself.  A mount that neither lists (one
 * detached since the file was mapped) may be FUSE, unless smaps names a
 * block device for the mapping.
 */
static int maybe_fuse(const char *who, int fd, unsigned dev_major)
{
	char path[64], line[256];
	int id = -1, fuse = -1;

	snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
	FILE *f = fopen(path, "re");
	if (!f)
		return 1;
	while (id < 0 && fgets(line, sizeof line, f))
		if (sscanf(line, "mnt_id: %d", &id) != 1)
			id = -1;
	fclose(f);
	if (id < 0)
		return 1;
	snprintf(path, sizeof path, "/proc/%s/mountinfo", who);
	fuse = fuse_in(path, id);
	if (fuse < 0)
		fuse = fuse_in("/proc/self/mountinfo", id);
	/* In a chroot the tables leave out the mounts above its root, its
	 * own file system among them: a mapping on a block device (FUSE's
	 * devices are anonymous, major 0) is taken as not FUSE there. */
	if (fuse < 0 && dev_major != 0)
		fuse = 0;
	return fuse != 0;
}

/*
 * The key of the file that o's first code mapping maps, found without
 * trusting the name that smaps shows: the process may be another user's,
 * who can have put a link to a FIFO or a device where the file was (an
 * open of either can hang, or act), or named a removed file "... (deleted)".
 * The file is reached through /proc/WHO/map_files/START-END, the mapping
 * itself (which takes CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE); only when
 * that is refused for want of them, through the name, a process of this
 * user's.  Either way with O_PATH, which opens nothing, and read only
 * when it is not on FUSE and is a regular file with the mapping's inode
 * (then its open cannot act or wait: O_NONBLOCK keeps it from waiting for
 * a lease to break).  0, or -1.
 */
static int mapped_key(const char *who, const struct obj_pages *o,
                      struct xom_plan_key *k)
{
	char path[PATH_MAX];
	struct stat s;
	int rc = -1;

	if (!o->end)
		return -1;
	snprintf(path, sizeof path, "/proc/%s/map_files/%lx-%lx", who, o->start, o->end);
	int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0 && (errno == EPERM || errno == EACCES) && o->name[0] == '/')
		fd = open(o->name, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (!maybe_fuse(who, fd, o->dev_major) && fstat(fd, &s) == 0 && S_ISREG(s.st_mode)
	    && s.st_ino == o->ino) {
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
		int rd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (rd >= 0) {
			rc = fd_key(rd, k);
			close(rd);
		}
	}
	close(fd);
	return rc;
}

/* The readable bytes and gadget candidates of o's plan, as text. */
static void surface(const struct stores *st, const char *who,
                    const struct obj_pages *o, char *bytes, char *gadgets,
                    size_t cap)
{
	struct xom_plan_key k;
	const struct xom_plan_head *h = NULL;

	snprintf(bytes, cap, "-");
	snprintf(gadgets, cap, "-");
	if (mapped_key(who, o, &k) != 0)
		return;
	for (int i = 0; i < XOM_NSTORES && !h; i++)
		h = store_find(&st->ix[i], &k);
	if (!h)
		return;
	/* The plan's figures hold when the process runs it: as many pages
	 * execute-only as it names (none when a whole file stays readable). */
	if (o->xo != h->xom_pages || (!h->xom_pages && !h->whole_reason)) {
		snprintf(bytes, cap, "?");
		snprintf(gadgets, cap, "?");
		return;
	}
	snprintf(bytes, cap, "%llu", (unsigned long long)h->readable_bytes);
	snprintf(gadgets, cap, "%llu", (unsigned long long)h->ret_gadgets);
}

static void print_report(const char *who, const struct objects *objs,
                         int saw_keys)
{
	char path[64], comm[64] = "?";
	unsigned long txo = 0, tread = 0;
	unsigned long long tbytes = 0, tgadgets = 0;
	size_t known = 0;
	struct stores st;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%s/comm", who);
	if ((f = fopen(path, "re")) != NULL) {
		if (fgets(comm, sizeof comm, f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	printf("process %s (%s)\n", who, comm);
	stores_open(&st);
	printf("%10s %10s  %-6s %12s %8s  %s\n", "exec-only", "readable", "keys",
	       "read-bytes", "gadgets", "object (code pages)");
	for (size_t j = 0; j < objs->n; j++) {
		const struct obj_pages *o = &objs->v[j];
		char keys[40] = "-";
		size_t kl = 0;
		for (unsigned k = 1; k < 16; k++)
			if (o->keys & (1u << k))
				kl += (size_t)snprintf(keys + kl, sizeof keys - kl, "%s%u",
				                       kl ? "," : "", k);
		char bytes[24], gadgets[24];
		surface(&st, who, o, bytes, gadgets, sizeof bytes);
		printf("%10lu %10lu  %-6s %12s %8s  %s\n", o->xo, o->readable, keys,
		       bytes, gadgets, o->name);
		if (bytes[0] >= '0' && bytes[0] <= '9') {
			known++;
			tbytes += strtoull(bytes, NULL, 10);
			tgadgets += strtoull(gadgets, NULL, 10);
		}
		txo += o->xo;
		tread += o->readable;
	}
	stores_close(&st);
	printf("total: %lu code pages execute-only, %lu readable, in %zu objects\n",
	       txo, tread, objs->n);
	/* Where no plan is in force the readable pages are the figure; a
	 * sum over none of the objects would read as "nothing readable". */
	if (known)
		printf("readable to an attacker: %llu executable bytes, %llu ret gadget candidates, in the %zu of %zu objects whose plan is known and in force\n",
		       tbytes, tgadgets, known, objs->n);
	else
		printf("readable to an attacker: all %lu readable code pages (%lu bytes); no object has a plan in force, so no gadget count\n",
		       tread, tread * 4096);
	if (!saw_keys)
		printf("note: this kernel shows no ProtectionKey in smaps: it does not use protection keys, so no code is execute-only\n");
}

/* Opens /proc/WHO/smaps, or says why not in a way that names the cause. */
static FILE *open_smaps(const char *who)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof path, "/proc/%s/smaps", who);
	if ((f = fopen(path, "re")) != NULL)
		return f;
	int e = errno;
	snprintf(path, sizeof path, "/proc/%s", who);
	if (e == ENOENT && access(path, F_OK) != 0)
		say("process %s: no such process", who);
	else if (e == EACCES)
		say("process %s: cannot read its /proc/%s/smaps: %s (another user's process?)",
		    who, who, strerror(e));
	else
		say("process %s: cannot read its /proc/%s/smaps: %s", who, who, strerror(e));
	return NULL;
}

/* Returns -1 with *who set (NULL: --system, with *json), or the exit
 * status (help, usage). */
static int parse_status(int argc, char **argv, const char **who, int *json)
{
	enum { OPT_SELF = 256, OPT_SYSTEM, OPT_JSON };
	static const struct option longopts[] = {
		{ "self", no_argument, NULL, OPT_SELF },
		{ "system", no_argument, NULL, OPT_SYSTEM },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, self = 0, system = 0;

	opterr = 0;
	*json = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c == 'h')
			return show_help();
		if (c == OPT_SELF)
			self = 1;
		else if (c == OPT_SYSTEM)
			system = 1;
		else if (c == OPT_JSON)
			*json = 1;
		else
			return option_error(c, argv, longopts);
	}
	int named = argc - optind + self + system;
	if (named == 0)
		return usage_error("which process? (PID, --self or --system)");
	if (named > 1)
		return usage_error("one process at a time, or --system alone");
	if (*json && !system)
		return usage_error("--json goes with --system");
	if (system) {
		*who = NULL;
		return -1;
	}
	if (self) {
		*who = "self";
		return -1;
	}
	const char *a = argv[optind];
	if (!*a || a[strspn(a, "0123456789")])
		return usage_error("'%s' is not a process ID", a);
	*who = a;
	return -1;
}

int cmd_status(int argc, char **argv)
{
	struct objects objs = { 0 };
	const char *who = NULL;
	int r, saw_keys, json;

	if ((r = parse_status(argc, argv, &who, &json)) >= 0)
		return r;
	if (!who)
		return status_system(json);
	FILE *f = open_smaps(who);
	if (!f)
		return XOM_EXIT_FAILED;
	r = read_smaps(f, &objs, &saw_keys);
	int e = ferror(f) ? errno : 0;
	fclose(f);
	if (r != 0 || e) {
		/* A process that exits while its smaps is read gives ESRCH. */
		if (r != 0)
			say("out of memory");
		else
			say("process %s: %s", who, e == ESRCH ? "no such process (it has exited)"
			                                      : strerror(e));
		free(objs.v);
		return r != 0 ? XOM_EXIT_ENV : XOM_EXIT_FAILED;
	}
	print_report(who, &objs, saw_keys);
	free(objs.v);
	return XOM_EXIT_OK;
}
