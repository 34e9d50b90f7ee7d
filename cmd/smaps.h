/*
 * smaps.h - the code pages of each object a process maps, counted from its
 * smaps file (cmd/smaps.c).  Internal to cmd/.
 */
#ifndef XOM_CMD_SMAPS_H
#define XOM_CMD_SMAPS_H

#include <limits.h>
#include <stdio.h>

struct obj_pages {
	char name[PATH_MAX];
	unsigned long xo, readable;
	unsigned keys;          /* bit k: some code mapping has key k */
	/* Its first code mapping, and the inode that smaps says it maps. */
	unsigned long start, end;
	unsigned long long ino;
	unsigned dev_major;     /* of the device smaps names */
};

struct objects {
	struct obj_pages *v;
	size_t n;
};

/* Reads an smaps file into objs (the code pages of each mapped object).
 * Returns 0 with *saw_keys set when the kernel shows protection keys, or
 * -1 when out of memory. */
int read_smaps(FILE *f, struct objects *objs, int *saw_keys);

#endif
