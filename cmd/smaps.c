/*
 * smaps.c - counts the code pages of each object that a process maps, from
 * its /proc/PID/smaps: the rule by which xom status (status.c) and xom
 * status --system (status_system.c) both count.
 *
 * A code page counts as execute-only when its mapping is "--xp" (executable,
 * neither readable nor writable, private) and its protection key is not 0.
 * x86 lets every executable page be read unless a protection key denies it,
 * and which key is xom's cannot be told from outside the process, so the
 * access rights and a non-zero key are the test; the kernel's own
 * execute-only key (a plain mprotect(PROT_EXEC)) passes it too.  Every other
 * executable mapping counts as readable.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "smaps.h"

/* One executable mapping, as far as its smaps entry has been read. */
struct mapping {
	unsigned long start, end, pages;
	unsigned long long ino;
	unsigned dev_major;
	char perms[8];
	int key;                /* -1: no ProtectionKey line */
	const char *name;
};

static struct obj_pages *object(struct objects *objs, const char *name)
{
	for (size_t i = 0; i < objs->n; i++)
		if (!strcmp(objs->v[i].name, name))
			return &objs->v[i];
	struct obj_pages *v = realloc(objs->v, (objs->n + 1) * sizeof *v);
	if (!v)
		return NULL;
	objs->v = v;
	v += objs->n++;
	memset(v, 0, sizeof *v);
	snprintf(v->name, sizeof v->name, "%s", name);
	return v;
}

/* Adds a finished mapping to its object; 0, or -1 when out of memory. */
static int count_mapping(struct objects *objs, const struct mapping *m)
{
	struct obj_pages *obj = object(objs, m->name);

	if (!obj)
		return -1;
	if (!obj->end) {
		obj->start = m->start;
		obj->end = m->end;
		obj->ino = m->ino;
		obj->dev_major = m->dev_major;
	}
	if (m->key > 0)
		obj->keys |= 1u << (m->key & 15);
	if (!strcmp(m->perms, "--xp") && m->key > 0)
		obj->xo += m->pages;
	else
		obj->readable += m->pages;
	return 0;
}

/* A mapping's key comes after its header line, so each mapping is counted
 * when the next header or the end arrives. */
int read_smaps(FILE *f, struct objects *objs, int *saw_keys)
{
	static char line[PATH_MAX + 256], name[PATH_MAX];
	struct mapping m = { .name = name };
	long page = sysconf(_SC_PAGESIZE);
	int open_mapping = 0;

	*saw_keys = 0;
	for (;;) {
		int eof = !fgets(line, sizeof line, f);
		unsigned long start, end;
		unsigned long long ino;
		unsigned major;
		int pos = 0, k;
		char perms[8];
		if (!eof && sscanf(line, "%lx-%lx %7s %*s %x:%*x %llu %n", &start,
		                   &end, perms, &major, &ino, &pos) != 5) {
			if (sscanf(line, "ProtectionKey: %d", &k) == 1) {
				*saw_keys = 1;
				m.key = k;
			}
			continue;
		}
		if (open_mapping && count_mapping(objs, &m) != 0)
			return -1;
		if (eof)
			return 0;
		open_mapping = perms[2] == 'x';
		if (!open_mapping)
			continue;
		line[pos + (int)strcspn(line + pos, "\n")] = 0;
		snprintf(name, sizeof name, "%s", line[pos] ? line + pos : "[anonymous]");
		snprintf(m.perms, sizeof m.perms, "%s", perms);
		m.start = start;
		m.end = end;
		m.ino = ino;
		m.dev_major = major;
		m.pages = (end - start) / (unsigned long)page;
		m.key = -1;
	}
}
