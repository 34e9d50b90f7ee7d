/*
 * fuzz_store.c - libFuzzer target for a plan store's index and its sets,
 * read as the runtime reads them (a large batch maps the index and probes
 * it, formats/format.c; a small one reads the slots and entries it
 * needs with pread into its batch's table, loader/storeread.c) and as the
 * tools rewrite it (xom cache build and the helper merge their plans into
 * the index there, plan/storewrite.c).
 *
 * The input is the index file.  For every slot it names, the plan or set
 * there is looked up both ways, and both must give the same answer; a set
 * is walked plan by plan.  Then the index is merged with one more plan,
 * in a folder of its own, and the new index must be whole, and keep every
 * plan that the old one gave a reader, unless the new plan replaces it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../loader/loader.h"
#include "../../loader/sys.h"
#include "../../plan/build.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#include "../check.h"

/* ---- the runtime's small-batch reader, on the input as its file -------- */

static const uint8_t *file_data;
static size_t file_size;

/* pread as the kernel does it, but with memcpy, so that the address
 * sanitizer sees where the reader's buffer ends. */
static long mem_pread(int fd, void *buf, size_t n, long off)
{
	(void)fd;
	if (off < 0)
		return -EINVAL;
	if ((size_t)off >= file_size)
		return 0;
	size_t got = file_size - (size_t)off < n ? file_size - (size_t)off : n;
	memcpy(buf, file_data + off, got);
	return (long)got;
}

/* The reader maps the index when its plans outgrow the batch's room. */
static void *mem_map(void *a, size_t n, int prot, int flags, int fd, long off)
{
	(void)a, (void)prot, (void)flags, (void)fd, (void)off;
	void *p = malloc(n ? n : 1);
	if (!p)
		return (void *)-ENOMEM;
	memcpy(p, file_data, n < file_size ? n : file_size);
	return p;
}

#define x_pread mem_pread
#define x_mmap mem_map
#include "../../loader/storeread.c"
#undef x_pread
#undef x_mmap

/* The batch's table that storeread.c reads into: its own allocation, so
 * that a write past its end is caught.  Handed to the reader before each
 * lookup, as xom_stores_open does before each batch. */
static char *spare;
static size_t spare_len;

/* ---- one lookup, both ways ------------------------------------------------- */

static void same_answer(const void *mapped, const void *read, size_t len)
{
	TRAP_UNLESS(!mapped == !read);
	if (mapped)
		TRAP_UNLESS(!memcmp(mapped, read, len));
}

/* What a reader of the index finds for the entry of slot s: its plan, by
 * key and shape, or its set, by hash. */
static void look_up(const void *index, size_t len, uint32_t nslots,
                    const struct xom_store_slot *s)
{
	struct xom_store st = { .len = len, .tried = 1, .fd = 0, .nslots = nslots };
	const char *blob = (const char *)index + s->off;
	const char *why;

	xom_store_read_room(spare, spare_len);
	if (xom_plan_check(blob, s->len, &why) == 0) {
		const struct xom_plan_head *h = (const void *)blob;
		struct xom_plan_key k;
		xom_plan_key_of(h, &k);
		const struct xom_plan_head *m = xom_store_find(index, len, &k, &h->shape);
		const struct xom_plan_head *r = xom_store_read_find(&st, &k, h->shape);
		same_answer(m, r, m ? m->total : 0);
		if (m) {
			struct xom_plan_key got;
			xom_plan_key_of(m, &got);
			TRAP_UNLESS(xom_key_equal(&got, &k) && m->shape == h->shape);
		}
	} else if (xom_set_check(blob, s->len, s->hash) == 0) {
		const struct xom_set_head *m = xom_store_find_set(index, len, s->hash);
		const struct xom_set_head *r = xom_store_read_set(&st, s->hash);
		same_answer(m, r, m ? m->total : 0);
		size_t at = 0, plen = 0, n = 0;
		const char *end = m ? (const char *)m + m->total : NULL;
		for (const struct xom_plan_head *p; m && (p = xom_set_plan(m, &at, &plen)); n++) {
			TRAP_UNLESS((const char *)p + plen <= end && plen == p->total);
			TRAP_UNLESS(xom_plan_check(p, plen, &why) == 0);
		}
	}
	if (st.map)
		free((void *)st.map);
	xom_store_read_wipe();
}

/* ---- the tools' merge ---------------------------------------------------------- */

static char dir[64];

/* What a merge leaves in dir: the index, the lock and the symbol folder. */
static void remove_dir(void)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/" XOM_STORE_INDEX, dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/" XOM_STORE_LOCK, dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/" XOM_STORE_SYMS, dir);
	rmdir(p);
	rmdir(dir);
}

static int make_dir(void)
{
	if (dir[0])
		return 0;
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/xom-fuzz-store.%d",
	         tmp && tmp[0] == '/' && strlen(tmp) < 32 ? tmp : "/tmp", (int)getpid());
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return -1;
	atexit(remove_dir);
	return 0;
}

static int write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return -1;
	int bad = n && fwrite(p, 1, n, f) != n;
	return fclose(f) | bad ? -1 : 0;
}

static void *read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	void *p = NULL;
	long len;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0
	    && (p = malloc((size_t)len)) && fread(p, 1, (size_t)len, f) != (size_t)len) {
		free(p);
		p = NULL;
	}
	fclose(f);
	*n = p ? (size_t)len : 0;
	return p;
}

/* A plan made here, whole and sealed, for a key of the input's choosing. */
static struct xom_plan_head *new_plan(const uint8_t *data, size_t size)
{
	size_t total = xom_plan_size(1, 1, 8);
	struct xom_plan_head *h = calloc(1, total);

	if (!h)
		return NULL;
	memcpy(h->magic, XOM_PLAN_MAGIC, 8);
	h->format = XOM_PLAN_FORMAT;
	h->scan_version = XOM_PLAN_SCAN_VERSION;
	h->total = (uint32_t)total;
	h->nsegs = 1;
	h->nruns = 1;
	h->path_len = 8;
	h->build_id_len = 20;
	memcpy(h->build_id, data, size < 20 ? size : 20);
	if (size > 28)
		memcpy(&h->shape, data + 20, 8);
	struct xom_plan_seg *s = (void *)(h + 1);
	*s = (struct xom_plan_seg){ 0x1000, 0x2000, 0x1000, 0x2000, 5, 0 };
	struct xom_plan_run *r = (void *)(s + 1);
	*r = (struct xom_plan_run){ 0x1000, 0x3000 };
	memcpy(r + 1, "/fuzzed", 8);
	xom_plan_seal(h);
	return h;
}

/* Whether old holds a plan, at a slot, that is byte for byte q. */
static int in_old(const void *old, size_t old_len, const struct xom_plan_head *q)
{
	const struct xom_store_head *h = old;
	const struct xom_store_slot *s = (const void *)(h + 1);

	for (uint32_t i = 0; i < h->nslots; i++)
		if (s[i].len == q->total && xom_store_slot_ok(&s[i], old_len)
		    && !memcmp((const char *)old + s[i].off, q, q->total))
			return 1;
	return 0;
}

/* Every plan a reader of old would take must still be taken from new (or,
 * where old held copies of one key and shape, one of them), unless it has
 * the added plan's key and shape. */
static void kept(const void *old, size_t old_len, const void *idx, size_t len,
                 const struct xom_plan_head *added)
{
	const struct xom_store_head *h = old;
	const struct xom_store_slot *s = (const void *)(h + 1);
	struct xom_plan_key ak;
	const char *why;

	xom_plan_key_of(added, &ak);
	for (uint32_t i = 0; i < h->nslots; i++) {
		if (!s[i].len || !xom_store_slot_ok(&s[i], old_len))
			continue;
		const struct xom_plan_head *p = (const void *)((const char *)old + s[i].off);
		if (xom_plan_check(p, s[i].len, &why) != 0)
			continue;
		struct xom_plan_key k;
		xom_plan_key_of(p, &k);
		/* Only what a reader takes: the first of a key and shape. */
		if (xom_store_find(old, old_len, &k, &p->shape) != p)
			continue;
		if (xom_key_equal(&k, &ak) && p->shape == added->shape)
			continue;
		const struct xom_plan_head *q = xom_store_find(idx, len, &k, &p->shape);
		TRAP_UNLESS(q && in_old(old, old_len, q));
	}
}

/* Drops the plans whose build-id starts with an odd byte. */
static int drop_odd(const struct xom_plan_head *p, void *arg)
{
	(void)arg;
	return p->build_id_len && p->build_id[0] & 1;
}

/* xom cache prune on the merged index: what it keeps is whole, and holds
 * no plan it dropped. */
static void pruned(const char *path)
{
	struct xom_prune r;
	char why[600];
	const char *bad;
	size_t len;

	if (xom_store_prune(dir, 0, drop_odd, NULL, &r, why, sizeof(why)) != 0)
		return;
	void *idx = read_file(path, &len);
	TRAP_UNLESS(idx && xom_store_check_head(idx, len, &bad) == 0);
	const struct xom_store_head *h = idx;
	const struct xom_store_slot *s = (const void *)(h + 1);
	for (uint32_t i = 0; i < h->nslots; i++) {
		const void *p = (const char *)idx + s[i].off;
		if (s[i].len && xom_store_slot_ok(&s[i], len)
		    && xom_plan_check(p, s[i].len, &bad) == 0)
			TRAP_UNLESS(!drop_odd(p, NULL));
	}
	free(idx);
}

/* The merge in memory (xom_store_merge), every time; through the files
 * (xom_store_add: the index read from its folder, the new one renamed
 * into place) for one input in 32, since file system calls cost a
 * hundred times the rest. */
static void merge(const uint8_t *data, size_t size)
{
	char path[128], why[600];
	const char *bad;
	void *old = malloc(size ? size : 1), *idx = NULL;
	size_t len = 0;
	struct xom_built b = { 0 };

	if (!old)
		return;
	memcpy(old, data, size);
	int whole = xom_store_check_head(old, size, &bad) == 0;
	b.path = "/fuzzed";
	b.plan = new_plan(data, size);
	if (!b.plan)
		goto out;
	struct xom_plan_key k;
	xom_plan_key_of(b.plan, &k);
	struct xom_set_keys set = { &k, 1 };
	int rc;
	if (size && data[0] % 32 == 0 && make_dir() == 0) {
		snprintf(path, sizeof(path), "%s/" XOM_STORE_INDEX, dir);
		if (write_file(path, data, size) != 0)
			goto out;
		rc = xom_store_add(dir, 0, &b, 1, &set, 1, why, sizeof(why));
		idx = rc == 0 ? read_file(path, &len) : NULL;
		if (rc == 0)
			pruned(path);
	} else {
		/* As the writer maps it: a damaged index is none. */
		rc = xom_store_merge(whole ? old : NULL, size, &b, 1, &set, 1, &idx,
		                     &len, why, sizeof(why));
	}
	if (rc == 0) {
		/* Whole, with the new plan in it, and what readers took. */
		TRAP_UNLESS(idx && xom_store_check_head(idx, len, &bad) == 0);
		TRAP_UNLESS(xom_store_find(idx, len, &k, &b.plan->shape));
		if (whole)
			kept(old, size, idx, len, b.plan);
	} else {
		TRAP_UNLESS(why[0]);
	}
out:
	free(idx);
	free(b.plan);
	free(old);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *why;
	/* 8-aligned, as a mapped file is. */
	void *index = malloc(size ? size : 1);

	if (!index)
		return 0;
	memcpy(index, data, size);
	file_data = data;
	file_size = size;
	if (xom_store_check_head(index, size, &why) == 0) {
		const struct xom_store_head *h = index;
		const struct xom_store_slot *s = (const void *)(h + 1);
		/* Room for a few plans, as a batch has; sometimes less than
		 * one, so that the reader maps the index instead. */
		spare_len = size && data[size - 1] & 1 ? 512 : 32u << 10;
		spare = malloc(spare_len);
		for (uint32_t i = 0; spare && i < h->nslots && i < 4096; i++)
			if (s[i].len && xom_store_slot_ok(&s[i], size))
				look_up(index, size, h->nslots, &s[i]);
		free(spare);
		spare = NULL;
	}
	free(index);
	merge(data, size);
	return 0;
}
