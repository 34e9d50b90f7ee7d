/*
 * arrive.h - a batch's arrivals and their table (arrive.c), as the later
 * passes see them: the plan lookup (lookup.c, pass 2) and the batch's run
 * under its lock (batch.c, pass 3).  No other file includes it.
 */
#ifndef XOM_ARRIVE_H
#define XOM_ARRIVE_H

#include "loader.h"

/* The arrivals that the batch's own tables hold; a bigger batch maps
 * room for the rest (arrive.c, lookup.c).  The tests build a runtime
 * with less room (XOM_BATCH_ARRIVALS), to take those paths often. */
#ifdef XOM_BATCH_ARRIVALS
#define BATCH_ARRIVALS XOM_BATCH_ARRIVALS
#else
#define BATCH_ARRIVALS 1024
#endif

/* One arrival, then its name: records of their own length, one after the
 * other, so that a batch writes the bytes it needs and no more (every
 * page it touches costs a fault, and another when the process ends). */
struct arrival {
	uintptr_t bias, lo, hi;
	const ElfW(Phdr) *ph;           /* pass 1 only, unless stable */
	int phnum, flags;
	struct xom_plan_key key;        /* the build-id, or (pass 2) identity */
	uint64_t shape;                 /* xom_elf_shape: a plan must have it too */
	const char *path;               /* for messages and the helper */
	const struct xom_plan_head *plan;
	const char *why;                /* the helper's reason, if no plan */
	int done;                       /* remembered: nothing more to do */
	int outcome;
	uint32_t size;                  /* of this record */
	char name[];                    /* the link map's name, maybe cut */
};
#define ARRIVAL_MAX (sizeof(struct arrival) + XOM_NAME_MAX)

struct arrival *xom_arrival_first(void);
/* The arrival after a, or NULL. */
struct arrival *xom_arrival_next(const struct arrival *a);
#define EACH_ARRIVAL(a) \
	for (struct arrival *a = xom_arrival_first(); a; a = xom_arrival_next(a))
/* How many arrived, and how many found no room. */
size_t xom_batch_size(void);
size_t xom_batch_dropped(void);
/* The table's room past the arrivals, where pass 2 keeps the plans it
 * reads until the batch ends; *cap its size. */
void *xom_batch_room(size_t *cap);
/* Empties the batch; then unmaps the table's mapping, if it outgrew its
 * own memory, once nothing of it is read any more. */
void xom_batch_empty(void);
void xom_batch_unmap(void);
/* Puts an arrival in the object table, with its probe (0: none). */
void xom_arrival_remember(const struct arrival *a, uintptr_t probe);
/* Whether plan is the one for a: its key, and its file's shape. */
int xom_arrival_fits(const struct arrival *a, const struct xom_plan_head *plan);

#endif
