/*
 * core.h - what the loader's own files share: the plan format (also written
 * by the xom-plan helper), the options, and the message formatter.  Nothing
 * here is exported from the libraries (-fvisibility=hidden).
 */
#ifndef XOM_CORE_H
#define XOM_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/*
 * A plan file, as the helper writes it and the cache stores it:
 *   head, segs[nsegs], runs[nruns], syms[nsyms], names[names_len]
 * all little-endian, 8-byte aligned, total bytes in all.  runs are the
 * link-time page ranges that become execute-only; everything else in the
 * executable segments keeps its protection.  The helper leaves the identity
 * fields (dev .. mtime) zero; the runtime fills them before caching.
 * sum_head covers head (with both sums zero), segs and runs and is checked on
 * every load; sum_syms covers syms and names and is checked only when a
 * symbol is needed, because the warm path must not read the whole file.
 */
#define XOM_PLAN_MAGIC "XOMPLAN\0"
#define XOM_PLAN_FORMAT 1u
#define XOM_PLAN_MAX (64u << 20)

struct xom_plan_head {
	char magic[8];
	uint32_t format;
	uint32_t scan_version;
	uint64_t dev, ino, size;
	int64_t mtime_sec, mtime_nsec;
	uint64_t total;
	uint32_t nsegs, nruns, nsyms, names_len;
	uint32_t exec_pages, xom_pages;
	uint8_t whole;                  /* enum xom_reason, 0 when none */
	uint8_t build_id_len;
	uint16_t e_type;
	uint32_t pad;
	uint8_t build_id[64];
	uint64_t sum_head, sum_syms;
};

struct xom_plan_seg { uint64_t vaddr, memsz; uint32_t flags, pad; };
struct xom_plan_run { uint64_t start, end; };
struct xom_plan_sym { uint64_t addr, size; uint32_t name, pad; };

/* FNV-1a, 64-bit: cheap, and enough to catch torn or corrupted files. */
uint64_t xom_fnv(uint64_t h, const void *p, size_t n);
#define XOM_FNV_INIT 0xcbf29ce484222325ull

/* Checks sizes, counts, order and sum_head; on failure names the problem. */
int xom_plan_check(const void *buf, size_t len, const char **why);
void xom_plan_seal(struct xom_plan_head *h);

/* write() until all of p is written, across EINTR and short writes;
 * 0 on success, -1 otherwise. */
int xom_write_all(int fd, const void *p, size_t n);

#ifndef XOM_PLAN_TOOL

/* The options, parsed once at start-up (see xom_loader.h). */
enum { XOM_ENFORCE, XOM_AUDIT, XOM_OFF };
enum { XOM_BACKEND_PKEY, XOM_BACKEND_NONE };
struct xom_opts {
	int mode, backend, require, verbose;
	int log_fd;
	const char *cache;      /* NULL: cache off */
	const char *profile;    /* NULL: none */
	const char *exclude;    /* comma-separated, NULL: none */
};
extern struct xom_opts xom_opt;

/* One-line messages: a fixed buffer, no allocation, async-signal-safe. */
struct xom_msg { size_t n; char buf[1024]; };
void msg_start(struct xom_msg *m);
void msg_str(struct xom_msg *m, const char *s);
void msg_dec(struct xom_msg *m, uint64_t v);
void msg_hex(struct xom_msg *m, uint64_t v);
void msg_errno(struct xom_msg *m, int err);
void msg_send(struct xom_msg *m);

/* Where a plan comes from, and the plan's symbols. */
struct xom_plan_id {
	struct stat st;
	uint8_t build_id_len;
	uint8_t build_id[64];
};
const struct xom_plan_head *xom_plan_get(const char *path,
                                         const struct xom_plan_id *id);
const char *xom_plan_symbol(const struct xom_plan_head *h, uint64_t addr,
                            uint64_t *off);

#endif
#endif
