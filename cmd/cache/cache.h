/*
 * cache.h - what the parts of xom cache share (cmd/cache/).  Internal to
 * cmd/.
 *
 *   cache.c     the subcommand: options, which store; build and prune
 *   stats.c     xom cache stats: what each store holds, what is stale
 *               (stats.h)
 *   files.c     what to build: a program and what the dynamic linker
 *               loads with it, or every ELF object of the system
 *   elffile.c   what an ELF file is, and the folders its run paths
 *               name (elffile.h)
 *   listings.c  the last build's listings, used again while what
 *               they depend on is unchanged
 *   facts.c     what each file was at the last build (its ELF kind,
 *               key and shape), used again while it is unchanged
 *   store.c     the stores as the runtime reads them: which, whether
 *               trusted, a file's key, what is current or stale
 *               (store.h, which this header includes)
 *   scanning.c  the scanning: xom-plan helpers on every core, the
 *               progress line, the plans merged into the store
 */
#ifndef XOM_CMD_CACHE_H
#define XOM_CMD_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../loader/options.h"
#include "../../formats/xom_plan.h"
#include "store.h"

/* ---- cache.c ------------------------------------------------------------- */

struct cache_opts {
	int system, quiet, json, list, dry_run, jobs;
	const char *store;
};

/* ---- files.c ------------------------------------------------------------ */

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
	/* The last build's listings (listings.c), or NULL. */
	struct cache_listings *memo;
	/* What the last build learnt of each file (facts.c), or NULL. */
	struct cache_facts *facts;
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

/* root_alone (cmd.h), with the answer for the folders remembered for the
 * folder of the last path asked about: a build asks it of thousands of
 * files in a few hundred folders, one folder after another. */
struct stat;
int files_root_alone(const char *path, const struct stat *st);

/* The dynamic linker that lists: the one that runs xom, the system's. */
const char *files_ldso(void);

/* The folders that files_add_system walks, NULL-terminated. */
extern const char *const files_system_dirs[];

/* ---- listings.c --------------------------------------------------------- */

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

/* ---- facts.c ------------------------------------------------------------ */

/* The file in a store that keeps what each file was at the last build. */
#define XOM_STORE_FACTS "facts"

/*
 * What the build into dir (NULL: none to read) learnt of each file last
 * time; NULL when out of memory, which only costs reading the files.
 * Each function below answers as the function it stands for, from the
 * fact kept while the file's identity is the one it was learnt with,
 * else from the file (and learns it).  m may be NULL.
 */
struct cache_facts *facts_open(const char *dir);

/* elf_kind of the file at path, whose stat (through links) is st: the
 * enum elf_kind, with *audit and *program; or -1 when it cannot be
 * opened. */
int facts_kind(struct cache_facts *m, const char *path, const struct stat *st,
               int *audit, int *program);

/* file_key: 0, or -1 (errno set). */
int facts_key(struct cache_facts *m, const char *path, struct xom_plan_key *k);

/* file_shape: 0, or -1. */
int facts_shape(struct cache_facts *m, const char *path, uint64_t *shape);

/* Writes the file into dir, by rename: with all set (a build of the
 * whole system) only what this build met.  0, or -1. */
int facts_save(struct cache_facts *m, const char *dir, int all);

void facts_free(struct cache_facts *m);

/* ---- scanning.c --------------------------------------------------------- */

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
