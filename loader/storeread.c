/*
 * storeread.c - a small batch's plans, read from a store's index with
 * pread instead of mapping it, where no index may be kept between
 * batches: under the kernel's key (stores.c opens the index and decides).
 *
 * Phase: object.  The plans and sets read go into the batch's table, after
 * its arrivals (the room that stores.c is given at xom_stores_open), so
 * that a small batch writes one page for both; the batch's end wipes them
 * (xom_store_read_wipe), so that none outlives the batch, as none of a
 * mapped index does.  A plan is a few
 * hundred bytes (736 for libavcodec), and up to XOM_READ_BYTES of them are
 * read; a batch whose plans do not fit maps the index after all.  The
 * tests build a runtime with room for less than that (XOM_READ_BYTES).
 */
#include <sys/mman.h>

#include "loader.h"
#include "sys.h"

#ifndef XOM_READ_BYTES
#define XOM_READ_BYTES (32u << 10)
#endif
static char *buf;                       /* this batch's room, or NULL */
static size_t room, used, touched;      /* its size; bytes kept; bytes written */

/* Maps a store that was being read: its plans outgrew buf.  Those read
 * so far stay where they are until the batch ends. */
static const void *map_instead(struct xom_store *s, const struct xom_plan_key *k,
                               const uint64_t *shape, uint64_t hash)
{
	void *p = x_mmap(NULL, s->len, PROT_READ, MAP_PRIVATE, s->fd, 0);

	if (X_MAP_FAILED(p))
		return NULL;
	s->map = p;
	return xom_store_lookup(p, s->len, k, shape, hash);
}

/* The plan for k and *shape, or (k NULL) the set for hash, in a store
 * being read: the slots from hash on, a few at a time, then the entry of
 * each slot whose hash matches (xom_store_entry). */
static const void *read_find(struct xom_store *s, const struct xom_plan_key *k,
                             const uint64_t *shape, uint64_t hash)
{
	struct xom_store_slot slot[8];
	uint32_t n = s->nslots, first = 0, have = 0;

	for (uint32_t i = 0, at = (uint32_t)hash & (n - 1); i < n;
	     i++, at = (at + 1) & (n - 1)) {
		if (!i || at < first || at - first >= have) {
			have = n - at < 8 ? n - at : 8;
			size_t bytes = have * sizeof(*slot);
			if (x_pread(s->fd, slot, bytes, (long)(sizeof(struct xom_store_head)
			            + (uint64_t)at * sizeof(*slot))) != (long)bytes)
				return NULL;
			first = at;
		}
		const struct xom_store_slot *sl = &slot[at - first];
		if (!sl->len)
			return NULL;
		if (sl->hash != hash || !xom_store_slot_ok(sl, s->len))
			continue;
		if (!buf || sl->len > room - used)
			return map_instead(s, k, shape, hash);
		char *at_buf = buf + used;
		long got = x_pread(s->fd, at_buf, sl->len, (long)sl->off);
		if (got > 0 && used + (size_t)got > touched)
			touched = used + (size_t)got;
		if (got != (long)sl->len)
			return NULL;
		const void *h = xom_store_entry(at_buf, sl->len, k, shape, hash);
		if (h) {
			used += (sl->len + 7) & ~(size_t)7;
			return h;
		}
	}
	return NULL;
}

const struct xom_plan_head *xom_store_read_find(struct xom_store *s,
                                               const struct xom_plan_key *k,
                                               uint64_t shape)
{
	return read_find(s, k, &shape, xom_key_hash(k));
}

const struct xom_set_head *xom_store_read_set(struct xom_store *s, uint64_t hash)
{
	return read_find(s, NULL, NULL, hash);
}

void xom_store_read_room(void *at, size_t cap)
{
	buf = at;
	room = cap < XOM_READ_BYTES ? cap : XOM_READ_BYTES;
	used = touched = 0;
}

void xom_store_read_wipe(void)
{
	if (buf)
		memset(buf, 0, touched);
	buf = NULL;
	room = used = touched = 0;
}
