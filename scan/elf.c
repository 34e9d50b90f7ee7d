/*
 * elf.c - validates an ELF image and collects what the later stages need:
 * executable segments, sections, symbols, relocation targets, code entries
 * and the build-id.
 *
 * libelf parses the header tables; every offset and size taken from them is
 * still checked here against the image with overflow-safe arithmetic before
 * a byte is read, because libelf checks tables, not what they point to.
 *
 * Reads: the image.
 * Adds: e_type, textrel, writable_exec, the header offsets, the build-id;
 * segs, loads, secs, spans, syms and names; code entries and function
 * extents from symbols, relocations, init arrays, PLTs and e_entry; refs
 * for the other relocated pointers into code; the GOT slots of functions
 * that do not return.
 * Calls: util.c and libelf.
 */
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "scan.h"

static int add_entry(struct scan *s, uint64_t addr)
{
	return scan_push_addr(s, &s->entries, addr);
}

static int add_ref(struct scan *s, uint64_t target, uint32_t size,
                   enum xom_reason reason)
{
	return scan_push_ref(s, target, size, reason, false, 0);
}

/* Reads NT_GNU_BUILD_ID from one PT_NOTE segment, if it holds one. */
static void read_build_id(struct scan *s, uint64_t off, uint64_t size)
{
	uint64_t pos = off, end = off + size;   /* checked by the caller */

	while (end - pos >= 12) {
		const uint8_t *p = s->img + pos;
		uint32_t namesz, descsz, type;
		uint64_t name_pad, desc_pad;

		memcpy(&namesz, p, 4);
		memcpy(&descsz, p + 4, 4);
		memcpy(&type, p + 8, 4);
		name_pad = ((uint64_t)namesz + 3) & ~3ull;
		desc_pad = ((uint64_t)descsz + 3) & ~3ull;
		if (name_pad + desc_pad > end - pos - 12)
			return;
		if (type == NT_GNU_BUILD_ID && namesz == 4 &&
		    !memcmp(p + 12, "GNU", 4) && descsz > 0 &&
		    descsz <= sizeof s->build_id) {
			memcpy(s->build_id, p + 12 + name_pad, descsz);
			s->build_id_len = (uint8_t)descsz;
			return;
		}
		pos += 12 + name_pad + desc_pad;
	}
}

/* Sets textrel when the PT_DYNAMIC segment asks for text relocations. */
static void read_textrel(struct scan *s, uint64_t off, uint64_t size)
{
	const uint8_t *d = s->img + off;        /* checked by the caller */

	for (uint64_t k = 0; k + 16 <= size; k += 16) {
		int64_t tag;
		uint64_t val;

		memcpy(&tag, d + k, 8);
		memcpy(&val, d + k + 8, 8);
		if (tag == DT_NULL)
			break;
		if (tag == DT_TEXTREL || (tag == DT_FLAGS && (val & DF_TEXTREL)))
			s->textrel = true;
	}
}

static int load_phdrs(struct scan *s, Elf *e)
{
	size_t n, i;

	if (elf_getphdrnum(e, &n) != 0)
		return scan_fail(s, XOM_SCAN_EMALFORMED,
		                 "malformed: program headers: %s", elf_errmsg(-1));
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;
		uint64_t end;

		if (!gelf_getphdr(e, (int)i, &ph))
			return scan_fail(s, XOM_SCAN_EMALFORMED,
			                 "malformed: program header %zu: %s", i,
			                 elf_errmsg(-1));
		if (ph.p_type != PT_LOAD && ph.p_type != PT_NOTE &&
		    ph.p_type != PT_DYNAMIC)
			continue;
		if (!image_has(s, ph.p_offset, ph.p_filesz))
			return scan_fail(s, XOM_SCAN_EMALFORMED,
			                 "malformed: segment %zu (offset %#llx, size %#llx) past end of file",
			                 i, (unsigned long long)ph.p_offset,
			                 (unsigned long long)ph.p_filesz);
		if (ph.p_type == PT_NOTE) {
			if (!s->build_id_len)
				read_build_id(s, ph.p_offset, ph.p_filesz);
			continue;
		}
		if (ph.p_type == PT_DYNAMIC) {
			read_textrel(s, ph.p_offset, ph.p_filesz);
			continue;
		}
		if (__builtin_add_overflow(ph.p_vaddr, ph.p_memsz, &end))
			return scan_fail(s, XOM_SCAN_EMALFORMED,
			                 "malformed: segment %zu wraps the address space", i);
		/* Mapped, it would end past the last page boundary: no kernel
		 * maps it, and its page-aligned end does not fit 64 bits. */
		if (end > (UINT64_MAX & ~(uint64_t)(XOM_PAGE_SIZE - 1)))
			return scan_fail(s, XOM_SCAN_EMALFORMED,
			                 "malformed: segment %zu reaches the last page of the address space",
			                 i);
		if (ph.p_filesz > ph.p_memsz)
			return scan_fail(s, XOM_SCAN_EMALFORMED,
			                 "malformed: segment %zu file size exceeds memory size", i);
		struct xom_segment seg = {
			.vaddr = ph.p_vaddr, .memsz = ph.p_memsz,
			.offset = ph.p_offset, .filesz = ph.p_filesz,
			.flags = ph.p_flags,
		};
		struct xom_segment *slot = vec_push(&s->loads);
		if (!slot)
			return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
		*slot = seg;
		if (!(ph.p_flags & PF_X) || !ph.p_memsz)
			continue;
		if (ph.p_flags & PF_W)
			s->writable_exec = true;
		slot = vec_push(&s->segs);
		if (!slot)
			return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
		*slot = seg;
	}
	sort_by_key(s->segs.p, s->segs.n, sizeof(struct xom_segment));
	const struct xom_segment *g = s->segs.p;
	for (i = 1; i < s->segs.n; i++)
		if (g[i].vaddr < g[i - 1].vaddr + g[i - 1].memsz)
			return scan_fail(s, XOM_SCAN_EMALFORMED,
			                 "malformed: overlapping executable segments at %#llx",
			                 (unsigned long long)g[i].vaddr);
	return 0;
}

static int load_sections(struct scan *s, Elf *e)
{
	size_t n, strndx, i;

	if (elf_getshdrnum(e, &n) != 0)
		return scan_fail(s, XOM_SCAN_EMALFORMED,
		                 "malformed: section headers: %s", elf_errmsg(-1));
	if (n == 0)
		return 0;
	if (elf_getshdrstrndx(e, &strndx) != 0)
		return scan_fail(s, XOM_SCAN_EMALFORMED,
		                 "malformed: section name table index: %s",
		                 elf_errmsg(-1));
	for (i = 1; i < n; i++) {
		Elf_Scn *scn = elf_getscn(e, i);
		GElf_Shdr sh;
		struct section *sec;
		const char *name;

		if (!scn || !gelf_getshdr(scn, &sh))
			return scan_fail(s, XOM_SCAN_EMALFORMED,
			                 "malformed: section header %zu: %s", i,
			                 elf_errmsg(-1));
		if (sh.sh_type != SHT_NOBITS && !image_has(s, sh.sh_offset, sh.sh_size))
			return scan_fail(s, XOM_SCAN_EMALFORMED,
			                 "malformed: section %zu (offset %#llx, size %#llx) past end of file",
			                 i, (unsigned long long)sh.sh_offset,
			                 (unsigned long long)sh.sh_size);
		name = elf_strptr(e, strndx, sh.sh_name);
		sec = vec_push(&s->secs);
		if (!sec)
			return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
		*sec = (struct section){
			.addr = sh.sh_addr, .size = sh.sh_size,
			.offset = sh.sh_offset, .flags = sh.sh_flags,
			.entsize = sh.sh_entsize, .type = sh.sh_type,
			.link = sh.sh_link, .name = name ? name : "",
		};
		if ((sh.sh_flags & SHF_ALLOC) && sh.sh_type != SHT_NOBITS && sh.sh_size) {
			struct span *sp = vec_push(&s->spans);
			if (!sp)
				return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
			*sp = (struct span){ sh.sh_addr, sh.sh_addr + sh.sh_size,
			                     (sh.sh_flags & SHF_EXECINSTR) != 0 };
		}
	}
	sort_by_key(s->spans.p, s->spans.n, sizeof(struct span));
	return 0;
}

static int add_symbol(struct scan *s, const Elf64_Sym *sym, const char *name)
{
	size_t len = strnlen(name, 256);
	struct xom_sym *x;
	char *dst;
	size_t k;

	x = vec_push(&s->syms);
	if (!x)
		return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
	*x = (struct xom_sym){ .addr = sym->st_value, .size = sym->st_size,
	                       .name = (uint32_t)s->names.n };
	for (k = 0; k <= len; k++) {
		dst = vec_push(&s->names);
		if (!dst)
			return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
		*dst = k < len ? name[k] : 0;
	}
	return 0;
}

/*
 * Takes function starts and extents from one symbol table and, when names
 * is set, the names of functions and objects for messages.  libelf's
 * elf_strptr checks the string table index and offset for each name.
 */
static int load_symtab(struct scan *s, Elf *e, const struct section *sec,
                       bool names)
{
	uint64_t count, k;
	int rc;

	if (sec->entsize != sizeof(Elf64_Sym))
		return scan_fail(s, XOM_SCAN_EMALFORMED,
		                 "malformed: symbol table '%s' has entry size %llu",
		                 sec->name, (unsigned long long)sec->entsize);
	count = sec->size / sizeof(Elf64_Sym);
	for (k = 1; k < count; k++) {
		Elf64_Sym sym;
		int type;
		bool func;

		memcpy(&sym, s->img + sec->offset + k * sizeof sym, sizeof sym);
		type = ELF64_ST_TYPE(sym.st_info);
		func = type == STT_FUNC || type == STT_GNU_IFUNC;
		if ((!func && type != STT_OBJECT && type != STT_NOTYPE) ||
		    sym.st_shndx == SHN_UNDEF || sym.st_value == 0 ||
		    !exec_seg_at(s, sym.st_value))
			continue;
		if (func && (rc = add_entry(s, sym.st_value)))
			return rc;
		if (func && sym.st_size && sym.st_size < (1ull << 32)) {
			struct xom_range *f = vec_push(&s->funcs);
			if (!f)
				return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
			f->start = sym.st_value;
			f->end = sym.st_value + sym.st_size;
		}
		if (names) {
			const char *name = elf_strptr(e, sec->link, sym.st_name);
			if (name && *name && (rc = add_symbol(s, &sym, name)))
				return rc;
		}
	}
	return 0;
}

/* Names come from .symtab when the file has one, else from .dynsym. */
static int load_symbols(struct scan *s, Elf *e)
{
	const struct section *sec = s->secs.p;
	bool have_symtab = false;
	int rc;

	for (size_t i = 0; i < s->secs.n; i++)
		have_symtab |= sec[i].type == SHT_SYMTAB;
	for (size_t i = 0; i < s->secs.n; i++)
		if ((sec[i].type == SHT_SYMTAB || sec[i].type == SHT_DYNSYM) &&
		    (rc = load_symtab(s, e, &sec[i], sec[i].type ==
		                      (have_symtab ? SHT_SYMTAB : SHT_DYNSYM))))
			return rc;
	return 0;
}

static bool is_array(const struct section *sec)
{
	return sec->type == SHT_INIT_ARRAY || sec->type == SHT_FINI_ARRAY ||
	       sec->type == SHT_PREINIT_ARRAY;
}

static bool in_array_section(const struct scan *s, uint64_t vaddr)
{
	const struct section *sec = s->secs.p;
	size_t i;

	for (i = 0; i < s->secs.n; i++)
		if (is_array(&sec[i]) &&
		    vaddr >= sec[i].addr && vaddr - sec[i].addr < sec[i].size)
			return true;
	return false;
}

/* Functions that do not return, which a call through the PLT may reach. */
static bool is_noreturn(const char *name)
{
	static const char *const names[] = {
		"__stack_chk_fail", "abort", "exit", "_exit", "_Exit",
		"__assert_fail", "__fortify_fail", "__chk_fail", "quick_exit",
		"__cxa_throw", "__cxa_rethrow", "_Unwind_Resume", "pthread_exit",
		"longjmp", "siglongjmp", "__longjmp_chk", "err", "errx",
	};

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

/*
 * Functions of another object whose integer arguments are known from their
 * name: C's and FFmpeg's allocators, which take sizes and counts (and
 * free()'s pointer), so that an address left in a later argument register
 * is not passed.  The name is what the dynamic linker binds by, and these
 * names carry one prototype wherever they are defined.
 */
static unsigned known_args(const char *name)
{
	static const struct { const char *name; unsigned n; } fns[] = {
		{ "malloc", 1 }, { "calloc", 2 }, { "realloc", 2 }, { "free", 1 },
		{ "av_malloc", 1 }, { "av_mallocz", 1 }, { "av_calloc", 2 },
		{ "av_malloc_array", 2 }, { "av_mallocz_array", 2 },
		{ "av_realloc", 2 }, { "av_free", 1 }, { "av_freep", 1 },
	};

	for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
		if (!strcmp(name, fns[i].name))
			return fns[i].n;
	return 0;
}

/* The GOT slot of a JUMP_SLOT relocation: for a function that does not
 * return, a PLT entry that jumps through it ends a path in flow.c; for one
 * that this file does not define, the call reaches another object, which
 * keeps to the ABI (a function of this file may not: hand-written code
 * with a convention of its own, reached through the PLT when it is
 * exported). */
static int note_jump_slot(struct scan *s, Elf *e, const struct section *sec,
                          const Elf64_Rela *r)
{
	const struct section *syms = s->secs.p;
	size_t k = ELF64_R_SYM(r->r_info);
	Elf64_Sym sym;
	const char *name;
	uint64_t *slot;

	/* secs holds section i at i - 1. */
	if (!sec->link || sec->link > s->secs.n)
		return 0;
	syms += sec->link - 1;
	if (syms->entsize != sizeof sym || k >= syms->size / sizeof sym)
		return 0;
	memcpy(&sym, s->img + syms->offset + k * sizeof sym, sizeof sym);
	name = elf_strptr(e, syms->link, sym.st_name);
	if (sym.st_shndx == SHN_UNDEF) {
		/* The slot, and in its low 3 bits (a slot is 8-byte
		 * aligned) how many arguments the name is known to take, 0
		 * when it is not known. */
		if (r->r_offset & 7)
			return 0;
		if (!(slot = vec_push(&s->extern_got)))
			return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
		*slot = r->r_offset | (name ? known_args(name) : 0);
	}
	if (!name || !is_noreturn(name))
		return 0;
	if (!(slot = vec_push(&s->noreturn_got)))
		return scan_fail(s, XOM_SCAN_ENOMEM, "out of memory");
	*slot = r->r_offset;
	return 0;
}

/*
 * Relocations that store an address of the code: function pointers in
 * init arrays and ifunc resolvers are entries; the rest are references that
 * classify.c resolves (a pointer into the middle of a function is a code label,
 * one outside every function is data).
 */
static int load_relocs(struct scan *s, Elf *e)
{
	size_t i;
	int rc;

	for (i = 0; i < s->secs.n; i++) {
		const struct section *sec = (struct section *)s->secs.p + i;
		uint64_t k, count;

		if (sec->type != SHT_RELA)
			continue;
		if (sec->entsize != sizeof(Elf64_Rela))
			return scan_fail(s, XOM_SCAN_EMALFORMED,
			                 "malformed: relocation section '%s' has entry size %llu",
			                 sec->name, (unsigned long long)sec->entsize);
		count = sec->size / sizeof(Elf64_Rela);
		for (k = 0; k < count; k++) {
			Elf64_Rela r;
			uint32_t type;

			memcpy(&r, s->img + sec->offset + k * sizeof r, sizeof r);
			type = ELF64_R_TYPE(r.r_info);
			if (type == R_X86_64_JUMP_SLOT &&
			    (rc = note_jump_slot(s, e, sec, &r)))
				return rc;
			if (type != R_X86_64_RELATIVE && type != R_X86_64_IRELATIVE)
				continue;
			if (type == R_X86_64_IRELATIVE || in_array_section(s, r.r_offset))
				rc = add_entry(s, (uint64_t)r.r_addend);
			else
				rc = add_ref(s, (uint64_t)r.r_addend, 0, XOM_R_ABSOLUTE);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* Init arrays of non-PIE files hold plain addresses, with no relocation. */
static int load_arrays(struct scan *s)
{
	size_t i;
	int rc;

	for (i = 0; i < s->secs.n; i++) {
		const struct section *sec = (struct section *)s->secs.p + i;
		uint64_t k;

		if (!is_array(sec))
			continue;
		for (k = 0; k + 8 <= sec->size; k += 8) {
			uint64_t v;

			memcpy(&v, s->img + sec->offset + k, 8);
			if ((rc = add_entry(s, v)))
				return rc;
		}
	}
	return 0;
}

/* Every slot of a PLT is a call target even when nothing in the file calls it. */
static int load_plt(struct scan *s)
{
	size_t i;
	int rc;

	for (i = 0; i < s->secs.n; i++) {
		const struct section *sec = (struct section *)s->secs.p + i;
		uint64_t step, k;

		if (!(sec->flags & SHF_EXECINSTR) || strncmp(sec->name, ".plt", 4) != 0)
			continue;
		step = sec->entsize >= 8 && sec->entsize <= 64 ? sec->entsize : 16;
		for (k = 0; k < sec->size; k += step)
			if ((rc = add_entry(s, sec->addr + k)))
				return rc;
	}
	return 0;
}

/* Counts past 0xfeff live in the first section header (gABI). */
static Elf64_Shdr first_shdr(const struct scan *s, const GElf_Ehdr *eh)
{
	Elf64_Shdr sh0 = { 0 };

	if (eh->e_shoff && image_has(s, eh->e_shoff, sizeof sh0))
		memcpy(&sh0, s->img + eh->e_shoff, sizeof sh0);
	return sh0;
}

/*
 * The header tables themselves must lie in the file.  libelf accepts a
 * section header table past the end of the image and reports no sections,
 * which would silently turn a damaged file into one that looks stripped.
 */
static int check_phdr_table(struct scan *s, const GElf_Ehdr *eh)
{
	Elf64_Shdr sh0 = first_shdr(s, eh);
	uint64_t phnum = eh->e_phnum;

	if (eh->e_phnum && eh->e_phentsize != sizeof(Elf64_Phdr))
		return scan_fail(s, XOM_SCAN_EMALFORMED,
		                 "malformed: program header entry size %u", eh->e_phentsize);
	if (phnum == PN_XNUM)
		phnum = sh0.sh_info;
	if (!image_has(s, eh->e_phoff, phnum * sizeof(Elf64_Phdr)))
		return scan_fail(s, XOM_SCAN_EMALFORMED,
		                 "malformed: program header table past end of file");
	return 0;
}

/* The same for the section header table, checked once the segments are. */
static int check_shdr_table(struct scan *s, const GElf_Ehdr *eh)
{
	Elf64_Shdr sh0 = first_shdr(s, eh);
	uint64_t shnum = eh->e_shnum;
	if (!eh->e_shoff) {
		if (eh->e_shnum)
			return scan_fail(s, XOM_SCAN_EMALFORMED,
			                 "malformed: %u section headers at offset 0", eh->e_shnum);
		return 0;
	}
	if (eh->e_shentsize != sizeof(Elf64_Shdr))
		return scan_fail(s, XOM_SCAN_EMALFORMED,
		                 "malformed: section header entry size %u", eh->e_shentsize);
	if (!image_has(s, eh->e_shoff, sizeof sh0))
		return scan_fail(s, XOM_SCAN_EMALFORMED,
		                 "malformed: section header table past end of file");
	if (shnum == 0)
		shnum = sh0.sh_size;
	if (shnum > s->len / sizeof sh0 || !image_has(s, eh->e_shoff, shnum * sizeof sh0))
		return scan_fail(s, XOM_SCAN_EMALFORMED,
		                 "malformed: section header table past end of file");
	uint64_t strndx = eh->e_shstrndx == SHN_XINDEX ? sh0.sh_link : eh->e_shstrndx;
	if (shnum && strndx >= shnum)
		return scan_fail(s, XOM_SCAN_EMALFORMED,
		                 "malformed: section name table index %llu out of range",
		                 (unsigned long long)strndx);
	return 0;
}

int elf_load(struct scan *s)
{
	const unsigned char *ident = s->img;
	GElf_Ehdr eh;
	Elf *e;
	int rc;

	if (s->len < EI_NIDENT || memcmp(ident, ELFMAG, SELFMAG) != 0)
		return scan_fail(s, XOM_SCAN_EUNSUPPORTED, "unsupported: not an ELF file");
	if (ident[EI_CLASS] != ELFCLASS64)
		return scan_fail(s, XOM_SCAN_EUNSUPPORTED, "unsupported: not a 64-bit ELF file");
	if (ident[EI_DATA] != ELFDATA2LSB)
		return scan_fail(s, XOM_SCAN_EUNSUPPORTED, "unsupported: not little-endian");
	if (s->len < sizeof(Elf64_Ehdr))
		return scan_fail(s, XOM_SCAN_EMALFORMED, "malformed: truncated ELF header");

	elf_version(EV_CURRENT);
	e = elf_memory((char *)(uintptr_t)s->img, s->len);
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
		rc = scan_fail(s, XOM_SCAN_EMALFORMED, "malformed: ELF header: %s",
		               elf_errmsg(-1));
		goto out;
	}
	if (eh.e_machine != EM_X86_64) {
		rc = scan_fail(s, XOM_SCAN_EUNSUPPORTED,
		               "unsupported: machine %u is not x86-64", eh.e_machine);
		goto out;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		rc = scan_fail(s, XOM_SCAN_EUNSUPPORTED,
		               "unsupported: ELF type %u is neither an executable nor a shared object",
		               eh.e_type);
		goto out;
	}
	s->e_type = eh.e_type;
	s->ehdr_size = eh.e_ehsize;
	s->phdr_off = eh.e_phoff;
	s->phdr_size = (uint64_t)eh.e_phnum * eh.e_phentsize;

	if ((rc = check_phdr_table(s, &eh)) || (rc = load_phdrs(s, e)) ||
	    (rc = check_shdr_table(s, &eh)) || (rc = load_sections(s, e)) ||
	    (rc = load_symbols(s, e)) || (rc = load_relocs(s, e)) ||
	    (rc = load_arrays(s)) || (rc = load_plt(s)) ||
	    (rc = add_entry(s, eh.e_entry)))
		goto out;
out:
	if (e)
		elf_end(e);
	return rc;
}
