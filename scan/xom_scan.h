/*
 * xom_scan.h - the code map of one x86-64 ELF file.
 *
 * The scanner decides, page by page, which pages of a file's executable
 * segments hold nothing but instructions (and may become execute-only) and
 * which hold bytes that code reads as data.  The map is a pure function of
 * the file's bytes.  All addresses are link-time virtual addresses.
 */
#ifndef XOM_SCAN_H
#define XOM_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* Bump whenever the classification can change: cached plans carry it. */
#define XOM_SCAN_VERSION 4
#define XOM_PAGE_SIZE 4096u

/* Why a byte range, or a whole file, stays readable. */
enum xom_reason {
	XOM_R_NONE = 0,
	XOM_R_HEADER,    /* ELF header or program headers inside an exec segment */
	XOM_R_SECTION,   /* a section without SHF_EXECINSTR (.rodata, .eh_frame, ...) */
	XOM_R_OUTSIDE,   /* exec-page bytes that no exec section covers */
	XOM_R_RIP_LOAD,  /* target of a RIP-relative memory operand */
	XOM_R_TABLE,     /* lea of a non-entry: a table that runs to the next entry */
	XOM_R_ABSOLUTE,  /* absolute address into code in a non-PIE file */
	XOM_R_TEXTREL,   /* whole file: DT_TEXTREL */
	XOM_R_WRITABLE,  /* whole file: a writable executable segment */
	XOM_R_NOSECTIONS,/* whole segment: no section headers to tell code from data */
	XOM_R_COUNT
};

/* What one executable page holds, for drawing maps. */
enum xom_page_kind {
	XOM_PG_XOM = 0,  /* only instructions: may be execute-only */
	XOM_PG_DATA,     /* holds bytes that instructions read */
	XOM_PG_HEADER,   /* holds headers or non-code sections */
	XOM_PG_WHOLE,    /* the whole file stays readable (see xom_map.whole_reason) */
};

enum xom_gadget_kind { XOM_G_WRPKRU = 0, XOM_G_XRSTOR };

struct xom_segment {            /* one executable PT_LOAD */
	uint64_t vaddr, memsz, offset, filesz;
	uint32_t flags;         /* p_flags */
};

struct xom_range { uint64_t start, end; };      /* [start, end) */

struct xom_data {
	uint64_t start, end;    /* [start, end) */
	uint64_t ref;           /* the referencing instruction, if has_ref */
	uint8_t has_ref;
	uint8_t reason;         /* enum xom_reason */
};

struct xom_gadget {
	uint64_t addr;
	uint8_t kind;           /* enum xom_gadget_kind */
	uint8_t aligned;        /* 1: starts at a decoded instruction */
};

struct xom_sym { uint64_t addr, size; uint32_t name; };  /* name: offset in names */

struct xom_map {
	uint16_t e_type;                /* ET_EXEC or ET_DYN */
	uint8_t build_id_len;           /* 0 when the file has none */
	uint8_t build_id[64];
	uint8_t whole_reason;           /* enum xom_reason: why the whole file
	                                   stays readable, or XOM_R_NONE */
	uint64_t code_bytes;            /* bytes handed to the disassembler */

	size_t nsegs;
	struct xom_segment *segs;       /* sorted by vaddr */

	size_t exec_pages, xom_pages;
	size_t npages;                  /* == exec_pages */
	uint64_t *page_addr;            /* sorted vaddr of each exec page */
	uint8_t *page_kind;             /* enum xom_page_kind of each exec page */

	size_t nreadable;
	struct xom_range *readable;     /* page-aligned, sorted, merged */
	size_t ndata;
	struct xom_data *data;          /* sorted by start, merged per reason */
	size_t ngadgets;
	struct xom_gadget *gadgets;     /* sorted by addr */

	size_t nsyms;                   /* FUNC/OBJECT symbols, sorted by addr */
	struct xom_sym *syms;
	char *names;

	/* The attack surface left: bytes of the exec segments in pages that
	 * stay readable, and the ret gadget candidates among their file
	 * bytes (a C3 byte that 1 to 15 bytes before it complete as whole
	 * instructions, none a jump, call or return; docs/scanner.md). */
	uint64_t readable_bytes;
	uint64_t ret_gadgets;
	/* The same two for the section-level method of earlier tools, which
	 * makes every page that an SHF_EXECINSTR section touches execute-only
	 * and nothing else: its pages are a subset of the ones counted above. */
	uint64_t section_readable_bytes;
	uint64_t section_ret_gadgets;
};

/* Return codes: 0 on success, otherwise one of these, with a message. */
enum {
	XOM_SCAN_OK = 0,
	XOM_SCAN_EIO = 1,         /* cannot open or read the file */
	XOM_SCAN_EUNSUPPORTED,    /* not ELF, not 64-bit, not x86-64, not EXEC/DYN */
	XOM_SCAN_EMALFORMED,      /* offsets or sizes that do not fit the file */
	XOM_SCAN_ENOMEM,
	XOM_SCAN_EDISASM,         /* the disassembler could not be set up */
};

/*
 * Scans the file at path.  On success returns 0 and stores a map that the
 * caller frees with xom_map_free().  On failure returns an error code and
 * writes a one-line reason (without the file name) into err.
 */
int xom_scan_file(const char *path, struct xom_map **out,
                  char *err, size_t errlen);

/* The same for an image already in memory; buf is not modified. */
int xom_scan_mem(const void *buf, size_t len, struct xom_map **out,
                 char *err, size_t errlen);

/*
 * The same, with the disassembly shared among up to nthreads threads (0
 * or 1: none are started), for very large files.  The map is
 * byte-identical to the one-thread map whatever nthreads is; files under
 * a few MiB of code use one thread whatever is asked.
 */
int xom_scan_file_threads(const char *path, unsigned nthreads,
                          struct xom_map **out, char *err, size_t errlen);
int xom_scan_mem_threads(const void *buf, size_t len, unsigned nthreads,
                         struct xom_map **out, char *err, size_t errlen);

void xom_map_free(struct xom_map *map);

/* A short stable name for a reason ("rip-load", "table", ...). */
const char *xom_reason_name(enum xom_reason r);

/* Nearest symbol at or below addr, and addr's offset from it; NULL if none. */
const char *xom_map_symbol(const struct xom_map *map, uint64_t addr,
                           uint64_t *off);

#endif
