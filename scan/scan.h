/*
 * scan.h - what the scanner's stages share.  Not installed; the public
 * contract is xom_scan.h.
 *
 * scan.c runs the stages in order on one struct scan, and each adds to it
 * what the later ones read:
 *   elf.c       validates the image; segments, sections, symbols,
 *               relocation targets, code entries, the build-id;
 *   ehframe.c   function starts and extents from .eh_frame;
 *   disasm.c    decodes the code: references, call targets, the
 *               instruction-start bitmap, and the code addresses that
 *               instructions load into registers;
 *   flow.c      follows each of those registers through the code to tell
 *               a table from a code pointer from the base of a read
 *               elsewhere;
 *   classify.c  marks non-code bytes as data and turns every reference into
 *               data ranges, pages and readable runs;
 *   gadgets.c   WRPKRU/XRSTOR byte sequences;
 *   surface.c   readable executable bytes, ret gadgets in them.
 * util.c holds what more than one stage needs, and x86.c (x86.h) the x86
 * decoding helpers that disasm.c and flow.c share.  A stage calls those
 * two and nothing else of the scanner: never another stage, least of all a
 * later one.
 */
#ifndef XOM_SCAN_SCAN_H
#define XOM_SCAN_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "xom_scan.h"

/*
 * The functions that xom_scan.h declares are the library's exports, and
 * nothing else is: EXPORT makes each visible past -fvisibility=hidden, and
 * the version script exports.map names the same functions for the linker.
 */
#define EXPORT __attribute__((visibility("default")))

/* A growable array of fixed-size items (no per-item allocation). */
struct vec {
	void *p;
	size_t n, cap, size;
};

struct section {
	uint64_t addr, size, offset;
	uint64_t flags, entsize;
	uint32_t type, link;
	const char *name;       /* points into the image; "" when unknown */
};

struct span {                   /* an allocated section with contents */
	uint64_t start, end;
	bool exec;
};

struct region {                 /* code to decode: part of an exec section */
	uint64_t addr, size, offset;
};

/* A code address that an instruction loads into a register (a RIP-relative
 * lea, or a mov of an immediate in a non-PIE file).  disasm.c lists them;
 * flow.c decides what each one is. */
struct cand {
	uint64_t at, target;
	uint32_t region;        /* index into regions */
	uint8_t reason;         /* XOM_R_TABLE or XOM_R_ABSOLUTE, if data */
};

struct ref {                    /* a reference found in code or data */
	uint64_t target, ref;
	uint32_t size;          /* bytes read, or 0: "runs to the next entry" */
	uint8_t reason;         /* enum xom_reason */
	uint8_t has_ref;
};

struct scan {
	const uint8_t *img;
	size_t len;
	char *err;
	size_t errlen;

	/* elf.c */
	uint16_t e_type;
	bool textrel, writable_exec;
	uint64_t ehdr_size;     /* file bytes of the ELF header, from offset 0 */
	uint64_t phdr_off, phdr_size;   /* and of the program header table */
	uint8_t build_id_len;
	uint8_t build_id[64];
	struct vec segs;        /* struct xom_segment: exec PT_LOADs, by vaddr */
	struct vec loads;       /* struct xom_segment: every PT_LOAD */
	struct vec secs;        /* struct section: every section */
	struct vec spans;       /* struct span: sorted by start */
	struct vec syms;        /* struct xom_sym */
	struct vec noreturn_got; /* uint64_t: GOT slots of abort, exit, ... */
	struct vec extern_got;  /* uint64_t: GOT slots of functions defined
	                         * elsewhere, | their known argument count */
	struct vec names;       /* char */

	/* elf.c and ehframe.c, sorted by scan.c before disasm.c runs */
	struct vec entries;     /* uint64_t: code entries (functions, PLT, ...) */
	struct vec funcs;       /* struct xom_range: known function extents */

	/* elf.c, disasm.c and classify.c's own marks */
	struct vec refs;        /* struct ref */

	/* disasm.c */
	struct vec regions;     /* struct region: what the sweep decoded */
	struct vec cands;       /* struct cand: in the order of the sweep */
	struct vec calls;       /* uint64_t: direct call targets, and code
	                           that flow.c finds */
	uint8_t *starts;        /* one bit per exec byte: an instruction starts here */
	uint64_t mark_vaddr, mark_size, mark_base;  /* scan_mark_start()'s last segment */
	bool atomic_marks;      /* several threads mark the same bitmap */

	/* scan.c: threads the sweep may use (1: none are started) */
	unsigned nthreads;
	uint64_t code_bytes;
};

/* ---- util.c ------------------------------------------------------------- */

/* Formats a message into s->err and returns code. */
int scan_fail(struct scan *s, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* qsort() with a NULL base is undefined even for zero items. */
static inline void sort_items(void *base, size_t n, size_t size,
                              int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

void *vec_push(struct vec *v);
void vec_free(struct vec *v);
void vec_sort_u64(struct vec *v);       /* sorts and removes duplicates */

/* True when [off, off + n) lies inside the image, without overflow. */
bool image_has(const struct scan *s, uint64_t off, uint64_t n);

/* The executable segment holding vaddr, or NULL. */
const struct xom_segment *exec_seg_at(const struct scan *s, uint64_t vaddr);

/* Whether vaddr lies in an allocated section without SHF_EXECINSTR
 * (.rodata, .eh_frame, ...): data by its place, whoever reads it. */
bool scan_in_data_section(const struct scan *s, uint64_t vaddr);

/* Append an address, or a reference, when it lies in an exec segment. */
int scan_push_addr(struct scan *s, struct vec *v, uint64_t addr);
int scan_push_ref(struct scan *s, uint64_t target, uint32_t size,
                  enum xom_reason reason, bool has_ref, uint64_t at);

/*
 * For arrays sorted by a uint64_t key at the start of each item (entries,
 * segments, function ranges, spans, symbols, pages): sort_by_key() sorts
 * them, and count_le() says how many items have a key <= x.
 */
void sort_by_key(void *base, size_t n, size_t size);
size_t count_le(const void *base, size_t n, size_t stride, uint64_t x);
bool sorted_has_u64(const uint64_t *a, size_t n, uint64_t x);

/* Sorts s->funcs so that scan_inside_function() can answer. */
void scan_prepare_funcs(struct scan *s);
bool scan_inside_function(const struct scan *s, uint64_t x);

/* The instruction-start bitmap: allocated before the sweep that marks it. */
int scan_alloc_starts(struct scan *s);
void scan_mark_start_slow(struct scan *s, uint64_t vaddr);
bool scan_is_start(const struct scan *s, uint64_t vaddr);

/* The sweep marks every instruction, so the segment of the last mark is
 * tried first, inline. */
static inline void scan_mark_start(struct scan *s, uint64_t vaddr)
{
	uint64_t i = s->mark_base + (vaddr - s->mark_vaddr);

	if (vaddr - s->mark_vaddr >= s->mark_size)
		scan_mark_start_slow(s, vaddr);
	else if (s->atomic_marks)
		__atomic_fetch_or(&s->starts[i >> 3], (uint8_t)(1u << (i & 7)),
		                  __ATOMIC_RELAXED);
	else
		s->starts[i >> 3] |= (uint8_t)(1u << (i & 7));
}

/* Runs fn(ctx, job, worker) for jobs 0..njobs-1 on up to nthreads threads
 * (the caller's among them, as worker 0), each job once, in no set order;
 * returns when all are done.  Threads that cannot be started leave their
 * share to the others. */
void scan_parallel(unsigned nthreads, size_t njobs, unsigned *workers,
                   void (*fn)(void *ctx, size_t job, unsigned worker), void *ctx);

/* ---- the stages, in the order scan.c runs them -------------------------- */

int elf_load(struct scan *s);
int ehframe_parse(struct scan *s);
int disasm_code(struct scan *s);
int flow_resolve(struct scan *s);
int classify_map(struct scan *s, struct xom_map *m);
int gadgets_find(struct scan *s, struct xom_map *m);
int surface_count(struct scan *s, struct xom_map *m);

#endif
