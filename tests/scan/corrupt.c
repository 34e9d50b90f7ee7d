/*
 * corrupt - writes one-field corruptions of a valid x86-64 ELF file, and says
 * what the scanner must answer for each.
 *
 *   corrupt headers IN OUTDIR      ELF, program and section header fields,
 *                                  truncations, wrong class or machine
 *   corrupt ehframe IN OUTDIR      .eh_frame records (give it a stripped
 *                                  file, whose function bounds live there)
 *   corrupt nosep IN OUTDIR        a file linked with -z noseparate-code:
 *                                  section headers removed; the exec
 *                                  segment moved to the top page
 *   corrupt random IN OUTDIR N SEED  N copies with 1-4 random bytes changed
 *                                  in the headers, section table or .eh_frame
 *
 * For each copy it prints one manifest line, tab-separated:
 *   NAME  EXPECT  KEYWORD
 * EXPECT is one of
 *   ok            exit 0 with a well-formed map
 *   ok-allread    exit 0 and no page execute-only
 *   ok-reason:R   exit 0, no page execute-only, a data range with reason R
 *   malformed     exit 1, "xom-scan: FILE: malformed..."
 *   unsupported   exit 1, "xom-scan: FILE: unsupported..."
 *   error         exit 1 with either of those two prefixes
 *   any           ok or error: the input is odd but the answer is open
 * and KEYWORD, when not "-", must appear in the message (any case).  In every
 * case the scanner must not die by a signal, hang, or run out of memory.
 *
 * The rule behind "malformed": every header, and every section that has file
 * bytes (not SHT_NOBITS), must lie inside the file with sizes that do not
 * overflow; segments must not overlap each other when both are executable;
 * .eh_frame records must lie inside .eh_frame and point at a CIE.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned char *orig;
static size_t orig_len;
static unsigned char *buf;      /* the copy being corrupted */
static const char *outdir;

static void die(const char *what)
{
	fprintf(stderr, "corrupt: %s\n", what);
	exit(2);
}

static void load(const char *path)
{
	FILE *fp = fopen(path, "rb");
	long n;

	if (!fp || fseek(fp, 0, SEEK_END) || (n = ftell(fp)) < 0 ||
	    fseek(fp, 0, SEEK_SET))
		die(strerror(errno));
	orig_len = (size_t)n;
	orig = malloc(orig_len + 1);
	buf = malloc(orig_len + 1);
	if (!orig || !buf || fread(orig, 1, orig_len, fp) != orig_len)
		die("cannot read the input");
	fclose(fp);
	if (orig_len < sizeof(Elf64_Ehdr) || memcmp(orig, ELFMAG, SELFMAG))
		die("the input is not an ELF file");
	memcpy(buf, orig, orig_len);
}

/* Starts a new copy from the pristine input. */
static void fresh(void)
{
	memcpy(buf, orig, orig_len);
}

static void emit_bytes(const char *name, const char *expect, const char *kw,
		       const void *data, size_t len)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof path, "%s/%s", outdir, name);
	fp = fopen(path, "wb");
	if (!fp || (len && fwrite(data, 1, len, fp) != len) || fclose(fp))
		die(strerror(errno));
	printf("%s\t%s\t%s\n", name, expect, kw ? kw : "-");
}

static void emit(const char *name, const char *expect, const char *kw)
{
	emit_bytes(name, expect, kw, buf, orig_len);
}

static Elf64_Ehdr *eh(void)
{
	return (Elf64_Ehdr *)(void *)buf;
}

/* The input is a file the test just linked, so its tables are trusted. */
static Elf64_Phdr *ph(unsigned i)
{
	return (Elf64_Phdr *)(void *)(buf + eh()->e_phoff) + i;
}

static Elf64_Shdr *sh(unsigned i)
{
	return (Elf64_Shdr *)(void *)(buf + eh()->e_shoff) + i;
}

static int find_phdr(uint32_t type, uint32_t flag)
{
	for (unsigned i = 0; i < eh()->e_phnum; i++)
		if (ph(i)->p_type == type && (!flag || (ph(i)->p_flags & flag)))
			return (int)i;
	return -1;
}

static int find_shdr(const char *name)
{
	const Elf64_Shdr *strs = sh(eh()->e_shstrndx);

	for (unsigned i = 0; i < eh()->e_shnum; i++)
		if (strcmp((char *)buf + strs->sh_offset + sh(i)->sh_name,
			   name) == 0)
			return (int)i;
	return -1;
}

static int need(int i, const char *what)
{
	if (i < 0) {
		fprintf(stderr, "corrupt: the input has no %s\n", what);
		exit(2);
	}
	return i;
}

static void gen_truncations(void)
{
	static const size_t tiny[] = { 1, 4, 16, 40, 63 };
	const Elf64_Ehdr *e = eh();
	const Elf64_Phdr *x = ph((unsigned)need(find_phdr(PT_LOAD, PF_X),
						"executable PT_LOAD"));
	char name[64];

	fresh();
	emit_bytes("empty", "error", NULL, buf, 0);
	emit_bytes("not-elf", "unsupported", "ELF",
		   "#!/bin/sh\necho this is not an ELF file\n", 40);
	emit_bytes("magic-only", "error", NULL, buf, 4);
	for (size_t i = 0; i < sizeof tiny / sizeof tiny[0]; i++) {
		snprintf(name, sizeof name, "trunc-%zu", tiny[i]);
		emit_bytes(name, "error", NULL, buf, tiny[i]);
	}
	emit_bytes("trunc-ehdr-only", "malformed", "program header", buf, 64);
	emit_bytes("trunc-mid-phdrs", "malformed", "program header", buf,
		   e->e_phoff + e->e_phnum * sizeof(Elf64_Phdr) - 1);
	emit_bytes("trunc-mid-exec", "malformed", "segment", buf,
		   x->p_offset + x->p_filesz / 2 + 3);
	emit_bytes("trunc-at-shdrs", "malformed", "section header", buf,
		   e->e_shoff);
	emit_bytes("trunc-mid-shdrs", "malformed", "section header", buf,
		   e->e_shoff + 10);
	emit_bytes("trunc-last-byte", "malformed", "section header", buf,
		   orig_len - 1);
}

static void gen_ident(void)
{
	fresh(); buf[EI_CLASS] = ELFCLASS32;
	emit("class-32", "unsupported", "64-bit");
	fresh(); buf[EI_CLASS] = ELFCLASSNONE;
	emit("class-none", "unsupported", NULL);
	fresh(); buf[EI_DATA] = ELFDATA2MSB;
	emit("big-endian", "unsupported", NULL);
	fresh(); buf[EI_VERSION] = 0;
	emit("ident-version-0", "any", NULL);
	fresh(); eh()->e_machine = EM_ARM;
	emit("machine-arm", "unsupported", "machine");
	fresh(); eh()->e_machine = EM_AARCH64;
	emit("machine-aarch64", "unsupported", "machine");
	fresh(); eh()->e_machine = EM_386;
	emit("machine-386", "unsupported", "machine");
	fresh(); eh()->e_type = ET_REL;
	emit("type-rel", "unsupported", "type");
	fresh(); eh()->e_type = ET_CORE;
	emit("type-core", "unsupported", "type");
	fresh(); eh()->e_type = ET_NONE;
	emit("type-none", "unsupported", "type");
	fresh(); eh()->e_ehsize = 10;
	emit("ehsize-10", "any", NULL);
	fresh(); eh()->e_entry = 0xdeadbeef000ull;
	emit("entry-outside", "ok", NULL);
}

/* An executable segment that ends in the last page of the address space. */
static void set_top(unsigned xi)
{
	ph(xi)->p_vaddr = ph(xi)->p_paddr = 0ull - 4196;
	ph(xi)->p_filesz = ph(xi)->p_memsz = 4195;
}

static void gen_phdrs(void)
{
	unsigned xi = (unsigned)need(find_phdr(PT_LOAD, PF_X), "exec PT_LOAD");
	int ri = find_phdr(PT_LOAD, 0);
	int si = need(find_phdr(PT_GNU_STACK, 0), "PT_GNU_STACK");
	int di = need(find_phdr(PT_DYNAMIC, 0), "PT_DYNAMIC");

	fresh(); eh()->e_phoff = 0xffffffffffffff00ull;
	emit("phoff-huge", "malformed", "program header");
	fresh(); eh()->e_phoff = orig_len - 8;
	emit("phoff-eof", "malformed", "program header");
	fresh(); eh()->e_phoff = 1;
	emit("phoff-odd", "any", NULL);
	fresh(); eh()->e_phnum = 0xfffe;
	emit("phnum-huge", "malformed", "program header");
	fresh(); eh()->e_phnum = 0;
	emit("phnum-0", "any", NULL);
	fresh(); eh()->e_phentsize = 32;
	emit("phentsize-32", "malformed", NULL);

	fresh(); ph(xi)->p_offset = 0xfffffffffffff000ull;
	emit("exec-offset-huge", "malformed", "segment");
	fresh(); ph(xi)->p_offset = (orig_len + 0x10000) & ~0xfffull;
	emit("exec-offset-eof", "malformed", "segment");
	fresh(); ph(xi)->p_filesz = 0x7fffffffffffffffull;
	ph(xi)->p_memsz = 0x7fffffffffffffffull;
	emit("exec-filesz-huge", "malformed", "segment");
	fresh(); ph(xi)->p_filesz = 2 * orig_len;
	ph(xi)->p_memsz = 2 * orig_len;
	emit("exec-filesz-eof", "malformed", "segment");
	fresh(); ph(xi)->p_filesz = ph(xi)->p_memsz + 0x1000;
	emit("exec-filesz-gt-memsz", "malformed", "segment");
	fresh(); ph(xi)->p_memsz = 1ull << 40;
	emit("exec-memsz-1T", "any", NULL);
	fresh(); ph(xi)->p_memsz = 0xffffffffffffffffull;
	emit("exec-memsz-wrap", "malformed", "segment");
	fresh(); ph(xi)->p_vaddr = 0xfffffffffffff000ull;
	ph(xi)->p_paddr = ph(xi)->p_vaddr;
	emit("exec-vaddr-wrap", "malformed", "segment");
	fresh(); set_top(xi);
	emit("exec-vaddr-top", "malformed", "last page");
	fresh(); ph(xi)->p_vaddr += 0xffff800000000000ull;
	emit("exec-vaddr-high", "any", NULL);
	fresh(); ph(xi)->p_filesz = ph(xi)->p_memsz = 0;
	emit("exec-empty", "any", NULL);
	fresh(); ph(xi)->p_flags |= PF_W;
	emit("exec-writable", "ok-reason:writable", NULL);
	fresh(); ph(xi)->p_align = 3;
	emit("exec-align-3", "any", NULL);

	/* A second executable PT_LOAD over the same bytes: the kernel would
	 * map one over the other, so no single answer per page exists. */
	fresh(); *ph((unsigned)si) = *ph(xi);
	emit("exec-duplicate", "malformed", "overlap");
	fresh(); *ph((unsigned)si) = *ph(xi);
	ph((unsigned)si)->p_vaddr += 0x1000;
	ph((unsigned)si)->p_offset += 0x1000;
	ph((unsigned)si)->p_filesz -= 0x1000;
	ph((unsigned)si)->p_memsz -= 0x1000;
	emit("exec-overlap", "malformed", "overlap");
	if (ri >= 0 && ri != (int)xi) {
		fresh();
		ph((unsigned)ri)->p_filesz = ph((unsigned)ri)->p_memsz =
			ph(xi)->p_vaddr + 0x2000 - ph((unsigned)ri)->p_vaddr;
		emit("ro-overlaps-exec", "any", NULL);
	}
	fresh(); ph((unsigned)di)->p_offset = 0xfffffffffffff000ull;
	emit("dynamic-offset-huge", "any", NULL);
	fresh(); ph(xi)->p_type = PT_NULL;
	emit("exec-type-null", "any", NULL);
}

static void gen_shdrs(void)
{
	int ti = need(find_shdr(".text"), ".text");
	int yi = need(find_shdr(".symtab"), ".symtab");
	int si = need(find_shdr(".strtab"), ".strtab");
	int ei = need(find_shdr(".eh_frame"), ".eh_frame");
	int di = need(find_shdr(".dynstr"), ".dynstr");
	unsigned t = (unsigned)ti, y = (unsigned)yi;

	fresh(); eh()->e_shoff = 0xffffffffffffff00ull;
	emit("shoff-huge", "malformed", "section header");
	fresh(); eh()->e_shoff = orig_len - 8;
	emit("shoff-eof", "malformed", "section header");
	fresh(); eh()->e_shoff = 1;
	emit("shoff-odd", "any", NULL);
	fresh(); eh()->e_shnum = 0xfff0;
	emit("shnum-huge", "malformed", "section header");
	fresh(); eh()->e_shnum = 0;
	emit("shnum-0", "any", NULL);
	/* What `sstrip` leaves: no section headers at all.  This is a valid
	 * file; with separate-code its executable segment holds only code, so
	 * it can still be analysed (see gen_nosep() for the other layout). */
	fresh(); eh()->e_shoff = 0; eh()->e_shnum = 0; eh()->e_shstrndx = 0;
	emit("no-sections", "ok", NULL);
	fresh(); eh()->e_shentsize = 20;
	emit("shentsize-20", "malformed", NULL);
	fresh(); eh()->e_shstrndx = (uint16_t)(eh()->e_shnum + 3);
	emit("shstrndx-out", "malformed", NULL);
	fresh(); eh()->e_shstrndx = (uint16_t)y;
	emit("shstrndx-symtab", "any", NULL);

	fresh(); sh(t)->sh_offset = 0xfffffffffffff000ull;
	emit("text-offset-huge", "malformed", "section");
	fresh(); sh(t)->sh_offset = orig_len + 0x1000;
	emit("text-offset-eof", "malformed", "section");
	fresh(); sh(t)->sh_size = 1ull << 40;
	emit("text-size-1T", "malformed", "section");
	fresh(); sh(t)->sh_offset = 0xffffffffffffff00ull; sh(t)->sh_size = 0x200;
	emit("text-offset-wrap", "malformed", "section");
	/* With no executable section, every byte of the segment is data. */
	fresh(); sh(t)->sh_size = 0;
	emit("text-size-0", "ok-allread", NULL);
	fresh(); sh(t)->sh_flags &= ~(uint64_t)SHF_EXECINSTR;
	emit("text-not-exec", "ok-allread", NULL);
	fresh(); sh(t)->sh_addr = 0x900000;
	emit("text-addr-outside", "any", NULL);
	fresh(); sh(t)->sh_type = SHT_NOBITS;
	emit("text-nobits", "any", NULL);
	fresh(); sh(t)->sh_name = 0x7fffffff;
	emit("text-name-out", "any", NULL);
	fresh(); sh(t)->sh_addralign = 1ull << 63;
	emit("text-align-huge", "any", NULL);

	fresh(); sh((unsigned)ei)->sh_size = 0;
	emit("ehframe-size-0", "ok", NULL);
	fresh(); sh((unsigned)ei)->sh_offset = 0xfffffffffffff000ull;
	emit("ehframe-offset-huge", "malformed", "section");
	fresh(); sh((unsigned)di)->sh_offset = 0xfffffffffffff000ull;
	emit("dynstr-offset-huge", "malformed", "section");
	fresh(); sh(eh()->e_shstrndx)->sh_size = 1ull << 40;
	emit("shstrtab-size-1T", "malformed", "section");

	fresh(); sh(y)->sh_offset = 0xfffffffffffff000ull;
	emit("symtab-offset-huge", "malformed", "section");
	fresh(); sh(y)->sh_size = 1ull << 40;
	emit("symtab-size-1T", "malformed", "section");
	fresh(); sh(y)->sh_size -= 5;
	emit("symtab-size-ragged", "any", NULL);
	fresh(); sh(y)->sh_entsize = 0;
	emit("symtab-entsize-0", "any", NULL);
	fresh(); sh(y)->sh_link = 0x7fff;
	emit("symtab-link-out", "any", NULL);
	fresh(); sh((unsigned)si)->sh_size = 1;
	emit("strtab-size-1", "any", NULL);

	/* Symbols that point anywhere, or cover everything, must neither crash
	 * nor make the scan take forever. */
	Elf64_Sym *syms;
	size_t nsym = sh(y)->sh_size / sizeof *syms;
	fresh(); syms = (Elf64_Sym *)(void *)(buf + sh(y)->sh_offset);
	for (size_t i = 1; i < nsym; i++)
		syms[i].st_value = 0xfffffffffffffff0ull - i;
	emit("symbols-value-huge", "any", NULL);
	fresh(); syms = (Elf64_Sym *)(void *)(buf + sh(y)->sh_offset);
	for (size_t i = 1; i < nsym; i++)
		syms[i].st_size = 0xffffffffffffffffull;
	emit("symbols-size-huge", "any", NULL);
	fresh(); syms = (Elf64_Sym *)(void *)(buf + sh(y)->sh_offset);
	for (size_t i = 1; i < nsym; i++)
		syms[i].st_name = 0x7fffffff, syms[i].st_shndx = 0x7fff;
	emit("symbols-name-index-out", "any", NULL);
}

/* Reads an .eh_frame record header: its length and where its id field is. */
static size_t rec_next(size_t off, size_t *id_off)
{
	uint32_t len;

	memcpy(&len, buf + off, 4);
	if (len == 0 || len == 0xffffffffu)
		die("unexpected .eh_frame layout in the input");
	*id_off = off + 4;
	return off + 4 + len;
}

static void put32(size_t off, uint32_t v)
{
	memcpy(buf + off, &v, 4);
}

static void gen_ehframe(void)
{
	unsigned e = (unsigned)need(find_shdr(".eh_frame"), ".eh_frame");
	size_t base, cie, cie_id, fde, fde_id, fde2, after;
	uint32_t id;

	fresh();
	base = sh(e)->sh_offset;
	/* Expected layout from gcc and ld: a CIE, then that CIE's FDEs. */
	cie = base;
	fde = rec_next(cie, &cie_id);
	memcpy(&id, buf + cie_id, 4);
	if (id != 0)
		die("the first .eh_frame record is not a CIE");
	fde2 = rec_next(fde, &fde_id);
	memcpy(&id, buf + fde_id, 4);
	if (id == 0)
		die("the second .eh_frame record is not an FDE");
	(void)fde2;

	fresh(); put32(cie, 0xfffffff0u);
	emit("ehf-cie-length-huge", "malformed", "eh_frame");
	fresh(); put32(cie, 0xffffffffu);
	emit("ehf-cie-length-64bit", "malformed", "eh_frame");
	fresh(); put32(cie, 0);
	emit("ehf-cie-length-0", "ok", NULL);
	fresh(); put32(fde, 0x7ffffff0u);
	emit("ehf-fde-length-huge", "malformed", "eh_frame");
	fresh(); put32(fde, 4);
	emit("ehf-fde-length-4", "malformed", "eh_frame");
	fresh(); put32(fde_id, 0x7ffffff0u);
	emit("ehf-cie-pointer-out", "malformed", "eh_frame");
	/* A CIE pointer of 4 points at the FDE itself, which is no CIE. */
	fresh(); put32(fde_id, 4);
	emit("ehf-cie-pointer-fde", "malformed", "eh_frame");
	fresh(); put32(fde_id, (uint32_t)(fde_id - cie) + 1);
	emit("ehf-cie-pointer-odd", "malformed", "eh_frame");
	fresh(); put32(fde_id, 0);
	emit("ehf-fde-becomes-cie", "any", NULL);

	/* CIE body: version, augmentation string, code and data alignment
	 * (LEB128), return register, then the augmentation data. */
	after = cie_id + 4;
	fresh(); buf[after] = 0x7f;
	emit("ehf-cie-version", "any", NULL);
	fresh(); memset(buf + after + 1, 'z', fde - after - 1);
	emit("ehf-augmentation-unterminated", "any", NULL);
	fresh(); {
		size_t p = after + 1 + strlen((char *)buf + after + 1) + 1;
		memset(buf + p, 0x80, fde - p);
	}
	emit("ehf-leb128-endless", "any", NULL);
	fresh(); {
		/* "zR": after the return register and the augmentation
		 * length comes the pointer encoding of the FDEs. */
		size_t p = after + 1 + strlen((char *)buf + after + 1) + 1;
		while (buf[p] & 0x80) p++;      /* code alignment */
		p++;
		while (buf[p] & 0x80) p++;      /* data alignment */
		p++;
		p++;                            /* return register */
		while (buf[p] & 0x80) p++;      /* augmentation length */
		p++;
		buf[p] = 0x0f;                  /* no such DW_EH_PE format */
	}
	emit("ehf-pointer-encoding-bad", "any", NULL);
	fresh(); put32(fde_id + 4, 0x7ffffff0u);
	emit("ehf-fde-begin-outside", "any", NULL);
	fresh(); put32(fde_id + 8, 0x7ffffff0u);
	emit("ehf-fde-range-huge", "any", NULL);
	fresh(); sh(e)->sh_size = 10;
	emit("ehf-section-cut", "malformed", "eh_frame");
	fresh(); sh(e)->sh_size = 0;
	emit("ehf-section-empty", "ok", NULL);
}

/* Files linked without separate-code, whose exec segment holds the headers.
 * Stripped of its section headers, nothing tells .rodata or .eh_frame from
 * .text in that segment, so all of it must stay readable.  Moved to the top
 * page, the segment's pages and header ranges end where a page-at-a-time
 * cursor wraps to zero: the scanner once spun there forever. */
static void gen_nosep(void)
{
	unsigned xi = (unsigned)need(find_phdr(PT_LOAD, PF_X), "exec PT_LOAD");

	fresh(); eh()->e_shoff = 0; eh()->e_shnum = 0; eh()->e_shstrndx = 0;
	emit("no-sections-nosep", "ok-reason:no-sections", NULL);
	fresh(); set_top(xi);
	emit("exec-vaddr-top-nosep", "malformed", "last page");
	fresh(); set_top(xi);
	eh()->e_shoff = 0; eh()->e_shnum = 0; eh()->e_shstrndx = 0;
	emit("exec-vaddr-top-sectionless", "malformed", "last page");
}

/* A small PRNG, so that a seed names the same files on every machine. */
static uint64_t rng_state;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void gen_random(unsigned n, uint64_t seed)
{
	int e = find_shdr(".eh_frame");
	size_t shoff = eh()->e_shoff,
	       shlen = (size_t)eh()->e_shnum * sizeof(Elf64_Shdr);
	size_t hdrlen = eh()->e_phoff + eh()->e_phnum * sizeof(Elf64_Phdr);
	char name[64];

	rng_state = seed ? seed : 1;
	for (unsigned i = 0; i < n; i++) {
		unsigned changes = 1 + (unsigned)(rng() % 4);
		fresh();
		for (unsigned c = 0; c < changes; c++) {
			size_t lo = 0, len = hdrlen;
			uint64_t where = rng() % 3;
			if (where == 1) {
				lo = shoff, len = shlen;
			} else if (where == 2 && e >= 0) {
				lo = sh((unsigned)e)->sh_offset;
				len = sh((unsigned)e)->sh_size;
			}
			if (!len || lo + len > orig_len)
				lo = 0, len = hdrlen;
			size_t at = lo + rng() % len;
			/* Half of the changes are extreme values, which
			 * find overflows faster than random bytes. */
			switch (rng() % 4) {
			case 0: buf[at] = (unsigned char)rng(); break;
			case 1: buf[at] ^= (unsigned char)(1u << (rng() % 8)); break;
			case 2: buf[at] = 0xff; break;
			default: buf[at] = 0; break;
			}
		}
		snprintf(name, sizeof name, "random-%04u", i);
		emit(name, "any", NULL);
	}
}

int main(int argc, char **argv)
{
	if (argc < 4)
		die("usage: corrupt headers|ehframe|nosep|random IN OUTDIR [N SEED]");
	load(argv[2]);
	outdir = argv[3];
	if (strcmp(argv[1], "headers") == 0) {
		gen_truncations();
		gen_ident();
		gen_phdrs();
		gen_shdrs();
	} else if (strcmp(argv[1], "ehframe") == 0) {
		gen_ehframe();
	} else if (strcmp(argv[1], "nosep") == 0) {
		gen_nosep();
	} else if (strcmp(argv[1], "random") == 0 && argc == 6) {
		gen_random((unsigned)strtoul(argv[4], NULL, 0),
			   strtoull(argv[5], NULL, 0));
	} else {
		die("usage: corrupt headers|ehframe|nosep|random IN OUTDIR [N SEED]");
	}
	return 0;
}
