/*
 * fuzz_plan.c - libFuzzer target for the plan format and the other
 * records of formats/format.c that come from files a user or root can
 * write: a plan (as the helper writes it and a store holds it), a symbol
 * file, a key's file name, the notes that hold a build-id, and an ELF
 * file's headers as the tools read them for its key and shape.  Every
 * input is tried as each of them.
 *
 * Besides the sanitizers, it checks what the readers promise: a plan that
 * passes xom_plan_check has its segments, runs and path inside its
 * length, its runs sorted and inside its segments; a symbol lookup
 * returns a name that ends inside the file; a key name parses back to the
 * same key.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../formats/xom_plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#include "../check.h"

/* The input as an 8-aligned copy of exactly its size, so that the address
 * sanitizer sees a read one byte past the end. */
static void *copy_of(const uint8_t *data, size_t size)
{
	void *p = malloc(size ? size : 1);

	if (p && size)
		memcpy(p, data, size);
	return p;
}

static void plan(const uint8_t *data, size_t size)
{
	const char *why = NULL;
	void *p = copy_of(data, size);

	if (!p)
		return;
	if (xom_plan_check(p, size, &why) != 0) {
		TRAP_UNLESS(why && *why);
		free(p);
		return;
	}
	const struct xom_plan_head *h = p;
	const struct xom_plan_seg *s = xom_plan_segs(h);
	const struct xom_plan_run *r = xom_plan_runs(h);
	const char *path = xom_plan_path(h);
	TRAP_UNLESS((const char *)(path + h->path_len) <= (const char *)p + size);
	TRAP_UNLESS(path[h->path_len - 1] == 0 && strlen(path) < h->path_len);
	volatile uint64_t sink = 0;
	for (uint32_t i = 0; i < h->nsegs; i++)
		sink += s[i].vaddr + s[i].memsz + s[i].filesz;
	for (uint32_t i = 0; i < h->nruns; i++) {
		TRAP_UNLESS(r[i].start < r[i].end && !((r[i].start | r[i].end) % XOM_PLAN_PAGE));
		TRAP_UNLESS(!i || r[i - 1].end <= r[i].start);
	}
	(void)sink;
	/* Its key, by name and back, and a store lookup of a plan alone. */
	struct xom_plan_key k, back;
	char name[XOM_KEY_NAME_MAX];
	xom_plan_key_of(h, &k);
	xom_key_name(&k, name, sizeof(name));
	TRAP_UNLESS(xom_key_parse(name, &back) == 0 && xom_key_equal(&k, &back));
	uint64_t shape = h->shape + 1;
	TRAP_UNLESS(xom_store_plan(p, size, &k, NULL) == (h->scan_version == XOM_PLAN_SCAN_VERSION
	                                            ? h : NULL));
	TRAP_UNLESS(!xom_store_plan(p, size, &k, &shape));
	free(p);
}

static void syms(const uint8_t *data, size_t size)
{
	const char *why = NULL;
	void *p = copy_of(data, size);

	if (!p)
		return;
	if (xom_syms_check(p, size, &why) != 0) {
		TRAP_UNLESS(why && *why);
		free(p);
		return;
	}
	const struct xom_syms_head *h = p;
	const struct xom_plan_sym *y = (const void *)(h + 1);
	const char *names = (const char *)(y + h->nsyms);
	/* Where a report could ask: at, inside and past each symbol (only the
	 * first few: the lookup is what is fuzzed, not the count). */
	for (uint32_t i = 0; i < h->nsyms && i < 64; i++) {
		uint64_t at[] = { y[i].addr, y[i].addr + y[i].size / 2,
		                  y[i].addr + y[i].size, y[i].addr - 1 };
		for (size_t j = 0; j < sizeof(at) / sizeof(at[0]); j++) {
			uint64_t off = 0;
			const char *n = xom_syms_lookup(h, at[j], &off);
			if (n) {
				TRAP_UNLESS(n >= names && n < names + h->names_len);
				TRAP_UNLESS(memchr(n, 0, (size_t)(names + h->names_len - n)));
			}
		}
	}
	free(p);
}

static void key_name(const uint8_t *data, size_t size)
{
	char text[2 * XOM_KEY_NAME_MAX];
	struct xom_plan_key k, back;
	char name[XOM_KEY_NAME_MAX];

	size_t n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;
	memcpy(text, data, n);
	text[n] = 0;
	if (xom_key_parse(text, &k) != 0)
		return;
	TRAP_UNLESS(k.len <= sizeof(k.bytes));
	xom_key_name(&k, name, sizeof(name));
	TRAP_UNLESS(xom_key_parse(name, &back) == 0 && xom_key_equal(&k, &back));
	(void)xom_key_hash(&k);
}

static void notes(const uint8_t *data, size_t size)
{
	struct xom_plan_key k;
	void *p = copy_of(data, size);

	if (p && xom_note_build_id(p, size, &k) == 0)
		TRAP_UNLESS(k.kind == XOM_KEY_BUILD_ID && k.len && k.len <= sizeof(k.bytes));
	free(p);
}

/* The input as a file that the tools read with pread. */
static const uint8_t *file_data;
static size_t file_size;

static long mem_pread(int fd, void *buf, size_t n, long off)
{
	(void)fd;
	if (off < 0 || (size_t)off > file_size)
		return -1;
	size_t got = file_size - (size_t)off < n ? file_size - (size_t)off : n;
	memcpy(buf, file_data + off, got);
	return (long)got;
}

static void elf_file(const uint8_t *data, size_t size)
{
	struct xom_plan_key k;
	uint64_t shape, again;

	file_data = data;
	file_size = size;
	if (xom_file_build_id(0, mem_pread, &k) == 0)
		TRAP_UNLESS(k.kind == XOM_KEY_BUILD_ID && k.len);
	/* The shape is a function of the bytes. */
	if (xom_file_shape(0, mem_pread, &shape) == 0)
		TRAP_UNLESS(xom_file_shape(0, mem_pread, &again) == 0 && again == shape);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	plan(data, size);
	syms(data, size);
	key_name(data, size);
	notes(data, size);
	elf_file(data, size);
	return 0;
}
