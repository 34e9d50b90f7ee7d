/*
 * cache.h - what the parts of xom cache share (cmd/cache*.c).  Internal to
 * cmd/.
 *
 *   cache.c        the subcommand: options, which store; build and prune
 *   cache_stats.c  xom cache stats: what each store holds, what is stale
 *   cache_files.c  what to build: a program and what the dynamic linker
 *                  loads with it, or every ELF object of the system
 *   cache_elf.c    what an ELF file is, and the folders its run paths
 *                  name (cache_elf.h)
 *   cache_listings.c  the last build's listings, used again while what
 *                  they depend on is unchanged
 *   cache_store.c  the stores as the runtime reads them: which, whether
 *                  trusted, a file's key, what is current or stale
 *   cache_scan.c   the scanning: xom-plan helpers on every core, the
 *                  progress line, the plans merged into the store
 */
#ifndef XOM_CMD_CACHE_H
#define XOM_CMD_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../loader/options.h"
#include "../loader/plan/xom_plan.h"

/* ---- cache.c ------------------------------------------------------------- */

struct cache_opts {
	int system, quiet, json, list, dry_run, jobs;
	const char *store;
};

/* The stores' names in reports, in xom_store_dirs' order. */
extern const char *const cache_store_label[];

/* The options the runtime would run a program with here: XOM_OPTIONS over
 * the defaults (/etc/xom.conf is per program, and no program is named).
 * 0, or -1 after one line. */
struct xom_opts;
int cache_runtime_opts(struct xom_opts *o, char *buf, size_t cap);

/* ---- cache_stats.c ------------------------------------------------------- */

/* xom cache stats: a common/xom_exit.h status. */
int cache_stats(const struct cache_opts *c);

/* ---- cache_files.c ------------------------------------------------------ */

/* One file to have a plan for, named once (deduplicated by device and
 * inode). */
struct cache_file {
	char *path;
	uint64_t size;
	dev_t dev;
	ino_t ino;
	struct xom_plan_key key;        /* what the runtime will look it up by */
	int code;                       /* common/xom_exit.h, once it was scanned */
	char *why;                      /* malloc'd, when code is not 0 */
};

/* What a program maps at start-up, in the order its batch has at run
 * time: the program, then what the dynamic linker lists with libxom.so
 * preloaded (the vDSO left out; the dynamic linker itself last). */
struct cache_start {
	char **paths;
	size_t n, cap;
};

struct cache_files {
	struct cache_file *f;
	size_t n, cap;
	size_t *hash;                   /* open addressing on (dev, ino): index+1 */
	size_t nhash;
	/* The libxom.so that the listings preload, or NULL: then no
	 * start-up is recorded (without it, no batch at run time matches). */
	const char *preload;
	struct cache_start *starts;     /* one per program, for its set */
	size_t nstarts, capstarts;
	/* The last build's listings (cache_listings.c), or NULL. */
	struct cache_listings *memo;
};

void files_free(struct cache_files *l);

/*
 * Adds what PROG needs: PROG itself (looked up in PATH when it has no
 * slash; for a #! script its interpreter, and for "#!/usr/bin/env NAME"
 * NAME too), its dynamic linker, and every library the dynamic linker
 * would load with it, as the system's own dynamic linker lists them
 * (ld.so --list, which maps the objects but runs none of their code), and
 * records its start-up (l->preload).  Returns a common/xom_exit.h status,
 * after one line for each problem.
 */
int files_add_prog(struct cache_files *l, const char *prog);

/* Adds one file as it is; 0, or 1/2 after one line. */
int files_add_path(struct cache_files *l, const char *path);

/*
 * Adds every ELF object under the system's library and program folders
 * that the runtime can meet: x86-64 shared objects and dynamically linked
 * executables with code.  Static programs, object files, debug files and
 * other architectures are left out.  *seen counts the files looked at.
 * With l->preload set, each program's start-up is recorded too (one
 * ld.so --list each), as files_add_prog records it.
 */
int files_add_system(struct cache_files *l, size_t *seen);

/*
 * As files_add_system, but adds only the programs that the kernel runs in
 * secure-execution mode (set-user-ID, set-group-ID, file capabilities),
 * each with its start-up when l->preload is set; their libraries are in
 * the start-ups only.
 */
int files_add_secure(struct cache_files *l, size_t *seen);

/* The dynamic linker that lists: the one that runs xom, the system's. */
const char *files_ldso(void);

/* The folders that files_add_system walks, NULL-terminated. */
extern const char *const files_system_dirs[];

/* ---- cache_listings.c --------------------------------------------------- */

/* The file in a store that keeps the last build's listings. */
#define XOM_STORE_LISTINGS "listings"

/*
 * The listings that the build into dir (NULL: none to read) made last
 * time, for the dynamic linker ldso listing with libxom.so preload (or
 * NULL) preloaded; NULL when out of memory, which only costs listings.
 */
struct cache_listings *listings_open(const char *dir, const char *ldso,
                                     const char *preload);

/* The text that listing path (secure: in secure-execution mode; preload:
 * with LD_PRELOAD) gave last time, when nothing it depends on changed
 * since; or NULL.  Counted as reused. */
const char *listings_find(struct cache_listings *m, const char *path, int secure,
                          int preload);

/* Records the text of a listing just made (which exited 0); counted as
 * listed, and kept only when it depends on nothing that is not checked. */
void listings_put(struct cache_listings *m, const char *path, int secure,
                  int preload, const char *text);

/* How many listings were reused and made. */
void listings_count(const struct cache_listings *m, size_t *reused, size_t *listed);

/* Writes the file into dir, by rename: with all set (a build of the
 * whole system) only what this build used.  0, or -1. */
int listings_save(struct cache_listings *m, const char *dir, int all);

void listings_free(struct cache_listings *m);

/* ---- cache_store.c ------------------------------------------------------ */

/* A store's index, mapped read-only; map is NULL when there is none. */
struct store_index {
	const void *map;
	size_t len;
	const char *why;                /* why there is none */
};

/* Maps dir's index for reading: 0, or -1 with why set (STORE_NO_INDEX
 * when there is none). */
#define STORE_NO_INDEX "no plans yet"
int store_map(const char *dir, struct store_index *ix);
void store_unmap(struct store_index *ix);

/* A plan of k in ix, of any shape, or NULL: for what only shows a plan. */
const struct xom_plan_head *store_find(const struct store_index *ix,
                                       const struct xom_plan_key *k);
/* The plan of k in ix that fits the file at path (plan_fits), or NULL. */
const struct xom_plan_head *store_find_file(const struct store_index *ix,
                                            const struct xom_plan_key *k,
                                            const char *path);

/* Calls fn for each plan of ix that is whole. */
void store_each(const struct store_index *ix,
                void (*fn)(const struct xom_plan_head *p, void *arg), void *arg);
/* How many sets of plans (xom_plan.h) ix holds, and their bytes. */
size_t store_sets(const struct store_index *ix, uint64_t *bytes);

/*
 * Whether the runtime reads the store in dir: for the system store, dir
 * and every folder above it are root's and writable by nobody else, and
 * so is its index; for a user's store the index is the user's and
 * writable by nobody else.  0, or -1 with the reason in why.
 */
int store_trusted(const char *dir, int system, char *why, size_t cap);
/* The folders alone of that rule, for a system store not built yet. */
int store_dirs_trusted(const char *dir, char *why, size_t cap);

/* Every store this user would read, mapped in the runtime's order (under
 * XOM_OPTIONS, or the defaults where they are invalid); a store that is
 * missing or not trusted stays unmapped.  For the readers of plans (xom
 * status, xom profile show). */
struct stores {
	struct store_index ix[XOM_NSTORES];
};
void stores_open(struct stores *st);
void stores_close(struct stores *st);

/* The key that the runtime looks the file at path up by: its build-id,
 * else its identity.  0, or -1 (errno set).  Only for a path that this
 * user chose: an open can hang or act on a FIFO or a device. */
int file_key(const char *path, struct xom_plan_key *k);
/* The same for a file open for reading. */
int fd_key(int fd, struct xom_plan_key *k);

/* The shape of the file at path (xom_plan.h: xom_file_shape); 0, or -1. */
int file_shape(const char *path, uint64_t *shape);

/* Whether a plan's file is still the one it was made from (plan_state),
 * or whether the file at path is one it fits (plan_fits): the very file
 * it was made from, or one with its key, shape and code. */
enum { PLAN_CURRENT, PLAN_GONE, PLAN_CHANGED, PLAN_UNCHECKED };
int plan_state(const struct xom_plan_head *p);
int plan_fits(const struct xom_plan_head *p, const char *path);

/* ---- cache_scan.c ------------------------------------------------------- */

struct scan_opts {
	const char *store;              /* the store the plans go into */
	int shared;                     /* it is the system store (mode 0755) */
	int jobs;                       /* helpers at once; 0: one per core */
	int progress;                   /* draw the progress line (a terminal) */
	const char *helper;             /* xom-plan */
};

/* What scan_files did. */
struct scan_result {
	size_t built, failed;
	uint64_t bytes;                 /* of the files that got a plan */
	double seconds;
	int interrupted;                /* by a signal: the finished plans are kept */
};

/*
 * Scans the n files of todo (their code and why set on failure, each
 * failure said on one line), keeping the plans in o->store as they come
 * in.  Returns a common/xom_exit.h status.
 */
int scan_files(struct cache_file **todo, size_t n, const struct scan_opts *o,
               struct scan_result *r);

/* Clears the progress line, if one is drawn, before another message. */
void progress_clear(void);

/* The number of cores this process may run on. */
int cores(void);

#endif
