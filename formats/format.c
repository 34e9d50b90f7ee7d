/*
 * format.c - the plan, store, symbol-file and profile-line formats
 * (xom_plan.h): sizes, checksums, sealing, checking, keys and lookups.
 * Shared by the runtime and the tools.  Everything here also runs in the fault handler: no
 * allocation, no locks, no stdio.
 */
#include <elf.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "xom_plan.h"

#define PAGE XOM_PLAN_PAGE

uint64_t xom_hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (; n >= 8; c += 8, n -= 8) {
		uint64_t w;
		memcpy(&w, c, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 32;
	}
	for (; n; n--) {
		h ^= *c++;
		h *= 0x100000001b3ull;
	}
	return h;
}

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

size_t xom_plan_size(size_t nsegs, size_t nruns, size_t path_len)
{
	return pad8(sizeof(struct xom_plan_head)
	            + nsegs * sizeof(struct xom_plan_seg)
	            + nruns * sizeof(struct xom_plan_run) + path_len);
}

/* The checksum of a record whose sum field is at sum_at, taken with it zero. */
static uint64_t sum_without(const void *p, size_t len, const uint64_t *sum_at)
{
	size_t at = (size_t)((const char *)sum_at - (const char *)p);
	const uint64_t zero = 0;
	uint64_t s = xom_hash(XOM_HASH_INIT, p, at);

	s = xom_hash(s, &zero, sizeof(zero));
	return xom_hash(s, (const char *)p + at + 8, len - at - 8);
}

void xom_plan_seal(struct xom_plan_head *h)
{
	h->sum = sum_without(h, h->total, &h->sum);
}

static int run_in_segs(const struct xom_plan_head *h,
                       const struct xom_plan_run *r)
{
	const struct xom_plan_seg *s = xom_plan_segs(h);

	for (uint32_t i = 0; i < h->nsegs; i++) {
		uint64_t lo = s[i].vaddr & ~(uint64_t)(PAGE - 1);
		uint64_t hi = s[i].vaddr + s[i].memsz;
		if (r->start >= lo && r->end <= hi + PAGE - 1)
			return 1;
	}
	return 0;
}

static int plan_body_ok(const struct xom_plan_head *h, const char **why)
{
	const struct xom_plan_seg *s = xom_plan_segs(h);
	const struct xom_plan_run *r = xom_plan_runs(h);

	for (uint32_t i = 0; i < h->nsegs; i++)
		if (s[i].vaddr + s[i].memsz < s[i].vaddr || s[i].filesz > s[i].memsz)
			return *why = "segment wraps around or is inconsistent", -1;
	for (uint32_t i = 0; i < h->nruns; i++) {
		if (r[i].start >= r[i].end || (r[i].start | r[i].end) % PAGE)
			return *why = "run not page-aligned or empty", -1;
		if (i && r[i].start < r[i - 1].end)
			return *why = "runs not sorted", -1;
		if (!run_in_segs(h, &r[i]))
			return *why = "run outside the executable segments", -1;
	}
	const char *path = xom_plan_path(h);
	if (!h->path_len || path[h->path_len - 1] != 0)
		return *why = "path not terminated", -1;
	return 0;
}

int xom_plan_check(const void *buf, size_t len, const char **why)
{
	const struct xom_plan_head *h = buf;

	if (len < sizeof(*h) || ((uintptr_t)buf & 7))
		return *why = "shorter than its header", -1;
	if (memcmp(h->magic, XOM_PLAN_MAGIC, 8) != 0)
		return *why = "bad magic", -1;
	if (h->format != XOM_PLAN_FORMAT)
		return *why = "unknown format version", -1;
	if (h->total != len || len > XOM_PLAN_MAX)
		return *why = "length does not match its header (truncated?)", -1;
	if (xom_plan_size(h->nsegs, h->nruns, h->path_len) != len)
		return *why = "counts do not match its length", -1;
	if (h->build_id_len > sizeof(h->build_id))
		return *why = "build-id too long", -1;
	if (h->whole_reason && h->nruns)
		return *why = "whole-file reason with execute-only runs", -1;
	if (h->sum != sum_without(h, len, &h->sum))
		return *why = "checksum mismatch", -1;
	return plan_body_ok(h, why);
}

void xom_plan_key_of(const struct xom_plan_head *h, struct xom_plan_key *k)
{
	memset(k, 0, sizeof(*k));
	if (h->build_id_len) {
		k->kind = XOM_KEY_BUILD_ID;
		k->len = h->build_id_len;
		memcpy(k->bytes, h->build_id, h->build_id_len);
	} else {
		k->kind = XOM_KEY_IDENT;
		k->len = sizeof(h->file);
		memcpy(k->bytes, &h->file, sizeof(h->file));
	}
}

int xom_key_equal(const struct xom_plan_key *a, const struct xom_plan_key *b)
{
	return a->kind == b->kind && a->len == b->len
	       && !memcmp(a->bytes, b->bytes, a->len);
}

void xom_key_name(const struct xom_plan_key *k, char *out, size_t cap)
{
	size_t n = 0;

	if (cap < XOM_KEY_NAME_MAX) {
		if (cap)
			out[0] = 0;
		return;
	}
	if (k->kind != XOM_KEY_BUILD_ID)
		out[n++] = 'f';
	for (unsigned i = 0; i < k->len && i < sizeof(k->bytes) && n + 2 < cap; i++) {
		out[n++] = "0123456789abcdef"[k->bytes[i] >> 4];
		out[n++] = "0123456789abcdef"[k->bytes[i] & 15];
	}
	out[n] = 0;
}

int xom_hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int xom_key_parse(const char *name, struct xom_plan_key *k)
{
	memset(k, 0, sizeof(*k));
	k->kind = XOM_KEY_BUILD_ID;
	/* A build-id in hex may start with an f too; its name is even. */
	if (*name == 'f' && strlen(name) % 2) {
		k->kind = XOM_KEY_IDENT;
		name++;
	}
	for (; name[0]; name += 2) {
		int hi = xom_hex_digit(name[0]), lo = hi < 0 ? -1 : xom_hex_digit(name[1]);
		if (lo < 0 || k->len >= sizeof(k->bytes))
			return -1;
		k->bytes[k->len++] = (uint8_t)(hi << 4 | lo);
	}
	if (k->kind == XOM_KEY_IDENT ? k->len != sizeof(struct xom_file_ident) : !k->len)
		return -1;
	return 0;
}

uint64_t xom_key_hash(const struct xom_plan_key *k)
{
	return xom_hash(xom_hash(XOM_HASH_INIT, &k->kind, 1), k->bytes, k->len);
}

/* ---- the store index --------------------------------------------------- */

int xom_store_check_head(const void *buf, size_t len, const char **why)
{
	const struct xom_store_head *h = buf;

	if (len < sizeof(*h))
		return *why = "shorter than its header", -1;
	if (memcmp(h->magic, XOM_STORE_MAGIC, 8) != 0)
		return *why = "bad magic", -1;
	if (h->format != XOM_STORE_FORMAT)
		return *why = "unknown format version", -1;
	if (h->scan_version != XOM_PLAN_SCAN_VERSION)
		return *why = "made by another scanner version", -1;
	if (h->total != len)
		return *why = "length does not match its header (truncated?)", -1;
	if (h->sum != sum_without(h, sizeof(*h), &h->sum))
		return *why = "header checksum mismatch", -1;
	if (h->nslots & (h->nslots - 1))
		return *why = "slot count not a power of two", -1;
	if ((uint64_t)h->nslots * sizeof(struct xom_store_slot) > len - sizeof(*h))
		return *why = "slot table past the end", -1;
	return 0;
}

int xom_dir_chain(const char *dir, int (*lstat_fn)(const char *, struct stat *),
                  char *bad, size_t cap, struct stat *st)
{
	char p[4096];
	struct stat own;
	size_t n = strlen(dir);

	if (!st)
		st = &own;
	if (dir[0] != '/')
		return XOM_DIR_RELATIVE;
	if (n >= sizeof(p))
		return XOM_DIR_LONG;
	memcpy(p, dir, n + 1);
	/* dir, each folder above it, and / (p empties to "" at the last). */
	for (char *s = p + n;; ) {
		const char *at = p[0] ? p : "/";
		int why = lstat_fn(at, st) != 0 ? XOM_DIR_MISSING
		          : !S_ISDIR(st->st_mode) ? XOM_DIR_NOT_DIR
		          : st->st_uid != 0 ? XOM_DIR_NOT_ROOT
		          : st->st_mode & 022 ? XOM_DIR_WRITABLE : XOM_DIR_OK;
		if (why != XOM_DIR_OK) {
			if (bad && cap) {
				size_t k = strlen(at) < cap ? strlen(at) : cap - 1;
				memcpy(bad, at, k);
				bad[k] = 0;
			}
			return why;
		}
		if (!p[0])
			return XOM_DIR_OK;
		while (s > p && *s != '/')
			s--;
		*s = 0;
	}
}

int xom_store_dir_shared(const char *dir,
                         int (*lstat_fn)(const char *, struct stat *))
{
	return xom_dir_chain(dir, lstat_fn, NULL, 0, NULL) == XOM_DIR_OK;
}

int xom_store_file_check(const struct stat *st, unsigned uid)
{
	if (!S_ISREG(st->st_mode))
		return XOM_FILE_NOT_REGULAR;
	if (st->st_uid != uid)
		return XOM_FILE_NOT_OWNER;
	return st->st_mode & 022 ? XOM_FILE_WRITABLE : XOM_FILE_OK;
}

void xom_store_seal_head(struct xom_store_head *h)
{
	h->sum = sum_without(h, sizeof(*h), &h->sum);
}

int xom_store_slot_ok(const struct xom_store_slot *s, uint64_t len)
{
	return !(s->off % 8) && s->off <= len && s->len <= len - s->off;
}

const struct xom_plan_head *xom_store_plan(const void *plan, size_t len,
                                           const struct xom_plan_key *k,
                                           const uint64_t *shape)
{
	const char *why;
	struct xom_plan_key got;
	const struct xom_plan_head *h = plan;

	if (xom_plan_check(h, len, &why) != 0
	    || h->scan_version != XOM_PLAN_SCAN_VERSION)
		return NULL;
	xom_plan_key_of(h, &got);
	return xom_key_equal(&got, k) && (!shape || h->shape == *shape) ? h : NULL;
}

const void *xom_store_entry(const void *blob, size_t len,
                            const struct xom_plan_key *k, const uint64_t *shape,
                            uint64_t hash)
{
	if (k)
		return xom_store_plan(blob, len, k, shape);
	return xom_set_check(blob, len, hash) == 0 ? blob : NULL;
}

const void *xom_store_lookup(const void *index, size_t len,
                             const struct xom_plan_key *k, const uint64_t *shape,
                             uint64_t hash)
{
	const struct xom_store_head *h = index;
	const struct xom_store_slot *slot = (const void *)(h + 1);

	if (!h->nslots)
		return NULL;
	for (uint32_t i = 0, at = (uint32_t)hash & (h->nslots - 1);
	     i < h->nslots && slot[at].len; i++, at = (at + 1) & (h->nslots - 1)) {
		if (slot[at].hash != hash || !xom_store_slot_ok(&slot[at], len))
			continue;
		const void *p = xom_store_entry((const char *)index + slot[at].off,
		                                slot[at].len, k, shape, hash);
		if (p)
			return p;
	}
	return NULL;
}

const struct xom_plan_head *xom_store_find(const void *index, size_t len,
                                           const struct xom_plan_key *k,
                                           const uint64_t *shape)
{
	return xom_store_lookup(index, len, k, shape, xom_key_hash(k));
}

/* ---- plan sets ------------------------------------------------------------ */

uint64_t xom_set_hash(uint64_t h, const struct xom_plan_key *k)
{
	return xom_hash(xom_hash(h, &k->kind, 2), k->bytes, k->len);
}

int xom_set_check(const void *buf, size_t len, uint64_t hash)
{
	const struct xom_set_head *s = buf;

	return len >= sizeof(*s) && !((uintptr_t)buf & 7)
	       && !memcmp(s->magic, XOM_SET_MAGIC, 8) && s->total == len
	       && s->hash == hash ? 0 : -1;
}

static const void *set_next(const struct xom_set_head *s, size_t *at, size_t *len)
{
	size_t off = *at ? *at + pad8(*len) : sizeof(*s);
	const struct xom_plan_head *p = (const void *)((const char *)s + off);

	if (off > s->total || s->total - off < sizeof(*p) || p->total < sizeof(*p)
	    || p->total > s->total - off)
		return NULL;
	*at = off;
	*len = p->total;
	return p;
}

const struct xom_plan_head *xom_set_plan(const struct xom_set_head *s,
                                         size_t *at, size_t *len)
{
	const struct xom_plan_head *p;
	const char *why;

	while ((p = set_next(s, at, len)) != NULL)
		if (xom_plan_check(p, *len, &why) == 0
		    && p->scan_version == XOM_PLAN_SCAN_VERSION)
			return p;
	return NULL;
}

const struct xom_set_head *xom_store_find_set(const void *index, size_t len,
                                              uint64_t hash)
{
	return xom_store_lookup(index, len, NULL, NULL, hash);
}

/* ---- symbol files -------------------------------------------------------- */

int xom_syms_check(const void *buf, size_t len, const char **why)
{
	const struct xom_syms_head *h = buf;

	if (len < sizeof(*h))
		return *why = "shorter than its header", -1;
	if (memcmp(h->magic, XOM_SYMS_MAGIC, 8) != 0 || h->format != XOM_SYMS_FORMAT)
		return *why = "bad magic or format", -1;
	if (h->total != len || h->build_id_len > sizeof(h->build_id))
		return *why = "length does not match its header (truncated?)", -1;
	if ((uint64_t)h->nsyms * sizeof(struct xom_plan_sym) + h->names_len
	    != len - sizeof(*h))
		return *why = "counts do not match its length", -1;
	if (h->sum != sum_without(h, len, &h->sum))
		return *why = "checksum mismatch", -1;
	return 0;
}

void xom_syms_seal(struct xom_syms_head *h)
{
	h->sum = sum_without(h, h->total, &h->sum);
}

/* How far back from the last symbol at or below an address to look for one
 * that contains it: functions nest only a little (cold parts, aliases). */
#define SYMS_LOOKBACK 16

const char *xom_syms_lookup(const struct xom_syms_head *h, uint64_t addr,
                            uint64_t *off)
{
	const struct xom_plan_sym *sym = (const void *)(h + 1);
	const char *names = (const char *)(sym + h->nsyms);
	uint32_t lo = 0, hi = h->nsyms;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (sym[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (uint32_t i = lo, n = 0; i > 0 && n < SYMS_LOOKBACK; i--, n++) {
		const struct xom_plan_sym *s = &sym[i - 1];
		if (addr - s->addr >= s->size || s->name >= h->names_len
		    || !memchr(names + s->name, 0, h->names_len - s->name))
			continue;
		*off = addr - s->addr;
		return names + s->name;
	}
	return NULL;
}

/* ---- keys of files ------------------------------------------------------- */

int xom_note_build_id(const void *notes, size_t len, struct xom_plan_key *k)
{
	const unsigned char *p = notes, *end = p + len;

	while (end - p >= 12) {
		uint32_t n[3];
		memcpy(n, p, sizeof(n));
		size_t name = ((size_t)n[0] + 3) & ~(size_t)3;
		size_t desc = ((size_t)n[1] + 3) & ~(size_t)3;
		if (name > (size_t)(end - p) - 12
		    || desc > (size_t)(end - p) - 12 - name)
			return -1;
		if (n[2] == NT_GNU_BUILD_ID && n[0] == 4 && !memcmp(p + 12, "GNU", 4)
		    && n[1] && n[1] <= sizeof(k->bytes)) {
			memset(k, 0, sizeof(*k));
			k->kind = XOM_KEY_BUILD_ID;
			k->len = (uint8_t)n[1];
			memcpy(k->bytes, p + 12 + name, n[1]);
			return 0;
		}
		p += 12 + name + desc;
	}
	return -1;
}

int xom_file_build_id(int fd, long (*pread_fn)(int, void *, size_t, long),
                      struct xom_plan_key *k)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	unsigned char note[2048];

	if (pread_fn(fd, &eh, sizeof(eh), 0) != (long)sizeof(eh)
	    || memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_phentsize != sizeof(ph)
	    || eh.e_phnum > 256)
		return -1;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (pread_fn(fd, &ph, sizeof(ph), (long)(eh.e_phoff + i * sizeof(ph)))
		    != (long)sizeof(ph))
			return -1;
		if (ph.p_type != PT_NOTE || ph.p_filesz > sizeof(note)
		    || pread_fn(fd, note, ph.p_filesz, (long)ph.p_offset) != (long)ph.p_filesz)
			continue;
		if (xom_note_build_id(note, ph.p_filesz, k) == 0)
			return 0;
	}
	return -1;
}

void xom_file_ident_of(const struct stat *st, struct xom_file_ident *id)
{
	*id = (struct xom_file_ident){
		(uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
		st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
		st->st_ctim.tv_sec, st->st_ctim.tv_nsec,
	};
}

void xom_ident_key(const struct stat *st, struct xom_plan_key *k)
{
	struct xom_file_ident id;

	xom_file_ident_of(st, &id);
	memset(k, 0, sizeof(*k));
	k->kind = XOM_KEY_IDENT;
	k->len = sizeof(id);
	memcpy(k->bytes, &id, sizeof(id));
}

/* ---- the shape of a file ------------------------------------------------- */

int xom_dyn_textrel(const void *dyn, size_t len)
{
	const unsigned char *d = dyn;

	for (size_t k = 0; k + 16 <= len; k += 16) {
		int64_t tag;
		uint64_t val;
		memcpy(&tag, d + k, 8);
		memcpy(&val, d + k + 8, 8);
		if (tag == DT_NULL)
			break;
		if (tag == DT_TEXTREL || (tag == DT_FLAGS && (val & DF_TEXTREL)))
			return 1;
	}
	return 0;
}

int xom_shape_dyn_mapped(const Elf64_Phdr *ph, size_t phnum, const Elf64_Phdr *dyn)
{
	uint64_t end;

	if (dyn->p_filesz > XOM_SHAPE_DYN_MAX
	    || __builtin_add_overflow(dyn->p_vaddr, dyn->p_filesz, &end))
		return 0;
	for (size_t i = 0; i < phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_R)
		    && dyn->p_vaddr >= ph[i].p_vaddr
		    && end - ph[i].p_vaddr <= ph[i].p_filesz
		    && dyn->p_offset - ph[i].p_offset == dyn->p_vaddr - ph[i].p_vaddr)
			return 1;
	return 0;
}

uint64_t xom_shape_sum(const Elf64_Phdr *ph, size_t phnum, int textrel)
{
	uint64_t h = XOM_HASH_INIT;
	unsigned char t = (unsigned char)textrel;

	for (size_t i = 0; i < phnum; i++)
		if (ph[i].p_type == PT_LOAD || ph[i].p_type == PT_DYNAMIC)
			h = xom_hash(h, &ph[i], sizeof(ph[i]));
	return xom_hash(h, &t, 1);
}

/* Program headers a file may have, for the tools' reading: the dynamic
 * linker takes no more than fit in a page or two either. */
#define SHAPE_PHNUM_MAX 256

/* xom_dyn_textrel over a file's dynamic section, a piece at a time: this
 * code also runs in the runtime, which keeps no large buffers. */
static int file_textrel(int fd, long (*pread_fn)(int, void *, size_t, long),
                        uint64_t off, uint64_t len)
{
	unsigned char buf[1024];

	for (uint64_t at = 0; at < len; at += sizeof(buf)) {
		size_t n = len - at < sizeof(buf) ? (size_t)(len - at) : sizeof(buf);
		if (pread_fn(fd, buf, n, (long)(off + at)) != (long)n)
			return -1;
		if (xom_dyn_textrel(buf, n))
			return 1;
		for (size_t k = 0; k + 16 <= n; k += 16) {
			int64_t tag;
			memcpy(&tag, buf + k, 8);
			if (tag == DT_NULL)
				return 0;
		}
	}
	return 0;
}

int xom_file_shape(int fd, long (*pread_fn)(int, void *, size_t, long),
                   uint64_t *shape)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[SHAPE_PHNUM_MAX];
	int textrel = 0;

	if (pread_fn(fd, &eh, sizeof(eh), 0) != (long)sizeof(eh)
	    || memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_phentsize != sizeof(ph[0])
	    || eh.e_phnum > SHAPE_PHNUM_MAX || eh.e_phoff > (uint64_t)LONG_MAX)
		return -1;
	size_t bytes = (size_t)eh.e_phnum * sizeof(ph[0]);
	if (bytes && pread_fn(fd, ph, bytes, (long)eh.e_phoff) != (long)bytes)
		return -1;
	for (size_t i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_DYNAMIC)
			continue;
		/* Mapped as the file has it and small (xom_shape_dyn_mapped),
		 * so the offset plus the size fits. */
		if (!xom_shape_dyn_mapped(ph, eh.e_phnum, &ph[i])
		    || ph[i].p_offset > (uint64_t)LONG_MAX - XOM_SHAPE_DYN_MAX) {
			textrel |= 2;
			continue;
		}
		int t = file_textrel(fd, pread_fn, ph[i].p_offset, ph[i].p_filesz);
		if (t < 0)
			return -1;
		textrel |= t;
	}
	*shape = xom_shape_sum(ph, eh.e_phnum, textrel);
	return 0;
}

/* ---- profile lines ---------------------------------------------------------- */

static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* The next word of [*p, end), or 0 when none. */
static size_t word(const char **p, const char *end, const char **w)
{
	while (*p < end && blank(**p))
		(*p)++;
	*w = *p;
	while (*p < end && !blank(**p))
		(*p)++;
	return (size_t)(*p - *w);
}

static int hex_page(const char *w, size_t n, uint64_t *page)
{
	uint64_t v = 0;

	if (n < 3 || n > 18 || w[0] != '0' || w[1] != 'x')
		return -1;
	for (size_t i = 2; i < n; i++) {
		int d = xom_hex_digit(w[i]);
		if (d < 0)
			return -1;
		v = v << 4 | (uint64_t)d;
	}
	*page = v & ~(uint64_t)(PAGE - 1);
	return 0;
}

int xom_profile_line(const char *p, const char *eol, struct xom_profile_line *it)
{
	const char *w, *end = eol;
	size_t n;

	memset(it, 0, sizeof(*it));
	/* A comment starts at a '#' that begins a word. */
	for (const char *q = p; q < eol; q++)
		if (*q == '#' && (q == p || blank(q[-1]))) {
			it->why = q + 1 + (q + 1 < end && q[1] == ' ');
			it->whylen = (size_t)(end - it->why);
			eol = q;
			break;
		}
	if (!(n = word(&p, eol, &w)))
		return 1;
	if (n == 7 && !memcmp(w, "program", 7)) {
		it->program = 1;
		if (!(it->keylen = word(&p, eol, &it->key)))
			return -1;
	} else {
		it->key = w;
		it->keylen = n;
		if (!(n = word(&p, eol, &w)) || hex_page(w, n, &it->page) != 0)
			return -1;
	}
	/* The path is the rest, without blanks around it. */
	while (p < eol && blank(*p))
		p++;
	while (eol > p && blank(eol[-1]))
		eol--;
	it->path = p;
	it->pathlen = (size_t)(eol - p);
	return 0;
}
