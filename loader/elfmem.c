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

void *xom_lookup_dynsym(uintptr_t b, const ElfW(Phdr) *ph, int phnum,
                        const char *name)
{
	const ElfW(Dyn) *dyn = NULL;

	for (int i = 0; i < phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			dyn = (const void *)(b + ph[i].p_vaddr);
	if (!dyn)
		return NULL;
	uintptr_t symtab = 0, strtab = 0, hash = 0;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		/* The dynamic linker adds the bias to these in place, as soon
		 * as it maps the object. */
		uintptr_t p = dyn->d_un.d_ptr;
		if (p < b)
			p += b;
		if (dyn->d_tag == DT_SYMTAB) symtab = p;
		else if (dyn->d_tag == DT_STRTAB) strtab = p;
		else if (dyn->d_tag == DT_HASH) hash = p;
	}
	if (!symtab || !strtab || !hash)
		return NULL;
	uint32_t nsyms = ((const uint32_t *)hash)[1];
	const ElfW(Sym) *sym = (const void *)symtab;
	for (uint32_t i = 1; i < nsyms; i++)
		if (sym[i].st_shndx != SHN_UNDEF
		    && !strcmp((const char *)strtab + sym[i].st_name, name))
			return (void *)(b + sym[i].st_value);
	return NULL;
}
