/*
 * xom_plan.h - the plan file: the only contract between the scanner side
 * (xom-plan, which runs the scanner) and the runtime (which applies plans
 * inside host processes).  The runtime includes this header and nothing of
 * scan/.
 *
 * A plan, as the helper writes it and the cache stores it:
 *   head, segs[nsegs], runs[nruns], syms[nsyms], names[names_len]
 * all little-endian, 8-byte aligned, total bytes in all.  runs are the
 * link-time page ranges that become execute-only; everything else in the
 * executable segments keeps its protection.  The helper leaves the identity
 * fields (dev .. mtime) zero; the runtime fills them before caching.
 * sum_head covers head (with both sums zero), segs and runs and is checked on
 * every load; sum_syms covers syms and names and is checked only when a
 * symbol is needed, because the warm path must not read the whole file.
 *
 * Everything here is async-signal-safe: the fault handler names symbols
 * with xom_plan_symbol.
 */
#ifndef XOM_PLAN_H
#define XOM_PLAN_H

#include <stddef.h>
#include <stdint.h>

#define XOM_PLAN_MAGIC "XOMPLAN\0"
#define XOM_PLAN_FORMAT 1u
#define XOM_PLAN_MAX (64u << 20)
#define XOM_PLAN_PAGE 4096u

/* The scanner version whose plans the runtime accepts; plan/build.c checks
 * at compile time that it is the scanner's XOM_SCAN_VERSION. */
#define XOM_PLAN_SCAN_VERSION 3u

/* Why a whole file stays readable (head.whole_reason). */
enum xom_plan_whole {
	XOM_WHOLE_NONE = 0,
	XOM_WHOLE_TEXTREL,      /* DT_TEXTREL: the dynamic linker writes to its text */
	XOM_WHOLE_WRITABLE,     /* a writable executable segment */
	XOM_WHOLE_OTHER,        /* any other whole-file verdict of the scanner */
};

struct xom_plan_head {
	char magic[8];
	uint32_t format;
	uint32_t scan_version;
	uint64_t dev, ino, size;
	int64_t mtime_sec, mtime_nsec;
	uint64_t total;
	uint32_t nsegs, nruns, nsyms, names_len;
	uint32_t exec_pages, xom_pages;
	uint8_t whole_reason;           /* enum xom_plan_whole */
	uint8_t build_id_len;
	uint16_t e_type;
	uint32_t pad;
	uint8_t build_id[64];
	uint64_t sum_head, sum_syms;
};

struct xom_plan_seg { uint64_t vaddr, memsz; uint32_t flags, pad; };
struct xom_plan_run { uint64_t start, end; };
struct xom_plan_sym { uint64_t addr, size; uint32_t name, pad; };

static inline const struct xom_plan_seg *
xom_plan_segs(const struct xom_plan_head *h)
{
	return (const struct xom_plan_seg *)(h + 1);
}

static inline const struct xom_plan_run *
xom_plan_runs(const struct xom_plan_head *h)
{
	return (const struct xom_plan_run *)(xom_plan_segs(h) + h->nsegs);
}

/* FNV-1a, 64-bit: cheap, and enough to catch torn or corrupted files. */
uint64_t xom_fnv(uint64_t h, const void *p, size_t n);
#define XOM_FNV_INIT 0xcbf29ce484222325ull

/* Checks sizes, counts, order and sum_head; on failure names the problem. */
int xom_plan_check(const void *buf, size_t len, const char **why);
void xom_plan_seal(struct xom_plan_head *h);

/* The symbol at or below addr and addr's offset from it, or NULL. */
const char *xom_plan_symbol(const struct xom_plan_head *h, uint64_t addr,
                            uint64_t *off);

/* Writes the whole plan to fd, across EINTR and short writes; 0 or -1. */
int xom_plan_write(int fd, const struct xom_plan_head *h);
int xom_write_all(int fd, const void *p, size_t n);

#endif
