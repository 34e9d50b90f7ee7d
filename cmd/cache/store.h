/*
 * store.h - the plan stores as the runtime reads them, seen from
 * outside (cmd/cache/store.c): which stores, whether trusted, a file's
 * key, what is current or stale.  For xom cache, status, profile and
 * learn (check and run's static programs have it through cache.h).
 * Internal to cmd/.
 */
#ifndef XOM_CMD_CACHE_STORE_H
#define XOM_CMD_CACHE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "../../loader/options.h"
#include "../../formats/xom_plan.h"

/* The stores' names in reports, in xom_store_dirs' order. */
extern const char *const cache_store_label[];

/* The options the runtime would run a program with here: XOM_OPTIONS over
 * the defaults (/etc/xom.conf is per program, and no program is named).
 * 0, or -1 after one line. */
struct xom_opts;
int cache_runtime_opts(struct xom_opts *o, char *buf, size_t cap);

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
/* The same, for a file whose shape is known. */
const struct xom_plan_head *store_find_shaped(const struct store_index *ix,
                                              const struct xom_plan_key *k,
                                              uint64_t shape, const char *path);

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
/* The same for a file open for reading. */
int fd_shape(int fd, uint64_t *shape);

/* Whether a plan's file is still the one it was made from (plan_state),
 * or whether the file at path is one it fits (plan_fits): the very file
 * it was made from, or one with its key, shape and code. */
enum { PLAN_CURRENT, PLAN_GONE, PLAN_CHANGED, PLAN_UNCHECKED };
int plan_state(const struct xom_plan_head *p);
int plan_fits(const struct xom_plan_head *p, const char *path);
/* 0 when the file at path has p's code: the bytes of p's executable
 * segments, at their offsets, hash to p's code sum; else -1. */
int plan_code_sum(const struct xom_plan_head *p, const char *path);

#endif
