/*
 * elffile.c - what an ELF file is, for xom cache: whether the runtime
 * meets it (a shared object or a dynamically linked program with code), a
 * static program, a file without code or none of these, and the folders
 * its DT_RPATH and DT_RUNPATH name.  Read from the program headers and
 * the dynamic section as the dynamic linker reads them, without libelf.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../exec.h"
#include "elffile.h"

/* Reads n bytes at off; 0, or -1 (short or failed). */
static int read_at(int fd, void *buf, size_t n, uint64_t off)
{
	return off <= (uint64_t)INT64_MAX
	       && pread(fd, buf, n, (off_t)off) == (ssize_t)n ? 0 : -1;
}

/* The file offset of the address va, in the file bytes of the last PT_LOAD
 * of ph that maps it, and in *end where those bytes end; 0 when none does. */
static uint64_t va_off(const Elf64_Phdr *ph, unsigned nph, uint64_t va, uint64_t *end)
{
	uint64_t off = 0;

	for (unsigned i = 0; i < nph; i++)
		if (ph[i].p_type == PT_LOAD && va >= ph[i].p_vaddr
		    && va - ph[i].p_vaddr < ph[i].p_filesz) {
			off = ph[i].p_offset + (va - ph[i].p_vaddr);
			if (end)
				*end = ph[i].p_offset + ph[i].p_filesz;
		}
	return off;
}

/* What a dynamic section says that the builds need. */
struct tags {
	int pie, audit;                 /* DF_1_PIE; DT_AUDIT or DT_DEPAUDIT */
	uint64_t strtab, paths[8];      /* DT_STRTAB; DT_RPATH and DT_RUNPATH */
	unsigned npaths;
};

/* The tags of the dynamic section dyn, up to DT_NULL, into *t (zeroed
 * first).  Read where the dynamic linker reads it: in memory at dyn's
 * p_vaddr, so in the file through the PT_LOAD of ph that maps that
 * address (past its file bytes lie zeros: DT_NULL), whatever dyn's own
 * p_offset and p_filesz say. */
static void read_tags(int fd, const Elf64_Phdr *ph, unsigned nph, const Elf64_Phdr *dyn,
                      struct tags *t)
{
	Elf64_Dyn d[256];
	uint64_t end = 0, off = va_off(ph, nph, dyn->p_vaddr, &end);

	memset(t, 0, sizeof(*t));
	if (!off)
		return;
	for (size_t n = (end - off) / sizeof(d[0]), at = 0; at < n && at < 65536; at += 256) {
		size_t k = n - at < 256 ? n - at : 256;
		if (read_at(fd, d, k * sizeof(d[0]), off + at * sizeof(d[0])) != 0)
			return;
		for (size_t i = 0; i < k; i++) {
			if (d[i].d_tag == DT_NULL)
				return;
			if (d[i].d_tag == DT_FLAGS_1 && (d[i].d_un.d_val & DF_1_PIE))
				t->pie = 1;
			if (d[i].d_tag == DT_AUDIT || d[i].d_tag == DT_DEPAUDIT)
				t->audit = 1;
			if (d[i].d_tag == DT_STRTAB)
				t->strtab = d[i].d_un.d_ptr;
			if ((d[i].d_tag == DT_RPATH || d[i].d_tag == DT_RUNPATH) && t->npaths < 8)
				t->paths[t->npaths++] = d[i].d_un.d_val;
		}
	}
}

/* The ELF header and program headers of an x86-64 file (at most 64); 0,
 * or -1 when it is not one. */
static int read_headers(int fd, Elf64_Ehdr *eh, Elf64_Phdr ph[64])
{
	return read_at(fd, eh, sizeof(*eh), 0) != 0 || memcmp(eh->e_ident, ELFMAG, SELFMAG)
	       || eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_machine != EM_X86_64
	       || (eh->e_type != ET_DYN && eh->e_type != ET_EXEC)
	       || eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum == 0
	       || eh->e_phnum > 64
	       || read_at(fd, ph, eh->e_phnum * sizeof(ph[0]), eh->e_phoff) != 0 ? -1 : 0;
}

int elf_run_paths(const char *obj, char *buf, size_t cap)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[64];
	struct tags t = { 0 };
	size_t n = 0;
	int rc = -1;
	int fd = open(obj, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0 || !cap)
		goto out;
	buf[0] = 0;
	if (read_headers(fd, &eh, ph) != 0)
		goto out;
	for (unsigned i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			read_tags(fd, ph, eh.e_phnum, &ph[i], &t);
	uint64_t strtab = t.strtab ? va_off(ph, eh.e_phnum, t.strtab, NULL) : 0;
	rc = 0;
	for (unsigned i = 0; i < t.npaths && rc == 0; i++) {
		char s[4096];
		ssize_t r = strtab ? pread(fd, s, sizeof(s) - 1, (off_t)(strtab + t.paths[i])) : -1;
		size_t len = r > 0 ? strnlen(s, (size_t)r) : 0;
		if (r <= 0 || len == (size_t)r || n + len + 2 > cap)
			rc = -1;
		else
			n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? ":" : "", s);
	}
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

enum elf_kind elf_kind(int fd, uint64_t size, char *interp, size_t cap,
                       int *audit, int *program)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[64], dyn = { 0 };
	int code = 0, has_interp = 0, has_dyn = 0;

	if (interp)
		interp[0] = 0;
	if (audit)
		*audit = 0;
	if (program)
		*program = 0;
	if (read_headers(fd, &eh, ph) != 0)
		return ELF_OTHER;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		const Elf64_Phdr *p = &ph[i];
		if (p->p_type == PT_LOAD && (p->p_flags & PF_X) && p->p_filesz
		    && p->p_offset <= size && p->p_filesz <= size - p->p_offset)
			code = 1;
		if (p->p_type == PT_INTERP)
			has_interp = 1;
		if (p->p_type == PT_DYNAMIC) {
			has_dyn = 1;
			dyn = *p;
		}
	}
	if (interp && has_interp && exec_pt_interp(fd, &eh, interp, cap) != 1)
		interp[0] = 0;
	/* Debug files (objcopy --only-keep-debug) keep the program headers
	 * of the file they came from, without its code. */
	if (!code)
		return ELF_NO_CODE;
	struct tags t = { 0 };
	if (has_dyn)
		read_tags(fd, ph, eh.e_phnum, &dyn, &t);
	int pie = t.pie;
	if (audit)
		*audit = t.audit;
	if (program)
		*program = has_interp && (eh.e_type == ET_EXEC || pie);
	if (!has_interp && (eh.e_type == ET_EXEC || !has_dyn || pie))
		return ELF_STATIC;
	return ELF_DYNAMIC;
}
