/*
 * build.h - making plans and symbol files from the scanner's code map, and
 * scanning many files at once.  For the tools only (xom-plan, xom cache):
 * this is the scanner side, never inside a host process.
 */
#ifndef XOM_PLAN_BUILD_H
#define XOM_PLAN_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "../formats/xom_plan.h"

struct xom_map;

/* One file's result: a plan and its symbol file, or why there is none. */
struct xom_built {
	const char *path;               /* as asked for */
	struct xom_plan_head *plan;     /* malloc'd, sealed; NULL on failure */
	struct xom_syms_head *syms;     /* malloc'd, sealed; NULL if none */
	int code;                       /* common/xom_exit.h, when plan is NULL */
	char why[256];
};

/*
 * The plan and symbol file for the map of the file at path, whose identity,
 * code checksum, shape (xom_file_shape) and checksum of the whole the
 * caller took from the bytes it scanned.  Returns 0, or -1 with b->why set.
 */
int xom_plan_build(const struct xom_map *m, const char *path,
                   const struct xom_file_ident *file, uint64_t code_sum,
                   uint64_t shape, uint64_t file_sum, struct xom_built *b);

/* Scans one file: opens it once, and takes its identity, code checksum,
 * shape and map from the same open file. */
void xom_plan_file(const char *path, struct xom_built *b);

/*
 * Scans n files with up to jobs threads (0: one per core).  progress, when
 * set, is called after each file with the count done so far, from one
 * thread at a time.
 */
void xom_plan_files(struct xom_built *b, size_t n, int jobs,
                    void (*progress)(size_t done, size_t n, void *arg),
                    void *arg);

void xom_built_free(struct xom_built *b);

/* write() until all of p is written, across EINTR and short writes; 0 or -1. */
int xom_write_all(int fd, const void *p, size_t n);

/* A batch's keys, in its order: those of a set (xom_plan.h). */
struct xom_set_keys {
	const struct xom_plan_key *keys;
	size_t n;
};

/*
 * Adds plans to the store in dir: writes their symbol files, merges them
 * into the index under the store's lock, and replaces the index by rename.
 * For each of the nsets key lists of two keys or more, it also adds the set
 * (xom_plan.h) of the plans for those keys, of those that the new plans and
 * the store hold, replacing any set of the same keys or with the same
 * first plan.
 * dir is created when missing, mode 0700 for a user's store, 0755 for a
 * shared one (the system store), and must be the caller's and writable by
 * nobody else.  Returns 0, or -1 with why set.
 */
int xom_store_add(const char *dir, int shared, const struct xom_built *b,
                  size_t n, const struct xom_set_keys *sets, size_t nsets,
                  char *why, size_t cap);

/*
 * What xom_store_add writes, without the files: the index that merging the
 * n plans of b and the sets of sets into the index old (old_len bytes,
 * whose head was checked; NULL for none) makes.  0 with *out a malloc'd
 * index of *len bytes, or with *out NULL when there is nothing new (the
 * old index stays); -1 with why set.
 */
int xom_store_merge(const void *old, size_t old_len, const struct xom_built *b,
                    size_t n, const struct xom_set_keys *sets, size_t nsets,
                    void **out, size_t *len, char *why, size_t cap);

/*
 * Calls each(path, name, arg) for every entry of the symbol folder of the
 * store in dir whose name does not start with '.': the symbol files, and
 * the temporary files of writers that died.  path is dir/syms/name.  The
 * one walk of that folder, for xom_store_prune, xom cache stats and the
 * removal of a helper's temporary store.  Returns -1 when the folder
 * cannot be read (none yet), else 0.
 */
int xom_syms_walk(const char *dir,
                  void (*each)(const char *path, const char *name, void *arg),
                  void *arg);

/* What xom_store_prune did. */
struct xom_prune {
	size_t kept, dropped;           /* plans */
	size_t sets_dropped;            /* sets that held a plan dropped */
	size_t syms_removed;            /* symbol files no plan names any more */
	uint64_t bytes;                 /* of the plans and files removed */
};

/*
 * Drops from the store in dir, under its lock, the plans for which
 * drop(plan, arg) returns 1 and the sets that hold one of them, replacing
 * the index by rename only when one was dropped, and deletes the symbol
 * files that no plan left names, and
 * the temporary files of writers that died.  A damaged index is left for
 * the next writer to replace.  The store must exist and be the caller's
 * (as for xom_store_add).  Returns 0, or -1 with why set.
 */
int xom_store_prune(const char *dir, int shared,
                    int (*drop)(const struct xom_plan_head *p, void *arg),
                    void *arg, struct xom_prune *r, char *why, size_t cap);

#endif
