/*
 * xom_plan.h - plans and the plan store: the only contract between the
 * scanner side (xom-plan and `xom cache`, which run the scanner) and the
 * runtime (which applies plans inside host processes).  The runtime
 * includes this header and nothing of scan/.
 *
 * A plan says which pages of one file's executable segments become
 * execute-only.  It is small (a head, the segments, the runs of
 * execute-only pages, and the path it was made from) because the warm path
 * of every process start reads it; the names of the file's functions, which
 * only a fault report needs, are in a separate symbol file.
 *
 * A store is a directory:
 *   DIR/plans           the index: a head, a hash table of slots, the plans
 *   DIR/syms/KEY        one symbol file per plan
 *   DIR/lock            serialises writers (flock); readers never lock
 * Writers replace files by rename, so a reader sees a whole old file or a
 * whole new one.  Every field is checked before use: a plan has its own
 * checksum, and the table's slots are bounds-checked and lead only to plans
 * whose key is compared in full.
 *
 * Plans are keyed by the file's GNU build-id, which the runtime reads from
 * the mapped image without a system call, and otherwise by the identity of
 * the file (device, inode, size, times); a plan keyed by identity also
 * carries a checksum of the executable segments' bytes, which the runtime
 * compares with the mapped ones before it trusts the plan.  Every plan
 * also names the shape of the file it was made from (xom_shape_sum): a
 * plan is the plan of a mapped object only when both its key and its shape
 * are the object's, so one store may hold several plans under one key.
 *
 * Everything declared here is async-signal-safe: the fault handler reads
 * symbol files with xom_syms_lookup.
 */
#ifndef XOM_PLAN_H
#define XOM_PLAN_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

#define XOM_PLAN_PAGE 4096u
#define XOM_PLAN_MAX (1u << 20)         /* one plan; more is corruption */
#define XOM_STORE_MAX (256u << 20)      /* the whole index */
#define XOM_SYMS_MAX (256u << 20)       /* one symbol file */

/* The scanner version whose plans are accepted; plan/build.c checks at
 * compile time that it is the scanner's XOM_SCAN_VERSION. */
#define XOM_PLAN_SCAN_VERSION 4u

/* Why a whole file stays readable (head.whole_reason). */
enum xom_plan_whole {
	XOM_WHOLE_NONE = 0,
	XOM_WHOLE_TEXTREL,      /* DT_TEXTREL: the dynamic linker writes to its text */
	XOM_WHOLE_WRITABLE,     /* a writable executable segment */
	XOM_WHOLE_OTHER,        /* any other whole-file verdict of the scanner */
};

/* Where a plan's file was, as fstat saw it when the plan was made. */
struct xom_file_ident {
	uint64_t dev, ino, size;
	int64_t mtime_sec, mtime_nsec, ctime_sec, ctime_nsec;
};

/* What a plan is found by: a build-id, or a file identity. */
enum { XOM_KEY_BUILD_ID = 1, XOM_KEY_IDENT = 2 };
struct xom_plan_key {
	uint8_t kind, len;
	uint8_t bytes[64];      /* the build-id, or a struct xom_file_ident */
};

/* The key of a file, by the runtime's rule: its GNU build-id (in the
 * notes of [notes, notes + len), or in the PT_NOTE segments of the ELF file
 * fd, read with pread_fn: the tools pass a wrapper of pread, the runtime
 * its own system call), else its identity (from fstat of the mapped file).
 * The build-id functions return 0, or -1 when there is none. */
struct stat;
int xom_note_build_id(const void *notes, size_t len, struct xom_plan_key *k);
int xom_file_build_id(int fd, long (*pread_fn)(int, void *, size_t, long),
                      struct xom_plan_key *k);
/* A file's identity as fstat or stat gives it, and the key made of it. */
void xom_file_ident_of(const struct stat *st, struct xom_file_ident *id);
void xom_ident_key(const struct stat *st, struct xom_plan_key *k);

/*
 * The shape of a file: what, besides the bytes of its code, decides what a
 * plan made from it means.  A hash of its PT_LOAD and PT_DYNAMIC program
 * headers, whole and in order (the segments' layout, sizes, offsets and
 * rights: a writable executable segment keeps a file readable), and of
 * whether its dynamic section asks for text relocations (DT_TEXTREL or
 * DF_TEXTREL: the dynamic linker writes to its text).  The runtime takes
 * it from the mapped image, with memory reads only and no system call;
 * the tools from the file, with the same rules (xom_file_shape).
 *
 * Why the shape and not a hash of the code.  The runtime applies a plan
 * found in a store to whatever mapped object has the plan's key; for a
 * build-id, any file can claim one.  Someone who gets a file of their
 * making scanned into a store therefore controls the plan stored under a
 * key of their choosing, though not what the runtime checks it against.
 * With the shape checked, such a plan reaches only objects whose program
 * headers are its file's, byte for byte, and whose text-relocation flag
 * is its file's: it can no longer leave a whole library readable by a
 * flag (DF_TEXTREL, a writable code segment), nor describe segments other
 * than the mapped ones.  It can still choose, page by page, which pages
 * of those segments it calls execute-only: a copy with other code, or
 * other symbols, relocations, unwind tables or section headers (the
 * scanner reads all of them), makes another plan of the same shape.  No
 * hash of mapped memory prevents that - the section headers, and in an
 * unstripped file the symbol table, are not even mapped - and hashing the
 * executable segments would read every code page of every object at
 * every start (a few hundred microseconds for libc alone, more than
 * everything else a warm start costs).  So the rest is the writers' job:
 * `xom cache build` counts a plan as current for a file only when it was
 * made from that very file or from one with the same bytes (file_sum,
 * the whole file: a copy without its section headers has libc's code
 * bytes and another plan), so the plan that matches the file replaces
 * another of the same shape; a shared store takes plans by build-id only
 * from files that root alone can change (cmd/cache/cache.c); and the runtime's
 * helper writes only a user's own cache, from the files that user's
 * programs map.  Against the shape the
 * checks are cheap: a few dozen words per object, once, as it arrives.
 */
#define XOM_SHAPE_DYN_MAX 65536u        /* larger dynamic sections: not read */
int xom_dyn_textrel(const void *dyn, size_t len);
/* Whether a PT_DYNAMIC entry lies in the file part of a readable PT_LOAD
 * at the same offset, so that the mapped bytes are the file's. */
int xom_shape_dyn_mapped(const Elf64_Phdr *ph, size_t phnum, const Elf64_Phdr *dyn);
/* textrel, over the PT_DYNAMIC entries: bit 0, one asks for text
 * relocations; bit 1, one was not read (not mapped as the file has it, or
 * larger than XOM_SHAPE_DYN_MAX). */
uint64_t xom_shape_sum(const Elf64_Phdr *ph, size_t phnum, int textrel);
/* The shape of the ELF file fd, read with pread_fn; 0, or -1 when its
 * headers cannot be read. */
int xom_file_shape(int fd, long (*pread_fn)(int, void *, size_t, long),
                   uint64_t *shape);

/* ---- a plan -------------------------------------------------------------- */

#define XOM_PLAN_MAGIC "XOMPLAN4"
#define XOM_PLAN_FORMAT 4u

/*
 * head, segs[nsegs], runs[nruns], path[path_len] (NUL-terminated), padded to
 * 8 bytes; total is the whole.  runs are link-time page ranges, sorted, each
 * inside a segment.
 */
struct xom_plan_head {
	char magic[8];
	uint32_t format, scan_version;
	uint32_t total;
	uint16_t nsegs, e_type;
	uint32_t nruns;
	uint32_t exec_pages, xom_pages;
	uint8_t whole_reason;           /* enum xom_plan_whole */
	uint8_t build_id_len;
	uint16_t path_len;              /* with its NUL */
	uint32_t nsyms;                 /* in the symbol file; 0: no file */
	uint64_t readable_bytes;        /* executable bytes left readable */
	uint64_t ret_gadgets;           /* ret gadget candidates in them */
	uint64_t code_sum;              /* xom_hash of the exec segments' file bytes */
	uint64_t shape;                 /* xom_shape_sum of the file */
	uint64_t file_sum;              /* xom_hash of the whole file (the tools') */
	struct xom_file_ident file;
	uint8_t build_id[64];
	uint64_t sum;                   /* xom_hash of the plan with sum zero */
};

struct xom_plan_seg { uint64_t vaddr, memsz, offset, filesz; uint32_t flags, pad; };
struct xom_plan_run { uint64_t start, end; };

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

static inline const char *xom_plan_path(const struct xom_plan_head *h)
{
	return (const char *)(xom_plan_runs(h) + h->nruns);
}

/* The bytes a plan with these counts takes. */
size_t xom_plan_size(size_t nsegs, size_t nruns, size_t path_len);

/* Checks magic, sizes, counts, order and checksum; names the problem. */
int xom_plan_check(const void *buf, size_t len, const char **why);
void xom_plan_seal(struct xom_plan_head *h);
/* The key a plan is found by. */
void xom_plan_key_of(const struct xom_plan_head *h, struct xom_plan_key *k);
int xom_key_equal(const struct xom_plan_key *a, const struct xom_plan_key *b);
/* The value of a lower-case hex digit, or -1. */
int xom_hex_digit(char c);
/* The key as a file name: the build-id in hex, or "f" and the identity in
 * hex; cap must be at least XOM_KEY_NAME_MAX. */
#define XOM_KEY_NAME_MAX 132
void xom_key_name(const struct xom_plan_key *k, char *out, size_t cap);
/* The key a name of xom_key_name's stands for; 0, or -1 if it is none. */
int xom_key_parse(const char *name, struct xom_plan_key *k);

/*
 * A failed plan, in the helper's output: the same first five fields, magic
 * XOM_NOPLAN_MAGIC, then why (NUL-terminated) and padding to 8 bytes.
 */
#define XOM_NOPLAN_MAGIC "XOMNOPLN"
struct xom_noplan_head {
	char magic[8];
	uint32_t format, scan_version;
	uint32_t total;
	uint32_t code;                  /* common/xom_exit.h: 1 unanalysable, 2 environment */
};

/* ---- the store index --------------------------------------------------- */

#define XOM_STORE_MAGIC "XOMSTORE"
#define XOM_STORE_FORMAT 1u
#define XOM_STORE_INDEX "plans"
#define XOM_STORE_SYMS "syms"
#define XOM_STORE_LOCK "lock"

/* head, slots[nslots], then the plans, each 8-byte aligned. */
struct xom_store_head {
	char magic[8];
	uint32_t format, scan_version;
	uint64_t total;
	uint32_t nslots, nplans;        /* nslots: a power of two, or 0 */
	uint64_t sum;                   /* of this head with sum zero */
};
struct xom_store_slot { uint64_t hash; uint32_t off, len; };   /* len 0: empty */

uint64_t xom_key_hash(const struct xom_plan_key *k);
int xom_store_check_head(const void *buf, size_t len, const char **why);
/* 1 when every directory from / down to dir is root's and writable by
 * nobody else, as a store that every user trusts must be.  lstat_fn is
 * lstat (the runtime passes its own system call). */
struct stat;
int xom_store_dir_shared(const char *dir,
                         int (*lstat_fn)(const char *, struct stat *));
/* The same check, saying why not: XOM_DIR_OK, or what the first folder
 * from dir up that fails is (its path in bad, cut to cap; its lstat in
 * *st, and for XOM_DIR_MISSING lstat_fn's errno). */
enum { XOM_DIR_OK, XOM_DIR_RELATIVE, XOM_DIR_LONG, XOM_DIR_MISSING,
       XOM_DIR_NOT_DIR, XOM_DIR_NOT_ROOT, XOM_DIR_WRITABLE };
int xom_dir_chain(const char *dir, int (*lstat_fn)(const char *, struct stat *),
                  char *bad, size_t cap, struct stat *st);
/* Whether a store's index file, as st shows it, is one to read: a regular
 * file of uid's (root's for the system store, the user's own for theirs)
 * that no one else may write.  XOM_FILE_OK, or why not. */
enum { XOM_FILE_OK, XOM_FILE_NOT_REGULAR, XOM_FILE_NOT_OWNER,
       XOM_FILE_WRITABLE };
int xom_store_file_check(const struct stat *st, unsigned uid);
void xom_store_seal_head(struct xom_store_head *h);
/* The plan for k made from a file of shape *shape in a checked index of
 * len bytes, or NULL.  shape NULL: of any shape, for the tools that only
 * show what a store holds; never for a plan that is to be applied. */
const struct xom_plan_head *xom_store_find(const void *index, size_t len,
                                           const struct xom_plan_key *k,
                                           const uint64_t *shape);
/* For a reader that does not map the index (the runtime's small batches):
 * whether a slot's plan lies inside an index of len bytes, and the plan
 * read from it (len bytes, 8-aligned) if it is whole, well-formed and has
 * key k and shape *shape (any, shape NULL), or NULL. */
int xom_store_slot_ok(const struct xom_store_slot *s, uint64_t len);
const struct xom_plan_head *xom_store_plan(const void *plan, size_t len,
                                           const struct xom_plan_key *k,
                                           const uint64_t *shape);

/* ---- plan sets ------------------------------------------------------------ */

/*
 * A set holds copies of the plans of one batch of objects (a program's
 * start-up, say), in the batch's order, under one slot of the index, so
 * that the batch finds them all in one read instead of a slot and a plan
 * each.  Its slot's hash is the batch's keys folded in order with
 * xom_set_hash.  A set is only a shortcut: each plan in it is checked and
 * compared with its object's key and shape like any other (xom_store_plan),
 * and an object whose plan is not in it is looked up alone.  Plans keep
 * their own slots as well; the store's head counts only those.
 *   head, then nplans plans, each 8-byte aligned; total is the whole.
 */
#define XOM_SET_MAGIC "XOMPSET1"
#define XOM_SET_HASH_INIT 0x9e3779b97f4a7c15ull
struct xom_set_head {
	char magic[8];
	uint32_t total, nplans;
	uint64_t hash;                  /* the slot's: xom_set_hash of the keys */
};
uint64_t xom_set_hash(uint64_t h, const struct xom_plan_key *k);
/* Whether buf (len bytes) is a set for hash: its head only. */
int xom_set_check(const void *buf, size_t len, uint64_t hash);
/* The next well-formed plan of this scanner version in a checked set, after
 * the one at offset *at (*at 0: from the start), with its length in *len,
 * or NULL at the end.  Damaged plans are passed over. */
const struct xom_plan_head *xom_set_plan(const struct xom_set_head *s,
                                         size_t *at, size_t *len);
/* The set for hash in a checked index of len bytes, or NULL. */
const struct xom_set_head *xom_store_find_set(const void *index, size_t len,
                                              uint64_t hash);
/* What both lookups share.  A slot's entry of len bytes at blob, if it is
 * the plan for k and shape (as for xom_store_find), whose key's hash is
 * hash, or, with k NULL, the set for hash; and that entry in a checked
 * index of len bytes, probed from hash past any other plan of the key. */
const void *xom_store_entry(const void *blob, size_t len,
                            const struct xom_plan_key *k, const uint64_t *shape,
                            uint64_t hash);
const void *xom_store_lookup(const void *index, size_t len,
                             const struct xom_plan_key *k, const uint64_t *shape,
                             uint64_t hash);

/* ---- symbol files -------------------------------------------------------- */

#define XOM_SYMS_MAGIC "XOMSYMS1"
#define XOM_SYMS_FORMAT 1u

/* head, syms[nsyms] sorted by addr, names[names_len]. */
struct xom_syms_head {
	char magic[8];
	uint32_t format, nsyms;
	uint64_t names_len, total, sum; /* sum: xom_hash with sum zero */
	uint8_t build_id_len, pad[7];
	uint8_t build_id[64];
};
struct xom_plan_sym { uint64_t addr, size; uint32_t name, pad; };

int xom_syms_check(const void *buf, size_t len, const char **why);
void xom_syms_seal(struct xom_syms_head *h);
/* The function that contains addr, and addr's offset in it, or NULL. */
const char *xom_syms_lookup(const struct xom_syms_head *h, uint64_t addr,
                            uint64_t *off);

/* ---- profile lines ---------------------------------------------------------- */

/* One line of a profile (profiles/README.md): "KEY 0xPAGE [PATH] [# why]"
 * or "program KEY [PATH]", read by the runtime (loader/profile.c) and by
 * the xom command (cmd/profile_file.c) by this one rule. */
struct xom_profile_line {
	const char *key, *path, *why;   /* in the line, not NUL-terminated */
	size_t keylen, pathlen, whylen; /* why: after a '#' that begins a word */
	int program;                    /* a program line */
	uint64_t page;                  /* page-aligned */
};
/* Parses the line [p, eol): 0 for an item or a program line, 1 for a blank
 * or comment line, -1 for anything else. */
int xom_profile_line(const char *p, const char *eol, struct xom_profile_line *it);

/* ---- shared helpers -------------------------------------------------------- */

/* FNV-1a's multiply, eight bytes a step: cheap, and enough to catch torn
 * or corrupted files (a checksum, not a defence against a forger, who
 * would have to be this user or root). */
uint64_t xom_hash(uint64_t h, const void *p, size_t n);
#define XOM_HASH_INIT 0xcbf29ce484222325ull


#endif
