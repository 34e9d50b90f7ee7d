/*
 * elfmem.c - ELF structures of objects the dynamic linker has mapped:
 * program headers, the build-id note, the shape, the executable span,
 * dynamic symbols.
 *
 * Phase: object (and start, for the doors).  Reads only the mapped image,
 * without system calls, except xom_elf_file_build_id, which reads a file
 * on the cold path.  The images are trusted as far as the dynamic linker
 * trusted them to map and run them.
 */
#include <sys/auxv.h>
#include <sys/mman.h>

#include "loader.h"
#include "sys.h"
#include "xom_loader.h"

int xom_elf_build_id(uintptr_t bias, const ElfW(Phdr) *ph, int phnum,
                     struct xom_plan_key *k)
{
	for (int i = 0; i < phnum; i++) {
		if (ph[i].p_type != PT_NOTE)
			continue;
		const unsigned char *p = (const void *)(bias + ph[i].p_vaddr);
		if (xom_note_build_id(p, ph[i].p_memsz, k) == 0)
			return 0;
	}
	return -1;
}

uint64_t xom_elf_shape(uintptr_t bias, const ElfW(Phdr) *ph, int phnum)
{
	int textrel = 0;

	for (int i = 0; i < phnum; i++) {
		if (ph[i].p_type != PT_DYNAMIC)
			continue;
		/* Read only where the file's bytes are mapped, as the tools
		 * read them from the file (xom_file_shape). */
		if (xom_shape_dyn_mapped(ph, (size_t)phnum, &ph[i]))
			textrel |= xom_dyn_textrel((const void *)(bias + ph[i].p_vaddr),
			                           ph[i].p_filesz);
		else
			textrel |= 2;
	}
	return xom_shape_sum(ph, (size_t)phnum, textrel);
}

static long sys_pread(int fd, void *buf, size_t n, long off)
{
	return x_pread(fd, buf, n, off);
}

int xom_elf_file_build_id(const char *path, struct xom_plan_key *k)
{
	int fd = (int)x_open(path, O_RDONLY | O_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	int rc = xom_file_build_id(fd, sys_pread, k);
	x_close(fd);
	return rc;
}

void xom_elf_exec_span(uintptr_t bias, const ElfW(Phdr) *ph, int phnum,
                       uintptr_t *lo, uintptr_t *hi)
{
	*lo = UINTPTR_MAX;
	*hi = 0;
	for (int i = 0; i < phnum; i++) {
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
			continue;
		uintptr_t s = (bias + ph[i].p_vaddr) & ~(XOM_PAGE - 1);
		uintptr_t e = (bias + ph[i].p_vaddr + ph[i].p_memsz + XOM_PAGE - 1)
		              & ~(XOM_PAGE - 1);
		if (s < *lo)
			*lo = s;
		if (e > *hi)
			*hi = e;
	}
}

int xom_elf_seg_prot(const ElfW(Phdr) *ph, int phnum, uintptr_t vaddr)
{
	for (int i = 0; i < phnum; i++)
		if (ph[i].p_type == PT_LOAD
		    && vaddr >= (ph[i].p_vaddr & ~(XOM_PAGE - 1))
		    && vaddr < ph[i].p_vaddr + ph[i].p_memsz)
			return (ph[i].p_flags & PF_R ? PROT_READ : 0) | PROT_EXEC;
	return PROT_READ | PROT_EXEC;
}

const ElfW(Phdr) *xom_link_map_phdrs(const struct link_map *map, int is_main,
                                     int *phnum)
{
	if (is_main) {
		*phnum = (int)getauxval(AT_PHNUM);
		return (const void *)getauxval(AT_PHDR);
	}
	/* A shared object's first PT_LOAD maps file offset 0 at address 0. */
	const ElfW(Ehdr) *eh = (const void *)map->l_addr;
	if (!map->l_addr || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0
	    || eh->e_type != ET_DYN || eh->e_phentsize != sizeof(ElfW(Phdr))
	    || eh->e_phnum == 0 || eh->e_phoff > 65536)
		return NULL;
	*phnum = eh->e_phnum;
	return (const void *)(map->l_addr + eh->e_phoff);
}

/* The ELF hash of name (System V ABI). */
static uint32_t sysv_hash(const char *name)
{
	uint32_t h = 0;

	for (const unsigned char *p = (const void *)name; *p; p++) {
		h = (h << 4) + *p;
		uint32_t g = h & 0xf0000000u;
		h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

/* The GNU hash of name (DJB's, as binutils and glibc use it). */
static uint32_t gnu_hash(const char *name)
{
	uint32_t h = 5381;

	for (const unsigned char *p = (const void *)name; *p; p++)
		h = h * 33 + *p;
	return h;
}

struct dynsyms {
	uintptr_t bias;
	const ElfW(Sym) *sym;
	const char *str;
	const uint16_t *versym;         /* NULL without symbol versions */
	const uint32_t *hash, *gnu;     /* DT_HASH, DT_GNU_HASH */
};

/* One candidate of the hash chain.  A definition of a hidden version
 * (dlopen@GLIBC_2.2.5 beside dlopen@@GLIBC_2.34) is taken only when no
 * default one is found, as the dynamic linker does for an unversioned
 * reference.  An IFUNC is not taken, its address being its resolver's:
 * a default IFUNC ends the search with nothing (*found NULL, 1), so that
 * an older hidden version is not taken in its place. */
static int sym_match(const struct dynsyms *d, uint32_t i, const char *name,
                     void **hidden, void **found)
{
	const ElfW(Sym) *s = &d->sym[i];
	int type = ELF64_ST_TYPE(s->st_info), bind = ELF64_ST_BIND(s->st_info);

	if (s->st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK)
	    || strcmp(d->str + s->st_name, name) != 0)
		return 0;
	void *addr = (void *)(d->bias + s->st_value);
	int is_hidden = d->versym && (d->versym[i] & 0x8000);
	if (type == STT_GNU_IFUNC) {
		if (is_hidden)
			return 0;
		*found = NULL;
		*hidden = NULL;
		return 1;
	}
	if (is_hidden) {
		if (!*hidden)
			*hidden = addr;
		return 0;
	}
	*found = addr;
	return 1;
}

static void *lookup_gnu(const struct dynsyms *d, const char *name)
{
	const uint32_t *w = d->gnu;
	uint32_t nbuckets = w[0], symoffset = w[1], nbloom = w[2], shift = w[3];
	const ElfW(Addr) *bloom = (const void *)&w[4];
	const uint32_t *buckets = (const void *)&bloom[nbloom];
	const uint32_t *chain = &buckets[nbuckets];
	uint32_t h = gnu_hash(name);
	void *hidden = NULL, *found = NULL;

	if (!nbuckets || !nbloom)
		return NULL;
	ElfW(Addr) word = bloom[(h / 64) % nbloom];
	ElfW(Addr) mask = ((ElfW(Addr))1 << (h % 64))
	                  | ((ElfW(Addr))1 << ((h >> shift) % 64));
	if ((word & mask) != mask)
		return NULL;
	uint32_t i = buckets[h % nbuckets];
	if (i < symoffset)
		return NULL;
	for (;; i++) {
		uint32_t h2 = chain[i - symoffset];
		if ((h | 1) == (h2 | 1) && sym_match(d, i, name, &hidden, &found))
			return found;
		if (h2 & 1)
			break;
	}
	return hidden;
}

static void *lookup_sysv(const struct dynsyms *d, const char *name)
{
	uint32_t nbucket = d->hash[0], nchain = d->hash[1];
	const uint32_t *bucket = &d->hash[2], *chain = &bucket[nbucket];
	void *hidden = NULL, *found = NULL;

	if (!nbucket)
		return NULL;
	for (uint32_t i = bucket[sysv_hash(name) % nbucket], n = 0;
	     i != STN_UNDEF && i < nchain && n < nchain; i = chain[i], n++)
		if (sym_match(d, i, name, &hidden, &found))
			return found;
	return hidden;
}

void *xom_lookup_dynsym(uintptr_t b, const ElfW(Phdr) *ph, int phnum,
                        const char *name)
{
	const ElfW(Dyn) *dyn = NULL;

	for (int i = 0; i < phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			dyn = (const void *)(b + ph[i].p_vaddr);
	return dyn ? xom_lookup_dyn(b, dyn, name) : NULL;
}

void *xom_lookup_dyn(uintptr_t b, const ElfW(Dyn) *dyn, const char *name)
{
	struct dynsyms d = { .bias = b };

	for (; dyn->d_tag != DT_NULL; dyn++) {
		/* The dynamic linker adds the bias to these in place, as soon
		 * as it maps the object. */
		uintptr_t p = dyn->d_un.d_ptr;
		if (p < b)
			p += b;
		switch (dyn->d_tag) {
		case DT_SYMTAB: d.sym = (const void *)p; break;
		case DT_STRTAB: d.str = (const void *)p; break;
		case DT_VERSYM: d.versym = (const void *)p; break;
		case DT_HASH: d.hash = (const void *)p; break;
		case DT_GNU_HASH: d.gnu = (const void *)p; break;
		}
	}
	if (!d.sym || !d.str)
		return NULL;
	if (d.gnu)
		return lookup_gnu(&d, name);
	return d.hash ? lookup_sysv(&d, name) : NULL;
}
